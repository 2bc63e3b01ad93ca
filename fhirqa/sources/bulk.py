"""FHIR resources from a Bulk Data ``$export``: kick off, poll, read the manifest, stream the files.

The protocol (FHIR Bulk Data Access 2.0): ``GET [base]/$export`` with ``Prefer: respond-async``
answers 202 with a status URL in ``Content-Location``; polling it answers 202 (with ``X-Progress``)
until the export is done, then 200 with a manifest listing NDJSON files per type, plus ``deleted``
files (Bundles of DELETE requests) and ``error`` files (OperationOutcomes). Files are streamed line
by line; the job is deleted on the server when we are done (or give up).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime
from typing import Any, cast
from urllib.parse import urljoin

import httpx
import orjson

from fhirqa.errors import SourceError
from fhirqa.sources.auth import Auth
from fhirqa.sources.base import Origin, RawRecord
from fhirqa.sources.files import iter_ndjson
from fhirqa.sources.http import (
    FhirHttp,
    iter_byte_lines,
    looks_like_html,
    outcome_text,
    parse_retry_after,
    redact_url,
    response_reason,
    status_error,
)
from fhirqa.sources.rest import as_http, fhir_instant

NDJSON = "application/fhir+ndjson"
log = logging.getLogger("fhirqa.sources")


def _manifest_files(manifest: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = manifest.get(key) or []
    return (
        [i for i in items if isinstance(i, dict) and isinstance(i.get("url"), str)]
        if isinstance(items, list)
        else []
    )


class BulkExportSource:
    """Resources of a Bulk Data export (system, ``Patient/$export`` or ``Group/{id}/$export``).

    ``progress`` receives human-readable messages (kick-off, ``X-Progress`` while waiting, each
    file); ``poll_interval`` is the wait when the server gives no ``Retry-After``; ``timeout`` bounds
    the whole wait for the export, in seconds. ``sleep`` and ``clock`` exist for tests.
    """

    def __init__(
        self,
        base_url: str,
        *,
        group: str | None = None,
        patient_level: bool = False,
        types: Sequence[str] | None = None,
        since: str | date | datetime | None = None,
        client: httpx.Client | FhirHttp | None = None,
        auth: Auth | None = None,
        poll_interval: float = 2.0,
        timeout: float = 3600.0,
        progress: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if group and patient_level:
            raise SourceError("a Bulk export is either Group-level or Patient-level, not both")
        self.base_url = base_url.rstrip("/")
        self.group = group
        self.patient_level = patient_level
        self.types = tuple(types) if types else None
        self.since = fhir_instant(since)
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.progress = progress or (lambda message: None)
        self._client = client
        self._auth = auth
        self._sleep = sleep
        self._clock = clock
        self.kickoff_url = self._kickoff_url()
        self.description = f"Bulk export {redact_url(self.kickoff_url)}"
        #: The manifest of the last completed export (for transactionTime, used as the next ``since``).
        self.manifest: dict[str, Any] | None = None
        #: Warnings the server put in its error files (e.g. ignored parameters): worth showing, not bad data.
        self.notes: list[str] = []

    def _kickoff_url(self) -> str:
        if self.group:
            return f"{self.base_url}/Group/{self.group}/$export"
        if self.patient_level:
            return f"{self.base_url}/Patient/$export"
        return f"{self.base_url}/$export"

    def records(self) -> Iterator[RawRecord]:
        """Run the export and stream its records; raises :class:`SourceError` if the export fails."""
        http = as_http(self._client, self._auth)
        status_url: str | None = None
        try:
            status_url = self._kick_off(http)
            manifest = self._wait(http, status_url)
            self.manifest = manifest
            yield from self._read_manifest(http, status_url, manifest)
        finally:
            if status_url is not None:
                self._delete_job(http, status_url)
            if not isinstance(self._client, FhirHttp):
                http.close()

    # ---------------- kick-off and polling ----------------

    def _kick_off(self, http: FhirHttp) -> str:
        params: dict[str, str] = {}
        if self.types:
            params["_type"] = ",".join(self.types)
        if self.since:
            params["_since"] = self.since
        headers = {"Accept": "application/fhir+json", "Prefer": "respond-async"}
        response = http.request("GET", self.kickoff_url, params=params, headers=headers)
        shown = redact_url(str(response.request.url))
        if response.status_code >= 400:
            raise status_error(response, "Bulk export kick-off")
        location = response.headers.get("content-location")
        if response.status_code != 202 or not location:
            html = " (an HTML page)" if looks_like_html(response) else ""
            raise SourceError(
                f"Bulk export kick-off {shown}: expected 202 Accepted with a Content-Location,"
                f" got HTTP {response.status_code}{html} — does this server support $export?"
            )
        self.progress(f"export started: {redact_url(self.kickoff_url)}")
        return urljoin(str(response.request.url), location)

    def _wait(self, http: FhirHttp, status_url: str) -> dict[str, Any]:
        """Poll the status URL until the manifest arrives."""
        deadline = self._clock() + self.timeout
        shown = redact_url(status_url)
        while True:
            response = http.request("GET", status_url, headers={"Accept": "application/json"})
            if response.status_code == 200:
                manifest = http.json_of(response, "Bulk export status")
                if not isinstance(manifest, dict):
                    raise SourceError(f"Bulk export status {shown}: the manifest is not a JSON object")
                return manifest
            if response.status_code >= 400:
                raise SourceError(
                    f"Bulk export {shown} failed: HTTP {response.status_code}: {response_reason(response)}"
                )
            if response.status_code != 202:
                raise SourceError(f"Bulk export status {shown}: unexpected HTTP {response.status_code}")
            progress = response.headers.get("x-progress")
            self.progress(f"export in progress{': ' + progress if progress else ''}")
            wait = parse_retry_after(response.headers.get("retry-after"))
            wait = self.poll_interval if wait is None else wait
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise SourceError(
                    f"Bulk export {shown} did not finish within {self.timeout:.0f} s (last progress:"
                    f" {progress or 'none'}); the job was cancelled"
                )
            self._sleep(min(wait, remaining))

    def _delete_job(self, http: FhirHttp, status_url: str) -> None:
        # Frees the server's disk; the data is ours already (or the export failed), so errors do not matter.
        try:
            http.client.delete(status_url, headers=http.build_headers())
        except (httpx.HTTPError, SourceError) as exc:
            log.debug("deleting Bulk export job %s failed: %s", redact_url(status_url), exc)

    # ---------------- manifest and files ----------------

    def _read_manifest(
        self, http: FhirHttp, status_url: str, manifest: dict[str, Any]
    ) -> Iterator[RawRecord]:
        seen = {status_url}
        while True:
            # SMART says send the token only when the manifest asks: pre-signed URLs reject extra auth.
            send_auth = bool(manifest.get("requiresAccessToken"))
            files = _manifest_files(manifest, "output")
            deleted = _manifest_files(manifest, "deleted")
            errors = _manifest_files(manifest, "error")
            self.progress(
                f"export complete: {len(files)} file(s), {len(deleted)} deleted, {len(errors)} error"
            )
            for item in files:
                yield from self._download(http, item, send_auth, kind="output")
            for item in deleted:
                yield from self._download(http, item, send_auth, kind="deleted")
            for item in errors:
                yield from self._download(http, item, send_auth, kind="error")
            # Bulk Data 2.0 lets a server page a large manifest with link[relation=next].
            next_url = next(
                (
                    lk.get("url")
                    for lk in manifest.get("link") or []
                    if isinstance(lk, dict) and lk.get("relation") == "next"
                ),
                None,
            )
            if not isinstance(next_url, str) or next_url in seen:
                return
            seen.add(next_url)
            _, manifest = http.get_json(next_url, what="Bulk manifest page")
            if not isinstance(manifest, dict):
                return

    def _download(
        self, http: FhirHttp, item: dict[str, Any], send_auth: bool, kind: str
    ) -> Iterator[RawRecord]:
        url = str(item["url"])
        location = redact_url(url)
        self.progress(f"downloading {kind} {item.get('type', '')} {location}".replace("  ", " "))
        try:
            with http.stream(url, headers={"Accept": NDJSON}, send_auth=send_auth) as response:
                if response.status_code >= 400:
                    yield RawRecord(
                        Origin(location), problem=f"{kind} file not downloaded: {status_error(response)}"
                    )
                    return
                lines = iter_byte_lines(response.iter_bytes())
                first = next(lines, b"")
                if "html" in response.headers.get("content-type", "").lower() or looks_like_html(
                    response, first
                ):
                    yield RawRecord(
                        Origin(location),
                        problem=f"{kind} file {location} is an HTML page, not NDJSON",
                        raw=first.decode("utf-8", "replace")[:2000],
                    )
                    return
                stream = _chain(first, lines)
                for record in iter_ndjson(cast(Any, stream), location):
                    classified = self._classify(record, kind)
                    if classified is not None:
                        yield classified
        except (httpx.HTTPError, SourceError) as exc:
            # The lines read so far are good; say where the file broke off.
            yield RawRecord(Origin(location), problem=f"{kind} file download interrupted: {exc}")

    def _classify(self, record: RawRecord, kind: str) -> RawRecord | None:
        """Deleted-file records must be deletions; error-file records become problems (or notes)."""
        if kind == "error" and record.resource is not None:
            text = outcome_text(record.resource) or "export error without diagnostics"
            if _only_warnings(record.resource):
                self.notes.append(f"{record.origin}: {text}")
                return None
            return RawRecord(
                record.origin,
                problem=f"the server reported an export error: {text}",
                raw=orjson.dumps(record.resource).decode()[:20_000],
            )
        if kind == "deleted" and record.resource is not None and not record.deleted:
            return RawRecord(
                record.origin,
                problem="entry of a deleted file is not a DELETE request; ignored",
                raw=orjson.dumps(record.resource).decode()[:20_000],
            )
        return record


def _only_warnings(resource: dict[str, Any]) -> bool:
    """True for an OperationOutcome whose issues are all warnings or information."""
    issues = resource.get("issue") if resource.get("resourceType") == "OperationOutcome" else None
    if not isinstance(issues, list) or not issues:
        return False
    return all(isinstance(i, dict) and i.get("severity") in ("warning", "information") for i in issues)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest
