"""A patient-A token never reaches patient B: every route of the OpenAPI schema, walked.

For each operation the walk sends the requests a curious patient-A app could send: B's id in the
path, B's id in the body, a job about B, B's data by population query. No response may contain B's
patient id, B's name or the id of any of B's resources. Positive controls check that the same token
does reach A, so the test cannot pass by refusing everything. A route the walk does not know fails
the test: a new route must be added here.
"""

from __future__ import annotations

from typing import Any

import httpx

import fhirqa
from tests.server.conftest import NAME_A, NAME_B, NOW, ask_parameters, wait_for_job

FHIR = {"Content-Type": "application/fhir+json"}
VIEWS = ("observation", "condition", "encounter", "medication", "procedure", "immunization", "allergy", "note",
         "patient")
VIEWDEF = {"resourceType": "ViewDefinition", "resource": "Observation",
           "select": [{"column": [{"name": "id", "path": "id"}, {"name": "subject", "path": "subject.reference"}]}]}


def _markers(store: fhirqa.Store, patient: str, name: str) -> set[str]:
    ids = {r[0] for r in store.query("SELECT id FROM resources WHERE patient_id = ?", [patient], limit=100_000).rows}
    return {patient, name} | ids


def _requests(method: str, path: str, a: str, b: str, b_job: str, a_job: str) -> list[dict[str, Any]]:
    """The requests to send for one operation: B-directed probes, plus A-directed controls."""
    ask = ask_parameters("What was her last A1c?")
    json_ask = {"question": "What was her last A1c?", "now": NOW}
    table: dict[tuple[str, str], list[dict[str, Any]]] = {
        ("GET", "/metadata"): [{}],
        ("GET", "/.well-known/smart-configuration"): [{}],
        ("GET", "/OperationDefinition"): [{}],
        ("GET", "/OperationDefinition/{op_id}"): [{"path": {"op_id": "fhirqa-ask"}}],
        ("GET", "/auth/jwks"): [{}],
        ("GET", "/healthz"): [{}],
        ("GET", "/readyz"): [{}],
        ("POST", "/auth/token"): [{"data": {"grant_type": "client_credentials", "scope": "patient/*.rs",
                                            "client_assertion_type": "x", "client_assertion": "y"}}],
        ("POST", "/Patient/{id}/$ask"): [{"path": {"id": b}, "json": ask, "headers": FHIR},
                                         {"path": {"id": b}, "json": ask, "headers": {**FHIR, "Prefer": "respond-async"}},
                                         {"path": {"id": a}, "json": ask, "headers": FHIR, "control": True}],
        ("POST", "/$ask"): [{"json": ask_parameters(f"Which patient is {NAME_B}?"), "headers": FHIR}],
        ("POST", "/api/patients/{id}/ask"): [{"path": {"id": b}, "json": json_ask},
                                             {"path": {"id": a}, "json": json_ask, "control": True}],
        ("POST", "/api/ask"): [{"json": {"question": f"Which patient is {NAME_B}?"}}],
        ("GET", "/Patient/{id}/$ask/stream"): [{"path": {"id": b}, "params": {"question": "last A1c", "now": NOW}},
                                               {"path": {"id": a}, "params": {"question": "last A1c"},
                                                "control": True}],
        ("POST", "/api/patients/{id}/check-consistency"): [
            {"path": {"id": b}, "json": {}},
            {"path": {"id": b}, "json": {"text": "K 4.1 today.", "time": NOW}},
            {"path": {"id": a}, "json": {"text": "K 4.1 today.", "time": NOW}, "control": True}],
        ("POST", "/Patient/{id}/$check-consistency"): [
            {"path": {"id": b}, "json": {"resourceType": "Parameters", "parameter": []}, "headers": FHIR},
            {"path": {"id": a}, "json": {"resourceType": "Parameters", "parameter": [
                {"name": "text", "valueString": "K 4.1 today."}, {"name": "time", "valueDateTime": NOW}]},
             "headers": FHIR, "control": True}],
        ("GET", "/views"): [{}],
        ("GET", "/Patient/{id}/views/{view}"): [
            *[{"path": {"id": b, "view": v}} for v in VIEWS],
            *[{"path": {"id": b, "view": v}, "params": {"name": "a", "since": "1900-01-01"}} for v in VIEWS],
            *[{"path": {"id": a, "view": v}, "control": v in ("observation", "patient")} for v in VIEWS]],
        ("POST", "/$viewdefinition-run"): [
            {"json": VIEWDEF, "headers": FHIR, "control": True},  # no patient given: the token's patient only
            {"json": {**VIEWDEF, "resource": "Patient"}, "headers": FHIR, "control": True},
            {"json": {"resourceType": "Parameters", "parameter": [
                {"name": "viewResource", "resource": VIEWDEF},
                {"name": "patient", "valueReference": {"reference": f"Patient/{b}"}}]}, "headers": FHIR},
            {"json": {"resourceType": "Parameters", "parameter": [
                {"name": "viewResource", "resource": VIEWDEF}, {"name": "_format", "valueCode": "csv"}]},
             "headers": FHIR, "control": True}],
        ("POST", "/$ingest"): [{"content": b'{"resourceType":"Patient","id":"x"}\n',
                                "headers": {"Content-Type": "application/fhir+ndjson"}}],
        ("POST", "/$pull"): [{"json": {"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://127.0.0.1:9/fhir"}, {"name": "patient", "valueString": b}]},
            "headers": FHIR}],
        ("GET", "/jobs/{job_id}"): [{"path": {"job_id": b_job}}, {"path": {"job_id": a_job}, "control": True}],
        ("GET", "/jobs"): [{"control": True}],
    }
    assert (method, path) in table, f"the isolation walk does not know {method} {path}: add it here"
    return table[(method, path)]


