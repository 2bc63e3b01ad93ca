"""Schema discovery: tables, columns, types, keys and a few sampled rows, and what the database is.

:func:`discover` reads the database's own catalogue (SQLite ``pragma_table_info``, DuckDB and PostgreSQL
``information_schema``) and decides whether it is OMOP CDM 5.3 or 5.4, MIMIC-III, or unknown. The
patient key of each table (``person_id`` / ``subject_id`` / a ``patient_id``-like column) drives
:mod:`fhirqa.sql.safe`; rows are sampled only from dictionary tables, never from patient tables.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.sql.connect import Connection
from fhirqa.sql.safe import QueryError, execute

DATA = Path(__file__).parent / "data"
_GENERIC_PATIENT_KEYS = ("person_id", "subject_id", "patient_id", "patientid", "patient", "pat_id", "mrn")
_DICTIONARY_NAME = re.compile(r"^(?:d_|dim_|dict_|lookup_|ref_|code_)|(?:_dictionary|_lookup|_codes|_dim|_vocabulary)$")


@lru_cache(maxsize=4)
def builtin(name: str) -> dict[str, Any]:
    """A built-in schema description: ``omop_cdm`` or ``mimic_iii`` (``fhirqa/sql/data/*.json``)."""
    return dict(json.loads((DATA / f"{name}.json").read_text("utf-8")))


@dataclass
class Column:
    """One column: name (lower case) and the database's type name."""

    name: str
    type: str
    primary_key: bool = False


@dataclass
class Table:
    """One table: columns, keys, an estimate of its size, and sampled rows (dictionaries only)."""

    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[str, str, str]] = field(default_factory=list)  # (column, table, column)
    rows: int | None = None
    sample: list[dict[str, Any]] = field(default_factory=list)

    def has(self, column: str) -> bool:
        """True when the table has ``column``."""
        return any(c.name == column for c in self.columns)

    @property
    def column_names(self) -> list[str]:
        """Column names in table order."""
        return [c.name for c in self.columns]

    def signature(self) -> str:
        """Columns and types as one string (descriptions are cached against it)."""
        return ",".join(f"{c.name}:{c.type}" for c in self.columns)


@dataclass
class Schema:
    """Every table of a database and what kind of database it is."""

    dialect: str
    tables: dict[str, Table]
    kind: str = "unknown"  # omop | mimic-iii | unknown
    version: str | None = None  # "5.3" / "5.4" for OMOP
    schema_name: str | None = None

    @property
    def label(self) -> str:
        """``OMOP CDM 5.4``, ``MIMIC-III`` or ``unknown schema``."""
        if self.kind == "omop":
            return f"OMOP CDM {self.version or '?'}"
        return {"mimic-iii": "MIMIC-III"}.get(self.kind, "unknown schema")

    def patient_key(self, table: str) -> str | None:
        """The column naming the patient in ``table`` (None for dictionaries and unkeyed tables)."""
        entry = self.tables.get(table)
        if entry is None:
            return None
        if self.kind == "omop":
            spec = builtin("omop_cdm")
            key = spec["patient_keys"].get(table, spec["patient_key"])
            return key if entry.has(key) else None
        if self.kind == "mimic-iii":
            return "subject_id" if entry.has("subject_id") else None
        return next((k for k in _GENERIC_PATIENT_KEYS if entry.has(k)), None)

    def patient_keys(self) -> set[str]:
        """Every column name used as a patient key."""
        return {k for t in self.tables if (k := self.patient_key(t))}

    def is_dictionary(self, table: str) -> bool:
        """True for vocabulary / lookup tables without patient rows (readable whole)."""
        if self.kind == "omop":
            return table in builtin("omop_cdm")["dictionaries"]
        if self.kind == "mimic-iii":
            return table in builtin("mimic_iii")["dictionaries"]
        return bool(_DICTIONARY_NAME.search(table)) and self.patient_key(table) is None

    def is_directory(self, table: str) -> bool:
        """Tables a patient lookup (no patient in scope) may read: demographics and names."""
        return table in ("person", "person_name", "patients", "patient") or self.is_dictionary(table)

    def row_key(self, table: str) -> str | None:
        """The column that identifies a row (for evidence): the primary key, else the documented key."""
        entry = self.tables.get(table)
        if entry is None:
            return None
        if entry.primary_key:
            return entry.primary_key[0]
        spec = builtin("omop_cdm") if self.kind == "omop" else builtin("mimic_iii") if self.kind == "mimic-iii" else {}
        key = spec.get("tables", {}).get(table, {}).get("key")
        if key and entry.has(key):
            return str(key)
        for candidate in (f"{table}_id", "row_id", "id"):
            if entry.has(candidate):
                return candidate
        return None


def _tables_sqlite(con: Connection) -> dict[str, Table]:
    names = execute(con, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
                    "ORDER BY name", internal=True).rows
    tables: dict[str, Table] = {}
    for (name,) in names:
        info = execute(con, "SELECT name, type, pk FROM pragma_table_info(:t)", {"t": name}, internal=True).rows
        table = Table(name.lower(), [Column(str(c).lower(), str(t or "").upper(), bool(pk)) for c, t, pk in info])
        table.primary_key = [c.name for c in table.columns if c.primary_key]
        fks = execute(con, 'SELECT "from", "table", "to" FROM pragma_foreign_key_list(:t)', {"t": name}, internal=True).rows
        table.foreign_keys = [(str(a).lower(), str(b).lower(), str(c or "").lower()) for a, b, c in fks]
        tables[table.name] = table
    return tables


def _tables_duckdb(con: Connection) -> dict[str, Table]:
    rows = execute(con, "SELECT table_name, column_name, data_type FROM information_schema.columns "
                   "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position", internal=True,
                   limit=1_000_000).rows
    tables: dict[str, Table] = {}
    for table, column, kind in rows:
        tables.setdefault(table.lower(), Table(table.lower())).columns.append(Column(column.lower(), str(kind).upper()))
    try:
        constraints = execute(con, "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
                              "referenced_column_names FROM duckdb_constraints() WHERE schema_name = current_schema()",
                              internal=True).rows
    except QueryError:
        constraints = []
    for table, kind, columns, ref_table, ref_columns in constraints:
        entry = tables.get(str(table).lower())
        if entry is None:
            continue
        if kind == "PRIMARY KEY":
            entry.primary_key = [c.lower() for c in columns]
        elif kind == "FOREIGN KEY" and ref_table:
            for a, b in zip(columns, ref_columns or [], strict=False):
                entry.foreign_keys.append((a.lower(), str(ref_table).lower(), b.lower()))
    sizes = execute(con, "SELECT table_name, estimated_size FROM duckdb_tables() WHERE schema_name = current_schema()",
                    internal=True).rows
    for table, size in sizes:
        if str(table).lower() in tables:
            tables[str(table).lower()].rows = int(size or 0)
    return tables


def _pick_pg_schema(con: Connection) -> str:
    if con.schema_name:
        return con.schema_name
    rows = execute(con, "SELECT table_schema, count(*) FROM information_schema.tables WHERE table_schema NOT IN "
                   "('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg_%' GROUP BY 1 ORDER BY 2 DESC, 1",
                   internal=True).rows
    chosen = str(rows[0][0]) if rows else "public"
    if chosen != "public" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", chosen):
        con.raw.execute(f"SET search_path TO {chosen}, public")
    con.schema_name = chosen
    return chosen


def _tables_postgres(con: Connection) -> dict[str, Table]:
    schema = _pick_pg_schema(con)
    rows = execute(con, "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = "
                   ":s ORDER BY table_name, ordinal_position", {"s": schema}, internal=True, limit=1_000_000).rows
    tables: dict[str, Table] = {}
    for table, column, kind in rows:
        tables.setdefault(table.lower(), Table(table.lower())).columns.append(Column(column.lower(), str(kind).upper()))
    keys = execute(con, "SELECT tc.table_name, tc.constraint_type, kcu.column_name, ccu.table_name, ccu.column_name "
                   "FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu "
                   "ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema "
                   "LEFT JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name "
                   "AND tc.constraint_type = 'FOREIGN KEY' WHERE tc.table_schema = :s", {"s": schema}, internal=True).rows
    for table, kind, column, ref_table, ref_column in keys:
        entry = tables.get(str(table).lower())
        if entry is None:
            continue
        if kind == "PRIMARY KEY" and column.lower() not in entry.primary_key:
            entry.primary_key.append(column.lower())
        elif kind == "FOREIGN KEY" and ref_table:
            entry.foreign_keys.append((column.lower(), str(ref_table).lower(), str(ref_column).lower()))
    sizes = execute(con, "SELECT c.relname, c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = :s AND c.relkind IN ('r', 'v', 'm')", {"s": schema}, internal=True).rows
    for table, size in sizes:
        if str(table).lower() in tables and size is not None and size >= 0:
            tables[str(table).lower()].rows = int(size)
    return tables


def detect(tables: dict[str, Table], con: Connection | None = None) -> tuple[str, str | None]:
    """``(kind, version)``: ``("omop", "5.4")``, ``("omop", "5.3")``, ``("mimic-iii", None)`` or ``("unknown", None)``."""
    names = set(tables)
    if "person" in names and ({"concept"} <= names or {"visit_occurrence", "condition_occurrence"} <= names):
        version = None
        if con is not None and "cdm_source" in names and tables["cdm_source"].has("cdm_version"):
            try:
                rows = execute(con, "SELECT cdm_version FROM cdm_source", internal=True, limit=5).rows
                match = re.search(r"5\.(\d)", " ".join(str(r[0]) for r in rows if r[0]))
                version = f"5.{match.group(1)}" if match else None
            except QueryError:
                version = None
        if version is None:
            visit = tables.get("visit_occurrence")
            v54 = "episode" in names or (visit is not None and visit.has("admitted_from_concept_id"))
            version = "5.4" if v54 else "5.3"
        return "omop", version
    patients = tables.get("patients")
    if patients is not None and "admissions" in names and patients.has("subject_id") and patients.has("dob"):
        return "mimic-iii", None
    return "unknown", None


def _sample(con: Connection, schema: Schema, samples: int) -> None:
    for table in schema.tables.values():
        if not schema.is_dictionary(table.name) or samples <= 0:
            continue
        try:
            result = execute(con, f'SELECT * FROM "{table.name}" LIMIT {int(samples)}', internal=True, timeout_s=5)
            table.sample = result.records()
            if table.rows is None:
                table.rows = len(table.sample) if len(table.sample) < samples else None
        except QueryError:
            table.sample = []


def discover(con: Connection, *, samples: int = 2, refresh: bool = False) -> Schema:
    """The database's schema (cached on the connection)."""
    if not refresh and "schema" in con.cache:
        return con.cache["schema"]
    for stale in ("prepared", "descriptions"):  # both depend on the schema
        con.cache.pop(stale, None)
    reader = {"sqlite": _tables_sqlite, "duckdb": _tables_duckdb, "postgres": _tables_postgres}[con.dialect]
    tables = reader(con)
    kind, version = detect(tables, con)
    schema = Schema(con.dialect, tables, kind, version, con.schema_name)
    _sample(con, schema, samples)
    con.cache["schema"] = schema
    return schema
