"""Primary-care follow-up questions on the offline path (hand-made rows shaped like Synthea's, no store).

A condition is controlled when its measure meets the goal: "is his diabetes controlled?" reads the latest A1c
against the patient's own Goal ("Hemoglobin A1c total in Blood < 7.0"), else the usual treatment goal; it is never
Yes because the diagnosis is on the list. "At target" is "at goal". A dose asked of a drug the patient never had is
not in the record, not a No.
"""

from __future__ import annotations

from typing import Any

import pytest

from .test_offline_care_coordination import goal
from .test_offline_ward_questions import ask
from .test_tools_helpers import obs, t

A1C = "Hemoglobin A1c/Hemoglobin.total in Blood"


def condition(cid: str, name: str, onset: str, abated: str | None = None, status: str = "active") -> dict[str, Any]:
    """A condition row as the view gives it."""
    return {"patient_id": "p1", "ref": f"Condition/{cid}", "name": name, "code": cid, "code_system": "http://snomed.info/sct",
            "clinical_status": status, "verification_status": "confirmed", "category": None, "severity": None,
            "onset_time": t(onset), "onset_time_offset": 0, "onset_age": None, "onset_string": None,
            "abatement_time": t(abated) if abated else None, "abatement_time_offset": 0 if abated else None,
            "abatement_string": None, "abated": abated is not None, "recorded_time": t(onset),
            "recorded_time_offset": 0, "encounter_ref": None}


def bp(oid: str, day: str, systolic: float, diastolic: float) -> list[dict[str, Any]]:
    """A blood-pressure panel as its two component rows."""
    return [obs(oid, name, value, f"{day}T10:00:00", unit="mm[Hg]", code=code, category="vital-signs",
                is_component=True, parent_name="Blood pressure panel")
            for name, code, value in (("Systolic Blood Pressure", "8480-6", systolic),
                                      ("Diastolic Blood Pressure", "8462-4", diastolic))]


DIABETIC = {
    "condition": [condition("44054006", "Diabetes", "2015-03-01T10:00:00"),
                  condition("59621000", "Hypertension", "2012-03-01T10:00:00")],
    "goal": [goal("g1", "Hemoglobin A1c total in Blood < 7.0"), goal("g2", "Maintain blood pressure below 140/90 mmHg")],
    "observation": [obs("a1", A1C, 6.5, "2023-05-10T10:00:00"), obs("a2", A1C, 7.4, "2024-05-10T10:00:00"),
                    *bp("b1", "2024-05-10", 134.0, 86.0)],
}


@pytest.mark.parametrize("question", ["is his diabetes controlled?", "DM well controlled?", "is his sugar under control?",
                                      "is his diabetis controlled on the last A1c?", "is his A1c controlled?"])
def test_diabetes_control_is_the_latest_a1c_against_the_patient_s_goal(question: str) -> None:
    got = ask(question, DIABETIC)
    assert got["answer"] == [False]  # 7.4 % on 2024-05-10 does not meet the Goal's < 7.0; the 6.5 is older
    assert "7.4" in got["text"] and "< 7" in got["text"]


def test_uncontrolled_asks_the_opposite() -> None:
    assert ask("is his diabetes poorly controlled?", DIABETIC)["answer"] == [True]


def test_hypertension_control_uses_the_bp_goal_on_file_else_the_usual_goal() -> None:
    assert ask("HTN controlled?", DIABETIC)["answer"] == [True]  # 134/86 meets the Goal's 140/90
    without_goal = {**DIABETIC, "goal": []}
    got = ask("HTN controlled?", without_goal)
    assert got["answer"] == [False] and "usual goal" in got["text"]  # 134/86 misses the usual 130/80


def test_control_without_the_measure_is_not_a_yes() -> None:
    got = ask("is his diabetes controlled?", {"condition": DIABETIC["condition"], "goal": [], "observation": []})
    assert got["status"] == "no-data" and got["answer"] == []


@pytest.mark.parametrize(("question", "answer"), [("A1c at target?", [False]), ("BP at target per his goal?", [True])])
def test_at_target_is_at_goal(question: str, answer: list[bool]) -> None:
    assert ask(question, DIABETIC)["answer"] == answer


def test_a_target_with_no_goal_on_file_is_not_in_the_record() -> None:
    got = ask("LDL at target?", {**DIABETIC, "observation": [obs("l1", "Low Density Lipoprotein Cholesterol", 106.0,
                                                                    "2024-05-10T10:00:00", unit="mg/dL", code="18262-6")]})
    assert got["status"] == "no-data"


def test_the_dose_of_a_drug_never_given_is_not_in_the_record() -> None:
    got = ask("insulin dose?", {**DIABETIC, "medication": []})
    assert got["status"] == "no-data" and got["answer"] == []


