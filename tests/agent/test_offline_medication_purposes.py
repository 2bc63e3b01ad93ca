"""A medication list or check about a class, named by the class or by what it treats: "what antihypertensives is she
taking?" lists only the antihypertensives (not every active order); "is she on anything for pain?" asks about
analgesics (never the pain score); "what is he taking for his blood pressure?" lists the antihypertensives."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.purpose_plan import purpose_class

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2026, 6, 18, 8, 0, tzinfo=UTC)
ACTIVE = ["Amlodipine 5 MG Oral Tablet", "Atorvastatin 80 MG Oral Tablet", "Zoloft (sertraline) 50 MG Oral Tablet",
          "Lisinopril 10 MG Oral Tablet"]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "medication": [*(med(f"m{i}", name, "request", "2025-08-05T00:00:00", status="active") for i, name in enumerate(ACTIVE)),
                   med("x1", "Acetaminophen 325 MG Oral Tablet", "request", "2025-07-18T00:00:00", status="completed")],
    "observation": [obs("p1", "Pain severity - 0-10 verbal numeric rating [Score] - Reported", 6.0,
                        "2026-06-17T08:00:00", unit="{score}", code="72514-3", category="survey")],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1950-01-01", "gender": "female"}],
}
ANTIHYPERTENSIVES = ["Amlodipine 5 MG Oral Tablet", "Lisinopril 10 MG Oral Tablet"]


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize(("question", "drug_class"), [
    ("is she on anything for pain?", "analgesic"), ("what is he taking for his blood pressure?", "antihypertensive"),
    ("any meds for cholesterol?", "statin"), ("is she taking something for her sugar", "antidiabetic"),
    ("what meds for reflux?", "acid suppressant"),
])
def test_a_purpose_names_the_class_that_treats_it(question: str, drug_class: str) -> None:
    assert purpose_class(parse(question, NOW)) == drug_class


@pytest.mark.parametrize("question", ["what was her pain score?", "any pain meds given?", "is she on lisinopril?",
                                      "what meds is she on for her heart"])
def test_other_questions_name_no_purpose(question: str) -> None:
    assert purpose_class(parse(question, NOW)) is None


@pytest.mark.parametrize("question", ["what antihypertensives is she taking?", "what is she taking for her blood pressure?"])
def test_a_class_list_holds_only_its_members(question: str) -> None:
    assert sorted(ask(question)["answer"]) == ANTIHYPERTENSIVES


def test_anything_for_pain_is_about_analgesics_not_the_pain_score() -> None:
    got = ask("is she on anything for pain?")
    assert got["answer"] == [False] and "Acetaminophen" in got["text"]  # completed, not active; the score is no drug


def test_a_class_with_no_active_member_is_an_empty_list() -> None:
    got = ask("which blood thinners is she taking?")
    assert got["answer"] == [] and got["status"] == "answered" and "No blood thinners" in got["text"]


def test_the_whole_list_when_no_class_is_named() -> None:
    assert sorted(ask("what is she on?")["answer"]) == sorted(ACTIVE)
