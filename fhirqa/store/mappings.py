"""The canonical maps (``mappings/*.json``), compiled once, with the Arrow schema of their tables."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from fhirqa.errors import FhirqaError
from fhirqa.project import data_dir
from fhirqa.viewdef import CompiledView, ViewDefinitionError, compile_view
from fhirqa.viewdef.runner import ROWS_REVISION

#: Columns the store puts before every mapped row: the patient and the ``Type/id`` it came from.
META_COLUMNS = ("patient_id", "ref")

_DECIMAL = {"decimal"}
_INTEGER = {"integer", "positiveInt", "unsignedInt", "integer64"}
_BOOLEAN = {"boolean"}


def arrow_type(fhir_type: str | None, collection: bool) -> pa.DataType:
    """Arrow type a mapped column is stored as (FHIR dates stay ISO strings: the views cast them)."""
    if collection:
        return pa.list_(pa.string())
    if fhir_type in _DECIMAL:
        return pa.float64()
    if fhir_type in _INTEGER:
        return pa.int64()
    if fhir_type in _BOOLEAN:
        return pa.bool_()
    return pa.string()


@dataclass(frozen=True)
class Mapping:
    """One canonical map: a compiled ViewDefinition and the table it fills."""

    table: str
    resource_type: str
    view: CompiledView
    definition: dict[str, Any]
    path: Path

    @property
    def schema(self) -> pa.Schema:
        """Arrow schema of the mapped table, meta columns first."""
        fields = [pa.field(name, pa.string()) for name in META_COLUMNS]
        fields += [pa.field(c.name, arrow_type(c.type, c.collection)) for c in self.view.columns]
        return pa.schema(fields)

    @property
    def digest(self) -> str:
        """A digest of the ViewDefinition and of the runner's rows revision: rows made with another digest are
        made again (store upgrades), whether the map or the way it is run changed."""
        canonical = orjson.dumps(self.definition, option=orjson.OPT_SORT_KEYS)
        return hashlib.blake2b(canonical + b"\x00rows-revision=%d" % ROWS_REVISION, digest_size=8).hexdigest()

    def column_paths(self) -> dict[str, str]:
        """FHIRPath of each mapped column, for provenance."""
        return {c.name: c.path for c in self.view.columns}


@lru_cache(maxsize=4)
def load_mappings(folder: Path | None = None) -> dict[str, Mapping]:
    """Every mapping in ``folder`` (default: the project's ``mappings/``), keyed by resource type."""
    folder = folder or data_dir("mappings")
    mappings: dict[str, Mapping] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            definition = orjson.loads(path.read_bytes())
            view = compile_view(definition)
        except (orjson.JSONDecodeError, ViewDefinitionError) as exc:
            raise FhirqaError(f"{path}: invalid canonical map: {exc}") from exc
        table = definition.get("name") or f"map_{view.resource.lower()}"
        if view.resource in mappings:
            raise FhirqaError(f"{path}: a second map for {view.resource} (first: {mappings[view.resource].path})")
        mappings[view.resource] = Mapping(table, view.resource, view, definition, path)
    return mappings
