"""Clinical states said as words are thresholds on measurements: "is she febrile?" is whether a temperature of
38.0 °C or more was charted (in the last 24 hours when no time is asked, and the answer says so), "any
hypotension yesterday?" whether a systolic pressure fell below 90; the extreme found is cited and the threshold
used is named. A noun without a time ("history of hypoglycemia?") or a question about a note is not read so."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.clinical_state_plan import state_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2025, 6, 20, 8, 0, tzinfo=UTC)
TEMP, SBP = "Body temperature", "Systolic blood pressure"
OBSERVATIONS = [
    obs("t1", TEMP, 38.6, "2025-06-18T22:00:00", unit="Cel", code="8310-5", category="vital-signs"),
    obs("t2", TEMP, 37.1, "2025-06-19T20:00:00", unit="Cel", code="8310-5", category="vital-signs"),
    obs("t3", TEMP, 36.9, "2025-06-20T06:00:00", unit="Cel", code="8310-5", category="vital-signs"),
    obs("b1", SBP, 84.0, "2025-06-19T03:00:00", unit="mm[Hg]", code="8480-6", category="vital-signs"),
    obs("b2", SBP, 118.0, "2025-06-20T06:00:00", unit="mm[Hg]", code="8480-6", category="vital-signs"),
]
VIEWS = {"observation": OBSERVATIONS,
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_febrile_without_a_time_reads_the_last_24_hours_and_says_so() -> None:
    got = ask("is she febrile?")
    assert got["answer"] == [False] and "last 24 hours" in got["text"] and "38.0" in got["text"]
    assert ask("afebrile?")["answer"] == [True]


def test_a_state_in_a_window_is_any_value_past_its_threshold_there() -> None:
    got = ask("any fevers in the last 3 days?")
    assert got["answer"] == [True] and "Observation/t1" in got["cited"]
    assert ask("was she hypotensive yesterday?")["answer"] == [True]  # 84 mmHg on June 19
    assert ask("any hypotension in the last 12 hours?")["answer"] == [False]


@pytest.mark.parametrize("question", ["history of hypoglycemia?", "any hypotension?", "did the note say she was febrile?",
                                      "fever documented in the H&P?", "febrile pt on cross-cover - last WBC?",
                                      "How high did her fever get since she came in?"])
def test_a_diagnosis_or_a_note_question_is_not_a_measured_state(question: str) -> None:
    assert state_asked(parse(question, NOW)) is None
