"""Reading a store: one DuckDB connection over the current generation's Parquet files.

Every query a user or a model sends goes through :meth:`Store.query`: SELECT only, file access
limited to the store's own folder, a time limit that interrupts the query, and a row cap that is
reported, never silent.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from fhirqa.errors import FhirqaError, StoreError
from fhirqa.store.generation import register_maps
from fhirqa.store.layout import MANIFEST, Manifest, read_manifest
from fhirqa.store.mappings import load_mappings

DEFAULT_ROW_LIMIT = 10_000
DEFAULT_TIMEOUT_S = 10.0
_READ_ONLY = {"SELECT", "EXPLAIN"}


class QueryError(FhirqaError):
    """A query was refused (not read-only), timed out, or failed; the message says which."""


@dataclass
class QueryResult:
    """Rows of a query, with the columns, whether the row cap cut it short, and how long it took."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    limit: int = DEFAULT_ROW_LIMIT
    elapsed_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class Store:
    """A fhirqa store folder: canonical views, mapped tables, facts and raw resources as Parquet."""

    def __init__(self, db: str | Path) -> None:
        self.db = Path(db)
        self._resolved: str | None = None
        self._manifest: tuple[tuple[int, int, int], Manifest] | None = None
        self._manifest_lock = threading.Lock()

    @property
    def manifest(self) -> Manifest:
        """The current generation, so a long-lived Store sees new ingests (treat it as read-only).

        A commit replaces ``manifest.json`` with ``os.replace`` (a new inode), so one ``stat`` tells
        whether the file must be parsed again: questions ask "which generation?" on every call.
        """
        try:
            st = os.stat(self.db / MANIFEST)
        except FileNotFoundError:
            return Manifest()
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._manifest_lock:
            if self._manifest is None or self._manifest[0] != key:
                self._manifest = (key, read_manifest(self.db))
            return self._manifest[1]

    @property
    def resolved(self) -> str:
        """The store folder as an absolute path with links resolved (a stable key for caches)."""
        if self._resolved is None:
            self._resolved = str(self.db.resolve())
        return self._resolved

    def exists(self) -> bool:
        """True once something has been ingested."""
        return (self.db / "manifest.json").exists()

    def connect(self, *, sandbox: bool = True) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB with every table of the current generation as a view.

        Views: the canonical views (``observation``, ``medication``…), the mapped tables (``map_*``),
        ``facts`` (path–value pairs) and ``resources`` (raw JSON). With ``sandbox`` (the default),
        the connection can read nothing outside the store and its configuration is locked.
        """
        if not self.exists():
            raise StoreError(f"{self.db}: no fhirqa store here yet (run `fhirqa ingest … --db {self.db}` first)")
        manifest = self.manifest
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        for name, parts in manifest.files("view").items():
            listing = "[" + ", ".join(_quote(self.db / rel) for rel in parts) + "]"
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({listing})")
        register_maps(con, self.db, manifest.tables, load_mappings())
        for table in ("resources", "facts"):
            files = [self.db / rel for parts in manifest.files(table).values() for rel in parts]
            if files:
                listing = "[" + ", ".join(_quote(p) for p in files) + "]"
                # One schema for every part (see register_maps): no union_by_name, which opens every part to bind.
                con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({listing})")
        if sandbox:
            con.execute(f"SET allowed_directories = [{_quote(self.db.resolve())}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        return con

    def view_names(self) -> list[str]:
        """Names of the canonical views in the current generation."""
        return sorted(self.manifest.files("view"))

    def counts(self) -> dict[str, int]:
        """Row count of every canonical view."""
        con = self.connect()
        try:
            return {
                name: int(con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0])
                for name in self.view_names()
            }
        finally:
            con.close()

    def query(
        self,
        sql: str,
        params: list[Any] | dict[str, Any] | None = None,
        *,
        limit: int = DEFAULT_ROW_LIMIT,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> QueryResult:
        """Run one read-only statement with bound ``params``, a time limit and a row cap."""
        own = con is None
        con = con or self.connect()
        try:
            try:
                statements = con.extract_statements(sql)
            except duckdb.Error as exc:
                raise QueryError(f"SQL does not parse: {exc}") from exc
            if len(statements) != 1:
                raise QueryError(f"expected exactly one SQL statement, found {len(statements)}")
            kind = statements[0].type.name
            if kind not in _READ_ONLY:
                raise QueryError(f"only SELECT queries are allowed here, not {kind}")
            # A cursor of its own: it can be interrupted and closed with a result still pending.
            cursor = con.cursor()
            timer = threading.Timer(timeout_s, cursor.interrupt)
            started = time.perf_counter()
            timer.start()
            try:
                cursor.execute(sql, params or [])
                rows = cursor.fetchmany(limit + 1)
                columns = [d[0] for d in cursor.description or []]
            except duckdb.InterruptException as exc:
                raise QueryError(f"query exceeded the {timeout_s:g} s time limit and was stopped") from exc
            except duckdb.Error as exc:
                raise QueryError(str(exc).split("\n")[0]) from exc
            finally:
                timer.cancel()
                cursor.close()
            truncated = len(rows) > limit
            result = QueryResult(columns, rows[:limit], truncated, limit, (time.perf_counter() - started) * 1000)
            if truncated:
                result.notes.append(f"only the first {limit} rows are shown; the query returned more")
            return result
        finally:
            if own:
                con.close()