EGFR = [obs("e1", "Estimated Glomerular Filtration Rate", 57.7, "2022-05-10T10:00:00", unit="mL/min/{1.73_m2}",
            code="33914-3"),
        obs("e2", "Estimated Glomerular Filtration Rate", 64.2, "2024-05-10T10:00:00", unit="mL/min/{1.73_m2}",
            code="33914-3")]


@pytest.mark.parametrize("question", ["GFR < 60 on the latest?", "is his eGFR below 60?",
                                      "does his latest eGFR put him under 60 (CKD range)?"])
def test_a_threshold_on_the_latest_reads_the_latest_value_only(question: str) -> None:
    got = ask(question, {"observation": EGFR})
    assert got["answer"] == [False] and "64.2" in got["text"]  # the 57.7 of 2022 is not the latest


def test_ever_below_still_reads_every_value() -> None:
    assert ask("was his eGFR ever below 60?", {"observation": EGFR})["answer"] == [True]


# yearly check-ups: one value a year, so the past 12 months hold only the latest
WEIGHTS = [obs(f"w{i}", "Body Weight", value, f"{day}T10:00:00", unit="kg", code="29463-7", category="vital-signs")
           for i, (day, value) in enumerate([("2021-05-20", 80.0), ("2022-05-02", 82.5), ("2023-05-18", 81.0),
                                             ("2024-05-10", 84.0)])]


@pytest.mark.parametrize("question", ["weight change since last year?", "how much has his weight changed over the past year?",
                                      "weight now vs a year ago - difference?"])
def test_a_change_against_last_year_is_the_latest_minus_the_value_nearest_a_year_back(question: str) -> None:
    got = ask(question, {"observation": WEIGHTS})
    assert got["answer"] == [pytest.approx(3.0)]  # 84.0 (2024-05-10) − 81.0 (2023-05-18)


def test_a_change_two_years_back_reads_the_value_nearest_then() -> None:
    assert ask("how much has his weight changed since 2 years ago", {"observation": WEIGHTS})["answer"] == [
        pytest.approx(1.5)]  # 84.0 − 82.5 (2022-05-02)


def test_a_change_over_a_window_with_two_values_inside_is_last_minus_first() -> None:
    monthly = [*WEIGHTS, obs("w9", "Body Weight", 83.0, "2023-11-02T10:00:00", unit="kg", code="29463-7",
                             category="vital-signs")]
    assert ask("how much has his weight changed over the past year?", {"observation": monthly})["answer"] == [
        pytest.approx(1.0)]  # 84.0 − 83.0, both inside the 12 months


@pytest.mark.parametrize(("question", "answer"), [("is his weight higher than a year ago?", [True]),
                                                  ("weight up compared with last year?", [True]),
                                                  ("has his weight gone down since this time last year?", [False])])
def test_a_direction_against_a_year_back_is_a_yes_or_no(question: str, answer: list[bool]) -> None:
    assert ask(question, {"observation": WEIGHTS})["answer"] == answer


LDL = [obs(f"l{i}", "Low Density Lipoprotein Cholesterol", value, f"{day}T10:00:00", unit="mg/dL", code="18262-6")
       for i, (day, value) in enumerate([("2020-05-02", 120.0), ("2022-05-10", 98.0), ("2024-05-10", 131.0)])]


@pytest.mark.parametrize("question", ["last LDL and the one before", "LDL - latest and prior value?",
                                      "what were his two most recent LDL results"])
def test_the_latest_and_the_one_before_are_the_last_two_values(question: str) -> None:
    assert sorted(ask(question, {"observation": LDL})["answer"]) == [98.0, 131.0]


@pytest.mark.parametrize("question", ["show me the bad cholesterol (LDL)s past 3 yrs", "LDL values past 3 yrs"])
def test_values_over_a_window_are_listed(question: str) -> None:
    assert ask(question, {"observation": LDL})["answer"] == [98.0, 131.0]  # the 2020 value is before the 3 years


def test_the_last_visits_just_one_part_of_a_panel() -> None:
    rows = [*bp("b1", "2022-05-10", 150.0, 95.0), *bp("b2", "2023-05-10", 140.0, 90.0), *bp("b3", "2024-05-10", 134.0, 86.0)]
    got = ask("BP at the last 2 visits - just the systolics", {"observation": rows})
    assert got["answer"] == [140.0, 134.0]


def order(mid: str, name: str, when: str, status: str = "active", dose: float | None = None,
          code: str = "310798") -> dict[str, Any]:
    """A MedicationRequest row as Synthea's orders give it (a dose of 1 tablet, or none; its RxNorm code)."""
    from .test_tools_helpers import med

    return med(mid, name, "request", when, dose=dose, unit=None, status=status, route=None, medication_code=code)


