"""A scripted FHIR server for httpx.MockTransport, with payloads shaped like real servers' answers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx

from fhirqa.sources.http import FhirHttp, RetryPolicy

BASE = "https://fhir.example.org/r4"
Reply = httpx.Response | Callable[[httpx.Request], httpx.Response]


class FakeServer:
    """Answers requests from a script: ``(method, url)`` -> replies, used in order, the last one repeating.

    URLs are matched with their query string exactly as sent, else without it (so a script can ignore
    parameters). Every request is kept in ``requests`` for assertions.
    """

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Reply]] = defaultdict(list)
        self.requests: list[httpx.Request] = []
        self.sleeps: list[float] = []

    def on(self, method: str, url: str, *replies: Reply) -> FakeServer:
        self.routes[(method, url)].extend(replies)
        return self

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        url = str(request.url)
        for key in ((request.method, url), (request.method, url.split("?", 1)[0])):
            replies = self.routes.get(key)
            if replies:
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
                return reply(request) if callable(reply) else reply
        return httpx.Response(404, json=outcome(f"no route for {request.method} {url}", code="not-found"))

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self.handler))

    def http(self, **retry: Any) -> FhirHttp:
        """A FhirHttp over this server whose retries sleep instantly (delays land in ``sleeps``)."""
        policy = RetryPolicy(sleep=self.sleeps.append, **({"base": 0.01} | retry))
        return FhirHttp(self.client(), retry=policy)

    def urls(self, method: str | None = None) -> list[str]:
        return [str(r.url) for r in self.requests if method is None or r.method == method]


def outcome(text: str, code: str = "processing", severity: str = "error") -> dict[str, Any]:
    return {
        "resourceType": "OperationOutcome",
        "issue": [{"severity": severity, "code": code, "diagnostics": text}],
    }


def fhir_json(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers={"Content-Type": "application/fhir+json", **headers})


def patient(pid: str) -> dict[str, Any]:
    return {
        "resourceType": "Patient",
        "id": pid,
        "meta": {"versionId": "1", "lastUpdated": "2024-03-01T10:00:00.000+00:00"},
        "name": [{"family": "Example", "given": ["Pat"]}],
        "gender": "female",
        "birthDate": "1970-01-01",
    }


def observation(oid: str, pid: str = "p1", absolute: bool = True) -> dict[str, Any]:
    subject = f"{BASE}/Patient/{pid}" if absolute else f"Patient/{pid}"
    return {
        "resourceType": "Observation",
        "id": oid,
        "meta": {"versionId": "1", "lastUpdated": "2024-03-01T10:00:00.000+00:00"},
        "status": "final",
        "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"}]},
        "subject": {"reference": subject},
        "valueQuantity": {"value": 72, "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"},
    }


def searchset(resources: list[dict[str, Any]], self_url: str, next_url: str | None = None) -> dict[str, Any]:
    """A searchset page as HAPI-like servers send it: absolute fullUrls, self and next links."""
    links = [{"relation": "self", "url": self_url}]
    if next_url:
        links.append({"relation": "next", "url": next_url})
    return {
        "resourceType": "Bundle",
        "id": "b0f1c2d3",
        "meta": {"lastUpdated": "2024-03-01T10:00:05.000+00:00"},
        "type": "searchset",
        "link": links,
        "entry": [
            {
                "fullUrl": f"{BASE}/{r['resourceType']}/{r['id']}",
                "resource": r,
                "search": {"mode": "match"},
            }
            for r in resources
        ],
    }


def html_page(status: int = 200) -> httpx.Response:
    body = "<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>Login</form></body></html>"
    return httpx.Response(status, text=body, headers={"Content-Type": "text/html; charset=utf-8"})
