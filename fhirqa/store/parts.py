"""Table parts: Parquet files sorted by patient, written in their final form.

The lossless tables (raw resources, facts, mapped rows) are lists of parts. The stager writes each
batch of new resources as parts already compressed, indexed and sorted by patient, and the generation
that stores them adopts the files as they are: a first load or an ingest that only adds resources
never reads them back, sorts them again or rewrites what is stored.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

#: Row groups of about this size (in memory): small enough for per-patient reads.
ROW_GROUP_BYTES = 16 << 20
#: Columns (nearly) unique per row (raw JSON, its hash, where it came from, a fact's value): no dictionary,
#: no min/max statistics.
UNIQUE_COLUMNS = frozenset({"json", "hash", "origin", "value", "number"})
#: Columns that repeat (a dictionary pays) but whose min/max per row group skips nothing, because the
#: rows are sorted by patient: a fact's resource id and path. Facts are most of what the store writes,
#: and these two settings halve the time it takes (815k facts: 0.30 → 0.15 s, the file no larger).
UNSKIPPABLE_COLUMNS = frozenset({"resource_id", "path", "value_type"})


def part_writer(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    """A Parquet writer with the store's settings: zstd, dictionaries and statistics where they pay.

    Dictionary and large-string columns (the facts as :meth:`FactColumns.part_table` makes them) are
    written as plain Parquet strings, and no Arrow schema is stored with them, so every part of a table
    reads back with the same schema however it was written.
    """
    indexed = [name for name in schema.names if name not in UNIQUE_COLUMNS]
    skippable = [name for name in indexed if name not in UNSKIPPABLE_COLUMNS]
    plain = not any(pa.types.is_dictionary(f.type) or pa.types.is_large_string(f.type) for f in schema)
    return pq.ParquetWriter(path, schema, compression="zstd", use_dictionary=indexed, write_statistics=skippable,
                            store_schema=plain)


def rows_per_group(rows: int, nbytes: int) -> int:
    """Rows per row group for ``rows`` rows taking ``nbytes`` in memory."""
    return max(1_000, min(122_880, rows * ROW_GROUP_BYTES // max(nbytes, 1)))


def write_part(table: pa.Table, path: Path, keys: list[str] | None) -> int:
    """Write ``table`` sorted by ``keys`` as one part at ``path`` (None: it is sorted already); the rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if keys:
        table = sort_grouped(table, keys)
    writer = part_writer(path, table.schema)
    try:
        writer.write_table(table, row_group_size=rows_per_group(table.num_rows, table.nbytes))
    finally:
        writer.close()
    return table.num_rows


def sort_grouped(table: pa.Table, keys: list[str]) -> pa.Table:
    """``table`` stably sorted by ``keys`` (ascending, nulls last), cheaply when equal keys arrive together.

    Staged rows come grouped (a bundle is one patient's), so the table is a few runs of equal keys: the
    runs are ordered by their first row and copied back together in that order, a fraction of a full
    sort (815k facts: 0.08 s instead of 0.27 s). The result is one chunk per column, because the
    Parquet writer is slower on many small chunks. Rows that are not grouped (resources by patient and
    id: every row its own run) are sorted in full.
    """
    rows = table.num_rows
    if rows < 2:
        return table
    change: pa.Array | None = None
    starts: list[int] = []
    for key in keys:
        column = table[key]
        after, before = column.slice(1), column.slice(0, rows - 1)
        differs = pc.or_(
            pc.fill_null(pc.not_equal(after, before), False), pc.xor(pc.is_null(after), pc.is_null(before))
        )
        change = differs if change is None else pc.or_(change, differs)
        starts = [0, *(i + 1 for i in pc.indices_nonzero(change).to_pylist())]
        if len(starts) > rows // 8:  # hardly grouped: a full sort is cheaper than cutting runs
            return table.sort_by([(k, "ascending") for k in keys])
    heads = table.select(keys).take(pa.array(starts, pa.int64()))
    order = pc.sort_indices(heads, sort_keys=[(k, "ascending") for k in keys]).to_pylist()
    if order == sorted(order):
        return table  # already in order
    ends = [*starts[1:], rows]
    return pa.concat_tables([table.slice(starts[i], ends[i] - starts[i]) for i in order]).combine_chunks()
