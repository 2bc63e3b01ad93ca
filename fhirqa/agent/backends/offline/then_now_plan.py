"""The latest value against the value at a past time: "A1c now vs a year ago", "how does her current weight compare
to last year?", "creatinine compared to 3 months ago", "K now versus yesterday".

The past time is the one the question's window names: a point back in time ("a year ago", "yesterday") or the start
of a span that runs to now ("last year" = the last 12 months, so a year back). The value compared is the one nearest
that time within a tolerance that grows with the distance (a third of it, at least half the window asked: a year
back looks four months either side, "yesterday" the whole day), and always earlier than the latest value. The
answer gives both values with their days and the change (latest minus then), per part for a panel.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_POINT_DAYS = 7  # a window no longer than this, ending before now, is a time back ("a year ago", "last week")
_SHARE = 3  # the tolerance is the distance back over this (a year back: four months either side)


@dataclass(frozen=True)
class ThenNow:
    """What a then-and-now question asks: the time back, a direction for a yes/no ('up' / 'down'), and whether the
    window's own first and last values answer instead when it holds two ('change over the past year')."""

    then: datetime
    direction: str | None = None
    inside_first: bool = False


@dataclass(frozen=True)
class _Words:
    asks: re.Pattern[str]
    filler: frozenset[str]
    time_back: re.Pattern[str]
    change_over: re.Pattern[str]
    up: re.Pattern[str]
    down: re.Pattern[str]


def _alt(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns) or "(?!)")


def _phrases(words: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b")


@lru_cache(maxsize=1)
def _spec() -> _Words:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("value_series.json")["then_and_now"]
    direction = lexicon_file("patient_voice.json").get("direction") or {}
    return _Words(_alt(spec["asks"]), frozenset(spec["filler"]), _alt(spec.get("time_back", [])),
                  _alt(spec.get("change_over", [])), _phrases([*direction.get("up", []), *spec.get("up", [])]),
                  _phrases([*direction.get("down", []), *spec.get("down", [])]))


def names_time_back(text: str) -> bool:
    """Whether ``text`` compares with a time back ("since last year", "than a year ago", "compared with last
    year"), so an up/down or change question is the latest against the value nearest then."""
    return _spec().time_back.search(" ".join(text.lower().split())) is not None


def then_now_asked(pq: ParsedQuestion) -> ThenNow | None:
    """The past instant the latest value is compared with, when the question asks so; None otherwise."""
    if pq.window is None or pq.window.start is None or not pq.entity or pq.now is None:
        return None
    if pq.intent not in ("value", "change", "exists") or re.search(r"\d{4}", pq.window.label or ""):
        return None  # "change since 2017": a calendar start, last minus first from 1 January
    words = _spec()
    text = " ".join(pq.text.lower().split())
    start = _aware(pq.window.start, pq.now)
    end = _aware(pq.window.end, pq.now) if pq.window.end is not None else pq.now
    span = abs((end - pq.now).total_seconds()) < 60  # a span up to now ("last year"): its start is the time back
    if not span and end - start > timedelta(days=_POINT_DAYS):
        return None  # "net change in BMI in '18": a past period, not a time back
    then = start if span else start + (end - start) / 2
    up, down = words.up.search(text), words.down.search(text)
    direction = None if bool(up) == bool(down) else ("up" if up else "down")
    back = words.time_back.search(text) is not None
    if pq.intent == "value":
        return ThenNow(then, direction) if words.asks.search(text) or (back and direction) else None
    if pq.intent == "exists":  # "is his SBP higher than a year ago?": a yes/no about the direction
        # only with the comparison said ("than", "since", "compared with"): "was it higher a year ago?" asks the
        # other way round
        return ThenNow(then, direction) if direction and back else None
    if back or not span:  # "weight change since last year", "BMI changed since 2 years ago"
        return ThenNow(then)
    return ThenNow(then, inside_first=True) if words.change_over.search(text) else None


def _aware(moment: datetime, now: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=now.tzinfo)


def plan_then_now(pq: ParsedQuestion, asked: ThenNow) -> Generator[Call, dict[str, Any], bool]:
    """Latest value vs the value nearest ``then``, per analyte; False when the item is not a result (or, for a
    change over a window, when the window holds two values of it to compare)."""
    from fhirqa.agent.backends.offline.plans import (
        _analytes,
        _iso,
        _row,
        _row_value,
        analyte_handles,
        find_records,
    )

    words = _spec()
    then = asked.then
    original = pq.entity
    entity = words.down.sub(" ", words.up.sub(" ", pq.entity.lower())) if asked.direction else pq.entity
    entity = re.sub(r"\b(?:than|since|compared|to|with|this time|last year|ago|up|down)\b", " ", entity) \
        if asked.direction else entity
    pq.entity = " ".join(w for w in entity.split() if w not in words.filler) or pq.entity
    asked_window, pq.window = pq.window, None  # the window names the time back, not a filter on the latest value
    found = yield from find_records(pq, views=["observation"], numeric=True)
    if found is None or not found[1].get("count") or found[1].get("ambiguous"):
        pq.window, pq.entity = asked_window, original
        return False
    if asked.inside_first and asked_window is not None:
        # "how much has it changed over the past year?": the window's first and last when it holds two of each
        inside = yield ("filter_by_date", {"records": found[1]["handle"], "start": _iso(then), "end": _iso(pq.now)})
        counts: list[int] = []
        if inside.get("count"):
            # per analyte (systolic and diastolic apart; two names of one test together), by lookups that cite
            # nothing: a question passed on must not carry the rows looked at as its evidence
            for names in _analytes(list(found[1].get("items") or [])).values():
                total = 0
                for name in names:
                    one = yield ("filter_by_value", {"records": inside["handle"], "op": "==", "value": name, "field": "name"})
                    total += int(one.get("count") or 0)
                counts.append(total)
        if not counts or min(counts) != 1:
            # two values inside: the window's own first and last; none: nothing changed in it (the window's plan says so)
            pq.window, pq.entity = asked_window, original
            return False
    assert pq.now is not None
    half = ((asked_window.end or pq.now) - asked_window.start) / 2 if asked_window and asked_window.start else timedelta(0)
    tolerance = max(abs(pq.now - then) / _SHARE, abs(half), timedelta(hours=1))
    label = asked_window.label if asked_window is not None else "then"
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]] = []
    for handle in (yield from analyte_handles("observation", found[1]["handle"])):
        latest = _row((yield ("get_by_index", {"records": handle, "index": -1})))
        before = yield ("filter_by_date", {"records": handle, "start": _iso(then - tolerance), "end": _iso(then)})
        after = yield ("filter_by_date", {"records": handle, "start": _iso(then), "end": _iso(then + tolerance)})
        near = []
        if before.get("count"):
            near.append(_row((yield ("get_by_index", {"records": before["handle"], "index": -1}))))
        if after.get("count"):
            near.append(_row((yield ("get_by_index", {"records": after["handle"], "index": 0}))))
        near = [r for r in near if r.get("ref") != latest.get("ref") and _when(r) is not None and _when(latest) is not None
                and _when(r) < _when(latest)]  # type: ignore[operator]
        if not near:
            pairs.append((latest, None, None))
            continue
        old = min(near, key=lambda r: abs(_when(r) - then))  # type: ignore[operator]
        (a, _), (b, _) = _row_value("observation", latest), _row_value("observation", old)
        diff = (yield ("calculate_difference", {"a": a, "b": b})) if _number(a) and _number(b) else None
        pairs.append((latest, old, diff))
    yield _final(pq, label, then, tolerance, pairs, asked.direction)
    return True


