"""Reading files in several processes gives the store one process gives: same rows, same winners, same reports."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from fhirqa.errors import IngestAborted
from fhirqa.sources import FileSource
from fhirqa.store import ingest
from fhirqa.store.layout import read_manifest
from fhirqa.store.parallel import choose_workers, deal
from tests.builders import observation, patient, transaction, write_json, write_ndjson

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sample"


def _contents(db: Path) -> dict[str, list[tuple]]:
    """Every table of the current generation, rows sorted (file layout aside)."""
    con = duckdb.connect()
    out = {}
    manifest = read_manifest(db)
    for key in sorted(manifest.tables):
        listing = ", ".join(f"'{db / rel}'" for rel in manifest.parts(key))
        rows = con.execute(f"SELECT * FROM read_parquet([{listing}], union_by_name = true)").fetchall()
        out[key] = sorted(rows, key=repr)
    return out


def test_two_workers_build_the_same_store_as_one(tmp_path):
    one = ingest([FileSource([EXAMPLES])], tmp_path / "one", workers=1)
    two = ingest([FileSource([EXAMPLES])], tmp_path / "two", workers=2)
    assert (one.workers, two.workers) == (1, 2)
    assert two.read == one.read and two.written == one.written
    assert two.skipped_files == one.skipped_files
    assert _contents(tmp_path / "two") == _contents(tmp_path / "one")


def test_the_later_file_wins_as_it_does_in_one_process(tmp_path):
    # The same Observation in the first and the last file, with another value: input order decides.
    files = tmp_path / "in"
    write_json(files / "a.json", transaction(patient("p1"), observation("o1", value=3.1)))
    write_json(files / "b.json", transaction(patient("p2", birthDate="1980-01-01")))
    write_json(files / "c.json", transaction(observation("o1", value=5.9)))
    for workers in (1, 3):
        ingest([FileSource([files])], tmp_path / f"db{workers}", workers=workers)
    assert _contents(tmp_path / "db3") == _contents(tmp_path / "db1")
    con = duckdb.connect()
    view = read_manifest(tmp_path / "db3").parts("view/observation")[0]
    assert con.execute(f"SELECT value FROM read_parquet('{tmp_path / 'db3' / view}')").fetchall() == [(5.9,)]


def test_bad_records_from_every_worker_are_reported_in_input_order(tmp_path):
    files = tmp_path / "in"
    write_ndjson(files / "a.ndjson", [patient("p1"), {"resourceType": "Nope", "id": "x"}])
    write_ndjson(files / "b.ndjson", [observation("o1"), {"id": "no-type"}])
    (files / "c.ndjson").write_text('{"resourceType": "Patient", "id": "p9"}\n{broken\n')
    report = ingest([FileSource([files])], tmp_path / "db", workers=3)
    assert [r.origin for r in report.rejected] == [f"{files / 'a.ndjson'}:2", f"{files / 'b.ndjson'}:2",
                                                   f"{files / 'c.ndjson'}:2"]
    quarantined = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
    assert [q["origin"] for q in quarantined] == [r.origin for r in report.rejected]
    assert report.read == {"Patient": 2, "Observation": 1}


def test_strict_aborts_every_worker_and_stores_nothing(tmp_path):
    files = tmp_path / "in"
    write_ndjson(files / "a.ndjson", [patient("p1")])
    write_ndjson(files / "b.ndjson", [{"resourceType": "Nope", "id": "x"}])
    with pytest.raises(IngestAborted, match="unknown resourceType"):
        ingest([FileSource([files])], tmp_path / "db", workers=2, strict=True)
    assert read_manifest(tmp_path / "db").generation == 0


def test_files_are_dealt_by_size_and_read_in_input_order(tmp_path):
    sizes = [50, 10, 40, 30, 20]
    paths = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"{i}.json"
        path.write_bytes(b" " * size)
        paths.append(path)
    groups = deal(paths, 2)
    assert sorted(n for g in groups for n, _ in g) == [0, 1, 2, 3, 4]
    assert all(g == sorted(g) for g in groups)
    loads = sorted(sum(sizes[n] for n, _ in g) for g in groups)
    assert loads == [70, 80]


def test_small_input_or_one_core_reads_in_one_process(tmp_path, monkeypatch):
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        path.write_text("{}")
    monkeypatch.setattr("fhirqa.store.parallel.cores", lambda: 8)
    assert choose_workers(None, paths) == 1  # a few bytes: a second process costs more than it saves
    assert choose_workers(3, paths) == 2  # never more workers than files
    monkeypatch.setattr("fhirqa.store.parallel.MIN_PARALLEL_BYTES", 1)
    assert choose_workers(None, paths) == 2
    monkeypatch.setattr("fhirqa.store.parallel.cores", lambda: 1)
    assert choose_workers(None, paths) == 1
