"""Candidates about measured values: latest/first, windows, min/max, mean, counts, change, trend, thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from statistics import fmean
from typing import Any

from . import phrasing as ph
from . import timeutil as tu
from .candidate import Candidate, Context, in_window, stable
from .record import Measurement
from .vocab import CONCEPTS, CORE_ITEMS, DRUG_EFFECTS, ITEMS, TREND_ITEMS, Item
from .windows import any_window, last_options

NUM_TOL = 0.01
# How often clinicians ask about an item, roughly: weights for the random choice of items.
SALIENCE = {"a1c": 6.0, "potassium": 4.0, "creatinine": 3.0, "ldl": 3.0, "sbp": 3.0, "glucose": 3.0,
            "sodium": 2.0, "hemoglobin": 2.0, "egfr": 2.0, "cholesterol": 2.0, "weight": 2.0, "bmi": 2.0,
            "dbp": 2.0, "triglycerides": 1.5, "hdl": 1.5, "wbc": 1.5, "platelets": 1.5}


def extreme(values: Sequence[Measurement], latest: bool) -> tuple[str, Measurement | None]:
    """("ok", value) for the latest/first value; ("empty", None); ("tie", None) when two differ at that time."""
    if not values:
        return "empty", None
    moment = values[-1].time if latest else values[0].time
    tied = [m for m in values if m.time == moment]
    if len({round(m.value, 9) for m in tied}) > 1:
        return "tie", None
    return "ok", tied[0]


def _summary(values: Sequence[Measurement], latest: bool) -> tuple[str, float | None]:
    status, m = extreme(values, latest)
    return status, (m.value if m else None)


def _res(item: Item) -> str:
    return "result" if item.lab else "reading"


def _win_text(wp: ph.WindowPhrase | None, all_time: Sequence[str]) -> str:
    text = wp.text if wp else "" if not all_time else all_time[0]
    return f" {text}" if text else ""


def _window(wp: ph.WindowPhrase | None) -> tu.Window:
    return wp.window if wp else tu.ALL_TIME


def _cand(ctx: Context, category: str, template: str, question: str, expected: list[Any], refs: list[str],
          answer_type: str = "number", tolerance: float = NUM_TOL, status: str = "answered",
          now: datetime | None = None) -> Candidate:
    return Candidate(ctx.record.id, question, now or ctx.now, category, answer_type, expected, status, tolerance,
                     refs, template)


def _variant(ctx: Context, templates: Sequence[str]) -> tuple[int, str]:
    index = ctx.rng.randrange(len(templates))
    return index, templates[index]


def _items(ctx: Context, keys: Sequence[str], count: int, minimum: int = 1) -> list[Item]:
    """Up to ``count`` of the patient's items, drawn at random with clinically common ones more likely."""
    items = ctx.present_items(keys, minimum)
    keyed = sorted(items, key=lambda i: ctx.rng.random() ** (1.0 / SALIENCE.get(i.key, 1.0)), reverse=True)
    return keyed[:count]


LATEST = ("What was {poss} last {item}?", "Most recent {item}?", "What's {poss} latest {item}?",
          "Can you pull up {poss} most recent {item} {res}?", "Latest {item} for {obj}?",
          "What was the last {item} {res} on file for {obj}?")
FIRST = ("What was {poss} first recorded {item}?", "First {item} on record?",
         "What was the earliest {item} on file for {obj}?", "What was {poss} initial {item} {res}?",
         "What was {poss} {item} the first time it was measured?")


def gen_latest_first(ctx: Context) -> list[Candidate]:
    """latest_value and first_value over the whole record."""
    out = []
    for category, templates, latest in (("latest_value", LATEST, True), ("first_value", FIRST, False)):
        for item in _items(ctx, CORE_ITEMS, 3):
            status, m = extreme(ctx.values(item), latest)
            if status != "ok" or m is None:
                continue
            i, t = _variant(ctx, templates)
            q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), res=_res(item))
            out.append(_cand(ctx, category, f"{category}/{i}", q, [m.value], [m.ref]))
    return out


WIN_LATEST = ("What was {poss} most recent {item}{win}?", "Last {item}{win}?", "What was the latest {item}{win}?",
              "Most recent {item} {res}{win}?")
WIN_FIRST = ("What was {poss} first {item}{win}?", "Earliest {item}{win}?", "What was the first {item} {res}{win}?",
             "First {item} value{win}?")


