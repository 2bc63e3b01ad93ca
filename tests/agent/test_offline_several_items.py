"""Questions naming several items at once are asked once per item and the answers joined:

- "last K and Mg?", "Na, K and Cr?" give each item's value, each with its own text and evidence;
- yes/no answers join into one: all of them for "and" / "both", any of them for "or" / "either";
- a phrase the lexicon knows as a whole ("nausea and vomiting") and questions relating the items ("ratio of BUN and
  creatinine") stay one question;
- a change or trend compares each item with itself: "BP trend" is systolic against systolic and diastolic against
  diastolic, never the first systolic against the last diastolic.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.conjunction_plan import item_parts
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
K, MG, NA = "Potassium [Moles/volume] in Serum or Plasma", "Magnesium [Mass/volume] in Serum or Plasma", "Sodium"
SBP, DBP = "Systolic blood pressure", "Diastolic blood pressure"

OBSERVATIONS = [
    obs("k1", K, 3.9, "2025-01-10T08:00:00", unit="mmol/L", code="2823-3"),
    obs("k2", K, 4.6, "2025-06-01T08:00:00", unit="mmol/L", code="2823-3"),
    obs("m1", MG, 1.9, "2025-06-01T08:00:00", unit="mg/dL", code="19123-9"),
    obs("n1", NA, 139.0, "2025-06-01T08:00:00", unit="mmol/L", code="2951-2"),
    obs("s1", SBP, 150.0, "2024-01-05T09:00:00", unit="mm[Hg]", code="8480-6", category="vital-signs"),
    obs("d1", DBP, 70.0, "2024-01-05T09:00:00", unit="mm[Hg]", code="8462-4", category="vital-signs"),
    obs("s2", SBP, 128.0, "2025-05-05T09:00:00", unit="mm[Hg]", code="8480-6", category="vital-signs"),
    obs("d2", DBP, 82.0, "2025-05-05T09:00:00", unit="mm[Hg]", code="8462-4", category="vital-signs"),
]
MEDICATIONS = [
    med("r1", "Lisinopril 10 MG Oral Tablet", "request", "2025-01-01T00:00:00", status="active"),
    med("r2", "Simvastatin 20 MG Oral Tablet", "request", "2025-01-01T00:00:00", status="active"),
]
CONDITIONS = [{"patient_id": "p1", "ref": "Condition/c1", "name": "Stroke", "code": None, "clinical_status": "active",
               "verification_status": "confirmed", "onset_time": obs("x", "", 0, "2019-03-01T00:00:00")["time"],
               "abatement_time": None, "recorded_time": None, "category": "problem-list-item"}]
VIEWS = {"observation": OBSERVATIONS, "medication": MEDICATIONS, "condition": CONDITIONS,
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize("question", ["last K and Mg?", "latest K & Mg", "most recent potassium and magnesium?"])
def test_each_item_named_gets_its_own_value(question: str) -> None:
    got = ask(question)
    assert got["answer"] == [4.6, 1.9]
    assert {"Observation/k2", "Observation/m1"} <= got["cited"]


def test_a_list_of_three_items_gives_three_values() -> None:
    assert ask("Na, K and Mg?")["answer"] == [139.0, 4.6, 1.9]


def test_items_that_lead_to_one_record_give_one_answer() -> None:
    got = ask("last potassium or K?")  # two names of one test
    assert got["answer"] == [4.6] and got["text"].count("4.6") == 1


@pytest.mark.parametrize(("question", "one_missing"), [
    ("is she on both an ACE inhibitor and a statin?", "is she on both an ACE inhibitor and a beta blocker?"),
    ("on lisinopril and simvastatin?", "on lisinopril and metoprolol?")])
def test_and_between_yes_no_items_is_yes_only_when_all_are(question: str, one_missing: str) -> None:
    assert ask(question)["answer"] == [True]
    assert ask(one_missing)["answer"] == [False]


@pytest.mark.parametrize("question", ["any history of MI or stroke?", "either an MI or a stroke ever?"])
def test_or_between_yes_no_items_is_yes_when_one_is(question: str) -> None:
    got = ask(question)
    assert got["answer"] == [True]
    assert "Condition/c1" in got["cited"]


@pytest.mark.parametrize("question", ["nausea and vomiting?", "ratio of BUN and creatinine?",
                                      "K between January and June?", "did the note's K and Mg match the labs?",
                                      "last tetanus shot (Td, Tdap or DTaP)?"])
def test_one_phrase_or_a_relation_between_items_stays_one_question(question: str) -> None:
    assert item_parts(parse(question, NOW)) is None


def test_a_trend_compares_each_component_with_itself() -> None:
    got = ask("BP trend")
    assert got["answer"] == ["decreasing", "increasing"]  # systolic 150 → 128, diastolic 70 → 82
    assert "150" in got["text"] and "128" in got["text"] and "70" in got["text"] and "82" in got["text"]
    change = ask("how much has her blood pressure changed?")
    assert change["answer"] == [-22.0, 12.0]
