"""Job status: ``GET /jobs/{id}`` (202 while queued or running, 200 once finished) and ``GET /jobs``.

A job is visible to the principal that started it; a system-level reader without patient context
sees all jobs; a token with a patient sees only its own jobs about that patient. Anything else is
answered 404, exactly like a job that does not exist, so ids cannot be probed.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.responses import Response

from fhirqa.server import access, schemas
from fhirqa.server.auth import Principal
from fhirqa.server.deps import audit_context, authenticated, server
from fhirqa.server.errors import ApiError, JsonResponse

router = APIRouter(tags=["jobs"])
JobCaller = Annotated[Principal, Depends(authenticated("job-status", "R"))]
JobListCaller = Annotated[Principal, Depends(authenticated("job-list", "R"))]
_PROGRESS = {"X-Progress": {"schema": {"type": "string"}, "description": "status and records read"}}


@router.get("/jobs/{job_id}", response_class=JsonResponse, operation_id="jobStatus",
            responses={200: schemas.ok(schemas.JOB, "application/json", "The job finished (completed, failed or "
                                       "interrupted)"),
                       202: schemas.ok(schemas.JOB, "application/json", "Still queued or running", _PROGRESS),
                       **schemas.errors(404)})
async def job_status(request: Request, principal: JobCaller, job_id: str = Path(pattern=r"^[0-9a-f]{32}$")) -> Response:
    """One job: its status, progress, and once finished its result or error."""
    state = server(request)
    audit_context(request).detail["job"] = job_id
    job = state.jobs.get(job_id)
    if job is None or not access.can_see_job(principal, job.owner, job.patient):
        raise ApiError(404, "no such job")
    if job.patient:
        audit_context(request).patient = job.patient
    body = job.public(state.config.public_url)
    if job.status in ("queued", "running"):
        return JsonResponse(body, status_code=202, headers={"X-Progress": f"{job.status}, {job.progress} records"})
    return JsonResponse(body)


@router.get("/jobs", response_class=JsonResponse, operation_id="listJobs",
            responses={200: schemas.ok(schemas.JOB_LIST, "application/json"), **schemas.errors()})
async def list_jobs(request: Request, principal: JobListCaller, limit: int = Query(50, ge=1, le=500)) -> Response:
    """The jobs this token may see, newest first."""
    state = server(request)
    visible = [j for j in state.jobs.all() if access.can_see_job(principal, j.owner, j.patient)][:limit]
    return JsonResponse({"jobs": [j.public(state.config.public_url) for j in visible]})
