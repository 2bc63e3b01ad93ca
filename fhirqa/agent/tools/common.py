"""Helpers every tool module shares: catalog lookups, field checks, time parsing, previews, citations.

A record set normally holds rows of one view. ``combine_evidence`` may join sets of different views;
its rows then carry the view they came from under :data:`VIEW_KEY`, and every helper here asks
:func:`row_view` rather than assuming ``RecordSet.view``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.catalog import UnknownView, ViewInfo, load_catalog, view_info
from fhirqa.agent.tools.base import PREVIEW_ROWS, RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.localtime import FLOATING, day_start
from fhirqa.agent.tools.localtime import iso as iso_time

VIEW_KEY = "_view"  # set on rows of a set that mixes views
MIXED = "mixed"  # RecordSet.view of such a set


def info(view: str) -> ViewInfo:
    """The catalog entry of ``view``, as a ToolError naming the known views when there is none."""
    try:
        return view_info(view)
    except UnknownView as exc:
        raise ToolError(str(exc)) from None


def row_view(rs: RecordSet, row: dict[str, Any]) -> str:
    """The view a row belongs to (rows of mixed sets say so themselves)."""
    return str(row.get(VIEW_KEY) or rs.view)


def views_of(rs: RecordSet) -> list[str]:
    """The views a record set draws from (one, unless it was combined)."""
    if rs.view != MIXED:
        return [rs.view]
    return sorted({row_view(rs, row) for row in rs.rows})


def columns_of(rs: RecordSet) -> list[str]:
    """Fields a caller may name for this set: the catalog's columns of its views."""
    seen: dict[str, None] = {}
    for view in views_of(rs):
        seen.update(dict.fromkeys(info(view).columns))
    return list(seen)


def check_field(rs: RecordSet, field: str) -> str:
    """``field`` if the set's view has it, else a ToolError listing the valid fields."""
    valid = columns_of(rs)
    if field not in valid:
        raise ToolError(f"unknown field {field!r} for view {rs.view}; valid fields: {', '.join(valid)}")
    return field


_ROLES = {"time": "time_field", "value": "value_field", "name": "name_field", "text": "text_value_field"}


def field_map(rs: RecordSet, field: str | None, role: str) -> dict[str, str]:
    """view → field to read: ``field`` when given (checked), else each view's default for ``role``."""
    if field is not None:
        check_field(rs, field)
        return {view: field for view in views_of(rs)}
    chosen: dict[str, str] = {}
    for view in views_of(rs):
        default = getattr(info(view), _ROLES[role])
        if default is None:
            raise ToolError(f"view {view} has no default {role} field; pass field= one of: "
                            f"{', '.join(info(view).columns)}")
        chosen[view] = default
    return chosen


def label(view: str, row: dict[str, Any]) -> str | None:
    """The row's item name (observation name, medication name, encounter type…)."""
    value = row.get(info(view).name_field)
    return None if value is None else str(value)


def row_time(view: str, row: dict[str, Any]) -> datetime | None:
    """The row's time by the view's time field, as an aware datetime in the offset it was written in."""
    field = info(view).time_field
    return as_time(row.get(field)) if field else None


def as_time(value: Any) -> datetime | None:
    """A row value as an aware datetime (dates → midnight UTC); None when it is not a time.

    An aware time keeps the offset it carries (a row's time reads on the record's own clock, see
    ``localtime``); a naive one is UTC.
    """
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if isinstance(value, str) and _ISO_START.match(value):
        try:
            return parse_when(value, "value")[0]
        except ToolError:
            return None
    return None


_ISO_START = re.compile(r"^\d{4}-\d{2}-\d{2}")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_when(text: Any, name: str) -> tuple[datetime, bool]:
    """A caller's ISO date or datetime as (aware datetime, was-a-bare-date); ToolError otherwise.

    With an offset it is an instant (kept in that offset). A bare date, or a datetime written without an
    offset, is a floating time: read on each record's own clock (``2025-06-12`` is the record's local June 12).
    """
    if not isinstance(text, str):
        raise ToolError(f"{name}: expected an ISO date or datetime string, got {text!r}")
    raw = text.strip()
    try:
        if _DATE_ONLY.match(raw):
            return day_start(date.fromisoformat(raw)), True
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ToolError(f"{name}: cannot read {text!r} as an ISO date (2024-03-01) or datetime "
                        "(2024-03-01T08:00:00Z)") from None
    return (parsed.replace(tzinfo=FLOATING) if parsed.tzinfo is None else parsed), False


def end_of(moment: datetime, date_only: bool) -> datetime:
    """The last instant a bound covers: a bare date covers its whole day."""
    return moment + timedelta(days=1) - timedelta(microseconds=1) if date_only else moment


def iso(value: Any) -> Any:
    """A row value made JSON-native (times as ISO strings, NaN as None; floating times without offset)."""
    if isinstance(value, datetime):
        return iso_time(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def sort_key(value: Any) -> tuple[int, Any]:
    """Orders values of mixed kinds deterministically; None is handled by the caller (always last)."""
    moment = as_time(value) if isinstance(value, datetime | date) else None
    if moment is not None:
        return (1, moment)
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, int | float):
        return (0, value)
    return (2, str(value).lower())


