"""Small SQLite databases for the SQL-path tests: tables from column declarations and rows, written once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: The OMOP CDM tables every small OMOP database of the tests holds, with the columns the SQL path reads.
OMOP_CORE_TABLES = {
    "person": "person_id INTEGER PRIMARY KEY, gender_concept_id INTEGER, year_of_birth INTEGER, birth_datetime TEXT, "
              "person_source_value TEXT",
    "concept": "concept_id INTEGER PRIMARY KEY, concept_name TEXT, domain_id TEXT, vocabulary_id TEXT, "
               "concept_class_id TEXT, concept_code TEXT",
    "visit_occurrence": "visit_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, visit_concept_id INTEGER, "
                        "visit_start_datetime TEXT, visit_end_datetime TEXT",
}


def write_sqlite(path: Path, tables: dict[str, str], rows: dict[str, list[tuple]]) -> Path:
    """Create each table of ``tables`` (name → column declarations) at ``path``, insert its ``rows``; the path."""
    con = sqlite3.connect(path)
    for table, columns in tables.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        for row in rows.get(table, []):
            con.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
    con.commit()
    con.close()
    return path
