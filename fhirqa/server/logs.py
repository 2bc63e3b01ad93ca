"""Structured JSON logs and the per-request middleware that writes the access line and the audit event.

Ordinary logs carry the route template (``/Patient/{id}/$ask``), never the concrete path or the
query string: a question travels in the SSE query string, and patient ids are identifiers. Tokens
are never logged. uvicorn's own access log is switched off in favour of this one.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fhirqa.server.audit import AuditContext, AuditLog
from fhirqa.server.errors import dumps
from fhirqa.server.ids import new_id

access_log = logging.getLogger("fhirqa.server.access")
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
#: Liveness and readiness probes come every few seconds and say nothing about anyone: not audited.
_QUIET = ("/healthz", "/readyz")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as JSON."""
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key != "color_message":
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return dumps(entry).decode()


def log_config(level: str = "info") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the server and uvicorn: JSON lines on stderr."""
    level = level.upper()
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"stderr": handler},
        "loggers": {
            "fhirqa": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }


def _client_address(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


class RequestMiddleware:
    """Gives each request an id, then logs one access line and writes one AuditEvent when it ends."""

    def __init__(self, app: ASGIApp, audit: AuditLog) -> None:
        self.app = app
        self.audit = audit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_id()[:16]
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._finish(scope, state, status, request_id, started)

    def _finish(self, scope: Scope, state: dict[str, Any], status: int, request_id: str, started: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "(no route)"
        ctx: AuditContext = state.get("audit") or AuditContext()
        principal = ctx.principal
        access_log.info(
            "request",
            extra={"request_id": request_id, "method": scope.get("method"), "route": template, "status": status,
                   "ms": round((time.perf_counter() - started) * 1000, 1),
                   "client": principal.key if principal else None},
        )
        if scope.get("path") not in _QUIET:
            event = self.audit.event(ctx, method=str(scope.get("method")), path=template, status=status,
                                     address=_client_address(scope), request_id=request_id)
            self.audit.write(event)
