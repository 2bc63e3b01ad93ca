"""Held-out gold, step 6: questions about measured values (latest, first, in a window, extremes, average,
counts, change, trend, thresholds, values after a drug, items never measured).

Wordings avoid those of ``evals/synthea-r4.jsonl``: terse shorthand ("last K?", "SBP max past yr"),
requests ("Could you tell me…", "I need…", "Please give…", "Remind me…"), third-person narrative ("The
patient's most recent…"), lay words, a few misspellings, and the date formats of ``build_heldout_time``.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

import build_heldout_time as tm
from build_heldout_core import Context, Question, tidy
from build_heldout_vocab import CONCEPTS, ITEMS, Item
from build_heldout_windows import EVER_WORDS, UNSTABLE, empty_windows, extreme, inside, options, stable

VALUE_ITEMS = ("a1c", "glucose", "potassium", "sodium", "creatinine", "bun", "calcium", "co2", "egfr",
               "cholesterol", "ldl", "hdl", "triglycerides", "hemoglobin", "hematocrit", "wbc", "platelets",
               "weight", "bmi", "sbp", "dbp", "height", "temp", "hr", "spo2", "rr", "alt", "albumin", "troponin",
               "chloride", "pain")
VITALS = ("weight", "height", "bmi", "sbp", "dbp", "temp", "hr", "spo2", "rr", "pain")
TREND_ITEMS = ("a1c", "glucose", "creatinine", "potassium", "ldl", "cholesterol", "hdl", "triglycerides",
               "weight", "bmi", "sbp", "dbp", "egfr", "hemoglobin", "sodium", "platelets")
DRUG_EFFECTS = {"statin": ("ldl", "cholesterol", "triglycerides", "hdl"), "simvastatin": ("ldl", "cholesterol"),
                "diuretic": ("potassium", "sodium", "creatinine", "weight"), "hctz": ("potassium", "sbp", "sodium"),
                "furosemide": ("potassium", "creatinine", "weight"), "metformin": ("a1c", "glucose"),
                "insulin": ("a1c", "glucose"), "clopidogrel": ("hemoglobin", "platelets"),
                "thinner": ("hemoglobin", "platelets"), "bp_med": ("sbp", "dbp"), "amlodipine": ("sbp", "dbp"),
                "vancomycin": ("creatinine", "wbc"), "metoprolol": ("hr", "sbp"), "atorvastatin": ("ldl", "cholesterol"),
                "zosyn": ("wbc", "creatinine"), "ceftriaxone": ("wbc", "temp"), "heparin": ("platelets", "hemoglobin"),
                "sertraline": ("phq9",), "warfarin": ("hemoglobin",)}

LATEST = {"short": ["last {n}?", "{n} last?", "latest {n}", "most recent {n}?", "{n}, most recent value"],
          "ask": ["Could you tell me {w} last {n}?", "I need {w} most recent {n}.", "Please give me the latest {n}.",
                  "Remind me what {w} last {n} was.", "Can you pull up {w} most recent {n}?"],
          "narr": ["The patient's most recent {n} was what?", "Looking at {w} chart, the latest {n} reads?",
                   "{S} had {n} checked - what was the most recent result?"]}
FIRST = {"short": ["first {n}?", "earliest {n} on file", "initial {n}?", "{n}, first ever value"],
         "ask": ["Could you tell me {w} first recorded {n}?", "I need the earliest {n} we have.",
                 "Please give the very first {n} in the chart.", "Remind me what {w} first {n} was."],
         "narr": ["The patient's first documented {n} was?", "Going back to the start of {w} record, the first {n}?"]}
IN_WINDOW = {"short": ["{side} {n} {win}?", "{n} {win}, {side} value", "{side} {n} {win}"],
             "ask": ["Could you give me the {side} {n} {win}?", "I need the {side} {n} {win}.",
                     "Please tell me {w} {side} {n} {win}."],
             "narr": ["{Win}, the patient's {side} {n} was?", "Looking only at results {win}, the {side} {n}?"]}
EXTREME = {"short": ["{n} {mm} {win}", "{mm} {n} {win}?", "{n} {mm} {win}?"],
           "ask": ["Could you find the {mm} {n} {win}?", "I need {w} {mm} {n} {win}.",
                   "Please give the {mm} {n} {win}."],
           "narr": ["{Win}, what was the patient's {mm} {n}?", "The {mm} {n} the patient has had {win} was?"]}
AVERAGE = {"short": ["avg {n} {win}", "mean {n} {win}?", "{n} average {win}"],
           "ask": ["Please give the average {n} {win}.", "Could you work out {w} mean {n} {win}?",
                   "I need the average of {w} {n} values {win}."],
           "narr": ["On average, what has the patient's {n} been {win}?"]}
COUNT = {"short": ["# {n} results {win}", "# of {n} checks {win}?", "{n}: # of results {win}"],
         "ask": ["How many times was {w} {n} measured {win}?", "Could you count the {n} results {win}?",
                 "I need the number of {n} readings {win}."],
         "narr": ["The patient has had how many {n} values recorded {win}?"]}
CHANGE = {"short": ["{n} change {win}", "net {n} change {win}?", "delta {n} {win}"],
          "ask": ["How much did {w} {n} change {win}?", "Could you tell me the change in {n} {win}?",
                  "I need the difference between the first and last {n} {win}."],
          "narr": ["{Win}, by how much did the patient's {n} move?"]}
YEAR_CHANGE = {"short": ["{n} change {a}→{b}", "{n} {a} vs {b}: change?", "{n} {a}->{b} delta"],
               "ask": ["How much did {w} {n} change from {a} to {b}?"],
               "narr": ["Between the {a} and {b} checks, how much did the patient's {n} change?"]}
TREND = {"short": ["{n} trend {win}", "{n} trending up or down {win}?", "{n} trajectory {win}?"],
         "ask": ["Which way is {w} {n} heading {win}: up, down or flat?",
                 "Could you tell me if {w} {n} is rising, falling or stable {win}?",
                 "I need the {n} trend {win} (up/down/stable)."],
         "narr": ["Is the patient's {n} going up, going down or holding steady {win}?"]}
THRESHOLD = {"short": ["{n} {op}{c} {win}?", "any {n} {opw} {c} {win}?", "{n} {opw} {c} at any point {win}?"],
             "ask": ["Has {w} {n} been {opw} {c} {win}?", "Could you check whether any {n} was {opw} {c} {win}?",
                     "I need to know if {w} {n} ever went {opw} {c} {win}."],
             "narr": ["Did the patient have a {n} {opw} {c} {win}?"]}
AFTER = {"short": ["{side} {n} after starting {d}?", "{n} post-{d} start, {side} value", "{side} {n} since {d} began"],
         "ask": ["Could you tell me the {side} {n} after {s} started {d}?",
                 "I need the {side} {n} once {d} was begun.", "Please give the {side} {n} after {d} was first ordered."],
         "narr": ["After the patient was started on {d}, what was the {side} {n}?"]}
ABSENT = {"short": ["last {n}?", "{n}?", "most recent {n}"],
          "ask": ["Could you tell me {w} latest {n}?", "I need {w} last {n} value."],
          "narr": ["The patient's most recent {n} was?"]}


def _say(ctx: Context, table: dict[str, list[str]], **slots: str) -> tuple[str, str]:
    """One wording: (question, form)."""
    form = ctx.pick(sorted(table))
    w, _ = ctx.who()
    s, _ = ctx.subj()
    slots = {"w": w, "s": s, "S": s[:1].upper() + s[1:], **slots}
    if "win" in slots:
        slots["Win"] = slots["win"][:1].upper() + slots["win"][1:]
    templates = [t for t in table[form] if slots.get("win") or "{Win}" not in t] or table["short"]
    return tidy(ctx.pick(templates).format(**slots)), form


def _present(ctx: Context, keys: Sequence[str], minimum: int = 1, limit: int = 5) -> list[Item]:
    items = [ITEMS[k] for k in keys if len(ctx.record.series(ITEMS[k].codes)) >= minimum]
    return ctx.rng.sample(items, min(limit, len(items)))


def _q(ctx: Context, category: str, pattern: str, text: str, form: str, reg: str, answer_type: str, value: object,
       refs: Sequence[str], tol: float = 0.0, now: object = None, status: str = "answered") -> Question:
    return Question(ctx.record.id, text, now or ctx.now, category, answer_type,  # type: ignore[arg-type]
                    [] if status != "answered" else [value], f"{category}/{pattern}/{form}.{reg}", list(refs),
                    status, tol)


def _num(v: float) -> str:
    return f"{v:g}"


def gen_latest_first(ctx: Context) -> list[Question]:
    """Latest / first value over the whole record."""
    out = []
    for item in _present(ctx, VALUE_ITEMS):
        series = ctx.record.series(item.codes)
        for latest, table, cat in ((True, LATEST, "latest_value"), (False, FIRST, "first_value")):
            hit = extreme(series, latest)
            if hit is None:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, table, n=name)
            pattern = "vital" if item.key in VITALS else "lab"
            out.append(_q(ctx, cat, pattern, text, form, reg, "number", hit.value, [hit.ref], 0.01))
    return out


def gen_in_window(ctx: Context) -> list[Question]:
    """Latest / first value in a window; empty windows give no-data."""
    out = []
    for item in _present(ctx, VALUE_ITEMS, limit=4):
        series = ctx.record.series(item.codes)
        times = [v.time for v in series]
        latest = ctx.rng.random() < 0.6
        side = ctx.pick(["last", "latest", "most recent"] if latest else ["first", "earliest"])
        for kind, win in options(ctx, times):
            hit = stable(win, lambda w, s=series, lt=latest: extreme(inside(s, w), lt))
            if hit is UNSTABLE or hit is None:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, IN_WINDOW, n=name, side=side, win=win.phrase)
            pattern = f"{'latest' if latest else 'first'}-{kind}"
            out.append(_q(ctx, "value_in_window", pattern, text, form, reg, "number", hit.value, [hit.ref], 0.01))
        for kind, win, now in empty_windows(ctx, times):
            name, reg = ctx.name(item)
            text, form = _say(ctx, IN_WINDOW, n=name, side=side, win=win.phrase)
            out.append(_q(ctx, "value_in_window", kind, text, form, reg, "number", None, [], now=now,
                          status="no-data"))
    return out


def _windows_or_ever(ctx: Context, times: list, minimum: int = 1) -> list[tuple[str, tm.Window]]:
    ever = tm.Window(tm.EVER.start, tm.EVER.end, ctx.pick(EVER_WORDS))
    return [("all", ever), *options(ctx, times, minimum)]


def gen_min_max(ctx: Context) -> list[Question]:
    """Highest / lowest value, ever or in a window."""
    out = []
    for item in _present(ctx, VALUE_ITEMS, minimum=2, limit=4):
        series = ctx.record.series(item.codes)
        high = ctx.rng.random() < 0.55
        word = ctx.pick(["max", "peak", "highest"] if high else ["min", "lowest", "nadir"])
        for kind, win in _windows_or_ever(ctx, [v.time for v in series]):
            def best(w: tm.Window, s: list = series, h: bool = high) -> tuple | None:
                vals = inside(s, w)
                if not vals:
                    return None
                top = (max if h else min)(v.value for v in vals)
                return top, tuple(sorted(v.ref for v in vals if v.value == top))
            got = stable(win, best)
            if got is UNSTABLE or got is None:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, EXTREME, n=name, mm=word, win=win.phrase)
            pattern = f"{'max' if high else 'min'}-{kind}"
            out.append(_q(ctx, "min_max", pattern, text, form, reg, "number", got[0], got[1], 0.01))
    return out


def gen_average(ctx: Context) -> list[Question]:
    """Mean of two or more values, ever or in a window."""
    out = []
    for item in _present(ctx, VALUE_ITEMS, minimum=2, limit=4):
        series = ctx.record.series(item.codes)
        for kind, win in _windows_or_ever(ctx, [v.time for v in series], minimum=2):
            def mean(w: tm.Window, s: list = series) -> tuple | None:
                vals = inside(s, w)
                return (round(fmean(v.value for v in vals), 9), tuple(v.ref for v in vals)) if len(vals) > 1 else None
            got = stable(win, mean)
            if got is UNSTABLE or got is None:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, AVERAGE, n=name, win=win.phrase)
            out.append(_q(ctx, "average", kind, text, form, reg, "number", got[0], got[1], 0.01))
    return out


def gen_count(ctx: Context) -> list[Question]:
    """How many values of an item, ever or in a window (zero in an empty window)."""
    out = []
    for item in _present(ctx, VALUE_ITEMS, limit=4):
        series = ctx.record.series(item.codes)
        times = [v.time for v in series]
        wins = _windows_or_ever(ctx, times) + [(k, w) for k, w, now in empty_windows(ctx, times) if now == ctx.now]
        for kind, win in wins:
            got = stable(win, lambda w, s=series: tuple(v.ref for v in inside(s, w)))
            if got is UNSTABLE:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, COUNT, n=name, win=win.phrase)
            out.append(_q(ctx, "count_measurements", kind, text, form, reg, "count", len(got), got))
    return out


def gen_change(ctx: Context) -> list[Question]:
    """Last − first in a window, and year-to-year change where each year holds exactly one value."""
    out = []
    for item in _present(ctx, TREND_ITEMS, minimum=2, limit=4):
        series = ctx.record.series(item.codes)
        for kind, win in options(ctx, [v.time for v in series], minimum=2):
            got = stable(win, lambda w, s=series: _ends(inside(s, w)))
            if got is UNSTABLE or got is None:
                continue
            name, reg = ctx.name(item)
            text, form = _say(ctx, CHANGE, n=name, win=win.phrase)
            out.append(_q(ctx, "change", kind, text, form, reg, "number", round(got[1].value - got[0].value, 9),
                          [got[0].ref, got[1].ref], 0.02))
        by_year: dict[int, list] = {}
        for v in series:
            by_year.setdefault(v.time.year, []).append(v)
        for year in sorted(by_year):
            nxt = by_year.get(year + 1)
            if len(by_year[year]) == 1 and nxt and len(nxt) == 1 and ctx.rng.random() < 0.5:
                win = tm.Window(tm.start_of(tm.date(year, 1, 1)), tm.end_of(tm.date(year + 1, 12, 31)),
                                edges=(tm.date(year, 1, 1), tm.date(year + 1, 12, 31)))
                if not win.clear_of([v.time for v in series]):
                    continue
                a, b = by_year[year][0], nxt[0]
                name, reg = ctx.name(item)
                text, form = _say(ctx, YEAR_CHANGE, n=name, a=str(year), b=str(year + 1))
                out.append(_q(ctx, "change", "year-to-year", text, form, reg, "number", round(b.value - a.value, 9),
                              [a.ref, b.ref], 0.02))
    return out


def _ends(vals: list) -> tuple | None:
    first, last = extreme(vals, False), extreme(vals, True)
    if first is None or last is None or first.time == last.time:
        return None
    return first, last


def gen_trend(ctx: Context) -> list[Question]:
    """Increasing / decreasing / stable by the ±5 % rule (kept away from the cut-offs)."""
    out = []
    for item in _present(ctx, TREND_ITEMS, minimum=2, limit=4):
        series = ctx.record.series(item.codes)
        for kind, win in _windows_or_ever(ctx, [v.time for v in series], minimum=2):
            got = stable(win, lambda w, s=series: _ends(inside(s, w)))
            if got is UNSTABLE or got is None or got[0].value == 0:
                continue
            r = (got[1].value - got[0].value) / abs(got[0].value)
            if min(abs(r - 0.05), abs(r + 0.05)) < 0.005:
                continue
            label = "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"
            name, reg = ctx.name(item)
            text, form = _say(ctx, TREND, n=name, win=win.phrase)
            out.append(_q(ctx, "trend", kind, text, form, reg, "string", label, [got[0].ref, got[1].ref]))
    return out


def gen_threshold(ctx: Context) -> list[Question]:
    """Strictly above / below a cut-off, ever or in a window; cut-offs on both sides of the extreme."""
    out = []
    for item in _present(ctx, VALUE_ITEMS, limit=4):
        if not item.cuts:
            continue
        series = ctx.record.series(item.codes)
        for kind, win in _windows_or_ever(ctx, [v.time for v in series]):
            vals = stable(win, lambda w, s=series: tuple(inside(s, w)))
            if vals is UNSTABLE or not vals:
                continue
            above = ctx.rng.random() < 0.6
            cut = ctx.pick(item.cuts)
            if any(abs(v.value - cut) < 0.006 * abs(cut) for v in vals):
                continue
            hits = [v for v in vals if (v.value > cut if above else v.value < cut)]
            op = ">" if above else "<"
            opw = ctx.pick(["over", "above", "greater than"] if above else ["under", "below", "less than"])
            c = f"{_num(cut)}{(' ' + item.unit) if item.unit and ctx.rng.random() < 0.5 else ''}"
            name, reg = ctx.name(item)
            text, form = _say(ctx, THRESHOLD, n=name, op=op, opw=opw, c=c, win=win.phrase)
            pattern = f"{'above' if above else 'below'}-{kind}"
            refs = [v.ref for v in hits[:1]] if hits else []
            out.append(_q(ctx, "threshold", pattern, text, form, reg, "boolean", bool(hits), refs))
    return out


EMPTY_TABLES = {"min_max": EXTREME, "average": AVERAGE, "change": CHANGE, "trend": TREND, "threshold": THRESHOLD}
EMPTY_TYPES = {"min_max": "number", "average": "number", "change": "number", "trend": "string",
               "threshold": "boolean"}


def gen_empty_windows(ctx: Context) -> list[Question]:
    """Value questions over windows holding none of the item's values: no-data."""
    out = []
    for item in _present(ctx, TREND_ITEMS, minimum=2, limit=3):
        times = [v.time for v in ctx.record.series(item.codes)]
        for kind, win, now in empty_windows(ctx, times):
            category = ctx.pick(sorted(EMPTY_TABLES))
            name, reg = ctx.name(item)
            high = ctx.rng.random() < 0.5
            slots = {"n": name, "win": win.phrase, "mm": ctx.pick(["max", "peak"] if high else ["min", "lowest"]),
                     "op": ">" if high else "<", "opw": "over" if high else "under",
                     "c": _num(item.cuts[0]) if item.cuts else "0"}
            if category == "threshold" and not item.cuts:
                continue
            text, form = _say(ctx, EMPTY_TABLES[category], **slots)
            out.append(_q(ctx, category, kind, text, form, reg, EMPTY_TYPES[category], None, [], now=now,
                          status="no-data"))
    return out


