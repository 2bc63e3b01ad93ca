"""A result's values as a run: listed with their days ("list her weights since 2018", "last 3 BPs"), their spread
("BP range this year", "how variable is her glucose") and statistics per analyte ("average BP" is a systolic
average and a diastolic average, never one number over both). The expected numbers are computed here from the
rows, not read from fhirqa."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.series_plan import series_asked

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2024, 12, 1, 12, 0, tzinfo=UTC)
BP = "Blood pressure panel"
READINGS = [  # (day, systolic, diastolic): one Observation each, its two components
    ("2023-03-01", 142.0, 91.0), ("2023-09-12", 128.0, 84.0), ("2024-01-20", 118.0, 76.0),
    ("2024-04-02", 150.0, 95.0), ("2024-08-30", 121.0, 79.0),
]
WEIGHTS = [("2022-05-01", 80.2), ("2023-05-03", 82.5), ("2024-02-11", 84.0), ("2024-10-09", 83.1)]


def _bp_rows() -> list[dict[str, Any]]:
    rows = []
    for i, (day, sys_, dia) in enumerate(READINGS):
        for name, code, value in (("Systolic blood pressure", "8480-6", sys_), ("Diastolic blood pressure", "8462-4", dia)):
            rows.append(obs(f"bp{i}", name, value, f"{day}T10:00:00", unit="mm[Hg]", code=code, category="vital-signs",
                            is_component=True, parent_name=BP))
    return rows


OBSERVATIONS = [
    *_bp_rows(),
    *(obs(f"w{i}", "Body weight", kg, f"{day}T09:00:00", unit="kg", code="29463-7", category="vital-signs")
      for i, (day, kg) in enumerate(WEIGHTS)),
]
VIEWS = {"observation": OBSERVATIONS,
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def _in_2024(rows: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    return [r for r in rows if r[0] >= "2024-01-01"]


@pytest.mark.parametrize("question", ["average BP this year", "average blood pressure in 2024", "avg BP since January"])
def test_an_average_of_a_panel_is_one_per_part(question: str) -> None:
    got = ask(question)
    this_year = _in_2024(READINGS)
    expected = [statistics.mean(r[1] for r in this_year), statistics.mean(r[2] for r in this_year)]
    assert got["answer"] == pytest.approx(expected)  # systolic first, as a reading is written
    assert "Systolic" in got["text"] and "Diastolic" in got["text"]


def test_the_highest_bp_names_each_part() -> None:
    got = ask("highest BP?")
    assert got["answer"] == [max(r[1] for r in READINGS), max(r[2] for r in READINGS)]
    assert "2024-04-02" in got["text"]


@pytest.mark.parametrize("question", ["BP range this year", "how variable has her BP been in 2024?",
                                      "highs and lows of her blood pressure this year"])
def test_a_range_is_the_lowest_and_the_highest_value_per_part(question: str) -> None:
    got = ask(question)
    this_year = _in_2024(READINGS)
    assert got["answer"] == [min(r[1] for r in this_year), max(r[1] for r in this_year),
                             min(r[2] for r in this_year), max(r[2] for r in this_year)]
    assert "ranged from" in got["text"] and "(3 values)" in got["text"]


def test_a_range_of_one_result() -> None:
    got = ask("what's the range of her weight?")
    assert got["answer"] == [min(kg for _, kg in WEIGHTS), max(kg for _, kg in WEIGHTS)]
    assert got["unit"] == "kg"


@pytest.mark.parametrize("question", ["what's the normal range for her weight?", "is her weight in range?"])
def test_a_reference_range_is_not_a_spread_of_values(question: str) -> None:
    assert parse(question, NOW).aggregate != "range"


@pytest.mark.parametrize("question", ["list her weights since 2023", "all her weight values since 2023",
                                      "show me every weight since 2023", "her weights since 2023"])
def test_a_listed_series_gives_every_value_with_its_day_in_time_order(question: str) -> None:
    got = ask(question)
    since = [(day, kg) for day, kg in WEIGHTS if day >= "2023-01-01"]
    assert got["answer"] == [kg for _, kg in since]
    assert all(day in got["text"] for day, _ in since) and "2022-05-01" not in got["text"]


def test_a_panel_is_listed_as_readings() -> None:
    got = ask("show me her BP readings this year")
    assert got["answer"] == [f"{s:g}/{d:g}" for _, s, d in _in_2024(READINGS)]
    assert "3 readings" in got["text"]


@pytest.mark.parametrize(("question", "count"), [("last 2 BPs", 2), ("last three blood pressures", 3)])
def test_the_last_n_values_are_the_most_recent_n(question: str, count: int) -> None:
    got = ask(question)
    assert got["answer"] == [f"{s:g}/{d:g}" for _, s, d in READINGS[-count:]]


def test_the_first_n_values_are_the_earliest_n() -> None:
    got = ask("first 2 weights")
    assert got["answer"] == [kg for _, kg in WEIGHTS[:2]]


def test_a_weight_history_is_the_series_not_a_yes() -> None:
    got = ask("weight history")
    assert got["answer"] == [kg for _, kg in WEIGHTS]


@pytest.mark.parametrize("question", ["last 3 months of weights", "weight in the last 2 years", "latest weight",
                                      "any weight recorded?", "history of hypertension", "how many weights since 2023?",
                                      "family history"])
def test_other_frames_are_not_series(question: str) -> None:
    pq = parse(question, NOW)
    asked = series_asked(pq)
    assert asked is None or asked.limit == 0 and "months" in question  # "last 3 months" is a window, never 3 values


def test_a_series_over_an_empty_window_says_so() -> None:
    got = ask("list her weights since November 2024")
    assert got["status"] == "no-data"
