"""Windows and calendar arithmetic, exactly as ``docs/questions.md`` defines them."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

UTC = UTC
END_OF_DAY = time(23, 59, 59, 999999)


def add_months(moment: datetime, months: int) -> datetime:
    """Calendar month arithmetic; the day is clamped to the month's length (Mar 31 − 1 month = Feb 28/29)."""
    index = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def day_start(day: date) -> datetime:
    """00:00:00Z of a calendar day."""
    return datetime.combine(day, time(0), UTC)


def day_end(day: date) -> datetime:
    """The last instant of a calendar day in UTC."""
    return datetime.combine(day, END_OF_DAY, UTC)


@dataclass(frozen=True)
class Window:
    """A closed interval of instants ``[start, end]``; ``relative`` when its start moves with ``now``."""

    start: datetime
    end: datetime
    relative: bool = False

    def contains(self, moment: datetime) -> bool:
        """True when ``start <= moment <= end``."""
        return self.start <= moment <= self.end

    def shifted(self, days: int) -> Window:
        """The same window with its start moved by ``days`` (a robustness probe for relative windows)."""
        return Window(self.start + timedelta(days=days), self.end, self.relative)


ALL_TIME = Window(datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC))


def last(now: datetime, amount: int, unit: str) -> Window:
    """"last N days/weeks/months/years" = [now − N units, now] (calendar arithmetic for months/years)."""
    if unit == "days":
        start = now - timedelta(days=amount)
    elif unit == "weeks":
        start = now - timedelta(weeks=amount)
    elif unit == "months":
        start = add_months(now, -amount)
    elif unit == "years":
        start = add_months(now, -12 * amount)
    else:
        raise ValueError(unit)
    return Window(start, now, relative=True)


def in_year(year: int) -> Window:
    """"in 2017" = the calendar year in UTC."""
    return Window(day_start(date(year, 1, 1)), day_end(date(year, 12, 31)))


def since(day: date, now: datetime) -> Window:
    """"since X" = [X 00:00Z, now]."""
    return Window(day_start(day), now)


def between(first: date, second: date) -> Window:
    """"between A and B" = [A 00:00Z, B 23:59:59Z]."""
    return Window(day_start(first), day_end(second))


def completed_years(start: date | datetime, end: date | datetime) -> int:
    """Whole years from ``start`` to ``end`` (birthday arithmetic)."""
    years = end.year - start.year
    if (end.month, end.day) < (start.month, start.day):
        years -= 1
    return years


def completed_months(start: datetime, end: datetime) -> int:
    """Whole calendar months from ``start`` to ``end`` (instants)."""
    months = (end.year - start.year) * 12 + (end.month - start.month)
    if add_months(start, months) > end:
        months -= 1
    return months


def completed_days(start: datetime, end: datetime) -> int:
    """Whole 24-hour days from ``start`` to ``end``."""
    return (end - start) // timedelta(days=1)


def iso_date(moment: datetime | date) -> str:
    """The UTC calendar date of an instant, ISO formatted."""
    if isinstance(moment, datetime):
        moment = moment.astimezone(UTC).date()
    return moment.isoformat()


def iso_instant(moment: datetime) -> str:
    """``2021-03-20T12:00:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
