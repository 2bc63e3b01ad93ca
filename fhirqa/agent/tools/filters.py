"""Tools that narrow a record set: filter_by_date and filter_by_value."""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import datetime
from typing import Any

from fhirqa.agent.tools.base import RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import (
    as_time,
    check_field,
    cite,
    end_of,
    field_map,
    info,
    new_set,
    parse_when,
    project,
    row_view,
    shown_fields,
    summary,
    views_of,
)
from fhirqa.agent.tools.dates import UNITS, shift
from fhirqa.agent.tools.localtime import at_or_after, at_or_before, within
from fhirqa.agent.tools.localtime import iso as iso_time

ORDERING = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
OPS = (*ORDERING, "==", "!=", "contains", "exists")


def filter_by_date(ctx: ToolContext, records: str, start: str | None = None, end: str | None = None,
                   last_amount: float | None = None, last_unit: str | None = None,
                   field: str | None = None, include_missing: bool = False) -> dict[str, Any]:
    """Rows whose time lies in an inclusive window: ``start``/``end``, or the last N units before now.

    A bound with an offset is an instant; a bare date or a datetime without offset is read on each row's own
    clock (``end='2025-06-12'`` keeps everything up to the end of the record's local June 12).
    ``include_missing`` also keeps rows without a time in ``field`` (no end_time = still ongoing).
    """
    rs = ctx.records(records)
    fields = field_map(rs, field, "time")
    low, high = _window(ctx, start, end, last_amount, last_unit)
    kept: list[dict[str, Any]] = []
    dated: list[tuple[datetime, dict[str, Any]]] = []
    for row in rs.rows:
        moment = as_time(row.get(fields[row_view(rs, row)]))
        if moment is None:
            if include_missing:
                kept.append(row)
            continue
        dated.append((moment, row))
        if within(moment, low, high):
            kept.append(row)
    window = {"start": iso_time(low), "end": iso_time(high)}
    handle, new = new_set(ctx, rs.view, kept, f"{records} with {field or 'time'} in [{window['start']}, "
                                               f"{window['end']}]")
    out = summary(handle, new)
    out["window"] = window
    if len(dated) < len(rs.rows):
        out["kept_undated" if include_missing else "undated"] = len(rs.rows) - len(dated)
    if not kept:
        out.update(_around(ctx, rs, dated, low, high))
    return out


def _window(ctx: ToolContext, start: str | None, end: str | None, last_amount: float | None,
            last_unit: str | None) -> tuple[datetime | None, datetime | None]:
    relative = last_amount is not None or last_unit is not None
    if relative:
        if start is not None or end is not None:
            raise ToolError("give either start/end or last_amount/last_unit, not both")
        if last_amount is None or last_unit is None:
            raise ToolError(f"last_amount and last_unit go together (e.g. last_amount=6, last_unit='months'); "
                            f"units: {', '.join(UNITS)}")
        if last_amount <= 0:
            raise ToolError(f"last_amount must be positive, got {last_amount}")
        now = as_time(ctx.now)
        assert now is not None  # ctx.now is a datetime by contract
        return shift(now, -last_amount, last_unit), now
    if start is None and end is None:
        raise ToolError("give start and/or end (ISO dates), or last_amount with last_unit")
    low = parse_when(start, "start")[0] if start is not None else None
    high = end_of(*parse_when(end, "end")) if end is not None else None
    if low is not None and high is not None and low > high:  # floating bounds compare as the same clock here
        raise ToolError(f"start {start} is after end {end}")
    return low, high


