"""The shared HTTP layer: retries with backoff, Retry-After, and errors that name URL, status and reason."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fhirqa.errors import SourceError
from fhirqa.sources.http import (
    HttpStatusError,
    NotJsonError,
    RetryPolicy,
    iter_byte_lines,
    parse_retry_after,
    redact_url,
)
from tests.sources.fake import BASE, FakeServer, fhir_json, html_page, outcome, patient

URL = f"{BASE}/Patient/p1"


def test_429_with_retry_after_seconds_is_retried_after_that_many_seconds():
    server = FakeServer().on(
        "GET",
        URL,
        httpx.Response(429, headers={"Retry-After": "7"}, json=outcome("slow down", "throttled")),
        fhir_json(patient("p1")),
    )
    _, body = server.http().get_json(URL)
    assert body["id"] == "p1"
    assert server.sleeps == [7.0]


def test_429_with_retry_after_http_date_waits_until_that_date():
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server = FakeServer().on(
        "GET", URL, httpx.Response(429, headers={"Retry-After": when}), fhir_json(patient("p1"))
    )
    server.http().get_json(URL)
    assert 25 <= server.sleeps[0] <= 30


def test_an_absurd_retry_after_is_capped():
    server = FakeServer().on("GET", URL, httpx.Response(503, headers={"Retry-After": "86400"}), fhir_json({}))
    server.http(max_retry_after=60).get_json(URL)
    assert server.sleeps == [60]


def test_500_then_success_is_retried_with_growing_jittered_backoff():
    server = FakeServer().on("GET", URL, httpx.Response(500), httpx.Response(502), fhir_json(patient("p1")))
    _, body = server.http(base=1.0).get_json(URL)
    assert body["id"] == "p1"
    assert len(server.sleeps) == 2
    assert 0.5 <= server.sleeps[0] <= 1.0 and 1.0 <= server.sleeps[1] <= 2.0


def test_permanent_500_raises_source_error_naming_url_status_and_reason():
    server = FakeServer().on("GET", URL, fhir_json(outcome("database is down", "exception"), status=500))
    with pytest.raises(HttpStatusError) as caught:
        server.http(attempts=3).get_json(URL)
    message = str(caught.value)
    assert URL in message and "HTTP 500" in message and "database is down" in message
    assert len(server.requests) == 3 and len(server.sleeps) == 2


def test_501_is_an_answer_not_retried():
    server = FakeServer().on("GET", URL, fhir_json(outcome("not implemented", "not-supported"), status=501))
    with pytest.raises(HttpStatusError) as caught:
        server.http().get_json(URL)
    assert caught.value.status == 501 and len(server.requests) == 1


def test_connection_errors_are_retried_then_reported_as_unreachable():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    server = FakeServer().on("GET", URL, refuse)
    with pytest.raises(SourceError, match="failed after 4 attempts: ConnectError.*reachable") as caught:
        server.http(attempts=4).get_json(URL)
    assert URL in str(caught.value)


def test_a_timeout_then_success_is_retried():
    def time_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("read timed out", request=request)

    server = FakeServer().on("GET", URL, time_out, fhir_json(patient("p1")))
    assert server.http().get_json(URL)[1]["id"] == "p1"


def test_401_without_renewable_credentials_is_a_source_error_with_a_hint():
    challenge = {"WWW-Authenticate": 'Bearer realm="fhir"'}
    server = FakeServer().on(
        "GET", URL, fhir_json(outcome("Authentication required", "login"), 401, **challenge)
    )
    with pytest.raises(
        HttpStatusError, match=r"HTTP 401: Authentication required — the server wants credentials"
    ):
        server.http().get_json(URL)


def test_403_names_the_scopes_as_the_likely_cause():
    server = FakeServer().on("GET", URL, fhir_json(outcome("scope does not permit Patient"), 403))
    with pytest.raises(HttpStatusError, match="scopes"):
        server.http().get_json(URL)


def test_an_html_page_instead_of_json_is_reported_as_such():
    server = FakeServer().on("GET", URL, html_page())
    with pytest.raises(NotJsonError, match="HTML page instead of FHIR JSON"):
        server.http().get_json(URL)


def test_an_html_error_page_reason_says_html():
    server = FakeServer().on("GET", URL, html_page(404))
    with pytest.raises(HttpStatusError, match="HTML page"):
        server.http().get_json(URL)


def test_retry_after_parsing():
    now = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Fri, 01 Mar 2024 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Fri, 01 Mar 2024 11:00:00 GMT", now) == 0.0  # in the past: go now
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


@given(st.integers(min_value=0, max_value=20), st.integers(min_value=0, max_value=2**32))
def test_backoff_stays_between_half_and_full_capped_exponential(attempt, seed):
    policy = RetryPolicy(base=0.5, cap=30.0, rng=random.Random(seed))
    ceiling = min(30.0, 0.5 * 2**attempt)
    assert ceiling / 2 <= policy.backoff(attempt) <= ceiling


def test_credentials_in_urls_are_redacted():
    url = "https://bucket.example.org/x.ndjson?X-Amz-Signature=abc&X-Amz-Credential=k&part=2&access_token=t"
    shown = redact_url(url)
    assert "abc" not in shown and "=t" not in shown and "part=2" in shown


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_byte_lines_are_the_same_however_the_stream_is_chunked(chunks):
    *complete, last = b"".join(chunks).split(b"\n")
    expected = [line + b"\n" for line in complete] + ([last] if last else [])
    assert list(iter_byte_lines(iter(chunks))) == expected
