"""One patient's rows of each canonical view, read from a store (implements ``PatientRows``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from fhirqa.agent.catalog import load_catalog, view_info
from fhirqa.agent.row_cache import RowCache
from fhirqa.agent.tools.base import names_by_frequency
from fhirqa.agent.tools.localtime import in_offset
from fhirqa.errors import FhirqaError
from fhirqa.store import Store

ROW_LIMIT = 1_000_000  # rows of one view for one patient; beyond this we refuse rather than truncate


OFFSET_SUFFIX = "_offset"  # views/*.sql: <time>_offset = minutes east of UTC <time> was written in


def _utc(value: Any) -> Any:
    # DuckDB hands TIMESTAMPTZ back with a ZoneInfo('Etc/UTC'); tools compare and print times, so
    # normalise every datetime to one tzinfo (naive ones are UTC by the views' convention).
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value


def localised(row: dict[str, Any]) -> dict[str, Any]:
    """A view row with each time in the offset it was written in (its ``<time>_offset`` column), else UTC.

    The instant is unchanged; what changes is the clock it reads on, so ``.date()`` is the record's local day
    (``2025-06-12T22:10:00-05:00`` stays June 12). See ``fhirqa.agent.tools.localtime``.
    """
    out = {k: _utc(v) for k, v in row.items()}
    for key, value in out.items():
        if isinstance(value, datetime):
            minutes = out.get(key + OFFSET_SUFFIX)
            if isinstance(minutes, int) and not isinstance(minutes, bool):
                out[key] = in_offset(value, minutes)
    return out


class StorePatientRows:
    """``PatientRows`` over a store: ``SELECT * FROM <view> WHERE patient_id = ?``, cached per view.

    ``source`` is a :class:`~fhirqa.store.Store` (a connection is opened on first use and kept) or
    an open DuckDB connection from ``Store.connect()`` (shared with the caller, not closed here).
    With ``cache`` and ``generation`` (the store folder and the generation the connection reads),
    rows are shared across questions through the process-wide :class:`RowCache`.
    """

    def __init__(self, source: Store | duckdb.DuckDBPyConnection, patient_id: str, *,
                 cache: RowCache | None = None, generation: tuple[str, int] | None = None) -> None:
        if isinstance(source, Store):
            self._store, self._con = source, None
        else:
            # Store.query only uses its store to open a connection when none is passed; with a
            # caller's connection the path is never read.
            self._store, self._con = Store(Path(".")), source
        self._own = isinstance(source, Store)
        self.patient_id = patient_id
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._cache = cache if generation is not None else None
        self._generation = generation or ("", 0)
        self._names: frozenset[str] | None = None

    def _present(self) -> frozenset[str]:
        """Names of the tables and views the store's connection can read, looked up once."""
        if self._names is None:
            rows = self._connection().execute("SELECT table_name FROM information_schema.tables").fetchall()
            self._names = frozenset(str(name) for (name,) in rows)
        return self._names

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = self._store.connect()
        return self._con

    def rows(self, view: str) -> list[dict[str, Any]]:
        """All rows of ``view`` for the patient, times aware in the offset written (dates stay dates)."""
        if view not in self._rows and self._cache is not None:
            cached = self._cache.get((*self._generation, view, self.patient_id))
            if cached is not None:
                self._rows[view] = cached
        if view not in self._rows:
            # The view name is interpolated into SQL, so only catalog names get this far.
            info = view_info(view)
            if info.name not in self._present():
                # a store built before this view existed (the next ingest builds it): it holds none of its rows
                self._rows[view] = []
                return self._rows[view]
            sql = f"SELECT * FROM {info.name} WHERE patient_id = ?"
            result = self._store.query(sql, [self.patient_id], con=self._connection(), limit=ROW_LIMIT)
            if result.truncated:  # an answer over part of the record would be wrong without saying so
                raise FhirqaError(f"patient {self.patient_id} has more than {ROW_LIMIT} {view} rows; "
                                  "fhirqa cannot answer over part of a record")
            self._rows[view] = [localised(row) for row in result.records()]
            if self._cache is not None:
                self._cache.put((*self._generation, view, self.patient_id), self._rows[view])
        return self._rows[view]

    def items(self, view: str) -> list[str]:
        """Distinct item names of ``view`` (by the catalog's name field), most frequent first."""
        field = view_info(view).name_field
        return names_by_frequency(self.rows(view), field)

    def views(self) -> list[str]:
        """The views this source can serve (the catalog's)."""
        return list(load_catalog())

    def close(self) -> None:
        """Close the connection this object opened (a caller's connection is left open)."""
        if self._own and self._con is not None:
            self._con.close()
            self._con = None

