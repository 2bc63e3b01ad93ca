"""Routes anyone may call: capability and SMART discovery, OperationDefinitions, keys, health and readiness."""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from fhirqa.errors import FhirqaError
from fhirqa.server import schemas
from fhirqa.server.capability import capability_statement, operation_definitions, smart_configuration
from fhirqa.server.deps import audit_context, server
from fhirqa.server.errors import ApiError, FhirResponse, JsonResponse
from fhirqa.store import Store

router = APIRouter(tags=["discovery and operations"])


@router.get("/metadata", response_class=FhirResponse, operation_id="metadata",
            responses={200: schemas.ok(schemas.resource_schema("CapabilityStatement")), **schemas.errors()})
async def metadata(request: Request) -> Response:
    """The CapabilityStatement: operations and SMART security."""
    audit_context(request).operation = "metadata"
    return FhirResponse(capability_statement(server(request).config))


@router.get("/.well-known/smart-configuration", response_class=JsonResponse, operation_id="smartConfiguration",
            responses={200: schemas.ok({"type": "object", "required": ["token_endpoint"]}, "application/json"),
                       **schemas.errors()})
async def smart_config(request: Request) -> Response:
    """SMART discovery: the built-in token endpoint and supported scopes."""
    audit_context(request).operation = "smart-configuration"
    return JsonResponse(smart_configuration(server(request).config))


@router.get("/OperationDefinition", response_class=FhirResponse, operation_id="listOperationDefinitions",
            responses={200: schemas.ok(schemas.resource_schema("Bundle")), **schemas.errors()})
async def list_operations(request: Request) -> Response:
    """Every OperationDefinition of fhirqa, as a searchset Bundle."""
    audit_context(request).operation = "operation-definitions"
    base = server(request).config.public_url
    entries = [{"fullUrl": f"{base}/OperationDefinition/{op['id']}", "resource": op}
               for op in operation_definitions().values()]
    return FhirResponse({"resourceType": "Bundle", "type": "searchset", "total": len(entries), "entry": entries})


@router.get("/OperationDefinition/{op_id}", response_class=FhirResponse, operation_id="readOperationDefinition",
            responses={200: schemas.ok(schemas.resource_schema("OperationDefinition")), **schemas.errors(404)})
async def read_operation(request: Request, op_id: str = Path(max_length=64)) -> Response:
    """One OperationDefinition (``fhirqa-ask``, ``fhirqa-ingest``, ``fhirqa-pull``, ``fhirqa-viewdefinition-run``)."""
    audit_context(request).operation = "operation-definitions"
    for op in operation_definitions().values():
        if op["id"] == op_id:
            return FhirResponse(op)
    raise ApiError(404, f"no OperationDefinition {op_id[:64]!r}")


@router.get("/auth/jwks", response_class=JsonResponse, operation_id="jwks",
            responses={200: schemas.ok(schemas.JWKS, "application/json"), **schemas.errors()})
async def jwks(request: Request) -> Response:
    """The public key the built-in token endpoint signs with (for resource servers that verify our tokens)."""
    audit_context(request).operation = "jwks"
    return JsonResponse({"keys": [server(request).signing_key.jwk]})


@router.get("/healthz", response_class=JsonResponse, operation_id="healthz",
            responses={200: schemas.ok(schemas.STATUS, "application/json"), **schemas.errors()})
async def healthz() -> Response:
    """Liveness: the process answers."""
    return JsonResponse({"status": "ok"})


def _store_state(db: str) -> dict[str, object]:
    store = Store(db)
    if not store.exists():
        return {"status": "ready", "generation": 0, "empty": True}
    con = store.connect()  # opening registers every view: proves the files of this generation are there
    try:
        con.execute("SELECT count(*) FROM patient").fetchall()
    finally:
        con.close()
    return {"status": "ready", "generation": store.manifest.generation, "empty": False}


@router.get("/readyz", response_class=JsonResponse, operation_id="readyz",
            responses={200: schemas.ok(schemas.STATUS, "application/json"), **schemas.errors(503)})
async def readyz(request: Request) -> Response:
    """Readiness: the store opens and reads (503 while shutting down or when it cannot)."""
    state = server(request)
    if state.stopping:
        raise ApiError(503, "the server is shutting down", headers={"Retry-After": "5"})
    try:
        body = await anyio.to_thread.run_sync(_store_state, str(state.config.db))
    except (FhirqaError, OSError, RuntimeError) as exc:
        raise ApiError(503, f"the store cannot be opened: {type(exc).__name__}", headers={"Retry-After": "5"}) from None
    except Exception as exc:  # noqa: BLE001 - DuckDB errors on missing or broken files: not ready, not a 500
        raise ApiError(503, f"the store cannot be read: {type(exc).__name__}", headers={"Retry-After": "5"}) from None
    return JsonResponse({**body, "notes": state.warmup.status})
