"""Small SQLite databases for the SQL-path tests: tables from column declarations and rows, written once."""

from __future__ import annotations

import sqlite3
from pathlib import Path


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
