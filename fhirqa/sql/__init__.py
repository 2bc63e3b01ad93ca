"""Question answering over relational EHR databases: OMOP CDM 5.3/5.4 and MIMIC-III (SQLite, DuckDB, PostgreSQL).

    from fhirqa.sql import ask_sql, connect, load_csv, export_omop
    answer = ask_sql("What was her last potassium?", patient_id="…", now="2020-01-01", connection="omop.duckdb")

Modules: ``connect`` (read-only connections), ``load`` (OMOP/MIMIC CSV folders, zips or URLs → DuckDB),
``schema`` (discovery and detection), ``describe`` (table descriptions), ``retrieve`` (top-k tables),
``safe`` (checked, patient-scoped, time-limited execution), ``domains`` + ``records`` + ``offline_sql`` +
``offline_intents`` (the offline SQL writer), ``llm_sql`` (the LLM SQL writer), ``engine`` (``ask_sql``),
``export`` (FHIR views → OMOP tables). See ``docs/sql-adapters.md``.
"""

from __future__ import annotations

from typing import Any

from fhirqa.sql.connect import connect  # the function, not the module of the same name

__all__ = ["ask_sql", "connect", "discover", "export_omop", "ingest_omop", "ingest_mimic", "load_csv"]

_LAZY = {
    "ask_sql": "fhirqa.sql.engine",
    "discover": "fhirqa.sql.schema",
    "export_omop": "fhirqa.sql.export",
    "load_csv": "fhirqa.sql.load",
    "ingest_omop": "fhirqa.sql.load",
    "ingest_mimic": "fhirqa.sql.load",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fhirqa.sql' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
