"""Read-only connections to relational EHR databases: SQLite files, DuckDB files and PostgreSQL.

:func:`connect` takes a path or a connection string and returns a :class:`Connection` that can only
read: SQLite opens with ``mode=ro`` and an authorizer that denies every action but reading (no ATTACH,
no PRAGMA, no writes, no extension loading); DuckDB opens the file ``read_only`` with external access
off and the configuration locked; PostgreSQL sessions are ``default_transaction_read_only``. OMOP CSV
folders and zips are first loaded into a DuckDB file (:mod:`fhirqa.sql.load`), then opened the same way.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from fhirqa.errors import FhirqaError

DIALECTS = ("sqlite", "duckdb", "postgres")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_DENIED_SQLITE_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "zipfile"}


class ConnectError(FhirqaError):
    """A database could not be opened (missing file, unknown format, server refused)."""


@dataclass
class Connection:
    """One read-only database connection and what it is (dialect, where it came from)."""

    dialect: str
    raw: Any
    target: str  # what was opened, passwords masked
    path: Path | None = None  # the database file (SQLite, DuckDB), for caches kept beside it
    schema_name: str | None = None  # PostgreSQL: the schema the tables live in
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # schema, descriptions … per connection
    _internal: bool = field(default=False, repr=False)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @contextmanager
    def internal(self) -> Iterator[None]:
        """Let fhirqa's own catalogue reads (SQLite ``pragma_table_info``) through the authorizer."""
        with self.lock:
            self._internal = True
            try:
                yield
            finally:
                self._internal = False

    def close(self) -> None:
        """Close the connection."""
        try:
            self.raw.close()
        except Exception:  # noqa: BLE001, S110 - closing twice or a dropped server must not raise
            pass

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # SQLite authorizer: read-only, whatever the statement says.
    def _authorize(self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _DENIED_SQLITE_FUNCTIONS else sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and self._internal:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and arg1 in ("sqlite_master", "sqlite_schema") and db == "main":
            return sqlite3.SQLITE_OK  # SQLite reports reading its own schema this way; the file is opened mode=ro
        return sqlite3.SQLITE_DENY


def mask(target: str) -> str:
    """A connection string without its password."""
    if "://" not in target:
        return target
    parts = urlsplit(target)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return target


def is_postgres_url(target: str) -> bool:
    """True for ``postgresql://…`` / ``postgres://…`` connection strings (and libpq ``host=… dbname=…``)."""
    return bool(re.match(r"^postgres(?:ql)?(?:\+\w+)?://", target)) or bool(re.match(r"^\s*(host|dbname)=", target))


def detect_file(path: Path) -> str:
    """``sqlite``, ``duckdb``, ``csv`` (a folder or zip of CSV files) or raise."""
    if path.is_dir() or path.suffix.lower() == ".zip":
        return "csv"
    if not path.is_file():
        raise ConnectError(f"{path}: no such file or folder")
    with path.open("rb") as handle:
        head = handle.read(16)
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    if head[8:12] == b"DUCK" or path.suffix.lower() in (".duckdb", ".ddb"):
        return "duckdb"
    raise ConnectError(f"{path}: not a SQLite or DuckDB database, a CSV folder or a zip")


def connect(target: str | Path, *, schema: str | None = None, cache_dir: Path | None = None) -> Connection:
    """Open ``target`` read-only.

    ``target``: a SQLite or DuckDB file, an OMOP/MIMIC CSV folder or ``.zip`` (loaded once into a
    DuckDB file under ``cache_dir``, default ``~/.cache/fhirqa/sql``), ``sqlite:///path``,
    ``duckdb:///path``, or a PostgreSQL connection string (``schema`` picks the schema to read).
    """
    text = str(target)
    if is_postgres_url(text):
        return _postgres(text, schema)
    for prefix in ("sqlite:///", "duckdb:///"):
        if text.startswith(prefix):
            path = Path(text[len(prefix) - 1 :])
            return _sqlite(path) if prefix.startswith("sqlite") else _duckdb(path)
    path = Path(text).expanduser()
    kind = detect_file(path)
    if kind == "sqlite":
        return _sqlite(path)
    if kind == "duckdb":
        return _duckdb(path)
    from fhirqa.sql.load import cached_load

    return _duckdb(cached_load(path, cache_dir=cache_dir))


def _sqlite(path: Path) -> Connection:
    if not path.is_file():
        raise ConnectError(f"{path}: no such SQLite file")
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        raw = sqlite3.connect(uri, uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ConnectError(f"{path}: {exc}") from exc
    con = Connection("sqlite", raw, str(path), path=path)
    raw.set_authorizer(con._authorize)
    return con


_DUCKDB_LOCK = threading.Lock()


def _duckdb(path: Path) -> Connection:
    import duckdb

    if not path.is_file():
        raise ConnectError(f"{path}: no such DuckDB file")
    with _DUCKDB_LOCK:
        try:
            raw = duckdb.connect(str(path), read_only=True,
                                 config={"enable_external_access": False, "lock_configuration": True})
        except duckdb.Error as exc:
            raise ConnectError(f"{path}: {str(exc).splitlines()[0]}") from exc
    return Connection("duckdb", raw, str(path), path=path)


def _postgres(url: str, schema: str | None) -> Connection:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - psycopg is a declared dependency
        raise ConnectError("PostgreSQL needs psycopg: pip install 'psycopg[binary]'") from exc
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10,
                              options="-c default_transaction_read_only=on -c TimeZone=UTC")
    except psycopg.Error as exc:
        raise ConnectError(f"{mask(url)}: {str(exc).strip().splitlines()[0]}") from exc
    con = Connection("postgres", raw, mask(url), schema_name=schema)
    if schema:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", schema):
            raise ConnectError(f"schema name {schema!r} is not a plain identifier")
        raw.execute(f"SET search_path TO {schema}, public")
    return con


def plain(value: Any) -> Any:
    """A database value as a plain Python value (Decimal → float; everything else unchanged)."""
    if isinstance(value, Decimal):
        return float(value)
    return value


def time_param(con: Connection, moment: datetime | date | None) -> Any:
    """A time parameter the dialect compares with its time columns (naive UTC; text for SQLite)."""
    if moment is None:
        return None
    if isinstance(moment, datetime):
        if moment.tzinfo is not None:
            from datetime import UTC

            moment = moment.astimezone(UTC).replace(tzinfo=None)
        return moment.strftime("%Y-%m-%d %H:%M:%S") if con.dialect == "sqlite" else moment
    return moment.isoformat() if con.dialect == "sqlite" else moment
