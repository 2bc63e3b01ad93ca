"""The HTTP layer every server source shares: timeouts, retries, auth and errors a user can act on.

Transient failures (429, 5xx other than 501/505, timeouts, dropped connections) are retried with
exponential backoff and jitter, honouring ``Retry-After`` (seconds or an HTTP date). Everything else
becomes an :class:`HttpStatusError` (a :class:`~fhirqa.errors.SourceError`) that names the URL, the
status and the server's reason, so a 401 or a login page in front of the API reads as what it is.
Nothing here logs headers: they carry bearer tokens.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import orjson

from fhirqa.errors import SourceError

if TYPE_CHECKING:
    from fhirqa.sources.auth import Auth

log = logging.getLogger("fhirqa.sources")

#: Statuses worth another try: rate limiting and server trouble. 501/505 are answers, not trouble.
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
FHIR_JSON = "application/fhir+json"
# Query parameters that carry credentials (pre-signed download URLs, tokens in links): never shown.
_SECRET_PARAM = re.compile(r"(sig|signature|token|secret|password|credential|key|^code$|^x-amz-)", re.I)


def redact_url(url: str) -> str:
    """``url`` with credential-like query values replaced by ``***``, fit for messages and logs."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [
        (k, "***" if _SECRET_PARAM.search(k) else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(query, safe="/:,$*")))


class HttpStatusError(SourceError):
    """The server answered with an error status (after retries, when those applied)."""

    def __init__(self, message: str, *, url: str, status: int, reason: str) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.reason = reason


class NotJsonError(SourceError):
    """The server answered 2xx but not with JSON (typically an HTML login or error page)."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


@dataclass(slots=True)
class RetryPolicy:
    """How often and how long to retry; tests pass ``sleep`` and a tiny ``base`` to stay fast."""

    attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 300.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt`` (0-based): exponential, capped, with jitter."""
        ceiling = min(self.cap, self.base * (2**attempt))
        # "Equal jitter": never less than half the ceiling, so a burst of clients still spreads out.
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP date; None if unusable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def outcome_text(body: Any) -> str | None:
    """The diagnostics of an OperationOutcome (or OAuth error) body, joined; None for anything else."""
    if not isinstance(body, dict):
        return None
    if body.get("resourceType") == "OperationOutcome":
        texts = []
        for issue in body.get("issue") or []:
            if isinstance(issue, dict):
                details = issue.get("details")
                detail_text = details.get("text") if isinstance(details, dict) else None
                text = issue.get("diagnostics") or detail_text or issue.get("code")
                if text:
                    texts.append(str(text))
        return "; ".join(texts) or None
    if "error" in body:  # RFC 6749 error response from a token endpoint
        return ": ".join(str(body[k]) for k in ("error", "error_description") if body.get(k))
    return None


def looks_like_html(response: httpx.Response, head: bytes | None = None) -> bool:
    """True when a response is an HTML page (a portal, a proxy error, a login form)."""
    if "html" in response.headers.get("content-type", "").lower():
        return True
    start = (head if head is not None else response.content[:200]).lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html"))


def response_reason(response: httpx.Response) -> str:
    """A short human reason for an error response: OperationOutcome text, else the status phrase."""
    try:
        body = orjson.loads(response.content) if response.content else None
    except orjson.JSONDecodeError:
        body = None
    text = outcome_text(body)
    if text:
        return text
    if response.content and looks_like_html(response):
        return f"{response.reason_phrase} (an HTML page, not FHIR JSON)"
    return response.reason_phrase or "no reason given"


def status_error(response: httpx.Response, what: str = "request") -> HttpStatusError:
    """The :class:`HttpStatusError` for an error response, with a hint for the statuses users hit most."""
    url = redact_url(str(response.request.url))
    status = response.status_code
    reason = response_reason(response)
    hint = {
        401: " — the server wants credentials: pass a token or SMART client id and key, or check them",
        403: " — the credentials are valid but not allowed to read this (check the granted scopes)",
        404: " — no such resource or endpoint (check the base URL and ids)",
    }.get(status, "")
    return HttpStatusError(
        f"{what} {url} failed: HTTP {status}: {reason}{hint}", url=url, status=status, reason=reason
    )


