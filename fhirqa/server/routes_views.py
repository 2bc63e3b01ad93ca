"""Reading the store: a patient's rows of a canonical view, and ``$viewdefinition-run``.

Every query here is fixed SQL with bound parameters: the view name is checked against the store's
own views and column names come from ``views/catalog.json``, never from the request. Rows are
always filtered by patient: the path's patient for view reads, the token's patient (or the
``patient`` parameter) for ``$viewdefinition-run``.
"""

from __future__ import annotations

import csv
import io
import time
from datetime import UTC, datetime
from typing import Annotated, Any

import anyio
import orjson
from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.responses import Response

from fhirqa.agent.catalog import load_catalog, view_info
from fhirqa.agent.engine import shared_connection
from fhirqa.agent.relational import database_for
from fhirqa.server import access, schemas
from fhirqa.server.auth import Principal
from fhirqa.server.deps import ID_PATTERN, audit_context, authenticated, read_json, server
from fhirqa.server.errors import ApiError, JsonResponse, dumps
from fhirqa.server.fhir import read_parameters
from fhirqa.store import Store
from fhirqa.viewdef import compile_view

router = APIRouter(tags=["views"])
ViewsCaller = Annotated[Principal, Depends(authenticated("views", "R"))]
ViewReadCaller = Annotated[Principal, Depends(authenticated("view-read", "R"))]
ViewRunCaller = Annotated[Principal, Depends(authenticated("viewdefinition-run"))]
MAX_ROWS = 10_000
RUN_TIME_LIMIT_S = 30.0
_RUN_SPEC = schemas.spec_of(schemas.RUN_PARAMS)


@router.get("/views", response_class=JsonResponse, operation_id="listViews",
            responses={200: schemas.ok(schemas.VIEW_LIST, "application/json"), **schemas.errors()})
async def list_views(request: Request, principal: ViewsCaller) -> Response:
    """The canonical views and their columns (no patient data)."""
    views = [{"name": v.name, "description": v.description, "columns": v.columns,
              "resource_types": list(access.view_types(v.name))} for v in load_catalog().values()]
    return JsonResponse({"views": views})


def _instant(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(400, f"{name} must be an ISO 8601 date or instant", expression=[name]) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # naive times are UTC, as in the store


def _read_view(store: Store, view: str, patient: str, since: datetime | None, until: datetime | None,
               name: str | None, limit: int) -> dict[str, Any]:
    info = view_info(view)  # UnknownView (404) for a name the catalog does not know
    if view not in store.view_names():
        raise ApiError(404, f"the store has no view {view!r}")
    where: list[str] = ["patient_id = ?"]
    params: list[Any] = [patient]
    if (since or until) and not info.time_field:
        raise ApiError(400, f"view {view} has no time field to filter on", expression=["since"])
    if since is not None:
        where.append(f"{info.time_field} >= ?")
        params.append(since)
    if until is not None:
        where.append(f"{info.time_field} < ?")
        params.append(until)
    if name:
        escaped = name.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append(f"lower({info.name_field}) LIKE ? ESCAPE '\\'")
        params.append(f"%{escaped}%")
    order = f"{info.time_field} NULLS LAST, ref" if info.time_field else "ref"
    sql = f"SELECT * FROM {view} WHERE {' AND '.join(where)} ORDER BY {order}"
    cursor = shared_connection(store).cursor()
    try:
        result = store.query(sql, params, limit=limit, con=cursor)
    finally:
        cursor.close()
    rows = result.records()
    return {"view": view, "patient": patient, "columns": result.columns, "rows": rows, "count": len(rows),
            "truncated": result.truncated}


@router.get("/Patient/{id}/views/{view}", response_class=JsonResponse, operation_id="readPatientView",
            responses={200: schemas.ok(schemas.VIEW_ROWS, "application/json"), **schemas.errors(404, 503, 504)})
async def read_view(
    request: Request, principal: ViewReadCaller,
    id: str = Path(pattern=ID_PATTERN, description="Patient id"),  # noqa: A002
    view: str = Path(pattern=r"^[a-z][a-z_]{0,40}$", description="observation, medication, condition, …"),
    since: str | None = Query(None, description="rows at or after this time (the view's time field)"),
    until: str | None = Query(None, description="rows before this time"),
    name: str | None = Query(None, max_length=200, description="item name contains (case-insensitive)"),
    limit: int = Query(100, ge=1, le=MAX_ROWS)
) -> Response:
    """One patient's rows of a canonical view, oldest first, filtered by time and item name.

    A patient who lives only in an OMOP or MIMIC-III database loaded beside the views is read from it:
    the same view names, the schema's canonical columns, ``ref`` as ``table/row id``.
    """
    state = server(request)
    audit_context(request).detail["view"] = view
    access.require_read(principal, id, access.view_types(view))
    window = _instant(since, "since"), _instant(until, "until")
    if not state.asker.patients.contains(id):
        database = await anyio.to_thread.run_sync(database_for, state.asker.store.db, id)
        if database is None:
            raise ApiError(404, "no such patient in this store")
        body = await anyio.to_thread.run_sync(_read_relational, database, view, id, *window, name, limit)
        return JsonResponse(body)
    body = await anyio.to_thread.run_sync(_read_view, state.asker.store, view, id, *window, name, limit)
    return JsonResponse(body)


def _read_relational(database: Any, view: str, patient: str, since: datetime | None, until: datetime | None,
                     name: str | None, limit: int) -> dict[str, Any]:
    from fhirqa.sql.browse import RelationalPatient, UnknownRelationalView

    try:
        return RelationalPatient(database, patient).rows(view, since=since, until=until, name=name,
                                                         limit=limit).as_json()
    except UnknownRelationalView as exc:
        raise ApiError(404, str(exc)) from None


def _run(store: Store, viewdef: dict[str, Any], patient: str | None, limit: int) -> tuple[list[str], list[tuple], bool]:
    view = compile_view(viewdef)
    sql = "SELECT json FROM resources WHERE resource_type = ?" + (" AND patient_id = ?" if patient else "")
    params = [view.resource, patient] if patient else [view.resource]
    cursor = shared_connection(store).cursor()
    rows: list[tuple] = []
    started = time.monotonic()
    try:
        cursor.execute(sql + " ORDER BY id", params)
        while batch := cursor.fetchmany(500):
            for (text,) in batch:
                rows.extend(view.rows(orjson.loads(text)))
                if len(rows) > limit:
                    return view.column_names, rows[:limit], True
            if time.monotonic() - started > RUN_TIME_LIMIT_S:
                raise ApiError(504, f"the view ran longer than {RUN_TIME_LIMIT_S:g} s; narrow it (patient, where)")
    finally:
        cursor.close()
    return view.column_names, rows, False


def _render(columns: list[str], rows: list[tuple], fmt: str) -> tuple[bytes, str]:
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else dumps(v).decode() if isinstance(v, list | dict) else v for v in row])
        return out.getvalue().encode(), "text/csv"
    records = [dict(zip(columns, row, strict=True)) for row in rows]
    if fmt == "ndjson":
        return b"".join(dumps(r) + b"\n" for r in records), "application/x-ndjson"
    return dumps(records), "application/json"


