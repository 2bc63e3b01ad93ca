"""Referential integrity of bundles and NDJSON, and time consistency of the record."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from fhirqa.synth import write_sample

from .conftest import NOW, resources

REF = re.compile(r'"reference":"([^"]+)"')


def _refs(resource: dict[str, Any]) -> list[str]:
    return REF.findall(orjson.dumps(resource).decode())


def test_every_urn_reference_resolves(few: list[dict[str, Any]], cohort: list[dict[str, Any]]) -> None:
    for bundle in few + cohort[:20]:
        full_urls = {e["fullUrl"] for e in bundle["entry"]}
        for e in bundle["entry"]:
            r = e["resource"]
            assert e["fullUrl"] == f"urn:uuid:{r['id']}"
            assert e["request"] == {"method": "POST", "url": r["resourceType"]}
            for target in _refs(r):
                assert target.startswith("urn:uuid:"), target
                assert target in full_urls, (r["resourceType"], target)


def test_ids_are_uuid4_and_unique(few: list[dict[str, Any]]) -> None:
    pattern = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    for bundle in few:
        ids = [e["resource"]["id"] for e in bundle["entry"]]
        assert len(ids) == len(set(ids))
        assert all(pattern.match(i) for i in ids)


def test_patient_is_first_and_subject_everywhere(few: list[dict[str, Any]]) -> None:
    for bundle in few:
        patient = bundle["entry"][0]["resource"]
        assert patient["resourceType"] == "Patient"
        me = f"urn:uuid:{patient['id']}"
        for r in resources(bundle):
            who = r.get("subject") or r.get("patient")
            if who:
                assert who["reference"] == me


def test_ndjson_references_are_plain_and_resolve(tmp_path: Path) -> None:
    counts = write_sample(tmp_path, 4, seed=7, fmt="ndjson")
    files = sorted(tmp_path.glob("*.ndjson"))
    assert {f.name for f in files} >= {"Patient.000.ndjson", "Observation.000.ndjson"}
    ids: set[str] = set()
    lines: list[dict[str, Any]] = []
    for f in files:
        for line in f.read_bytes().splitlines():
            r = orjson.loads(line)
            assert f.name.startswith(r["resourceType"] + ".")
            ids.add(f"{r['resourceType']}/{r['id']}")
            lines.append(r)
    assert sum(counts.values()) == len(lines) == len(ids)  # shared practitioners written once
    for r in lines:
        for target in _refs(r):
            assert not target.startswith("urn:"), target
            assert target in ids, target


def test_ndjson_splits_files(tmp_path: Path) -> None:
    write_sample(tmp_path, 1, seed=7, fmt="ndjson", max_lines=50)
    assert (tmp_path / "Observation.001.ndjson").exists()
    assert len((tmp_path / "Observation.000.ndjson").read_bytes().splitlines()) == 50


def _times(r: dict[str, Any]) -> list[str]:
    keys = (
        "effectiveDateTime",
        "issued",
        "authoredOn",
        "whenHandedOver",
        "occurrenceDateTime",
        "recordedDate",
        "date",
    )
    out = [r[k] for k in keys if isinstance(r.get(k), str) and "T" in r[k]]
    for k in ("period", "effectivePeriod", "performedPeriod"):
        if k in r:
            out += [v for v in r[k].values() if isinstance(v, str)]
    return out


def test_nothing_after_now_or_death(cohort: list[dict[str, Any]]) -> None:
    from datetime import datetime

    now = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    for bundle in cohort:
        patient = bundle["entry"][0]["resource"]
        limit = datetime.fromisoformat(patient["deceasedDateTime"]) if "deceasedDateTime" in patient else now
        for r in resources(bundle):
            if r["resourceType"] in ("DocumentReference", "DiagnosticReport", "Observation"):
                continue  # signed/resulted after the event, and cultures resulting days later
            for t in _times(r):
                assert datetime.fromisoformat(t) <= limit, (r["resourceType"], t, limit)


def test_events_inside_their_encounter(few: list[dict[str, Any]]) -> None:
    from datetime import datetime, timedelta

    for bundle in few:
        encs = {f"urn:uuid:{e['id']}": e for e in resources(bundle, "Encounter")}
        for r in resources(bundle):
            enc_ref = (r.get("encounter") or r.get("context") or {}).get("reference")
            t = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start")
            if r["resourceType"] in ("Observation", "MedicationAdministration") and enc_ref and t:
                p = encs[enc_ref]["period"]
                start, end = datetime.fromisoformat(p["start"]), datetime.fromisoformat(p["end"])
                assert start <= datetime.fromisoformat(t) <= end + timedelta(minutes=1), (r, p)
