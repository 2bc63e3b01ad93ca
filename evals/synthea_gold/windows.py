"""Choosing windows that hold data (or, on purpose, none) for a patient's values or events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from . import phrasing as ph
from .candidate import Context

LAST_SPANS = ((90, "days"), (180, "days"), (3, "months"), (6, "months"), (12, "months"), (18, "months"),
              (1, "years"), (2, "years"), (3, "years"), (5, "years"), (10, "years"), (52, "weeks"))


def _count(times: Sequence[datetime], wp: ph.WindowPhrase) -> int:
    return sum(1 for t in times if wp.window.contains(t))


def last_options(ctx: Context, times: Sequence[datetime], minimum: int = 1) -> list[ph.WindowPhrase]:
    """"last N units" windows (relative to ctx.now) holding at least ``minimum`` of the times."""
    out = []
    for amount, unit in LAST_SPANS:
        wp = ph.last_window(ctx.now, amount, unit, ctx.rng)
        if _count(times, wp) >= minimum:
            out.append(wp)
    return out


def year_options(ctx: Context, times: Sequence[datetime], minimum: int = 1) -> list[ph.WindowPhrase]:
    """Calendar years holding at least ``minimum`` of the times."""
    years = sorted({t.year for t in times})
    out = [ph.year_window(y, ctx.rng) for y in years]
    return [wp for wp in out if _count(times, wp) >= minimum]


def since_options(ctx: Context, times: Sequence[datetime], minimum: int = 1) -> list[ph.WindowPhrase]:
    """"since X" windows starting at the first of a month, or on a plain date, before some of the times."""
    out = []
    later = sorted(set(times))[1:]
    for t in ctx.rng.sample(later, min(len(later), 6)):
        if ctx.rng.random() < 0.5:
            day = date(t.year, t.month, 1)
        else:
            day = t.date() - timedelta(days=ctx.rng.randint(2, 60))
        wp = ph.since_window(day, ctx.now, ctx.rng)
        if _count(times, wp) >= minimum and not _on_boundary(times, [day]):
            out.append(wp)
    return out


def between_options(ctx: Context, times: Sequence[datetime], minimum: int = 1) -> list[ph.WindowPhrase]:
    """"between A and B" windows around pairs of the times."""
    uniq = sorted(set(times))
    out = []
    for _ in range(4):
        if len(uniq) < 2:
            break
        i = ctx.rng.randrange(len(uniq) - 1)
        j = ctx.rng.randrange(i + 1, len(uniq))
        first = uniq[i].date() - timedelta(days=ctx.rng.randint(1, 45))
        second = uniq[j].date() + timedelta(days=ctx.rng.randint(1, 45))
        if second >= ctx.now.date():
            continue
        if ctx.rng.random() < 0.4:  # round to month edges sometimes ("2016-01-01 and 2017-06-30")
            first = date(first.year, first.month, 1)
            nxt = date(second.year + (second.month == 12), second.month % 12 + 1, 1)
            second = nxt - timedelta(days=1)
            if second >= ctx.now.date():
                continue
        wp = ph.between_window(first, second, ctx.rng)
        if _count(times, wp) >= minimum and not _on_boundary(times, [first, second]):
            out.append(wp)
    return out


def _on_boundary(times: Sequence[datetime], days: Sequence[date]) -> bool:
    """True when a time falls on a day adjacent to a boundary date (time-zone or inclusivity slips)."""
    edges = set()
    for d in days:
        edges.update({d - timedelta(days=1), d, d + timedelta(days=1)})
    return any(t.date() in edges for t in times)


def any_window(ctx: Context, times: Sequence[datetime], minimum: int = 1, with_all_time: bool = False,
               kinds: Sequence[str] = ("last", "year", "since", "between")) -> list[ph.WindowPhrase | None]:
    """One window option of each kind that exists (``None`` stands for "ever"/all time)."""
    makers = {"last": last_options, "year": year_options, "since": since_options, "between": between_options}
    out: list[ph.WindowPhrase | None] = [None] if with_all_time else []
    for kind in kinds:
        options = makers[kind](ctx, times, minimum)
        if options:
            out.append(ctx.rng.choice(options))
    return out
