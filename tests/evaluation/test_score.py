"""The scorer's rules, one test each (see fhirqa/evaluation/score.py)."""

from __future__ import annotations

from typing import Any

from fhirqa.evaluation.score import ABS_EPSILON, ScoreResult, normalize_text, score


def gold(answer_type: str, expected: list[Any], status: str = "answered", tolerance: float = 0.0) -> dict:
    return {"answer_type": answer_type, "expected": expected, "expected_status": status, "tolerance": tolerance}


def answer(values: list[Any], status: str = "answered") -> dict:
    return {"answer": values, "status": status, "unit": None, "text": "", "evidence": []}


def test_status_must_match_answered() -> None:
    result = score(gold("number", [5.0]), answer([], "no-data"))
    assert result == ScoreResult(False, "status 'no-data', expected 'answered'")


def test_no_data_gold_needs_no_data_answer() -> None:
    assert not score(gold("number", [], "no-data"), answer([4.2])).correct
    assert score(gold("number", [], "no-data"), answer([], "no-data")).correct


def test_no_data_answer_values_are_ignored() -> None:
    assert score(gold("number", [], "no-data"), answer([1.0], "no-data")).correct


def test_ambiguous_or_error_status_is_wrong() -> None:
    assert not score(gold("string", ["stable"]), answer(["stable"], "ambiguous")).correct
    assert not score(gold("string", ["stable"]), answer([], "error")).correct


def test_number_relative_tolerance() -> None:
    g = gold("number", [140.0], tolerance=0.01)
    assert score(g, answer([141.3])).correct
    assert not score(g, answer([141.5])).correct


def test_number_absolute_epsilon_for_zero() -> None:
    g = gold("number", [0.0], tolerance=0.02)
    assert score(g, answer([ABS_EPSILON / 2])).correct
    assert not score(g, answer([0.01])).correct


def test_number_accepts_numeric_string_not_words() -> None:
    g = gold("number", [5.4], tolerance=0.01)
    assert score(g, answer(["5.4"])).correct
    assert not score(g, answer(["about five"])).correct
    assert not score(g, answer([True])).correct


def test_scalar_needs_exactly_one_value() -> None:
    g = gold("number", [5.4], tolerance=0.01)
    assert not score(g, answer([5.4, 6.1])).correct
    assert not score(g, answer([])).correct


def test_scalar_answer_not_in_a_list_is_accepted() -> None:
    assert score(gold("count", [3]), {"answer": 3, "status": "answered"}).correct


def test_count_is_exact() -> None:
    g = gold("count", [3])
    assert score(g, answer([3])).correct
    assert score(g, answer([3.0])).correct
    assert score(g, answer(["3"])).correct
    assert not score(g, answer([3.2])).correct
    assert not score(g, answer([4])).correct


def test_date_equal() -> None:
    assert score(gold("date", ["2019-03-04"]), answer(["2019-03-04"])).correct
    assert not score(gold("date", ["2019-03-04"]), answer(["2019-03-05"])).correct


def test_date_accepts_datetime_utc_or_local_date() -> None:
    g = gold("date", ["2019-03-04"])
    assert score(g, answer(["2019-03-04T05:29:14+00:00"])).correct
    assert score(g, answer(["2019-03-03T22:00:00-05:00"])).correct  # UTC date is 2019-03-04
    assert score(g, answer(["2019-03-04T22:00:00-05:00"])).correct  # local date is 2019-03-04
    assert not score(g, answer(["2019-03-06T12:00:00Z"])).correct


def test_date_tolerance_in_days() -> None:
    g = gold("date", ["2019-03-04"], tolerance=2)
    assert score(g, answer(["2019-03-06"])).correct
    assert not score(g, answer(["2019-03-07"])).correct


def test_date_unparsable_is_wrong() -> None:
    assert not score(gold("date", ["2019-03-04"]), answer(["March 4th"])).correct


def test_boolean_exact() -> None:
    assert score(gold("boolean", [True]), answer([True])).correct
    assert not score(gold("boolean", [True]), answer([False])).correct
    assert not score(gold("boolean", [False]), answer([0])).correct


def test_boolean_words() -> None:
    assert score(gold("boolean", [False]), answer(["No"])).correct
    assert score(gold("boolean", [True]), answer(["yes"])).correct


def test_string_normalised() -> None:
    assert score(gold("string", ["increasing"]), answer(["  Increasing. "])).correct
    assert normalize_text("Mass/\u200bvolume") == normalize_text("mass volume")


def test_string_no_containment_outside_lists() -> None:
    assert not score(gold("string", ["male"]), answer(["female"])).correct
    assert not score(gold("string", ["stable"]), answer(["not stable"])).correct


def test_string_reference_matches_id() -> None:
    assert score(gold("string", ["43b6ae50-2cca"]), answer(["Patient/43b6ae50-2cca"])).correct


def test_list_is_a_set() -> None:
    g = gold("list", ["Prediabetes", "Anemia (disorder)"])
    assert score(g, answer(["anemia (disorder)", "prediabetes"])).correct


def test_list_missing_element_is_wrong() -> None:
    result = score(gold("list", ["Prediabetes", "Anemia (disorder)"]), answer(["Prediabetes"]))
    assert not result.correct and "missing 1 of 2" in result.reason


def test_list_names_match_by_containment() -> None:
    g = gold("list", ["Hydrochlorothiazide 25 MG"])
    assert score(g, answer(["hydrochlorothiazide 25 mg oral tablet"])).correct
    assert not score(gold("list", ["Diabetes"]), answer(["Prediabetes"])).correct


def test_list_extra_allowance() -> None:
    short = gold("list", ["A one", "B two"])
    assert not score(short, answer(["A one", "B two", "C three"])).correct
    long_ = gold("list", [f"item {i}" for i in range(10)])
    assert score(long_, answer([f"item {i}" for i in range(10)] + ["other thing"])).correct
    assert not score(long_, answer([f"item {i}" for i in range(10)] + ["other thing", "more stuff"])).correct


def test_list_empty_expected_needs_empty_answer() -> None:
    assert score(gold("list", []), answer([])).correct
    assert not score(gold("list", []), answer(["Aspirin"])).correct


def test_unknown_answer_type() -> None:
    assert not score(gold("colour", ["red"]), answer(["red"])).correct