def gen_after_drug(ctx: Context) -> list[Question]:
    """First / last value strictly after the first prescription of a drug (or a class)."""
    out = []
    meds = ctx.record.of("medication")
    for key, item_keys in DRUG_EFFECTS.items():
        concept = CONCEPTS[key]
        starts = [f for f in meds if concept.matches(f.name)]
        close = [f for f in meds if concept.close(f.name)]
        reported = any(concept.close(s.name) for s in ctx.record.of("statement"))
        if not starts or close[0].start != starts[0].start or reported:
            continue
        start = starts[0].start
        for item in _present(ctx, item_keys, limit=2):
            series = ctx.record.series(item.codes)
            after = [v for v in series if v.time > start]
            latest = ctx.rng.random() < 0.5
            hit = extreme(after, latest)
            # "After X started" must not depend on whether a same-day value counts: for the first value no
            # value lies within a day of the start; the last value itself lies more than a day after it.
            near = any(abs((v.time - start).total_seconds()) < 86400 for v in series)
            if hit is None or (near and not latest) or (hit.time - start).total_seconds() < 86400:
                continue
            name, reg = ctx.name(item)
            drug, dreg = ctx.name(concept, ("abbr", "full", "lay"))
            side = ctx.pick(["latest", "most recent"] if latest else ["first", "earliest"])
            text, form = _say(ctx, AFTER, n=name, d=drug, side=side)
            pattern = f"{'last' if latest else 'first'}-{key}"
            out.append(_q(ctx, "after_drug", pattern, text, form, f"{reg}+{dreg}", "number", hit.value,
                          [hit.ref, starts[0].ref], 0.01))
    return out


def gen_absent_items(ctx: Context, absent: dict[str, tuple[str, ...]]) -> list[Question]:
    """Value questions about items nobody in the data set has: no-data."""
    out = []
    for key in ctx.rng.sample(sorted(absent), 3):
        text, form = _say(ctx, ABSENT, n=ctx.pick(absent[key]))
        out.append(_q(ctx, "existence_negative", f"absent-{key}", text, form, "any", "number", None, [],
                      status="no-data"))
    mine = [k for k in VALUE_ITEMS + ("psa", "bnp", "vanc_trough", "lactate", "phq9")
            if k in ctx.population.items and not ctx.record.series(ITEMS[k].codes)]
    for key in ctx.rng.sample(mine, min(2, len(mine))):
        name, reg = ctx.name(ITEMS[key])
        text, form = _say(ctx, ABSENT, n=name)
        out.append(_q(ctx, "existence_negative", f"never-{key}", text, form, reg, "number", None, [],
                      status="no-data"))
    return out