ORDERS = {"medication": [order("m1", "Hydrochlorothiazide 25 MG", "2023-06-01T10:00:00", status="stopped"),
                         order("m2", "Hydrochlorothiazide 25 MG", "2024-06-01T10:00:00"),
                         order("m3", "Simvastatin 10 MG", "2024-05-01T10:00:00", dose=1.0, code="314231"),
                         order("m4", "Amoxicillin 250 MG / Clavulanate 125 MG Oral Tablet", "2022-01-01T10:00:00",
                               status="stopped", dose=1.0, code="562251")],
          "condition": [condition("59621000", "Hypertension", "2012-03-01T10:00:00")]}


@pytest.mark.parametrize("question", ["what's she on for BP?", "BP regimen?", "current HTN meds"])
def test_what_she_is_on_for_a_purpose_is_the_class_s_active_members(question: str) -> None:
    assert ask(question, ORDERS)["answer"] == ["Hydrochlorothiazide 25 MG"]


@pytest.mark.parametrize(("question", "strength"), [("HCTZ dose?", 25.0), ("current hctz dose (mg)?", 25.0),
                                                    ("what dose of simvastatin is she on?", 10.0)])
def test_a_dose_is_the_strength_the_order_s_name_states(question: str, strength: float) -> None:
    got = ask(question, ORDERS)
    assert got["answer"] == [strength] and "strength" in got["text"]


def test_a_combination_drug_keeps_the_order_s_dose() -> None:
    assert ask("amoxicillin clavulanate dose?", ORDERS)["answer"] == [1.0]


def test_a_class_alone_asks_whether_she_is_on_one() -> None:
    assert ask("statin?", ORDERS)["answer"] == [True]


def visit(eid: str, when: str, kind: str = "Encounter for check up (procedure)", cls: str = "AMB") -> dict[str, Any]:
    """An encounter row."""
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "status": "finished", "class_code": cls,
            "class_name": "ambulatory", "type_name": kind, "reason_name": None, "start_time": t(when),
            "end_time": t(when), "practitioner": None, "service_provider": None, "payer": None}


PROBLEMS = {
    "condition": [condition("s1", "Viral sinusitis (disorder)", "2021-02-01T10:00:00", "2021-02-20T10:00:00", "resolved"),
                  condition("s2", "Viral sinusitis (disorder)", "2024-01-10T10:00:00", "2024-01-30T10:00:00", "resolved"),
                  condition("h1", "Hypertension", "2012-03-01T10:00:00"),
                  condition("p1", "Polyp of colon", "2023-08-01T10:00:00", "2024-12-01T10:00:00", "resolved"),
                  condition("c1", "Concussion with no loss of consciousness", "2024-03-01T10:00:00", "2024-03-20T10:00:00",
                            "resolved")],
    "encounter": [visit("e1", "2023-06-01T09:00:00"), visit("e2", "2024-06-15T08:00:00")],
}


def test_new_dx_in_a_window_are_conditions_with_an_onset_there() -> None:
    got = ask("new dx in the last 12 months?", PROBLEMS)  # a new episode of sinusitis is a new diagnosis
    assert sorted(got["answer"]) == ["Concussion with no loss of consciousness", "Polyp of colon",
                                     "Viral sinusitis (disorder)"]


@pytest.mark.parametrize("question", ["what new diagnoses since her last physical?", "new problems since the last annual?",
                                      "what was newly dx'd since his last check-up?"])
def test_new_diagnoses_since_the_last_check_up(question: str) -> None:
    # asked 4 hours after the 2024-06-15 check-up began: that one is the visit in progress, the 2023-06-01 one is the last
    got = ask(question, PROBLEMS)
    assert sorted(got["answer"]) == ["Concussion with no loss of consciousness", "Polyp of colon",
                                     "Viral sinusitis (disorder)"]


def test_the_problem_list_at_a_past_now_holds_what_was_open_then() -> None:
    got = ask("what are her active problems?", PROBLEMS)  # now 2024-06-15: the polyp resolves only in December
    assert sorted(got["answer"]) == ["Hypertension", "Polyp of colon"]


def shot(iid: str, name: str, when: str) -> dict[str, Any]:
    """An immunization row."""
    return {"patient_id": "p1", "ref": f"Immunization/{iid}", "name": name, "code": "140", "status": "completed",
            "time": t(when), "time_offset": 0, "encounter_ref": None}


ADULT = {"patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1960-04-02", "gender": "female"}]}
SHOTS = {**ADULT, "immunization": [shot("i1", "Influenza, seasonal, injectable, preservative free", "2023-03-02T10:00:00"),
                                   shot("i2", "Td (adult) preservative free", "2013-07-01T10:00:00")]}


