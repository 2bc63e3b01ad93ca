"""The store: incremental, idempotent, atomic ingest; quarantine; safe queries."""

from __future__ import annotations

import json

import pytest

from fhirqa.errors import IngestAborted, StoreError
from fhirqa.sources import FileSource
from fhirqa.store import QueryError, Store, ingest
from fhirqa.store import generation as generation_module
from fhirqa.store.layout import writer_lock
from tests.builders import condition, observation, patient, transaction, write_json, write_ndjson


def load(db, *paths, **kwargs):
    return ingest([FileSource(paths)], db, **kwargs)


def rows(db, sql, params=None):
    return Store(db).query(sql, params).rows


@pytest.fixture
def bundle(tmp_path):
    return write_json(
        tmp_path / "in" / "b.json",
        transaction(patient("p1"), observation("o1", "p1", value=4.1), observation("o2", "p1", value=5.6),
                    condition("c1", "p1")),
    )


def test_ingest_fills_views_facts_and_raw_resources(db, bundle):
    report = load(db, bundle)
    assert report.read == {"Patient": 1, "Observation": 2, "Condition": 1} and not report.rejected
    assert rows(db, "SELECT ref, value FROM observation ORDER BY ref") == [("Observation/o1", 4.1), ("Observation/o2", 5.6)]
    assert rows(db, "SELECT count(*) FROM resources") == [(4,)]
    assert rows(db, "SELECT number FROM facts WHERE resource_id = 'o2' AND path = 'valueQuantity.value'") == [(5.6,)]
    assert rows(db, "SELECT DISTINCT patient_id FROM facts") == [("p1",)]


def test_the_same_input_twice_changes_nothing(db, bundle):
    first = load(db, bundle)
    manifest = (db / "manifest.json").read_bytes()
    second = load(db, bundle)
    assert first.changed and not second.changed
    assert (db / "manifest.json").read_bytes() == manifest


def test_a_newer_version_replaces_and_an_older_one_is_ignored(db, tmp_path):
    def version(v, value):
        return observation("o1", meta={"versionId": str(v)}, value=value)

    load(db, write_json(tmp_path / "v2.json", version(2, 2.0)))
    load(db, write_json(tmp_path / "v3.json", version(3, 3.0)))
    load(db, write_json(tmp_path / "v1.json", version(1, 1.0)))
    assert rows(db, "SELECT value FROM observation") == [(3.0,)]
    assert rows(db, "SELECT count(*) FROM facts WHERE path = 'valueQuantity.value'") == [(1,)]


def test_a_bulk_deleted_entry_removes_the_resource_everywhere(db, bundle, tmp_path):
    load(db, bundle)
    deleted = {"resourceType": "Bundle", "type": "transaction",
               "entry": [{"request": {"method": "DELETE", "url": "Observation/o1"}}]}
    report = load(db, write_ndjson(tmp_path / "deleted" / "Observation.ndjson", [deleted]))
    assert report.removed == {"Observation": 1}
    assert rows(db, "SELECT ref FROM observation") == [("Observation/o2",)]
    assert rows(db, "SELECT count(*) FROM facts WHERE resource_id = 'o1'") == [(0,)]
    assert rows(db, "SELECT count(*) FROM map_observation WHERE ref = 'Observation/o1'") == [(0,)]


def test_bad_records_are_quarantined_and_good_ones_kept(db, tmp_path):
    path = write_ndjson(tmp_path / "mixed.ndjson", [
        observation("o1"),
        "{broken",
        {"hello": "world"},
        {"resourceType": "Spaceship", "id": "x"},
        {"resourceType": "Observation"},
        observation("o2"),
    ])
    report = load(db, path)
    assert report.read == {"Observation": 2}
    reasons = [(r.origin, r.reason.split(":")[0]) for r in report.rejected]
    assert reasons == [
        (f"{path}:2", "malformed JSON"),
        (f"{path}:3", "not a FHIR resource"),
        (f"{path}:4", "unknown resourceType 'Spaceship'"),
        (f"{path}:5", "Observation has no id"),
    ]
    quarantined = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
    assert [q["origin"] for q in quarantined] == [r.origin for r in report.rejected]
    assert quarantined[0]["content"] == "{broken" and quarantined[1]["content"] == {"hello": "world"}
    assert rows(db, "SELECT count(*) FROM observation") == [(2,)]


def test_strict_aborts_and_stores_nothing(db, bundle, tmp_path):
    load(db, bundle)
    bad = write_ndjson(tmp_path / "bad.ndjson", [observation("o9"), "{broken"])
    with pytest.raises(IngestAborted, match=r"bad.ndjson:2: malformed JSON"):
        load(db, bad, strict=True)
    assert rows(db, "SELECT count(*) FROM observation") == [(2,)]


def test_a_crash_mid_commit_leaves_the_previous_state_readable(db, bundle, tmp_path, monkeypatch):
    load(db, bundle)
    before = Store(db).counts()

    def crash(*args, **kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(generation_module, "_build_views", crash)
    with pytest.raises(RuntimeError):
        load(db, write_json(tmp_path / "more.json", observation("o3")))
    assert Store(db).counts() == before
    monkeypatch.undo()
    load(db, write_json(tmp_path / "more.json", observation("o3")))
    assert Store(db).counts()["observation"] == before["observation"] + 1
    assert not any((db / "tmp").glob("*")) if (db / "tmp").exists() else True


def test_only_one_writer_at_a_time(db, bundle):
    with writer_lock(db), pytest.raises(StoreError, match="another fhirqa process"):
        load(db, bundle)


def test_queries_are_read_only_sandboxed_capped_and_time_limited(db, bundle, tmp_path):
    load(db, bundle)
    store = Store(db)
    with pytest.raises(QueryError, match="only SELECT"):
        store.query("DELETE FROM observation")
    with pytest.raises(QueryError, match="only SELECT"):
        store.query(f"COPY (SELECT 1) TO '{db}/x.csv'")
    with pytest.raises(QueryError, match="exactly one"):
        store.query("SELECT 1; SELECT 2")
    outside = write_json(tmp_path / "secret.json", {"a": 1})
    with pytest.raises(QueryError, match="disabled|Permission"):
        store.query(f"SELECT * FROM read_json('{outside}')")
    with pytest.raises(QueryError, match="time limit"):
        store.query("SELECT count(*) FROM range(10000000000) a", timeout_s=0.2)
    capped = store.query("SELECT * FROM range(50)", limit=10)
    assert capped.truncated and len(capped.rows) == 10 and "first 10 rows" in capped.notes[0]
    assert store.query("SELECT value FROM observation WHERE ref = ?", ["Observation/o2"]).rows == [(5.6,)]
