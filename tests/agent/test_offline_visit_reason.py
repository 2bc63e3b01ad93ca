"""What a visit's record says: why ("reason for admission", "why was he admitted?", "admitting dx?", "what brought
her in?"), who ("who is the attending?"), where ("which hospital?") and where to after ("discharge disposition").

A reason is the visit's own (Encounter.reasonCode, the encounter view's ``reason_name``), else the diagnoses
recorded with that visit; the other fields are the visit's own or no-data; the visit is the latest (or first) of the class the words name, an inpatient
or emergency visit when none is named, and never one after the question's time. Never the admission's date,
never a lab that happens to be charted that day. The gold of each test is computed from the rows below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .test_offline_patient_snapshot import encounter
from .test_offline_ward_questions import condition
from .test_tools_helpers import obs, offline_answer

NOW = datetime(2025, 7, 19, 18, 0, tzinfo=UTC)
VISITS = [
    encounter("ed1", "EMER", "Emergency department visit", "50849002", "2022-12-21T12:00:00", reason="Atypical chest pain"),
    encounter("imp1", "IMP", "Inpatient admission", "32485007", "2023-03-02T10:00:00", "2023-03-06T10:00:00"),
    {**encounter("imp2", "IMP", "Inpatient admission", "32485007", "2025-07-15T14:00:00", "2025-07-21T10:00:00",
                 practitioner="Dr. Deepak Lindqvist", reason="Sepsis secondary to urinary tract infection"),
     "service_provider": "St. Brendan Regional Medical Center", "discharge_disposition": "Home"},
    # after the question's time: not yet known
    encounter("ed2", "EMER", "Emergency department visit", "50849002", "2025-08-01T12:00:00", reason="Fall"),
]
PNEUMONIA = {**condition("pna", "Pneumonia", "2023-03-02T10:00:00"), "encounter_ref": "Encounter/imp1"}
VIEWS: dict[str, list[dict[str, Any]]] = {
    "encounter": VISITS, "condition": [PNEUMONIA],
    "observation": [obs("k", "Potassium", 4.4, "2025-07-15T15:00:00", unit="mmol/L", code="2823-3")]}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    return offline_answer(question, views or VIEWS, NOW)


def test_the_reason_for_admission_is_the_stays_own_reason() -> None:
    current = VISITS[2]
    for question in ("reason for admission", "why was he admitted?", "admitting dx?", "what brought him in?",
                     "what was he admitted for?"):
        got = ask(question)
        assert got["answer"] == [current["reason_name"]], question
        assert "Encounter/imp2" in got["cited"], question


def test_the_class_named_picks_the_visit_and_a_later_one_is_not_known_yet() -> None:
    got = ask("reason for his last ED visit")
    assert got["answer"] == [VISITS[0]["reason_name"]] and "Encounter/ed2" not in got["cited"]


def test_a_visit_without_a_reason_gives_the_diagnoses_recorded_with_it() -> None:
    got = ask("reason for the first admission?")
    assert got["answer"] == [PNEUMONIA["name"]] and "records no reason of its own" in got["text"]
    assert "Condition/pna" in got["cited"]


def test_dates_and_values_on_admission_keep_their_own_readings() -> None:
    assert ask("when was he admitted")["answer"] != [VISITS[2]["reason_name"]]
    assert ask("K on admission")["answer"] == [4.4]


def test_who_and_where_are_the_stays_own_clinician_and_organization() -> None:
    current = VISITS[2]
    for question in ("who is the attending?", "who admitted him?"):
        assert ask(question)["answer"] == [current["practitioner"]], question
    assert ask("which hospital is he at?")["answer"] == [current["service_provider"]]
    got = ask("what unit is he on?")
    assert got["status"] == "no-data" and "no location" in got["text"]


def test_a_discharge_disposition_is_not_known_before_the_discharge() -> None:
    current = VISITS[2]
    got = ask("discharge disposition?")
    assert got["status"] == "no-data" and "Not discharged yet" in got["text"]
    after = offline_answer("discharge disposition?", VIEWS, datetime(2025, 7, 22, 12, 0, tzinfo=UTC))
    assert after["answer"] == [current["discharge_disposition"]]


def test_what_a_note_says_and_a_dated_visit_are_left_to_their_own_plans() -> None:
    latest = VISITS[2]["reason_name"]
    # the H&P's diagnosis and a complaint are the note's words; a visit on a day is placed by the dated plans
    assert ask("admitting dx in the Jul 15 H&P?")["answer"] != [latest]
    assert ask("presenting complaint in the 2025-07-15 note?")["answer"] != [latest]
    assert ask("reason for the admission in 2023?")["answer"] != [latest]