@pytest.mark.parametrize(("question", "answer"), [
    ("is she due for a flu shot?", [True]),  # the last one, 2023-03-02, is before the season that began 2023-08-01
    ("needs flu vaccine this season?", [True]),
    ("has she had her flu shot this season?", [False]),
    ("tetanus booster due?", [True]),  # Td 2013-07-01: more than 10 years before 2024-06-15
    # "current?" and "up to date?" ask the negation of due (session 18: once answered as if asking "due?")
    ("flu vax up to date (this season)?", [False]),
    ("flu shot this season?", [False]),
    ("tdap current? (10 yr rule)", [False]),
])
def test_due_for_a_vaccine_is_judged_by_the_adult_schedule_rule(question: str, answer: list[bool]) -> None:
    got = ask(question, SHOTS)
    assert got["answer"] == answer and "rule:" in got["text"]


def test_a_dose_this_season_or_interval_is_not_due() -> None:
    recent = {**ADULT, "immunization": [shot("i3", "Influenza, seasonal, injectable, preservative free", "2023-09-20T10:00:00"),
                                        shot("i4", "Influenza, seasonal, injectable, preservative free", "2023-08-15T10:00:00"),
                                        shot("i5", "Tdap", "2019-05-01T10:00:00")]}
    assert ask("due for a Td booster?", recent)["answer"] == [False]
    assert ask("flu shot due?", recent)["answer"] == [False]
    assert ask("tdap current? (10 yr rule)", recent)["answer"] == [True]
    assert ask("flu vax up to date (this season)?", recent)["answer"] == [True]
    # a vaccine pair written with a slash is either one; a vaccine has no value, only whether it was given
    assert ask("Td/Tdap within the last 10 yrs?", recent)["answer"] == [True]
    assert ask("Td/Tdap within the last 3 yrs?", recent)["answer"] == [False]


def test_a_vaccine_without_a_rule_keeps_the_no_schedule_answer() -> None:
    got = ask("is she due for a pneumonia vaccine?", {**SHOTS, "immunization": [
        shot("p1", "Pneumococcal conjugate PCV 13", "2020-01-01T10:00:00")]})
    assert "no schedule" in got["text"]


def test_when_did_he_last_see_us_is_the_last_visit() -> None:
    got = ask("when did he last see us?", {"encounter": [visit("e1", "2023-06-01T09:00:00"),
                                                         visit("e2", "2024-02-03T09:00:00", "Encounter for symptom")]})
    assert got["answer"] and str(got["answer"][0]).startswith("2024-02-03")


def test_a_respelt_word_that_begins_a_longer_term_reads_as_that_term() -> None:
    from fhirqa.agent.lexicon import Lexicon

    assert [e.term for e in Lexicon.load().expand("hemoglobn A1c")] == ["Hemoglobin A1c"]
    assert [e.term for e in Lexicon.load().expand("hemoglobn")] == ["Hemoglobin"]


@pytest.mark.parametrize(("question", "entity"), [("has she ever been on an ARB like losartan?", "ARB"),
                                                  ("is he on a statin such as atorvastatin?", "statin"),
                                                  ("does she like walking?", "walking")])
def test_a_class_named_with_an_example_is_the_class(question: str, entity: str) -> None:
    from datetime import UTC, datetime

    from fhirqa.agent.backends.offline.parser import parse

    assert entity in parse(question, datetime(2024, 6, 15, 12, tzinfo=UTC)).entity


def test_higher_a_year_ago_is_not_read_as_higher_now() -> None:
    got = ask("was his weight higher a year ago?", {"observation": WEIGHTS})
    assert got["answer"] != [True]  # 81.0 a year ago is lower than 84.0 now: never a Yes


def test_a_child_is_judged_by_the_influenza_rule_but_not_by_the_adult_tetanus_booster() -> None:
    # CDC/ACIP: an influenza vaccine each season from 6 months of age; the 10-year Td booster is an adult rule
    child = {**SHOTS, "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "2015-04-02", "gender": "female"}]}
    assert ask("is she due for a flu shot?", child)["answer"] == [True]  # the last, 2023-03-02, is of the season before
    got = ask("is she due for a tetanus booster?", child)
    assert got["answer"] != [True] and "does not apply at 9 years" in got["text"]
    infant = {**SHOTS, "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "2024-03-01", "gender": "female"}]}
    assert "does not apply at 3 months" in ask("is she due for a flu shot?", infant)["text"]


def test_a_change_over_a_window_cites_only_the_values_it_compares() -> None:
    monthly = [*WEIGHTS, obs("w9", "Body Weight", 83.0, "2023-11-02T10:00:00", unit="kg", code="29463-7",
                             category="vital-signs")]
    from datetime import UTC, datetime

    from .test_tools_helpers import offline_answer

    got = offline_answer("how much has his weight changed over the past year?", {"observation": monthly},
                         datetime(2024, 6, 15, 12, tzinfo=UTC))
    assert got["cited"] == {"Observation/w3", "Observation/w9"}  # not every weight looked at on the way
