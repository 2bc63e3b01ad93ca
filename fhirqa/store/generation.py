"""Build the next generation of a store from the staged parts of one ingest, in DuckDB.

The generation decides, from the staged key files, which copy of each resource wins (the rules are in
:mod:`fhirqa.store.merge`). New parts whose every row won (a first load, or new resources) are adopted
as they are: moved into the generation folder and added to their table's list of parts. Only what
must change is rewritten: a stored part that holds a replaced or deleted resource is rewritten without
it, staged parts holding a losing copy are filtered, and when a table has too many parts its smallest
ones are merged. Every canonical view whose inputs (its SQL and the mapped tables it reads) did not
change is carried over by reference. Set operations run in DuckDB over Parquet, so they spill to disk
instead of filling memory.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from fhirqa.errors import FhirqaError
from fhirqa.store.layout import Files, Manifest, generation_dir, part_list
from fhirqa.store.mappings import Mapping
from fhirqa.store.merge import STORED, Candidate, decide
from fhirqa.store.parts import part_writer, rows_per_group, sort_grouped, write_part
from fhirqa.store.staging import SORT_KEYS, mapped_table

#: Memory DuckDB may use for the merge before it spills to the staging folder (env ``FHIRQA_MERGE_MEMORY``).
MERGE_MEMORY = os.environ.get("FHIRQA_MERGE_MEMORY", "128MB")
#: How the views are written. zstd level 1 and not the default 3: on Synthea's views (14,692 observations) it
#: writes in 80 % of the time and the files come out no larger (observation 646 kB against 677 kB).
_STORE_PARQUET = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE_BYTES '16MB'"
_CHUNK = 50_000  # decided rows handed to DuckDB at a time
#: Parts a table may have before its smallest ones are merged (each part is a file a per-patient read opens).
MAX_PARTS = 32


def _memory_bytes(setting: str) -> int:
    match = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?)i?B?\s*", setting, re.IGNORECASE)
    if not match:
        return 256 << 20
    return int(float(match.group(1)) * 1024 ** " KMGT".index((match.group(2) or " ").upper()))


#: Rows of one sort range (estimated bytes in memory): a quarter of the merge memory (Arrow sorts a copy).
SORT_RANGE_BYTES = _memory_bytes(MERGE_MEMORY) // 4
_MAX_RANGES = 1024


@dataclass
class Changes:
    """What a generation changed: resources written and removed, per type."""

    written: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    #: Mapped tables made again from the stored resources (their map is new or changed): table → resources.
    remapped: dict[str, int] = field(default_factory=dict)
    #: (Type/id, reason) of stored resources a re-run map could not produce rows for.
    mapping_problems: list[tuple[str, str]] = field(default_factory=list)

    @property
    def any(self) -> bool:
        """True when the store's content changed."""
        return bool(self.written or self.removed)


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join(_quote(p) for p in paths) + "]"


