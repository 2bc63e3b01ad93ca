"""Questions: ``$ask`` (FHIR Parameters), its plain-JSON twin, patient lookup, and a progress stream (SSE)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from starlette.responses import Response, StreamingResponse

from fhirqa.server import access, schemas
from fhirqa.server.auth import Principal
from fhirqa.server.deps import (
    ID_PATTERN,
    audit_context,
    authenticated,
    read_json,
    server,
    wants_async,
    wants_fresh,
)
from fhirqa.server.errors import FhirResponse, JsonResponse, dumps, outcome
from fhirqa.server.fhir import answer_parameters, read_parameters
from fhirqa.server.jobs import Job

router = APIRouter(tags=["questions"])
AskCaller = Annotated[Principal, Depends(authenticated("ask"))]
LookupCaller = Annotated[Principal, Depends(authenticated("ask-lookup"))]
StreamCaller = Annotated[Principal, Depends(authenticated("ask-stream"))]
_ASK_SPEC = schemas.spec_of(schemas.ASK_PARAMS)
_KEEPALIVE_S = 15.0
PatientId = Path(pattern=ID_PATTERN, description="Patient id")
Prefer = Header(None, description="respond-async: answer 202 with a job to poll")
CacheControl = Header(None, description="no-cache: compute the answer again")


def _accepted(request: Request, job: Job) -> Response:
    url = f"{server(request).config.public_url}/jobs/{job.id}"
    return JsonResponse(job.public(server(request).config.public_url), status_code=202,
                        headers={"Content-Location": url})


async def _respond(request: Request, principal: Principal, patient: str | None, prefer: str | None,
                   work: Callable[[], Awaitable[dict[str, Any]]], response: type[Response]) -> Response:
    """Answer now, or (``Prefer: respond-async``) start a job and answer 202 with its URL."""
    if wants_async(prefer):
        jobs = server(request).jobs
        job = jobs.submit_ask(Job(id=jobs.new_id(), kind="ask", owner=principal.key, patient=patient,
                                  request={"operation": audit_context(request).operation}), work)
        audit_context(request).detail["job"] = job.id
        return _accepted(request, job)
    return response(await work())


async def _prepare(request: Request, principal: Principal, patient: str | None, values: dict[str, Any]
                   ) -> tuple[str, str | None, str]:
    """Access checks and validated inputs, in the order that leaks nothing (403 before 404)."""
    state = server(request)
    if patient is None:
        access.require_system(principal, ("Patient",), access.READ, "asking without a patient (patient lookup)")
    else:
        access.require_ask(principal, patient)
    question, now, backend = state.asker.check_request(values.get("question"), values.get("now"),
                                                       values.get("backend"))
    audit_context(request).question = question
    if patient is not None:
        state.asker.require_patient(patient, relational=True)
    return question, now, backend


async def _ask_fhir(request: Request, principal: Principal, patient: str | None, prefer: str | None,
                    cache_control: str | None) -> Response:
    state = server(request)
    if patient is None:  # refuse before reading the body
        access.require_system(principal, ("Patient",), access.READ, "asking without a patient (patient lookup)")
    else:
        access.require_ask(principal, patient)
    values = read_parameters(await read_json(request), _ASK_SPEC)
    question, now, backend = await _prepare(request, principal, patient, values)

    async def work() -> dict[str, Any]:
        answer = await state.asker.answer(question, patient, now, backend, use_cache=not wants_fresh(cache_control))
        return answer_parameters(answer, patient)

    return await _respond(request, principal, patient, prefer, work, FhirResponse)


async def _ask_json(request: Request, principal: Principal, patient: str | None, prefer: str | None,
                    cache_control: str | None) -> Response:
    state = server(request)
    if patient is None:
        access.require_system(principal, ("Patient",), access.READ, "asking without a patient (patient lookup)")
    else:
        access.require_ask(principal, patient)
    body = await read_json(request)
    if not isinstance(body, dict):
        return FhirResponse(outcome("the body must be a JSON object with a question", "invalid"), status_code=400)
    unknown = sorted(set(body) - set(_ASK_SPEC))
    if unknown:
        return FhirResponse(outcome(f"unknown field(s) {unknown[:5]}; give question, now, backend", "invalid"),
                            status_code=400)
    question, now, backend = await _prepare(request, principal, patient, body)

    async def work() -> dict[str, Any]:
        return await state.asker.answer(question, patient, now, backend, use_cache=not wants_fresh(cache_control))

    return await _respond(request, principal, patient, prefer, work, JsonResponse)


_FHIR_RESPONSES = {200: schemas.ok(schemas.PARAMETERS_OUT), 202: schemas.ASYNC_ACCEPTED,
                   **schemas.errors(404, 415, 503, 504)}
_JSON_RESPONSES = {200: schemas.ok(schemas.ANSWER, "application/json"), 202: schemas.ASYNC_ACCEPTED,
                   **schemas.errors(404, 415, 503, 504)}


@router.post("/Patient/{id}/$ask", response_class=FhirResponse, operation_id="askPatient",
             responses=_FHIR_RESPONSES, openapi_extra=schemas.body(schemas.ASK_IN, "application/fhir+json"))
async def ask_patient(request: Request, principal: AskCaller, id: str = PatientId, prefer: str | None = Prefer,  # noqa: A002
                      cache_control: str | None = CacheControl) -> Response:
    """Answer a question about one patient: Parameters in (question, now, backend), Parameters out."""
    return await _ask_fhir(request, principal, id, prefer, cache_control)


@router.post("/$ask", response_class=FhirResponse, operation_id="askLookup",
             responses=_FHIR_RESPONSES, openapi_extra=schemas.body(schemas.ASK_IN, "application/fhir+json"))
async def ask_lookup(request: Request, principal: LookupCaller, prefer: str | None = Prefer, cache_control: str | None = CacheControl) -> Response:
    """A question without a patient (which patient is…): system scope only."""
    return await _ask_fhir(request, principal, None, prefer, cache_control)


@router.post("/api/patients/{id}/ask", response_class=JsonResponse, operation_id="askPatientJson",
             responses=_JSON_RESPONSES, openapi_extra=schemas.body(schemas.ASK_JSON_IN, "application/json"))
async def ask_patient_json(request: Request, principal: AskCaller, id: str = PatientId, prefer: str | None = Prefer,  # noqa: A002
                           cache_control: str | None = CacheControl) -> Response:
    """The plain-JSON twin of ``$ask``: ``{"question", "now", "backend"}`` in, ``Answer.to_dict()`` out."""
    return await _ask_json(request, principal, id, prefer, cache_control)


@router.post("/api/ask", response_class=JsonResponse, operation_id="askLookupJson",
             responses=_JSON_RESPONSES, openapi_extra=schemas.body(schemas.ASK_JSON_IN, "application/json"))
async def ask_lookup_json(request: Request, principal: LookupCaller, prefer: str | None = Prefer, cache_control: str | None = CacheControl) -> Response:
    """The plain-JSON twin of ``POST /$ask`` (patient lookup, system scope only)."""
    return await _ask_json(request, principal, None, prefer, cache_control)


def _event(name: str, data: Any) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


@router.get("/Patient/{id}/$ask/stream", operation_id="askPatientStream",
            responses={200: schemas.ok({"type": "string"}, "text/event-stream",
                                       "Server-sent events: plan, tool, tool_result, answer (or error)"),
                       **schemas.errors(404, 503)})
async def ask_stream(request: Request, principal: StreamCaller, id: str = PatientId,  # noqa: A002
                     question: str = Query(min_length=1, max_length=2000),
                     now: str | None = Query(None, description="ISO 8601 date or instant", pattern=schemas.INSTANT_PATTERN),
                     backend: str | None = Query(None)) -> Response:
    """Progress of one question as server-sent events, for a UI: ``plan``, ``tool``…, then ``answer``."""
    state = server(request)
    q, moment, model = await _prepare(request, principal, id, {"question": question, "now": now, "backend": backend})
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def emit(name: str, data: dict[str, Any]) -> None:  # called from the worker thread
        loop.call_soon_threadsafe(queue.put_nowait, (name, data))

    async def run() -> None:
        try:
            answer = await state.asker.answer(q, id, moment, model, use_cache=False, emit=emit)
            await queue.put(("answer", answer))
        except Exception as exc:  # noqa: BLE001 - reported to the client as an error event
            text = getattr(exc, "diagnostics", None) or "the question could not be answered"
            await queue.put(("error", outcome(text, getattr(exc, "code", "exception"))))

    async def events() -> AsyncIterator[bytes]:
        task = asyncio.create_task(run())
        try:
            while True:
                try:
                    name, data = await asyncio.wait_for(queue.get(), _KEEPALIVE_S)
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                yield _event(name, data)
                if name in ("answer", "error"):
                    return
        finally:
            task.cancel()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
