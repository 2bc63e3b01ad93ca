"""The latest value against the value at a past time ("A1c now vs a year ago"): the value nearest that time, within
a third of the distance back (at least the window asked), earlier than the latest one; both values and the change
are given. Expected numbers are computed here from the rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.then_now_plan import then_now_asked

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2021, 6, 1, 12, 0, tzinfo=UTC)
A1C = [("2020-02-10", 6.2), ("2020-08-01", 6.0), ("2021-02-15", 6.4)]
K = [("2021-05-31T08:00:00", 4.0), ("2021-06-01T06:00:00", 4.6)]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "observation": [*(obs(f"a{i}", "Hemoglobin A1c/Hemoglobin.total in Blood", v, f"{d}T09:00:00") for i, (d, v) in enumerate(A1C)),
                    *(obs(f"k{i}", "Potassium", v, when, unit="mmol/L", code="2823-3") for i, (when, v) in enumerate(K)),
                    obs("c1", "Creatinine", 1.1, "2021-05-20T09:00:00", unit="mg/dL", code="2160-0")],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1960-01-01", "gender": "male"}],
}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize("question", ["A1c now vs a year ago", "how does his current A1c compare to last year?",
                                      "A1c compared with a year ago"])
def test_a_year_back_is_the_value_nearest_it_within_four_months(question: str) -> None:
    got = ask(question)
    assert got["answer"] == pytest.approx([A1C[-1][1] - A1C[1][1]])  # 2021-02-15 against 2020-08-01, not 2020-02-10
    assert "2020-08-01" in got["text"] and "2021-02-15" in got["text"]


def test_yesterday_is_any_value_of_that_day() -> None:
    got = ask("K now versus yesterday")
    assert got["answer"] == pytest.approx([K[1][1] - K[0][1]])


def test_no_value_near_the_time_back_says_so() -> None:
    got = ask("creatinine compared to 3 months ago")
    assert got["status"] == "no-data" and "no earlier value" in got["text"]


@pytest.mark.parametrize("question", ["A1c a year ago", "A1c in the last year", "last A1c", "A1c vs LDL"])
def test_other_questions_are_not_comparisons_with_a_time_back(question: str) -> None:
    assert then_now_asked(parse(question, NOW)) is None
