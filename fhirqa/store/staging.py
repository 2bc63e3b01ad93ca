"""Stage incoming resources: raw JSON, facts and mapped rows as table parts in their final form.

Work per resource happens once, here, as it streams in: one JSON dump (stored, and hashed), one walk
that checks the resource and emits its facts, one run of its canonical map. When the pending rows pass
a budget the largest resource types are flushed, each as parts (``resources-``, ``facts-`` and the map
table's, compressed and sorted by patient: :mod:`fhirqa.store.parts`) plus a small ``keys-`` file
(key, version, hash, ``seq`` of every staged record) that the generation decides the winners from.
When every new row wins (a first load, or an ingest that adds resources) the generation adopts the
parts as they are; memory stays flat however large the input is.

A part holds one copy of a resource at most (a second copy of an id flushes its type first), so a
copy is named by its id and its part. A second copy byte-identical to the one staged last for its id
(Synthea repeats a patient's practitioners and organizations in every bundle) takes that copy's place
as the later arrival (its ``seq`` and origin) without being flattened or mapped again, and does not
cut the part short. A resource whose bytes are identical to a stored one (its hash
is in the store's :class:`HashIndex`) is staged as a key and a hash only: it cannot change the store,
so it is neither flattened nor mapped.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fhirqa.normalize.flatten import FactColumns
from fhirqa.normalize.validate import MAX_STRING, InvalidResource
from fhirqa.store.mappings import Mapping
from fhirqa.store.parts import write_part

RESOURCE_SCHEMA = pa.schema(
    [
        ("resource_type", pa.string()),
        ("id", pa.string()),
        ("patient_id", pa.string()),
        ("version_id", pa.string()),
        ("last_updated", pa.string()),
        ("hash", pa.string()),
        ("origin", pa.string()),
        ("json", pa.string()),
    ]
)
#: What the generation decides from: every staged record (content or not), in arrival order ``seq``.
KEY_SCHEMA = pa.schema(
    [
        ("resource_type", pa.string()),
        ("id", pa.string()),
        ("seq", pa.int64()),
        ("version_id", pa.string()),
        ("last_updated", pa.string()),
        ("hash", pa.string()),
        ("deleted", pa.bool_()),
        ("content", pa.bool_()),  # its resource, facts and mapped rows are in the part named ``part``
        ("part", pa.string()),
    ]
)
FACT_SCHEMA = pa.schema(
    [
        ("patient_id", pa.string()),
        ("resource_type", pa.string()),
        ("resource_id", pa.string()),
        ("path", pa.string()),
        ("value_type", pa.string()),
        ("value", pa.string()),
        ("number", pa.float64()),
        ("seq", pa.int64()),
    ]
)
#: Sort order of each kind of part (facts: stable, so a resource's facts stay in document order).
SORT_KEYS = {"resources": ["patient_id", "id"], "facts": ["patient_id"], "map": ["patient_id", "ref"]}
#: Key files are read once by the generation and deleted: no compression, no statistics.
_KEYS_PARQUET = {"compression": "none", "write_statistics": False}


def content_hash(resource: dict[str, Any]) -> str:
    """Digest of a resource as the store keeps it (its compact JSON serialization, keys in arrival order)."""
    return hashlib.blake2b(orjson.dumps(resource), digest_size=16).hexdigest()


class HashIndex:
    """The content hashes of a stored generation, 16 bytes each, for "is this exact resource stored?".

    Built without a Python object per stored resource (one hex decode of all digests, an Arrow sort of
    the 16-byte values) and kept as the sorted halves in two ``array('Q')``: ten million resources
    cost 160 MB here.
    """

    def __init__(self, hex_digests: Iterable[str | None] | pa.ChunkedArray | pa.Array) -> None:
        column = hex_digests if isinstance(hex_digests, pa.ChunkedArray | pa.Array) else pa.array(
            list(hex_digests), pa.string()
        )
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        column = column.filter(pc.equal(pc.utf8_length(column), 32))  # drops nulls and anything else
        fixed = pc.cast(pc.cast(column, pa.binary()), pa.binary(32))
        text = fixed.buffers()[1].to_pybytes()[fixed.offset * 32 : (fixed.offset + len(fixed)) * 32] if len(fixed) else b""
        try:
            raw = bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):  # a digest that is not hex: keep the well-formed ones
            column = column.filter(pc.match_substring_regex(column, "^[0-9a-f]{32}$"))
            raw = bytes.fromhex("".join(column.to_pylist()))
        digests = pa.Array.from_buffers(pa.binary(16), len(raw) // 16, [None, pa.py_buffer(raw)])
        ordered = digests.take(pc.sort_indices(digests))  # bytes order: the order of big-endian numbers
        data = ordered.buffers()[1].to_pybytes()[: len(raw)] if len(ordered) else b""
        words = array("Q", data)
        if words.itemsize != 8:  # pragma: no cover - every platform CPython supports has an 8-byte Q
            raise RuntimeError("array('Q') is not 64-bit here")
        if sys.byteorder == "little":  # the digests are big-endian numbers
            words.byteswap()
        self._high = words[0::2]
        self._low = words[1::2]

    def __len__(self) -> int:
        return len(self._high)

    def __contains__(self, digest: object) -> bool:
        if not isinstance(digest, bytes) or len(digest) != 16:
            return False
        high, low = int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:], "big")
        highs, lows = self._high, self._low
        index = bisect_left(highs, high)
        while index < len(highs) and highs[index] == high:
            if lows[index] == low:
                return True
            index += 1
        return False

    @classmethod
    def of_files(cls, paths: Iterable[Path]) -> HashIndex:
        """The index of the ``hash`` column of stored resource files."""
        # ParquetFile.read, not read_table: the dataset layer costs ~1 ms per file, and a store has many parts.
        chunks = [pq.ParquetFile(path).read(columns=["hash"]).column("hash") for path in paths]
        chunks = [c.cast(pa.string()) for c in chunks if len(c)]
        return cls(pa.chunked_array([a for c in chunks for a in c.chunks], pa.string()))


class _TypeBatch:
    """Pending rows of one resource type: a key row per staged record, content rows for new content."""

    __slots__ = ("facts", "json_bytes", "keys", "last_copy", "mapped", "rows")

    def __init__(self) -> None:
        # One tuple per record, turned into columns at flush (one append per record, not one per field).
        # keys: id, seq, version, updated, hash, deleted, content (KEY_SCHEMA without resource_type and part)
        self.keys: list[tuple] = []
        # rows: id, patient_id, version_id, last_updated, hash, origin, json (RESOURCE_SCHEMA after resource_type)
        self.rows: list[tuple] = []
        # id → (hash, index in rows, index in keys) of its copy staged last here (None: a deletion came after)
        self.last_copy: dict[str, tuple[str, int, int] | None] = {}
        self.json_bytes = 0
        self.facts = FactColumns()
        self.mapped: list[tuple] = []

    def __len__(self) -> int:
        return len(self.keys)

    def weight(self) -> int:
        """What this batch holds, in facts (a resource counts as ten): what a flush frees."""
        return len(self.facts) + 10 * len(self)

    def key_table(self, rtype: str, part: str) -> pa.Table:
        count = len(self)
        ids, seqs, versions, updated, hashes, deleted, content = zip(*self.keys, strict=True)
        return pa.Table.from_arrays(
            [pa.array([rtype] * count, pa.string()), pa.array(ids, pa.string()), pa.array(seqs, pa.int64()),
             pa.array(versions, pa.string()), pa.array(updated, pa.string()), pa.array(hashes, pa.string()),
             pa.array(deleted, pa.bool_()), pa.array(content, pa.bool_()), pa.array([part] * count, pa.string())],
            schema=KEY_SCHEMA,
        )

    def resource_table(self, rtype: str) -> pa.Table:
        count = len(self.rows)
        return pa.Table.from_arrays(
            [pa.array([rtype] * count, pa.string()),
             *(pa.array(column, pa.string()) for column in zip(*self.rows, strict=True))],
            schema=RESOURCE_SCHEMA,
        )


class Stager:
    """Accumulates staged records and writes them to ``folder`` as parts and key files, per resource type.

    Files: ``keys-<Type>-<part>.parquet``, ``resources-<Type>-<part>.parquet``,
    ``facts-<Type>-<part>.parquet`` and ``<map table>-<part>.parquet``, where ``<part>`` is ``tag`` and a
    flush number. ``batch_size`` bounds the pending records, ``fact_budget`` the pending facts and
    ``json_budget`` the pending JSON bytes (what memory is made of: ~380 MB peak with the defaults
    however large the input); past any, the heaviest types are flushed until half is left. Larger
    budgets make fewer, larger parts (a first load of 263k Synthea resources: ~30 parts for its largest
    tables) at the cost of memory.
    """

    def __init__(
        self,
        folder: Path,
        mappings: dict[str, Mapping],
        batch_size: int = 100_000,
        *,
        fact_budget: int = 500_000,
        json_budget: int = 64 << 20,
        stored: HashIndex | None = None,
        max_string: int = MAX_STRING,
        tag: str = "",
    ) -> None:
        self.folder = folder
        self.tag = tag  # prefix of this stager's part names (parallel workers share one folder)
        self.mappings = mappings
        self.batch_size = batch_size
        self.fact_budget = fact_budget
        self.json_budget = json_budget
        self.stored = stored if stored is not None and len(stored) else None
        self.max_string = max_string
        self.batches = 0  # parts written (one flush of one type)
        self.unchanged = 0  # resources identical to their stored copy (staged as key and hash only)
        self.mapping_problems: list[tuple[str, str]] = []  # (Type/id, reason) rows a map could not produce
        folder.mkdir(parents=True, exist_ok=True)
        self._types: dict[str, _TypeBatch] = {}
        self._pending = 0
        self._pending_facts = 0
        self._pending_json = 0

    def _batch(self, rtype: str) -> _TypeBatch:
        batch = self._types.get(rtype)
        if batch is None:
            batch = self._types[rtype] = _TypeBatch()
        return batch

    def add(self, resource: dict[str, Any], patient_id: str | None, origin: str, seq: int, deleted: bool) -> None:
        """Stage one resource (or one deletion) arriving as number ``seq`` of this ingest.

        Raises :class:`InvalidResource` (and stages nothing) when the resource breaks a structural check;
        the caller has checked its type and id (``validate.check_header``).
        """
        rtype: str = resource["resourceType"]
        rid: str = resource["id"]
        batch = self._batch(rtype)
        if deleted:
            if rid in batch.last_copy:
                batch.last_copy[rid] = None
            self._key(batch, rid, seq, None, None, None, True, False)
            return
        try:
            data = orjson.dumps(resource)
        except orjson.JSONEncodeError as exc:
            raise InvalidResource(f"{rtype}/{rid} cannot be stored as JSON: {exc}") from exc
        digest = hashlib.blake2b(data, digest_size=16)
        meta = resource.get("meta")
        version = updated = None
        if isinstance(meta, dict):
            version, updated = meta.get("versionId"), meta.get("lastUpdated")
            version = None if version is None else str(version)
            updated = None if updated is None else str(updated)
        if self.stored is not None and digest.digest() in self.stored:
            # Byte-identical to the stored copy (checked when it was stored): it can only be kept.
            self.unchanged += 1
            self._key(batch, rid, seq, version, updated, digest.hexdigest(), False, False)
            return
        hexdigest = digest.hexdigest()
        if rid in batch.last_copy:
            last = batch.last_copy[rid]
            if last is not None and last[0] == hexdigest:  # the same bytes again: it is the later arrival
                _, row, key = last
                batch.rows[row] = (*batch.rows[row][:5], origin, data)
                batch.keys[key] = (rid, seq, *batch.keys[key][2:])
                return
            self._flush_type(rtype)  # a part holds one copy of a resource: the earlier one goes first
            batch = self._batch(rtype)
        facts = batch.facts
        before = len(facts)
        facts.add_checked(resource, patient_id, seq, self.max_string, long_strings=len(data) > self.max_string)
        self._pending_facts += len(facts) - before
        mapping = self.mappings.get(rtype)
        if mapping is not None:
            self._map(batch, mapping, resource, patient_id, f"{rtype}/{rid}")
        batch.last_copy[rid] = (hexdigest, len(batch.rows), len(batch.keys))
        batch.rows.append((rid, patient_id, version, updated, hexdigest, origin, data))
        batch.json_bytes += len(data)
        self._pending_json += len(data)
        self._key(batch, rid, seq, version, updated, hexdigest, False, True)

    def _key(
        self, batch: _TypeBatch, rid: str, seq: int, version: str | None, updated: str | None, digest: str | None,
        deleted: bool, content: bool,
    ) -> None:
        batch.keys.append((rid, seq, version, updated, digest, deleted, content))
        self._pending += 1
        if (self._pending >= self.batch_size or self._pending_facts >= self.fact_budget
                or self._pending_json >= self.json_budget):
            self._relieve()

    def _relieve(self) -> None:
        """Flush the heaviest types until half of every budget is left."""
        while self._types and (self._pending > self.batch_size // 2 or self._pending_facts > self.fact_budget // 2
                               or self._pending_json > self.json_budget // 2):
            self._flush_type(max(self._types, key=lambda t: self._types[t].weight()))

    def _map(self, batch: _TypeBatch, mapping: Mapping, resource: dict[str, Any], patient_id: str | None, ref: str) -> None:
        try:
            rows = mapping.view.rows(resource)
        except Exception as exc:  # noqa: BLE001 - one odd resource must not stop the ingest; it is reported
            self.mapping_problems.append((ref, f"{mapping.table}: {exc}"))
            return
        bucket = batch.mapped
        for row in rows:
            bucket.append((patient_id, ref, *row))

    def flush(self) -> None:
        """Write every pending batch (if any) as parts."""
        for rtype in list(self._types):
            self._flush_type(rtype)

    def _flush_type(self, rtype: str) -> None:
        batch = self._types.pop(rtype, None)
        if batch is None or not len(batch):
            return
        self.batches += 1
        part = f"{self.tag}{self.batches:06d}"  # no '-': the generation splits file names on it
        pq.write_table(batch.key_table(rtype, part), self.folder / f"keys-{rtype}-{part}.parquet", **_KEYS_PARQUET)
        if batch.rows:
            write_part(batch.resource_table(rtype), self.folder / f"resources-{rtype}-{part}.parquet",
                       SORT_KEYS["resources"])
        if len(batch.facts):
            write_part(batch.facts.part_table(), self.folder / f"facts-{rtype}-{part}.parquet", None)
        mapping = self.mappings.get(rtype)
        if mapping is not None and batch.mapped:
            write_part(mapped_table(batch.mapped, mapping.schema), self.folder / f"{mapping.table}-{part}.parquet",
                       SORT_KEYS["map"])
        self._pending -= len(batch)
        self._pending_facts -= len(batch.facts)
        self._pending_json -= batch.json_bytes


def mapped_table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    """Mapped rows (patient, ref, columns…) as a table of the map's ``schema``."""
    columns = list(zip(*rows, strict=True))
    arrays = [_to_array(list(col), field.type) for col, field in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def _to_array(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """Build a column, coercing values a ViewDefinition typed loosely (a string in a decimal column → null)."""
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([_coerce(v, arrow_type) for v in values], type=arrow_type)


def _coerce(value: Any, arrow_type: pa.DataType) -> Any:
    if value is None:
        return None
    try:
        if pa.types.is_floating(arrow_type):
            return float(value)
        if pa.types.is_integer(arrow_type):
            return int(value)
        if pa.types.is_boolean(arrow_type):
            return value if isinstance(value, bool) else str(value).lower() == "true"
        if pa.types.is_list(arrow_type):
            items = value if isinstance(value, list) else [value]
            return [None if v is None else str(v) for v in items]
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return str(value)
    except (TypeError, ValueError):
        return None
