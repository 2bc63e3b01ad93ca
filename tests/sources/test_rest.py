"""REST source over a scripted server: paging, $everything and its fallback, broken and looping links."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from fhirqa.errors import SourceError
from fhirqa.sources.bulk import BulkExportSource
from fhirqa.sources.rest import CLINICAL_TYPES, FhirRestSource, open_server_source
from tests.sources.fake import (
    BASE,
    FakeServer,
    fhir_json,
    html_page,
    observation,
    outcome,
    patient,
    searchset,
)

EVERYTHING = f"{BASE}/Patient/p1/$everything"


def page_url(n: int) -> str:
    return f"{BASE}/Observation?_getpages=abc123&_getpagesoffset={n * 2}&_count=2&_bundletype=searchset"


def paged_observations(server: FakeServer, pages: int = 3) -> list[str]:
    """Script a search of ``pages`` pages of two Observations each; return their ids."""
    ids = []
    for n in range(pages):
        obs = [observation(f"o{2 * n}"), observation(f"o{2 * n + 1}")]
        ids += [o["id"] for o in obs]
        nxt = page_url(n + 1) if n + 1 < pages else None
        url = f"{BASE}/Observation" if n == 0 else page_url(n)
        server.on("GET", url, fhir_json(searchset(obs, page_url(n), nxt)))
    return ids


def ids(records) -> list[str]:
    return [r.resource["id"] for r in records if r.resource is not None]


def problems(records) -> list[str]:
    return [r.problem for r in records if r.problem is not None]


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_type_search_follows_next_links_across_pages():
    server = FakeServer()
    expected = paged_observations(server, pages=4)
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http(), page_size=2).records())
    assert ids(records) == expected and problems(records) == []
    assert query(server.urls()[0]) == {"_count": ["2"]}
    # references are rewritten to Type/id and each record says which page it came from
    assert records[0].resource["subject"]["reference"] == "Patient/p1"
    assert records[2].origin.location == page_url(1) and records[2].origin.entry == 0


def test_since_becomes_last_updated_ge():
    server = FakeServer().on("GET", f"{BASE}/Condition", fhir_json(searchset([], f"{BASE}/Condition")))
    list(
        FhirRestSource(
            BASE, types=["Condition"], since="2024-01-01T00:00:00Z", client=server.http()
        ).records()
    )
    assert query(server.urls()[0])["_lastUpdated"] == ["ge2024-01-01T00:00:00Z"]


def test_without_types_every_common_clinical_type_is_searched():
    server = FakeServer()
    for rtype in CLINICAL_TYPES:
        server.on("GET", f"{BASE}/{rtype}", fhir_json(searchset([], f"{BASE}/{rtype}")))
    list(FhirRestSource(BASE, client=server.http()).records())
    assert [urlsplit(u).path.rsplit("/", 1)[-1] for u in server.urls()] == list(CLINICAL_TYPES)


def test_a_type_the_server_does_not_know_is_a_problem_and_the_others_are_still_read():
    server = FakeServer()
    server.on("GET", f"{BASE}/Goal", fhir_json(outcome("Unknown resource type 'Goal'", "not-supported"), 404))
    server.on("GET", f"{BASE}/Patient", fhir_json(searchset([patient("p1")], f"{BASE}/Patient")))
    records = list(FhirRestSource(BASE, types=["Goal", "Patient"], client=server.http()).records())
    assert ids(records) == ["p1"]
    assert "Goal not read" in problems(records)[0] and "Unknown resource type" in problems(records)[0]


def test_a_default_type_the_server_lacks_is_a_note_not_a_problem():
    server = FakeServer()
    for rtype in CLINICAL_TYPES:
        server.on("GET", f"{BASE}/{rtype}", fhir_json(searchset([], f"{BASE}/{rtype}")))
    server.routes[("GET", f"{BASE}/Goal")] = [
        fhir_json(outcome("Unknown resource type 'Goal'", "not-supported"), 404)
    ]
    source = FhirRestSource(BASE, client=server.http())
    assert list(source.records()) == []
    assert len(source.notes) == 1 and "Goal not read" in source.notes[0]


def test_everything_is_paged_and_passes_since_and_count():
    server = FakeServer()
    first = searchset(
        [patient("p1"), observation("o1")], EVERYTHING, f"{BASE}?_getpages=e1&_getpagesoffset=2"
    )
    second = searchset([observation("o2")], f"{BASE}?_getpages=e1&_getpagesoffset=2")
    server.on("GET", EVERYTHING, fhir_json(first)).on("GET", f"{BASE}", fhir_json(second))
    source = FhirRestSource(BASE, patient="p1", since="2024-02-01", client=server.http(), page_size=50)
    records = list(source.records())
    assert ids(records) == ["p1", "o1", "o2"]
    assert query(server.urls()[0]) == {"_count": ["50"], "_since": ["2024-02-01"]}


def test_without_everything_the_patient_is_read_and_its_resources_searched():
    server = FakeServer()
    server.on(
        "GET", EVERYTHING, fhir_json(outcome("Operation $everything is not supported", "not-supported"), 404)
    )
    server.on("GET", f"{BASE}/Patient/p1", fhir_json(patient("p1")))
    server.on("GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], f"{BASE}/Observation")))
    # Condition knows only `subject`: the strict server refuses `patient`
    server.on(
        "GET",
        f"{BASE}/Condition",
        lambda req: (
            fhir_json(outcome("Unknown search parameter 'patient'"), 400)
            if "patient=" in str(req.url)
            else fhir_json(searchset([], str(req.url)))
        ),
    )
    source = FhirRestSource(
        BASE, patient="p1", types=["Patient", "Observation", "Condition"], client=server.http()
    )
    records = list(source.records())
    assert ids(records) == ["p1", "o1"] and problems(records) == []
    assert "no $everything" in source.notes[0]
    searches = [r for r in server.requests if r.url.path.endswith(("Observation", "Condition"))]
    assert all(r.headers["prefer"] == "handling=strict" for r in searches)
    assert query(str(searches[0].url))["patient"] == ["Patient/p1"]
    assert query(str(searches[-1].url))["subject"] == ["Patient/p1"]


def test_fallback_for_an_unknown_patient_is_a_source_error():
    server = FakeServer()
    server.on("GET", EVERYTHING, fhir_json(outcome("Patient/p1 not found", "not-found"), 404))
    server.on("GET", f"{BASE}/Patient/p1", fhir_json(outcome("Patient/p1 not found", "not-found"), 404))
    with pytest.raises(SourceError, match=r"Patient/p1 failed: HTTP 404: Patient/p1 not found"):
        list(FhirRestSource(BASE, patient="p1", client=server.http()).records())


def test_a_broken_next_link_is_a_problem_and_the_pages_before_it_are_kept():
    server = FakeServer()
    server.on(
        "GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], page_url(0), page_url(1)))
    )
    server.on("GET", page_url(1), fhir_json(searchset([observation("o2")], page_url(1), page_url(2))))
    server.on(
        "GET", page_url(2), fhir_json(outcome("Search result set abc123 has expired", "not-found"), 404)
    )
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert ids(records) == ["o1", "o2"]
    [problem] = problems(records)
    assert "paging stopped at page 3" in problem and "HTTP 404" in problem and "expired" in problem
    assert page_url(2) in problem


def test_a_next_link_back_to_a_page_already_read_stops_paging():
    server = FakeServer()
    server.on(
        "GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], page_url(0), page_url(1)))
    )
    server.on("GET", page_url(1), fhir_json(searchset([observation("o2")], page_url(1), page_url(1))))
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert ids(records) == ["o1", "o2"]
    assert "points back to a page already read" in problems(records)[0]
    assert len(server.requests) == 2


def test_endless_empty_pages_with_fresh_next_links_stop_paging():
    def endless(request: httpx.Request) -> httpx.Response:
        n = int(request.url.params.get("page", "0"))
        return fhir_json(searchset([], str(request.url), f"{BASE}/Observation?page={n + 1}"))

    server = FakeServer().on("GET", f"{BASE}/Observation", endless)
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert "empty pages in a row" in problems(records)[0] and len(server.requests) == 5


def test_a_next_link_to_another_host_is_not_followed():
    server = FakeServer()
    evil = "https://elsewhere.example.net/steal?page=2"
    server.on("GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], page_url(0), evil)))
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert ids(records) == ["o1"] and "goes to another host" in problems(records)[0]
    assert all("elsewhere" not in u for u in server.urls())


def test_a_relative_next_link_is_resolved_against_the_page():
    server = FakeServer()
    server.on(
        "GET",
        f"{BASE}/Observation",
        fhir_json(searchset([observation("o1")], page_url(0), "Observation?page=2")),
    )
    server.on("GET", f"{BASE}/Observation?page=2", fhir_json(searchset([observation("o2")], "x")))
    assert ids(FhirRestSource(BASE, types=["Observation"], client=server.http()).records()) == ["o1", "o2"]


def test_an_html_page_instead_of_a_bundle_is_a_source_error_saying_so():
    server = FakeServer().on("GET", f"{BASE}/Patient", html_page())
    with pytest.raises(SourceError, match="HTML page instead of FHIR JSON"):
        list(FhirRestSource(BASE, types=["Patient"], client=server.http()).records())


def test_an_html_next_page_is_a_problem_after_the_first_pages():
    server = FakeServer()
    server.on(
        "GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], page_url(0), page_url(1)))
    )
    server.on("GET", page_url(1), html_page())
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert ids(records) == ["o1"] and "HTML page" in problems(records)[0]


def test_429_then_success_during_paging_loses_nothing():
    server = FakeServer()
    server.on(
        "GET", f"{BASE}/Observation", fhir_json(searchset([observation("o1")], page_url(0), page_url(1)))
    )
    server.on(
        "GET",
        page_url(1),
        httpx.Response(429, headers={"Retry-After": "2"}),
        fhir_json(searchset([observation("o2")], page_url(1))),
    )
    records = list(FhirRestSource(BASE, types=["Observation"], client=server.http()).records())
    assert ids(records) == ["o1", "o2"] and server.sleeps == [2.0]


def test_permanent_500_on_the_first_page_is_a_source_error_naming_the_url():
    server = FakeServer().on("GET", f"{BASE}/Patient", fhir_json(outcome("HAPI-0389: internal error"), 500))
    with pytest.raises(SourceError, match=rf"{BASE}/Patient\?_count=200 failed: HTTP 500: HAPI-0389"):
        list(FhirRestSource(BASE, types=["Patient"], client=server.http(attempts=3)).records())


def test_401_is_a_source_error():
    server = FakeServer().on(
        "GET", f"{BASE}/Patient", fhir_json(outcome("Authentication required", "login"), 401)
    )
    with pytest.raises(SourceError, match="HTTP 401"):
        list(FhirRestSource(BASE, types=["Patient"], client=server.http()).records())


def test_a_searchset_outcome_entry_is_reported_not_ingested():
    bundle = searchset([patient("p1")], f"{BASE}/Patient")
    bundle["entry"].append(
        {"resource": outcome("_sort by birthdate ignored", severity="warning"), "search": {"mode": "outcome"}}
    )
    server = FakeServer().on("GET", f"{BASE}/Patient", fhir_json(bundle))
    records = list(FhirRestSource(BASE, types=["Patient"], client=server.http()).records())
    assert ids(records) == ["p1"] and "_sort by birthdate ignored" in problems(records)[0]


def test_open_server_source_picks_rest_or_bulk_and_checks_options(tmp_path):
    assert isinstance(open_server_source(BASE, patient="p1"), FhirRestSource)
    assert isinstance(open_server_source(BASE, bulk=True, types=["Patient"]), BulkExportSource)
    with pytest.raises(SourceError, match="not both"):
        open_server_source(BASE, token="t", smart_client_id="c", smart_key_path="k.pem")
    with pytest.raises(SourceError, match="both a client id and a private key"):
        open_server_source(BASE, smart_client_id="c")
    with pytest.raises(SourceError, match="leave out --patient"):
        open_server_source(BASE, bulk=True, patient="p1")
    with pytest.raises(SourceError, match="http:// or https://"):
        open_server_source("fhir.example.org")