def gen_value_in_window(ctx: Context) -> list[Candidate]:
    """value_in_window: latest/first within a window; a few empty windows (later now) answer no-data."""
    out = []
    for item in _items(ctx, CORE_ITEMS, 3):
        values = ctx.values(item)
        for wp in any_window(ctx, [m.time for m in values]):
            if wp is None:
                continue
            latest = ctx.rng.random() < 0.6
            ok, (status, _) = stable(wp.window, lambda w, latest=latest, values=values: _summary(in_window(values, w), latest))
            _, m = extreme(in_window(values, wp.window), latest)
            if not ok or status != "ok" or m is None:
                continue
            i, t = _variant(ctx, WIN_LATEST if latest else WIN_FIRST)
            q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), res=_res(item), win=f" {wp.text}")
            out.append(_cand(ctx, "value_in_window", f"value_in_window/{'latest' if latest else 'first'}-{wp.kind}/{i}",
                             q, [m.value], [m.ref]))
    # empty windows: asked years after the record ends
    for item in _items(ctx, CORE_ITEMS, 1):
        amount, unit = ctx.pick(((6, "months"), (12, "months"), (1, "years"), (90, "days")))
        wp = ph.last_window(ctx.late_now, amount, unit, ctx.rng)
        values = ctx.values(item)
        if in_window(values, wp.window) or not values:
            continue
        i, t = _variant(ctx, WIN_LATEST)
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), res=_res(item), win=f" {wp.text}")
        out.append(_cand(ctx, "value_in_window", f"value_in_window/latest-empty/{i}", q, [], [],
                         status="no-data", now=ctx.late_now))
    return out


MAX_T = ("What was {poss} highest {item}{win}?", "Max {item}{win}?", "What's the peak {item}{win}?",
         "Highest {item} {res}{win}?")
MIN_T = ("What was {poss} lowest {item}{win}?", "Min {item}{win}?", "What was the lowest {item} {res}{win}?",
         "Lowest {item}{win}?")


def gen_min_max(ctx: Context) -> list[Candidate]:
    """min_max over all time or a window."""
    out = []
    for item in _items(ctx, CORE_ITEMS, 3, minimum=2):
        values = ctx.values(item)
        wp = ctx.pick(any_window(ctx, [m.time for m in values], with_all_time=True))
        highest = ctx.rng.random() < 0.55

        def pick(w: tu.Window, highest: bool = highest, values: list[Measurement] = values) -> tuple[float, str] | None:
            vals = in_window(values, w)
            if not vals:
                return None
            best = max(vals, key=lambda v: v.value) if highest else min(vals, key=lambda v: v.value)
            return best.value, best.ref

        ok, best = stable(_window(wp), pick)
        if not ok or best is None:
            continue
        i, t = _variant(ctx, MAX_T if highest else MIN_T)
        win = _win_text(wp, ("ever", "on record", ""))
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), res=_res(item), win=win)
        kind = wp.kind if wp else "all"
        out.append(_cand(ctx, "min_max", f"min_max/{'max' if highest else 'min'}-{kind}/{i}", q, [best[0]],
                         [best[1]]))
    return out


AVG_T = ("What was {poss} average {item}{win}?", "Mean {item}{win}?", "Average {item}{win}?",
         "What has {poss} {item} averaged{win}?")


def gen_average(ctx: Context) -> list[Candidate]:
    """average (arithmetic mean) over all time or a window with at least two values."""
    out = []
    for item in _items(ctx, CORE_ITEMS, 3, minimum=2):
        values = ctx.values(item)
        wp = ctx.pick(any_window(ctx, [m.time for m in values], minimum=2, with_all_time=True))

        def mean(w: tu.Window, values: list[Measurement] = values) -> tuple[float, tuple[str, ...]] | None:
            vals = in_window(values, w)
            return (round(fmean(m.value for m in vals), 9), tuple(m.ref for m in vals)) if len(vals) >= 2 else None

        ok, got = stable(_window(wp), mean)
        if not ok or got is None:
            continue
        i, t = _variant(ctx, AVG_T)
        win = _win_text(wp, ("across all readings", "overall", "over the whole record"))
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), win=win)
        out.append(_cand(ctx, "average", f"average/{wp.kind if wp else 'all'}/{i}", q, [got[0]], list(got[1])))
    return out


COUNT_T = ("How many {item} {res}s {does} {subj} have{win}?", "How many times was {poss} {item} checked{win}?",
           "Number of {item} measurements{win}?", "How many {item} values are on file{win}?")


