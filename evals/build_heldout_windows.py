"""Held-out gold, step 5: windows that hold a patient's data (or, on purpose, none), and robust computation.

``stable(window, fn)`` computes a result over every reading of a window (a relative window's start moved a
week either way); a question is kept only when all readings agree. Dated windows must keep their boundary
days clear of the data (no time zone or inclusivity slip can change the answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import build_heldout_time as tm
from build_heldout_core import Context
from build_heldout_fhir import Value

UNSTABLE = object()
SPANS = ((90, "days"), (12, "weeks"), (6, "months"), (1, "years"), (18, "months"), (2, "years"), (3, "years"),
         (5, "years"))
EVER_WORDS = ("ever", "on record", "on file", "")


def stable(window: tm.Window, fn: Callable[[tm.Window], Any]) -> Any:
    """``fn(window)`` when every reading of the window gives the same result, else ``UNSTABLE``."""
    results = [fn(w) for w in window.variants()]
    return results[0] if all(r == results[0] for r in results) else UNSTABLE


def inside(values: Sequence[Value], window: tm.Window) -> list[Value]:
    """Values whose time lies in the window."""
    return [v for v in values if window.has(v.time)]


def extreme(values: Sequence[Value], latest: bool) -> Value | None:
    """The latest (or first) value; ``None`` when none, or when two different values share the deciding time."""
    if not values:
        return None
    key = max(v.time for v in values) if latest else min(v.time for v in values)
    tied = {v.value for v in values if v.time == key}
    if len(tied) > 1:
        return None
    return next(v for v in values if v.time == key)


def _last(ctx: Context, times: Sequence[datetime]) -> list[tm.Window]:
    return [tm.last_window(ctx.now, n, unit, ctx.rng) for n, unit in SPANS]


def _year(ctx: Context, times: Sequence[datetime]) -> list[tm.Window]:
    return [tm.year_window(y, ctx.rng) for y in sorted({t.year for t in times})]


def _since(ctx: Context, times: Sequence[datetime]) -> list[tm.Window]:
    later = sorted(set(times))[1:]
    out = []
    for t in ctx.rng.sample(later, min(len(later), 5)):
        day = t.date() - timedelta(days=ctx.rng.randint(2, 60))
        out.append(tm.since_window(day, ctx.now, ctx.rng, month_only=ctx.rng.random() < 0.5))
    return out


def _between(ctx: Context, times: Sequence[datetime]) -> list[tm.Window]:
    uniq = sorted(set(times))
    out = []
    for _ in range(5):
        if len(uniq) < 2:
            break
        i = ctx.rng.randrange(len(uniq) - 1)
        j = ctx.rng.randrange(i + 1, len(uniq))
        first = uniq[i].date() - timedelta(days=ctx.rng.randint(1, 40))
        second = uniq[j].date() + timedelta(days=ctx.rng.randint(1, 40))
        months = ctx.rng.random() < 0.4
        if tm.month_end(second) < ctx.now.date():
            out.append(tm.between_window(first, second, ctx.rng, months))
    return out


MAKERS = {"last": _last, "year": _year, "since": _since, "between": _between}


def options(ctx: Context, times: Sequence[datetime], minimum: int = 1,
            kinds: Sequence[str] = ("last", "year", "since", "between")) -> list[tuple[str, tm.Window]]:
    """One window of each kind holding at least ``minimum`` of the times (boundaries clear of them)."""
    out = []
    for kind in kinds:
        good = [w for w in MAKERS[kind](ctx, times)
                if w.clear_of(list(times)) and all(sum(v.has(t) for t in times) >= minimum for v in w.variants())]
        if good:
            out.append((kind, ctx.pick(good)))
    return out


def empty_windows(ctx: Context, times: Sequence[datetime]) -> list[tuple[str, tm.Window, datetime]]:
    """Windows with none of the times: relative ones at the late now, and "since" a date after the last time.

    Returns (kind, window, now to ask at).
    """
    out: list[tuple[str, tm.Window, datetime]] = []
    if not times:
        return out
    for n, unit in ((6, "months"), (1, "years"), (90, "days")):
        w = tm.last_window(ctx.late, n, unit, ctx.rng)
        if not any(v.has(t) for v in w.variants() for t in times):
            out.append(("empty-last", w, ctx.late))
    after = max(times).date() + timedelta(days=ctx.rng.randint(20, 90))
    if after < ctx.now.date() - timedelta(days=2):
        w = tm.since_window(after, ctx.now, ctx.rng, month_only=False)
        if not any(w.has(t) for t in times):
            out.append(("empty-since", w, ctx.now))
    return out


def day_after(moment: datetime) -> date:
    """The UTC day after an instant."""
    return moment.date() + timedelta(days=1)
