"""Stage incoming resources as Parquet batches: raw JSON, facts and mapped rows.

Work per resource happens once, here, as it streams in; batches go to disk every
``batch_size`` resources so memory stays flat however large the input is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from fhirqa.normalize.flatten import FactColumns
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


def content_hash(resource: dict[str, Any]) -> str:
    """Stable digest of a resource's content (key order does not matter)."""
    return hashlib.blake2b(orjson.dumps(resource, option=orjson.OPT_SORT_KEYS), digest_size=16).hexdigest()


class Stager:
    """Accumulates staged rows and writes them to ``folder`` in numbered Parquet batches."""

    def __init__(self, folder: Path, mappings: dict[str, Mapping], batch_size: int = 5000) -> None:
        self.folder = folder
        self.mappings = mappings
        self.batch_size = batch_size
        self.batches = 0
        self.mapping_problems: list[tuple[str, str]] = []  # (Type/id, reason) rows a map could not produce
        folder.mkdir(parents=True, exist_ok=True)
        self._reset()

    def _reset(self) -> None:
        self._resources: dict[str, list[Any]] = {name: [] for name in RESOURCE_SCHEMA.names}
        self._facts = FactColumns()
        self._fact_seq: list[int] = []
        self._mapped: dict[str, list[tuple]] = {}
        self._pending = 0

    def add(self, resource: dict[str, Any], patient_id: str | None, origin: str, seq: int, deleted: bool) -> None:
        """Stage one resource (or one deletion) arriving as number ``seq`` of this ingest."""
        rtype: str = resource["resourceType"]
        rid: str = resource["id"]
        meta = resource.get("meta") if not deleted else None
        meta = meta if isinstance(meta, dict) else {}
        res = self._resources
        res["resource_type"].append(rtype)
        res["id"].append(rid)
        res["patient_id"].append(patient_id)
        res["version_id"].append(_as_str(meta.get("versionId")))
        res["last_updated"].append(_as_str(meta.get("lastUpdated")))
        res["origin"].append(origin)
        res["seq"].append(seq)
        res["deleted"].append(deleted)
        if deleted:
            res["hash"].append(None)
            res["json"].append(None)
        else:
            res["hash"].append(content_hash(resource))
            res["json"].append(orjson.dumps(resource).decode())
            before = len(self._facts)
            self._facts.add_resource(resource, patient_id)
            self._fact_seq.extend([seq] * (len(self._facts) - before))
            mapping = self.mappings.get(rtype)
            if mapping is not None:
                self._map(mapping, resource, patient_id, f"{rtype}/{rid}", seq)
        self._pending += 1
        if self._pending >= self.batch_size:
            self.flush()

    def _map(self, mapping: Mapping, resource: dict[str, Any], patient_id: str | None, ref: str, seq: int) -> None:
        try:
            rows = mapping.view.rows(resource)
        except Exception as exc:  # noqa: BLE001 - one odd resource must not stop the ingest; it is reported
            self.mapping_problems.append((ref, f"{mapping.table}: {exc}"))
            return
        bucket = self._mapped.setdefault(mapping.table, [])
        for row in rows:
            bucket.append((patient_id, ref, *row, seq))

    def flush(self) -> None:
        """Write the pending batch (if any) as Parquet files and start a new one."""
        if not self._pending:
            return
        self.batches += 1
        tag = f"{self.batches:06d}"
        pq.write_table(pa.table(self._resources, schema=RESOURCE_SCHEMA), self.folder / f"resources-{tag}.parquet")
        facts = self._facts
        fact_table = pa.table(
            [
                facts.patient_id, facts.resource_type, facts.resource_id, facts.path,
                facts.value_type, facts.value, facts.number, self._fact_seq,
            ],
            schema=FACT_SCHEMA,
        )
        pq.write_table(fact_table, self.folder / f"facts-{tag}.parquet")
        for mapping in self.mappings.values():
            rows = self._mapped.get(mapping.table)
            if not rows:
                continue
            schema = mapping.schema.append(pa.field("seq", pa.int64()))
            columns = list(zip(*rows, strict=True))
            arrays = [_to_array(list(col), field.type) for col, field in zip(columns, schema, strict=True)]
            pq.write_table(pa.Table.from_arrays(arrays, schema=schema), self.folder / f"{mapping.table}-{tag}.parquet")
        self._reset()


def _as_str(value: Any) -> str | None:
    return None if value is None else str(value)


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