def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # what this process may run on (taskset, cgroups)
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def connect_scratch(temp_dir: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that spills to ``temp_dir``, computes times in UTC and uses the cores it may run on."""
    con = duckdb.connect(
        config={
            "threads": _cores(),
            "memory_limit": MERGE_MEMORY,
            "temp_directory": str(temp_dir),
            "preserve_insertion_order": False,
        }
    )
    con.execute("SET TimeZone = 'UTC'").fetchall()
    return con


class _Staged:
    """The staging folder's files: key files and parts, by kind and resource type (or map table)."""

    def __init__(self, staging: Path) -> None:
        self.files: dict[tuple[str, str], list[Path]] = {}
        for path in sorted(staging.glob("*.parquet")):
            kind, _, rest = path.stem.partition("-")
            if kind in ("keys", "resources", "facts"):
                self.files.setdefault((kind, rest.rpartition("-")[0] or rest), []).append(path)
            else:  # <map table>-<part>
                self.files.setdefault(("map", path.stem.rpartition("-")[0]), []).append(path)

    def of(self, kind: str, name: str) -> list[Path]:
        return self.files.get((kind, name), [])

    def types(self) -> list[str]:
        return sorted(name for kind, name in self.files if kind == "keys")

    def keys(self) -> list[Path]:
        return [p for t in self.types() for p in self.of("keys", t)]


def _conflicts(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[str, str, list[Candidate]]]:
    """Every key with more than one copy (stored or staged) that needs the merge rules, copies in seq order.

    The common re-ingest case, one stored and one staged copy with the same hash, is settled in SQL (keep).
    """
    cursor = con.execute(
        """
        SELECT c.resource_type, c.id, c.seq, c.version_id, c.last_updated, c.hash, c.deleted
        FROM cands c SEMI JOIN (
            SELECT resource_type, id FROM cands GROUP BY ALL
            HAVING count(*) > 1
               AND NOT (count(*) = 2 AND min(seq) = -1 AND NOT bool_or(deleted) AND min(hash) = max(hash))
        ) k ON k.resource_type = c.resource_type AND k.id = c.id
        ORDER BY c.resource_type, c.id, c.seq
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


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], names: list[str]) -> None:
    if rows:
        con.register("_rows", pa.table(list(zip(*rows, strict=True)), names=names))
        con.execute(f"INSERT INTO {table} SELECT * FROM _rows").fetchall()
        con.unregister("_rows")
        rows.clear()


def build_generation(
    db: Path, current: Manifest, staging: Path, mappings: dict[str, Mapping], views_dir: Path
) -> tuple[Manifest, Changes]:
    """Write the next generation's files and return its manifest (not yet committed) and the changes."""
    con = connect_scratch(staging)
    try:
        return _build(con, db, current, _Staged(staging), mappings, views_dir)
    finally:
        con.close()


def _build(
    con: duckdb.DuckDBPyConnection, db: Path, current: Manifest, staged: _Staged, mappings: dict[str, Mapping],
    views_dir: Path,
) -> tuple[Manifest, Changes]:
    changes = Changes()
    types = staged.types()
    stale = stale_maps(current, mappings)
    if not types and not stale and not stale_views(current, views_dir):
        return current, changes
    meta = "resource_type, id, seq, version_id, last_updated, hash, deleted"
    if types:
        keys = f"SELECT * FROM read_parquet({_sql_list(staged.keys())})"
    else:  # nothing staged: an upgrade generation that re-runs maps over what is stored
        keys = ("SELECT NULL::VARCHAR AS resource_type, NULL::VARCHAR AS id, NULL::BIGINT AS seq, "
                "NULL::VARCHAR AS version_id, NULL::VARCHAR AS last_updated, NULL::VARCHAR AS hash, "
                "NULL::BOOLEAN AS deleted, NULL::BOOLEAN AS content, NULL::VARCHAR AS part WHERE false")
    con.execute(f"CREATE TEMP TABLE staged AS {keys}").fetchall()
    stored_files = [db / rel for t in types for rel in current.parts(f"resources/{t}")]
    if stored_files:
        stored = (
            f"SELECT resource_type, id, {STORED} AS seq, version_id, last_updated, hash, false AS deleted "
            f"FROM read_parquet({_sql_list(stored_files)}, union_by_name = true) "
            "WHERE (resource_type, id) IN (SELECT resource_type, id FROM staged)"
        )
        con.execute(f"CREATE TEMP TABLE cands AS SELECT {meta} FROM staged UNION ALL {stored}").fetchall()
    else:
        con.execute(f"CREATE TEMP TABLE cands AS SELECT {meta} FROM staged").fetchall()
    # Keys seen once and staged: new resources (a lone deletion of something never stored is a no-op).
    con.execute(
        """
        CREATE TEMP TABLE winners AS SELECT resource_type, id, any_value(seq) AS seq FROM cands GROUP BY ALL
        HAVING count(*) = 1 AND any_value(seq) >= 0 AND NOT any_value(deleted)
        """
    ).fetchall()
    con.execute("CREATE TEMP TABLE removed (resource_type VARCHAR, id VARCHAR)").fetchall()
    win_rows: list[tuple] = []
    removed_rows: list[tuple] = []
    for rtype, rid, group in _conflicts(con):
        stored_copy = group[0] if group[0].seq == STORED else None
        outcome = decide(stored_copy, group[1:] if stored_copy is not None else group)
        if outcome.action == "keep":
            continue
        if stored_copy is not None:
            removed_rows.append((rtype, rid))
        if outcome.action == "replace":
            assert outcome.seq is not None
            win_rows.append((rtype, rid, outcome.seq))
        if len(win_rows) >= _CHUNK or len(removed_rows) >= _CHUNK:
            _insert(con, "winners", win_rows, ["resource_type", "id", "seq"])
            _insert(con, "removed", removed_rows, ["resource_type", "id"])
    _insert(con, "winners", win_rows, ["resource_type", "id", "seq"])
    _insert(con, "removed", removed_rows, ["resource_type", "id"])
    # Each winner with the part that holds its content (a key without content never wins: see merge.decide).
    con.execute(
        "CREATE TEMP TABLE winning AS SELECT w.resource_type, w.id, k.part, k.content "
        "FROM winners w JOIN staged k ON k.resource_type = w.resource_type AND k.id = w.id AND k.seq = w.seq"
    ).fetchall()
    empty = con.execute("SELECT resource_type, id FROM winning WHERE NOT content LIMIT 1").fetchall()
    if empty:
        raise FhirqaError(f"store merge: {empty[0][0]}/{empty[0][1]} won without content (a fhirqa bug; nothing stored)")

    counts = con.execute(
        "SELECT 'w', resource_type, count(*) FROM winners GROUP BY ALL "
        "UNION ALL SELECT 'r', resource_type, count(*) FROM removed GROUP BY ALL "
        "UNION ALL SELECT 'c', resource_type, count(*) FROM staged WHERE content GROUP BY ALL"
    ).fetchall()
    content_rows: dict[str, int] = {}
    for kind, rtype, count in counts:
        {"w": changes.written, "r": changes.removed, "c": content_rows}[kind][rtype] = count
    digests = {m.table: m.digest for m in mappings.values()}
    if not changes.any and not stale:
        if not stale_views(current, views_dir):
            return current, changes
        # Nothing new to store, but a view's SQL changed since the store was built (fhirqa was upgraded): the
        # next generation carries every table over and rebuilds those views, so the store does not keep old ones.
        generation = current.generation + 1
        tables = dict(current.tables)
        _build_views(con, db, generation_dir(db, generation), tables, mappings, views_dir, set())
        return Manifest(generation, "", tables, digests), changes

    generation = current.generation + 1
    out = generation_dir(db, generation)
    tables = dict(current.tables)
    patients = _touched_patients(con, db, current, staged, changes)  # before the staged parts move
    for mapping in stale:  # before this ingest's own changes, which then apply to the new rows as to any
        _remap(db, out, tables, mapping, changes)
    touched = sorted(set(changes.written) | set(changes.removed))
    for rtype in touched:
        # When every staged copy with content won (a first load, new resources), its parts are adopted whole.
        every = changes.written.get(rtype, 0) == content_rows.get(rtype, 0)
        removed = rtype in changes.removed
        t, prefix = _literal(rtype), _literal(rtype + "/")
        tables_of_type = [
            _Table(f"resources/{rtype}", "resources", rtype, "id", "''", SORT_KEYS["resources"]),
            _Table(f"facts/{rtype}", "facts", rtype, "resource_id", "''", SORT_KEYS["facts"]),
        ]
        if rtype in mappings:
            table = mappings[rtype].table
            tables_of_type.append(_Table(f"map/{table}", "map", table, "ref", prefix, SORT_KEYS["map"]))
        for spec in tables_of_type:
            new = staged.of(spec.kind, spec.name)
            parts = _keep_stored(con, db, out, tables, spec, t, removed)
            parts += _add_new(con, db, out, spec, t, new, every) if new else []
            parts = _merge_small(con, db, out, spec, parts)
            if parts:
                tables[spec.key] = parts
            else:
                tables.pop(spec.key, None)
    changed_maps = {mappings[t].table for t in touched if t in mappings} | {m.table for m in stale}
    # A re-run map may change any patient's rows: those views are rebuilt whole.
    patients.shared_tables |= {m.table for m in stale}
    patients.shared_tables |= {mappings[t].table for t in patients.shared_types if t in mappings}
    _build_views(con, db, out, tables, mappings, views_dir, changed_maps, patients)
    return Manifest(generation, "", tables, digests), changes


@dataclass
class _Patients:
    """Whom an ingest changed: the patients in ``touched_patients`` (a temp table), and what belongs to no one.

    A view row depends on its own patient's rows and on shared resources (a Medication several orders
    name): a view that reads a changed shared table is rebuilt whole, any other only for these patients.
    """

    shared_types: set[str] = field(default_factory=set)  # types with changed rows of no patient
    shared_tables: set[str] = field(default_factory=set)  # mapped tables whose change reaches any patient


def _touched_patients(
    con: duckdb.DuckDBPyConnection, db: Path, current: Manifest, staged: _Staged, changes: Changes
) -> _Patients:
    """Fill ``touched_patients`` with the patients of staged and removed resources (a superset is safe)."""
    found = _Patients()
    con.execute("CREATE TEMP TABLE touched_patients (patient_id VARCHAR)").fetchall()
    sources = []
    files = [p for t in staged.types() for p in staged.of("resources", t)]
    if files:
        sources.append(f"SELECT resource_type, patient_id FROM read_parquet({_sql_list(files)})")
    for rtype in changes.removed:
        stored = [db / rel for rel in current.parts(f"resources/{rtype}")]
        if stored:
            sources.append(
                f"SELECT resource_type, patient_id FROM read_parquet({_sql_list(stored)}, union_by_name = true) "
                f"WHERE id IN (SELECT id FROM removed WHERE resource_type = {_literal(rtype)})"
            )
    if sources:
        union = " UNION ALL ".join(sources)
        con.execute(f"CREATE TEMP TABLE _touched AS SELECT DISTINCT resource_type, patient_id FROM ({union})").fetchall()
        con.execute("INSERT INTO touched_patients SELECT DISTINCT patient_id FROM _touched "
                    "WHERE patient_id IS NOT NULL").fetchall()
        found.shared_types = {
            t for (t,) in con.execute("SELECT DISTINCT resource_type FROM _touched WHERE patient_id IS NULL").fetchall()
        }
    return found


def stale_maps(current: Manifest, mappings: dict[str, Mapping]) -> list[Mapping]:
    """Maps whose rows in the store were made by another version of them (or never), for stored resources.

    A store written before digests were kept records none, so its first ingest re-runs every map once.
    """
    if not current.generation:
        return []
    return [
        m for m in mappings.values()
        if current.maps.get(m.table) != m.digest and current.parts(f"resources/{m.resource_type}")
    ]


#: Stored resources re-mapped before their rows are written as a part (bounds memory on large tables).
_REMAP_ROWS = 50_000


def _remap(db: Path, out: Path, tables: dict[str, Files], mapping: Mapping, changes: Changes) -> None:
    """Make ``mapping``'s table again from the stored resources of its type, part by part.

    A resources part is sorted by patient and id, so the rows made from it come out in the order of a map
    part (``patient_id, ref``); each becomes one part (more when it holds over ``_REMAP_ROWS`` rows).
    """
    rtype, folder = mapping.resource_type, out / "maps"
    folder.mkdir(parents=True, exist_ok=True)
    parts: list[str] = []
    resources = 0
    rows: list[tuple] = []

    def write() -> None:
        if rows:
            path = folder / f"{mapping.table}-remap{len(parts):04d}.parquet"
            write_part(mapped_table(rows, mapping.schema), path, SORT_KEYS["map"])
            parts.append(str(path.relative_to(db)))
            rows.clear()

    for rel in part_list(tables.get(f"resources/{rtype}")):
        for batch in pq.ParquetFile(db / rel).iter_batches(columns=["patient_id", "id", "json"], batch_size=5_000):
            for patient, rid, text in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
                resources += 1
                ref = f"{rtype}/{rid}"
                try:
                    made = mapping.view.rows(orjson.loads(text))
                except Exception as exc:  # noqa: BLE001 - reported like the stager's, never a stopped ingest
                    changes.mapping_problems.append((ref, f"{mapping.table}: {exc}"))
                    continue
                rows.extend((patient, ref, *row) for row in made)
            if len(rows) >= _REMAP_ROWS:
                write()
        write()
    if parts:
        tables[f"map/{mapping.table}"] = parts
    else:
        tables.pop(f"map/{mapping.table}", None)
    changes.remapped[mapping.table] = resources


@dataclass(frozen=True)
class _Table:
    """One lossless table of a resource type: its manifest key, the id column and how its parts sort."""

    key: str  # resources/<Type>, facts/<Type>, map/<table>
    kind: str  # resources, facts, map: the folder of its parts
    name: str  # <Type> or <table>
    id_column: str  # the column that names the resource: id, resource_id, ref
    prefix: str  # SQL literal put before a resource id to match id_column ('Observation/' for ref)
    sort: list[str]

    @property
    def folder(self) -> str:
        return "maps" if self.kind == "map" else self.kind


def _keep_stored(
    con: duckdb.DuckDBPyConnection, db: Path, out: Path, tables: dict[str, Files], spec: _Table, t: str,
    any_removed: bool,
) -> list[str]:
    """The stored parts of ``spec``, each one holding a replaced or deleted resource rewritten without it."""
    old = part_list(tables.get(spec.key))
    if not old or not any_removed:
        return old
    gone = f"(SELECT {spec.prefix} || id AS k FROM removed WHERE resource_type = {t})"
    return _without(con, db, old, out / spec.folder / spec.name, spec.id_column, gone, spec.sort)


def _without(
    con: duckdb.DuckDBPyConnection, db: Path, parts: list[str], stem: Path, column: str, gone: str, sort: list[str]
) -> list[str]:
    """``parts`` with the rows whose ``column`` is in ``gone`` (a subquery of ``k``) taken out.

    Only the parts that hold such rows are read and rewritten (as ``<stem>-kept<n>.parquet``); a part left
    empty is dropped, the others are kept as they are.
    """
    hit = {
        Path(row[0]).resolve()
        for row in con.execute(
            f"SELECT DISTINCT filename FROM read_parquet({_sql_list([db / rel for rel in parts])}, filename = true) "
            f"WHERE {column} IN {gone}"
        ).fetchall()
    }
    kept = []
    for number, rel in enumerate(parts):
        if (db / rel).resolve() not in hit:
            kept.append(rel)
            continue
        path = stem.with_name(f"{stem.name}-kept{number:04d}.parquet")
        select = f"SELECT o.* FROM read_parquet({_quote(db / rel)}) o ANTI JOIN {gone} r ON r.k = o.{column}"
        if _write(con, select, ", ".join(sort), path, _Size.of([db / rel])):
            kept.append(str(path.relative_to(db)))
        else:
            path.unlink(missing_ok=True)
    return kept


def _add_new(
    con: duckdb.DuckDBPyConnection, db: Path, out: Path, spec: _Table, t: str, new: list[Path], every: bool
) -> list[str]:
    """The staged parts of ``spec``: adopted as they are when every copy in them won, else filtered to the winners."""
    folder = out / spec.folder
    folder.mkdir(parents=True, exist_ok=True)
    if every:
        adopted = []
        for path in new:
            target = folder / f"{spec.name}-{path.stem.rpartition('-')[2]}.parquet"
            os.replace(path, target)
            adopted.append(str(target.relative_to(db)))
        return adopted
    won = (
        f"(SELECT {spec.prefix} || id AS k, part FROM winning WHERE resource_type = {t})"
    )
    select = (
        f"SELECT s.* EXCLUDE (filename) FROM read_parquet({_sql_list(new)}, filename = true, union_by_name = true) s "
        f"SEMI JOIN {won} w ON w.k = s.{spec.id_column} "
        "AND w.part = regexp_extract(s.filename, '-([^-/]*)\\.parquet$', 1)"
    )
    path = folder / f"{spec.name}-new.parquet"
    if _write(con, select, ", ".join(spec.sort), path, _Size.of(new)):
        return [str(path.relative_to(db))]
    path.unlink(missing_ok=True)
    return []


def _merge_small(con: duckdb.DuckDBPyConnection, db: Path, out: Path, spec: _Table, parts: list[str]) -> list[str]:
    """``parts``, its smallest ones merged into one sorted part when there are more than :data:`MAX_PARTS`.

    A quarter of the limit is merged at a time, the smallest parts first: daily loads' small parts are
    merged among themselves (and their merged parts again, later, with parts of their size), so a row is
    rewritten a few times over the life of a store and one ingest's merge stays small beside the table
    (merging down to half the limit instead rewrote half of a 10x store's largest tables: 4 s for a
    one-patient ingest).
    """
    if len(parts) <= MAX_PARTS:
        return parts
    by_size = sorted(parts, key=lambda rel: (db / rel).stat().st_size)
    merge = by_size[: max(len(parts) - MAX_PARTS + 1, MAX_PARTS // 4)]
    paths = [db / rel for rel in merge]
    target = out / spec.folder / f"{spec.name}-merged.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    select = f"SELECT * FROM read_parquet({_sql_list(paths)}, union_by_name = true)"
    written = _write(con, select, ", ".join(spec.sort), target, _Size.of(paths))
    kept = [rel for rel in parts if rel not in merge]
    return [*kept, str(target.relative_to(db))] if written else kept


@dataclass
class _Size:
    """Rows and (roughly) the bytes they take in a DuckDB sort, from Parquet footers."""

    rows: int = 0
    bytes: int = 0

    @classmethod
    def of(cls, paths: list[Path]) -> _Size:
        size = cls()
        for path in paths:
            meta = pq.read_metadata(path)
            encoded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
            size.rows += meta.num_rows
            size.bytes += max(encoded, meta.num_rows * meta.num_columns * 32)  # dictionaries hide repeated strings
        return size


def _write(con: duckdb.DuckDBPyConnection, select: str, order: str, path: Path, size: _Size | None = None) -> int:
    """Write the rows of ``select`` sorted by ``order`` to ``path``; the number of rows written.

    Without a ``size`` (the views: small, any SQL type) this is one ``COPY … ORDER BY``. With one
    (resources, facts, mapped rows), the rows are cut into ranges of the first sort key, split where
    the rows per key add up to equal shares, so that each range takes about a quarter of the merge
    memory (one range when all fit); DuckDB selects a range, Arrow sorts it (faster than DuckDB's sort
    on one core, and cheaper still on rows grouped by patient: ``sort_grouped``) and the ranges are
    appended in order to one Parquet file: the same globally sorted file, with memory bounded by the
    setting and not by
    the input, and none of the external sort's spilling (2.8M facts with 128 MB: 20 ranges, 2.5 s;
    one spilling sort 6.6 s; unbounded 3.0 s and 1.1 GB).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if size is None:
        rows = con.execute(
            f"COPY (SELECT * FROM ({select}) ORDER BY {order}) TO {_quote(path)} ({_STORE_PARQUET})"
        ).fetchall()
        return int(rows[0][0]) if rows else 0
    keys = [k.strip() for k in order.split(",")]
    parts = min(_MAX_RANGES, max(1, -(-size.bytes // max(1, SORT_RANGE_BYTES))))
    ranges = [""]  # one range: ``select`` itself (a view over it would be bound once more)
    if parts > 1:
        con.execute(f"CREATE OR REPLACE TEMP VIEW _sorted_input AS {select}").fetchall()
        key = keys[0]
        # Exact split points from the rows per key (a GROUP BY is cheaper than sampling the rows): a
        # key opens range i when the rows before it reach i/parts of all. One key is never split.
        splits = [
            row[0]
            for row in con.execute(
                f"""
                SELECT min(k) FROM (
                    SELECT k, (sum(n) OVER (ORDER BY k) - n) * {parts} // sum(n) OVER () AS part
                    FROM (SELECT {key} AS k, count(*) AS n FROM _sorted_input WHERE {key} IS NOT NULL GROUP BY k)
                ) WHERE part > 0 GROUP BY part ORDER BY 1
                """
            ).fetchall()
        ]
        bounds: list[str | None] = [None, *splits, None]
        ranges = []
        for low, high in zip(bounds, bounds[1:], strict=False):
            within = [f"{key} >= {_literal(low)}" if low is not None else f"{key} IS NOT NULL"]
            if high is not None:
                within.append(f"{key} < {_literal(high)}")
            ranges.append(" AND ".join(within))
        ranges.append(f"{key} IS NULL")  # nulls last, as ORDER BY and Arrow's sort put them
    group_rows = rows_per_group(size.rows, size.bytes)
    written = 0
    writer: pq.ParquetWriter | None = None
    try:
        for cond in ranges:
            query = f"SELECT * FROM _sorted_input WHERE {cond}" if cond else select
            table = con.sql(query).to_arrow_table()
            if writer is None:
                writer = part_writer(path, table.schema)
            if table.num_rows:
                writer.write_table(sort_grouped(table, keys), row_group_size=group_rows)
                written += table.num_rows
            del table
    finally:
        if writer is not None:
            writer.close()
    return written


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def register_maps(
    con: duckdb.DuckDBPyConnection, db: Path, tables: dict[str, Files], mappings: dict[str, Mapping]
) -> None:
    """Make every mapped table queryable by name; absent ones as empty tables of the right schema.

    The parts of a table share one schema (a changed map is re-run over every stored resource), so they
    are read without ``union_by_name``, which opens every part to bind the view (~0.1 s per connection
    on a store of a few hundred parts).
    """
    for mapping in mappings.values():
        parts = part_list(tables.get(f"map/{mapping.table}"))
        if parts:
            listing = _sql_list([db / rel for rel in parts])
            con.execute(
                f"CREATE OR REPLACE VIEW {mapping.table} AS SELECT * FROM read_parquet({listing})"
            ).fetchall()
        else:
            con.register(f"_empty_{mapping.table}", mapping.schema.empty_table())
            con.execute(f"CREATE OR REPLACE VIEW {mapping.table} AS SELECT * FROM _empty_{mapping.table}").fetchall()


def view_files(views_dir: Path) -> dict[str, Path]:
    """Canonical view name → its SQL file."""
    return {p.stem: p for p in sorted(views_dir.glob("*.sql"))}


def view_macros(views_dir: Path) -> list[str]:
    """The ``CREATE MACRO`` statements the views use (``views/macros/*.sql``), in name order."""
    return [p.read_text("utf-8").strip().rstrip(";") for p in sorted((views_dir / "macros").glob("*.sql"))]


def register_view_macros(con: duckdb.DuckDBPyConnection, views_dir: Path) -> None:
    """Define the views' macros on ``con`` (each view's SQL calls them: one definition, not one copy per view)."""
    for statement in view_macros(views_dir):
        con.execute(statement).fetchall()


def stale_views(current: Manifest, views_dir: Path) -> list[str]:
    """The views whose SQL differs from the one the stored generation was built with (or that it lacks)."""
    if not current.generation:
        return []
    stale = []
    for name, sql_path in view_files(views_dir).items():
        previous = current.parts(f"view/{name}")
        if not previous or not _built_with(previous, f"{name}-{_view_digest(sql_path)}"):
            stale.append(name)
    return stale


def _view_digest(sql_path: Path) -> str:
    """A digest of the view's SQL and of the macros it may call (an edited macro rebuilds the views)."""
    sql = sql_path.read_text("utf-8").strip().rstrip(";")
    used = [m for m in view_macros(sql_path.parent) if _macro_name(m) in sql]
    return hashlib.blake2b("\n".join([sql, *used]).encode(), digest_size=6).hexdigest()


def _macro_name(statement: str) -> str:
    match = re.search(r"MACRO\s+(\w+)", statement, re.IGNORECASE)
    return match.group(1) if match else statement


def _build_views(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    out: Path,
    tables: dict[str, Files],
    mappings: dict[str, Mapping],
    views_dir: Path,
    changed_maps: set[str] | None = None,
    patients: _Patients | None = None,
) -> None:
    """Rebuild the views that read a changed mapped table or whose SQL changed; carry the others over.

    A view's file names carry a digest of its SQL (``views/observation-<digest>….parquet``), so an edited
    view is rebuilt whole by the next ingest. A view whose SQL is unchanged and which reads no changed
    shared table is rebuilt only for the ``patients`` the ingest touched: their rows are made again as a
    new part and taken out of the stored parts that held them (a daily load does not rebuild the store's views).
    """
    register_maps(con, db, tables, mappings)
    register_view_macros(con, views_dir)
    for name, sql_path in view_files(views_dir).items():
        sql = sql_path.read_text("utf-8").strip().rstrip(";")
        digest = _view_digest(sql_path)
        key = f"view/{name}"
        previous = part_list(tables.get(key))
        current = bool(previous) and _built_with(previous, f"{name}-{digest}") and all(
            (db / rel).exists() for rel in previous
        )
        # The words of the SQL, once: a search per mapped table (\bname\b over the whole text) took 18 ms for
        # the 13 views and 20 maps, as much as building two of the small views.
        words = set(re.findall(r"\w+", sql))
        reads = {m.table for m in mappings.values() if m.table in words}
        if changed_maps is not None and current and reads and not reads & changed_maps:
            continue
        try:
            if changed_maps is not None and current and patients is not None and not reads & patients.shared_tables:
                tables[key] = _view_for_patients(con, db, out, previous, sql, f"{name}-{digest}")
                continue
            path = out / "views" / f"{name}-{digest}.parquet"
            _write(con, sql, "patient_id", path)
        except duckdb.Error as exc:
            raise FhirqaError(f"{sql_path}: view {name!r} failed: {exc}") from exc
        tables[key] = [str(path.relative_to(db))]


def _built_with(parts: list[str], stem: str) -> bool:
    """True when every part of a view was made by the SQL whose file stem is ``stem`` (``name-digest``)."""
    return all(Path(rel).stem == stem or Path(rel).stem.startswith(stem + "-") for rel in parts)


def _view_for_patients(
    con: duckdb.DuckDBPyConnection, db: Path, out: Path, previous: list[str], sql: str, stem: str
) -> list[str]:
    """The view's parts with the touched patients' rows made again (stored parts that held them rewritten)."""
    touched = "(SELECT patient_id AS k FROM touched_patients)"
    folder = out / "views"
    folder.mkdir(parents=True, exist_ok=True)
    parts = _without(con, db, previous, folder / stem, "patient_id", touched, ["patient_id"])
    path = folder / f"{stem}-new.parquet"
    written = _write(con, f"SELECT * FROM ({sql}) WHERE patient_id IN (SELECT k FROM {touched})", "patient_id", path)
    if written or not parts:  # a view keeps one file, if empty, that holds its columns (all its rows deleted)
        parts.append(str(path.relative_to(db)))
    else:
        path.unlink(missing_ok=True)
    return _merge_small(con, db, out, _Table(f"view/{stem}", "views", stem, "patient_id", "''", ["patient_id"]), parts)
