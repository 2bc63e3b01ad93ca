"""Held-out gold, step 2: windows and calendar arithmetic (``docs/questions.md``), and how people write dates.

A window is a closed interval of UTC instants. Relative windows ("past yr") are checked for robustness by
moving their start a few days either way; dated windows by keeping values away from their boundary days.
Date phrases use formats the first question set does not (``Jan '19``, ``01/2019``, ``the 3rd of March
2019``, ``3 Mar 2019``, ``3/15/19``…); every one names an unambiguous US-order date.
"""

from __future__ import annotations

import calendar
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property

MONTHS = [calendar.month_name[i] for i in range(13)]
MON = [calendar.month_abbr[i] for i in range(13)]
MARGIN_DAYS = 7


def add_months(moment: datetime, months: int) -> datetime:
    """Calendar month arithmetic with the day clamped (Mar 31 − 1 month = Feb 28/29)."""
    index = moment.year * 12 + moment.month - 1 + months
    year, month0 = divmod(index, 12)
    return moment.replace(year=year, month=month0 + 1,
                          day=min(moment.day, calendar.monthrange(year, month0 + 1)[1]))


def start_of(day: date) -> datetime:
    """00:00:00Z of a day."""
    return datetime.combine(day, time(0), UTC)


def end_of(day: date) -> datetime:
    """23:59:59.999999Z of a day."""
    return datetime.combine(day, time(23, 59, 59, 999999), UTC)


def month_end(day: date) -> date:
    """The last day of ``day``'s month."""
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


@dataclass(frozen=True)
class Window:
    """``[start, end]``; ``relative`` when the start moves with now; ``edges`` are its boundary days."""

    start: datetime
    end: datetime
    phrase: str = ""
    relative: bool = False
    edges: tuple[date, ...] = ()

    def has(self, moment: datetime) -> bool:
        """True when the instant lies in the window."""
        return self.start <= moment <= self.end

    def moved(self, days: int) -> Window:
        """The window with its start moved by ``days``."""
        return Window(self.start + timedelta(days=days), self.end, self.phrase, self.relative, self.edges)

    def variants(self) -> list[Window]:
        """The window and the ones a reasonable reader might mean instead (for robustness checks)."""
        if self.relative:
            return [self, self.moved(-MARGIN_DAYS), self.moved(MARGIN_DAYS)]
        return [self]

    @cached_property
    def near_edges(self) -> frozenset[date]:
        """The boundary days and the days either side of them."""
        return frozenset(d + timedelta(days=k) for d in self.edges for k in (-1, 0, 1))

    def clear_of(self, times: list[datetime]) -> bool:
        """True when no time falls on, or a day either side of, a boundary day."""
        near = self.near_edges
        return not near or near.isdisjoint(t.date() for t in times)


EVER = Window(datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), "")


def completed_years(start: date, end: date) -> int:
    """Birthday arithmetic."""
    return end.year - start.year - ((end.month, end.day) < (start.month, start.day))


def completed_months(start: datetime, end: datetime) -> int:
    """Whole calendar months between two instants."""
    months = (end.year - start.year) * 12 + end.month - start.month
    return months - (add_months(start, months) > end)


def completed_days(start: datetime, end: datetime) -> int:
    """Whole 24-hour periods between two instants."""
    return (end - start) // timedelta(days=1)


def iso(moment: datetime | date) -> str:
    """UTC calendar date of an instant (or a date), ISO."""
    if isinstance(moment, datetime):
        moment = moment.astimezone(UTC).date()
    return moment.isoformat()


def iso_instant(moment: datetime) -> str:
    """``2021-03-20T12:00:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def say_day(day: date, rng: random.Random) -> tuple[str, str]:
    """A full date in a format of the held-out set, and the format's name."""
    styles = [
        ("ordinal-of", f"the {_ordinal(day.day)} of {MONTHS[day.month]} {day.year}"),
        ("d-mon-y", f"{day.day} {MON[day.month]} {day.year}"),
        ("month-ordinal", f"{MONTHS[day.month]} {_ordinal(day.day)}, {day.year}"),
        ("mon-d-apos", f"{MON[day.month]} {day.day} '{day.year % 100:02d}"),
    ]
    if day.day > 12:  # two-digit years only where month/day order cannot be misread
        styles.append(("m/d/yy", f"{day.month}/{day.day}/{day.year % 100:02d}"))
        styles.append(("mm-dd-yyyy", f"{day.month:02d}-{day.day:02d}-{day.year}"))
    name, text = rng.choice(styles)
    return text, name


