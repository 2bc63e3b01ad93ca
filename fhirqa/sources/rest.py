"""FHIR resources from a server's REST API: ``Patient/$everything`` or type searches, page by page.

Paging follows ``Bundle.link[relation=next]``. A next link that loops back to a page already read,
or leaves the server's host (where our token must not go), stops paging with a problem record, so a
misbehaving server can never keep us reading forever; a next page that fails keeps the pages before it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from fhirqa.errors import SourceError
from fhirqa.normalize.bundle import iter_bundle
from fhirqa.sources.auth import Auth, BearerToken, SmartBackendAuth
from fhirqa.sources.base import Origin, RawRecord, Source
from fhirqa.sources.http import FhirHttp, HttpStatusError, NotJsonError, redact_url

#: Types read for a patient when the server has no ``$everything``, and for whole-server reads.
CLINICAL_TYPES: tuple[str, ...] = (
    "Patient",
    "Encounter",
    "Condition",
    "Observation",
    "DiagnosticReport",
    "MedicationRequest",
    "MedicationStatement",
    "MedicationAdministration",
    "MedicationDispense",
    "Immunization",
    "AllergyIntolerance",
    "Procedure",
    "CarePlan",
    "CareTeam",
    "Goal",
    "ServiceRequest",
    "DocumentReference",
    "Device",
    "Claim",
    "ExplanationOfBenefit",
    "Coverage",
)
#: Statuses with which a server says "I do not do $everything" (rather than "I am broken").
_NO_EVERYTHING = frozenset({400, 404, 405, 501})
#: Search parameters that tie a resource to its patient, in the order servers most often support them.
_PATIENT_PARAMS = ("patient", "subject")
DEFAULT_PAGE_SIZE = 200
#: Empty pages in a row that still link onwards before paging is declared a loop.
MAX_EMPTY_PAGES = 5
log = logging.getLogger("fhirqa.sources")


def fhir_instant(since: str | date | datetime | None) -> str | None:
    """``since`` as the string FHIR wants in ``_since``/``_lastUpdated`` (dates and datetimes in ISO form)."""
    if since is None or isinstance(since, str):
        return since
    return since.isoformat()


def as_http(client: httpx.Client | FhirHttp | None, auth: Auth | None) -> FhirHttp:
    """A :class:`FhirHttp` from whatever the caller gave (nothing, a plain ``httpx.Client``, or one)."""
    if isinstance(client, FhirHttp):
        if auth is not None:
            client.auth = auth
        return client
    return FhirHttp(client, auth=auth)


def _origin_key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class Pager:
    """Reads a search (or ``$everything``) result page by page, with loop and host protection."""

    def __init__(self, http: FhirHttp, base_url: str) -> None:
        self.http = http
        self.base_url = base_url

    def first_page(
        self, url: str, params: dict[str, str], headers: dict[str, str] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """The first page; errors propagate, because without it there is nothing to read."""
        page_url, body = self.http.get_json(url, params=params, headers=headers, what="search")
        self._check_bundle(page_url, body)
        return page_url, body

    def _check_bundle(self, page_url: str, body: Any) -> None:
        if not isinstance(body, dict) or body.get("resourceType") != "Bundle":
            kind = body.get("resourceType") if isinstance(body, dict) else type(body).__name__
            raise NotJsonError(f"{redact_url(page_url)}: expected a Bundle, got {kind}", url=page_url)

    def pages(self, url: str, params: dict[str, str]) -> Iterator[RawRecord]:
        """Records of every page, starting with ``url?params`` and following next links."""
        page_url, body = self.first_page(url, params)
        yield from self.follow(page_url, body)

    def follow(self, page_url: str, body: dict[str, Any]) -> Iterator[RawRecord]:
        """Records of ``body`` (already fetched from ``page_url``) and of every page after it."""
        seen = {page_url}
        number = 1
        empty_run = 0  # consecutive pages without entries
        while True:
            yield from iter_bundle(body, page_url, None)
            next_url = next_link(body)
            if next_url is None:
                return
            empty_run = 0 if body.get("entry") else empty_run + 1
            if empty_run >= MAX_EMPTY_PAGES:
                # Fresh-looking next links that bring nothing: a loop the URL check cannot see.
                yield RawRecord(
                    Origin(page_url),
                    problem=f"paging stopped at page {number}: {empty_run} empty pages in a row still link"
                    " to a next page; the server's paging loops",
                )
                return
            next_url = urljoin(page_url, next_url)
            shown = redact_url(next_url)
            if next_url in seen:
                yield RawRecord(
                    Origin(page_url),
                    problem=f"paging stopped: the next link of page {number} ({shown}) points back to a page"
                    " already read; the server's paging loops",
                )
                return
            if _origin_key(next_url) != _origin_key(self.base_url):
                yield RawRecord(
                    Origin(page_url),
                    problem=f"paging stopped: the next link of page {number} goes to another host ({shown})"
                    f" than the server {redact_url(self.base_url)}; not followed, so credentials stay put",
                )
                return
            seen.add(next_url)
            number += 1
            try:
                page_url, fetched = self.http.get_json(next_url, what=f"page {number}")
                self._check_bundle(page_url, fetched)
                seen.add(page_url)  # after a redirect, the URL actually read
            except (HttpStatusError, NotJsonError) as exc:
                if isinstance(exc, HttpStatusError) and exc.status in (401, 403):
                    raise
                yield RawRecord(
                    Origin(next_url),
                    problem=f"paging stopped at page {number}, the pages before it were kept: {exc}",
                )
                return
            body = fetched


def _updated_before(resource: Any, since: str) -> bool:
    """True when ``resource`` was last updated before ``since`` (instants compared, not strings)."""
    last = (resource.get("meta") or {}).get("lastUpdated") if isinstance(resource, dict) else None
    if not isinstance(last, str):
        return False  # unknown: keep it rather than lose it
    try:
        then, cutoff = datetime.fromisoformat(last), datetime.fromisoformat(since)
        if (then.tzinfo is None) != (cutoff.tzinfo is None):
            then, cutoff = then.replace(tzinfo=None), cutoff.replace(tzinfo=None)
        return then < cutoff
    except ValueError:
        return last < since


def next_link(bundle: dict[str, Any]) -> str | None:
    """The ``next`` link of a Bundle, if any."""
    for link in bundle.get("link") or []:
        if isinstance(link, dict) and link.get("relation") == "next" and isinstance(link.get("url"), str):
            return link["url"]
    return None


class FhirRestSource:
    """Resources of a FHIR server's REST API (see the module docstring).

    With ``patient``: ``Patient/{id}/$everything`` (``_since`` when given), falling back to reading
    the patient and searching each clinical type by ``patient`` when the server lacks the operation.
    Without: type searches ``{Type}?_count=…&_lastUpdated=ge{since}`` for ``types`` (default: the
    common clinical types).
    """

    def __init__(
        self,
        base_url: str,
        *,
        patient: str | None = None,
        types: Sequence[str] | None = None,
        since: str | date | datetime | None = None,
        everything: bool = True,
        client: httpx.Client | FhirHttp | None = None,
        auth: Auth | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.patient = patient
        self.types = tuple(types) if types else None
        self.since = fhir_instant(since)
        self.everything = everything
        self.page_size = page_size
        self._client = client
        self._auth = auth
        what = f"Patient/{patient}" if patient else ", ".join(self.types or ("clinical types",))
        self.description = f"FHIR server {redact_url(self.base_url)} ({what})"
        #: Notes a user may want to see (e.g. "no $everything, searched instead"); not problems.
        self.notes: list[str] = []

    def records(self) -> Iterator[RawRecord]:
        """Stream every record; raises :class:`SourceError` only if nothing can be read at all."""
        http = as_http(self._client, self._auth)
        try:
            pager = Pager(http, self.base_url)
            if self.patient is None:
                yield from self._type_searches(pager, self.types or CLINICAL_TYPES)
            elif self.everything:
                yield from self._everything(pager, self.patient)
            else:
                yield from self._patient_searches(pager, self.patient)
        finally:
            if not isinstance(self._client, FhirHttp):
                http.close()

    def _search_params(self) -> dict[str, str]:
        params = {"_count": str(self.page_size)}
        if self.since:
            params["_lastUpdated"] = f"ge{self.since}"
        return params

    def _everything(self, pager: Pager, patient: str) -> Iterator[RawRecord]:
        url = f"{self.base_url}/Patient/{patient}/$everything"
        params = {"_count": str(self.page_size)}
        if self.since:
            params["_since"] = self.since
        if self.types:
            params["_type"] = ",".join(self.types)
        try:
            page_url, body = pager.first_page(url, params)
        except HttpStatusError as exc:
            if exc.status not in _NO_EVERYTHING:
                raise
            self.notes.append(f"no $everything at this server ({exc.status}: {exc.reason}); searched by type")
            yield from self._patient_searches(pager, patient)
            return
        wanted = set(self.types) if self.types else None
        for record in pager.follow(page_url, body):
            # Servers may ignore _type; honour the caller's choice here too.
            if wanted is None or record.resource is None or record.resource.get("resourceType") in wanted:
                yield record

    def _patient_searches(self, pager: Pager, patient: str) -> Iterator[RawRecord]:
        types = self.types or CLINICAL_TYPES
        if "Patient" in types:
            # A failing read means a wrong id or no access: nothing else would make sense then.
            page_url, resource = pager.http.get_json(f"{self.base_url}/Patient/{patient}", what="read")
            if not (self.since and _updated_before(resource, self.since)):
                yield RawRecord(Origin(page_url), resource=resource)
        for rtype in types:
            if rtype == "Patient":
                continue
            yield from self._one_patient_type(pager, patient, rtype)

    def _one_patient_type(self, pager: Pager, patient: str, rtype: str) -> Iterator[RawRecord]:
        url = f"{self.base_url}/{rtype}"
        refusals: list[str] = []
        for name in _PATIENT_PARAMS:
            params = {**self._search_params(), name: f"Patient/{patient}"}
            try:
                # Strict handling: a server that does not know the parameter must say so, not
                # ignore it and answer with every patient's resources.
                page_url, body = pager.first_page(url, params, {"Prefer": "handling=strict"})
            except HttpStatusError as exc:
                if exc.status in (401, 403) or exc.status >= 500:
                    raise
                refusals.append(f"?{name}=: HTTP {exc.status}: {exc.reason}")
                continue
            yield from pager.follow(page_url, body)
            return
        yield from self._skipped(
            url,
            f"{rtype} of Patient/{patient} not read: the server refused the searches " + "; ".join(refusals),
        )

    def _skipped(self, url: str, message: str) -> Iterator[RawRecord]:
        """A type that could not be read: a problem if the caller asked for it, else a note.

        Servers commonly lack some of the default clinical types or their patient search; that is
        not bad data, and reporting it as a rejected record would drown real problems.
        """
        if self.types is not None:
            yield RawRecord(Origin(url), problem=message)
        else:
            log.info("%s", message)
            self.notes.append(message)

    def _type_searches(self, pager: Pager, types: Sequence[str]) -> Iterator[RawRecord]:
        for rtype in types:
            url = f"{self.base_url}/{rtype}"
            try:
                page_url, body = pager.first_page(url, self._search_params())
            except HttpStatusError as exc:
                if exc.status in (401, 403) or exc.status >= 500:
                    raise
                # One type the server does not know (404/400) must not hide the others.
                yield from self._skipped(url, f"{rtype} not read: {exc}")
                continue
            yield from pager.follow(page_url, body)


def open_server_source(
    url: str,
    *,
    patient: str | None = None,
    since: str | date | datetime | None = None,
    bulk: bool = False,
    types: Sequence[str] | None = None,
    token: str | None = None,
    smart_client_id: str | None = None,
    smart_key_path: str | None = None,
) -> Source:
    """The source for ``fhirqa ingest https://…``: REST (``$everything`` with ``patient``) or Bulk Data.

    ``token`` sends a fixed bearer token; ``smart_client_id`` with ``smart_key_path`` uses SMART
    Backend Services. Raises :class:`SourceError` for contradictory options.
    """
    from fhirqa.sources.bulk import BulkExportSource  # bulk imports this module's helpers

    if not url.startswith(("http://", "https://")):
        raise SourceError(f"{url}: a FHIR server URL must start with http:// or https://")
    auth: Auth | None = None
    if token and (smart_client_id or smart_key_path):
        raise SourceError("give either a bearer token or SMART client credentials, not both")
    if token:
        auth = BearerToken(token)
    elif smart_client_id or smart_key_path:
        if not (smart_client_id and smart_key_path):
            raise SourceError("SMART Backend Services needs both a client id and a private key file")
        auth = SmartBackendAuth(url, smart_client_id, smart_key_path)
    if bulk:
        if patient:
            raise SourceError(
                "--bulk exports every patient; leave out --patient, or drop --bulk for one patient"
            )
        return BulkExportSource(url, types=types, since=since, auth=auth)
    return FhirRestSource(url, patient=patient, types=types, since=since, auth=auth)
