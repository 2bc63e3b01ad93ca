"""Why a drug is given is what its orders record as their reason, cited with the order; an order that records none
is said to have none (the reason is never guessed from the problem list), and a question naming no drug is left to
the other plans ("reason for the last ER visit?", "what is the reference range for K?")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.indication_plan import indication_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import med, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
MEDICATIONS = [
    med("a1", "Eliquis (apixaban) 5 MG Oral Tablet", "request", "2024-06-01T00:00:00", status="active",
        reason_name="Atrial fibrillation", reason_ref="Condition/af"),
    med("a2", "Eliquis (apixaban) 5 MG Oral Tablet", "administration", "2024-06-02T08:00:00"),
    med("m1", "Metformin 500 MG Oral Tablet", "request", "2023-02-01T00:00:00", status="active", reason_name=None),
]
VIEWS = {"medication": MEDICATIONS,
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize("question", ["why is she on Eliquis?", "what is the apixaban for?", "indication for eliquis?",
                                      "why was she started on apixaban?", "reason for the Eliquis rx?"])
def test_the_reason_is_the_one_its_orders_record(question: str) -> None:
    got = ask(question)
    assert got["answer"] == ["Atrial fibrillation"] and "MedicationRequest/a1" in got["cited"]


def test_an_order_without_a_reason_says_so_and_guesses_nothing() -> None:
    got = ask("what is the metformin for?")
    assert got["status"] == "no-data" and "record no reason" in got["text"]


@pytest.mark.parametrize("question", ["reason for the last ER visit?", "what is the reference range for K?",
                                      "why was she admitted?"])
def test_a_question_naming_no_drug_is_not_about_an_indication(question: str) -> None:
    assert indication_asked(parse(question, NOW)) is None
