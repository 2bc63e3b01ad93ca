"""The Devices of the shared Bulk export land whole in the device view.

``synthea-bulk-10/Device.000.ndjson`` of the shared data (``../shared/data`` beside the project, or
``$FHIRQA_SHARED_DATA``) is ingested as it is; every row is checked against a direct scan of the NDJSON.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.mappings.maptest_helpers import shared_data_dir


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    data = shared_data_dir()
    source = data / "synthea-bulk-10" / "Device.000.ndjson" if data else None
    if source is None or not source.is_file():
        pytest.skip("../shared/data/synthea-bulk-10/Device.000.ndjson is absent (CI and developer checkouts have it)")
    folder = tmp_path_factory.mktemp("bulk")
    shutil.copy(source, folder / source.name)
    db = tmp_path_factory.mktemp("devices") / "db"
    report = ingest([FileSource([folder])], db)
    assert not report.rejected
    raw = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert raw, "the export holds devices"
    return Store(db), raw


def records(store: Store) -> list[dict[str, Any]]:
    return store.query("SELECT * FROM device", limit=100_000).records()


def test_one_row_per_device_of_its_patient(shared):
    store, raw = shared
    rows = records(store)
    assert Counter((r["patient_id"], r["ref"]) for r in rows) == Counter(
        (d["patient"]["reference"].removeprefix("Patient/"), f"Device/{d['id']}") for d in raw)


def test_each_device_keeps_its_name_code_status_and_identifiers(shared):
    store, raw = shared
    by_ref = {r["ref"]: r for r in records(store)}
    for d in raw:
        row = by_ref[f"Device/{d['id']}"]
        snomed = next(c["code"] for c in d["type"]["coding"] if c["system"] == "http://snomed.info/sct")
        assert (row["name"], row["code"], row["status"]) == (d["type"].get("text") or d["type"]["coding"][0]["display"],
                                                             snomed, d["status"])
        assert (row["udi_device_identifier"], row["distinct_identifier"], row["lot_number"], row["serial_number"]) == (
            d["udiCarrier"][0]["deviceIdentifier"], d.get("distinctIdentifier"), d.get("lotNumber"), d.get("serialNumber"))


def test_manufacture_and_expiration_dates_are_the_instants_written_with_their_offsets(shared):
    store, raw = shared
    by_ref = {r["ref"]: r for r in records(store)}
    for d in raw:
        row = by_ref[f"Device/{d['id']}"]
        for column, field in (("manufacture_date", "manufactureDate"), ("expiration_date", "expirationDate")):
            written = datetime.fromisoformat(d[field])
            assert row[column] == written, (d["id"], column)
            assert row[f"{column}_offset"] == written.utcoffset().total_seconds() // 60, (d["id"], column)
