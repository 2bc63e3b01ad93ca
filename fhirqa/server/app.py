"""The app factory: :func:`create_app` wires configuration, security, jobs and routes together."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import Depends, FastAPI

from fhirqa import __version__
from fhirqa.server import (
    routes_ask,
    routes_auth,
    routes_check,
    routes_ingest,
    routes_jobs,
    routes_meta,
    routes_views,
    ui,
)
from fhirqa.server.asking import AskService
from fhirqa.server.audit import AuditLog
from fhirqa.server.auth import TokenValidator
from fhirqa.server.config import ServerConfig
from fhirqa.server.deps import ServerState, reject_unknown_query
from fhirqa.server.errors import FhirResponse, install_error_handlers
from fhirqa.server.jobs import JobManager
from fhirqa.server.keys import SigningKey
from fhirqa.server.limits import BodyLimitMiddleware, RateLimiter
from fhirqa.server.logs import RequestMiddleware
from fhirqa.server.tokens import TokenIssuer
from fhirqa.server.warmup import NotesWarmup

log = logging.getLogger("fhirqa.server")
#: Paths whose bodies may be large uploads; everything else gets ``max_body_bytes``.
_UPLOAD_PATHS = ("/$ingest",)


def build_state(config: ServerConfig) -> ServerState:
    """Everything the server holds; keys and clients are loaded here, so bad configuration fails at start."""
    config.state_path.mkdir(parents=True, exist_ok=True)
    key = SigningKey.load_or_create(config.signing_key_path)
    asker = AskService(config)
    return ServerState(
        config=config,
        signing_key=key,
        validator=TokenValidator(config, key),
        issuer=TokenIssuer(config, key),
        limiter=RateLimiter(config.rate_limit_per_minute, config.rate_limit_burst),
        audit=AuditLog(config.audit_path, config.audit_questions),
        jobs=JobManager(config.db, config.state_path, on_commit=asker.generations.changed),
        asker=asker,
        warmup=NotesWarmup(asker.store, config.warm_notes),
    )


def create_app(config: ServerConfig, state: ServerState | None = None) -> FastAPI:
    """The FastAPI application for ``config`` (``fhirqa serve`` runs it with uvicorn)."""
    state = state or build_state(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.audit.open()
        state.jobs.start()
        state.warmup.start()
        log.info("fhirqa server ready", extra={"url": config.public_url, "db": str(config.db),
                                               "issuers": len(state.validator.issuers),
                                               "clients": len(state.issuer.clients), "dev": config.dev})
        try:
            yield
        finally:
            # uvicorn has stopped taking requests and drained the open ones; now let the writer finish.
            state.stopping = True
            await anyio.to_thread.run_sync(state.jobs.stop, config.shutdown_grace_s)
            state.audit.close()
            log.info("fhirqa server stopped")

    app = FastAPI(
        title="fhirqa",
        version=__version__,
        description="Questions about a patient's FHIR record, answered with evidence; ingestion; view reads. "
                    "See docs/server.md.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        default_response_class=FhirResponse,
        dependencies=[Depends(reject_unknown_query)],
    )
    app.state.server = state
    install_error_handlers(app)
    for module in (routes_meta, routes_auth, routes_ask, routes_check, routes_views, routes_ingest, routes_jobs, ui):
        app.include_router(module.router)

    def body_limit(path: str) -> int:
        return config.max_ingest_bytes if path in _UPLOAD_PATHS else config.max_body_bytes

    # Outermost first: the request id and audit wrap everything, including size refusals.
    app.add_middleware(BodyLimitMiddleware, limit_for=body_limit)
    app.add_middleware(RequestMiddleware, audit=state.audit)
    return app
