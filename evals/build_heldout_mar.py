"""Held-out gold, step 9: the new category ``daily_total_administered`` (medication administration record).

A day's total is the sum of ``MedicationAdministration.dosage.dose`` of the completed doses whose time
(``effectiveDateTime``, else ``effectivePeriod.start``) falls on that **UTC** calendar day. A question is
kept only when the answer is the same with the days taken in the record's local time, so neither reading
of "on 9/12/2025" is penalised.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date

import build_heldout_time as tm
from build_heldout_core import Context, Question, tidy
from build_heldout_events import say
from build_heldout_fhir import Administration
from build_heldout_vocab import CONCEPTS

CATEGORY = "daily_total_administered"
MAR_DRUGS = ("vancomycin", "heparin", "zosyn", "ceftriaxone", "acetaminophen")
# Cut-offs for "more than X in a day", in the dose unit, with how they are written.
CUTS = {"vancomycin": ((1000, "1 g"), (1500, "1.5 g"), (2000, "2 g"), (2000, "2000 mg"), (2500, "2.5 g"),
                       (3000, "3 g")),
        "heparin": ((10000, "10,000 units"), (15000, "15,000 units"), (20000, "20k units")),
        "zosyn": ((9, "9 g"), (13.5, "13.5 g"), (15, "15 g")),
        "acetaminophen": ((1000, "1 g"), (2000, "2 g"), (3000, "3 g")),
        "ceftriaxone": ((1, "1 g"), (2, "2 g"))}

TOTAL = {"short": ["total {x} given {d}?", "{x} total on {d}", "{x} 24h total for {d}?"],
         "ask": ["Could you add up the {x} {s} received on {d}?", "I need the total {x} administered on {d}.",
                 "Please give the total dose of {x} given on {d}."],
         "narr": ["On {d}, how much {x} did the patient receive in total?"]}
EXCEED = {"short": ["did {x} exceed {amt}/day?", "{x} ever > {amt} in a day?", "any day with more than {amt} of {x}?"],
          "ask": ["Could you check whether {s} ever got more than {amt} of {x} in a single day?"],
          "narr": ["Was the patient ever given over {amt} of {x} in one day?"]}
MAXDAY = {"short": ["max daily {x} total?", "highest 1-day {x} total", "peak {x} per day given?"],
          "ask": ["What's the most {x} {s} got in a single day?", "Could you find the largest daily total of {x}?"],
          "narr": ["On the heaviest day, how much {x} was the patient given?"]}
DOSES = {"short": ["# {x} doses on {d}?", "{x} doses given {d}?"],
         "ask": ["How many doses of {x} were given on {d}?"],
         "narr": ["On {d}, the patient received how many doses of {x}?"]}


def _totals(doses: Sequence[Administration], local: bool) -> dict[date, tuple[float, tuple[str, ...], int]]:
    sums: dict[date, list] = defaultdict(lambda: [0.0, [], 0])
    for a in doses:
        day = a.local_day if local else a.time.date()
        sums[day][0] += a.dose
        sums[day][1].append(a.ref)
        sums[day][2] += 1
    return {d: (round(v[0], 9), tuple(v[1]), v[2]) for d, v in sums.items()}


def _day_words(day: date, ctx: Context) -> str:
    if ctx.rng.random() < 0.6:
        return tm.say_day(day, ctx.rng)[0]
    return ctx.pick([f"{day.month}/{day.day}/{day.year}", day.isoformat()])


def _q(ctx: Context, pattern: str, text: str, form: str, reg: str, answer_type: str, value: object,
       refs: Sequence[str], tol: float = 0.0) -> Question:
    return Question(ctx.record.id, text, ctx.now, CATEGORY, answer_type, [value], f"{CATEGORY}/{pattern}/{form}.{reg}",
                    list(refs), tolerance=tol)


def gen_daily_totals(ctx: Context) -> list[Question]:
    """Totals on a day, more-than-X-a-day, the largest daily total, doses on a day; false for drugs never given."""
    out: list[Question] = []
    for key in MAR_DRUGS:
        concept = CONCEPTS[key]
        doses = [a for a in ctx.record.admins if concept.matches(a.name) and a.status == "completed"]
        units = {a.unit for a in doses}
        if len(units) > 1:
            continue
        utc, local = _totals(doses, False), _totals(doses, True)
        for day in sorted(utc):
            if day not in local or local[day][0] != utc[day][0] or local[day][2] != utc[day][2]:
                continue
            total, refs, count = utc[day]
            name, reg = ctx.name(concept, ("abbr", "full", "typo"))
            d = _day_words(day, ctx)
            if ctx.rng.random() < 0.7:
                grams = units == {"mg"} and ctx.rng.random() < 0.3
                text, form = say(ctx, TOTAL, x=name, d=d)
                if grams:
                    text = tidy(text.rstrip("?.") + ", in grams?")
                out.append(_q(ctx, f"total-{key}", text, form, reg, "number", total / 1000 if grams else total, refs,
                              0.01))
            else:
                text, form = say(ctx, DOSES, x=name, d=d)
                out.append(_q(ctx, f"doses-{key}", text, form, reg, "count", count, refs))
        if doses and max(v[0] for v in utc.values()) == max(v[0] for v in local.values()):
            best = max(utc.values(), key=lambda v: v[0])
            name, reg = ctx.name(concept, ("abbr", "full"))
            text, form = say(ctx, MAXDAY, x=name)
            out.append(_q(ctx, f"max-{key}", text, form, reg, "number", best[0], best[1], 0.01))
        for cut, words in CUTS.get(key, ()):
            got_utc = [v for v in utc.values() if v[0] > cut]
            if bool(got_utc) != any(v[0] > cut for v in local.values()):
                continue
            if not doses and key not in ("vancomycin", "heparin"):
                continue
            name, reg = ctx.name(concept, ("abbr", "full", "typo"))
            text, form = say(ctx, EXCEED, x=name, amt=words)
            out.append(_q(ctx, f"exceed-{key}", text, form, reg, "boolean", bool(got_utc),
                          list(got_utc[0][1]) if got_utc else []))
    return out
