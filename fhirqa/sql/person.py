"""The patient in a relational database: finding them by id, their demographics, and lookup by name.

OMOP CDM: ``person`` (+ ``death``, + fhirqa's ``person_name`` extension written by the OMOP export, since
the CDM keeps no names); a patient id is a ``person_id`` or a ``person_source_value`` (the source system's
id, e.g. the FHIR Patient id). MIMIC-III: ``patients`` (``subject_id``, ``gender``, ``dob``, ``dod``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from fhirqa.sql.connect import Connection
from fhirqa.sql.records import as_utc
from fhirqa.sql.safe import run_directory, run_scoped
from fhirqa.sql.schema import Schema, builtin


@dataclass
class Person:
    """Demographics of one patient, as the database holds them."""

    key: Any  # person_id / subject_id value
    patient_id: str  # what to call the patient in answers (source id when there is one)
    table: str
    birth_date: date | None = None
    gender: str | None = None
    deceased_time: datetime | None = None
    deceased: bool = False
    names: list[str] = field(default_factory=list)  # given and family words, for the question parser
    name: str | None = None


def _key_column(schema: Schema) -> tuple[str, str] | None:
    if schema.kind == "omop" and "person" in schema.tables:
        return "person", "person_id"
    if schema.kind == "mimic-iii" and "patients" in schema.tables:
        return "patients", "subject_id"
    for table in ("patients", "patient", "person", "persons"):  # an unknown schema's patient directory, if it has one
        key = schema.patient_key(table) if table in schema.tables else None
        if key:
            return table, key
    return None


def find_key(con: Connection, schema: Schema, patient_id: str) -> Any | None:
    """The patient key value for ``patient_id`` (a key, or an OMOP ``person_source_value``), or None."""
    located = _key_column(schema)
    text = str(patient_id).strip().removeprefix("Patient/")
    if located is None:
        # an unknown schema without a patient table: the id is taken as given, every patient table is scoped by it
        return text if schema.kind == "unknown" and schema.patient_keys() else None
    table, key = located
    if schema.kind == "unknown":
        rows = run_directory(con, schema, f"SELECT {key} FROM {table} WHERE CAST({key} AS TEXT) = :pid", {"pid": text},
                             limit=1).rows
        return rows[0][0] if rows else None
    if schema.kind == "omop" and schema.tables["person"].has("person_source_value"):
        rows = run_directory(con, schema, "SELECT person_id FROM person WHERE person_source_value = :pid",
                             {"pid": text}, limit=2).rows
        if len(rows) == 1:
            return rows[0][0]
    if re.fullmatch(r"-?\d+", text):
        rows = run_directory(con, schema, f"SELECT {key} FROM {table} WHERE {key} = :pid", {"pid": int(text)}, limit=1).rows
        if rows:
            return rows[0][0]
    return None


def _birth(row: dict[str, Any]) -> date | None:
    born = as_utc(row.get("birth_datetime") or row.get("dob"))
    if isinstance(born, datetime):
        return born.date()
    year = row.get("year_of_birth")
    if year:
        return date(int(year), int(row.get("month_of_birth") or 1), int(row.get("day_of_birth") or 1))
    return None


def load_person(con: Connection, schema: Schema, key: Any) -> Person:
    """Demographics of the patient with key value ``key``."""
    def one(sql: str) -> dict[str, Any]:
        rows = run_scoped(con, schema, sql, patient_value=key, limit=1).records()
        return rows[0] if rows else {}

    if schema.kind == "unknown":
        return Person(key, str(key), "")
    if schema.kind == "mimic-iii":
        row = one("SELECT * FROM patients")
        death = as_utc(row.get("dod"))
        gender = {"m": "male", "f": "female"}.get(str(row.get("gender") or "").lower())
        return Person(key, str(key), "patients", _birth(row), gender, death, death is not None)
    row = one("SELECT * FROM person")
    gender = builtin("omop_cdm")["gender_concepts"].get(str(row.get("gender_concept_id")))
    if gender in (None, "unknown") and row.get("gender_source_value"):
        gender = {"m": "male", "f": "female"}.get(str(row["gender_source_value"]).lower()[:1], gender)
    person = Person(key, str(row.get("person_source_value") or key), "person", _birth(row), gender)
    if "death" in schema.tables:
        death = one("SELECT death_date, " + ("death_datetime" if schema.tables["death"].has("death_datetime") else
                                             "NULL AS death_datetime") + " FROM death")
        if death:
            person.deceased = True
            person.deceased_time = as_utc(death.get("death_datetime") or death.get("death_date"))
    if "person_name" in schema.tables:
        names = one("SELECT * FROM person_name")
        person.names = " ".join(str(names.get(k) or "") for k in ("given_name", "family_name")).split()
        person.name = names.get("full_name")
    return person


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def lookup(con: Connection, schema: Schema, name: str | None, birth: str | None) -> list[dict[str, Any]]:
    """Patients whose recorded name holds every word of ``name`` and (if given) born on ``birth``."""
    if schema.kind != "omop" or "person" not in schema.tables:
        return []
    person = schema.tables["person"]
    has_names = "person_name" in schema.tables
    born = "p.birth_datetime" if person.has("birth_datetime") else "NULL"
    sql = (f"SELECT p.person_id, p.person_source_value, p.year_of_birth, p.month_of_birth, p.day_of_birth, "
           f"{born} AS birth_datetime" + (", n.given_name, n.family_name, n.full_name, n.source_name" if has_names else "")
           + " FROM person AS p" + (" LEFT JOIN person_name AS n ON n.person_id = p.person_id" if has_names else ""))
    rows = run_directory(con, schema, sql, limit=10_000_000).records()
    words = _fold(name or "").split()
    out = []
    for row in rows:
        full = _fold(" ".join(str(row.get(k) or "") for k in ("full_name", "given_name", "family_name", "source_name")))
        if words and not all(w in full for w in words):
            continue
        birth_date = _birth(row)
        if birth and (birth_date is None or birth_date.isoformat() != birth[:10]):
            continue
        out.append({"patient_id": str(row.get("person_source_value") or row["person_id"]), "person_id": row["person_id"],
                    "name": row.get("full_name"), "birth_date": birth_date.isoformat() if birth_date else None})
    return out
