"""Why a dose was not given (MedicationAdministration.statusReason) reaches the medication view's ``status_reason``:
text first, then the first coding's display, then its code; and a store built before the map carried it picks the
column up on ``fhirqa upgrade``, without re-ingesting."""

from __future__ import annotations

import importlib
import json
import shutil
from dataclasses import replace

from fhirqa.cli import main
from fhirqa.project import data_dir
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from fhirqa.store.mappings import load_mappings
from fhirqa.viewdef import compile_view
from tests.builders import patient, write_ndjson

ingest_module = importlib.import_module("fhirqa.store.ingest")  # the module (the package exports the function)


def given(aid: str, status: str, reason: dict | None) -> dict:
    resource = {"resourceType": "MedicationAdministration", "id": aid, "status": status,
                "medicationCodeableConcept": {"text": "Heparin 5,000 units/mL injection"},
                "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2025-03-08T06:00:00Z",
                "dosage": {"dose": {"value": 5000, "unit": "units"}}}
    if reason is not None:
        resource["statusReason"] = [reason]
    return resource


RESOURCES = [
    patient("p1"),
    given("ma-text", "not-done", {"text": "Held for SBP < 90", "coding": [{"code": "held", "display": "Held"}]}),
    given("ma-display", "not-done", {"coding": [{"system": "http://example.org/r", "code": "npo", "display": "Patient NPO"}]}),
    given("ma-code", "on-hold", {"coding": [{"system": "http://example.org/r", "code": "refused"}]}),
    given("ma-none", "completed", None),
]
EXPECTED = [("MedicationAdministration/ma-code", "refused"), ("MedicationAdministration/ma-display", "Patient NPO"),
            ("MedicationAdministration/ma-none", None), ("MedicationAdministration/ma-text", "Held for SBP < 90")]


def reasons(db) -> list[tuple]:
    return Store(db).query("SELECT ref, status_reason FROM medication ORDER BY ref").rows


def test_status_reason_is_text_then_display_then_code(tmp_path):
    db = tmp_path / "db"
    ingest([FileSource([write_ndjson(tmp_path / "a.ndjson", RESOURCES)])], db)
    assert reasons(db) == EXPECTED


def test_a_store_built_before_status_reason_was_mapped_gets_it_on_upgrade(tmp_path, monkeypatch, capsys):
    db = tmp_path / "db"
    # an older fhirqa: the MedicationAdministration map without statusReason, the view with no reason in it
    mappings = load_mappings()
    current = mappings["MedicationAdministration"]
    older = json.loads(json.dumps(current.definition))
    older["select"][0]["column"] = [c for c in older["select"][0]["column"] if not c["name"].startswith("status_reason")]
    assert len(older["select"][0]["column"]) == len(current.definition["select"][0]["column"]) - 3
    old_map = replace(current, view=compile_view(older), definition=older)
    old_views = tmp_path / "views"
    shutil.copytree(data_dir("views"), old_views)
    sql = (old_views / "medication.sql").read_text()
    reason = "coalesce(status_reason_text, status_reason_display, status_reason_code)"
    assert reason in sql
    (old_views / "medication.sql").write_text(sql.replace(reason, "CAST(NULL AS VARCHAR)"))
    monkeypatch.setattr(ingest_module, "load_mappings", lambda: {**mappings, "MedicationAdministration": old_map})
    monkeypatch.setattr(ingest_module, "data_dir", lambda name: old_views if name == "views" else data_dir(name))
    ingest([FileSource([write_ndjson(tmp_path / "a.ndjson", RESOURCES)])], db)
    assert all(r is None for _, r in reasons(db))
    monkeypatch.undo()  # this fhirqa: the map and the view carry the reason
    capsys.readouterr()
    assert main(["upgrade", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "map_medication_administration: made again from 4 stored resources" in out
    assert reasons(db) == EXPECTED
    assert main(["upgrade", "--db", str(db)]) == 0 and "already current" in capsys.readouterr().out