def gen_count_measurements(ctx: Context) -> list[Candidate]:
    """count_measurements: values of an item (a blood pressure component counts for its own item)."""
    out = []
    for item in _items(ctx, CORE_ITEMS, 3):
        values = ctx.values(item)
        wp = ctx.pick(any_window(ctx, [m.time for m in values], with_all_time=True))
        ok, n = stable(_window(wp), lambda w, values=values: len(in_window(values, w)))
        if not ok:
            continue
        i, t = _variant(ctx, COUNT_T)
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), res=_res(item), win=_win_text(wp, ("",)))
        refs = [m.ref for m in in_window(values, _window(wp))]
        out.append(_cand(ctx, "count_measurements", f"count_measurements/{wp.kind if wp else 'all'}/{i}", q, [n],
                         refs, answer_type="count", tolerance=0.0))
    return out


def _first_last(values: Sequence[Measurement], w: tu.Window) -> tuple[Measurement, Measurement] | None:
    vals = in_window(values, w)
    if len(vals) < 2:
        return None
    s1, first = extreme(vals, latest=False)
    s2, last = extreme(vals, latest=True)
    if s1 != "ok" or s2 != "ok" or first is None or last is None or first.time == last.time:
        return None
    return first, last


CHANGE_T = ("How much did {poss} {item} change{win}?", "Change in {item}{win}?",
            "What was the net change in {poss} {item}{win}?", "By how much did {poss} {item} go up or down{win}?")
CHANGE_DATES_T = ("How did {poss} {item} change from {d1} to {d2}?", "Change in {item} between {d1} and {d2}?",
                  "How much did {poss} {item} change between {d1} and {d2}?")
TREND_T = ("Is {poss} {item} trending up or down{win}?", "{item} trend{win}?",
           "Has {poss} {item} been increasing, decreasing or stable{win}?", "How has {poss} {item} been trending{win}?")


def trend_word(first: float, last: float) -> str | None:
    """increasing / decreasing / stable by the ±5 % rule; None when too close to a cut-off or first is 0."""
    if first == 0:
        return None
    ratio = (last - first) / abs(first)
    if 0.04 <= abs(ratio) <= 0.06:
        return None
    return "increasing" if ratio > 0.05 else "decreasing" if ratio < -0.05 else "stable"


def gen_change_trend(ctx: Context) -> list[Candidate]:
    """change (last − first in a window, or between two measurement dates) and trend."""
    out = []
    for item in _items(ctx, TREND_ITEMS, 4, minimum=2):
        values = ctx.values(item)
        times = [m.time for m in values]
        # change over a window
        options = [w for w in any_window(ctx, times, minimum=2, with_all_time=False)]
        if options:
            wp = ctx.pick(options)

            def diff(w: tu.Window, values: list[Measurement] = values) -> tuple[float, str, str] | None:
                fl = _first_last(values, w)
                return (round(fl[1].value - fl[0].value, 9), fl[0].ref, fl[1].ref) if fl else None

            ok, got = stable(wp.window, diff)
            if ok and got is not None:
                i, t = _variant(ctx, CHANGE_T)
                q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), win=f" {wp.text}")
                out.append(_cand(ctx, "change", f"change/{wp.kind}/{i}", q, [got[0]], [got[1], got[2]],
                                 tolerance=0.02))
        # change between two named measurement dates
        by_day: dict[str, list[Measurement]] = {}
        for m in values:
            by_day.setdefault(m.time.date().isoformat(), []).append(m)
        singles = [v[0] for v in by_day.values() if len(v) == 1]
        if len(singles) >= 2:
            a, b = sorted(ctx.rng.sample(singles, 2), key=lambda m: m.time)
            w = tu.between(a.time.date(), b.time.date())
            fl = _first_last(values, w)
            if fl and fl[0].ref == a.ref and fl[1].ref == b.ref:
                i, t = _variant(ctx, CHANGE_DATES_T)
                q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), d1=ph.fmt_date(a.time.date(), ctx.rng),
                            d2=ph.fmt_date(b.time.date(), ctx.rng))
                out.append(_cand(ctx, "change", f"change/dates/{i}", q, [round(b.value - a.value, 9)],
                                 [a.ref, b.ref], tolerance=0.02))
        # trend
        options = any_window(ctx, times, minimum=3, with_all_time=True)
        wp2 = ctx.pick(options)

        def trend(w: tu.Window, values: list[Measurement] = values) -> tuple[str, str, str] | None:
            fl = _first_last(values, w)
            word = trend_word(fl[0].value, fl[1].value) if fl else None
            return (word, fl[0].ref, fl[1].ref) if fl and word else None

        ok, got2 = stable(_window(wp2), trend)
        if ok and got2 is not None:
            i, t = _variant(ctx, TREND_T)
            win = _win_text(wp2, ("over time", "overall", ""))
            q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), win=win)
            out.append(_cand(ctx, "trend", f"trend/{wp2.kind if wp2 else 'all'}/{i}", q, [got2[0]],
                             [got2[1], got2[2]], answer_type="string"))
    return out


