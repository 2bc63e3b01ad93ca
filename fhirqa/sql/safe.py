"""Safe execution: one read-only statement, scoped to one patient, with a time limit and a row cap.

Every query fhirqa runs on a relational database, written offline or by a model, goes through
:func:`run_scoped`:

1. **parse** with sqlglot: exactly one statement, a SELECT (or WITH … SELECT, UNION …); anything that writes,
   changes settings or reaches outside the database (DROP, UPDATE, ATTACH, PRAGMA, COPY, SET, ``SELECT … INTO``,
   ``read_csv()``, ``pg_read_file()`` …) is refused before the database sees it;
2. **scope**: every reference to a table holding patient rows is replaced by
   ``(SELECT * FROM t WHERE <patient key> = :fhirqa_patient)``, so the query can only see the patient's rows,
   whatever it says; dictionaries (``concept``, ``d_labitems``) stay whole; tables with patient data but no
   patient key (``cost``, ``note_nlp``) are refused;
3. **execute** with the patient id bound as a parameter, a real time limit (DuckDB ``interrupt``, a SQLite
   progress handler, PostgreSQL ``statement_timeout``) and a row cap that is reported when hit;
4. **verify** every returned row that carries a patient key belongs to the patient.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from fhirqa.errors import FhirqaError
from fhirqa.sql.connect import Connection, plain

if TYPE_CHECKING:
    from fhirqa.sql.schema import Schema

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_ROW_LIMIT = 10_000
PATIENT_PARAM = "fhirqa_patient"
_WRITE_NODES = tuple(getattr(exp, name) for name in (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command", "Pragma", "Attach", "Detach",
    "Set", "Copy", "Use", "Transaction", "Commit", "Rollback", "Install", "Grant", "Revoke", "LoadData", "Into",
    "Lock", "Analyze", "Summarize", "Refresh", "Cache", "Uncache", "Kill", "TruncateTable", "Export", "Comment",
    "Declare", "Execute") if hasattr(exp, name))
_TABLE_FUNCTIONS = {"unnest", "generate_series", "range", "json_each", "json_tree", "explode"}
_DENIED_PREFIXES = ("read_", "pg_read", "pg_ls", "pg_stat_file", "lo_", "dblink", "load_extension", "sniff_",
                    "parquet_", "iceberg_", "delta_", "postgres_", "sqlite_", "mysql_", "http", "glob",
                    "readfile", "writefile", "install", "load", "set_config", "pg_terminate", "pg_cancel",
                    "pg_reload", "pg_rotate", "pg_promote", "pg_switch", "pg_create", "pg_drop", "pg_file",
                    "nextval", "setval", "getenv", "query", "system", "shell", "copy", "export", "import",
                    "duckdb_secrets", "which_secret", "current_setting")


class QueryError(FhirqaError):
    """A query was refused, timed out or failed; the message says which (and, for failures, the database's words)."""


class UnsafeQuery(QueryError):
    """The statement is not a single read-only SELECT over this database's permitted tables."""


class QueryTimeout(QueryError):
    """The query ran past its time limit and was stopped."""


@dataclass
class QueryResult:
    """Rows of a query, its columns, whether the row cap cut it, and the SQL that actually ran."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    limit: int = DEFAULT_ROW_LIMIT
    elapsed_ms: float = 0.0
    sql: str = ""
    notes: list[str] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name (lower case)."""
        names = [c.lower() for c in self.columns]
        return [dict(zip(names, row, strict=True)) for row in self.rows]


def _func_name(node: exp.Func) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def check(sql: str, dialect: str) -> exp.Query:
    """Parse ``sql``: exactly one read-only query, no writes, settings, file or network functions."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.ParseError as exc:
        raise UnsafeQuery(f"SQL does not parse: {str(exc).splitlines()[0]}") from exc
    if len(statements) != 1:
        raise UnsafeQuery(f"exactly one SQL statement is allowed, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise UnsafeQuery(f"only SELECT queries are allowed, not {type(tree).__name__.upper()}")
    for node in tree.walk():
        if isinstance(node, _WRITE_NODES):
            raise UnsafeQuery(f"{type(node).__name__.upper()} is not allowed in a read-only query")
        if isinstance(node, exp.Func):
            name = _func_name(node)
            if name.startswith(_DENIED_PREFIXES):
                raise UnsafeQuery(f"function {name}() is not allowed (files, settings or the network)")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
            name = _func_name(node.this)
            if name not in _TABLE_FUNCTIONS:
                raise UnsafeQuery(f"table function {name}() is not allowed")
    return tree


def scope(tree: exp.Query, schema: Schema, *, patient: bool = True) -> exp.Query:
    """Replace every patient table by its rows for ``:fhirqa_patient``; refuse unknown or unkeyed tables.

    With ``patient=False`` (looking a patient up by name, no patient in scope) only the person directory
    tables (person, its name table, patients) and dictionaries may be read.
    """
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for name in ctes:
        if name in schema.tables:
            raise UnsafeQuery(f"a WITH name may not shadow the table {name!r}; rename it")
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Func):
            continue
        name = table.name.lower()
        qualifier = (table.args.get("db") and table.db or "").lower()
        if table.args.get("catalog"):
            raise UnsafeQuery(f"{table.sql()}: other databases are not readable")
        if not qualifier and name in ctes:
            continue
        if qualifier and qualifier not in {"main", "public", (schema.schema_name or "").lower()}:
            raise UnsafeQuery(f"{table.sql()}: schema {qualifier!r} is not readable")
        if name not in schema.tables:
            raise UnsafeQuery(f"unknown table {name!r}")
        key = schema.patient_key(name)
        if key is None:
            if schema.is_dictionary(name):
                continue
            raise UnsafeQuery(f"table {name!r} holds records without a patient key; it cannot be read per patient")
        if not patient:
            if schema.is_directory(name):
                continue
            raise UnsafeQuery(f"without a patient, only the patient directory can be read, not {name!r}")
        alias = table.alias_or_name
        inner = exp.select("*").from_(exp.to_table(name)).where(
            exp.EQ(this=exp.column(key), expression=exp.Placeholder(this=PATIENT_PARAM)))
        table.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return tree


def _bind_percent_literals(tree: exp.Query, params: dict[str, Any]) -> None:
    """PostgreSQL (psycopg) reads ``%`` as a parameter marker: string literals holding one become parameters."""
    for index, literal in enumerate(list(tree.find_all(exp.Literal))):
        if literal.is_string and "%" in literal.this:
            name = f"fhirqa_lit_{index}"
            params[name] = literal.this
            literal.replace(exp.Placeholder(this=name))


def render(tree: exp.Query, dialect: str, params: dict[str, Any]) -> str:
    """The tree as SQL of ``dialect`` (parameters as ``:name`` / ``$name`` / ``%(name)s``)."""
    if dialect == "postgres":
        _bind_percent_literals(tree, params)
    return tree.sql(dialect=dialect)


def prepare(con: Connection, schema: Schema, sql: str, *, patient: bool = True) -> tuple[str, set[str], dict[str, Any]]:
    """Check, scope and render ``sql`` once: (SQL text for the dialect, placeholder names, literal parameters).

    The result depends only on the SQL text and the schema (the patient is a parameter), so it is cached
    per connection: a question's statements are the same for every patient.
    """
    cache: dict[tuple[str, bool], tuple[str, set[str], dict[str, Any]]] = con.cache.setdefault("prepared", {})
    key = (sql, patient)
    if key not in cache:
        tree = scope(check(sql, con.dialect), schema, patient=patient)
        literals: dict[str, Any] = {}
        text = render(tree, con.dialect, literals)
        if len(cache) > 2048:
            cache.clear()
        cache[key] = (text, {p.name for p in tree.find_all(exp.Placeholder)}, literals)
    return cache[key]


def run_scoped(con: Connection, schema: Schema, sql: str, params: dict[str, Any] | None = None, *,
               patient_value: Any, timeout_s: float = DEFAULT_TIMEOUT_S, limit: int = DEFAULT_ROW_LIMIT) -> QueryResult:
    """Check, scope to the patient, run and verify one query (see the module docstring)."""
    text, used, literals = prepare(con, schema, sql)
    bound = {**literals, **(params or {}), PATIENT_PARAM: patient_value}
    bound.setdefault("patient", patient_value)
    result = execute(con, text, {k: v for k, v in bound.items() if k in used}, timeout_s=timeout_s, limit=limit)
    _verify(result, schema, patient_value)
    return result


def run_directory(con: Connection, schema: Schema, sql: str, params: dict[str, Any] | None = None, *,
                  timeout_s: float = DEFAULT_TIMEOUT_S, limit: int = DEFAULT_ROW_LIMIT) -> QueryResult:
    """A query without a patient: only the patient directory (person, names) and dictionaries (lookups)."""
    text, used, literals = prepare(con, schema, sql, patient=False)
    bound = {**literals, **(params or {})}
    return execute(con, text, {k: v for k, v in bound.items() if k in used}, timeout_s=timeout_s, limit=limit)


def _verify(result: QueryResult, schema: Schema, patient_value: Any) -> None:
    keys = {k.lower() for k in schema.patient_keys()}
    checked = [i for i, c in enumerate(result.columns) if c.lower() in keys]
    for row in result.rows:
        for i in checked:
            if row[i] is not None and str(row[i]) != str(patient_value):
                raise UnsafeQuery("the query returned another patient's row; nothing is shown")


def execute(con: Connection, sql: str, params: dict[str, Any] | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
            limit: int = DEFAULT_ROW_LIMIT, internal: bool = False) -> QueryResult:
    """Run prepared SQL with a real time limit and a row cap (no checks: callers check first)."""
    runner = {"duckdb": _run_duckdb, "sqlite": _run_sqlite, "postgres": _run_postgres}[con.dialect]
    if internal and params and con.dialect != "sqlite":
        # fhirqa's own catalogue queries name parameters :like_this; the other drivers spell them differently
        style = r"%(\1)s" if con.dialect == "postgres" else r"$\1"
        sql = re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", style, sql)
    started = time.perf_counter()
    with con.lock:
        if internal:
            with con.internal():
                columns, rows = runner(con, sql, params or {}, timeout_s, limit)
        else:
            columns, rows = runner(con, sql, params or {}, timeout_s, limit)
    truncated = len(rows) > limit
    result = QueryResult(columns, [tuple(plain(v) for v in row) for row in rows[:limit]], truncated, limit,
                         round((time.perf_counter() - started) * 1000, 2), sql)
    if truncated:
        result.notes.append(f"only the first {limit} rows are shown; the query returned more")
    return result


def _run_duckdb(con: Connection, sql: str, params: dict[str, Any], timeout_s: float, limit: int) -> tuple[list[str], list]:
    import duckdb

    cursor = con.raw.cursor()
    timer = threading.Timer(timeout_s, cursor.interrupt)
    timer.start()
    try:
        cursor.execute(sql, params or None)
        rows = cursor.fetchmany(limit + 1)
        return [d[0] for d in cursor.description or []], rows
    except duckdb.InterruptException as exc:
        raise QueryTimeout(f"query exceeded the {timeout_s:g} s time limit and was stopped") from exc
    except duckdb.Error as exc:
        raise QueryError(str(exc).split("\n")[0]) from exc
    finally:
        timer.cancel()
        cursor.close()


def _run_sqlite(con: Connection, sql: str, params: dict[str, Any], timeout_s: float, limit: int) -> tuple[list[str], list]:
    import sqlite3

    deadline = time.monotonic() + timeout_s
    con.raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 2000)
    cursor = con.raw.cursor()
    try:
        cursor.execute(sql, params)
        rows = cursor.fetchmany(limit + 1)
        return [d[0] for d in cursor.description or []], rows
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc).lower() and time.monotonic() > deadline:
            raise QueryTimeout(f"query exceeded the {timeout_s:g} s time limit and was stopped") from exc
        raise QueryError(str(exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise QueryError(str(exc)) from exc
    finally:
        cursor.close()
        con.raw.set_progress_handler(None, 0)


def _run_postgres(con: Connection, sql: str, params: dict[str, Any], timeout_s: float, limit: int) -> tuple[list[str], list]:
    import psycopg

    try:
        with con.raw.cursor() as cursor:
            cursor.execute("SELECT set_config('statement_timeout', %s, false)", (str(max(1, int(timeout_s * 1000))),))
            try:
                cursor.execute(sql, params or None)
                rows = cursor.fetchmany(limit + 1) if cursor.description else []
                return [d[0] for d in cursor.description or []], rows
            finally:
                cursor.execute("SELECT set_config('statement_timeout', '0', false)")
    except psycopg.errors.QueryCanceled as exc:
        raise QueryTimeout(f"query exceeded the {timeout_s:g} s time limit and was stopped") from exc
    except psycopg.Error as exc:
        raise QueryError(str(exc).strip().splitlines()[0]) from exc
