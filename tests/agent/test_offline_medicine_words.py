"""A drug class is named with any word for medicine ("cholesterol pill" = "cholesterol medicine" = "cholesterol
meds"), and a patient asking about their own orders in the first person ("am I on…", "do I still take…") asks
about the current orders, as "is she on…" does: a class with no active member is a No, never "no data"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.lexicon import Lexicon

from .test_tools_helpers import med, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
VIEWS = {"medication": [med("h1", "Hydrochlorothiazide 25 MG Oral Tablet", "request", "2020-01-05T00:00:00",
                            status="active")],
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize("phrase", ["cholesterol medicine", "cholesterol medicines", "cholesterol meds",
                                    "cholesterol drug", "cholesterol tablets"])
def test_any_word_for_medicine_names_the_class(phrase: str) -> None:
    assert "atorvastatin" in Lexicon.load().class_members(phrase)


def test_a_word_for_medicine_after_an_article_names_no_class() -> None:
    assert Lexicon.load().class_members("the pill")  # the contraceptive, as written in the lexicon
    assert Lexicon.load().class_members("the med") == []  # "any Motrin in the med hx?"


@pytest.mark.parametrize(("question", "answer"), [
    ("do I still take the blood pressure medicine?", [True]),
    ("am I on a water pill?", [True]),
    ("am I on any cholesterol medicine?", [False]),
    ("am I on any inhaler?", [False]),
])
def test_first_person_questions_ask_about_the_current_orders(question: str, answer: list[bool]) -> None:
    got = ask(question)
    assert got["status"] == "answered" and got["answer"] == answer
