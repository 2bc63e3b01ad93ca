"""A chronic condition asked about as a whole ("summarize her diabetes management", "how is his HTN doing?").

The overview answers, in turn, the questions a clinician would ask (diagnosed when, controlled or not, treated with
what, the recent values), each exactly as it would be answered alone, and cites their rows. The gold of each test is
computed from the rows below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.overview_plan import overview_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_offline_ward_questions import condition
from .test_tools_helpers import med, obs, offline_answer, t

NOW = datetime(2026, 6, 30, 12, 0, tzinfo=UTC)
A1C = "Hemoglobin A1c/Hemoglobin.total in Blood"
VALUES = [(8.3, "2024-08-13T09:00:00"), (6.9, "2025-01-20T09:00:00"), (7.1, "2026-04-02T09:00:00")]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "condition": [condition("dm", "Type 2 diabetes", "2021-04-30T10:00:00")],
    "observation": [obs(f"a{i}", A1C, v, when, unit="%", code="4548-4") for i, (v, when) in enumerate(VALUES)],
    "medication": [med("met", "Glucophage (metformin) 500 MG Oral Tablet", "request", "2021-08-02T08:00:00", dose=500,
                       status="active")],
    "goal": [], "encounter": [],
}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_the_overview_answers_each_part_as_it_would_be_answered_alone() -> None:
    got = ask("summarize her diabetes management")
    text = got["text"]
    assert "Diagnosed:" in text and "2021-04-30" in text
    latest = VALUES[-1][0]
    assert f"Controlled? {'Yes' if latest < 7 else 'No'}" in text  # 7.1 % against the usual goal below 7 %
    assert "metformin" in text
    recent = [v for v, when in VALUES if t(when) >= t("2024-06-30T12:00:00")]
    assert f"{len(recent)} values" in text
    assert {"Condition/dm", "Observation/a2", "MedicationRequest/met"} <= got["cited"]


def test_overview_words_need_a_condition_and_a_plain_summary_stays_the_patient_summary() -> None:
    assert overview_asked(parse("how is his HTN doing?", NOW)) is not None
    assert overview_asked(parse("brief summary of this patient", NOW)) is None
    assert overview_asked(parse("summary of her labs", NOW)) is None
