"""Note–table consistency as a server operation: ``$check-consistency`` and its plain-JSON twin.

A client posts a note's text (with its time and type) or names a note of the patient; the answer is the
per-entity report of ``fhirqa.consistency``: consistent / inconsistent, the field that disagrees, the
note span and the record rows compared. Patient-scoped like ``$ask``: a token reaches only its patient,
and a note reference of another patient is simply not found. A patient of an OMOP/MIMIC database loaded
beside the views is checked by the same checker over that database's rows (notes from ``note`` /
``noteevents``, refs ``table/row id``; :mod:`fhirqa.sql.patient_rows`).
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Path, Request
from starlette.responses import Response

from fhirqa.server import access, schemas
from fhirqa.server.auth import Principal
from fhirqa.server.deps import ID_PATTERN, authenticated, read_json, server
from fhirqa.server.errors import ApiError, FhirResponse, JsonResponse

router = APIRouter(tags=["consistency"])
CheckCaller = Annotated[Principal, Depends(authenticated("check-consistency"))]
PatientId = Path(pattern=ID_PATTERN, description="Patient id")
_FIELDS = {"note", "text", "time", "type", "encounter"}
_JSON_IN = {"type": "object", "additionalProperties": False, "properties": {
    "note": {"type": "string", "description": "a note of the patient, e.g. DocumentReference/123 (OMOP/MIMIC: note/7, noteevents/7; omit: every note)"},
    "text": {"type": "string", "description": "a note's text to check instead of a stored note"},
    "time": {"type": "string", "description": "the note's time (ISO 8601), required with text"},
    "type": {"type": "string", "description": "note type: progress, nursing, admission, discharge summary…"},
    "encounter": {"type": "string", "description": "Encounter/… the note belongs to"}}}
_JSON_OUT = {"type": "object", "properties": {"reports": {"type": "array", "items": {"type": "object"}}}}
_RESPONSES_JSON = {200: schemas.ok(_JSON_OUT, "application/json"), **schemas.errors(404, 415)}
_RESPONSES_FHIR = {200: schemas.ok({"type": "object"}), **schemas.errors(404, 415)}
_FHIR_IN = {"type": "object", "properties": {"resourceType": {"type": "string", "enum": ["Parameters"]},
                                             "parameter": {"type": "array", "items": {"type": "object"}}},
            "required": ["resourceType"]}


def _check(db: Any, patient: str, values: dict[str, Any], in_store: bool = True) -> list[dict[str, Any]]:
    from fhirqa.consistency import check_note, check_patient
    from fhirqa.sql.patient_rows import record_beside

    # a patient only an OMOP/MIMIC database beside the views holds: the same checker over that database's rows
    rows = None if in_store else record_beside(db, patient, in_store=False)
    store = db if rows is None else None
    if values.get("text"):
        if not values.get("time"):
            raise ApiError(400, "a note text needs its time (ISO 8601)")
        report = check_note(store, patient, str(values["text"]), str(values["time"]), str(values.get("type") or "progress"),
                            values.get("encounter"), rows=rows)
        return [report.to_dict()]
    reports = check_patient(store, patient, values.get("note"), rows=rows)
    if values.get("note") and not reports:
        raise ApiError(404, "no such note for this patient")
    return [r.to_dict() for r in reports]


async def _run(request: Request, principal: Principal, patient: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    access.require_ask(principal, patient)
    state = server(request)
    state.asker.require_patient(patient, relational=True)
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise ApiError(400, f"unknown field(s) {unknown[:5]}; give note, or text with time and type")
    in_store = await anyio.to_thread.run_sync(state.asker.patients.contains, patient)
    return await anyio.to_thread.run_sync(_check, state.config.db, patient, values, in_store)


@router.post("/api/patients/{id}/check-consistency", response_class=JsonResponse, operation_id="checkConsistencyJson",
             responses=_RESPONSES_JSON, openapi_extra=schemas.body(_JSON_IN, "application/json"))
async def check_json(request: Request, principal: CheckCaller, id: str = PatientId) -> Response:  # noqa: A002
    """``{"note": "DocumentReference/…"}``, or ``{"text", "time", "type"}``, or ``{}`` for every note → reports."""
    access.require_ask(principal, id)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    return JsonResponse({"reports": await _run(request, principal, id, body)})


@router.post("/Patient/{id}/$check-consistency", response_class=FhirResponse, operation_id="checkConsistency",
             responses=_RESPONSES_FHIR, openapi_extra=schemas.body(_FHIR_IN, "application/fhir+json"))
async def check_fhir(request: Request, principal: CheckCaller, id: str = PatientId) -> Response:  # noqa: A002
    """Parameters in (note as valueReference, or text/time/type as strings); Parameters out, one part per report."""
    access.require_ask(principal, id)
    body = await read_json(request)
    if not isinstance(body, dict) or body.get("resourceType") != "Parameters":
        raise ApiError(400, "the body must be a FHIR Parameters resource")
    values: dict[str, Any] = {}
    parameters = body.get("parameter") or []
    if not isinstance(parameters, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                                   for p in parameters):
        raise ApiError(400, "Parameters.parameter must be a list of objects, each with a name")
    for parameter in parameters:
        name = parameter.get("name")
        if not isinstance(parameter.get("valueReference", {}), dict):
            raise ApiError(400, f"parameter {name!r}: valueReference must be an object")
        value = (parameter.get("valueReference") or {}).get("reference") or next(
            (v for k, v in parameter.items() if k.startswith("value")), None)
        if value is not None and not isinstance(value, str):
            raise ApiError(400, f"parameter {name!r}: expected a string, reference or dateTime value")
        values[str(name)] = value
    reports = await _run(request, principal, id, values)
    out = {"resourceType": "Parameters", "parameter": [
        {"name": "report", "part": [
            *([{"name": "note", "valueReference": {"reference": r["note_ref"]}}] if r.get("note_ref") else []),
            {"name": "inconsistent", "valueInteger": int((r.get("counts") or {}).get("inconsistent", 0))},
            {"name": "checked", "valueInteger": len(r.get("entities", []))},
            {"name": "detail", "valueString": _json(r)},
        ]} for r in reports]}
    return FhirResponse(out)


def _json(data: Any) -> str:
    import json

    return json.dumps(data, ensure_ascii=False, default=str)
