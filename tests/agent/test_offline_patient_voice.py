"""Patients and parents asking about their own record, end to end through the offline backend
(docs/questions.md, "Patient and parent wording"; words in lexicon/patient_voice.json).

- Growth at an age is the measurement nearest that birthday ("at 11", "when she turned 13", "at her 6 year
  checkup"), at the last check-up the one taken at that visit; a unit asked ("in pounds") is converted and never
  read as a change; "how much have I gained / has he grown" is the change over the window, said with its verb.
- Up/down questions answer the direction with the two values: "since last time" compares the latest result with
  the one before; "worse" follows the test's polarity (a falling eGFR is worse).
- Lay words: "kidney numbers" is the eGFR, "sugar test" the A1c, "weighed" the body weight; "lately" is the past
  6 months; a gloss naming a group ("hemoglobin (blood count)") leaves the item asked.
- The diagnoses of a visit are the conditions linked to it; "check-ups since my last ER visit" counts visits after
  the latest ER start; an operation includes a ligation; "my daughter" is the patient, never part of an item.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.direction_plan import direction_question
from fhirqa.agent.backends.offline.growth_plan import growth_question
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.visit_plan import visit_question
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_offline_patient_snapshot import encounter
from .test_offline_ward_questions import condition, procedure
from .test_tools_helpers import FakeRows, med, obs

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def vital(oid: str, name: str, value: float, unit: str, code: str, when: str, visit: str | None = None) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code, category="vital-signs",
               encounter_ref=f"Encounter/{visit}" if visit else None)


def lab(oid: str, name: str, value: float, unit: str, code: str, when: str) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code)


CHILD = [{"patient_id": "p1", "ref": "Patient/p1", "name": "Daisy Park", "birth_date": date(2010, 3, 20),
          "gender": "female", "deceased": False, "deceased_time": None}]
CHILD_VIEWS: dict[str, list[dict[str, Any]]] = {
    "patient": CHILD,
    "encounter": [encounter("w1", "AMB", "Encounter for check up (procedure)", "185349003", "2020-03-02T09:00:00"),
                  encounter("w2", "AMB", "Encounter for check up (procedure)", "185349003", "2021-03-25T09:00:00"),
                  encounter("w3", "AMB", "Encounter for check up (procedure)", "185349003", "2023-06-01T09:00:00"),
                  encounter("s1", "AMB", "Encounter for symptom", "185345009", "2024-01-10T09:00:00")],
    "observation": [
        vital("h1", "Body Height", 130.0, "cm", "8302-2", "2020-03-02T09:10:00", "w1"),
        vital("h2", "Body Height", 136.0, "cm", "8302-2", "2021-03-25T09:10:00", "w2"),
        vital("h3", "Body Height", 150.0, "cm", "8302-2", "2023-06-01T09:10:00", "w3"),
        vital("h4", "Body Height", 153.0, "cm", "8302-2", "2024-01-10T09:10:00", "s1"),
        vital("kg1", "Body Weight", 27.0, "kg", "29463-7", "2020-03-02T09:10:00", "w1"),
        vital("kg2", "Body Weight", 30.0, "kg", "29463-7", "2021-03-25T09:10:00", "w2"),
        vital("kg3", "Body Weight", 40.0, "kg", "29463-7", "2023-06-01T09:10:00", "w3"),
        vital("kg4", "Body Weight", 42.5, "kg", "29463-7", "2024-01-10T09:10:00", "s1"),
    ],
    "condition": [], "medication": [], "procedure": [], "immunization": [], "allergy": [],
}

ADULT = [{"patient_id": "p1", "ref": "Patient/p1", "name": "Ana Reyes", "birth_date": date(1960, 1, 5),
          "gender": "female", "deceased": False, "deceased_time": None}]
ER_DX = condition("c9", "Closed fracture of hip", "2022-05-01T10:00:00", "2022-08-01T00:00:00", status="resolved")
ADULT_VIEWS: dict[str, list[dict[str, Any]]] = {
    "patient": ADULT,
    "encounter": [encounter("e1", "EMER", "Emergency room admission (procedure)", "50849002", "2019-02-01T10:00:00"),
                  encounter("e2", "EMER", "Emergency room admission (procedure)", "50849002", "2022-05-01T10:00:00"),
                  encounter("k1", "AMB", "Encounter for check up (procedure)", "185349003", "2021-05-01T09:00:00"),
                  encounter("k2", "AMB", "Encounter for 'check-up'", "185349003", "2023-05-01T09:00:00"),
                  encounter("k3", "AMB", "Encounter for check up (procedure)", "185349003", "2024-05-01T09:00:00")],
    "observation": [
        lab("g1", "Estimated Glomerular Filtration Rate", 80.0, "mL/min/{1.73_m2}", "33914-3", "2023-05-01T09:30:00"),
        lab("g2", "Estimated Glomerular Filtration Rate", 71.0, "mL/min/{1.73_m2}", "33914-3", "2024-05-01T09:30:00"),
        lab("a1", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.4, "%", "4548-4", "2023-05-01T09:30:00"),
        lab("a2", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.1, "%", "4548-4", "2024-05-01T09:30:00"),
        lab("gl", "Glucose", 99.0, "mg/dL", "2339-0", "2024-05-01T09:30:00"),
        lab("tc1", "Total Cholesterol", 210.0, "mg/dL", "2093-3", "2021-05-01T09:30:00"),
        lab("tc2", "Total Cholesterol", 190.0, "mg/dL", "2093-3", "2023-05-01T09:30:00"),
        lab("hb", "Hemoglobin [Mass/volume] in Blood", 13.5, "g/dL", "718-7", "2024-05-01T09:30:00"),
        lab("hct", "Hematocrit [Volume Fraction] of Blood by Automated count", 41.0, "%", "4544-3", "2024-05-01T09:30:00"),
        lab("plt", "Platelets [#/volume] in Blood by Automated count", 250.0, "10*3/uL", "777-3", "2024-05-01T09:30:00"),
        vital("bw1", "Body Weight", 80.0, "kg", "29463-7", "2023-05-01T09:10:00"),
        vital("bw2", "Body Weight", 78.0, "kg", "29463-7", "2024-05-01T09:10:00"),
    ],
    "condition": [condition("c1", "Hypertension", "2010-01-01T00:00:00"),
                  {**ER_DX, "encounter_ref": "Encounter/e2"},
                  condition("c2", "Sprain of ankle", "2013-01-01T00:00:00", "2013-02-01T00:00:00", status="resolved")],
    "procedure": [procedure("p1", "Bilateral tubal ligation", "2020-01-15T10:00:00")],
    "medication": [med("m1", "Hydrochlorothiazide 25 MG Oral Tablet", "request", "2015-01-01T09:00:00", status="active"),
                   med("m2", "Ibuprofen 200 MG Oral Tablet", "request", "2022-05-01T11:00:00", status="stopped")],
    "immunization": [], "allergy": [],
}


def ask(question: str, views: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The offline backend's final answer over the rows, with the refs it cites under "cited"."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {ref for ref, _ in ctx.evidence}}


def value(question: str, views: dict[str, list[dict[str, Any]]]) -> Any:
    got = ask(question, views)
    assert got["status"] == "answered", got["text"]
    return got["answer"][0] if len(got["answer"]) == 1 else got["answer"]


# 1. growth at an age, at a visit, in a unit, over a window ---------------------------------------------------------

def test_a_value_at_an_age_is_the_measurement_nearest_that_birthday_and_the_answer_says_so():
    got = ask("how tall was she when she turned 11?", CHILD_VIEWS)  # 11th birthday 2021-03-20: the 2021-03-25 visit
    assert got["answer"] == [136.0] and "Observation/h2" in got["cited"]
    assert "nearest the day the patient turned 11 years" in got["text"] and "2021-03-20" in got["text"]
    assert value("how much did Daisy weigh at 10?", CHILD_VIEWS) == 27.0
    assert value("what was her height at her 13 year checkup?", CHILD_VIEWS) == 150.0


def test_an_age_with_no_measurement_near_its_birthday_or_not_reached_is_no_data():
    assert ask("how tall was she at 12?", CHILD_VIEWS)["status"] == "no-data"  # nothing within half a year of 2022-03-20
    assert ask("how much did she weigh when she turned 16?", CHILD_VIEWS)["status"] == "no-data"  # not 16 yet


def test_the_last_checkup_is_the_check_up_visit_not_the_latest_measurement():
    got = ask("how tall was my daughter at her last checkup?", CHILD_VIEWS)
    assert got["answer"] == [150.0] and "2023-06-01" in got["text"]  # the 2024 symptom visit is no check-up


def test_a_unit_asked_is_converted_and_never_read_as_a_change():
    assert abs(value("how much did I weigh last time, in pounds?", ADULT_VIEWS) - 78.0 * 2.2046226218) < 0.01
    assert abs(value("how much did she weigh at her last checkup, in pounds?", CHILD_VIEWS) - 40.0 * 2.2046226218) < 0.01
    assert abs(value("how tall was she at 11 in inches?", CHILD_VIEWS) - 136.0 / 2.54) < 0.01


def test_gained_lost_and_grown_are_the_change_over_the_window_with_the_verb_of_its_sign():
    got = ask("how much has she grown in the past 2 years?", CHILD_VIEWS)  # 2023-06-01 → 2024-01-10
    assert abs(got["answer"][0] - 3.0) < 1e-9 and got["text"].startswith("Grew")
    assert ask("how much has she grown in the past year?", CHILD_VIEWS)["status"] == "no-data"  # one height in it
    since = ask("how much weight has she gained since her last checkup?", CHILD_VIEWS)  # 40 kg at it → 42.5 kg
    assert abs(since["answer"][0] - 2.5) < 1e-9 and "since the last check-up (2023-06-01)" in since["text"]
    lost = ask("how much weight have I gained in the past 2 years?", ADULT_VIEWS)  # 80 → 78 kg
    assert abs(lost["answer"][0] - 2.0) < 1e-9 and "Lost" in lost["text"] and "not a gain" in lost["text"]


# 2. up / down ------------------------------------------------------------------------------------------------------

def test_since_last_time_compares_the_latest_result_with_the_one_before_and_gives_both():
    got = ask("did my sugar test go up since last time?", ADULT_VIEWS)  # the A1c, not the glucose: 6.4 → 6.1
    assert got["answer"] == [False] and "6.4" in got["text"] and "6.1" in got["text"]
    assert ask("did my total cholesterol go down since last time?", ADULT_VIEWS)["answer"] == [True]
    # a consultant's shorthand (session 18): the direction word, then the result it is compared with
    assert ask("A1c up vs prior?", ADULT_VIEWS)["answer"] == [False]
    assert ask("A1c higher than the previous one?", ADULT_VIEWS)["answer"] == [False]


def test_worse_follows_the_tests_polarity_a_falling_egfr_is_worse():
    assert ask("did my kidney numbers get worse?", ADULT_VIEWS)["answer"] == [True]  # 80 → 71
    assert ask("are my kidneys getting better compared to last time?", ADULT_VIEWS)["answer"] == [False]


def test_a_panel_is_compared_per_component_and_better_or_worse_is_a_verdict():
    views = {**ADULT_VIEWS, "observation": [
        *ADULT_VIEWS["observation"],
        vital("s1", "Systolic Blood Pressure", 130.0, "mm[Hg]", "8480-6", "2023-05-01T09:10:00"),
        vital("d1", "Diastolic Blood Pressure", 85.0, "mm[Hg]", "8462-4", "2023-05-01T09:10:00"),
        vital("s2", "Systolic Blood Pressure", 124.0, "mm[Hg]", "8480-6", "2024-05-01T09:10:00"),
        vital("d2", "Diastolic Blood Pressure", 88.0, "mm[Hg]", "8462-4", "2024-05-01T09:10:00")]}
    got = ask("did my blood pressure go up since last time?", views)
    assert sorted(got["answer"]) == [False, True] and "124" in got["text"] and "88" in got["text"]
    assert ask("is my A1c better or worse than last time?", ADULT_VIEWS)["answer"] == ["better"]  # 6.4 → 6.1


def test_a_direction_question_is_parsed_as_one_and_a_how_much_question_is_not():
    asked = direction_question(parse("has my BMI gotten higher or lower in the past 2 years?", NOW))
    assert asked is not None and asked.asked == "choice" and asked.entity == "bmi"
    assert direction_question(parse("how much did my weight go up?", NOW)) is None
    assert direction_question(parse("did my LDL ever drop below 190 in 2018?", NOW)) is None  # a threshold


# 3. lay words and vague windows ------------------------------------------------------------------------------------

def test_lately_is_the_past_six_months_and_weighed_is_the_body_weight():
    got = ask("how many times was I weighed lately?", ADULT_VIEWS)
    assert got["answer"] == [1] and "past 6 months" in got["text"]


def test_a_gloss_naming_a_group_leaves_the_item_asked():
    assert value("what was my hemoglobin (blood count) last time?", ADULT_VIEWS) == 13.5


# 4. visits, operations, family words, current medications ----------------------------------------------------------

def test_the_diagnoses_of_an_er_visit_are_the_conditions_linked_to_it():
    got = ask("what did they diagnose me with in the ER?", ADULT_VIEWS)
    assert got["answer"] == ["Closed fracture of hip"] and "Condition/c9" in got["cited"]


def test_checkups_since_the_last_er_visit_count_check_up_visits_after_it():
    assert value("how many checkups have I had since my last ER visit?", ADULT_VIEWS) == 2
    assert value("since I was in the ER last, how many check-ups have I been to?", ADULT_VIEWS) == 2
    assert value("how many times have I been to the ER since my last checkup?", ADULT_VIEWS) == 0
    assert value("how many doctor visits have I had since my last ER visit?", ADULT_VIEWS) == 2
    asked = visit_question(parse("how many checkups have I had since my last ER visit?", NOW))
    assert asked is not None and (asked.visit_class, asked.anchor_class) == ("CHECKUP", "EMER")


def test_the_last_check_up_is_dated_by_the_check_up_visits_type():
    got = ask("when was my last check up", ADULT_VIEWS)
    assert got["answer"] == ["2024-05-01T09:00:00+00:00"] and "Encounter/k3" in got["cited"]
    assert ask("when was my first checkup?", ADULT_VIEWS)["answer"] == ["2021-05-01T09:00:00+00:00"]


def test_a_ligation_is_an_operation_that_anchors_since_my_surgery():
    assert value("how many times have I been to the ER since my surgery?", ADULT_VIEWS) == 1


def test_family_words_name_the_patient_and_never_enter_an_item():
    assert "son" not in parse("did my son ever get the meningitis shot?", NOW).entity.split()
    assert parse("what medicines is my daughter on right now?", NOW).intent == "active_list"


def test_currently_prescribed_lists_only_active_orders():
    for question in ("what am i currently prescribed", "what pills am I on?", "what medicine does my daughter take now?"):
        assert ask(question, ADULT_VIEWS)["answer"] == ["Hydrochlorothiazide 25 MG Oral Tablet"], question


def test_being_treated_for_lists_active_conditions_only():
    assert ask("what conditions am I being treated for?", ADULT_VIEWS)["answer"] == ["Hypertension"]


def test_growth_words_without_a_growth_question_are_left_to_the_general_plans():
    assert growth_question(parse("what's the highest my weight has been?", NOW)) is None
    assert growth_question(parse("his weight at the last visit, in lbs?", NOW)) is None
