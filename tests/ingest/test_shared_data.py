"""The real shared data sets land whole in the views, counted against a direct scan of the raw JSON."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest


def raw_scan(synthea: Path, bulk: Path) -> Counter:
    """Resources per type (and Observation components, and notes) by reading the files directly."""
    counts: Counter = Counter()
    resources = []
    for path in synthea.glob("*.json"):
        resources += [e["resource"] for e in json.loads(path.read_text())["entry"]]
    for path in bulk.glob("*.ndjson"):
        resources += [json.loads(line) for line in path.read_text().splitlines() if '"resourceType"' in line]
    for resource in resources:
        rtype = resource["resourceType"]
        counts[rtype] += 1
        if rtype == "Observation":
            counts["observation rows"] += 1 + len(resource.get("component", []))
        if rtype == "DocumentReference":
            counts["note rows"] += len(resource.get("content", []))
    return counts


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory):
    root = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if not root.is_dir():
        pytest.skip("../shared/data is absent (CI and developer checkouts have it)")
    db = tmp_path_factory.mktemp("shared") / "db"
    report = ingest([FileSource([root / "synthea-r4", root / "synthea-bulk-10"])], db)
    return root, db, report


def test_every_clinical_resource_of_the_shared_data_is_in_the_views(shared_store):
    root, db, report = shared_store
    expected = raw_scan(root / "synthea-r4", root / "synthea-bulk-10")
    store = Store(db)

    def count(sql):
        return store.query(sql).rows[0][0]

    assert count("SELECT count(*) FROM observation") == expected["observation rows"]
    assert count("SELECT count(DISTINCT ref) FROM observation") == expected["Observation"]
    assert count("SELECT count(*) FROM condition") == expected["Condition"]
    assert count("SELECT count(*) FROM medication WHERE kind = 'request'") == expected["MedicationRequest"]
    assert count("SELECT count(*) FROM encounter") == expected["Encounter"]
    assert count("SELECT count(*) FROM note WHERE source = 'DocumentReference'") == expected["note rows"]
    assert count("SELECT count(*) FROM patient") == expected["Patient"]


def test_the_only_rejections_are_the_export_log_lines(shared_store):
    _, _, report = shared_store
    assert {r.origin.rsplit(":", 1)[0].rsplit("/", 1)[-1] for r in report.rejected} == {"log.ndjson"}
    assert all("no resourceType" in r.reason for r in report.rejected)


def test_synthea_urn_references_join_observations_to_their_patient(shared_store):
    _, db, _ = shared_store
    orphans = Store(db).query(
        "SELECT count(*) FROM observation o ANTI JOIN patient p ON p.patient_id = o.patient_id"
    ).rows[0][0]
    assert orphans == 0
