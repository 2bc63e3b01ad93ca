"""The fhirqa server: FHIR operations over HTTP (``fhirqa serve``), with SMART security and audit.

    from fhirqa.server import create_app, load_config
    app = create_app(load_config("fhirqa-server.toml"))

Modules, one idea each: ``config`` (file + environment), ``auth`` (token validation), ``scopes``
(SMART v1/v2), ``access`` (who may do what), ``tokens`` (built-in token endpoint), ``keys``,
``audit`` (AuditEvent NDJSON), ``logs`` (JSON logs, request middleware), ``errors``
(OperationOutcome), ``limits`` (body size, rate limits), ``jobs`` (background work), ``asking``
(questions in worker threads), ``fhir`` (Parameters, Provenance), ``capability``, ``schemas``
(OpenAPI) and the ``routes_*`` modules. See docs/server.md.
"""

from __future__ import annotations

from fhirqa.server.app import build_state, create_app
from fhirqa.server.config import ServerConfig, load_config

__all__ = ["ServerConfig", "build_state", "create_app", "load_config"]