def say_month(day: date, rng: random.Random) -> tuple[str, str]:
    """A month in a format of the held-out set (``Jan '19``, ``01/2019``, ``January of 2019``)."""
    styles = [
        ("mon-apos", f"{MON[day.month]} '{day.year % 100:02d}"),
        ("mm/yyyy", f"{day.month:02d}/{day.year}"),
        ("month-of", f"{MONTHS[day.month]} of {day.year}"),
        ("mon-yyyy", f"{MON[day.month]} {day.year}"),
    ]
    name, text = rng.choice(styles)
    return text, name


def say_year(year: int, rng: random.Random) -> tuple[str, str]:
    """A calendar year (``in '19``, ``during 2019``, ``for calendar year 2019``, ``in CY2019``)."""
    styles = [("in-apos", f"in '{year % 100:02d}"), ("during", f"during {year}"),
              ("for-cal", f"for calendar year {year}"), ("cy", f"in CY{year}"), ("in", f"in {year}")]
    name, text = rng.choice(styles)
    return text, name


def last_window(now: datetime, amount: int, unit: str, rng: random.Random) -> Window:
    """"past N units", written tersely or plainly; months and years by calendar arithmetic."""
    if unit == "days":
        start = now - timedelta(days=amount)
        words = [f"last {amount} days", f"past {amount}d", f"in the last {amount} days"]
    elif unit == "weeks":
        start = now - timedelta(weeks=amount)
        words = [f"past {amount} wks", f"over the last {amount} weeks"]
    elif unit == "months":
        start = add_months(now, -amount)
        words = [f"past {amount} mos", f"last {amount} mo", f"over the past {amount} months",
                 f"in the last {amount} months"]
    else:
        start = add_months(now, -12 * amount)
        if amount == 1:
            words = ["past yr", "in the last year", "over the past 12 months", "this past year"]
        else:
            words = [f"past {amount} yrs", f"last {amount} yrs", f"over the past {amount} years",
                     f"in the last {amount} years"]
    return Window(start, now, rng.choice(words), relative=True)


def year_window(year: int, rng: random.Random) -> Window:
    """A calendar year in UTC."""
    text, _ = say_year(year, rng)
    return Window(start_of(date(year, 1, 1)), end_of(date(year, 12, 31)), text,
                  edges=(date(year, 1, 1), date(year, 12, 31)))


def since_window(day: date, now: datetime, rng: random.Random, month_only: bool) -> Window:
    """``since X`` = [X 00:00Z, now]; a month alone means its first day."""
    if month_only:
        day = day.replace(day=1)
        text, _ = say_month(day, rng)
    else:
        text, _ = say_day(day, rng)
    return Window(start_of(day), now, f"since {text}", edges=(day,))


def between_window(first: date, second: date, rng: random.Random, months: bool) -> Window:
    """``between A and B`` = [A 00:00Z, B 23:59:59Z]; with months, A's first day to B's last day.

    Month ranges are only offered when B's whole month is clear of values (checked by the caller through
    ``edges``, which then spans B's month), so "through March" and "until March 1st" agree.
    """
    if months:
        first = first.replace(day=1)
        second = month_end(second)
        a, _ = say_month(first, rng)
        b, _ = say_month(second, rng)
        edges = (first, *[second.replace(day=d) for d in range(1, second.day + 1)])
    else:
        a, _ = say_day(first, rng)
        b, _ = say_day(second, rng)
        edges = (first, second)
    form = rng.choice(["between {a} and {b}", "from {a} to {b}", "from {a} through {b}"])
    return Window(start_of(first), end_of(second), form.format(a=a, b=b), edges=edges)
