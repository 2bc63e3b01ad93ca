"""Offline backend: windows anchored on events of the record, and calendar windows.

An event-anchored window names an event (a stay, its admission or discharge, an operation, a named
procedure, a drug's first order, the last visit), resolves it from the record, then places the window
from it (hospital day N, POD N, the day before / after, the N hours before discharge, during / before /
after, between two stays). When the event is not in the record the answer is no-data and says which
event is missing. Calendar windows (quarters, year to date, weekday names, overnight) are resolved
against ``now``. Meanings: docs/questions.md, "Time windows".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)  # a Friday
NA = "Sodium [Moles/volume] in Serum or Plasma"
GLU = "Glucose [Mass/volume] in Blood"


def encounter(eid: str, code: str, start: str, end: str | None, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


def procedure(pid: str, name: str, when: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Procedure/{pid}", "name": name, "code": pid, "code_system": "http://snomed.info/sct",
            "status": "completed", "category": None, "start_time": t(when), "end_time": t(when), "reason_name": None,
            "reason_code": None, "reason_ref": None, "body_site": None, "outcome": None, "encounter_ref": None}


def sodium(oid: str, value: float, when: str) -> dict[str, Any]:
    return obs(oid, NA, value, when, unit="mmol/L", code="2951-2")


def glucose(oid: str, value: float, when: str) -> dict[str, Any]:
    return obs(oid, GLU, value, when, unit="mg/dL", code="2339-0")


# Two stays: March 2–6 and May 10–14, 2025; clinic and ED visits around them; a bowel resection on May 11.
ENCOUNTERS = [
    encounter("c0", "AMB", "2025-01-15T09:00:00", "2025-01-15T09:30:00", "Office visit"),
    encounter("s1", "IMP", "2025-03-02T14:00:00", "2025-03-06T11:00:00", "Hospital admission"),
    encounter("c1", "AMB", "2025-03-20T09:00:00", "2025-03-20T09:30:00", "Office visit"),
    encounter("e1", "EMER", "2025-04-02T03:00:00", "2025-04-02T06:00:00", "Emergency room visit"),
    encounter("c2", "AMB", "2025-04-25T09:00:00", "2025-04-25T09:30:00", "Office visit"),
    encounter("s2", "IMP", "2025-05-10T16:00:00", "2025-05-14T12:00:00", "Hospital admission"),
    encounter("c3", "AMB", "2025-06-03T10:00:00", "2025-06-03T10:40:00", "Follow-up visit"),
]
LABS = [
    sodium("n0", 139.0, "2025-01-15T09:10:00"),
    sodium("n1", 131.0, "2025-03-03T06:00:00"),
    sodium("n2", 134.0, "2025-03-05T06:00:00"),
    sodium("n3", 137.0, "2025-04-25T09:10:00"),
    sodium("n4", 129.0, "2025-05-10T18:00:00"),  # hospital day 1 of the last stay
    sodium("n5", 133.0, "2025-05-11T06:00:00"),  # hospital day 2
    sodium("n6", 127.0, "2025-05-12T06:00:00"),  # hospital day 3, POD 1
    sodium("n7", 135.0, "2025-05-13T06:00:00"),
    sodium("n8", 138.0, "2025-05-14T07:00:00"),  # the morning of discharge
    sodium("n9", 140.0, "2025-05-20T08:00:00"),  # first after discharge
    sodium("n10", 141.0, "2025-06-03T10:10:00"),  # at the last visit
    glucose("g1", 182.0, "2025-06-18T23:30:00"),  # overnight before now's day
    glucose("g2", 95.0, "2025-06-19T12:00:00"),  # the afternoon: not overnight
    glucose("g3", 150.0, "2025-06-20T05:00:00"),  # overnight
    glucose("g4", 101.0, "2025-06-16T08:00:00"),  # Monday
]
PROCEDURES = [procedure("x1", "Partial colectomy", "2025-05-11T10:00:00"),
              procedure("x2", "Chest X-ray, 2 views", "2025-04-24T15:00:00")]
MEDS = [med("v1", "Vancomycin 1000 MG Injection", "request", "2025-05-10T20:00:00", dose=1000),
        med("h1", "Heparin sodium 5000 UNT/ML Injectable Solution", "request", "2025-05-12T09:00:00", dose=5000)]
VIEWS = {"encounter": ENCOUNTERS, "observation": LABS, "procedure": PROCEDURES, "medication": MEDS}
NEVER_ADMITTED = {"encounter": [ENCOUNTERS[0]], "observation": LABS, "procedure": [], "medication": []}
ONE_STAY = {"encounter": ENCOUNTERS[:2], "observation": LABS, "procedure": [], "medication": []}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None, now: datetime = NOW) -> dict[str, Any]:
    """The final answer over the fake rows."""
    ctx = ToolContext(patient_id="p1", now=now, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {now.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# Hospital day N: day 1 is the admission day of the latest stay ------------------------------------------------

@pytest.mark.parametrize(("question", "value"), [
    ("sodium on hospital day 1?", 129.0), ("what was the Na on HD#2", 133.0), ("HD 3 sodium of his last stay", 127.0),
    ("Na hosp day 4 last admit", 135.0)])
def test_hospital_day_n_is_the_nth_calendar_day_of_the_latest_stay(question: str, value: float) -> None:
    assert ask(question)["answer"] == [value]


def test_hospital_day_without_any_stay_is_no_data_naming_the_missing_admission() -> None:
    final = ask("sodium on hospital day 2?", NEVER_ADMITTED)
    assert final["status"] == "no-data" and "never admitted" in final["text"]


# POD N: N days after the latest operation (a procedure whose name is surgical) --------------------------------

def test_post_op_day_counts_from_the_operation() -> None:
    assert ask("Na on post-op day 1?")["answer"] == [127.0]
    assert ask("POD2 sodium")["answer"] == [135.0]


def test_post_op_day_without_an_operation_is_no_data() -> None:
    views = {**VIEWS, "procedure": PROCEDURES[1:]}  # an X-ray is no operation
    final = ask("POD1 sodium?", views)
    assert final["status"] == "no-data" and "operation" in final["text"]


# before / during / after a stay, the stay before last, between two stays --------------------------------------

def test_before_the_last_admission_is_the_latest_value_before_its_start() -> None:
    assert ask("last sodium prior to her most recent hospitalization")["answer"] == [137.0]


def test_first_value_after_discharge_is_the_first_after_the_latest_stays_end() -> None:
    assert ask("first Na after her discharge?")["answer"] == [140.0]
    assert ask("first Na after her discharge?", NEVER_ADMITTED)["status"] == "no-data"


def test_during_the_stay_bounds_an_extreme_to_its_period() -> None:
    assert ask("lowest sodium during her last hospitalization")["answer"] == [127.0]
    assert ask("highest Na during the admission before last")["answer"] == [134.0]


def test_the_stay_before_last_needs_two_stays() -> None:
    final = ask("highest Na during the admission before last", ONE_STAY)
    assert final["status"] == "no-data" and "only 1 inpatient stay" in final["text"]


def test_between_two_stays_counts_visits_from_one_discharge_to_the_next_admission() -> None:
    assert ask("how many clinic visits between her last two hospitalizations?")["answer"] == [2]
    assert ask("number of ED visits between her 2 admissions")["answer"] == [1]


def test_hours_before_discharge_end_at_the_discharge() -> None:
    assert ask("how many sodium values in the 48 hours before her discharge?")["answer"] == [2]
    assert ask("max Na in the last 24h before discharge")["answer"] == [138.0]


# the day before / after a procedure or a drug's first order -----------------------------------------------------

def test_the_day_after_a_named_procedure() -> None:
    assert ask("sodium the day after the chest x-ray, 2 views")["answer"] == [137.0]


def test_the_day_before_a_procedure_the_record_lacks_is_no_data() -> None:
    final = ask("Na the day before her appendectomy?")
    assert final["status"] == "no-data" and "appendectomy" in final["text"]


def test_the_day_after_starting_a_drug_is_one_calendar_day() -> None:
    assert ask("Na the day after vancomycin was started")["answer"] == [133.0]
    assert ask("sodium the day after starting lisinopril")["status"] == "no-data"


# the last visit ---------------------------------------------------------------------------------------------------

def test_at_the_last_visit_is_within_its_period() -> None:
    assert ask("Na at her most recent appointment?")["answer"] == [141.0]


def test_since_the_last_visit_counts_from_its_start() -> None:
    assert ask("how many sodium results since her last visit?")["answer"] == [1]
    assert ask("days since her last visit?")["answer"] != [1]  # the visit itself is asked about


# calendar windows ---------------------------------------------------------------------------------------------------

def test_quarters_and_year_to_date() -> None:
    assert ask("lowest sodium in Q1 2025")["answer"] == [131.0]
    assert ask("how many encounters in the second quarter of 2025?")["answer"] == [4]
    assert ask("admissions YTD")["answer"] == [2]
    assert ask("highest Na year to date")["answer"] == [141.0]


def test_a_weekday_is_the_latest_such_day_before_today() -> None:
    assert ask("glucose on Monday?")["answer"] == [101.0]


def test_overnight_is_seven_pm_to_seven_am_before_now() -> None:
    assert ask("max glucose overnight")["answer"] == [150.0]


@pytest.mark.parametrize(("phrase", "start", "end"), [
    ("in q3 2024", "2024-07-01T00:00:00+00:00", "2024-09-30T23:59:59.999999+00:00"),
    ("ytd", "2025-01-01T00:00:00+00:00", NOW.isoformat()),
    ("on tuesday", "2025-06-17T00:00:00+00:00", "2025-06-17T23:59:59.999999+00:00"),
])
def test_calendar_phrases_become_explicit_windows(phrase: str, start: str, end: str) -> None:
    found = find_window(f"k {phrase}", NOW)
    assert found is not None and found.window.start is not None and found.window.end is not None
    assert (found.window.start.isoformat(), found.window.end.isoformat()) == (start, end)


def test_anchor_words_leave_the_item_name() -> None:
    found = find_window("how many k values in the 36 h before his last discharge?", NOW)
    assert found is not None and found.window.event is not None
    assert (found.window.event.relation, found.window.event.amount) == ("hours_before", 36)
    assert "discharge" not in "how many k values in the 36 h before his last discharge?"[: found.start]


def test_the_day_before_starting_a_drug_and_the_day_of_discharge() -> None:
    assert ask("sodium the day before starting heparin")["answer"] == [133.0]
    assert ask("sodium the day before starting vancomycin")["status"] == "no-data"  # May 9 holds no sodium
    assert ask("Na on the day of discharge?")["answer"] == [138.0]


def test_the_first_hours_of_a_stay_or_after_an_operation() -> None:
    assert ask("how many sodium values in the first 24 h of admission?")["answer"] == [2]
    assert ask("highest Na within 48 hours after surgery")["answer"] == [135.0]


def test_hemodialysis_days_are_not_hospital_days() -> None:
    found = find_window("on hd 3 times a week?", NOW)
    assert found is None or found.window.event is None


@pytest.mark.parametrize("text", ["how many doses/day of prednisone?", "what day of the week was the visit"])
def test_a_rate_per_day_is_no_day_of_an_event(text: str) -> None:
    found = find_window(text, NOW)
    assert found is None or found.window.event is None


def test_a_yes_no_question_on_a_missing_anchor_is_no_data_not_no() -> None:
    final = ask("any sodium after his discharge?", NEVER_ADMITTED)
    assert final["status"] == "no-data" and "never admitted" in final["text"]


def test_an_anchored_value_names_its_anchor_and_day() -> None:
    assert "the day after the chest x-ray, 2 views (2025-04-24)" in ask("sodium the day after the chest x-ray, 2 views")["text"]


@pytest.mark.parametrize(("question", "value"), [
    ("sodium on day 2 of her last hospitalization", 133.0), ("Na on the third hospital day", 127.0),
    ("Na on HD 2 of the admission before last", 131.0)])
def test_hospital_day_phrasings_and_the_stay_they_name(question: str, value: float) -> None:
    assert ask(question)["answer"] == [value]


def test_the_first_stay_and_the_value_at_discharge() -> None:
    assert ask("lowest Na during her first hospitalization")["answer"] == [131.0]
    assert ask("last sodium before her first admission")["answer"] == [139.0]
    assert ask("sodium at discharge")["answer"] == [138.0]  # the last value of the latest stay, not the latest ever


def test_n_days_after_an_event_and_discharge_said_as_a_verb() -> None:
    assert ask("Na 6 days after discharge")["answer"] == [140.0]
    assert ask("first sodium after she was discharged")["answer"] == [140.0]
    assert ask("lowest Na in the last 48 hours of her stay")["answer"] == [135.0]


def test_before_after_and_since_a_procedure_the_lexicon_names() -> None:
    assert ask("first sodium after the chest x-ray")["answer"] == [137.0]
    assert ask("last Na before the chest x-ray")["answer"] == [134.0]  # the X-ray of April 24; March 5 before it
    final = ask("highest Na after her cholecystectomy")
    assert final["status"] == "no-data" and "cholecystectomy" in final["text"]