@router.post("/$viewdefinition-run", operation_id="viewDefinitionRun",
             responses={200: {"description": "The view's rows (X-Truncated: true when the limit cut them)",
                              "headers": {"X-Truncated": {"schema": {"type": "string", "enum": ["true", "false"]}}},
                              "content": {"application/json": {"schema": {"type": "array",
                                                                          "items": {"type": "object"}}},
                                          "application/x-ndjson": {"schema": {"type": "string"}},
                                          "text/csv": {"schema": {"type": "string"}}}},
                        **schemas.errors(404, 415, 503, 504)},
             openapi_extra=schemas.body(schemas.VIEWDEF_IN, "application/fhir+json"))
async def viewdefinition_run(request: Request, principal: ViewRunCaller
                             ) -> Response:
    """Run a posted SQL-on-FHIR v2 ViewDefinition (bare, or as ``viewResource`` in Parameters)."""
    state = server(request)
    body = await read_json(request)
    if isinstance(body, dict) and body.get("resourceType") == "Parameters":
        values = read_parameters(body, _RUN_SPEC)
    elif isinstance(body, dict) and body.get("resourceType") == "ViewDefinition":
        values = {"viewResource": body}
    else:
        raise ApiError(400, "post a ViewDefinition, or Parameters with a viewResource")
    viewdef = values.get("viewResource")
    if not isinstance(viewdef, dict) or not isinstance(viewdef.get("resource"), str):
        raise ApiError(400, "give a ViewDefinition (with resource and select)", expression=["viewResource"])
    resource = viewdef["resource"]
    limit = values.get("_limit", 1000)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_ROWS:
        raise ApiError(400, f"_limit must be an integer from 1 to {MAX_ROWS}", expression=["_limit"])
    fmt = values.get("_format", "json")
    if fmt not in ("json", "ndjson", "csv"):
        raise ApiError(400, "_format must be json, ndjson or csv", expression=["_format"])
    patient = values.get("patient")
    if patient is not None:
        if not isinstance(patient, str) or not patient.strip():
            raise ApiError(400, "patient must be a reference to a Patient", expression=["patient"])
        patient = patient.removeprefix("Patient/")
    patient = patient or principal.patient  # a token with a patient never sees other patients' rows
    ctx = audit_context(request)
    ctx.detail["resource"] = resource[:64]
    if patient is not None:
        ctx.patient = patient
        access.require_read(principal, patient, (resource,))
    else:
        access.require_system(principal, (resource,), access.READ, "running a view across all patients")
    columns, rows, truncated = await anyio.to_thread.run_sync(_run, state.asker.store, viewdef, patient, limit)
    content, media = _render(columns, rows, fmt)
    return Response(content, media_type=media, headers={"X-Truncated": "true" if truncated else "false"})