def sorted_rows(rs: RecordSet, fields: dict[str, str], descending: bool = False) -> list[dict[str, Any]]:
    """Rows ordered by their field (per view), rows without a value last whatever the direction."""
    present = [r for r in rs.rows if r.get(fields[row_view(rs, r)]) is not None]
    missing = [r for r in rs.rows if r.get(fields[row_view(rs, r)]) is None]
    present.sort(key=lambda r: sort_key(r[fields[row_view(rs, r)]]), reverse=descending)
    return present + missing


def shown_fields(rs: RecordSet, fields: list[str] | None) -> list[str]:
    """Fields of a preview: ``fields`` (checked, ``ref`` first) or the views' catalog defaults."""
    if fields:
        chosen = [check_field(rs, f) for f in fields]
    else:
        chosen = []
        for view in views_of(rs):
            chosen.extend(f for f in info(view).default_fields if f not in chosen)
    return ["ref", *[f for f in chosen if f != "ref"]]


def project(rs: RecordSet, row: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """One row as a JSON-able dict of ``fields`` (and its view when the set mixes views)."""
    out = {f: iso(row.get(f)) for f in fields if f in info(row_view(rs, row)).columns or f == "ref"}
    if rs.view == MIXED:
        out["view"] = row_view(rs, row)
    return out


def full_row(rs: RecordSet, row: dict[str, Any]) -> dict[str, Any]:
    """Every catalogued column of one row, JSON-able: what a tool shows when it picks a single row."""
    return project(rs, row, ["ref", *info(row_view(rs, row)).columns])


def preview(rs: RecordSet, rows: list[dict[str, Any]], fields: list[str]) -> dict[str, Any]:
    """At most PREVIEW_ROWS projected rows and how many were left out."""
    return {"preview": [project(rs, r, fields) for r in rows[:PREVIEW_ROWS]],
            "omitted": max(0, len(rows) - PREVIEW_ROWS)}


def time_range(rs: RecordSet, rows: Iterable[dict[str, Any]] | None = None) -> dict[str, str] | None:
    """Earliest and latest time of the rows (by each view's time field), None when none is dated."""
    times = [t for r in (rs.rows if rows is None else rows) if (t := row_time(row_view(rs, r), r)) is not None]
    if not times:
        return None
    return {"earliest": min(times).isoformat(), "latest": max(times).isoformat()}


def new_set(ctx: ToolContext, view: str, rows: list[dict[str, Any]], description: str,
            items: list[str] | None = None) -> tuple[str, RecordSet]:
    """Register a new record set; its items are the distinct names of its rows unless given."""
    rs = RecordSet(view=view, rows=rows, description=description)
    rs.items = items if items is not None else distinct_names(rs)
    return ctx.add(rs), rs


def distinct_names(rs: RecordSet) -> list[str]:
    """Distinct item names of the set's rows, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rs.rows:
        name = label(row_view(rs, row), row)
        if name is not None:
            seen.setdefault(name)
    return list(seen)


def summary(handle: str, rs: RecordSet, rows: list[dict[str, Any]] | None = None,
            fields: list[str] | None = None) -> dict[str, Any]:
    """The standard answer about a record set: handle, count, items, time range, bounded preview."""
    rows = rs.rows if rows is None else rows
    out: dict[str, Any] = {"ok": True, "handle": handle, "view": rs.view, "count": len(rs.rows),
                           "items": rs.items[:PREVIEW_ROWS]}
    if len(rs.items) > PREVIEW_ROWS:
        out["items_omitted"] = len(rs.items) - PREVIEW_ROWS
    out["time_range"] = time_range(rs)
    out.update(preview(rs, rows, shown_fields(rs, fields)))
    return out


def cite(ctx: ToolContext, rs: RecordSet, row: dict[str, Any], field: str | None = None) -> dict[str, Any]:
    """Cite one row's ``field`` (default: its value, else its text value, else its name) as evidence.

    Returns the citation as a JSON-able dict so results can show what they rest on.
    """
    view = row_view(rs, row)
    meta = info(view)
    if field is None:
        for candidate in (meta.value_field, meta.text_value_field, meta.name_field):
            if candidate and row.get(candidate) is not None:
                field = candidate
                break
        field = field or meta.name_field
    moment = row_time(view, row)
    evidence = Evidence(ref=str(row.get("ref")), field=f"{view}.{field}", value=iso(row.get(field)),
                        time=moment.isoformat() if moment else None, label=label(view, row),
                        unit=meta.unit_of(field, row))
    ctx.cite(evidence)
    return {"ref": evidence.ref, "field": field, "value": evidence.value, "time": evidence.time,
            "name": evidence.label, "unit": evidence.unit}


def known_views() -> list[str]:
    """Names of every catalogued view."""
    return list(load_catalog())
