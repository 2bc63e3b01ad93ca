"""What the page reads that the server's routes do not offer: patient search, a header, raw resources.

Every function takes a :class:`fhirqa.Store` and runs fixed SQL with bound parameters through
``Store.query`` (row cap and time limit included). Nothing here decides who may see what: the
routes in :mod:`fhirqa.server.ui.api` check the token first and pass the patient ids it may reach.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

import orjson

from fhirqa.agent.engine import shared_connection
from fhirqa.store import Store

#: Search terms beyond this many are ignored (each one adds a clause).
MAX_TERMS = 6
#: Condition clinical statuses that make a problem "active" on the header.
ACTIVE_PROBLEM = ("active", "recurrence", "relapse")
#: Verification statuses that take a problem off the header.
NOT_A_PROBLEM = ("refuted", "entered-in-error")
#: Medication statuses that count as "current" on the header.
CURRENT_MED = ("active", "on-hold", "intended")
#: Resource types outside the patient compartment that a patient's records may point to.
SHARED_TYPES = ("Medication",)
_DATE_PREFIX = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def _query(store: Store, sql: str, params: list[Any], limit: int = 1000) -> list[dict[str, Any]]:
    """Rows as dicts, over the server's shared (sandboxed, read-only) connection."""
    cursor = shared_connection(store).cursor()
    try:
        return store.query(sql, params, limit=limit, con=cursor).records()
    finally:
        cursor.close()


