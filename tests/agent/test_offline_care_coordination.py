"""Care-coordination questions on the offline path: care plans, goal attainment, the coded facts of a visit, and
the latest record of a kind (words in lexicon/record_views.json; hand-made rows, no store).

A plan is named by shorthand ("CP", "PT plan", "lipid management plan"); its activities are listed, looked up
("does the plan include Y?") and narrowed to those in progress in the plans in force; its end date and the
condition it addresses are columns. "A1c at goal?" compares the latest result with the target the goal states,
never Yes because a goal exists. The reason, type, clinician, facility and payer of a visit are its coded columns.
"Last X?" of a named vaccine or study is its date; "last immunization?" is the one latest day's doses.
"""

from __future__ import annotations

from typing import Any

from .test_offline_ward_questions import ask, procedure, vaccine
from .test_tools_helpers import obs, t


def plan(pid: str, name: str, status: str, start: str, end: str | None, activity: str | None,
         activity_status: str | None = "completed", addresses: str | None = None) -> dict[str, Any]:
    """A care_plan row (one per activity)."""
    return {"patient_id": "p1", "ref": f"CarePlan/{pid}", "name": name, "status": status, "start_time": t(start),
            "end_time": t(end) if end else None, "activity": activity, "activity_status": activity_status,
            "addresses_name": addresses}


def goal(gid: str, name: str, **target: Any) -> dict[str, Any]:
    """A goal row; Synthea's goals state their target only in the description."""
    return {"patient_id": "p1", "ref": f"Goal/{gid}", "name": name, "lifecycle_status": "active", "start_time": None,
            "target_measure": None, "target_value": None, "target_comparator": None, "target_low": None,
            "target_high": None, **target}


def visit(eid: str, when: str, cls: str, kind: str, reason: str | None, who: str | None, where: str | None,
          payer: str | None) -> dict[str, Any]:
    """An encounter row with the columns a coordinator asks about."""
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "status": "finished", "class_code": cls,
            "class_name": {"EMER": "emergency", "AMB": "ambulatory"}[cls], "type_name": kind, "reason_name": reason,
            "start_time": t(when), "end_time": t(when), "practitioner": who, "service_provider": where, "payer": payer}


def study(sid: str, code: str, modality: str, site: str, when: str, instances: int) -> dict[str, Any]:
    """An imaging row (one per series)."""
    return {"patient_id": "p1", "ref": f"ImagingStudy/{sid}", "name": modality, "modality": modality,
            "modality_code": code, "body_site": site, "status": "available", "time": t(when),
            "number_of_instances": instances}


