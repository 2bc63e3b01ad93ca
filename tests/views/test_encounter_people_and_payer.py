"""Who saw the patient, where, and who paid: the encounter view reads them through references.

Synthea encounters name their participant and serviceProvider by reference only (no display), and the payer sits
on the ExplanationOfBenefit that bills the encounter. A few bundles of ``../shared/data/synthea-r4`` are ingested;
each encounter's ``practitioner`` (given + family name), ``service_provider`` (Organization.name) and ``payer``
(the focal coverage's display) are checked against a direct scan of the raw JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

SYNTHEA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "synthea-r4"


def _expected(paths: list[Path]) -> dict[str, tuple[str | None, str | None, str | None]]:
    """Encounter/id -> (practitioner name, organization name, payer), resolved by hand from the bundles."""
    people: dict[str, str] = {}
    places: dict[str, str] = {}
    encounters: dict[str, dict] = {}
    payers: dict[str, str] = {}
    for path in paths:
        for entry in json.loads(path.read_text(encoding="utf-8"))["entry"]:
            r = entry["resource"]
            if r["resourceType"] == "Practitioner":
                name = r["name"][0]
                people[entry["fullUrl"]] = " ".join([*name.get("given", []), name["family"]])
            elif r["resourceType"] == "Organization":
                places[entry["fullUrl"]] = r["name"]
            elif r["resourceType"] == "Encounter":
                encounters[entry["fullUrl"]] = r
            elif r["resourceType"] == "ExplanationOfBenefit":
                billed = r["item"][0]["encounter"][0]["reference"]
                focal = next(i for i in r["insurance"] if i.get("focal"))
                payers[billed] = focal["coverage"]["display"]
    out = {}
    for url, r in encounters.items():
        who = r.get("participant", [{}])[0].get("individual", {}).get("reference")
        out[f"Encounter/{r['id']}"] = (people.get(who or ""), places.get(r["serviceProvider"]["reference"]),
                                       payers.get(url))
    return out


@pytest.fixture(scope="module")
def store_and_expected(tmp_path_factory):
    if not SYNTHEA.is_dir():
        pytest.skip("../shared/data/synthea-r4 is absent (CI and developer checkouts have it)")
    paths = sorted(SYNTHEA.glob("*.json"))[:3]
    folder = tmp_path_factory.mktemp("bundles")
    for path in paths:
        shutil.copy(path, folder / path.name)
    db = tmp_path_factory.mktemp("encounter_people") / "db"
    ingest([FileSource([folder])], db)
    return Store(db), _expected(paths)


def test_practitioner_facility_and_payer_of_every_encounter_match_the_raw_bundles(store_and_expected):
    store, expected = store_and_expected
    rows = store.query("SELECT ref, practitioner, service_provider, payer FROM encounter").rows
    assert len(rows) == len(expected) > 0
    got = {ref: (who, where, payer) for ref, who, where, payer in rows}
    assert got == expected
    assert all(who and where and payer for who, where, payer in got.values())  # Synthea gives all three


def test_the_references_stay_beside_the_names(store_and_expected):
    store, _ = store_and_expected
    refs = store.query("SELECT practitioner_ref, service_provider_ref FROM encounter LIMIT 1").rows[0]
    assert refs[0].startswith("Practitioner/") and refs[1].startswith("Organization/")
