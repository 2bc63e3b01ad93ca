"""JSON helpers the page needs beyond the server's own routes: who am I, patient search, a header,
and one raw resource.

Each route takes the same bearer token as every other route (:func:`fhirqa.server.deps.authenticated`)
and applies the same rules (:mod:`fhirqa.server.access`): a token with a patient in context reaches
that patient only; reading a patient's data needs read+search on the resource types involved;
searching across patients needs a ``user/`` or ``system/`` Patient scope and no patient in context.
Sections of the header the token may not read are left out and named, not refused as a whole.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.responses import Response

from fhirqa.agent.relational import database_for, relational_databases
from fhirqa.server import access
from fhirqa.server.auth import Principal
from fhirqa.server.deps import ID_PATTERN, audit_context, authenticated, server
from fhirqa.server.errors import ApiError, FhirResponse, JsonResponse
from fhirqa.server.ui import data
from fhirqa.server.ui.security import SecureRoute

router = APIRouter(route_class=SecureRoute, include_in_schema=False, prefix="/ui/api")
SessionCaller = Annotated[Principal, Depends(authenticated("ui-session", "R"))]
SearchCaller = Annotated[Principal, Depends(authenticated("ui-patient-search", "E"))]
HeaderCaller = Annotated[Principal, Depends(authenticated("ui-patient-header", "R"))]
ResourceCaller = Annotated[Principal, Depends(authenticated("ui-resource-read", "R"))]
NotesCaller = Annotated[Principal, Depends(authenticated("ui-note-list", "E"))]
NoteCaller = Annotated[Principal, Depends(authenticated("ui-note-read", "R"))]
#: The resource types a note can be (the ``note`` view's sources).
NOTE_TYPES = access.view_types("note")
PatientId = Path(pattern=ID_PATTERN, description="Patient id")
#: Header sections and the resource types each one reads.
SECTIONS: dict[str, tuple[str, ...]] = {
    "problems": access.view_types("condition"),
    "medications": access.view_types("medication"),
    "allergies": access.view_types("allergy"),
}
_READERS = {"problems": data.active_problems, "medications": data.current_medications,
            "allergies": data.allergies}


def store_has(store: Any, patient_id: str) -> bool:
    """The FHIR views hold ``patient_id`` (else the patient may live in a relational database beside them)."""
    return data.demographics(store, patient_id) is not None


def _source_row(database: Any, patient_id: str, table: str, row_id: str) -> dict[str, Any] | None:
    from fhirqa.sql.browse import RelationalPatient

    return RelationalPatient(database, patient_id).source_row(table, row_id)


def _can_search_all(principal: Principal) -> bool:
    """Search across patients: a user or system Patient read scope, and no patient in the token."""
    return principal.patient is None and principal.scopes.allows("Patient", access.READ,
                                                                 frozenset({"user", "system"}))


@router.get("/session")
async def session(request: Request, principal: SessionCaller) -> Response:
    """Who the token speaks for and what the page may offer (no patient data)."""
    return JsonResponse({
        "subject": principal.subject, "client_id": principal.client_id, "patient": principal.patient,
        "scopes": list(principal.scopes.raw), "search_all": _can_search_all(principal),
        "dev": server(request).config.dev,
    })


@router.get("/patients")
async def search(request: Request, principal: SearchCaller,
                 q: str = Query("", max_length=200, description="name, birth date (YYYY[-MM[-DD]]), MRN or id"),
                 limit: int = Query(25, ge=1, le=100)) -> Response:
    """Patients matching ``q`` among those the token may reach."""
    state = server(request)
    if principal.patient is not None:
        access.require_read(principal, principal.patient, ("Patient",))
        only: str | None = principal.patient
    elif _can_search_all(principal):
        only = None
    else:
        raise access.forbidden("searching patients needs a user/ or system/ Patient read scope")
    rows = await anyio.to_thread.run_sync(
        lambda: data.search_patients(state.asker.store, q.strip(), only=only, limit=limit))
    if len(rows) < limit and q.strip():
        rows += await anyio.to_thread.run_sync(_relational_search, state.asker.store.db, q.strip(), only,
                                               limit - len(rows), {row["id"] for row in rows})
    audit_context(request).detail["results"] = str(len(rows))
    return JsonResponse({"patients": rows, "limited_to_patient": principal.patient is not None})


def _relational_search(db: Any, query: str, only: str | None, limit: int, seen: set[str]) -> list[dict[str, Any]]:
    """People of the OMOP/MIMIC databases loaded beside the store who match ``query`` (and ``only``, if set)."""
    from fhirqa.sql.browse import search_people

    found: list[dict[str, Any]] = []
    for database in relational_databases(db):
        for row in search_people(database, query, limit):
            if row["id"] not in seen and (only is None or row["id"] == only) and len(found) < limit:
                seen.add(row["id"])
                found.append(row)
    return found


def _header(store: Any, patient_id: str, allowed: dict[str, bool]) -> dict[str, Any]:
    if not store_has(store, patient_id):
        database = database_for(store.db, patient_id)
        if database is not None:  # a patient of an OMOP/MIMIC database loaded beside the views
            from fhirqa.sql.browse import RelationalPatient

            header = RelationalPatient(database, patient_id).header()
            for name, ok in allowed.items():
                header[name] = header[name] if ok else None
            header["withheld"] = [name for name, ok in allowed.items() if not ok]
            return header
    body: dict[str, Any] = {"patient": data.demographics(store, patient_id)}
    for name, reader in _READERS.items():
        body[name] = reader(store, patient_id) if allowed[name] else None
    body["withheld"] = [name for name, ok in allowed.items() if not ok]
    return body


@router.get("/patients/{id}/header")
async def header(request: Request, principal: HeaderCaller, id: str = PatientId) -> Response:  # noqa: A002
    """Demographics, active problems, current medications and allergies of one patient."""
    state = server(request)
    access.require_read(principal, id, ("Patient",))
    state.asker.require_patient(id, relational=True)
    contexts = access.patient_contexts(principal)
    allowed = {name: principal.scopes.allows_all(types, access.READ, contexts) for name, types in SECTIONS.items()}
    body = await anyio.to_thread.run_sync(_header, state.asker.store, id, allowed)
    if body["patient"] is None:
        raise ApiError(404, "no such patient in this store")
    return JsonResponse(body)


@router.get("/patients/{id}/resources/{resource_type}/{resource_id}")
async def resource(request: Request, principal: ResourceCaller, id: str = PatientId,  # noqa: A002
                   resource_type: str = Path(pattern=r"^[A-Za-z][A-Za-z0-9_]{1,63}$"),
                   resource_id: str = Path(pattern=ID_PATTERN)) -> Response:
    """One raw resource of the patient, as ingested (404 when it is not this patient's).

    For a patient of an OMOP/MIMIC database the "resource" is a source row (``labevents/238``: table and
    row key, the ``ref`` of its evidence), returned as the database holds it; reading one needs read
    access to every type of the patient, as asking does (a row is not a FHIR type a scope could name).
    """
    state = server(request)
    audit_context(request).detail["resource"] = f"{resource_type}/{resource_id}"
    store = state.asker.store
    if not resource_type[0].isupper():
        access.require_ask(principal, id)
        database = await anyio.to_thread.run_sync(database_for, store.db, id) if not store_has(store, id) else None
        if database is None:
            raise ApiError(404, f"this patient has no {resource_type}/{resource_id}")
        row = await anyio.to_thread.run_sync(_source_row, database, id, resource_type, resource_id)
        if row is None:
            raise ApiError(404, f"this patient has no {resource_type}/{resource_id}")
        return JsonResponse(row, headers={"Cache-Control": "no-store"})
    access.require_read(principal, id, (resource_type,))
    state.asker.require_patient(id)
    found = await anyio.to_thread.run_sync(data.raw_resource, state.asker.store, id, resource_type, resource_id)
    if found is None:
        raise ApiError(404, f"this patient has no {resource_type}/{resource_id}")
    return FhirResponse(found, headers={"Cache-Control": "no-store"})


def _relational_notes(db: Any, patient_id: str) -> list[dict[str, Any]] | None:
    """The notes of a patient of an OMOP/MIMIC database beside the views (None when no database holds them)."""
    database = database_for(db, patient_id)
    if database is None:
        return None
    from fhirqa.sql.browse import RelationalPatient

    return RelationalPatient(database, patient_id).notes()


def _relational_note(db: Any, patient_id: str, ref: str) -> dict[str, Any] | None:
    database = database_for(db, patient_id)
    if database is None:
        return None
    from fhirqa.sql.browse import RelationalPatient

    return RelationalPatient(database, patient_id).note(ref)


@router.get("/patients/{id}/notes")
async def notes(request: Request, principal: NotesCaller, id: str = PatientId) -> Response:  # noqa: A002
    """The patient's notes with text: ref, time, type, title and length (newest first).

    A patient of an OMOP/MIMIC database loaded beside the views has their ``note`` / ``noteevents`` rows
    listed (ref ``note/7``, ``noteevents/7``), under the same scopes as a FHIR patient's notes.
    """
    state = server(request)
    access.require_read(principal, id, NOTE_TYPES)
    state.asker.require_patient(id, relational=True)
    store = state.asker.store
    rows: list[dict[str, Any]] | None
    if await anyio.to_thread.run_sync(store_has, store, id):
        rows = await anyio.to_thread.run_sync(data.notes, store, id)
    else:
        rows = await anyio.to_thread.run_sync(_relational_notes, store.db, id)
    rows = rows or []
    audit_context(request).detail["results"] = str(len(rows))
    return JsonResponse({"notes": rows})


@router.get("/patients/{id}/notes/{resource_type}/{resource_id}")
async def note(request: Request, principal: NoteCaller, id: str = PatientId,  # noqa: A002
               resource_type: str = Path(pattern=r"^(DocumentReference|DiagnosticReport|[a-z][a-z0-9_]{0,62})$"),
               resource_id: str = Path(pattern=ID_PATTERN)) -> Response:
    """One note of the patient with its text, as the consistency check reads it (404 when not this patient's).

    ``DocumentReference/…`` or ``DiagnosticReport/…`` of a FHIR patient; a source row (``note/7``,
    ``noteevents/7``) of a patient of an OMOP/MIMIC database loaded beside the views.
    """
    state = server(request)
    ref = f"{resource_type}/{resource_id}"
    audit_context(request).detail["resource"] = ref
    access.require_read(principal, id, NOTE_TYPES)
    state.asker.require_patient(id, relational=True)
    store = state.asker.store
    if await anyio.to_thread.run_sync(store_has, store, id):
        found = await anyio.to_thread.run_sync(data.note, store, id, ref) if resource_type[0].isupper() else None
    else:
        found = await anyio.to_thread.run_sync(_relational_note, store.db, id, ref)
    if found is None:
        raise ApiError(404, f"this patient has no note {ref}")
    return JsonResponse(found, headers={"Cache-Control": "no-store"})
