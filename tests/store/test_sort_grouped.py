"""Sorting merged rows: runs of equal keys are reordered whole, with the same result as a full stable sort."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from fhirqa.store.generation import sort_grouped


def _full_sort(table: pa.Table, keys: list[str]) -> pa.Table:
    return table.sort_by([(k, "ascending") for k in keys])


def _grouped(seed: int, patients: int, rows: int) -> pa.Table:
    """Rows arriving one patient at a time (as bundles do), some without a patient, in no patient order."""
    rng = random.Random(seed)
    names = [f"p{rng.randrange(10_000):05d}" for _ in range(patients)] + [None]
    patient_ids: list[str | None] = []
    while len(patient_ids) < rows:
        patient_ids += [rng.choice(names)] * rng.randrange(1, 40)
    patient_ids = patient_ids[:rows]
    return pa.table({
        "patient_id": patient_ids,
        "position": list(range(rows)),  # shows whether the sort kept arrival order within a patient
        "value": [rng.choice(["a", "b", None]) for _ in range(rows)],
    })


@pytest.mark.parametrize("seed", range(5))
def test_grouped_rows_come_out_as_a_stable_sort_puts_them(seed):
    table = _grouped(seed, patients=30, rows=3_000)
    result = sort_grouped(table, ["patient_id"])
    assert result.equals(_full_sort(table, ["patient_id"]))
    assert result["patient_id"].num_chunks == 1  # one chunk: the Parquet writer is slow on many small ones


def test_nulls_sort_last():
    table = pa.table({"patient_id": ["b"] * 20 + [None] * 20 + ["a"] * 20, "n": list(range(60))})
    result = sort_grouped(table, ["patient_id"])
    assert result["patient_id"].to_pylist() == ["a"] * 20 + ["b"] * 20 + [None] * 20
    assert result["n"].to_pylist() == [*range(40, 60), *range(0, 20), *range(20, 40)]


def test_ungrouped_keys_are_sorted_in_full():
    rng = random.Random(7)
    table = pa.table({
        "patient_id": [rng.choice(["p1", "p2", None]) for _ in range(500)],
        "id": [f"r{rng.randrange(10**6)}" for _ in range(500)],
    })
    assert sort_grouped(table, ["patient_id", "id"]).equals(_full_sort(table, ["patient_id", "id"]))


def test_several_keys_grouped_together():
    # runs of (patient, kind) pairs: a patient's rows of one kind arrive together
    pairs = [("p2", "y"), ("p1", "x"), ("p2", "x"), (None, "x"), ("p1", "y"), ("p2", "x")]
    rows = [pair for pair in pairs for _ in range(50)]
    table = pa.table({
        "patient_id": [p for p, _ in rows], "kind": [k for _, k in rows], "n": list(range(len(rows))),
    })
    keys = ["patient_id", "kind"]
    assert sort_grouped(table, keys).equals(_full_sort(table, keys))


def test_rows_already_in_order_are_returned_as_they_are():
    table = _full_sort(_grouped(1, patients=20, rows=1_000), ["patient_id"])
    assert sort_grouped(table, ["patient_id"]) is table


def test_tiny_and_empty_tables():
    empty = pa.table({"patient_id": pa.array([], pa.string())})
    assert sort_grouped(empty, ["patient_id"]).num_rows == 0
    one = pa.table({"patient_id": ["p"]})
    assert sort_grouped(one, ["patient_id"]).equals(one)