PLANS = [
    plan("c1", "Respiratory therapy", "completed", "2012-10-27T10:00:00", "2012-11-10T10:00:00",
         "Deep breathing and coughing exercises", addresses="Acute bronchitis (disorder)"),
    plan("c1", "Respiratory therapy", "completed", "2012-10-27T10:00:00", "2012-11-10T10:00:00",
         "Recommendation to avoid exercise", addresses="Acute bronchitis (disorder)"),
    plan("c2", "Hyperlipidemia clinical management plan", "active", "2016-12-12T10:00:00", None,
         "low salt diet education", "in-progress", "Hyperlipidemia"),
    plan("c3", "Diabetes self management plan", "active", "2017-01-02T10:00:00", None, "Diabetic diet",
         "in-progress", "Diabetes"),
    plan("c3", "Diabetes self management plan", "active", "2017-01-02T10:00:00", None, "Exercise therapy",
         "completed", "Diabetes"),
    plan("c4", "Physical therapy procedure", "completed", "2011-12-27T10:00:00", "2012-01-10T10:00:00",
         "Stretching exercises"),
]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "care_plan": PLANS,
    "goal": [goal("g1", "Hemoglobin A1c total in Blood < 7.0"), goal("g2", "Maintain blood pressure below 140/90 mmHg"),
             goal("g3", "Address patient knowledge deficit on diabetic self-care")],
    "observation": [
        obs("o1", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.4, "2023-01-10T10:00:00"),
        obs("o2", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.5, "2024-03-10T10:00:00"),
        obs("o3", "Systolic Blood Pressure", 128, "2024-03-10T10:00:00", unit="mm[Hg]", code="8480-6",
            category="vital-signs"),
        obs("o4", "Diastolic Blood Pressure", 82, "2024-03-10T10:00:00", unit="mm[Hg]", code="8462-4",
            category="vital-signs"),
    ],
    "encounter": [
        visit("e1", "2010-08-02T01:26:01", "EMER", "Emergency Room Admission", "Appendicitis", "Isaac Upton",
              "WINCHESTER HOSPITAL", "medicaid"),
        visit("e2", "2017-01-24T10:00:00", "AMB", "Encounter for symptom", "Concussion with no loss of consciousness",
              "June Kassulke", "NEWTON-WELLESLEY HOSPITAL", "medicaid"),
        visit("e3", "2024-04-02T10:00:00", "AMB", "Encounter for check up (procedure)", None, "Erlinda Franecki",
              "MILFORD REGIONAL MEDICAL CENTER", "medicare"),
    ],
    "imaging": [study("s1", "US", "Ultrasound", "Abdomen", "2006-12-16T10:00:00", 2),
                study("s2", "DX", "Digital Radiography", "Arm", "2012-11-20T10:00:00", 1)],
    "immunization": [vaccine("i1", "Td (adult) preservative free", "2020-02-06T10:00:00"),
                     vaccine("i2", "Influenza, seasonal, injectable, preservative free", "2023-10-01T10:00:00"),
                     vaccine("i3", "Pneumococcal conjugate PCV 13", "2022-05-01T10:00:00")],
    "procedure": [procedure("p1", "Colonoscopy", "2021-02-19T10:00:00")],
}


def day(answer: dict[str, Any]) -> str:
    return str(answer["answer"][0])[:10]


def test_cp_is_shorthand_for_care_plan_and_active_means_status_active():
    assert sorted(ask("current CPs?", VIEWS)["answer"]) == ["Diabetes self management plan",
                                                            "Hyperlipidemia clinical management plan"]
    assert ask("# active CPs?", VIEWS)["answer"] == [2]
    assert "Respiratory therapy" not in ask("what care plans is she on right now?", VIEWS)["answer"]


def test_a_plan_is_named_by_its_shorthand_or_its_words():
    assert day(ask("when was her lipid management plan started?", VIEWS)) == "2016-12-12"
    assert ask("lipid management plan addresses what dx?", VIEWS)["answer"] == ["Hyperlipidemia"]
    assert sorted(ask("what does the resp therapy CP include?", VIEWS)["answer"]) == [
        "Deep breathing and coughing exercises", "Recommendation to avoid exercise"]
    assert ask("list the interventions in the PT plan", VIEWS)["answer"] == ["Stretching exercises"]


def test_the_end_date_of_a_plan_is_its_period_end():
    assert day(ask("respiratory care plan end date?", VIEWS)) == "2012-11-10"
    assert day(ask("when was the physical therapy plan completed?", VIEWS)) == "2012-01-10"


def test_whether_a_plan_includes_an_activity_is_looked_up_among_its_activities():
    assert ask("does his DM self mgmt plan include exercise therapy?", VIEWS)["answer"] == [True]
    assert ask("is exercise therapy part of the diabetes care plan?", VIEWS)["answer"] == [True]
    assert ask("does the respiratory therapy plan include stretching exercises?", VIEWS)["answer"] == [False]


def test_open_activities_are_those_in_progress_in_the_plans_in_force():
    assert sorted(ask("open CP activities?", VIEWS)["answer"]) == ["Diabetic diet", "low salt diet education"]
    assert sorted(ask("which care plan activities are in progress?", VIEWS)["answer"]) == [
        "Diabetic diet", "low salt diet education"]


