"""A canonical map that is new or changed since the store was built is re-run over the stored resources."""

from __future__ import annotations

import importlib
import json
import shutil
from dataclasses import replace

from fhirqa.project import data_dir
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from fhirqa.store.layout import read_manifest
from fhirqa.store.mappings import Mapping, load_mappings
from fhirqa.viewdef import compile_view
from tests.builders import observation, patient, write_ndjson

ingest_module = importlib.import_module("fhirqa.store.ingest")  # the module (the package exports the function)


def load(db, path):
    return ingest([FileSource([path])], db)


def rows(db, sql):
    return Store(db).query(sql).rows


def care_plan(cid: str, pid: str) -> dict:
    return {"resourceType": "CarePlan", "id": cid, "status": "active", "intent": "plan",
            "subject": {"reference": f"Patient/{pid}"}, "category": [{"text": "Diabetes self management plan"}],
            "period": {"start": "2024-01-05"}}


def without(rtype: str) -> dict[str, Mapping]:
    return {t: m for t, m in load_mappings().items() if t != rtype}


def test_a_map_added_by_an_upgrade_is_run_over_the_stored_resources(tmp_path, monkeypatch):
    db = tmp_path / "db"
    old_views = tmp_path / "views"  # an older fhirqa: no CarePlan map, no care_plan view
    shutil.copytree(data_dir("views"), old_views)
    (old_views / "care_plan.sql").unlink()
    monkeypatch.setattr(ingest_module, "load_mappings", lambda: without("CarePlan"))
    monkeypatch.setattr(ingest_module, "data_dir", lambda name: old_views if name == "views" else data_dir(name))
    load(db, write_ndjson(tmp_path / "a.ndjson", [patient("p1"), care_plan("cp1", "p1"), care_plan("cp2", "p1")]))
    assert "care_plan" not in Store(db).view_names()
    monkeypatch.undo()  # upgraded: the CarePlan map exists now; the next ingest adds an unrelated Observation
    report = load(db, write_ndjson(tmp_path / "b.ndjson", [observation("o1", "p1")]))
    assert rows(db, "SELECT ref FROM care_plan ORDER BY ref") == [("CarePlan/cp1",), ("CarePlan/cp2",)]
    assert any("map_care_plan: made again from 2 stored resources" in note for note in report.notes)
    assert rows(db, "SELECT count(*) FROM observation") == [(1,)]
    again = load(db, write_ndjson(tmp_path / "b.ndjson", [observation("o1", "p1")]))
    assert not again.changed and not any("made again" in note for note in again.notes)  # once, not every time


def test_an_edited_map_remakes_its_table_even_when_the_input_changes_nothing(tmp_path, monkeypatch):
    db = tmp_path / "db"
    source = write_ndjson(tmp_path / "a.ndjson", [patient("p1"), observation("o1", "p1", value=4.2)])
    load(db, source)
    mappings = load_mappings()
    original = mappings["Observation"]
    edited = json.loads(json.dumps(original.definition))
    edited["select"][0]["column"].append({"name": "upgrade_marker", "path": "'v2'", "type": "string"})
    changed = replace(original, view=compile_view(edited), definition=edited)
    monkeypatch.setattr(ingest_module, "load_mappings", lambda: {**mappings, "Observation": changed})
    before = read_manifest(db)
    report = load(db, source)  # byte-identical input: no resource changes, the map does
    after = read_manifest(db)
    assert not report.changed and after.generation == before.generation + 1
    assert after.maps["map_observation"] == changed.digest != before.maps["map_observation"]
    assert after.parts("resources/Observation") == before.parts("resources/Observation")  # resources untouched
    con = Store(db).connect()
    assert con.execute("SELECT ref, upgrade_marker FROM map_observation").fetchall() == [("Observation/o1", "v2")]
    assert rows(db, "SELECT value FROM observation") == [(4.2,)]


def test_a_store_without_map_digests_is_remapped_once(tmp_path):
    db = tmp_path / "db"
    source = write_ndjson(tmp_path / "a.ndjson", [patient("p1"), observation("o1", "p1", value=4.2)])
    load(db, source)
    manifest = json.loads((db / "manifest.json").read_text())
    del manifest["maps"]  # written before digests were kept
    (db / "manifest.json").write_text(json.dumps(manifest))
    report = load(db, source)
    assert {"map_observation", "map_patient"} <= set(read_manifest(db).maps)
    assert any("map_observation: made again from 1 stored resources" in n for n in report.notes)
    assert rows(db, "SELECT value FROM observation") == [(4.2,)]
    assert not load(db, source).notes


def test_a_new_runner_revision_remakes_every_map_once(tmp_path, monkeypatch):
    """A fix in the runner changes rows without any map changing: the revision in the digests makes stores re-run."""
    db = tmp_path / "db"
    load(db, write_ndjson(tmp_path / "a.ndjson", [patient("p1"), observation("o1", "p1", value=4.2)]))
    mappings_module = importlib.import_module("fhirqa.store.mappings")
    monkeypatch.setattr(mappings_module, "ROWS_REVISION", mappings_module.ROWS_REVISION + 1)
    report = load(db, write_ndjson(tmp_path / "b.ndjson", [observation("o2", "p1", value=4.4)]))
    remade = [note for note in report.notes if "made again" in note]
    assert any("map_observation: made again from 1 stored resources" in note for note in remade)
    assert any("map_patient" in note for note in remade)
    assert rows(db, "SELECT count(*) FROM observation") == [(2,)]
    again = load(db, write_ndjson(tmp_path / "b.ndjson", [observation("o2", "p1", value=4.4)]))
    assert not any("made again" in note for note in again.notes)
