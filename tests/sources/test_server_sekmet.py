"""Against a real FHIR server (sekmet-fhir on loopback): everything loaded comes back, by each route."""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from fhirqa.errors import SourceError
from fhirqa.sources.auth import BearerToken, SmartBackendAuth
from fhirqa.sources.bulk import BulkExportSource
from fhirqa.sources.rest import FhirRestSource, open_server_source

pytestmark = pytest.mark.server


def keys(records) -> list[tuple[str, str]]:
    return [(r.resource["resourceType"], r.resource["id"]) for r in records if r.resource is not None]


def problems(records) -> list[str]:
    return [r.problem for r in records if r.problem]


def test_everything_returns_every_resource_of_each_loaded_bundle(fhir_server, loaded):
    for index, patient in enumerate(loaded.patients):
        records = list(FhirRestSource(fhir_server, patient=patient).records())
        got = keys(records)
        assert problems(records) == []
        assert len(got) == len(set(got)), "no resource twice"
        assert set(got) == loaded.per_patient[index]
        assert Counter(t for t, _ in got) == loaded.counts(index)


def test_references_from_the_server_point_at_the_ids_it_assigned(fhir_server, loaded):
    records = list(FhirRestSource(fhir_server, patient=loaded.patients[0]).records())
    observation = next(r.resource for r in records if r.resource["resourceType"] == "Observation")
    assert observation["subject"]["reference"] == f"Patient/{loaded.patients[0]}"


def test_patient_searches_page_through_small_pages_to_the_same_resources(fhir_server, loaded):
    patient = loaded.patients[0]
    source = FhirRestSource(fhir_server, patient=patient, everything=False, page_size=7)
    records = list(source.records())
    assert problems(records) == []
    got = set(keys(records))
    expected = loaded.per_patient[0]
    # searches by patient cannot reach the Organization and Practitioner (not in the compartment)
    in_compartment = {k for k in expected if k[0] not in ("Organization", "Practitioner")}
    assert in_compartment <= got <= expected
    observations = loaded.counts(0)["Observation"]
    assert observations > 7  # so that paging really happened


def test_type_search_since_the_future_finds_nothing(fhir_server, loaded):
    source = FhirRestSource(fhir_server, types=["Patient", "Observation"], since="2999-01-01T00:00:00Z")
    assert list(source.records()) == []


def test_type_search_finds_every_loaded_patient(fhir_server, loaded):
    got = {rid for rtype, rid in keys(FhirRestSource(fhir_server, types=["Patient"], page_size=2).records())}
    assert set(loaded.patients) <= got


def test_bulk_export_returns_every_loaded_resource_exactly_once(fhir_server, loaded):
    messages: list[str] = []
    types = sorted(loaded.counts())
    source = BulkExportSource(
        fhir_server, types=types, progress=messages.append, poll_interval=0.2, timeout=60
    )
    records = list(source.records())
    assert problems(records) == []
    got = [k for k in keys(records) if k in loaded.all_keys]  # the session server may hold other tests' data
    assert len(got) == len(set(got)) and set(got) == loaded.all_keys
    assert Counter(t for t, _ in got) == loaded.counts()
    assert any("export complete" in m for m in messages)
    # the job was deleted afterwards
    status = httpx.get(f"{fhir_server}/bulk-status/does-not-matter")
    assert status.status_code == 404


def test_group_export_returns_the_group_members_compartments(fhir_server, loaded):
    group = {
        "resourceType": "Group",
        "type": "person",
        "actual": True,
        "member": [{"entity": {"reference": f"Patient/{pid}"}} for pid in loaded.patients[:2]],
    }
    created = httpx.post(
        f"{fhir_server}/Group", json=group, headers={"Content-Type": "application/fhir+json"}
    )
    assert created.status_code == 201, created.text
    records = list(BulkExportSource(fhir_server, group=created.json()["id"], poll_interval=0.2).records())
    got = set(keys(records)) - {("Group", created.json()["id"])}  # a Group is in its members' compartments
    expected = loaded.per_patient[0] | loaded.per_patient[1]
    assert {k for k in expected if k[0] not in ("Organization", "Practitioner")} <= got <= expected


def test_export_of_an_unknown_group_is_a_source_error(fhir_server):
    with pytest.raises(SourceError, match="HTTP 404: Group/nope not found"):
        list(BulkExportSource(fhir_server, group="nope").records())


def test_everything_for_an_unknown_patient_is_a_source_error(fhir_server):
    with pytest.raises(SourceError, match="404"):
        list(FhirRestSource(fhir_server, patient="no-such-patient").records())


def _seed_patient(base: str, auth) -> str:
    with httpx.Client() as client:
        headers = {**auth.headers(client), "Content-Type": "application/fhir+json"}
        body = {"resourceType": "Patient", "name": [{"family": "Smart", "given": ["Backend"]}]}
        response = client.post(f"{base}/Patient", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["id"]


@pytest.mark.parametrize("alg", ["RS384", "ES384"])
def test_smart_backend_services_against_a_real_authorization_server(smart_fhir_server, alg):
    client_id, key_path = smart_fhir_server.clients[alg]
    base = smart_fhir_server.base_url
    auth = SmartBackendAuth(base, client_id, key_path, scope="system/*.*")
    pid = _seed_patient(base, auth)
    source = open_server_source(base, patient=pid, smart_client_id=client_id, smart_key_path=str(key_path))
    assert keys(source.records()) == [("Patient", pid)]
    assert auth.token_url == base.removesuffix("/fhir") + "/auth/token"
    bulk = BulkExportSource(base, types=["Patient"], auth=auth, poll_interval=0.2)
    assert ("Patient", pid) in keys(bulk.records())
    assert auth.token_requests == 1  # one token served every request above


def test_real_server_refuses_no_and_wrong_credentials(smart_fhir_server):
    base = smart_fhir_server.base_url
    with pytest.raises(SourceError, match="HTTP 401: Authentication required"):
        list(FhirRestSource(base, types=["Patient"]).records())
    with pytest.raises(SourceError, match="HTTP 401"):
        list(FhirRestSource(base, types=["Patient"], auth=BearerToken("wrong")).records())
    assert isinstance(
        list(
            FhirRestSource(
                base, types=["Patient"], auth=BearerToken(smart_fhir_server.bearer_token)
            ).records()
        ),
        list,
    )


def test_smart_client_unknown_to_the_server_is_refused(smart_fhir_server, tmp_path):
    _, key_path = smart_fhir_server.clients["RS384"]
    auth = SmartBackendAuth(smart_fhir_server.base_url, "stranger", key_path)
    with pytest.raises(SourceError, match="invalid_client: Unknown client_id 'stranger'"):
        list(FhirRestSource(smart_fhir_server.base_url, types=["Patient"], auth=auth).records())
