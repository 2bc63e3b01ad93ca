"""Every error leaves the server as a FHIR OperationOutcome in ``application/fhir+json``.

Routes raise :class:`ApiError`; framework errors (unknown route, wrong method, a body that fails
validation, a body too large) and fhirqa's own errors are translated by the handlers installed
with :func:`install_error_handlers`. An unexpected exception becomes a 500 that names a request id
and nothing else: details go to the log, never to the client.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from fhirqa.agent.catalog import UnknownView
from fhirqa.errors import FhirqaError, IngestAborted, SourceError, StoreError
from fhirqa.store.store import QueryError
from fhirqa.viewdef import ViewDefinitionError

FHIR_JSON = "application/fhir+json"
log = logging.getLogger("fhirqa.server")

#: HTTP status → the OperationOutcome issue code that says the same thing.
_CODES = {400: "invalid", 401: "login", 403: "forbidden", 404: "not-found", 405: "not-supported",
          406: "not-supported", 409: "conflict", 410: "deleted", 413: "too-costly", 415: "not-supported",
          422: "processing", 429: "throttled", 500: "exception", 503: "transient", 504: "timeout"}


def _default(value: Any) -> Any:
    """orjson fallback for values DuckDB hands back (Decimal, UUID, bytes)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def dumps(content: Any) -> bytes:
    """JSON bytes (datetimes as ISO 8601, anything exotic as text)."""
    return orjson.dumps(content, default=_default, option=orjson.OPT_NON_STR_KEYS)


class FhirResponse(Response):
    """A FHIR JSON body."""

    media_type = FHIR_JSON

    def render(self, content: Any) -> bytes:
        """Serialize with orjson."""
        return dumps(content)


class JsonResponse(Response):
    """A plain JSON body, serialized with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        """Serialize with orjson."""
        return dumps(content)


def outcome(diagnostics: str, code: str = "processing", severity: str = "error",
            expression: list[str] | None = None) -> dict[str, Any]:
    """An OperationOutcome with one issue."""
    issue: dict[str, Any] = {"severity": severity, "code": code, "diagnostics": diagnostics}
    if expression:
        issue["expression"] = expression
    return {"resourceType": "OperationOutcome", "issue": [issue]}


class ApiError(Exception):
    """An error answer: HTTP status, a message for the client, optional headers and issue code."""

    def __init__(self, status: int, diagnostics: str, *, code: str | None = None,
                 headers: dict[str, str] | None = None, expression: list[str] | None = None) -> None:
        super().__init__(diagnostics)
        self.status = status
        self.diagnostics = diagnostics
        self.code = code or _CODES.get(status, "processing")
        self.headers = headers or {}
        self.expression = expression

    def response(self) -> FhirResponse:
        """The OperationOutcome response."""
        return FhirResponse(outcome(self.diagnostics, self.code, expression=self.expression),
                            status_code=self.status, headers=self.headers)


class BodyTooLarge(StarletteHTTPException):
    """The request body passed its size limit (an HTTPException so body parsers re-raise it untouched)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than the {limit:,} bytes allowed here")


def error_response(status: int, diagnostics: str, headers: dict[str, str] | None = None) -> FhirResponse:
    """An OperationOutcome response for ``status``."""
    return ApiError(status, diagnostics, headers=headers).response()


def _from_fhirqa(exc: FhirqaError) -> ApiError:
    """fhirqa's own errors: the message is written for users, so it is safe to pass on."""
    if isinstance(exc, QueryError):
        status = 504 if "time limit" in str(exc) else 400
        return ApiError(status, str(exc))
    if isinstance(exc, StoreError):
        return ApiError(503, "the store is not available: " + str(exc).split(": ", 1)[-1],
                        headers={"Retry-After": "5"})
    if isinstance(exc, IngestAborted | SourceError):
        return ApiError(422, str(exc))
    return ApiError(400, str(exc))


def install_error_handlers(app: FastAPI) -> None:
    """Translate every error the app can meet into an OperationOutcome."""

    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> Response:
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        text = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404 and text == "Not Found":
            text = f"no such endpoint: {request.method} {request.url.path}"
        headers = dict(exc.headers or {})
        return error_response(exc.status_code, text, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        issues = []
        for error in exc.errors()[:20]:
            where = ".".join(str(p) for p in error.get("loc", ()))
            issues.append({"severity": "error", "code": "invalid", "diagnostics": f"{where}: {error.get('msg')}",
                           "expression": [where]})
        body = {"resourceType": "OperationOutcome", "issue": issues or [
            {"severity": "error", "code": "invalid", "diagnostics": "the request is not valid"}]}
        return FhirResponse(body, status_code=400)

    @app.exception_handler(UnknownView)
    async def _view(request: Request, exc: UnknownView) -> Response:
        return error_response(404, str(exc))

    @app.exception_handler(ViewDefinitionError)
    async def _viewdef(request: Request, exc: ViewDefinitionError) -> Response:
        return error_response(400, f"invalid ViewDefinition: {exc}")

    @app.exception_handler(FhirqaError)
    async def _fhirqa(request: Request, exc: FhirqaError) -> Response:
        return _from_fhirqa(exc).response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        request_id = getattr(request.state, "request_id", "-")
        log.error("internal error", exc_info=exc, extra={"request_id": request_id})
        return error_response(500, f"internal error (request {request_id}); the server log has the details")
