"""Ingestion over HTTP: Bundles and NDJSON, rejections with origins, async jobs, strict mode, pulls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import fhirqa
from tests import builders
from tests.conftest import SAMPLE
from tests.fhir_server import fhir_server  # noqa: F401 - fixture
from tests.server.conftest import Server, copy_store, make_config, outcome_text, run_server, wait_for_job

NDJSON = {"Content-Type": "application/fhir+ndjson"}
FHIR = {"Content-Type": "application/fhir+json"}


@pytest.fixture(scope="module")
def writable(sample_store: Path, keys, tmp_path_factory) -> Iterator[Server]:
    """A server over its own store copy, allowed to pull from one (unreachable) loopback address."""
    root = tmp_path_factory.mktemp("ingest")
    config = make_config(copy_store(sample_store, root / "db"), root / "state", keys,
                         pull_allowed=["http://127.0.0.1:9/fhir"])
    with run_server(config, keys) as server:
        yield server


def _rows(server: Server, sql: str, params: list) -> list[tuple]:
    return fhirqa.Store(server.config.db).query(sql, params).rows


def test_bundle_ingest_reports_counts(writable):
    bundle = builders.transaction(builders.patient("srv-p1"), builders.observation("srv-o1", "srv-p1", value=5.6),
                                  builders.condition("srv-c1", "srv-p1"))
    with writable.client(writable.token("system/*.cu system/*.rs")) as http:
        response = http.post("/$ingest", json=bundle, headers=FHIR)
        assert response.status_code == 200, response.text
        job = response.json()
        assert job["status"] == "completed" and job["kind"] == "ingest"
        assert job["result"]["read"] == {"Patient": 1, "Observation": 1, "Condition": 1}
        assert job["result"]["rejected"] == 0 and job["result"]["changed"] is True
        rows = http.get("/Patient/srv-p1/views/observation").json()["rows"]
        assert [(r["ref"], r["value"]) for r in rows] == [("Observation/srv-o1", 5.6)]
        again = http.post("/$ingest", json=bundle, headers=FHIR).json()  # idempotent
        assert again["result"]["changed"] is False


def test_ndjson_rejections_carry_their_origin(writable):
    lines = [json.dumps(builders.patient("srv-p2")), "{not json", json.dumps({"resourceType": "Nonsense", "id": "1"}),
             json.dumps(builders.observation("srv-o2", "srv-p2"))]
    with writable.client(writable.token("system/*.write")) as http:  # v1 write scope
        response = http.post("/$ingest", content="\n".join(lines).encode(), headers=NDJSON)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    job_id = response.json()["id"]
    assert result["read"] == {"Patient": 1, "Observation": 1} and result["rejected"] == 2
    origins = sorted(r["origin"] for r in result["rejections"])
    assert origins == [f"upload {job_id}:2", f"upload {job_id}:3"]
    assert result["quarantine"].startswith("quarantine/")  # relative: server paths stay private
    assert (writable.config.db / result["quarantine"]).exists()


def test_async_ingest_job_runs_to_completion(writable):
    body = "\n".join(json.dumps(r) for r in (builders.patient("srv-p3"), builders.observation("srv-o3", "srv-p3")))
    with writable.client(writable.token("system/*.cu")) as http:
        response = http.post("/$ingest", content=body.encode(), headers={**NDJSON, "Prefer": "respond-async"})
        assert response.status_code == 202, response.text
        location = response.headers["Content-Location"]
        assert response.json()["status"] in ("queued", "running", "completed")
        job = wait_for_job(http, location)
    assert job["status"] == "completed" and job["result"]["read"]["Observation"] == 1
    assert _rows(writable, "SELECT ref FROM observation WHERE patient_id = ?", ["srv-p3"]) == [("Observation/srv-o3",)]


def test_strict_ingest_fails_with_an_outcome_and_stores_nothing(writable):
    body = json.dumps(builders.patient("srv-p4")) + "\n{broken\n"
    with writable.client(writable.token("system/*.cu")) as http:
        response = http.post("/$ingest", params={"strict": "true"}, content=body.encode(), headers=NDJSON)
    assert response.status_code == 422
    assert "strict" in outcome_text(response)
    assert response.headers["Content-Location"]
    assert _rows(writable, "SELECT id FROM resources WHERE id = ?", ["srv-p4"]) == []


def test_ingest_refusals(writable, ids):
    with writable.client(writable.token("system/*.rs")) as http:  # read-only token
        assert http.post("/$ingest", content=b"{}", headers=FHIR).status_code == 403
    with writable.client(writable.token("system/*.cu", ids["Linda Taylor"])) as http:  # patient in context
        assert http.post("/$ingest", content=b"{}", headers=FHIR).status_code == 403
    with writable.client(writable.token("system/*.cu")) as http:
        assert http.post("/$ingest", content=b"a,b\n1,2", headers={"Content-Type": "text/csv"}).status_code == 415
        assert http.post("/$ingest", content=b"", headers=NDJSON).status_code == 400
        pull = {"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": "http://169.254.169.254/"}]}
        response = http.post("/$pull", json=pull, headers=FHIR)
        assert response.status_code == 403 and "pull_allowed" in outcome_text(response)


def test_pull_from_an_unreachable_server_fails_as_a_job(writable):
    pull = {"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": "http://127.0.0.1:9/fhir"},
                                                        {"name": "patient", "valueString": "p1"},
                                                        {"name": "token", "valueString": "s3cret-token"}]}
    with writable.client(writable.token("system/*.cu")) as http:
        response = http.post("/$pull", json=pull, headers={**FHIR, "Prefer": "respond-async"})
        assert response.status_code == 202, response.text
        job = wait_for_job(http, response.headers["Content-Location"])
    assert job["status"] == "failed" and job["error"]["resourceType"] == "OperationOutcome"
    assert job["request"]["token_given"] is True and "s3cret-token" not in json.dumps(job)
    state_files = "".join(p.read_text() for p in (writable.config.state_path / "jobs").glob("*.json"))
    assert "s3cret-token" not in state_files


@pytest.mark.server
def test_pull_reads_a_patient_from_a_fhir_server(fhir_server, keys, tmp_path):  # noqa: F811 - fixture
    """``$pull`` with a patient reads ``Patient/{id}/$everything`` from a real FHIR server into an empty store."""
    bundle = json.loads(sorted(SAMPLE.glob("*.json"))[0].read_text())
    entries = [{**e, "request": {"method": "PUT", "url": f"{e['resource']['resourceType']}/{e['resource']['id']}"}}
               for e in bundle["entry"]]
    patient = next(e["resource"]["id"] for e in entries if e["resource"]["resourceType"] == "Patient")
    loaded = httpx.post(fhir_server, json={"resourceType": "Bundle", "type": "transaction", "entry": entries},
                        headers=FHIR, timeout=60)
    assert loaded.status_code == 200, loaded.text[:300]
    config = make_config(tmp_path / "db", tmp_path / "state", keys, pull_allowed=[fhir_server])
    with run_server(config, keys) as server, server.client(server.token("system/*.cu system/*.rs")) as http:
        assert http.get("/readyz").json()["empty"] is True
        pull = {"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": fhir_server},
                                                            {"name": "patient", "valueString": patient}]}
        response = http.post("/$pull", json=pull, headers=FHIR)
        assert response.status_code == 200, response.text
        assert response.json()["result"]["read"]["Patient"] == 1
        rows = http.get(f"/Patient/{patient}/views/observation", params={"limit": 5}).json()
        assert rows["count"] == 5 and {r["patient_id"] for r in rows["rows"]} == {patient}
