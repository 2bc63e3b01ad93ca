"""Writing a merged table in key ranges gives the same file content as writing it in one piece."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fhirqa.store import generation
from fhirqa.store.generation import _Size, _write, connect_scratch


def _rows(seed: int) -> pa.Table:
    """Facts-like rows: a run per patient (one patient much larger than the rest), some without a patient."""
    rng = random.Random(seed)
    patients = [f"p{i:03d}" for i in range(40)]
    rng.shuffle(patients)
    patient_ids: list[str | None] = []
    for patient_id in [*patients, None, "p007"]:
        patient_ids += [patient_id] * (600 if patient_id == "p013" else rng.randrange(1, 60))
    return pa.table({
        "patient_id": patient_ids,
        "n": list(range(len(patient_ids))),
        "value": [rng.choice(["a", "b", None]) for _ in patient_ids],
    })


@pytest.mark.parametrize("seed", range(3))
def test_ranges_write_the_rows_one_piece_writes(tmp_path, monkeypatch, seed):
    con = connect_scratch(tmp_path)
    con.register("input_rows", _rows(seed))
    size = _Size(rows=_rows(seed).num_rows, bytes=_rows(seed).num_rows * 100)
    whole = tmp_path / "whole.parquet"
    assert _write(con, "SELECT * FROM input_rows", "patient_id", whole, size) == size.rows
    monkeypatch.setattr(generation, "SORT_RANGE_BYTES", size.bytes // 9)  # about nine ranges
    ranged = tmp_path / "ranged.parquet"
    assert _write(con, "SELECT * FROM input_rows", "patient_id", ranged, size) == size.rows
    assert pq.read_metadata(ranged).num_row_groups >= 5  # each range ends a row group
    assert pq.read_table(ranged).equals(pq.read_table(whole))
    patient_ids = pq.read_table(ranged)["patient_id"].to_pylist()
    assert patient_ids[-5:] == [None] * 5  # rows without a patient last
    con.close()


def test_one_key_with_more_rows_than_a_range_stays_in_one_range(tmp_path, monkeypatch):
    con = connect_scratch(tmp_path)
    table = pa.table({"patient_id": ["a"] * 10 + ["b"] * 1000 + ["c"] * 10, "n": list(range(1020))})
    con.register("input_rows", table)
    monkeypatch.setattr(generation, "SORT_RANGE_BYTES", 1020 * 10)  # ten ranges wanted, "b" alone fills 98%
    out = tmp_path / "out.parquet"
    assert _write(con, "SELECT * FROM input_rows", "patient_id", out, _Size(rows=1020, bytes=1020 * 100)) == 1020
    assert pq.read_table(out).equals(table)
    con.close()
