"""What every route shares: the server's state, authentication as a dependency, body reading helpers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import orjson
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from fhirqa.server.asking import AskService
from fhirqa.server.audit import AuditContext, AuditLog
from fhirqa.server.auth import Principal, TokenValidator, bearer_token
from fhirqa.server.config import ServerConfig
from fhirqa.server.errors import ApiError
from fhirqa.server.jobs import JobManager
from fhirqa.server.keys import SigningKey
from fhirqa.server.limits import RateLimiter
from fhirqa.server.tokens import TokenIssuer
from fhirqa.server.warmup import NotesWarmup

#: FHIR resource id syntax: also the shape every path parameter naming a patient must have.
ID_PATTERN = r"^[A-Za-z0-9\-.]{1,64}$"
JSON_TYPES = ("application/fhir+json", "application/json")
NDJSON_TYPES = ("application/fhir+ndjson", "application/ndjson", "application/x-ndjson")
# auto_error=False: a missing token must become our own 401 OperationOutcome, not FastAPI's.
bearer_scheme = HTTPBearer(auto_error=False, description="An OAuth2 access token (JWT) with SMART scopes")


@dataclass
class ServerState:
    """Everything a running server holds, created at startup (``app.state.server``)."""

    config: ServerConfig
    signing_key: SigningKey
    validator: TokenValidator
    issuer: TokenIssuer
    limiter: RateLimiter
    audit: AuditLog
    jobs: JobManager
    asker: AskService
    warmup: NotesWarmup
    stopping: bool = False


def server(request: Request) -> ServerState:
    """The running server's state."""
    return request.app.state.server


def audit_context(request: Request) -> AuditContext:
    """The audit record of this request (created on first use)."""
    ctx = getattr(request.state, "audit", None)
    if ctx is None:
        ctx = request.state.audit = AuditContext()
    return ctx


def _client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def rate_limit(state: ServerState, key: str) -> None:
    """429 with ``Retry-After`` when ``key``'s bucket is empty."""
    wait = state.limiter.check(key)
    if wait is not None:
        raise ApiError(429, "too many requests; slow down", headers={"Retry-After": RateLimiter.retry_after(wait)})


def authenticated(operation: str, action: str = "E") -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's :class:`Principal` (401 without a valid token, 429 over the rate limit).

    It also names the operation and the patient in the path for the audit log, so refused requests
    are audited as precisely as served ones.
    """

    async def dependency(
        request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]
    ) -> Principal:
        state = server(request)
        ctx = audit_context(request)
        ctx.operation, ctx.action = operation, action
        patient = request.path_params.get("id")
        if isinstance(patient, str):
            ctx.patient = patient
        try:
            token = bearer_token(request.headers.get("authorization"))
            if state.validator.may_block:
                principal = await anyio.to_thread.run_sync(state.validator.validate, token)
            else:
                principal = state.validator.validate(token)
        except ApiError:
            # Failed attempts count against the caller's address, so guessing tokens is slow.
            rate_limit(state, "ip:" + _client_ip(request))
            raise
        ctx.principal = principal
        rate_limit(state, principal.key)
        return principal

    return dependency


_QUERY_NAMES: dict[int, frozenset[str]] = {}


def _query_names(dependant: Any) -> set[str]:
    """Query parameter names a route (and its dependencies) declares."""
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


async def reject_unknown_query(request: Request) -> None:
    """400 for a query parameter the route does not take (applied to every route).

    A misspelt filter (``sinse=2024``) must not silently widen a read to everything.
    """
    if not request.query_params:
        return
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    names = _QUERY_NAMES.get(id(route))
    if names is None:
        names = _QUERY_NAMES[id(route)] = frozenset(_query_names(dependant))
    unknown = sorted(set(request.query_params) - names)
    if unknown:
        shown = ", ".join(repr(u[:40]) for u in unknown[:5])
        raise ApiError(400, f"unknown query parameter(s) {shown}; this endpoint takes {', '.join(sorted(names)) or 'none'}")


def wants_async(prefer: str | None) -> bool:
    """True for ``Prefer: respond-async`` (RFC 7240; other preferences may share the header)."""
    return bool(prefer) and any(p.strip().lower() == "respond-async" for p in str(prefer).split(","))


def wants_fresh(cache_control: str | None) -> bool:
    """True for ``Cache-Control: no-cache`` (or ``no-store``): compute the answer again."""
    return bool(cache_control) and any(p.strip().lower() in ("no-cache", "no-store")
                                       for p in str(cache_control).split(","))


def media_type(request: Request) -> str:
    """The request's media type without parameters, lower-case ('' when absent)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_json(request: Request) -> Any:
    """The body as JSON; 415 for a non-JSON media type, 400 for malformed JSON."""
    kind = media_type(request)
    if kind and kind not in JSON_TYPES:
        raise ApiError(415, f"send application/fhir+json (got {kind[:60]})")
    body = await request.body()
    if not body.strip():
        raise ApiError(400, "the request body is empty")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}") from None
