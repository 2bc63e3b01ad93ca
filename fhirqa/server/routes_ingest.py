"""Ingestion over HTTP: ``POST /$ingest`` (a Bundle or NDJSON body) and ``POST /$pull`` (from a FHIR server).

Both become jobs on the single writer queue. Without ``Prefer: respond-async`` the request waits for
its job (up to ``sync_wait_s``) and answers with the report: counts per type and every rejection
with its origin. The body is written to disk, fsynced, before the job is acknowledged.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any

import anyio
import orjson
from fastapi import APIRouter, Depends, Header, Query, Request
from starlette.responses import Response

from fhirqa.server import access, schemas
from fhirqa.server.auth import Principal
from fhirqa.server.deps import (
    ID_PATTERN,
    JSON_TYPES,
    NDJSON_TYPES,
    audit_context,
    authenticated,
    media_type,
    read_json,
    server,
    wants_async,
)
from fhirqa.server.errors import ApiError, FhirResponse, JsonResponse, outcome
from fhirqa.server.fhir import read_parameters
from fhirqa.server.jobs import Job

router = APIRouter(tags=["ingestion"])
#: JSON uploads up to this size are parsed once up front, so a body that is no resource is a 400, not a job.
_CHECKED_JSON_BYTES = 64 * 1024 * 1024
_TYPE_PATTERN = r"^[A-Z][A-Za-z]{1,40}$"
IngestCaller = Annotated[Principal, Depends(authenticated("ingest", "C"))]
PullCaller = Annotated[Principal, Depends(authenticated("pull", "C"))]
_PULL_SPEC = schemas.spec_of(schemas.PULL_PARAMS)
_RESPONSES = {200: schemas.ok(schemas.JOB, "application/json", "The job finished: its report"),
              202: schemas.ASYNC_ACCEPTED, **schemas.errors(415, 422, 503)}


async def _finish(request: Request, job: Job, prefer: str | None) -> Response:
    state = server(request)
    base = state.config.public_url
    audit_context(request).detail["job"] = job.id
    location = {"Content-Location": f"{base}/jobs/{job.id}"}
    if not wants_async(prefer):
        job = await state.jobs.wait(job.id, state.config.sync_wait_s)
        if job.status == "failed":
            return FhirResponse(job.error or outcome("the ingest failed"), status_code=422, headers=location)
        if job.status == "completed":
            return JsonResponse(job.public(base), headers=location)
    return JsonResponse(job.public(base), status_code=202, headers=location)


@router.post("/$ingest", response_class=JsonResponse, operation_id="ingest", responses=_RESPONSES,
             openapi_extra=schemas.body(schemas.BUNDLE_IN, "application/fhir+json", "application/fhir+ndjson"))
async def ingest_body(request: Request, principal: IngestCaller, strict: bool = Query(False, description="abort on the first bad record"),
                      prefer: str | None = Header(None, description="respond-async: answer 202 at once")) -> Response:
    """Store a posted Bundle (``application/fhir+json``) or NDJSON (``application/fhir+ndjson``)."""
    state = server(request)
    access.require_system(principal, ("*",), access.WRITE, "ingestion")
    kind = media_type(request)
    if kind in JSON_TYPES:
        fmt = "json"
    elif kind in NDJSON_TYPES:
        fmt = "ndjson"
    else:
        raise ApiError(415, "send a Bundle as application/fhir+json or resources as application/fhir+ndjson")
    jobs = state.jobs
    job = Job(id=jobs.new_id(), kind="ingest", owner=principal.key, request={"format": fmt, "strict": strict})
    path = jobs.input_path(job.id)
    size = 0
    try:
        with path.open("wb") as handle:
            async for chunk in request.stream():
                size += len(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())  # acknowledged input must survive a crash
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size == 0 or (fmt == "json" and size <= _CHECKED_JSON_BYTES
                      and not await anyio.to_thread.run_sync(_is_resource, path)):
        path.unlink(missing_ok=True)
        raise ApiError(400, "the body is empty" if size == 0 else "the body is not a FHIR resource or Bundle")
    job.request["bytes"] = size
    jobs.submit_ingest(job)
    return await _finish(request, job, prefer)


def _is_resource(path: Path) -> bool:
    """True if the file holds one JSON object with a resourceType (a Bundle or a resource)."""
    try:
        body = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and isinstance(body.get("resourceType"), str)


def _pull_request(values: dict[str, Any], allowed: list[str]) -> dict[str, Any]:
    url = values.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ApiError(400, "url must be an http(s) FHIR base URL", expression=["url"])
    # The server reaches out only where its operator said it may: a pull is otherwise a way to make
    # it fetch arbitrary addresses (SSRF) with whatever network position it has.
    if not any(url.rstrip("/").startswith(prefix.rstrip("/")) for prefix in allowed):
        raise ApiError(403, "this server is not allowed to pull from that URL (see pull_allowed)", code="forbidden")
    request: dict[str, Any] = {"url": url, "bulk": bool(values.get("bulk") or False)}
    for name, pattern in (("patient", ID_PATTERN), ("since", schemas.INSTANT_PATTERN)):
        if values.get(name) is not None:
            if not re.match(pattern, values[name]):
                raise ApiError(400, f"{name} is not valid", expression=[name])
            request[name] = values[name]
    return request


@router.post("/$pull", response_class=JsonResponse, operation_id="pull", responses=_RESPONSES,
             openapi_extra=schemas.body(schemas.PULL_IN, "application/fhir+json"))
async def pull(request: Request, principal: PullCaller, prefer: str | None = Header(None, description="respond-async: answer 202 at once")) -> Response:
    """Read a FHIR server (``Patient/$everything`` with a patient, or Bulk ``$export``) into the store."""
    state = server(request)
    access.require_system(principal, ("*",), access.WRITE, "ingestion")
    body = await read_json(request)
    values = read_parameters(body, _PULL_SPEC)
    req = _pull_request(values, state.config.pull_allowed)
    # Every `type` parameter counts, not just the first (read_parameters has checked them all).
    types = [p["valueCode"] for p in body["parameter"] if p["name"] == "type"]
    if any(not re.match(_TYPE_PATTERN, t) for t in types):
        raise ApiError(400, "type must name a FHIR resource type", expression=["type"])
    if types:
        req["types"] = types
    token = values.get("token")
    req["token_given"] = bool(token)
    jobs = state.jobs
    job = Job(id=jobs.new_id(), kind="pull", owner=principal.key, request=req)
    jobs.submit_ingest(job, {"token": token} if token else None)
    return await _finish(request, job, prefer)
