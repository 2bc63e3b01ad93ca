"""Several clinical states in one question ("was she febrile or hypoxic overnight?") are each checked over the same
window and joined: "or" is Yes when one held, "and" when all did. Before, only the first state named was read, and
"febrile or hypoxic overnight?" answered No beside an SpO2 of 88."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.clinical_state_plan import states_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2025, 6, 20, 7, 30, tzinfo=UTC)
VIEWS: dict[str, list[dict[str, Any]]] = {
    "observation": [
        obs("t1", "Body temperature", 37.2, "2025-06-19T22:00:00", unit="Cel", code="8310-5", category="vital-signs"),
        obs("t2", "Body temperature", 37.0, "2025-06-20T04:00:00", unit="Cel", code="8310-5", category="vital-signs"),
        obs("s1", "Oxygen saturation in Arterial blood by Pulse oximetry", 95.0, "2025-06-19T22:00:00", unit="%",
            code="59408-5", category="vital-signs"),
        obs("s2", "Oxygen saturation in Arterial blood by Pulse oximetry", 88.0, "2025-06-20T03:00:00", unit="%",
            code="59408-5", category="vital-signs"),
    ],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1950-01-01", "gender": "female"}],
}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_each_state_named_is_read_in_the_order_named() -> None:
    states = states_asked(parse("was she febrile or hypoxic overnight?", NOW))
    assert [s["item"] for s in states or []] == ["temperature", "oxygen saturation"]
    assert len(states_asked(parse("is she afebrile?", NOW)) or []) == 1  # "febrile" inside "afebrile" is not a second


@pytest.mark.parametrize(("question", "answer"), [("was she febrile or hypoxic overnight?", True),
                                                  ("was she febrile and hypoxic overnight?", False),
                                                  ("was she hypoxic overnight?", True), ("was she febrile overnight?", False)])
def test_or_is_any_and_is_all(question: str, answer: bool) -> None:
    got = ask(question)
    assert got["answer"] == [answer]
    if " or " in question:
        assert "88" in got["text"] and "[febrile]" in got["text"] and "[hypoxic]" in got["text"]
