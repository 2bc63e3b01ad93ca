"""Calendar arithmetic the tools share: shifting by months and years, completed calendar units."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta

from fhirqa.agent.tools.base import ToolError

UNITS = ("days", "weeks", "months", "years")


def shift_months(moment: datetime, months: int) -> datetime:
    """``moment`` moved by whole calendar months, the day clamped to the month's end (Mar 31 − 1 mo → Feb 29)."""
    index = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def shift(moment: datetime, amount: float, unit: str) -> datetime:
    """``moment`` moved by ``amount`` ``unit`` (negative goes back); months and years are calendar units."""
    if unit == "days":
        return moment + timedelta(days=amount)
    if unit == "weeks":
        return moment + timedelta(weeks=amount)
    if unit in ("months", "years"):
        if amount != int(amount):
            raise ToolError(f"{unit} must be a whole number, got {amount}; use days or weeks for fractions")
        return shift_months(moment, int(amount) * (12 if unit == "years" else 1))
    raise ToolError(f"unknown unit {unit!r}; use one of: {', '.join(UNITS)}")


def completed_months(start: date, end: date) -> int:
    """Whole calendar months from ``start`` to ``end`` (end ≥ start); a month completes on the same day-of-month."""
    months = (end.year - start.year) * 12 + (end.month - start.month)
    # Completed when end's day reaches start's day, or end is the last day of its month (Jan 31 → Feb 29).
    last_day = calendar.monthrange(end.year, end.month)[1]
    if end.day < start.day and end.day != last_day:
        months -= 1
    return months


def calendar_breakdown(start: date, end: date) -> tuple[int, int, int]:
    """(years, months, days) from ``start`` to ``end`` (end ≥ start), counting whole calendar units first."""
    months = completed_months(start, end)
    anchor = shift_months(datetime(start.year, start.month, start.day), months).date()
    return months // 12, months % 12, (end - anchor).days


def describe_breakdown(years: int, months: int, days: int) -> str:
    """"1 year, 2 months, 3 days" (zero parts left out; "0 days" when all are zero)."""
    parts = [f"{n} {name}{'' if n == 1 else 's'}"
             for n, name in ((years, "year"), (months, "month"), (days, "day")) if n]
    return ", ".join(parts) or "0 days"