def _like(term: str) -> str:
    """A LIKE pattern matching ``term`` anywhere (its wildcards escaped)."""
    escaped = term.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search_patients(store: Store, query: str, *, only: str | None, limit: int = 25) -> list[dict[str, Any]]:
    """Patients matching every word of ``query`` by name, birth date (prefix), MRN or id.

    ``only`` restricts the search to one patient (a token with a patient in context); an empty
    query lists patients by name.
    """
    where: list[str] = []
    params: list[Any] = []
    if only is not None:
        where.append("patient_id = ?")
        params.append(only)
    for term in query.split()[:MAX_TERMS]:
        clauses = ["lower(name) LIKE ? ESCAPE '\\'", "lower(name_raw) LIKE ? ESCAPE '\\'",
                   "lower(coalesce(given, '') || ' ' || coalesce(family, '')) LIKE ? ESCAPE '\\'",
                   "mrn = ?", "patient_id = ?"]
        params += [_like(term)] * 3 + [term, term]
        if len(term) >= 6:  # an id prefix, long enough not to match half the store
            clauses.append("starts_with(patient_id, ?)")
            params.append(term)
        if _DATE_PREFIX.match(term):
            clauses.append("starts_with(CAST(birth_date AS VARCHAR), ?)")
            params.append(term)
        where.append("(" + " OR ".join(clauses) + ")")
    sql = ("SELECT patient_id, name, birth_date, gender, mrn, deceased FROM patient"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY name, patient_id")
    return [_patient_summary(row) for row in _query(store, sql, params, limit)]


def _age(birth: date | None, until: date | None = None) -> int | None:
    if birth is None:
        return None
    until = until or date.today()
    return until.year - birth.year - ((until.month, until.day) < (birth.month, birth.day))


def _patient_summary(row: dict[str, Any]) -> dict[str, Any]:
    birth = row.get("birth_date")
    return {"id": row["patient_id"], "name": row.get("name") or "(no name)",
            "birth_date": birth.isoformat() if isinstance(birth, date) else birth,
            "gender": row.get("gender"), "mrn": row.get("mrn"), "deceased": bool(row.get("deceased"))}


def demographics(store: Store, patient_id: str) -> dict[str, Any] | None:
    """The patient row, shaped for the header (None when the store has no such patient)."""
    rows = _query(store, "SELECT * FROM patient WHERE patient_id = ?", [patient_id], 1)
    if not rows:
        return None
    row = rows[0]
    birth = row.get("birth_date")
    died = row.get("deceased_time")
    until = died.date() if isinstance(died, datetime) else None
    return {**_patient_summary(row), "prefix": row.get("prefix"),
            "age": _age(birth if isinstance(birth, date) else None, until),
            "deceased_time": died.isoformat() if isinstance(died, datetime) else None,
            "city": row.get("city"), "state": row.get("state"), "language": row.get("language"),
            "marital_status": row.get("marital_status"), "ref": row.get("ref")}


def active_problems(store: Store, patient_id: str) -> list[dict[str, Any]]:
    """Conditions still active (newest onset first), one entry per name."""
    sql = ("SELECT name, any_value(ref ORDER BY onset_time DESC NULLS LAST) AS ref, max(onset_time) AS onset_time, "
           "any_value(clinical_status) AS clinical_status FROM condition "
           "WHERE patient_id = ? AND lower(clinical_status) IN (?, ?, ?) "
           "AND (verification_status IS NULL OR lower(verification_status) NOT IN (?, ?)) "
           "GROUP BY name ORDER BY onset_time DESC NULLS LAST, name")
    return _query(store, sql, [patient_id, *ACTIVE_PROBLEM, *NOT_A_PROBLEM], 100)


def current_medications(store: Store, patient_id: str) -> list[dict[str, Any]]:
    """Active orders and statements, one entry per medication (its latest order's dose and text)."""
    sql = ("SELECT medication_name AS name, "
           "arg_max(ref, time) AS ref, max(time) AS time, arg_max(dosage_text, time) AS dosage_text, "
           "arg_max(dose, time) AS dose, arg_max(dose_unit, time) AS dose_unit, arg_max(status, time) AS status "
           "FROM medication WHERE patient_id = ? AND kind IN ('request', 'statement') "
           "AND lower(status) IN (?, ?, ?) AND medication_name IS NOT NULL "
           "GROUP BY medication_name ORDER BY time DESC NULLS LAST, name")
    return _query(store, sql, [patient_id, *CURRENT_MED], 100)


def allergies(store: Store, patient_id: str) -> list[dict[str, Any]]:
    """Allergies and intolerances not marked inactive, resolved or refuted."""
    sql = ("SELECT name, ref, criticality, reaction FROM allergy WHERE patient_id = ? "
           "AND (clinical_status IS NULL OR lower(clinical_status) = 'active') "
           "AND (verification_status IS NULL OR lower(verification_status) NOT IN (?, ?)) ORDER BY name")
    return _query(store, sql, [patient_id, *NOT_A_PROBLEM], 100)


def raw_resource(store: Store, patient_id: str, resource_type: str, resource_id: str) -> dict[str, Any] | None:
    """The resource as ingested, if it belongs to ``patient_id`` (or, for a shared type such as
    Medication, if one of the patient's records points to it); None otherwise.
    """
    rows = _query(store, "SELECT json FROM resources WHERE resource_type = ? AND id = ? AND patient_id = ? "
                         "ORDER BY last_updated DESC NULLS LAST LIMIT 1",
                  [resource_type, resource_id, patient_id], 1)
    if not rows and resource_type in SHARED_TYPES:
        sql = ("SELECT r.json FROM resources r WHERE r.resource_type = ? AND r.id = ? AND r.patient_id IS NULL "
               "AND EXISTS (SELECT 1 FROM medication m WHERE m.patient_id = ? AND m.medication_ref = ?) "
               "ORDER BY r.last_updated DESC NULLS LAST LIMIT 1")
        rows = _query(store, sql, [resource_type, resource_id, patient_id, f"{resource_type}/{resource_id}"], 1)
    if not rows:
        return None
    value = orjson.loads(rows[0]["json"])
    return value if isinstance(value, dict) else None


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime | date) else value


def notes(store: Store, patient_id: str) -> list[dict[str, Any]]:
    """The patient's notes that have text (the ones the consistency check reads), newest first."""
    sql = ("SELECT ref, time, note_type, title, length(text) AS length FROM note "
           "WHERE patient_id = ? AND text IS NOT NULL AND text <> '' ORDER BY time DESC NULLS LAST, ref")
    return [{**row, "time": _iso(row.get("time"))} for row in _query(store, sql, [patient_id], 2000)]


def note(store: Store, patient_id: str, ref: str) -> dict[str, Any] | None:
    """One note of ``patient_id`` with its text (None when the patient has no such note with text)."""
    sql = ("SELECT ref, time, note_type, title, text FROM note WHERE patient_id = ? AND ref = ? "
           "AND text IS NOT NULL AND text <> '' ORDER BY time DESC NULLS LAST LIMIT 1")
    rows = _query(store, sql, [patient_id, ref], 1)
    return {**rows[0], "time": _iso(rows[0].get("time"))} if rows else None
