"""A store built before fhirqa had a device view (no Device map, no device.sql) gets one on its next ingest; until
then its questions read the missing view as empty.

Devices ingested then were kept as resources; the upgrade runs the new Device map over them and builds the view, even
when the next ingest brings nothing but an unrelated Observation.
"""

from __future__ import annotations

import importlib
import shutil

from fhirqa.project import data_dir
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from fhirqa.store.mappings import load_mappings
from tests.builders import observation, patient, write_ndjson

ingest_module = importlib.import_module("fhirqa.store.ingest")  # the module (the package exports the function)


def wheelchair(did: str, pid: str) -> dict:
    return {"resourceType": "Device", "id": did, "status": "active", "patient": {"reference": f"Patient/{pid}"},
            "type": {"coding": [{"system": "http://snomed.info/sct", "code": "228869008",
                                 "display": "Manual wheelchair (physical object)"}]}}


def test_devices_stored_before_the_device_view_existed_reach_it_on_the_next_ingest(tmp_path, monkeypatch):
    db = tmp_path / "db"
    old_views = tmp_path / "views"  # an older fhirqa: no Device map, no device view
    shutil.copytree(data_dir("views"), old_views)
    (old_views / "device.sql").unlink()
    older_maps = {t: m for t, m in load_mappings().items() if t != "Device"}
    monkeypatch.setattr(ingest_module, "load_mappings", lambda: older_maps)
    monkeypatch.setattr(ingest_module, "data_dir", lambda name: old_views if name == "views" else data_dir(name))
    ingest([FileSource([write_ndjson(tmp_path / "a.ndjson", [patient("p1"), wheelchair("d1", "p1")])])], db)
    assert "device" not in Store(db).view_names()
    monkeypatch.undo()  # upgraded

    # before the next ingest the store has no device view: a question reads it as holding no devices, never an error
    from fhirqa.agent.patient_rows import StorePatientRows

    assert StorePatientRows(Store(db), "p1").rows("device") == []

    report = ingest([FileSource([write_ndjson(tmp_path / "b.ndjson", [observation("o1", "p1")])])], db)

    rows = Store(db).query("SELECT patient_id, ref, name, code FROM device").rows
    assert rows == [("p1", "Device/d1", "Manual wheelchair (physical object)", "228869008")]
    assert any("map_device: made again from 1 stored resources" in note for note in report.notes)
