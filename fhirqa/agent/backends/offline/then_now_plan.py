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
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_SHARE = 3  # the tolerance is the distance back over this (a year back: four months either side)


@lru_cache(maxsize=1)
def _spec() -> tuple[re.Pattern[str], frozenset[str]]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("value_series.json")["then_and_now"]
    return re.compile("|".join(f"(?:{p})" for p in spec["asks"])), frozenset(spec["filler"])


def then_now_asked(pq: ParsedQuestion) -> datetime | None:
    """The past instant the latest value is compared with, when the question asks so; None otherwise."""
    if pq.intent != "value" or pq.window is None or pq.window.start is None or not pq.entity or pq.now is None:
        return None
    asks, _ = _spec()
    if not asks.search(" ".join(pq.text.lower().split())):
        return None
    start = _aware(pq.window.start, pq.now)
    end = _aware(pq.window.end, pq.now) if pq.window.end is not None else pq.now
    if abs((end - pq.now).total_seconds()) < 60:  # a span up to now ("last year"): its start is the time back
        return start
    return start + (end - start) / 2


def _aware(moment: datetime, now: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=now.tzinfo)


def plan_then_now(pq: ParsedQuestion, then: datetime) -> Generator[Call, dict[str, Any], bool]:
    """Latest value vs the value nearest ``then``, per analyte; False when the item is not a result."""
    from fhirqa.agent.backends.offline.plans import _iso, _row, _row_value, analyte_handles, find_records

    _, filler = _spec()
    pq.entity = " ".join(w for w in pq.entity.split() if w not in filler) or pq.entity
    asked_window, pq.window = pq.window, None  # the window names the time back, not a filter on the latest value
    found = yield from find_records(pq, views=["observation"], numeric=True)
    if found is None or not found[1].get("count") or found[1].get("ambiguous"):
        pq.window = asked_window
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
    yield _final(pq, label, then, tolerance, pairs)
    return True


def _when(row: dict[str, Any]) -> datetime | None:
    from fhirqa.agent.backends.offline.plans import _instant

    return _instant(row.get("time"))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _final(pq: ParsedQuestion, label: str, then: datetime, tolerance: timedelta,
           pairs: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]]) -> Call:
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
    return final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)
