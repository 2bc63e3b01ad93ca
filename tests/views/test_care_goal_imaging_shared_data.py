"""CarePlan, Goal and ImagingStudy of real Synthea bundles land whole in care_plan, goal and imaging.

A few bundles of ``../shared/data/synthea-r4`` (those holding an ImagingStudy, and the first ones holding a
CarePlan or a Goal) are ingested; every count and value is checked against a direct scan of the raw JSON,
which resolves Synthea's ``urn:uuid:`` references by hand.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

SYNTHEA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "synthea-r4"
TYPES = ("CarePlan", "Goal", "ImagingStudy")


def _bundles() -> list[Path]:
    """Every bundle with an ImagingStudy (they are rare) plus the first four with a CarePlan or a Goal."""
    chosen: list[Path] = []
    with_plans = 0
    for path in sorted(SYNTHEA.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        if '"ImagingStudy"' in text:
            chosen.append(path)
        elif with_plans < 4 and ('"CarePlan"' in text or '"Goal"' in text):
            chosen.append(path)
            with_plans += 1
    return chosen


def _raw(paths: list[Path]) -> dict[str, Any]:
    """The resources of the bundles by type, references resolved, each tagged with its patient id."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    names: dict[str, str] = {}  # Condition/id -> code.text
    for path in paths:
        entries = json.loads(path.read_text(encoding="utf-8"))["entry"]
        full = {e["fullUrl"]: f"{e['resource']['resourceType']}/{e['resource']['id']}" for e in entries}
        for entry in entries:
            resource = entry["resource"]
            if resource["resourceType"] == "Condition":
                names[f"Condition/{resource['id']}"] = resource["code"]["text"]
            if resource["resourceType"] in TYPES:
                resource = {**resource, "_patient": full[resource["subject"]["reference"]].split("/", 1)[1],
                            "_addresses": [full.get(a["reference"], a["reference"]) for a in resource.get("addresses", [])]}
                by_type.setdefault(resource["resourceType"], []).append(resource)
    return {"by_type": by_type, "condition_names": names}


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    if not SYNTHEA.is_dir():
        pytest.skip("../shared/data/synthea-r4 is absent (CI and developer checkouts have it)")
    paths = _bundles()
    folder = tmp_path_factory.mktemp("bundles")
    for path in paths:
        shutil.copy(path, folder / path.name)
    db = tmp_path_factory.mktemp("care") / "db"
    report = ingest([FileSource([folder])], db)
    assert not report.rejected
    raw = _raw(paths)
    assert all(raw["by_type"].get(t) for t in TYPES), "the chosen bundles should hold every type"
    return Store(db), raw


def records(store: Store, sql: str) -> list[dict[str, Any]]:
    return store.query(sql, limit=100_000).records()


def test_one_care_plan_row_per_activity_and_one_for_a_plan_without(shared):
    store, raw = shared
    plans = raw["by_type"]["CarePlan"]
    rows = records(store, "SELECT * FROM care_plan")
    assert len(rows) == sum(max(1, len(p.get("activity", []))) for p in plans)
    assert len({r["ref"] for r in rows}) == len(plans)


def test_each_plan_keeps_its_name_status_activities_and_condition(shared):
    store, raw = shared
    rows = records(store, "SELECT * FROM care_plan")
    for plan in raw["by_type"]["CarePlan"]:
        mine = [r for r in rows if r["ref"] == f"CarePlan/{plan['id']}"]
        assert {r["patient_id"] for r in mine} == {plan["_patient"]}
        assert {r["name"] for r in mine} == {plan["category"][0]["text"]}
        assert {r["status"] for r in mine} == {plan["status"]}
        assert sorted(r["activity"] for r in mine if r["activity"]) == sorted(
            a["detail"]["code"]["text"] for a in plan.get("activity", []))
        expected = raw["condition_names"].get(plan["_addresses"][0]) if plan["_addresses"] else None
        assert {r["addresses_name"] for r in mine} == {expected}
        assert {r["start_time"].isoformat() for r in mine} == {plan["period"]["start"]}


def test_one_goal_row_per_goal_named_by_its_description(shared):
    store, raw = shared
    goals = raw["by_type"]["Goal"]
    rows = records(store, "SELECT * FROM goal")
    assert len(rows) == sum(max(1, len(g.get("target", []))) for g in goals)
    assert Counter((r["patient_id"], r["name"], r["lifecycle_status"]) for r in rows) == Counter(
        (g["_patient"], g["description"]["text"], g["lifecycleStatus"]) for g in goals)


def test_one_imaging_row_per_series_with_its_modality_body_site_and_time(shared):
    store, raw = shared
    studies = raw["by_type"]["ImagingStudy"]
    rows = records(store, "SELECT * FROM imaging")
    assert len(rows) == sum(max(1, len(s.get("series", []))) for s in studies)
    assert len({r["ref"] for r in rows}) == len(studies)
    expected = Counter((s["_patient"], f"ImagingStudy/{s['id']}", x["uid"], x["modality"]["display"],
                        x["bodySite"]["display"], x.get("started", s["started"])) for s in studies for x in s["series"])
    assert Counter((r["patient_id"], r["ref"], r["series_uid"], r["modality"], r["body_site"], r["time"].isoformat())
                   for r in rows) == expected
