"""Build the next generation of a store from the staged batches of one ingest, in DuckDB.

Only resource types that changed are rewritten; untouched parts are carried over by reference.
All set operations run in DuckDB over Parquet, so the merge spills to disk instead of filling memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from fhirqa.errors import FhirqaError
from fhirqa.store.layout import Manifest, generation_dir
from fhirqa.store.mappings import Mapping
from fhirqa.store.merge import STORED, Candidate, decide


@dataclass
class Changes:
    """What a generation changed: resources written and removed, per type."""

    written: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        """True when the store's content changed."""
        return bool(self.written or self.removed)


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def connect_scratch(temp_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that spills to ``temp_dir`` and computes times in UTC."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET temp_directory = {_quote(temp_dir)}")
    con.execute("SET preserve_insertion_order = false")
    return con


def _staged(con: duckdb.DuckDBPyConnection, name: str, staging: Path, pattern: str) -> bool:
    files = sorted(staging.glob(pattern))
    if not files:
        return False
    con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({_sql_list(files)}, union_by_name = true)")
    return True


def _iter_conflicts(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[str, str, list[Candidate]]]:
    cursor = con.execute(
        """
        SELECT resource_type, id, seq, version_id, last_updated, hash, deleted FROM cands
        WHERE (resource_type, id) IN (SELECT resource_type, id FROM cands GROUP BY ALL HAVING count(*) > 1)
        ORDER BY resource_type, id, seq
        """
    )
    key: tuple[str, str] | None = None
    group: list[Candidate] = []
    while batch := cursor.fetchmany(10_000):
        for rtype, rid, seq, version, updated, digest, deleted in batch:
            if (rtype, rid) != key:
                if key is not None:
                    yield key[0], key[1], group
                key, group = (rtype, rid), []
            group.append(Candidate(seq, version, updated, digest, bool(deleted)))
    if key is not None:
        yield key[0], key[1], group


def build_generation(
    db: Path, current: Manifest, staging: Path, mappings: dict[str, Mapping], views_dir: Path
) -> tuple[Manifest, Changes]:
    """Write the next generation's files and return its manifest (not yet committed) and the changes."""
    con = connect_scratch(staging)
    changes = Changes()
    if not _staged(con, "staged", staging, "resources-*.parquet"):
        return current, changes
    stored_files = [db / f for f in current.files("resources").values()]
    if stored_files:
        con.execute(f"CREATE VIEW stored AS SELECT * FROM read_parquet({_sql_list(stored_files)}, union_by_name = true)")
    else:
        con.execute("CREATE VIEW stored AS SELECT * FROM staged WHERE false")
    con.execute(
        f"""
        CREATE TEMP TABLE cands AS
        SELECT resource_type, id, seq, version_id, last_updated, hash, deleted FROM staged
        UNION ALL
        SELECT resource_type, id, {STORED} AS seq, version_id, last_updated, hash, false FROM stored
        WHERE (resource_type, id) IN (SELECT resource_type, id FROM staged)
        """
    )
    con.execute("CREATE TEMP TABLE winners (resource_type VARCHAR, id VARCHAR, seq BIGINT)")
    con.execute("CREATE TEMP TABLE removed (resource_type VARCHAR, id VARCHAR)")
    # Keys seen once and staged: new resources (a lone deletion of something never stored is a no-op).
    con.execute(
        """
        INSERT INTO winners SELECT resource_type, id, any_value(seq) FROM cands GROUP BY ALL
        HAVING count(*) = 1 AND any_value(seq) >= 0 AND NOT any_value(deleted)
        """
    ).fetchall()
    win_rows: list[tuple[str, str, int]] = []
    removed_rows: list[tuple[str, str]] = []
    for rtype, rid, group in _iter_conflicts(con):
        stored = group[0] if group[0].seq == STORED else None
        staged = group[1:] if stored is not None else group
        outcome = decide(stored, staged)
        if outcome.action == "keep":
            continue
        if stored is not None:
            removed_rows.append((rtype, rid))
        if outcome.action == "replace":
            assert outcome.seq is not None
            win_rows.append((rtype, rid, outcome.seq))
    if win_rows:
        con.register("_win", pa.table(list(zip(*win_rows, strict=True)), names=["resource_type", "id", "seq"]))
        con.execute("INSERT INTO winners SELECT * FROM _win").fetchall()
    if removed_rows:
        con.register("_rem", pa.table(list(zip(*removed_rows, strict=True)), names=["resource_type", "id"]))
        con.execute("INSERT INTO removed SELECT * FROM _rem").fetchall()

    for rtype, count in con.execute("SELECT resource_type, count(*) FROM winners GROUP BY ALL").fetchall():
        changes.written[rtype] = count
    for rtype, count in con.execute("SELECT resource_type, count(*) FROM removed GROUP BY ALL").fetchall():
        changes.removed[rtype] = count
    if not changes.any:
        return current, changes

    generation = current.generation + 1
    out = generation_dir(db, generation)
    tables = dict(current.tables)
    touched = sorted(set(changes.written) | set(changes.removed))
    has_facts = _staged(con, "staged_facts", staging, "facts-*.parquet")
    for rtype in touched:
        _rewrite_type(con, db, out, tables, rtype, has_facts)
        mapping = mappings.get(rtype)
        if mapping is not None:
            _rewrite_map(con, db, out, tables, staging, mapping)
    _build_views(con, db, out, tables, mappings, views_dir)
    con.close()
    return Manifest(generation, "", tables), changes