def test_a_goal_is_met_when_the_latest_result_meets_the_target_its_description_states():
    got = ask("is his A1c at goal?", VIEWS)
    assert got["answer"] == [False]  # the latest A1c is 7.5; the earlier 6.4 does not count
    assert "7.5" in got["text"] and "< 7" in got["text"]
    assert ask("BP at goal?", VIEWS)["answer"] == [True]  # 128/82 against below 140/90, both parts


def test_a_goal_that_is_absent_or_states_no_target_is_not_yes():
    assert ask("glucose goal met?", VIEWS)["status"] == "no-data"
    none = ask("A1c goal met?", {**VIEWS, "goal": []})
    assert none["status"] == "no-data" and "No" in none["text"]
    vague = ask("diabetic self-care goal met?", VIEWS)
    assert vague["status"] == "no-data" and "no measurable target" in vague["text"]


def test_a_structured_goal_target_wins_over_the_description():
    structured = {**VIEWS, "goal": [goal("g9", "Hemoglobin A1c control", target_measure="Hemoglobin A1c",
                                         target_value=8.0, target_comparator="<")]}
    assert ask("A1c goal met?", structured)["answer"] == [True]  # 7.5 < 8


def test_the_coded_facts_of_the_last_visit():
    assert ask("reason for last ER visit?", VIEWS)["answer"] == ["Appendicitis"]
    assert ask("what kind of visit was the last one?", VIEWS)["answer"] == ["Encounter for check up (procedure)"]
    assert ask("who saw her at the last visit?", VIEWS)["answer"] == ["Erlinda Franecki"]
    assert ask("where was he last seen?", VIEWS)["answer"] == ["MILFORD REGIONAL MEDICAL CENTER"]
    assert ask("what insurance does he have?", VIEWS)["answer"] == ["medicare"]
    assert ask("which doctor did she see last?", VIEWS)["answer"] == ["Erlinda Franecki"]
    assert ask("what was the last ED visit for?", VIEWS)["answer"] == ["Appendicitis"]


def test_a_visit_that_codes_no_reason_says_so_rather_than_borrowing_another():
    got = ask("why was he last seen?", VIEWS)  # the check-up of 2024-04-02 has no reasonCode
    assert got["status"] == "no-data" and "2024-04-02" in got["text"]


def test_a_visit_for_a_reason_is_dated():
    assert day(ask("last visit for concussion with no loss of consciousness?", VIEWS)) == "2017-01-24"


def test_a_clinic_visit_is_a_kind_of_visit_not_a_facility():
    assert day(ask("Most recent clinic visit date?", VIEWS)) == "2024-04-02"


def test_last_of_a_named_kind_is_its_date_and_details_are_columns():
    assert day(ask("last imaging?", VIEWS)) == "2012-11-20"
    assert ask("last imaging?", {**VIEWS, "imaging": []})["status"] == "no-data"
    assert ask("what was imaged on his last study?", VIEWS)["answer"] == ["Arm"]
    assert ask("# instances on most recent study?", VIEWS)["answer"] == [1]
    assert ask("any US imaging?", VIEWS)["answer"] == [True]
    assert ask("last imaging an x-ray?", VIEWS)["answer"] == [True]
    assert day(ask("last tetanus (Td) shot?", VIEWS)) == "2020-02-06"


def test_the_last_immunization_is_the_latest_days_doses_only():
    assert ask("last immunization?", VIEWS)["answer"] == ["Influenza, seasonal, injectable, preservative free"]


def test_x_done_is_a_yes_or_no_and_never_done_is_no():
    assert ask("c-scope done?", VIEWS)["answer"] == [True]
    got = ask("cardioversion done?", VIEWS)
    assert got["status"] == "answered" and got["answer"] == [False]


def test_the_patients_own_first_name_after_for_is_no_patient_lookup():
    from datetime import UTC, datetime

    from fhirqa.agent.backends.offline.parser import parse

    now = datetime(2024, 6, 15, tzinfo=UTC)
    assert parse("any flu vaccine on record for Evelyn?", now, names=("Evelyn", "Smith")).intent != "lookup"
    assert parse("pull up the record for Ana Diaz, born 1970-03-02", now).intent == "lookup"