ABOVE_T = ("Did {poss} {item} ever exceed {x}{unit}{win}?", "Was {poss} {item} ever above {x}{unit}{win}?",
           "Any {item} over {x}{win}?", "Has {poss} {item} been higher than {x}{unit} at any point{win}?")
BELOW_T = ("Was {poss} {item} ever below {x}{unit}{win}?", "Any {item} under {x}{win}?",
           "Did {poss} {item} ever drop below {x}{unit}{win}?")


def gen_threshold(ctx: Context) -> list[Candidate]:
    """threshold: strictly above/below X, with X on both sides of the true extreme."""
    out = []
    for item in _items(ctx, CORE_ITEMS, 4):
        values = ctx.values(item)
        wp = ctx.pick(any_window(ctx, [m.time for m in values], with_all_time=True))
        vals = in_window(values, _window(wp))
        if not vals:
            continue
        above = ctx.rng.random() < 0.65
        usable = [x for x in item.thresholds if all(abs(m.value - x) > 0.005 * max(abs(x), 1e-9) for m in vals)]
        if not usable:
            continue
        x = ctx.pick(usable)

        def hit(w: tu.Window, x: float = x, above: bool = above, values: list[Measurement] = values) -> bool:
            inside = in_window(values, w)
            return any(m.value > x for m in inside) if above else any(m.value < x for m in inside)

        ok, answer = stable(_window(wp), hit)
        if not ok:
            continue
        i, t = _variant(ctx, ABOVE_T if above else BELOW_T)
        unit = f" {item.unit}" if item.unit else ""
        win = _win_text(wp, ("",))
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), x=ph.fmt_number(x, item.decimals), unit=unit,
                    win=win)
        side = "above" if above else "below"
        best = max(vals, key=lambda m: m.value) if above else min(vals, key=lambda m: m.value)
        out.append(_cand(ctx, "threshold", f"threshold/{side}-{wp.kind if wp else 'all'}/{i}", q, [answer],
                         [best.ref], answer_type="boolean", tolerance=0.0))
    return out


AFTER_FIRST = ("What was {poss} first {item} after starting {drug}?", "First {item} after {drug} was started?",
               "What was {poss} {item} the first time it was checked after {drug} was prescribed?")
AFTER_LAST = ("What was {poss} most recent {item} since starting {drug}?",
              "Last {item} after {drug} was started?", "What's the latest {item} after {poss} first {bare} prescription?")


def gen_after_drug(ctx: Context) -> list[Candidate]:
    """after_drug: first/last value strictly after the first matching prescription's authoredOn."""
    out = []
    meds = ctx.record.of_kind("medication")
    for key, effects in DRUG_EFFECTS.items():
        concept = CONCEPTS[key]
        matching = [e for e in meds if concept.matches(e.name)]
        if not matching:
            continue
        start = matching[0].start
        for item in _items(ctx, effects, 2):
            values = ctx.values(item)
            after = [m for m in values if m.time > start]
            same_day = [m for m in values if abs(m.time - start) < timedelta(days=1)]
            if not after or same_day:
                continue
            first = ctx.rng.random() < 0.5
            status, m = extreme(after, latest=not first)
            if status != "ok" or m is None:
                continue
            i, t = _variant(ctx, AFTER_FIRST if first else AFTER_LAST)
            drug = ctx.pick(concept.phrases)
            bare = drug.removeprefix("a ").removeprefix("an ").removesuffix(" therapy")
            q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases), drug=drug, bare=bare)
            out.append(_cand(ctx, "after_drug", f"after_drug/{'first' if first else 'last'}/{i}", q, [m.value],
                             [m.ref, matching[0].ref]))
    return out


__all__ = ["ITEMS", "gen_after_drug", "gen_average", "gen_change_trend", "gen_count_measurements",
           "gen_latest_first", "gen_min_max", "gen_threshold", "gen_value_in_window", "last_options"]
