"""Tables as lists of parts: an ingest adds parts, rewrites only what it must, and merges small ones."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from fhirqa.store import generation as generation_module
from fhirqa.store.layout import read_manifest
from tests.builders import observation, patient, write_ndjson


def load(db, path, **kwargs):
    return ingest([FileSource([path])], db, **kwargs)


def rows(db, sql):
    return Store(db).query(sql).rows


def patient_bundle(tmp_path, name, count, start=0, value=1.0):
    records = [patient(name)] + [observation(f"{name}-o{i}", name, value=value + i) for i in range(start, count)]
    return write_ndjson(tmp_path / f"{name}-{start}-{value}.ndjson", records)


def test_a_first_load_adopts_its_staged_parts_sorted_by_patient(tmp_path):
    db = tmp_path / "db"
    records = [observation(f"o{i}", f"p{i % 7}", value=float(i)) for i in range(50)] + [patient(f"p{i}") for i in range(7)]
    load(db, write_ndjson(tmp_path / "in.ndjson", records))
    manifest = read_manifest(db)
    for key, keys in (("resources/Observation", ["patient_id", "id"]), ("facts/Observation", ["patient_id"]),
                      ("map/map_observation", ["patient_id", "ref"])):
        for rel in manifest.parts(key):
            table = pq.read_table(db / rel, columns=keys)
            values = list(zip(*(table.column(k).to_pylist() for k in keys), strict=True))
            assert values == sorted(values), key
    assert rows(db, "SELECT count(*) FROM observation") == [(50,)]
    assert not list((db / "tmp").glob("*/*.parquet")) if (db / "tmp").exists() else True


def test_adding_a_patient_adds_parts_and_leaves_stored_ones_untouched(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 5))
    before = read_manifest(db)
    load(db, patient_bundle(tmp_path, "p2", 5))
    after = read_manifest(db)
    for key in ("resources/Observation", "facts/Observation", "map/map_observation", "resources/Patient"):
        assert after.parts(key)[: len(before.parts(key))] == before.parts(key), key
        assert len(after.parts(key)) == len(before.parts(key)) + 1, key
    assert rows(db, "SELECT patient_id, count(*) FROM observation GROUP BY 1 ORDER BY 1") == [("p1", 5), ("p2", 5)]


def test_a_replaced_resource_rewrites_only_the_part_that_held_it(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 5))
    load(db, patient_bundle(tmp_path, "p2", 5))
    before = read_manifest(db)
    changed = observation("p1-o2", "p1", value=-7.0)
    report = load(db, write_ndjson(tmp_path / "change.ndjson", [changed]))
    assert report.written == {"Observation": 1} and report.removed == {"Observation": 1}
    after = read_manifest(db)
    p1_part, p2_part = before.parts("resources/Observation")
    assert p2_part in after.parts("resources/Observation")  # p2's part: not read, not rewritten
    assert p1_part not in after.parts("resources/Observation")
    assert rows(db, "SELECT value FROM observation WHERE ref = 'Observation/p1-o2'") == [(-7.0,)]
    assert rows(db, "SELECT count(*) FROM observation") == [(10,)]
    assert rows(db, "SELECT count(*) FROM resources WHERE id = 'p1-o2'") == [(1,)]
    assert rows(db, "SELECT count(*) FROM facts WHERE resource_id = 'p1-o2' AND path = 'valueQuantity.value'") == [(1,)]


def test_a_deletion_that_empties_a_part_drops_it(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 1))
    load(db, patient_bundle(tmp_path, "p2", 1))
    deletion = {"resourceType": "Bundle", "type": "transaction",
                "entry": [{"request": {"method": "DELETE", "url": "Observation/p1-o0"}}]}
    (tmp_path / "delete.json").write_text(json.dumps(deletion))
    load(db, tmp_path / "delete.json")
    manifest = read_manifest(db)
    assert len(manifest.parts("resources/Observation")) == 1
    assert rows(db, "SELECT ref FROM observation") == [("Observation/p2-o0",)]


def test_two_copies_of_one_resource_in_one_ingest_keep_the_later_one(tmp_path):
    db = tmp_path / "db"
    records = [patient("p1"), observation("o1", "p1", value=1.0), observation("o2", "p1", value=2.0),
               observation("o1", "p1", value=3.0)]
    report = load(db, write_ndjson(tmp_path / "twice.ndjson", records))
    assert report.written == {"Patient": 1, "Observation": 2}
    assert rows(db, "SELECT ref, value FROM observation ORDER BY ref") == [("Observation/o1", 3.0), ("Observation/o2", 2.0)]
    assert rows(db, "SELECT count(*) FROM facts WHERE resource_id = 'o1' AND path = 'valueQuantity.value'") == [(1,)]


@pytest.mark.parametrize("workers", [1, 2])
def test_many_small_ingests_merge_their_smallest_parts(tmp_path, monkeypatch, workers):
    monkeypatch.setattr(generation_module, "MAX_PARTS", 4)
    db = tmp_path / "db"
    for number in range(9):
        load(db, patient_bundle(tmp_path, f"p{number}", 3), workers=workers)
        assert len(read_manifest(db).parts("facts/Observation")) <= 4
    assert rows(db, "SELECT count(*) FROM observation") == [(27,)]
    assert rows(db, "SELECT count(DISTINCT patient_id) FROM facts") == [(9,)]
    for rel in read_manifest(db).parts("facts/Observation"):
        patients = pq.read_table(db / rel, columns=["patient_id"]).column("patient_id").to_pylist()
        assert patients == sorted(patients)


def test_a_store_written_before_tables_had_parts_is_read_and_extended(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 3))
    manifest = json.loads((db / "manifest.json").read_text())
    assert all(len(parts) == 1 for parts in manifest["tables"].values() if isinstance(parts, list))
    manifest["format"] = 1  # as fhirqa wrote it before parts: one file name per table
    manifest["tables"] = {key: v[0] if isinstance(v, list) else v for key, v in manifest["tables"].items()}
    (db / "manifest.json").write_text(json.dumps(manifest))
    assert rows(db, "SELECT count(*) FROM observation") == [(3,)]
    load(db, patient_bundle(tmp_path, "p1", 4, start=2, value=10.0))  # replaces p1-o2, adds p1-o3
    assert rows(db, "SELECT ref, value FROM observation ORDER BY ref") == [
        ("Observation/p1-o0", 1.0), ("Observation/p1-o1", 2.0), ("Observation/p1-o2", 12.0), ("Observation/p1-o3", 13.0)]
    assert read_manifest(db).generation == 2


SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"


def _view_rows(db) -> dict[str, list]:
    con = Store(db).connect()
    return {name: sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr) for name in Store(db).view_names()}


def test_views_built_patient_by_patient_equal_views_built_at_once(tmp_path):
    at_once, one_by_one = tmp_path / "at-once", tmp_path / "one-by-one"
    load(at_once, SAMPLE)
    for bundle in sorted(SAMPLE.glob("*.json")):
        load(one_by_one, bundle)
    assert len(read_manifest(one_by_one).parts("view/observation")) > 1  # made patient by patient, not rebuilt
    assert _view_rows(one_by_one) == _view_rows(at_once)


def test_a_new_patient_adds_a_view_part_and_keeps_the_stored_ones(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 3))
    before = read_manifest(db).parts("view/observation")
    load(db, patient_bundle(tmp_path, "p2", 2))
    after = read_manifest(db).parts("view/observation")
    assert after[: len(before)] == before and len(after) == len(before) + 1
    changed = observation("p1-o1", "p1", value=-3.0)
    load(db, write_ndjson(tmp_path / "change.ndjson", [changed]))
    parts = read_manifest(db).parts("view/observation")
    assert before[0] not in parts and after[-1] in parts  # p1's part rewritten, p2's kept
    assert rows(db, "SELECT ref, value FROM observation ORDER BY ref") == [
        ("Observation/p1-o0", 1.0), ("Observation/p1-o1", -3.0), ("Observation/p1-o2", 3.0),
        ("Observation/p2-o0", 1.0), ("Observation/p2-o1", 2.0)]


def test_a_changed_shared_medication_rebuilds_the_medication_view_whole(tmp_path):
    db = tmp_path / "db"

    def order(oid, pid):
        return {"resourceType": "MedicationRequest", "id": oid, "status": "active", "intent": "order",
                "subject": {"reference": f"Patient/{pid}"}, "authoredOn": "2024-02-01",
                "medicationReference": {"reference": "Medication/m1"}}

    def medication(name):
        return {"resourceType": "Medication", "id": "m1", "code": {"text": name}}

    load(db, write_ndjson(tmp_path / "a.ndjson", [patient("p1"), medication("Lisinopril 10 MG"), order("r1", "p1")]))
    load(db, write_ndjson(tmp_path / "b.ndjson", [patient("p2"), order("r2", "p2")]))
    load(db, write_ndjson(tmp_path / "c.ndjson", [medication("Lisinopril 20 MG")]))  # belongs to no patient
    assert len(read_manifest(db).parts("view/medication")) == 1
    assert rows(db, "SELECT patient_id, medication_name FROM medication ORDER BY 1") == [
        ("p1", "Lisinopril 20 MG"), ("p2", "Lisinopril 20 MG")]


def test_files_no_generation_references_are_collected(tmp_path):
    db = tmp_path / "db"
    load(db, patient_bundle(tmp_path, "p1", 3))
    load(db, patient_bundle(tmp_path, "p2", 2))
    load(db, write_ndjson(tmp_path / "change.ndjson", [observation("p1-o1", "p1", value=-3.0)]))  # rewrites parts
    manifest = read_manifest(db)
    on_disk = {str(p.relative_to(db)) for p in (db / "gen").rglob("*.parquet")}
    assert on_disk == set(manifest.all_files())
    assert not (db / "tmp").exists() or not any((db / "tmp").iterdir())
