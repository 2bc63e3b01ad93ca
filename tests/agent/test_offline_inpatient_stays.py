"""Inpatient questions end to end through the offline backend, over hand-made rows (no store needed).

"This admission", "since admit", "on admission": a window anchored to the stay the patient is in as of now
(the latest inpatient/emergency encounter whose period holds now, else the most recent one), found by tool
calls on the encounter view so the answer cites the Encounter.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 3, 12, 18, 0, tzinfo=UTC)
K = "Potassium [Moles/volume] in Serum or Plasma"


def encounter(eid: str, code: str, start: str, end: str | None, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


ENCOUNTERS = [encounter("e1", "AMB", "2025-01-05T10:00:00", "2025-01-05T10:30:00", "Clinic visit"),
              encounter("e2", "IMP", "2024-11-01T10:00:00", "2024-11-04T10:00:00", "Inpatient admission"),
              encounter("e3", "IMP", "2025-03-10T14:00:00", "2025-03-16T10:00:00", "Inpatient admission")]
POTASSIUM = [obs("k0", K, 5.6, "2024-11-02T08:00:00", unit="mmol/L", code="2823-3"),
             obs("k1", K, 4.0, "2025-03-10T15:00:00", unit="mmol/L", code="2823-3"),
             obs("k2", K, 4.4, "2025-03-11T06:00:00", unit="mmol/L", code="2823-3"),
             obs("k3", K, 4.9, "2025-03-12T06:00:00", unit="mmol/L", code="2823-3")]
HEPARIN = [med(f"h{i}", "Heparin 5,000 units/mL injection", "administration", when, dose=5000, unit="[iU]")
           for i, when in enumerate(["2024-11-02T08:00:00", "2025-03-10T20:00:00", "2025-03-11T08:00:00",
                                     "2025-03-11T20:00:00", "2025-03-12T08:00:00"])]
VIEWS = {"encounter": ENCOUNTERS, "observation": POTASSIUM, "medication": HEPARIN}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The final answer over the fake rows, with the refs the tools cited under ``cited``."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {ref for ref, _ in ctx.evidence}}


def test_this_admission_is_the_stay_that_holds_now_not_an_earlier_one():
    assert ask("highest potassium this admission")["answer"] == [4.9]
    assert ask("how many K values since admission?")["answer"] == [3]
    assert ask("K above 5.0 at any point this admission?")["answer"] == [False]


def test_trend_and_change_over_the_current_stay_run_through_the_usual_plans():
    assert ask("K trend this admission?")["answer"] == ["increasing"]
    assert ask("potassium delta since admission (latest minus admission)?")["answer"] == [0.9]
    assert ask("how much has his K changed since admit")["answer"] == [0.9]


def test_on_admission_is_the_first_value_of_the_stay():
    assert ask("K on admission?")["answer"] == [4.0]
    assert ask("admission potassium?")["answer"] == [4.0]


def test_the_stay_window_cites_the_encounter():
    final = ask("lowest potassium since admit")
    assert final["answer"] == [4.0]
    assert "Encounter/e3" in final["cited"], final["cited"]


def test_a_stay_that_ended_before_now_is_still_the_most_recent_one():
    views = {**VIEWS, "encounter": ENCOUNTERS[:2]}
    assert ask("highest potassium this admission", views)["answer"] == [5.6]


def test_no_inpatient_or_emergency_encounter_is_no_data_that_says_so():
    final = ask("highest potassium this admission", {**VIEWS, "encounter": ENCOUNTERS[:1]})
    assert final["status"] == "no-data"
    assert "encounter" in final["text"]


def test_the_date_of_this_admission_asks_about_the_stay_itself():
    assert ask("date of this admission?")["answer"][0].startswith("2025-03-10")


# Administrations: doses on a day, a day's total, doses charted but not given -------------------------------

VANC = [med("v1", "Vancomycin 1,000 mg IVPB", "request", "2025-03-10T15:00:00", dose=1000),
        med("v2", "Vancomycin 1,000 mg IVPB", "administration", "2025-03-10T20:00:00", dose=1000),
        med("v3", "Vancomycin 1,000 mg IVPB", "administration", "2025-03-11T08:00:00", dose=1000),
        med("v4", "Vancomycin 1,000 mg IVPB", "administration", "2025-03-11T20:00:00", dose=1000, status="not-done"),
        med("v5", "Vancomycin 1,000 mg IVPB", "administration", "2025-03-12T08:00:00", dose=1000, status="entered-in-error")]
MAR = {**VIEWS, "medication": HEPARIN + VANC}


def test_doses_of_a_drug_on_a_day_count_its_administrations_not_its_orders():
    assert ask("how many doses of heparin on 3/11/2025?", MAR)["answer"] == [2]
    assert ask("how many doses of heparin yesterday?", MAR)["answer"] == [2]
    assert ask("how many doses of heparin since admission?", MAR)["answer"] == [4]


def test_a_drug_total_on_a_month_and_day_is_that_days_administered_sum():
    assert ask("heparin total on 3/11?", MAR)["answer"] == [10000]
    assert ask("how much heparin did he get on 3/11?", MAR)["answer"] == [10000]


def test_a_fraction_or_a_blood_pressure_is_not_a_month_and_day():
    from fhirqa.agent.backends.offline.timephrases import find_window

    assert find_window("bp above 140/90?", NOW) is None
    assert find_window("1/2 tab of apap", NOW) is None


def test_administrations_not_done_or_in_error_were_not_given():
    assert ask("did she get any vanc yesterday?", MAR)["answer"] == [True]  # v3 given, v4 not done
    assert ask("did she get any vanc today?", MAR)["answer"] == [False]  # v5 entered in error
    assert ask("when was the last dose of vanc given?", MAR)["answer"][0].startswith("2025-03-11T08")
    assert ask("# vanc doses given on 3/11/2025?", MAR)["answer"] == [1]


def test_a_given_question_about_a_drug_never_charted_is_no_when_the_chart_has_administrations():
    assert ask("was any lorazepam given yesterday?", MAR)["answer"] == [False]


def test_the_daily_dose_on_the_latest_order_of_an_hourly_order_is_dose_times_doses_per_day():
    order = med("o1", "Vancomycin 1,000 mg IVPB", "request", "2025-03-10T15:00:00", dose=1000,
                frequency=1, period=12, period_unit="h", daily_dose=2000)
    assert ask("what's the daily vanc dose on the latest order?", {**MAR, "medication": VANC + [order]})["answer"] == [2000]


# Shorthand with an aggregate, findings defined by a value, medication-list wording, filler ---------------

TEMP = "Body temperature"
TEMPS = [obs(f"t{i}", TEMP, v, when, unit="Cel", code="8310-5", category="vital-signs")
         for i, (v, when) in enumerate([(38.4, "2025-03-10T16:00:00"), (37.1, "2025-03-12T02:00:00"),
                                        (36.7, "2025-03-12T14:00:00")])]
GLUCOSE = [obs("g1", "Glucose [Mass/volume] in Blood", 105, "2025-03-11T06:00:00", unit="mg/dL", code="2339-0")]
VITALS = {**VIEWS, "observation": POTASSIUM + TEMPS + GLUCOSE}


def test_tmax_and_tmin_are_the_highest_and_lowest_temperature():
    assert ask("Tmax over the past 24 hours?", VITALS)["answer"] == [37.1]
    assert ask("Tmin since admission?", VITALS)["answer"] == [36.7]
    assert ask("max temp this admission", VITALS)["answer"] == [38.4]


def test_a_finding_with_a_number_written_is_a_threshold_on_its_item():
    hypo = ask("any hypoglycemia (<70) in the past week?", VITALS)
    assert hypo["status"] == "answered" and hypo["answer"] == [False]
    assert ask("any fever > 38 since admission?", VITALS)["answer"] == [True]
    assert ask("any hyperkalemia (K > 5.5) this admission?", VITALS)["answer"] == [False]


def test_a_medication_list_asked_as_home_meds_or_what_she_is_on_is_the_active_list():
    rx = [med("a1", "Lisinopril 10 MG Oral Tablet", "request", "2024-01-01T10:00:00", status="active"),
          med("a2", "Amoxicillin 500 MG Oral Capsule", "request", "2023-01-01T10:00:00", status="stopped")]
    views = {**VITALS, "medication": rx}
    assert ask("home meds currently active?", views)["answer"] == ["Lisinopril 10 MG Oral Tablet"]
    assert ask("what is she on right now?", views)["answer"] == ["Lisinopril 10 MG Oral Tablet"]


def test_we_have_is_not_part_of_the_item():
    assert ask("earliest K+ we have?", VITALS)["answer"] == [5.6]


def test_the_hospital_day_counts_the_day_of_admission_as_day_one():
    admitted = ENCOUNTERS[2]["start_time"]  # the stay that holds now (the November one ended long ago)
    expected = (NOW.date() - admitted.date()).days + 1
    for question in ("HD#?", "what hospital day is it", "what day of the admission is it?"):
        got = ask(question)
        assert got["answer"] == [expected] == [3], question
        assert "Encounter/e3" in got["cited"], question


def test_no_hospital_day_when_the_patient_is_not_in_a_stay_now():
    got = ask("HD#?", {**VIEWS, "encounter": ENCOUNTERS[:2]})
    assert got["status"] == "no-data" and ENCOUNTERS[1]["end_time"].date().isoformat() in got["text"]
