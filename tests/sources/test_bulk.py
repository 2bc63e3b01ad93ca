"""Bulk Data $export over a scripted server: kick-off, polling, manifest, streamed files, cleanup."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from fhirqa.errors import SourceError
from fhirqa.sources.auth import BearerToken
from fhirqa.sources.bulk import BulkExportSource
from tests.sources.fake import BASE, FakeServer, fhir_json, html_page, observation, outcome, patient

STATUS = f"{BASE}/$export-poll-status?_jobId=7c1d9e"
FILES = "https://bulk.example.org/output/7c1d9e"


def ndjson(*items) -> httpx.Response:
    text = "".join(json.dumps(i) + "\n" for i in items)
    return httpx.Response(200, text=text, headers={"Content-Type": "application/fhir+ndjson"})


def deleted_bundle(*refs: str) -> dict:
    """One line of a ``deleted`` file: a transaction Bundle of DELETE requests (Bulk Data 2.0)."""
    return {
        "resourceType": "Bundle",
        "type": "transaction",
        "entry": [{"request": {"method": "DELETE", "url": ref}} for ref in refs],
    }


def manifest(requires_token: bool = True, **extra) -> dict:
    return {
        "transactionTime": "2024-03-01T10:00:00.000+00:00",
        "request": f"{BASE}/$export?_type=Patient,Observation",
        "requiresAccessToken": requires_token,
        "output": [
            {"type": "Patient", "url": f"{FILES}/Patient.ndjson", "count": 2},
            {"type": "Observation", "url": f"{FILES}/Observation.ndjson", "count": 3},
        ],
        "deleted": [{"type": "Bundle", "url": f"{FILES}/deleted.ndjson"}],
        "error": [{"type": "OperationOutcome", "url": f"{FILES}/errors.ndjson"}],
        **extra,
    }


def exporting_server(requires_token: bool = True, kickoff: str = f"{BASE}/$export") -> FakeServer:
    server = FakeServer()
    server.on("GET", kickoff, httpx.Response(202, headers={"Content-Location": STATUS}))
    server.on(
        "GET",
        STATUS,
        httpx.Response(202, headers={"X-Progress": "collecting", "Retry-After": "3"}),
        httpx.Response(202, headers={"X-Progress": "writing 40%"}),
        httpx.Response(
            200, json=manifest(requires_token), headers={"Expires": "Fri, 01 Mar 2024 11:00:00 GMT"}
        ),
    )
    server.on("DELETE", STATUS, httpx.Response(202))
    server.on("GET", f"{FILES}/Patient.ndjson", ndjson(patient("p1"), patient("p2")))
    server.on(
        "GET",
        f"{FILES}/Observation.ndjson",
        ndjson(observation("o1", absolute=False), observation("o2", "p2", absolute=False), observation("o3")),
    )
    server.on("GET", f"{FILES}/deleted.ndjson", ndjson(deleted_bundle("Patient/p9", "Observation/o9")))
    server.on(
        "GET",
        f"{FILES}/errors.ndjson",
        ndjson(outcome("Observation/o7 could not be serialized: value too large", "too-costly")),
    )
    return server


def run(server: FakeServer, **kwargs):
    messages: list[str] = []
    source = BulkExportSource(
        BASE,
        client=server.http(),
        progress=messages.append,
        sleep=server.sleeps.append,
        poll_interval=5,
        **kwargs,
    )
    return list(source.records()), messages, source


def test_export_kicks_off_polls_and_streams_every_output_file():
    server = exporting_server()
    records, messages, source = run(server, types=["Patient", "Observation"], since="2024-01-01T00:00:00Z")
    resources = [r.resource for r in records if r.resource is not None and not r.deleted]
    assert [(r["resourceType"], r["id"]) for r in resources] == [
        ("Patient", "p1"),
        ("Patient", "p2"),
        ("Observation", "o1"),
        ("Observation", "o2"),
        ("Observation", "o3"),
    ]
    kickoff = server.requests[0]
    assert (
        kickoff.headers["prefer"] == "respond-async" and kickoff.headers["accept"] == "application/fhir+json"
    )
    assert parse_qs(urlsplit(str(kickoff.url)).query) == {
        "_type": ["Patient,Observation"],
        "_since": ["2024-01-01T00:00:00Z"],
    }
    assert server.sleeps == [3.0, 5.0]  # Retry-After first, then our poll interval
    assert any("collecting" in m for m in messages) and any("writing 40%" in m for m in messages)
    assert records[2].origin.location == f"{FILES}/Observation.ndjson" and records[2].origin.line == 1
    assert source.manifest["transactionTime"] == "2024-03-01T10:00:00.000+00:00"


def test_deleted_outputs_become_deletion_records():
    records, _, _ = run(exporting_server())
    deletions = [r for r in records if r.deleted]
    assert [r.resource for r in deletions] == [
        {"resourceType": "Patient", "id": "p9"},
        {"resourceType": "Observation", "id": "o9"},
    ]


def test_error_outputs_become_problem_records_with_their_diagnostics():
    records, _, _ = run(exporting_server())
    [problem] = [r for r in records if r.problem]
    assert "value too large" in problem.problem and problem.origin.location == f"{FILES}/errors.ndjson"
    assert "OperationOutcome" in problem.raw


def test_warnings_in_error_outputs_are_notes_not_problems():
    server = exporting_server()
    warning = outcome("Ignored unsupported parameters: ['_elements']", "not-supported", severity="warning")
    server.routes[("GET", f"{FILES}/errors.ndjson")] = [ndjson(warning)]
    records, _, source = run(server)
    assert not [r for r in records if r.problem]
    assert "_elements" in source.notes[0] and "errors.ndjson:1" in source.notes[0]


def test_the_job_is_deleted_when_done():
    server = exporting_server()
    run(server)
    assert server.urls("DELETE") == [STATUS]


def test_the_job_is_deleted_when_the_reader_stops_early():
    server = exporting_server()
    source = BulkExportSource(BASE, client=server.http(), sleep=server.sleeps.append)
    records = source.records()
    next(records)
    records.close()
    assert server.urls("DELETE") == [STATUS]


def test_token_goes_to_files_only_when_the_manifest_requires_it():
    for requires in (True, False):
        server = exporting_server(requires_token=requires)
        http = server.http()
        source = BulkExportSource(BASE, client=http, auth=BearerToken("t0k"), sleep=server.sleeps.append)
        list(source.records())
        file_requests = [r for r in server.requests if r.url.host == "bulk.example.org"]
        assert len(file_requests) == 4
        assert all(("authorization" in r.headers) is requires for r in file_requests)
        assert all(
            r.headers["authorization"] == "Bearer t0k"
            for r in server.requests
            if r.url.host == "fhir.example.org"
        )


def test_group_and_patient_level_kick_off_urls():
    server = exporting_server(kickoff=f"{BASE}/Group/g1/$export")
    records, _, _ = run(server, group="g1")
    assert records and str(server.requests[0].url).startswith(f"{BASE}/Group/g1/$export")
    server = exporting_server(kickoff=f"{BASE}/Patient/$export")
    run(server, patient_level=True)
    assert str(server.requests[0].url).startswith(f"{BASE}/Patient/$export")


def test_a_refused_kick_off_is_a_source_error_with_the_outcome_text():
    server = FakeServer().on(
        "GET",
        f"{BASE}/$export",
        fhir_json(outcome("Resource type Foo is not supported", "not-supported"), 400),
    )
    with pytest.raises(SourceError, match=r"kick-off .* HTTP 400: Resource type Foo is not supported"):
        run(server, types=["Foo"])
    assert server.urls("DELETE") == []


def test_a_server_without_export_is_told_apart():
    server = FakeServer().on(
        "GET", f"{BASE}/$export", fhir_json({"resourceType": "Bundle", "type": "searchset"})
    )
    with pytest.raises(SourceError, match="expected 202 Accepted.*support \\$export"):
        run(server)


def test_a_failed_export_is_a_source_error_with_the_outcome_text_and_the_job_is_deleted():
    server = exporting_server()
    server.routes[("GET", STATUS)] = [fhir_json(outcome("export failed: disk full", "exception"), 500)]
    with pytest.raises(SourceError, match="HTTP 500: export failed: disk full"):
        run(server)
    assert server.urls("DELETE") == [STATUS]


def test_an_export_that_never_finishes_times_out_and_is_cancelled():
    server = exporting_server()
    server.routes[("GET", STATUS)] = [
        httpx.Response(202, headers={"X-Progress": "stuck", "Retry-After": "10"})
    ]
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    source = BulkExportSource(BASE, client=server.http(), sleep=sleep, clock=lambda: now[0], timeout=35)
    with pytest.raises(SourceError, match="did not finish within 35 s.*stuck"):
        list(source.records())
    assert server.urls("DELETE") == [STATUS] and now[0] == 35


def test_a_missing_file_is_a_problem_and_the_other_files_are_still_read():
    server = exporting_server()
    server.routes[("GET", f"{FILES}/Patient.ndjson")] = [
        httpx.Response(404, text="<?xml version='1.0'?><Error><Code>NoSuchKey</Code></Error>")
    ]
    records, _, _ = run(server)
    assert [r.resource["id"] for r in records if r.resource and not r.deleted] == ["o1", "o2", "o3"]
    missing = next(r.problem for r in records if r.problem and "not downloaded" in r.problem)
    assert "HTTP 404" in missing and "Patient.ndjson" in missing


def test_an_html_page_instead_of_ndjson_is_a_problem():
    server = exporting_server()
    server.routes[("GET", f"{FILES}/Patient.ndjson")] = [html_page()]
    records, _, _ = run(server)
    assert any(r.problem and "HTML page, not NDJSON" in r.problem for r in records)


def test_a_malformed_line_is_a_problem_and_the_rest_of_the_file_is_read():
    server = exporting_server()
    body = json.dumps(patient("p1")) + "\n{truncated\n" + json.dumps(patient("p2")) + "\n"
    server.routes[("GET", f"{FILES}/Patient.ndjson")] = [httpx.Response(200, text=body)]
    records, _, _ = run(server)
    patients = [r for r in records if str(r.origin.location).endswith("Patient.ndjson")]
    assert [r.resource["id"] if r.resource else r.origin.line for r in patients] == ["p1", 2, "p2"]


def test_a_download_cut_off_midway_keeps_the_lines_read():
    server = exporting_server()

    class Broken(httpx.SyncByteStream):
        def __iter__(self):
            yield (json.dumps(patient("p1")) + "\n").encode()
            raise httpx.ReadError("connection reset by peer")

    server.routes[("GET", f"{FILES}/Patient.ndjson")] = [httpx.Response(200, stream=Broken())]
    records, _, _ = run(server)
    from_file = [r for r in records if str(r.origin.location).endswith("Patient.ndjson")]
    assert from_file[0].resource["id"] == "p1" and "interrupted" in from_file[1].problem


def test_a_rate_limited_poll_is_retried():
    server = exporting_server()
    server.routes[("GET", STATUS)].insert(0, httpx.Response(429, headers={"Retry-After": "4"}))
    records, _, _ = run(server)
    assert server.sleeps[0] == 4.0 and len([r for r in records if r.resource]) == 7
