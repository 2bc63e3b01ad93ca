"""A deliberately plain ViewDefinition evaluator on fhirpathpy: the baseline fhirqa's runner is measured against.

Supports what the canonical maps use (column, select, forEach, forEachOrNull, unionAll, where);
every path is evaluated by fhirpathpy afresh for every resource, as a straightforward implementation would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fhirpathpy import evaluate


def load_views(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Canonical maps by resource type."""
    views: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        view = json.loads(path.read_text())
        views.setdefault(view["resource"], []).append(view)
    return views


def _select(select: dict[str, Any], node: Any) -> list[dict[str, Any]]:
    nodes = [node]
    if "forEach" in select or "forEachOrNull" in select:
        nodes = evaluate(node, select.get("forEach") or select.get("forEachOrNull"))
        if not nodes and "forEachOrNull" in select:
            nodes = [None]
    out: list[dict[str, Any]] = []
    for item in nodes:
        row_sets: list[list[dict[str, Any]]] = []
        columns = {}
        for column in select.get("column", []):
            values = evaluate(item, column["path"]) if item is not None else []
            columns[column["name"]] = values if column.get("collection") else (values[0] if values else None)
        row_sets.append([columns])
        for sub in select.get("select", []):
            row_sets.append(_select(sub, item) if item is not None else [{}])
        if "unionAll" in select:
            union: list[dict[str, Any]] = []
            for branch in select["unionAll"]:
                union.extend(_select(branch, item) if item is not None else [])
            row_sets.append(union)
        rows: list[dict[str, Any]] = [{}]
        for row_set in row_sets:
            rows = [{**a, **b} for a in rows for b in row_set]
        out.extend(rows)
    return out


def run_naive(view: dict[str, Any], resource: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of ``view`` for one resource."""
    for where in view.get("where", []):
        if evaluate(resource, where["path"]) != [True]:
            return []
    return _select({"select": view.get("select", [])}, resource)
