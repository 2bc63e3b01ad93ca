"""Doses given, as a nurse or pharmacist asks about them (session 18, found by the probe_voices2 MAR questions).

1. "Rocephin orally?", "is her heparin going by mouth": whether the drug goes by that route, from its latest dose
   charted (else its latest order); once answered with a dose, or Yes because heparin exists;
2. "what meds did he get today?", "which drugs has she received today": every drug given in the window once, with
   its doses, never the active orders (an order never given is no dose);
3. "date of last vanco admin": an administration, never the vancomycin trough.
Each gold is computed from the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2025, 7, 22, 21, 0, tzinfo=UTC)
MEDS = [
    med("cef-rq", "Ceftriaxone 1 g IV", "request", "2025-07-20T08:00:00", dose=1, unit="g", status="active"),
    med("cef-1", "Ceftriaxone 1 g IV", "administration", "2025-07-21T08:00:00", dose=1, unit="g"),
    med("cef-2", "Ceftriaxone 1 g IV", "administration", "2025-07-22T08:00:00", dose=1, unit="g"),
    med("hep-1", "Heparin 5,000 units/mL injection", "administration", "2025-07-22T06:00:00", dose=5000, unit="units",
        route="subcutaneous"),
    med("apap-1", "Acetaminophen 325 MG Oral Tablet", "administration", "2025-07-21T22:00:00", dose=650, route="oral"),
    med("apap-rq", "Acetaminophen 325 MG Oral Tablet", "request", "2025-07-20T08:00:00", dose=650, route="oral",
        status="active"),
    med("vanc-rq", "Vancomycin 1,000 mg IVPB", "request", "2025-07-20T08:00:00", dose=1000, status="active"),
    med("vanc-1", "Vancomycin 1,000 mg IVPB", "administration", "2025-07-21T10:00:00", dose=1000),
]
TROUGH = [obs("vt", "Vancomycin [Mass/volume] in Serum or Plasma --trough", 14.2, "2025-07-22T09:00:00", unit="ug/mL")]
VIEWS: dict[str, list[dict[str, Any]]] = {"medication": MEDS, "observation": TROUGH}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def latest_dose(word: str) -> dict[str, Any]:
    return max((r for r in MEDS if word in r["medication_name"].lower() and r["kind"] == "administration"),
               key=lambda r: r["time"])


@pytest.mark.parametrize(("question", "drug", "oral"), [
    ("Rocephin orally?", "ceftriaxone", False), ("is her heparin going by mouth", "heparin", False),
    ("is acetaminophen being given by mouth?", "acetaminophen", True), ("heparin SQ?", "heparin", True),
])
def test_a_route_asked_of_one_drug_is_read_from_its_latest_dose(question: str, drug: str, oral: bool) -> None:
    row = latest_dose(drug)
    got = ask(question)
    assert got["answer"] == [oral], got["text"]
    assert row["route"] in got["text"]


def test_what_was_given_today_lists_each_drug_given_once() -> None:
    today = NOW.date()
    expected = sorted({r["medication_name"] for r in MEDS if r["kind"] == "administration" and r["time"].date() == today})
    for question in ("what meds did he get today?", "which drugs has she received today", "meds given today?"):
        got = ask(question)
        assert sorted(got["answer"]) == expected, question
    # acetaminophen is ordered and active, but its one dose was yesterday
    assert "Acetaminophen 325 MG Oral Tablet" not in expected


def test_an_admin_is_a_dose_given_not_a_drug_level() -> None:
    got = ask("date of last vanco admin")
    assert str(got["answer"][0])[:10] == latest_dose("vancomycin")["time"].date().isoformat()
    assert "MedicationAdministration/vanc-1" in got["cited"]