class FhirHttp:
    """An ``httpx.Client`` with retries, authentication and FHIR-aware errors.

    Pass ``client`` to share a client (or a ``MockTransport`` one in tests); otherwise one is made with
    sane timeouts and closed by :meth:`close`.
    """

    def __init__(
        self,
        client: httpx.Client | None = None,
        *,
        auth: Auth | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    ) -> None:
        self._owns_client = client is None
        self.client = client or httpx.Client(timeout=timeout, follow_redirects=True)
        self.auth = auth
        self.retry = retry or RetryPolicy()

    def close(self) -> None:
        """Close the underlying client if this object created it."""
        if self._owns_client:
            self.client.close()

    def build_headers(self, headers: dict[str, str] | None = None, send_auth: bool = True) -> dict[str, str]:
        """Default FHIR headers, ``headers``, and the credential's ``Authorization`` when ``send_auth``."""
        out = {"Accept": FHIR_JSON}
        out.update(headers or {})
        if send_auth and self.auth is not None:
            out.update(self.auth.headers(self.client))
        return out

    def _send(
        self,
        method: str,
        url: str,
        *,
        params: Any,
        headers: dict[str, str] | None,
        send_auth: bool,
        stream: bool,
    ) -> httpx.Response:
        """Send with retries; return the first non-retryable response (any status)."""
        refreshed = False
        attempt = 0
        while True:
            request = self.client.build_request(
                method, url, params=params, headers=self.build_headers(headers, send_auth)
            )
            shown = redact_url(str(request.url))
            try:
                response = self.client.send(request, stream=stream)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if attempt + 1 >= self.retry.attempts:
                    raise SourceError(
                        f"{method} {shown} failed after {attempt + 1} attempts: {type(exc).__name__}: {exc}"
                        " — is the server running and reachable?"
                    ) from exc
                delay = self.retry.backoff(attempt)
                log.warning("%s %s: %s; retrying in %.1fs", method, shown, type(exc).__name__, delay)
                self.retry.sleep(delay)
                attempt += 1
                continue
            if response.status_code == 401 and send_auth and self.auth is not None and not refreshed:
                # An expired or revoked token: get a fresh one once; a second 401 is a real refusal.
                response.close()
                refreshed = True
                if self.auth.refresh():
                    continue
                return response
            if response.status_code in RETRY_STATUSES and attempt + 1 < self.retry.attempts:
                wait = parse_retry_after(response.headers.get("retry-after"))
                delay = (
                    min(wait, self.retry.max_retry_after) if wait is not None else self.retry.backoff(attempt)
                )
                log.warning("%s %s: HTTP %s; retrying in %.1fs", method, shown, response.status_code, delay)
                response.close()
                self.retry.sleep(delay)
                attempt += 1
                continue
            return response

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Any = None,
        headers: dict[str, str] | None = None,
        send_auth: bool = True,
    ) -> httpx.Response:
        """Send a request with retries and return the final response, whatever its status."""
        return self._send(method, url, params=params, headers=headers, send_auth=send_auth, stream=False)

    def get_json(
        self, url: str, *, params: Any = None, headers: dict[str, str] | None = None, what: str = "GET"
    ) -> tuple[str, Any]:
        """GET ``url`` and return (final URL, parsed JSON); raise :class:`SourceError` subclasses otherwise."""
        response = self.request("GET", url, params=params, headers=headers)
        return str(response.url), self.json_of(response, what)

    def json_of(self, response: httpx.Response, what: str = "GET") -> Any:
        """The JSON body of a 2xx response, or the error that explains why there is none."""
        if response.status_code >= 400:
            raise status_error(response, what)
        url = redact_url(str(response.url))
        if looks_like_html(response):
            raise NotJsonError(
                f"{what} {url}: the server sent an HTML page instead of FHIR JSON (HTTP {response.status_code})"
                " — is the base URL right, or is a login page or proxy in the way?",
                url=url,
            )
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise NotJsonError(f"{what} {url}: the response is not valid JSON: {exc}", url=url) from exc

    @contextmanager
    def stream(
        self, url: str, *, headers: dict[str, str] | None = None, send_auth: bool = True
    ) -> Iterator[httpx.Response]:
        """GET ``url`` as a stream (retrying only until the status line arrives); closes the response."""
        response = self._send("GET", url, params=None, headers=headers, send_auth=send_auth, stream=True)
        try:
            if response.status_code >= 400:
                response.read()  # error bodies are small, and status_error() wants the OperationOutcome
            yield response
        finally:
            response.close()


def iter_byte_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Split a stream of byte chunks into lines (each ending in ``\\n`` except maybe the last)."""
    pending = bytearray()  # amortised appends: a line split over many small chunks stays linear
    for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            pending += chunk[start : end + 1]
            yield bytes(pending)
            pending.clear()
            start = end + 1
        pending += chunk[start:]
    if pending:
        yield bytes(pending)