def _write(con: duckdb.DuckDBPyConnection, select: str, order: str, path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY (SELECT * FROM ({select}) ORDER BY {order}) TO {_quote(path)} (FORMAT parquet, COMPRESSION zstd)").fetchall()
    return int(con.execute(f"SELECT count(*) FROM read_parquet({_quote(path)})").fetchall()[0][0])


def _rewrite_type(
    con: duckdb.DuckDBPyConnection, db: Path, out: Path, tables: dict[str, str], rtype: str, has_facts: bool
) -> None:
    t = rtype.replace("'", "''")
    old = tables.get(f"resources/{rtype}")
    keep_old = (
        f"SELECT o.* FROM read_parquet({_quote(db / old)}) o ANTI JOIN removed r "
        f"ON r.resource_type = '{t}' AND r.id = o.id"
        if old
        else None
    )
    new = (
        "SELECT s.resource_type, s.id, s.patient_id, s.version_id, s.last_updated, s.hash, s.origin, s.json "
        f"FROM staged s SEMI JOIN winners w ON w.resource_type = s.resource_type AND w.id = s.id AND w.seq = s.seq "
        f"WHERE s.resource_type = '{t}'"
    )
    select = f"{keep_old} UNION ALL BY NAME {new}" if keep_old else new
    path = out / "resources" / f"{rtype}.parquet"
    if _write(con, select, "patient_id, id", path):
        tables[f"resources/{rtype}"] = str(path.relative_to(db))
    else:
        path.unlink()
        tables.pop(f"resources/{rtype}", None)

    old_facts = tables.get(f"facts/{rtype}")
    keep_facts = (
        f"SELECT o.* FROM read_parquet({_quote(db / old_facts)}) o ANTI JOIN removed r "
        f"ON r.resource_type = '{t}' AND r.id = o.resource_id"
        if old_facts
        else None
    )
    new_facts = (
        "SELECT f.* EXCLUDE (seq) FROM staged_facts f SEMI JOIN winners w "
        f"ON w.resource_type = f.resource_type AND w.id = f.resource_id AND w.seq = f.seq WHERE f.resource_type = '{t}'"
        if has_facts
        else None
    )
    parts = [p for p in (keep_facts, new_facts) if p]
    fpath = out / "facts" / f"{rtype}.parquet"
    if parts and _write(con, " UNION ALL BY NAME ".join(parts), "patient_id, resource_id", fpath):
        tables[f"facts/{rtype}"] = str(fpath.relative_to(db))
    else:
        fpath.unlink(missing_ok=True)
        tables.pop(f"facts/{rtype}", None)


def _rewrite_map(
    con: duckdb.DuckDBPyConnection, db: Path, out: Path, tables: dict[str, str], staging: Path, mapping: Mapping
) -> None:
    t = mapping.resource_type.replace("'", "''")
    key = f"map/{mapping.table}"
    old = tables.get(key)
    parts = []
    if old:
        parts.append(
            f"SELECT o.* FROM read_parquet({_quote(db / old)}) o ANTI JOIN removed r "
            f"ON r.resource_type = '{t}' AND '{t}/' || r.id = o.ref"
        )
    view = f"staged_{mapping.table}"
    if _staged(con, view, staging, f"{mapping.table}-*.parquet"):
        parts.append(
            f"SELECT m.* EXCLUDE (seq) FROM {view} m SEMI JOIN winners w "
            f"ON w.resource_type = '{t}' AND '{t}/' || w.id = m.ref AND w.seq = m.seq"
        )
    path = out / "maps" / f"{mapping.table}.parquet"
    if parts and _write(con, " UNION ALL BY NAME ".join(parts), "patient_id, ref", path):
        tables[key] = str(path.relative_to(db))
    else:
        path.unlink(missing_ok=True)
        tables.pop(key, None)


def register_maps(con: duckdb.DuckDBPyConnection, db: Path, tables: dict[str, str], mappings: dict[str, Mapping]) -> None:
    """Make every mapped table queryable by name; absent ones as empty tables of the right schema."""
    for mapping in mappings.values():
        rel = tables.get(f"map/{mapping.table}")
        if rel:
            con.execute(f"CREATE OR REPLACE VIEW {mapping.table} AS SELECT * FROM read_parquet({_quote(db / rel)})")
        else:
            con.register(f"_empty_{mapping.table}", mapping.schema.empty_table())
            con.execute(f"CREATE OR REPLACE VIEW {mapping.table} AS SELECT * FROM _empty_{mapping.table}")


def view_files(views_dir: Path) -> dict[str, Path]:
    """Canonical view name → its SQL file."""
    return {p.stem: p for p in sorted(views_dir.glob("*.sql"))}


def _build_views(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    out: Path,
    tables: dict[str, str],
    mappings: dict[str, Mapping],
    views_dir: Path,
) -> None:
    register_maps(con, db, tables, mappings)
    for name, sql_path in view_files(views_dir).items():
        sql = sql_path.read_text("utf-8").strip().rstrip(";")
        path = out / "views" / f"{name}.parquet"
        try:
            _write(con, sql, "patient_id", path)
        except duckdb.Error as exc:
            raise FhirqaError(f"{sql_path}: view {name!r} failed: {exc}") from exc
        tables[f"view/{name}"] = str(path.relative_to(db))
