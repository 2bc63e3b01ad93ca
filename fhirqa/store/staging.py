"""Stage incoming resources as Parquet batches: raw JSON, facts and mapped rows.

Work per resource happens once, here, as it streams in: one JSON dump (stored, and hashed), one walk
that checks the resource and emits its facts, one run of its canonical map. Batches go to disk, one file
per resource type and kind, whenever the pending facts or resources pass a budget, so memory stays flat
however large the input is and the merge reads only the files of the type it rewrites.

A resource whose bytes are identical to a stored one (its hash is in the store's :class:`HashIndex`)
is staged as a key and a hash only: it cannot change the store, so it is neither flattened nor mapped.
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
        ("seq", pa.int64()),
        ("deleted", pa.bool_()),
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
#: Staging files are read once by the merge and deleted: no compression, no statistics.
_STAGING_PARQUET = {"compression": "none", "write_statistics": False}
#: Resource columns worth a dictionary (the JSON, hash, id and origin are unique per row).
_RESOURCE_DICTIONARY = ["resource_type", "patient_id", "version_id", "last_updated"]


def content_hash(resource: dict[str, Any]) -> str:
    """Digest of a resource as the store keeps it (its compact JSON serialization, keys in arrival order)."""
    return hashlib.blake2b(orjson.dumps(resource), digest_size=16).hexdigest()


class HashIndex:
    """The content hashes of a stored generation, 16 bytes each, for "is this exact resource stored?".

    Built in Arrow (sort, then one hex decode) and kept as the sorted 64-bit halves in two
    ``array('Q')``: no Python object per stored resource, so ten million resources cost 160 MB here.
    """

    def __init__(self, hex_digests: Iterable[str | None] | pa.ChunkedArray | pa.Array) -> None:
        column = hex_digests if isinstance(hex_digests, pa.ChunkedArray | pa.Array) else pa.array(
            list(hex_digests), pa.string()
        )
        column = column.filter(pc.match_substring_regex(column, "^[0-9a-f]{32}$"))
        column = pc.take(column, pc.sort_indices(column))  # fixed-width hex: text order is number order
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        fixed = pc.cast(pc.cast(column, pa.binary()), pa.binary(32))
        text = fixed.buffers()[1].to_pybytes()[fixed.offset * 32 : (fixed.offset + len(fixed)) * 32] if len(fixed) else b""
        words = array("Q", bytes.fromhex(text.decode("ascii")))
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
        chunks = [pq.read_table(path, columns=["hash"]).column("hash") for path in paths]
        chunks = [c.cast(pa.string()) for c in chunks if len(c)]
        return cls(pa.chunked_array([a for c in chunks for a in c.chunks], pa.string()))


class _TypeBatch:
    """Pending rows of one resource type."""

    __slots__ = ("deleted", "facts", "hash", "id", "json", "last_updated", "mapped", "origin", "patient_id",
                 "seq", "version_id")

    def __init__(self) -> None:
        self.id: list[str] = []
        self.patient_id: list[str | None] = []
        self.version_id: list[str | None] = []
        self.last_updated: list[str | None] = []
        self.hash: list[str | None] = []
        self.origin: list[str] = []
        self.json: list[bytes | None] = []
        self.seq: list[int] = []
        self.deleted: list[bool] = []
        self.facts = FactColumns()
        self.mapped: list[tuple] = []

    def resource_table(self, rtype: str) -> pa.Table:
        count = len(self.id)
        return pa.Table.from_arrays(
            [
                pa.array([rtype] * count, pa.string()),
                pa.array(self.id, pa.string()),
                pa.array(self.patient_id, pa.string()),
                pa.array(self.version_id, pa.string()),
                pa.array(self.last_updated, pa.string()),
                pa.array(self.hash, pa.string()),
                pa.array(self.origin, pa.string()),
                pa.array(self.json, pa.string()),
                pa.array(self.seq, pa.int64()),
                pa.array(self.deleted, pa.bool_()),
            ],
            schema=RESOURCE_SCHEMA,
        )


class Stager:
    """Accumulates staged rows and writes them to ``folder`` in numbered Parquet batches.

    Files: ``resources-<Type>-<batch>.parquet``, ``facts-<Type>-<batch>.parquet`` and
    ``<map table>-<batch>.parquet``, where ``<batch>`` is ``tag`` and a batch number. ``batch_size`` bounds the pending resources, ``fact_budget`` the
    pending facts (what memory is made of).
    """

    def __init__(
        self,
        folder: Path,
        mappings: dict[str, Mapping],
        batch_size: int = 10_000,
        *,
        fact_budget: int = 200_000,
        stored: HashIndex | None = None,
        max_string: int = MAX_STRING,
        tag: str = "",
    ) -> None:
        self.folder = folder
        self.tag = tag  # prefix of this stager's batch numbers (parallel workers share one folder)
        self.mappings = mappings
        self.batch_size = batch_size
        self.fact_budget = fact_budget
        self.stored = stored if stored is not None and len(stored) else None
        self.max_string = max_string
        self.batches = 0
        self.unchanged = 0  # resources identical to their stored copy (staged as key and hash only)
        self.mapping_problems: list[tuple[str, str]] = []  # (Type/id, reason) rows a map could not produce
        folder.mkdir(parents=True, exist_ok=True)
        self._types: dict[str, _TypeBatch] = {}
        self._pending = 0
        self._pending_facts = 0

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
            self._row(batch, rid, None, None, None, None, origin, None, seq, True)
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
            self._row(batch, rid, patient_id, version, updated, digest.hexdigest(), origin, None, seq, False)
            return
        facts = batch.facts
        before = len(facts)
        facts.add_checked(resource, patient_id, seq, self.max_string, long_strings=len(data) > self.max_string)
        self._pending_facts += len(facts) - before
        mapping = self.mappings.get(rtype)
        if mapping is not None:
            self._map(batch, mapping, resource, patient_id, f"{rtype}/{rid}", seq)
        self._row(batch, rid, patient_id, version, updated, digest.hexdigest(), origin, data, seq, False)

    def _row(
        self, batch: _TypeBatch, rid: str, patient_id: str | None, version: str | None, updated: str | None,
        digest: str | None, origin: str, data: bytes | None, seq: int, deleted: bool,
    ) -> None:
        batch.id.append(rid)
        batch.patient_id.append(patient_id)
        batch.version_id.append(version)
        batch.last_updated.append(updated)
        batch.hash.append(digest)
        batch.origin.append(origin)
        batch.json.append(data)
        batch.seq.append(seq)
        batch.deleted.append(deleted)
        self._pending += 1
        if self._pending >= self.batch_size or self._pending_facts >= self.fact_budget:
            self.flush()

    def _map(
        self, batch: _TypeBatch, mapping: Mapping, resource: dict[str, Any], patient_id: str | None, ref: str, seq: int
    ) -> None:
        try:
            rows = mapping.view.rows(resource)
        except Exception as exc:  # noqa: BLE001 - one odd resource must not stop the ingest; it is reported
            self.mapping_problems.append((ref, f"{mapping.table}: {exc}"))
            return
        bucket = batch.mapped
        for row in rows:
            bucket.append((patient_id, ref, *row, seq))

    def flush(self) -> None:
        """Write the pending batch (if any) as Parquet files and start a new one."""
        if not self._pending:
            return
        self.batches += 1
        tag = f"{self.tag}{self.batches:06d}"  # no '-': the merge splits file names on it
        for rtype, batch in self._types.items():
            pq.write_table(batch.resource_table(rtype), self.folder / f"resources-{rtype}-{tag}.parquet",
                           use_dictionary=_RESOURCE_DICTIONARY, **_STAGING_PARQUET)
            if len(batch.facts):
                pq.write_table(batch.facts.to_arrow(FACT_SCHEMA), self.folder / f"facts-{rtype}-{tag}.parquet",
                               **_STAGING_PARQUET)
            mapping = self.mappings.get(rtype)
            if mapping is not None and batch.mapped:
                schema = mapping.schema.append(pa.field("seq", pa.int64()))
                columns = list(zip(*batch.mapped, strict=True))
                arrays = [_to_array(list(col), field.type) for col, field in zip(columns, schema, strict=True)]
                pq.write_table(pa.Table.from_arrays(arrays, schema=schema),
                               self.folder / f"{mapping.table}-{tag}.parquet", **_STAGING_PARQUET)
        self._types = {}
        self._pending = 0
        self._pending_facts = 0


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
