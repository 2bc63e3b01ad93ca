"""Tools that compute over a record set: find_extreme, aggregate, count_values. Each cites the rows it used."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

from fhirqa.agent.tools.base import PREVIEW_ROWS, RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import (
    as_time,
    cite,
    field_map,
    full_row,
    info,
    iso,
    new_set,
    row_time,
    row_view,
    sort_key,
    views_of,
)

AGGREGATES = ("mean", "sum", "min", "max", "median", "count", "first", "last")
NUMERIC: dict[str, Callable[[list[Any]], Any]] = {
    "mean": statistics.fmean, "sum": sum, "min": min, "max": max, "median": statistics.median,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _units(rs: RecordSet, rows: list[dict[str, Any]], fields: dict[str, str]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        view = row_view(rs, row)
        unit = info(view).unit_of(fields[view], row)
        if unit is not None:
            seen.setdefault(unit)
    return list(seen)


def _unit_report(out: dict[str, Any], units: list[str]) -> None:
    out["unit"] = units[0] if len(units) == 1 else None
    if len(units) > 1:
        out["units"] = units
        out["warning"] = f"the rows have different units ({', '.join(units)}); values were not converted"


def find_extreme(ctx: ToolContext, records: str, mode: str, field: str | None = None) -> dict[str, Any]:
    """The row with the highest (max) or lowest (min) ``field`` (default: the view's value), cited."""
    if mode not in ("max", "min"):
        raise ToolError(f"unknown mode {mode!r}; use max or min")
    rs = ctx.records(records)
    fields = field_map(rs, field, "value")
    rows = [r for r in rs.rows if r.get(fields[row_view(rs, r)]) is not None]
    comparable = [r for r in rows if _is_number(v := r[fields[row_view(rs, r)]]) or as_time(v) is not None]
    if rows and not comparable:
        raise ToolError(f"{', '.join(sorted(set(fields.values())))} holds text, not numbers or times; "
                        "find_extreme needs a numeric or time field (pass field=)")
    if not comparable:
        return {"ok": True, "count": 0, "value": None, "note": f"{records} has no values to compare"}

    def key(row: dict[str, Any]) -> tuple[int, Any]:
        return sort_key(row[fields[row_view(rs, row)]])

    best_key = (max if mode == "max" else min)(key(r) for r in comparable)
    ties = [r for r in comparable if key(r) == best_key]
    # Among equal values the earliest row is reported (deterministic; the others are counted in ties).
    dated = [(t, r) for r in ties if (t := row_time(row_view(rs, r), r)) is not None]
    row = min(dated, key=lambda p: p[0])[1] if dated else ties[0]
    view = row_view(rs, row)
    citation = cite(ctx, rs, row, fields[view])
    handle, _ = new_set(ctx, rs.view, [row], f"{mode} of {fields[view]} in {records}")
    out = {"ok": True, "handle": handle, "mode": mode, "field": fields[view], "value": citation["value"],
           "unit": citation["unit"], "time": citation["time"], "ref": citation["ref"], "name": citation["name"],
           "n": len(comparable), "row": full_row(rs, row)}
    if len(ties) > 1:
        out["ties"] = len(ties)
    return out


def _reduce(op: str, rs: RecordSet, rows: list[dict[str, Any]], fields: dict[str, str]) -> tuple[Any, int]:
    """(result, number of rows used) of ``op`` over ``rows``."""
    if op == "count":
        return len(rows), len(rows)
    if op in ("first", "last"):
        dated = [(t, r) for r in rows if (t := row_time(row_view(rs, r), r)) is not None]
        if not dated:
            return None, 0
        dated.sort(key=lambda p: p[0])
        _, row = dated[0] if op == "first" else dated[-1]
        return iso(row[fields[row_view(rs, row)]]), 1
    values = [r[fields[row_view(rs, r)]] for r in rows]
    if not values:
        return None, 0
    return NUMERIC[op](values), len(values)


def aggregate(ctx: ToolContext, records: str, op: str, field: str | None = None,
              group_by: str | None = None) -> dict[str, Any]:
    """mean/sum/min/max/median/count/first/last of ``field`` (default: the view's value), overall or per day."""
    if op not in AGGREGATES:
        raise ToolError(f"unknown op {op!r}; use one of: {', '.join(AGGREGATES)}")
    if group_by not in (None, "day"):
        raise ToolError(f"group_by must be 'day' or omitted, not {group_by!r}")
    rs = ctx.records(records)
    if op == "count" and field is None:
        # Counting rows needs no value column (encounters, conditions… have none).
        fields = {v: info(v).name_field for v in views_of(rs)}
        rows = list(rs.rows)
    else:
        fields = field_map(rs, field, "value")
        rows = [r for r in rs.rows if r.get(fields[row_view(rs, r)]) is not None]
    skipped = 0
    if op in NUMERIC:
        numeric = [r for r in rows if _is_number(r[fields[row_view(rs, r)]])]
        skipped = len(rows) - len(numeric)
        if rows and not numeric:
            raise ToolError(f"{op} needs numbers but {', '.join(sorted(set(fields.values())))} holds text; "
                            "use count, first or last, or pass a numeric field=")
        rows = numeric
    for row in rows:
        cite(ctx, rs, row, fields[row_view(rs, row)])
    out: dict[str, Any] = {"ok": True, "op": op, "field": ", ".join(sorted(set(fields.values())))}
    if group_by == "day":
        out.update(_by_day(op, rs, rows, fields))
    else:
        out["value"], out["n"] = _reduce(op, rs, rows, fields)
    if op != "count":
        _unit_report(out, _units(rs, rows, fields))
    if skipped:
        out["skipped_non_numeric"] = skipped
    if not rows:
        out["note"] = f"{records} has no values for this field"
    return out


def _by_day(op: str, rs: RecordSet, rows: list[dict[str, Any]], fields: dict[str, str]) -> dict[str, Any]:
    """Per-calendar-day results (the record's local day), e.g. daily dose totals with op=sum; the highest and lowest day."""
    days: dict[str, list[dict[str, Any]]] = {}
    undated = 0
    for row in rows:
        moment = row_time(row_view(rs, row), row)
        if moment is None:
            undated += 1
            continue
        days.setdefault(moment.date().isoformat(), []).append(row)
    groups = []
    for day in sorted(days):
        value, n = _reduce(op, rs, days[day], fields)
        groups.append({"day": day, "value": value, "n": n})
    out: dict[str, Any] = {"groups": groups[:PREVIEW_ROWS], "omitted": max(0, len(groups) - PREVIEW_ROWS),
                           "n": sum(g["n"] for g in groups), "days": len(groups)}
    numeric = [g for g in groups if _is_number(g["value"])]
    if numeric:
        out["highest_day"] = max(numeric, key=lambda g: g["value"])
        out["lowest_day"] = min(numeric, key=lambda g: g["value"])
    if undated:
        out["undated"] = undated
    return out


def count_values(ctx: ToolContext, records: str, field: str | None = None, distinct: bool = False) -> dict[str, Any]:
    """How many rows (or rows with ``field`` set); with ``distinct``, how many different values (default: items)."""
    rs = ctx.records(records)
    if field is None:
        fields = {v: info(v).name_field for v in views_of(rs)}
        rows = list(rs.rows)
    else:
        fields = field_map(rs, field, "value")
        rows = [r for r in rs.rows if r.get(fields[row_view(rs, r)]) is not None]
    for row in rows:
        cite(ctx, rs, row, fields[row_view(rs, row)])
    out: dict[str, Any] = {"ok": True, "field": field, "rows": len(rows)}
    if not distinct:
        out["count"] = len(rows)
        return out
    tally = Counter(r[fields[row_view(rs, r)]] for r in rows if r.get(fields[row_view(rs, r)]) is not None)
    ranked = sorted(tally.items(), key=lambda kv: (-kv[1], str(kv[0])))
    out["count"] = len(tally)
    out["values"] = [{"value": iso(v), "rows": n} for v, n in ranked[:PREVIEW_ROWS]]
    out["omitted"] = max(0, len(ranked) - PREVIEW_ROWS)
    if field is None:
        out["field"] = ", ".join(sorted(set(fields.values())))
    return out

