"""A drug's doses counted or summed over a window: "vanco doses so far this stay?", "heparin doses past 24 hrs?",
"total heparin units since admit", "total vanc given since admission (mg)", and an amount asked over a window or so
far: "how many mg of vanc in the last 24h", "how much vanc has he gotten so far" (no window said: the stay the
patient is in now, else the whole record; "how much heparin is she getting", present tense, is not a total).

A count is the number of completed administrations in the window (``given_doses`` leaves out the ones charted
not-done, stopped or in error), and 0 when the drug is on file but none fell in it. A total is the sum of those
doses over the whole window, not one day's. Words in ``lexicon/dose_tallies.json``; a daily amount ("total daily
dose", "highest day") stays with the daily-dose plan, and a drug with no administration charted (orders only) with
the ordinary plans.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import replace
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
COUNT, SUM = "count", "sum"


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("dose_tallies.json")


def _any(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def _phrase(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def tally_asked(pq: ParsedQuestion) -> str | None:
    """``"count"`` or ``"sum"`` when the question tallies a drug's doses over its window, else None."""
    spec = _spec()
    text = " ".join(pq.text.lower().split())
    multi_day = pq.window is not None and (pq.window.anchor is not None or pq.window.start is None
                                           or pq.window.end is None or (pq.window.end - pq.window.start).days >= 1)
    summable = not _any(spec["per_day"], text) and pq.intent in ("aggregate", "daily_dose", "value")
    placed = pq.window is not None and pq.window.anchor != "event"
    if summable and _any(spec["total_words"], text) and multi_day and placed and _drug(pq):
        return SUM
    # "how much vanc has he gotten so far", "how many mg of vanc in the last 24h", "amount of heparin given today":
    # an amount over a window said, or over the stay so far (one given day stays a total of that day's doses)
    amount = _any(spec["amount_words"], text)
    if summable and not pq.comparison and (amount or _any(spec["total_words"], text)) and _drug(pq) and (
            (placed and amount) or (pq.window is None and _any(spec["cumulative_words"], text))):
        return SUM
    counted = re.search(rf"\b(?:{_phrase(spec['count_nouns'])})\b", text)
    windowed = pq.window is not None or re.search(rf"\b(?:{_phrase(spec['needs_window_or'])})\b", text)
    if counted and windowed and pq.intent in ("value", "exists") and pq.med_kind == "administration" \
            and not _any(spec["lists"], text) and not _any(spec["yes_no"], text) and pq.entity:
        return COUNT
    return None


def _drug(pq: ParsedQuestion) -> str:
    """The drug the tally is of ("" when the question names none): see :func:`drug_named`."""
    return drug_named(pq, _spec()["filler"])


def drug_named(pq: ParsedQuestion, filler: list[str], *, medication_cued: bool = False) -> str:
    """The drug's words: the parsed item without dose units ("heparin units") and the ``filler`` words; "" when it
    names no drug the lexicon knows and neither the question (``med_kind``, its lexicon views) nor the caller
    (``medication_cued``: "dosing", "regimen" can only be said of a drug) read it as a medication."""
    from fhirqa.agent.lexicon import Lexicon
    from fhirqa.agent.units import unit_table

    units = set(unit_table().aliases) | {"units", "unit", "mg", "g", "mcg", "grams", "milligrams"}
    dropped = set(filler)
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9\-/]*", (pq.entity or "").lower()) if w not in units and w not in dropped]
    if not words:
        return ""
    phrase = " ".join(words)
    known = Lexicon.load().drug_phrase(words)
    if known:
        return known
    cued = medication_cued or pq.med_kind == "administration" or pq.lexicon_views[:1] == ["medication"]
    return phrase if cued else ""


def plan_tally(pq: ParsedQuestion, kind: str) -> Generator[Call, dict[str, Any], bool]:
    """The count or the total; False (nothing yielded) when the drug has no administration charted."""
    from fhirqa.agent.backends.offline.plans import plan_count

    if kind == COUNT:
        pq.intent = "count"  # "vanco doses so far this stay?" is "how many vanco doses were given this stay?"
        yield from plan_count(pq)
        return True
    return (yield from _plan_total(pq))


def _plan_total(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], bool]:
    from fhirqa.agent.backends.offline.plans import (
        NOT_GIVEN,
        _ambiguous,
        _asked_unit,
        _no_stay,
        _with_unit,
        final,
        find_records,
        open_stay,
        windowed,
    )

    drug = _drug(pq)
    located = yield from find_records(pq, views=["medication"], entity=drug)
    if located is None:
        return False  # no such drug: "total flu vaccines given in 2019" counts records of another kind
    _, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, drug)
        return True
    admin = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "administration", "field": "kind"})
    if not admin.get("count"):
        return False  # orders only: no dose was charted as given, the daily-dose plan reads the orders
    handle = admin["handle"]
    for status in NOT_GIVEN:  # a dose charted not given was not given
        undone = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            given = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
            handle = given.get("handle") or handle
    if pq.window is None:  # "so far" with no window: this stay when the patient is in one now, else the whole record
        stay = yield from open_stay(pq)
        if stay is not None:
            pq.window = replace(stay, label=f"so far this admission ({stay.start.date() if stay.start else '?'})")
    scoped = yield from windowed(pq, handle)
    label = pq.window.label if pq.window else "in the whole record"
    if scoped.get("no_stay"):
        yield _no_stay(pq, f"{drug} doses")
        return True
    if scoped.get("count") == 0:
        yield final([0], f"No {drug} was given {label}: the total is 0.")
        return True
    total = yield ("aggregate", {"records": scoped.get("handle") or handle, "op": "sum", "field": "dose"})
    value, unit = _asked_unit(pq, total.get("value"), total.get("unit"))
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 30000 units, not 3e+04
    shown = f"{value:,} {unit or ''}".strip() if isinstance(value, int) else _with_unit(value, unit)
    n = total.get("n", "?")
    yield final([value], f"Total {drug} given {label}: {shown} over {n} completed "
                         f"administration{'' if n == 1 else 's'} (doses charted as not given are left out).", unit=unit)
    return True
