"""$ask over HTTP: FHIR Parameters and the plain-JSON twin, async jobs, the SSE stream, patient lookup."""

from __future__ import annotations

import json

import fhirqa
from tests.server.conftest import NAME_A, NOW, ask_parameters, outcome_text, wait_for_job

QUESTION = "What was her last A1c?"


def _params(body: dict, name: str) -> list[dict]:
    return [p for p in body["parameter"] if p["name"] == name]


def test_fhir_ask_returns_parameters_with_evidence_and_provenance(server, ids):
    patient = ids[NAME_A]
    with server.client(server.token("patient/*.rs", patient)) as http:
        response = http.post(f"/Patient/{patient}/$ask", json=ask_parameters(QUESTION),
                             headers={"Content-Type": "application/fhir+json"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/fhir+json")
    body = response.json()
    assert body["resourceType"] == "Parameters"
    assert _params(body, "answer") == [{"name": "answer", "valueDecimal": 7.1}]
    assert _params(body, "status")[0]["valueCode"] == "answered"
    assert _params(body, "unit")[0]["valueString"] == "%"
    evidence = _params(body, "evidence")
    assert evidence, body
    reference = next(p for p in evidence[0]["part"] if p["name"] == "reference")["valueReference"]["reference"]
    assert reference.startswith("Observation/") and len(reference.split("/")) == 2
    provenance = _params(body, "provenance")[0]["resource"]
    assert provenance["resourceType"] == "Provenance"
    assert provenance["meta"]["security"][0]["code"] == "AIAST"  # machine-generated
    assert {"reference": f"Patient/{patient}"} in provenance["target"]
    assert {"role": "source", "what": {"reference": reference}} in provenance["entity"]


def test_json_twin_matches_the_python_api(server, ids):
    patient = ids[NAME_A]
    with server.client(server.token("system/*.rs")) as http:
        response = http.post(f"/api/patients/{patient}/ask", json={"question": QUESTION, "now": NOW})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    expected = fhirqa.ask(QUESTION, patient_id=patient, now=NOW, db=server.config.db).to_dict()
    got = response.json()
    for key in ("answer", "text", "status", "unit", "evidence", "backend"):
        assert got[key] == expected[key], key


def test_cache_is_bypassed_with_no_cache(server, ids):
    patient = ids[NAME_A]
    with server.client(server.token("system/*.rs")) as http:
        first = http.post(f"/api/patients/{patient}/ask", json={"question": "last potassium", "now": NOW})
        hits = server.state.asker.hits
        again = http.post(f"/api/patients/{patient}/ask", json={"question": "last potassium", "now": NOW})
        assert server.state.asker.hits == hits + 1
        fresh = http.post(f"/api/patients/{patient}/ask", json={"question": "last potassium", "now": NOW},
                          headers={"Cache-Control": "no-cache"})
        assert server.state.asker.hits == hits + 1
    assert first.json()["answer"] == again.json()["answer"] == fresh.json()["answer"]


def test_respond_async_gives_202_and_a_job_to_poll(server, ids):
    patient = ids[NAME_A]
    with server.client(server.token("patient/*.rs", patient)) as http:
        response = http.post(f"/Patient/{patient}/$ask", json=ask_parameters("Did her potassium ever exceed 5.0?"),
                             headers={"Prefer": "respond-async", "Content-Type": "application/fhir+json"})
        assert response.status_code == 202, response.text
        location = response.headers["Content-Location"]
        assert location.startswith(server.url + "/jobs/")
        job = wait_for_job(http, location)
    assert job["status"] == "completed" and job["kind"] == "ask"
    assert job["result"]["resourceType"] == "Parameters"
    assert _params(job["result"], "status")[0]["valueCode"] == "answered"


def test_stream_emits_plan_tool_and_answer_events(server, ids):
    patient = ids[NAME_A]
    events = []
    with server.client(server.token("patient/*.rs", patient)) as http, \
            http.stream("GET", f"/Patient/{patient}/$ask/stream", params={"question": QUESTION, "now": NOW}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[len("data: "):])))
    names = [n for n, _ in events]
    assert names[0] == "plan" and "tool" in names and names[-1] == "answer", names
    assert events[0][1]["views"] == ["observation"]
    assert events[-1][1]["answer"] == [7.1]


def test_patient_lookup_needs_system_scope(server, ids):
    question = {"question": "Which patient is Linda Taylor?"}
    with server.client(server.token("system/*.rs")) as http:
        response = http.post("/api/ask", json=question)
        assert response.status_code == 200, response.text
        assert response.json()["answer"] == [ids[NAME_A]]
        fhir = http.post("/$ask", json=ask_parameters(question["question"], None),
                         headers={"Content-Type": "application/fhir+json"})
        assert fhir.status_code == 200 and _params(fhir.json(), "answer")[0]["valueString"] == ids[NAME_A]
    for token in (server.token("user/*.rs"), server.token("patient/*.rs", ids[NAME_A]),
                  server.token("system/*.rs", ids[NAME_A])):
        with server.client(token) as http:
            response = http.post("/api/ask", json=question)
        assert response.status_code == 403, response.text
        outcome_text(response)


def test_bad_input_is_an_operation_outcome(server, ids):
    patient = ids[NAME_A]
    with server.client(server.token("system/*.rs")) as http:
        cases = {
            "no question": http.post(f"/Patient/{patient}/$ask", json={"resourceType": "Parameters", "parameter": []},
                                     headers={"Content-Type": "application/fhir+json"}),
            "not Parameters": http.post(f"/Patient/{patient}/$ask", json={"question": "x"},
                                        headers={"Content-Type": "application/fhir+json"}),
            "bad now": http.post(f"/api/patients/{patient}/ask", json={"question": "x", "now": "yesterday"}),
            "unknown backend": http.post(f"/api/patients/{patient}/ask", json={"question": "x", "backend": "gpt"}),
            "unknown field": http.post(f"/api/patients/{patient}/ask", json={"question": "x", "sql": "DROP"}),
            "malformed JSON": http.post(f"/api/patients/{patient}/ask", content=b"{nope",
                                        headers={"Content-Type": "application/json"}),
            "bad patient id": http.post("/api/patients/a%20b/ask", json={"question": "x"}),
        }
        for what, response in cases.items():
            assert response.status_code == 400, (what, response.text)
            assert outcome_text(response), what
        wrong_type = http.post(f"/api/patients/{patient}/ask", content=b"question=x",
                               headers={"Content-Type": "text/plain"})
        assert wrong_type.status_code == 415
        missing = http.post("/api/patients/no-such-patient/ask", json={"question": "x"})
        assert missing.status_code == 404 and "no such patient" in outcome_text(missing)
        for path, method in (("/nowhere", "GET"), ("/metadata", "DELETE")):
            response = http.request(method, path)
            assert response.status_code in (404, 405)
            outcome_text(response)
