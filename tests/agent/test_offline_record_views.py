"""Care plans, care goals and imaging studies on the offline question path (words in lexicon/record_views.json).

A plan, a goal and a study are one ``ref`` over several rows (activities, targets, series), so counts are of
distinct refs; "any X?" asks whether the view has rows as of now; a named plan resolves with the view's own
words dropped ("Respiratory therapy care plan" is "Respiratory therapy"); a kind of imaging is a DICOM modality
("ultrasound" is US); one column of the named (else latest) record answers "which problem", "start date",
"body site", "kind of imaging"; the active plans are those with status active.
"""

from __future__ import annotations

from typing import Any

from .test_offline_ward_questions import ask
from .test_tools_helpers import t


def plan(pid: str, name: str, status: str, start: str, activity: str | None, addresses: str | None = None) -> dict[str, Any]:
    """A care_plan row (one per activity)."""
    return {"patient_id": "p1", "ref": f"CarePlan/{pid}", "name": name, "status": status, "start_time": t(start),
            "end_time": None, "activity": activity, "activity_status": None, "addresses_name": addresses}


def goal(gid: str, name: str, status: str = "active") -> dict[str, Any]:
    """A goal row (Synthea goals carry no dates)."""
    return {"patient_id": "p1", "ref": f"Goal/{gid}", "name": name, "lifecycle_status": status, "start_time": None}


def study(sid: str, modality: str, code: str, site: str, when: str) -> dict[str, Any]:
    """An imaging row (one per series)."""
    return {"patient_id": "p1", "ref": f"ImagingStudy/{sid}", "name": modality, "modality": modality,
            "modality_code": code, "body_site": site, "status": "available", "time": t(when)}


VIEWS = {
    "care_plan": [
        plan("c1", "Respiratory therapy", "completed", "2014-07-30T10:00:00", "Deep breathing and coughing exercises",
             "Acute bronchitis (disorder)"),
        plan("c1", "Respiratory therapy", "completed", "2014-07-30T10:00:00", "Recommendation to avoid exercise",
             "Acute bronchitis (disorder)"),
        plan("c2", "Physical therapy procedure", "completed", "2020-05-31T09:00:00", "Stretching exercises"),
        plan("c3", "Diabetes self management plan", "active", "2016-10-02T09:00:00", "Diabetic diet", "Diabetes"),
        plan("c3", "Diabetes self management plan", "active", "2016-10-02T09:00:00", "Exercise therapy", "Diabetes"),
    ],
    "goal": [goal("g1", "Maintain blood pressure below 140/90 mmHg"), goal("g2", "Hemoglobin A1c total in Blood < 7.0")],
    "imaging": [study("s1", "Ultrasound", "US", "Thoracic", "2008-12-22T04:00:00"),
                study("s2", "Digital Radiography", "DX", "Clavicle", "2018-09-15T04:00:00"),
                study("s2", "Digital Radiography", "DX", "Clavicle", "2018-09-15T04:00:00")],
}
EMPTY: dict[str, list[dict[str, Any]]] = {"care_plan": [], "goal": [], "imaging": [], "procedure": []}


def test_plans_and_studies_are_counted_by_distinct_ref_not_by_row():
    assert ask("# care plans she has had (ever)?", VIEWS)["answer"] == [3]
    assert ask("How many imaging studies are on file?", VIEWS)["answer"] == [2]
    assert ask("# imaging studies?", EMPTY)["answer"] == [0]
    assert ask("how many active care plans?", VIEWS)["answer"] == [1]
    assert ask("how many ultrasounds?", VIEWS)["answer"] == [1]


def test_any_x_asks_whether_the_view_has_rows():
    assert ask("Does she have any care plans?", VIEWS)["answer"] == [True]
    assert ask("Does she have any care plans?", EMPTY)["answer"] == [False]
    assert ask("Any care goals documented?", EMPTY)["answer"] == [False]
    assert ask("any imaging?", EMPTY)["answer"] == [False]


def test_a_kind_of_imaging_is_its_modality():
    assert ask("Has she had an ultrasound?", VIEWS)["answer"] == [True]
    assert ask("Has she had an MRI?", VIEWS)["answer"] == [False]  # no MR series, nothing elsewhere


def test_a_named_goal_is_found_by_the_words_it_contains():
    assert ask("Is there a blood pressure goal?", VIEWS)["answer"] == [True]
    assert ask("Is there a weight loss goal?", VIEWS)["answer"] == [False]


def test_active_plans_are_those_with_status_active_and_an_empty_list_is_an_answer():
    got = ask("What care plans is she currently on?", VIEWS)
    assert got["status"] == "answered" and got["answer"] == ["Diabetes self management plan"]
    none = ask("active care plans?", {"care_plan": [VIEWS["care_plan"][0]]})
    assert none["status"] == "answered" and none["answer"] == []
    assert ask("Is his Respiratory therapy care plan still active?", VIEWS)["answer"] == [False]
    assert ask("Diabetes self management plan: active?", VIEWS)["answer"] == [True]


def test_one_column_of_a_named_plan():
    assert sorted(ask("What activities are in her Respiratory therapy care plan?", VIEWS)["answer"]) == [
        "Deep breathing and coughing exercises", "Recommendation to avoid exercise"]
    assert ask("Respiratory therapy care plan is for which problem?", VIEWS)["answer"] == ["Acute bronchitis (disorder)"]
    # "procedure" is part of this plan's name, not a cue for the procedure view
    assert str(ask("start date of his Physical therapy procedure care plan?", VIEWS)["answer"][0]).startswith("2020-05-31")


def test_one_column_of_the_latest_study_and_its_date():
    assert ask("What body site was imaged most recently?", VIEWS)["answer"] == ["Clavicle"]
    assert ask("What kind of imaging was his most recent study?", VIEWS)["answer"] == ["Digital Radiography"]
    assert str(ask("When was the last imaging study?", VIEWS)["answer"][0]).startswith("2018-09-15")
    assert ask("When was the last imaging study?", EMPTY)["status"] == "no-data"


def test_goals_are_listed_by_name():
    assert sorted(ask("What goals are documented?", VIEWS)["answer"]) == [
        "Hemoglobin A1c total in Blood < 7.0", "Maintain blood pressure below 140/90 mmHg"]


def test_a_named_goal_asked_for_its_value_lists_the_goals_it_names():
    assert ask("What is her blood pressure goal?", VIEWS)["answer"] == ["Maintain blood pressure below 140/90 mmHg"]


def test_a_view_word_in_a_question_about_a_dated_note_asks_the_note():
    from datetime import UTC, datetime

    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.plans import plan

    now = datetime(2025, 2, 1, 12, tzinfo=UTC)
    assert next(plan(parse("Was imaging mentioned in the Jan 7, 2025 progress note?", now)))[0] == "find_in_notes"
    assert next(plan(parse("any imaging?", now)))[1]["view"] == "imaging"