def _when(row: dict[str, Any]) -> datetime | None:
    from fhirqa.agent.backends.offline.plans import _instant

    return _instant(row.get("time"))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _final(pq: ParsedQuestion, label: str, then: datetime, tolerance: timedelta,
           pairs: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]],
           direction: str | None = None) -> Call:
    from fhirqa.agent.backends.offline.plans import _day, _row_value, _with_unit, final
    from fhirqa.agent.backends.offline.plans import label as name_of

    span = f"{tolerance.days} days" if tolerance.days >= 2 else f"{round(tolerance.total_seconds() / 3600)} hours"
    answers: list[Any] = []
    texts: list[str] = []
    units: set[str | None] = set()
    for latest, old, diff in pairs:
        name = name_of(latest, pq.entity)
        value, unit = _row_value("observation", latest)
        now_text = f"{name} {_with_unit(value, unit)} on {_day(latest.get('time'))}"
        if old is None:
            texts.append(f"{now_text}; no earlier value within {span} of {_day(then.isoformat())} ({label}) to compare.")
            continue
        old_value, _ = _row_value("observation", old)
        change = f": a change of {_with_unit(diff['difference'], unit)}" if diff else ""
        texts.append(f"{now_text}, against {_with_unit(old_value, unit)} on {_day(old.get('time'))} (the value nearest "
                     f"{_day(then.isoformat())}, {label}){change}.")
        if diff:
            answers.append(diff["difference"])
            units.add(unit)
    if not answers:
        return final([], " ".join(texts), status="no-data")
    if direction is not None:  # "is it higher than a year ago?": whether every part moved that way
        moved = all(d > 0 if direction == "up" else d < 0 for d in answers)
        return final([moved], f"{'Yes' if moved else 'No'}: " + " ".join(texts))
    return final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)