def _around(ctx: ToolContext, rs: RecordSet, dated: list[tuple[datetime, dict[str, Any]]],
            low: datetime | None, high: datetime | None) -> dict[str, Any]:
    """For an empty window: the input's time range and the nearest rows either side (cited)."""
    if not dated:
        return {"input_time_range": None, "note": "the input set has no dated rows"}
    times = [t for t, _ in dated]
    out: dict[str, Any] = {"input_time_range": {"earliest": min(times).isoformat(),
                                                "latest": max(times).isoformat()}}
    before = [(t, r) for t, r in dated if low is not None and not at_or_after(t, low)]
    after = [(t, r) for t, r in dated if high is not None and not at_or_before(t, high)]
    fields = shown_fields(rs, None)
    if before:
        row = max(before, key=lambda p: p[0])[1]
        cite(ctx, rs, row)
        out["nearest_before"] = project(rs, row, fields)
    if after:
        row = min(after, key=lambda p: p[0])[1]
        cite(ctx, rs, row)
        out["nearest_after"] = project(rs, row, fields)
    out["note"] = "no rows in this window; see nearest_before / nearest_after and input_time_range"
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _predicate(op: str, value: Any) -> Callable[[Any], bool | None]:
    """A test of one row value; it returns None when the row value cannot be compared with ``value``."""
    if op == "contains":
        if not isinstance(value, str):
            raise ToolError("contains needs a string value")
        needle = value.lower()
        return lambda v: needle in str(v).lower()
    number = _number(value)
    if number is None and op in ORDERING and isinstance(value, str):
        try:  # "7.5" sent as text still means the number for an ordering comparison
            number = float(value)
        except ValueError:
            pass
    if number is not None:
        compare = ORDERING.get(op) or (operator.eq if op == "==" else operator.ne)
        target = number

        def numeric(v: Any) -> bool | None:
            cell = _number(v)
            return None if cell is None else bool(compare(cell, target))

        return numeric
    if isinstance(value, bool):
        if op not in ("==", "!="):
            raise ToolError(f"{op} cannot order booleans; use == or !=")
        return lambda v: (v == value) == (op == "==") if isinstance(v, bool) else None
    if isinstance(value, str) and as_time(value) is not None:
        return _time_predicate(op, value)
    if op in ORDERING:
        raise ToolError(f"{op} needs a number or an ISO date; for text use == , != or contains")
    text = str(value).strip().lower()
    return lambda v: (str(v).strip().lower() == text) == (op == "==") if isinstance(v, str) else None


def _time_predicate(op: str, value: str) -> Callable[[Any], bool | None]:
    # A bare date stands for its whole (local) day: "== 2024-03-01" is any time that day, "> 2024-03-01" after it.
    moment, date_only = parse_when(value, "value")
    last = end_of(moment, date_only)
    tests: dict[str, Callable[[datetime], bool]] = {
        ">": lambda t: not at_or_before(t, last), ">=": lambda t: at_or_after(t, moment),
        "<": lambda t: not at_or_after(t, moment), "<=": lambda t: at_or_before(t, last),
        "==": lambda t: within(t, moment, last), "!=": lambda t: not within(t, moment, last),
    }
    test = tests[op]

    def check(v: Any) -> bool | None:
        t = as_time(v)
        return None if t is None else test(t)

    return check


def filter_by_value(ctx: ToolContext, records: str, op: str, value: Any = None,
                    field: str | None = None) -> dict[str, Any]:
    """Rows whose ``field`` (default: the view's value) satisfies ``op value``; ``exists`` keeps rows that have it."""
    rs = ctx.records(records)
    if op not in OPS:
        raise ToolError(f"unknown op {op!r}; use one of: {' '.join(OPS)}")
    if value is None and op != "exists":
        raise ToolError(f"op {op!r} needs a value (only 'exists' takes none)")
    if op == "contains" and field is None:
        # Substring search reads the text value (observation value_string, note text), else the item name.
        fields = {v: info(v).text_value_field or info(v).name_field for v in views_of(rs)}
    elif field is not None:
        fields = {v: check_field(rs, field) for v in views_of(rs)}
    else:
        fields = field_map(rs, None, "value")
    test = (lambda cell: True) if op == "exists" else _predicate(op, value)
    kept: list[dict[str, Any]] = []
    missing = mismatched = 0
    for row in rs.rows:
        cell = row.get(fields[row_view(rs, row)])
        if cell is None:
            missing += 1
            continue
        verdict = test(cell)
        if verdict is None:
            mismatched += 1
        elif verdict:
            kept.append(row)
    if mismatched and mismatched + missing == len(rs.rows):
        kinds = sorted({type(row.get(f)).__name__ for row in rs.rows for f in fields.values()} - {"NoneType"})
        raise ToolError(f"{', '.join(sorted(set(fields.values())))} holds {'/'.join(kinds)} values that cannot "
                        f"be compared with {value!r}; pass a value of that kind or another field")
    name = ", ".join(sorted(set(fields.values())))
    handle, new = new_set(ctx, rs.view, kept, f"{records} where {name} {op} {value!r}")
    out = summary(handle, new)
    if missing:
        out["missing_value"] = missing
    if mismatched:
        out["not_comparable"] = mismatched
    return out
