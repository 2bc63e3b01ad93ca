"""An allergy question reads the allergy list only: a penicillin the patient was given (Zosyn) is no penicillin
allergy, and must never answer "is she allergic to penicillin?" with Yes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from .test_tools_helpers import med, offline_answer, t

NOW = datetime(2026, 6, 18, 8, 0, tzinfo=UTC)


def allergy(aid: str, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "code": None, "code_system": None,
            "clinical_status": "active", "verification_status": "confirmed", "type": "allergy",
            "category": "environment", "criticality": "low", "reaction": None, "reaction_severity": None,
            "onset_time": None, "recorded_time": t("2024-06-06T20:15:00"), "last_occurrence": None, "encounter_ref": None}


VIEWS: dict[str, list[dict[str, Any]]] = {
    "allergy": [allergy("a1", "Pollen (substance)")],
    "medication": [med("z1", "Zosyn (piperacillin-tazobactam) 4.5 g IV", "administration", "2025-07-26T08:00:00")],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1950-01-01", "gender": "female"}],
}


@pytest.mark.parametrize("question", ["is she allergic to penicillin?", "any PCN allergy?", "penicillin allergy?"])
def test_a_drug_given_is_no_allergy(question: str) -> None:
    got = offline_answer(question, VIEWS, NOW)
    assert got["answer"] in ([False], []) and "Zosyn" not in got["text"]  # never a Yes from the drug given


def test_an_allergy_on_the_list_is_found() -> None:
    assert offline_answer("is she allergic to anything?", VIEWS, NOW)["answer"] == [True]


def test_the_severity_of_an_allergy_is_its_reactions_never_a_pain_score() -> None:
    pain = {"patient_id": "p1", "ref": "Observation/pain", "name": "Pain severity - 0-10 verbal numeric rating [Score]",
            "code": "72514-3", "value": 6.0, "unit": "{score}", "time": t("2026-06-01T10:00:00"), "category": "survey"}
    severe = {**allergy("a2", "Peanut (substance)"), "reaction": "Anaphylaxis", "reaction_severity": "severe"}
    views = {**VIEWS, "allergy": [VIEWS["allergy"][0], severe], "observation": [pain]}
    got = offline_answer("how severe is her peanut allergy?", views, NOW)
    assert got["answer"] == [severe["reaction_severity"]] and "AllergyIntolerance/a2" in got["cited"]
    unstated = offline_answer("severity of her pollen allergy?", views, NOW)
    assert unstated["status"] == "no-data" and "Observation/pain" not in unstated["cited"]
    assert offline_answer("how severe is her pain?", views, NOW)["answer"] == [pain["value"]]