def _body_text(response: httpx.Response) -> str:
    return response.text + "\n" + "\n".join(f"{k}: {v}" for k, v in response.headers.items())


def test_patient_a_token_never_reaches_patient_b(server, ids):
    a, b = ids[NAME_A], ids[NAME_B]
    store = fhirqa.Store(server.config.db)
    b_markers = _markers(store, b, NAME_B)
    a_markers = _markers(store, a, NAME_A)
    token_a = server.token("patient/*.rs patient/*.cruds user/*.rs system/*.rs", a)  # every scope; patient A
    with server.client(server.token("system/*.rs")) as admin, server.client(token_a) as http:
        # A job about B (started by a system client) and one about A (started by A's app itself).
        b_job = admin.post(f"/Patient/{b}/$ask", json=ask_parameters("last A1c"),
                           headers={**FHIR, "Prefer": "respond-async"}).headers["Content-Location"].rsplit("/", 1)[1]
        a_job = http.post(f"/Patient/{a}/$ask", json=ask_parameters("last A1c"),
                          headers={**FHIR, "Prefer": "respond-async"}).headers["Content-Location"].rsplit("/", 1)[1]
        wait_for_job(admin, f"/jobs/{b_job}")
        wait_for_job(http, f"/jobs/{a_job}")

        schema = http.get("/openapi.json").json()
        walked = controls = 0
        for path, operations in schema["paths"].items():
            for method in operations:
                for spec in _requests(method.upper(), path, a, b, b_job, a_job):
                    url = path.format(**spec.get("path", {}))
                    response = http.request(method.upper(), url, params=spec.get("params"), json=spec.get("json"),
                                            content=spec.get("content"), data=spec.get("data"),
                                            headers=spec.get("headers"))
                    walked += 1
                    text = _body_text(response)
                    leaked = sorted(m for m in b_markers if m in text)
                    assert not leaked, f"{method.upper()} {url} returned patient B's data: {leaked[:3]}"
                    assert response.status_code < 500, f"{method.upper()} {url}: {response.status_code}"
                    if spec.get("control"):
                        assert response.status_code in (200, 202), f"{method.upper()} {url}: {response.text[:300]}"
                        controls += 1
        assert walked >= 50 and controls >= 8

        # The controls did reach A's data (so "no B" is not "nothing at all").
        rows = http.get(f"/Patient/{a}/views/observation").json()["rows"]
        assert rows and {r["patient_id"] for r in rows} == {a}
        run = http.post("/$viewdefinition-run", json=VIEWDEF, headers=FHIR).json()
        assert run and {r["subject"] for r in run} == {f"Patient/{a}"}
        assert any(m in http.get(f"/Patient/{a}/views/patient").text for m in a_markers)
        listed = http.get("/jobs").json()["jobs"]
        assert [j["id"] for j in listed] == [a_job]
