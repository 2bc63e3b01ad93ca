"""View reads with filters, ``$viewdefinition-run`` in its formats, and the discovery documents."""

from __future__ import annotations

import csv
import io
import json

import fhirqa
from tests.server.conftest import NAME_A, outcome_text

FHIR = {"Content-Type": "application/fhir+json"}
VIEWDEF = {"resourceType": "ViewDefinition", "resource": "Observation",
           "select": [{"column": [{"name": "id", "path": "id"}, {"name": "code", "path": "code.coding.first().code"}]}]}


def test_view_filters_match_the_store(server, ids):
    a = ids[NAME_A]
    expected = fhirqa.Store(server.config.db).query(
        "SELECT ref FROM observation WHERE patient_id = ? AND lower(name) LIKE '%a1c%' AND time >= '2024-01-01' "
        "AND time < '2026-01-01' ORDER BY time, ref", [a]).rows
    with server.client(server.token("system/*.rs")) as http:
        response = http.get(f"/Patient/{a}/views/observation",
                            params={"name": "A1C", "since": "2024-01-01", "until": "2026-01-01T00:00:00Z"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert [r["ref"] for r in body["rows"]] == [r[0] for r in expected] and expected
        assert all("A1c" in r["name"] for r in body["rows"])
        limited = http.get(f"/Patient/{a}/views/observation", params={"limit": 3}).json()
        assert limited["count"] == 3 and limited["truncated"] is True
        # LIKE wildcards in the filter are literal characters, not patterns.
        assert http.get(f"/Patient/{a}/views/observation", params={"name": "%"}).json()["count"] == 0
        assert http.get(f"/Patient/{a}/views/nonsense").status_code == 404
        born = http.get(f"/Patient/{a}/views/patient", params={"until": "1900-01-01"}).json()  # patient: birth_date
        assert born["count"] == 0
        bad = http.get(f"/Patient/{a}/views/observation", params={"sinse": "2020-01-01"})  # misspelt
        assert bad.status_code == 400 and "sinse" in outcome_text(bad)
        assert http.get(f"/Patient/{a}/views/observation", params={"since": "last week"}).status_code == 400
        assert http.get("/Patient/nobody/views/observation").status_code == 404
        views = http.get("/views").json()["views"]
        assert {"observation", "medication", "patient"} <= {v["name"] for v in views}


def test_viewdefinition_run_formats_and_limits(server, ids):
    a = ids[NAME_A]
    with server.client(server.token("system/*.rs")) as http:
        everything = {"resourceType": "Parameters", "parameter": [{"name": "viewResource", "resource": VIEWDEF},
                                                                  {"name": "_limit", "valueInteger": 10000}]}
        rows = http.post("/$viewdefinition-run", json=everything, headers=FHIR)
        assert rows.status_code == 200 and rows.headers["X-Truncated"] == "false"
        assert http.post("/$viewdefinition-run", json=VIEWDEF, headers=FHIR).headers["X-Truncated"] == "true"
        total = fhirqa.Store(server.config.db).query("SELECT count(*) FROM resources WHERE resource_type = "
                                                     "'Observation'").rows[0][0]
        assert len(rows.json()) == total
        params = {"resourceType": "Parameters", "parameter": [
            {"name": "viewResource", "resource": VIEWDEF}, {"name": "patient", "valueReference": {"reference": f"Patient/{a}"}},
            {"name": "_limit", "valueInteger": 5}, {"name": "_format", "valueCode": "csv"}]}
        as_csv = http.post("/$viewdefinition-run", json=params, headers=FHIR)
        assert as_csv.headers["content-type"].startswith("text/csv") and as_csv.headers["X-Truncated"] == "true"
        table = list(csv.reader(io.StringIO(as_csv.text)))
        assert table[0] == ["id", "code"] and len(table) == 6
        params["parameter"][3] = {"name": "_format", "valueCode": "ndjson"}
        lines = http.post("/$viewdefinition-run", json=params, headers=FHIR).text.splitlines()
        assert len(lines) == 5 and set(json.loads(lines[0])) == {"id", "code"}
        broken = http.post("/$viewdefinition-run", json={**VIEWDEF, "select": [{"column": [{"name": "x", "path": "(("}]}]},
                           headers=FHIR)
        assert broken.status_code == 400 and "ViewDefinition" in outcome_text(broken)
    with server.client(server.token("user/Observation.rs")) as http:  # user scope: one patient at a time
        assert http.post("/$viewdefinition-run", json=VIEWDEF, headers=FHIR).status_code == 403
        params["parameter"][3] = {"name": "_format", "valueCode": "json"}
        assert http.post("/$viewdefinition-run", json=params, headers=FHIR).status_code == 200


def test_discovery_documents(server):
    with server.client() as http:
        capability = http.get("/metadata").json()
        assert capability["resourceType"] == "CapabilityStatement" and capability["fhirVersion"] == "4.0.1"
        rest = capability["rest"][0]
        assert rest["security"]["service"][0]["coding"][0]["code"] == "SMART-on-FHIR"
        assert {op["name"] for op in rest["operation"]} >= {"ask", "ingest", "pull", "viewdefinition-run"}
        assert rest["resource"][0]["operation"][0]["name"] == "ask"
        listing = http.get("/OperationDefinition").json()
        assert listing["total"] == 5  # ask, ingest, pull, check-consistency, viewdefinition-run
        ask = http.get("/OperationDefinition/fhirqa-ask").json()
        assert ask["code"] == "ask" and ask["instance"] is True
        assert {p["name"] for p in ask["parameter"]} >= {"question", "now", "backend", "evidence", "provenance"}
        assert http.get("/OperationDefinition/nope").status_code == 404
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.get("/readyz").json()["status"] == "ready"
        assert http.get("/auth/jwks").json()["keys"][0]["alg"] == "ES256"
