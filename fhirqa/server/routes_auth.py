"""``POST /auth/token``: the built-in SMART Backend Services token endpoint (RFC 6749 answers)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import anyio
from fastapi import APIRouter, Request
from starlette.responses import Response

from fhirqa.server import schemas
from fhirqa.server.deps import audit_context, media_type, rate_limit, server
from fhirqa.server.errors import JsonResponse
from fhirqa.server.tokens import TokenRequestError

router = APIRouter(tags=["authorization"])
_FORM = "application/x-www-form-urlencoded"


def _error(exc: TokenRequestError) -> Response:
    headers = {"Cache-Control": "no-store"}
    if exc.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="fhirqa"'
    return JsonResponse(exc.body(), status_code=exc.status, headers=headers)


_TOKEN_ERRORS: dict[int | str, dict[str, Any]] = {code: {"description": text, "content": {"application/json": {"schema": schemas.TOKEN_ERROR}}}
                 for code, text in ((400, "invalid_request, unsupported_grant_type or invalid_scope"),
                                    (401, "invalid_client"))}


@router.post("/auth/token", response_class=JsonResponse, operation_id="token",
             responses={200: schemas.ok(schemas.TOKEN_OUT, "application/json"), **schemas.errors(415),
                        **_TOKEN_ERRORS},
             openapi_extra=schemas.body(schemas.TOKEN_IN, _FORM))
async def token(request: Request) -> Response:
    """Exchange a signed client assertion for an access token (``client_credentials``)."""
    state = server(request)
    ctx = audit_context(request)
    ctx.operation, ctx.action = "token", "E"
    rate_limit(state, "ip:" + (request.client.host if request.client else "unknown"))
    if media_type(request) != _FORM:
        return _error(TokenRequestError("invalid_request", f"send the token request as {_FORM}"))
    raw = await request.body()
    try:
        form = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        return _error(TokenRequestError("invalid_request", "the form is not UTF-8"))
    try:
        # Signature checks are CPU work: keep them off the event loop.
        client_id, body = await anyio.to_thread.run_sync(state.issuer.exchange, form)
    except TokenRequestError as exc:
        ctx.detail["error"] = exc.error
        return _error(exc)
    ctx.detail["client_id"] = client_id[:80]
    ctx.detail["scope"] = body["scope"][:200]
    return JsonResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})
