"""Tools over plain values: compare_values, calculate_difference, calculate_time_offset.

Values come from earlier tool results (already cited there), so these tools cite nothing themselves.
A value is a number, a numeric string ("5.2") or an ISO date/datetime string.
"""

from __future__ import annotations

import operator
from datetime import date
from typing import Any

from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.common import as_time, parse_when
from fhirqa.agent.tools.dates import UNITS, calendar_breakdown, completed_months, describe_breakdown
from fhirqa.agent.tools.localtime import utc_day

COMPARISONS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
               "==": operator.eq, "!=": operator.ne}


def _read(value: Any, name: str) -> tuple[str, Any, bool]:
    """("number", float, False) or ("time", datetime, was-a-bare-date); ToolError for anything else."""
    if isinstance(value, bool):
        raise ToolError(f"{name}: expected a number or an ISO date, got a boolean")
    if isinstance(value, int | float):
        return "number", float(value), False
    if isinstance(value, str):
        try:
            return "number", float(value.strip()), False
        except ValueError:
            pass
        moment, date_only = parse_when(value, name)
        return "time", moment, date_only
    raise ToolError(f"{name}: expected a number or an ISO date string, got {value!r}")


def _pair(a: Any, b: Any) -> tuple[str, Any, Any, bool]:
    kind_a, va, date_a = _read(a, "a")
    kind_b, vb, date_b = _read(b, "b")
    if kind_a != kind_b:
        raise ToolError(f"a is a {kind_a} and b is a {kind_b}; compare numbers with numbers, dates with dates")
    return kind_a, va, vb, date_a or date_b


def _plain(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def compare_values(ctx: ToolContext, a: Any, op: str, b: Any) -> dict[str, Any]:
    """Whether ``a op b`` holds, for two numbers or two ISO dates (a bare date compares by day)."""
    if op not in COMPARISONS:
        raise ToolError(f"unknown op {op!r}; use one of: {' '.join(COMPARISONS)}")
    kind, va, vb, by_day = _pair(a, b)
    if kind == "time" and by_day:
        va, vb = va.date(), vb.date()
    return {"ok": True, "result": bool(COMPARISONS[op](va, vb)), "a": a, "op": op, "b": b,
            "compared_as": "day" if kind == "time" and by_day else kind}


def calculate_difference(ctx: ToolContext, a: Any, b: Any) -> dict[str, Any]:
    """a − b: a number for numbers; for two dates, the difference in days plus a calendar breakdown."""
    kind, va, vb, _ = _pair(a, b)
    if kind == "number":
        return {"ok": True, "difference": _plain(round(va - vb, 10)), "a": a, "b": b}
    seconds = (va - vb).total_seconds()
    days = seconds / 86400
    early, late = sorted((va, vb))
    years, months, rest = calendar_breakdown(utc_day(early), utc_day(late))  # an elapsed time: one clock
    sign = "-" if seconds < 0 else ""
    return {"ok": True, "difference_days": _plain(round(days, 6)), "unit": "days",
            "breakdown": {"years": years, "months": months, "days": rest, "negative": seconds < 0},
            "text": sign + describe_breakdown(years, months, rest), "a": a, "b": b}


def calculate_time_offset(ctx: ToolContext, start: str, end: str | None = None,
                          unit: str = "days") -> dict[str, Any]:
    """Elapsed time from ``start`` to ``end`` (default: now) in days, weeks, or completed months/years."""
    if unit not in UNITS:
        raise ToolError(f"unknown unit {unit!r}; use one of: {', '.join(UNITS)}")
    begin = parse_when(start, "start")[0]
    now = as_time(ctx.now)
    assert now is not None  # ctx.now is a datetime by contract
    finish = parse_when(end, "end")[0] if end is not None else now
    value = _elapsed(utc_day(begin), utc_day(finish), unit)  # both ends on one clock, whatever their offsets
    exact_days = (finish - begin).total_seconds() / 86400
    return {"ok": True, "value": value, "unit": unit, "start": begin.isoformat(), "end": finish.isoformat(),
            "exact_days": round(exact_days, 6), "end_is_now": end is None}


def _elapsed(start: date, end: date, unit: str) -> int:
    """Whole units from ``start`` to ``end`` by the calendar (negative when end is before start).

    Days count calendar days (yesterday → 1), weeks completed weeks, months and years completed
    calendar units (so an age in years is the completed years since birth).
    """
    if end < start:
        return -_elapsed(end, start, unit)
    if unit == "days":
        return (end - start).days
    if unit == "weeks":
        return (end - start).days // 7
    months = completed_months(start, end)
    return months if unit == "months" else months // 12

