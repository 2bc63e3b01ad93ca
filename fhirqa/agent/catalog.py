"""Per-view metadata as data (``views/catalog.json``): what each canonical view holds and how tools read it.

For every view: a description, which column is the item name, the time, the value and its unit, the
default fields a specialist shows, and a one-line description of every column a model may ask for.
Tools and prompts read this instead of hard-coding column names, so a view change is a data change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.project import data_dir

CATALOG_FILE = "catalog.json"


class UnknownView(KeyError):
    """A view name that is not in the catalog."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown view"


@dataclass(frozen=True)
class ViewInfo:
    """How tools read one canonical view."""

    name: str
    description: str
    name_field: str
    time_field: str | None
    value_field: str | None
    unit_field: str | None
    text_value_field: str | None  # the non-numeric "value" (observation value_string, note text…)
    code_field: str | None
    category_field: str | None
    kind_field: str | None
    units: dict[str, str]  # numeric column → the column holding its unit
    default_fields: tuple[str, ...]
    columns: dict[str, str]  # column → one-line description (every column a model may ask for)

    def unit_of(self, field: str, row: dict[str, Any]) -> str | None:
        """The unit of ``field`` in ``row`` when the catalog names a unit column for it."""
        unit_col = self.units.get(field)
        value = row.get(unit_col) if unit_col else None
        return str(value) if value is not None else None

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary for prompts and tool results."""
        return {"view": self.name, "description": self.description, "name_field": self.name_field,
                "time_field": self.time_field, "value_field": self.value_field,
                "unit_field": self.unit_field, "default_fields": list(self.default_fields),
                "columns": dict(self.columns)}


def _parse(name: str, entry: dict[str, Any]) -> ViewInfo:
    columns = dict(entry["columns"])
    info = ViewInfo(
        name=name,
        description=entry["description"],
        name_field=entry["name_field"],
        time_field=entry.get("time_field"),
        value_field=entry.get("value_field"),
        unit_field=entry.get("unit_field"),
        text_value_field=entry.get("text_value_field"),
        code_field=entry.get("code_field"),
        category_field=entry.get("category_field"),
        kind_field=entry.get("kind_field"),
        units=dict(entry.get("units", {})),
        default_fields=tuple(entry["default_fields"]),
        columns=columns,
    )
    # A catalog that names a column it does not describe would send tools after a field that
    # models are told does not exist; fail at load time instead.
    named = [info.name_field, info.time_field, info.value_field, info.unit_field, info.text_value_field,
             info.code_field, info.category_field, info.kind_field, *info.default_fields,
             *info.units, *info.units.values()]
    missing = sorted({f for f in named if f is not None and f not in columns})
    if missing:
        raise ValueError(f"{CATALOG_FILE}: view {name!r} refers to undescribed columns {missing}")
    return info


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, ViewInfo]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {name: _parse(name, entry) for name, entry in raw.items()}


def load_catalog(path: Path | None = None) -> dict[str, ViewInfo]:
    """Every view's metadata, from ``views/catalog.json`` (or ``path``)."""
    return _load(path) if path is not None else _default_catalog()


@lru_cache(maxsize=1)
def _default_catalog() -> dict[str, ViewInfo]:
    # A question looks views up ~150 times; the project folder (FHIRQA_HOME) is fixed for a process.
    return _load(data_dir("views") / CATALOG_FILE)


def view_info(view: str) -> ViewInfo:
    """One view's metadata; :class:`UnknownView` (naming the known views) otherwise."""
    catalog = load_catalog()
    try:
        return catalog[view]
    except KeyError:
        raise UnknownView(f"unknown view {view!r}; known views: {', '.join(catalog)}") from None
