"""Fixtures for the server-source tests: the sekmet servers and three real bundles loaded into one."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.fhir_server import fhir_server, smart_fhir_server  # noqa: F401 - fixtures

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"
#: Three small Synthea patients (70-86 resources each) with their own Organization and Practitioner.
SYNTHEA_FILES = (
    "Clemente_Kreiger_1484a42d-0eaf-4654-9cbf-6b050a5cd73b.json",
    "Buster_Hoeger_ad2e3fc5-2b5d-4cb9-8d03-9ea0f4ac8423.json",
    "Stanley_Balistreri_08ce8462-f56a-4fd6-b986-ea75c5c6edb2.json",
)


def bundle_files() -> list[Path]:
    """The bundles to load: three Synthea patients from ../shared/data, else examples/sample."""
    synthea = SHARED_DATA / "synthea-r4"
    if synthea.is_dir():
        return [synthea / name for name in SYNTHEA_FILES]
    sample = sorted(SAMPLE.glob("*.json"))[:3]
    if sample:
        return sample
    pytest.skip(f"no test bundles: {synthea} is absent and examples/sample has no bundles yet")


def as_transaction(bundle: dict[str, Any]) -> dict[str, Any]:
    """A transaction of ``bundle`` (Synthea's are already POST transactions; others are PUT by id)."""
    if bundle.get("type") == "transaction":
        return bundle
    entries = []
    for entry in bundle.get("entry", []):
        res = entry["resource"]
        url = f"{res['resourceType']}/{res['id']}"
        entries.append({**entry, "request": {"method": "PUT", "url": url}})
    return {"resourceType": "Bundle", "type": "transaction", "entry": entries}


@dataclass
class Loaded:
    """What was loaded: the files, and how the server renamed each resource."""

    files: list[Path]
    #: (type, id in the file) -> id the server assigned
    ids: dict[tuple[str, str], str] = field(default_factory=dict)
    #: server ids of the patients, in file order
    patients: list[str] = field(default_factory=list)
    #: server (type, id) of every loaded resource, per patient file
    per_patient: list[set[tuple[str, str]]] = field(default_factory=list)

    @property
    def all_keys(self) -> set[tuple[str, str]]:
        return set().union(*self.per_patient)

    def counts(self, index: int | None = None) -> Counter[str]:
        keys = self.all_keys if index is None else self.per_patient[index]
        return Counter(rtype for rtype, _ in keys)


def _file_id(entry: dict[str, Any]) -> str:
    res = entry["resource"]
    full = entry.get("fullUrl", "")
    return res.get("id") or full.removeprefix("urn:uuid:")


@pytest.fixture(scope="session")
def loaded(fhir_server: str) -> Loaded:  # noqa: F811 - the fixture imported above
    """The three bundles POSTed as transactions to the open sekmet server (once per session)."""
    files = bundle_files()
    result = Loaded(files=files)
    with httpx.Client(timeout=60) as client:
        for path in files:
            bundle = as_transaction(orjson.loads(path.read_bytes()))
            response = client.post(
                fhir_server, content=orjson.dumps(bundle), headers={"Content-Type": "application/fhir+json"}
            )
            assert response.status_code == 200, f"{path.name}: {response.status_code} {response.text[:500]}"
            keys: set[tuple[str, str]] = set()
            # transaction-response entries are in request order; their location names the stored id
            for sent, answer in zip(bundle["entry"], response.json()["entry"], strict=True):
                rtype = sent["resource"]["resourceType"]
                new_id = answer["response"]["location"].split("/_history")[0].rsplit("/", 1)[-1]
                result.ids[(rtype, _file_id(sent))] = new_id
                keys.add((rtype, new_id))
                if rtype == "Patient":
                    result.patients.append(new_id)
            result.per_patient.append(keys)
    return result
