"""The committed question set: size, coverage, balance, well-formed rows (no shared data needed)."""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from datetime import date, datetime

import pytest

from .helpers import EVALS, committed_questions

CATEGORIES = {"latest_value", "first_value", "value_in_window", "min_max", "average", "count_measurements",
              "count_encounters", "count_other", "existence_positive", "existence_negative", "first_last_time",
              "time_since", "change", "trend", "threshold", "daily_dose", "after_drug", "active_conditions",
              "active_medications", "age", "demographics", "patient_lookup"}
ANSWER_TYPES = {"number", "date", "boolean", "string", "list", "count"}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return committed_questions()


def test_size_and_patients(rows: list[dict]) -> None:
    assert len(rows) >= 450
    assert len({r["patient_id"] for r in rows if r["patient_id"]}) >= 40


def test_every_category_has_25(rows: list[dict]) -> None:
    counts = Counter(r["category"] for r in rows)
    assert set(counts) == CATEGORIES
    assert min(counts.values()) >= 25, counts


def test_booleans_are_both_true_and_false(rows: list[dict]) -> None:
    seen: dict[str, set[bool]] = defaultdict(set)
    for r in rows:
        if r["answer_type"] == "boolean" and r["expected_status"] == "answered":
            seen[r["category"]].add(r["expected"][0])
    for category in ("threshold", "active_conditions", "active_medications", "demographics"):
        assert seen[category] == {True, False}, category
    assert seen["existence_positive"] == {True}
    assert seen["existence_negative"] == {False}


def test_existence_negative_mixes_false_and_no_data(rows: list[dict]) -> None:
    statuses = Counter(r["expected_status"] for r in rows if r["category"] == "existence_negative")
    assert statuses["answered"] >= 10 and statuses["no-data"] >= 5


def test_rows_are_well_formed(rows: list[dict]) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r["answer_type"] in ANSWER_TYPES, r["id"]
        assert r["expected_status"] in {"answered", "no-data"}, r["id"]
        assert datetime.fromisoformat(r["now"].replace("Z", "+00:00")).tzinfo is not None
        assert isinstance(r["expected"], list) and r["question"].strip()
        assert (r["patient_id"] is None) == (r["category"] == "patient_lookup"), r["id"]
        assert r["template"].startswith(r["category"]), r["id"]
        if r["expected_status"] == "no-data":
            assert r["expected"] == [], r["id"]
        elif r["answer_type"] != "list":
            assert len(r["expected"]) == 1, r["id"]
        for value in r["expected"]:
            if r["answer_type"] == "date":
                date.fromisoformat(value)
            elif r["answer_type"] in {"number", "count"}:
                assert isinstance(value, int | float) and not isinstance(value, bool)
            elif r["answer_type"] == "boolean":
                assert isinstance(value, bool)
        for ref in r["gold_refs"]:
            assert ref.count("/") == 1 and ref.split("/")[0][0].isupper(), ref


def test_phrasing_is_varied(rows: list[dict]) -> None:
    variants: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        variants[r["category"]].add(r["template"].rsplit("/", 1)[-1])
    assert all(len(v) >= 3 for v in variants.values()), variants
    text = " ".join(r["question"] for r in rows)
    for word in (" my ", " her ", " his ", "the patient's", "A1c", "SBP", "/20", ", 20", "-0"):
        assert word in text, word


def test_some_questions_use_a_later_now(rows: list[dict]) -> None:
    late = [r for r in rows if r["template"].startswith("value_in_window/latest-empty")]
    assert late and all(r["expected_status"] == "no-data" for r in late)


def test_gold_builder_never_imports_fhirqa() -> None:
    for path in [EVALS / "build_synthea_questions.py", *sorted((EVALS / "synthea_gold").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n == "fhirqa" or n.startswith("fhirqa.") for n in names), path
