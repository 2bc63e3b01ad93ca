"""Rendering results for people (tables) and machines (CSV, JSON)."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table


def console() -> Console:
    """A console on stdout that does not wrap tables in pipes."""
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def render(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", title: str | None = None) -> str:
    """Rows as an aligned table, CSV or JSON (a list of objects)."""
    if fmt == "json":
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        return orjson.dumps(records, default=_json_default, option=orjson.OPT_INDENT_2).decode()
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
        return buffer.getvalue().rstrip("\n")
    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*[_cell(v) for v in row])
    out = Console(record=True, width=200, file=io.StringIO())
    out.print(table)
    return out.export_text().rstrip("\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
