"""Social and family history that the record does not chart is unknown, not No.

"does she drink alcohol?", "family history?", "is she sexually active?" over a record that holds nothing on the
topic answer no-data ("Not documented"), while "any history of MI?" over a record without one stays a No; a topic
that is charted is answered from what is charted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.plans import undocumented_topic

from .test_offline_ward_questions import condition
from .test_tools_helpers import obs, offline_answer

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
VIEWS: dict[str, list[dict[str, Any]]] = {
    "condition": [condition("htn", "Essential hypertension", "2015-03-01T10:00:00")],
    "observation": [obs("bp", "Systolic blood pressure", 128.0, "2024-06-01T10:00:00", unit="mm[Hg]", code="8480-6")],
    "medication": [], "encounter": [], "allergy": [],
}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    return offline_answer(question, views or VIEWS, NOW)


def test_an_uncharted_habit_or_family_history_is_not_documented() -> None:
    for question in ("does she drink alcohol?", "family history?", "is she sexually active?", "any illicit drug use?"):
        got = ask(question)
        assert got["status"] == "no-data" and got["answer"] == [], question
        assert got["text"].startswith("Not documented"), question


def test_an_uncharted_diagnosis_is_still_a_no() -> None:
    got = ask("any history of MI?")
    assert got["answer"] == [False] and got["status"] == "answered"


def test_a_charted_habit_is_answered_from_the_chart() -> None:
    audit = obs("au", "Alcohol Use Disorder Identification Test - Consumption [AUDIT-C]", 3.0, "2024-05-01T10:00:00",
                unit="{score}", code="72109-2", category="survey")
    got = ask("does she drink alcohol?", {**VIEWS, "observation": [*VIEWS["observation"], audit]})
    assert got["status"] == "answered" and "Observation/au" in got["cited"]


def test_topics_are_read_from_the_lexicon() -> None:
    assert undocumented_topic("FHx of colon cancer?") == "family history"
    assert undocumented_topic("ETOH?") == "alcohol use"
    assert undocumented_topic("last A1c?") is None


def test_a_living_situation_is_not_whether_the_patient_is_alive() -> None:
    for question in ("what's her living situation?", "who is she living with?", "does she live alone?"):
        got = ask(question)
        assert got["status"] == "no-data" and "death" not in got["text"], question
