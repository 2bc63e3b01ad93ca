"""Follow-up and case-manager questions end to end through the offline backend, over hand-made rows.

A stay's end and length come from the inpatient Encounter's period (discharge = its end; length of stay =
calendar days from the admission date to the discharge date); a change across a drug's start is the first value
after the first prescription minus the last value before it; an answer asked "in lbs" is converted by the units
table of the lexicon; and a few ways of asking (misspelt item names, "this yr", an aside after the question,
visits named without "how many", "at any point") read as the question they are.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.plans import _convert
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
LDL = "Low Density Lipoprotein Cholesterol"
WEIGHT = "Body weight"
PLATELETS = "Platelets [#/volume] in Blood by Automated count"


def encounter(eid: str, code: str, start: str, end: str | None, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


STAYS = [encounter("a1", "AMB", "2025-02-03T09:00:00", "2025-02-03T09:30:00", "Office visit"),
         encounter("i1", "IMP", "2023-08-01T15:00:00", "2023-08-09T11:00:00", "Hospital admission"),
         encounter("i2", "ACUTE", "2024-12-28T22:00:00", "2025-01-02T10:00:00", "Hospital admission"),
         encounter("e1", "EMER", "2025-04-11T02:00:00", "2025-04-11T07:00:00", "Emergency room visit"),
         encounter("e2", "EMER", "2024-02-01T02:00:00", "2024-02-01T05:00:00", "Emergency room visit")]
LABS = [obs("l1", LDL, 171.0, "2022-03-01T08:00:00", unit="mg/dL", code="18262-6"),
        obs("l2", LDL, 158.0, "2023-01-10T08:00:00", unit="mg/dL", code="18262-6"),
        obs("l3", LDL, 112.0, "2023-06-05T08:00:00", unit="mg/dL", code="18262-6"),
        obs("l4", LDL, 98.0, "2024-09-05T08:00:00", unit="mg/dL", code="18262-6"),
        obs("w1", WEIGHT, 80.0, "2024-10-01T09:00:00", unit="kg", code="29463-7", category="vital-signs"),
        obs("w2", WEIGHT, 90.0, "2025-02-03T09:10:00", unit="kg", code="29463-7", category="vital-signs"),
        obs("p1", PLATELETS, 251.0, "2025-02-03T09:10:00", unit="10*3/uL", code="777-3")]
MEDS = [med("s1", "Simvastatin 20 MG Oral Tablet", "request", "2023-02-14T10:00:00", dose=1),
        med("s2", "Simvastatin 20 MG Oral Tablet", "request", "2024-02-14T10:00:00", dose=1)]
VIEWS = {"encounter": STAYS, "observation": LABS, "medication": MEDS}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The final answer over the fake rows, with the refs the tools cited under ``cited``."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {ref for ref, _ in ctx.evidence}}


# Stays: discharge, days since discharge, length of stay ------------------------------------------------------

@pytest.mark.parametrize("question", ["when did she go home from the hospital?", "discharged when?",
                                      "date he was last discharged", "most recent hospital discharge - date?"])
def test_the_last_discharge_is_the_end_of_the_latest_inpatient_stay(question: str) -> None:
    final = ask(question)
    assert str(final["answer"][0]).startswith("2025-01-02"), final  # the ACUTE stay: an inpatient class too
    assert "Encounter/i2" in final["cited"]


def test_an_emergency_visit_is_no_hospital_discharge_unless_the_question_names_it() -> None:
    assert str(ask("when was she discharged from the ED most recently?")["answer"][0]).startswith("2025-04-11")


def test_days_since_discharge_count_from_the_stays_end() -> None:
    assert ask("how many days has it been since she left the hospital?")["answer"] == [169]
    assert ask("time since discharge, in weeks?")["answer"] == [24]
    assert ask("days since d/c from the hospital?")["answer"] == [169]
    assert str(ask("dischage date?")["answer"][0]).startswith("2025-01-02")  # a slip in the stay word too


def test_dc_of_a_drug_is_no_hospital_discharge() -> None:
    assert parse("when was simvastatin d/c'd?", NOW).stay_event is None


@pytest.mark.parametrize("question", ["LOS?", "how long was he in for?", "length of the most recent stay?",
                                      "how many nights was she in the hospital last time?"])
def test_length_of_stay_is_calendar_days_from_admission_date_to_discharge_date(question: str) -> None:
    final = ask(question)
    assert final["answer"] == [5], final  # Dec 28 → Jan 2, though the stay lasted 4.5 × 24 h
    assert final["unit"] == "days"


def test_the_first_stay_and_a_stay_in_a_year_are_chosen_like_any_first_or_dated_record() -> None:
    assert ask("length of stay of her first admission")["answer"] == [8]
    assert ask("LOS of the admission in 2023?")["answer"] == [8]


def test_a_stay_still_open_counts_its_days_so_far() -> None:
    open_stay = encounter("i3", "IMP", "2025-06-17T08:00:00", None, "Hospital admission")
    final = ask("length of stay?", {**VIEWS, "encounter": [*STAYS, open_stay]})
    assert final["answer"] == [3]
    assert "still admitted" in final["text"]
    assert str(ask("last discharge?", {**VIEWS, "encounter": [*STAYS, open_stay]})["answer"][0]).startswith("2025-01-02")


def test_never_admitted_is_no_data_for_dates_and_lengths_and_zero_for_counts() -> None:
    clinic_only = {**VIEWS, "encounter": STAYS[:1]}
    assert ask("last discharge date?", clinic_only)["status"] == "no-data"
    assert ask("LOS?", clinic_only)["status"] == "no-data"
    assert ask("how many discharges in the past 3 years?", clinic_only)["answer"] == [0]
    assert ask("how many discharges in the past 3 years?")["answer"] == [2]


def test_a_value_at_discharge_or_a_discharge_note_is_not_a_question_about_the_stay() -> None:
    assert parse("K at discharge?", NOW).stay_event is None
    assert parse("where was she discharged to per the DC summary?", NOW).stay_event is None
    assert parse("LOS in the discharge summary?", NOW).stay_event is None


# A change across a drug's start ---------------------------------------------------------------------------------

@pytest.mark.parametrize("question", ["LDL pre vs post simvastatin?", "how did his LDL change from before Zocor to after?",
                                      "LDL change, before and after starting the statin",
                                      "LDL before and after simvastatin - difference?"])
def test_a_change_across_a_drugs_start_is_first_after_minus_last_before(question: str) -> None:
    final = ask(question)
    assert final["answer"] == [pytest.approx(112.0 - 158.0)], final
    assert {"Observation/l2", "Observation/l3", "MedicationRequest/s1"} <= final["cited"]


def test_no_value_on_one_side_of_the_start_is_no_data() -> None:
    views = {**VIEWS, "observation": [row for row in LABS if row["ref"] != "Observation/l1" and row["ref"] != "Observation/l2"]}
    assert ask("LDL before vs after simvastatin?", views)["status"] == "no-data"


# Units asked ---------------------------------------------------------------------------------------------------

def test_an_answer_asked_in_another_unit_is_converted_by_the_units_table() -> None:
    final = ask("latest weight in pounds?")
    assert final["answer"] == [pytest.approx(90.0 * 2.2046226, rel=1e-6)]
    assert final["unit"] == "lb"
    assert ask("highest weight on file, in lbs")["answer"] == [pytest.approx(198.416, rel=1e-4)]


def test_a_unit_the_record_already_uses_leaves_the_value_alone() -> None:
    assert ask("last weight (kg)?")["answer"] == [90.0]


def test_the_units_table_converts_within_one_dimension_only() -> None:
    assert _convert(98.6, "[degF]", "Cel") == pytest.approx(37.0)
    assert _convert(2.0, "[lb_av]", "g") == pytest.approx(907.18474)
    assert _convert(150.0, "cm", "inches") == pytest.approx(59.055, rel=1e-4)
    assert _convert(5.0, "kg", "cm") is None
    assert _convert(14.2, "g/dL", "g/L") == pytest.approx(142.0)
    assert _convert(90.0, "mg/dL", "mmol/L") is None  # mass to molar depends on the analyte


# Ways of asking ---------------------------------------------------------------------------------------------------

def test_a_misspelt_lab_or_vital_is_read_as_the_lexicon_word_one_slip_away() -> None:
    assert ask("most recent weigth?")["answer"] == [90.0]
    assert ask("platlet count?")["answer"] == [251.0]
    assert parse("is she still alive?", NOW).intent == "demographic"  # a drug brand one letter away is no target


def test_this_yr_and_this_mo_are_calendar_windows() -> None:
    assert parse("# office visits this yr", NOW).window.start == datetime(2025, 1, 1, tzinfo=UTC)
    assert parse("ER trips this mo?", NOW).window.start == datetime(2025, 6, 1, tzinfo=UTC)


def test_visits_of_a_class_named_without_how_many_are_counted() -> None:
    assert ask("ER visits over the last 2 years?")["answer"] == [2]
    assert ask("emergency department utilization since 2025-01-01")["answer"] == [1]


def test_at_any_point_asks_whether() -> None:
    assert ask("an office visit at any point?")["answer"] == [True]
    assert parse("colonoscopy done at any time?", NOW).intent == "exists"


def test_a_reason_after_the_question_is_not_part_of_it() -> None:
    assert ask("last platelets? checking before the procedure tomorrow")["answer"] == [251.0]
    assert ask("weight pls - need it to dose enoxaparin")["answer"] == [90.0]
