"""Which record answers: the store's FHIR views, or a relational EHR database loaded beside them.

``fhirqa ingest --omop`` (``--mimic``) loads OMOP CDM (MIMIC-III) tables into ``<db>/omop.duckdb``
(``mimic.duckdb``) next to the canonical views. A question about a patient the views do not hold is
answered from the database that does, through the SQL path (:func:`fhirqa.sql.ask_sql`), so one
``fhirqa ask --db <db>`` serves every patient of the store, whichever form their record came in.
"""

from __future__ import annotations

from pathlib import Path

from fhirqa.errors import FhirqaError

#: The databases ``fhirqa ingest --omop/--mimic`` writes beside a store, in the order they are tried.
RELATIONAL_FILES = ("omop.duckdb", "mimic.duckdb")


def relational_databases(db: Path) -> list[Path]:
    """The relational databases loaded beside the store at ``db``."""
    return [db / name for name in RELATIONAL_FILES if (db / name).is_file()]


def database_for(db: Path, patient_id: str | None) -> Path | None:
    """The relational database beside ``db`` that holds ``patient_id`` (the first one, for a lookup), or None."""
    databases = relational_databases(db)
    if not databases:
        return None
    if patient_id is None:
        return databases[0]
    from fhirqa.sql.engine import open_database
    from fhirqa.sql.person import find_key
    from fhirqa.sql.schema import discover

    for path in databases:
        try:
            con = open_database(path)
            found = find_key(con, discover(con), patient_id) is not None
        except FhirqaError:
            raise
        except Exception as exc:  # a damaged or foreign file: say which, never a traceback
            raise FhirqaError(f"{path}: cannot be read as an OMOP/MIMIC database ({exc})") from exc
        if found:
            return path
    return None
