"""Growth and body measurements as patients and parents ask about them: "how much did she weigh at 11?", "how tall
was he when he turned 13?", "her height at her 6 year checkup", "how much did I weigh last time, in pounds?", "how
much weight have I gained in the past year?", "how much has he grown?".

Definitions (docs/questions.md, "Patient and parent wording"):

- **At an age** ("at 11", "when she turned 13", "at her 6 year checkup", "at 9 months"): the measurement nearest
  the birthday of that age (birth date + N years or months), within half a year of it for years (half a month for
  months). Growth is charted at the visit near each birthday, so the visit nearest it is the value "at that age";
  the answer names the day and the birthday.
- **At the last check-up**: the latest measurement taken at the latest check-up encounter (on its day when the
  measurement is not linked to it).
- **Gained / lost / grown over a window**: the latest minus the first measurement in the window (the whole record
  without one), said as a size with the verb that matches its sign.
- **A unit asked** ("in pounds", "in inches"): the record's value converted by the units table, never a change.

The words are data (``lexicon/patient_voice.json`` ``growth``); the parser's window and unit are reused.
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
Plan = Generator[Call, dict[str, Any], None]

_UNIT_WORDS = {"pounds": "lb", "pound": "lb", "lbs": "lb", "lb": "lb", "kilos": "kg", "kilograms": "kg", "kg": "kg",
               "inches": "in", "inch": "in", "centimeters": "cm", "cm": "cm", "feet": "ft", "foot": "ft", "meters": "m"}


@dataclass
class Growth:
    """What a growth question asks: the item, and either an age, the last check-up, a gain, or a plain value."""

    item: str  # the record's vital name (Body Weight, Body Height, Body Mass Index)
    kind: str  # "age" | "checkup" | "gain" | "value"
    amount: int = 0  # the age asked (kind "age")
    unit: str = "years"  # years | months (kind "age")
    direction: str | None = None  # "up" | "down": the verb asked (kind "gain")
    asked_unit: str | None = None  # "lb", "in" …: the unit the answer is asked in
    since_checkup: bool = False  # "gained since her last checkup": from the check-up's measurement to the latest


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return dict(lexicon_file("patient_voice.json").get("growth") or {})


def _words(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def _text(question: str) -> str:
    text = question.lower().replace("’", "'")
    text = re.sub(r"\(([^)]*)\)", r" \1 ", text)  # "(cm)": an aside still says the unit
    return " ".join(re.sub(r"[?!,;]", " ", text).split())


_AGE_UNIT = r"(?P<u>years?|yrs?|y/?o|months?|mos?|mo)"


def growth_question(pq: ParsedQuestion) -> Growth | None:
    """The growth question ``pq`` asks, or None when it is another question."""
    spec = _spec()
    if not spec:
        return None
    text = _text(pq.text)
    items = [(item, re.search(rf"\b(?:{_words(words)})\b", text)) for item, words in spec["items"].items()]
    named = [(item, m) for item, m in items if m is not None]
    if not named:
        return None
    if re.search(r"\b(?:since|after) (?:i|he|she|they) (?:started|began)\b|\b(?:highest|lowest|average|most|least|ever|"
                 r"how many times|how often|trend|up or down|higher or lower)\b", text):
        return None  # extremes, counts and trends over the record belong to the general plans
    unit_word = re.search(rf"\bin ({_words(list(_UNIT_WORDS))})\b", text)
    asked_unit = _UNIT_WORDS[unit_word.group(1)] if unit_word else None
    gain = _gain(text, spec)
    if gain is not None:
        item = "Body Height" if re.search(r"\b(?:grown|grow|grew|taller)\b", text) and not re.search(
            r"\b(?:weight|weigh\w*|heavier|kilos|pounds|lbs)\b", text) else named[0][0]
        if item == "Body Height" and re.search(r"\bweight\b", text):
            item = "Body Weight"
        counted = re.search(rf"\bhow many ({_words(list(_UNIT_WORDS))})\b", text)
        since = re.search(rf"\bsince (?:my|his|her|their|the) (?:last|latest|most recent) (?:{_words(spec['checkup_words'])})\b", text)
        return Growth(item, "gain", direction=gain, since_checkup=since is not None,
                      asked_unit=asked_unit or (_UNIT_WORDS[counted.group(1)] if counted else None))
    item = _asked_item(text, named)
    age = _age(text.replace(unit_word.group(0), " ").strip() if unit_word else text, spec)
    if age is not None:
        return Growth(item, "age", amount=age[0], unit=age[1], asked_unit=asked_unit)
    if re.search(rf"\b(?:at|during|from) (?:my|his|her|their|the) (?:last|latest|most recent) (?:{_words(spec['checkup_words'])})\b", text):
        return Growth(item, "checkup", asked_unit=asked_unit)
    if re.search(r"\b(?:visit|appointment|admission|stay|discharge)\b", text):
        return None  # "weight at the last visit, in lbs": a visit of any kind is the general plans' window
    if asked_unit and re.search(r"\bhow (?:much|tall|heavy)\b|\bwhat (?:was|is|did)\b", text):
        return Growth(item, "value", asked_unit=asked_unit)
    return None


def _asked_item(text: str, named: list[tuple[str, re.Match[str]]]) -> str:
    """The measurement asked: BMI when it is named, else the one a verb or noun names first ("how tall … in
    inches": height; "weight … in pounds": weight)."""
    for item, _ in named:
        if item == "Body Mass Index":
            return item
    verbs = [(m.start(), item) for item, m in named if not re.fullmatch(r"(?:kilos|kilograms|kg|pounds|lbs|inches|"
                                                                       r"centimeters|cm|feet)", m.group(0))]
    return min(verbs)[1] if verbs else named[0][0]


def _gain(text: str, spec: dict[str, Any]) -> str | None:
    """"up" or "down" when the question asks how much was gained, lost or grown; None otherwise."""
    if not re.search(r"\bhow (?:much|many)\b", text):
        return None
    for direction, verbs in spec["gain_verbs"].items():
        if re.search(rf"\b(?:have|has|had|did|do|does)\b.*\b(?:{_words(verbs)})\b", text):
            return str(direction)
    return None


def _age(text: str, spec: dict[str, Any]) -> tuple[int, str] | None:
    """(N, "years"|"months") of "at 11", "at age 11", "when she turned 13", "at her 6 year checkup"."""
    visits = _words(spec["checkup_words"])
    for pattern in (
        rf"\bwhen (?:i|he|she|they|\S+) (?:turned|was|were) (?P<n>\d{{1,2}})(?:[\s-]*{_AGE_UNIT})?\b",
        rf"\bat (?:(?:my|his|her|their|the)\s+)?(?P<n>\d{{1,2}})(?:[\s-]*{_AGE_UNIT})?(?:[\s-]*old)?[\s-]*(?:{visits})\b",
        rf"\b(?:at|aged?|at age) (?P<n>\d{{1,2}})(?:\s*{_AGE_UNIT})?(?:\s*old)?(?=\s*$)",
        rf"\bat (?:the )?age (?:of )?(?P<n>\d{{1,2}})(?:\s*{_AGE_UNIT})?\b",
    ):
        m = re.search(pattern, text)
        if m:
            unit = m.groupdict().get("u") or "years"
            return int(m.group("n")), "months" if unit.startswith("mo") else "years"
    return None


def plan_growth(pq: ParsedQuestion, growth: Growth) -> Plan:
    """Answer a growth question with tool calls (each value read is cited)."""
    from fhirqa.agent.backends.offline.plans import final

    found = yield ("get_resources", {"view": "observation", "item": growth.item, "numeric": True})
    if not found.get("count"):
        yield final([], f"The record has no {growth.item} measurement.", status="no-data")
        return
    if growth.kind == "age":
        yield from _at_age(pq, growth, found["handle"])
    elif growth.kind == "checkup":
        yield from _at_checkup(pq, growth, found["handle"])
    elif growth.kind == "gain":
        yield from _gained(pq, growth, found["handle"])
    else:
        row = (yield ("get_by_index", {"records": found["handle"], "index": -1})).get("row") or {}
        yield _value_final(growth, row, "The most recent")


def _shown(growth: Growth, value: Any, unit: str | None) -> tuple[float, str | None, str]:
    """(answer value, its unit, the words said): in the asked unit when it converts."""
    from fhirqa.agent.backends.offline.plans import _with_unit
    from fhirqa.agent.units import convert as _convert
    from fhirqa.agent.units import unit_key as _unit_key

    if growth.asked_unit and unit and _unit_key(unit) != _unit_key(growth.asked_unit) \
            and (converted := _convert(float(value), unit, growth.asked_unit)) is not None:
        return converted, growth.asked_unit, f"{_with_unit(converted, growth.asked_unit)} ({_with_unit(value, unit)})"
    return value, unit, _with_unit(value, unit)


def _value_final(growth: Growth, row: dict[str, Any], lead: str, why: str = "") -> Call:
    from fhirqa.agent.backends.offline.plans import _day, final

    value, unit, said = _shown(growth, row.get("value"), row.get("unit"))
    return final([value], f"{lead} {row.get('name') or growth.item}: {said} on {_day(row.get('time'))}{why}.", unit=unit)


def _birthday(birth: datetime, amount: int, unit: str) -> datetime:
    """The day ``amount`` years (months) after ``birth`` (Feb 29 → Feb 28 in a common year)."""
    months = amount * 12 if unit == "years" else amount
    year, month = divmod(birth.month - 1 + months, 12)
    year += birth.year
    import calendar

    return birth.replace(year=year, month=month + 1, day=min(birth.day, calendar.monthrange(year, month + 1)[1]))


def _at_age(pq: ParsedQuestion, growth: Growth, handle: str) -> Plan:
    """The measurement nearest the birthday of the age asked, within the tolerance of ``age_tolerance_days``."""
    from fhirqa.agent.backends.offline.plans import _row, final

    person = yield ("get_resources", {"view": "patient", "fields": ["name", "birth_date"]})
    born = _row((yield ("get_by_index", {"records": person["handle"], "index": 0, "order_by": "birth_date"}))) \
        if person.get("count") else {}
    if not born.get("birth_date"):
        yield final([], "The record has no birth date, so an age cannot be placed in time.", status="no-data")
        return
    birth = datetime.fromisoformat(str(born["birth_date"])[:10])
    target = _birthday(birth, growth.amount, growth.unit)
    reach = timedelta(days=int(_spec()["age_tolerance_days"][growth.unit]))
    age = f"{growth.amount} {growth.unit[:-1] if growth.amount == 1 else growth.unit}"
    if pq.now is not None and target > pq.now.replace(tzinfo=None):
        yield final([], f"The patient (born {birth.date()}) has not reached {age} yet.", status="no-data")
        return
    after = yield ("filter_by_date", {"records": handle, "start": target.date().isoformat(),
                                      "end": (target + reach).date().isoformat()})
    before = yield ("filter_by_date", {"records": handle, "start": (target - reach).date().isoformat(),
                                       "end": (target - timedelta(days=1)).date().isoformat()})
    rows = []
    if after.get("count"):
        rows.append(_row((yield ("get_by_index", {"records": after["handle"], "index": 0}))))
    if before.get("count"):
        rows.append(_row((yield ("get_by_index", {"records": before["handle"], "index": -1}))))
    if not rows:
        yield final([], f"No {growth.item} was measured within {reach.days} days of the day the patient turned {age} "
                    f"({target.date()}).", status="no-data")
        return

    def distance(row: dict[str, Any]) -> float:
        when = datetime.fromisoformat(str(row.get("time")))
        return abs((when.replace(tzinfo=None) - target).total_seconds())

    row = min(rows, key=distance)
    yield _value_final(growth, row, f"At {age} old,", f" (the measurement nearest the day the patient turned {age}, {target.date()})")


def checkup_visits() -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The check-up encounters (a type name holding a word of ``patient_voice.json`` ``checkup_types``), as one
    record set: its result (``handle``, ``count``), count 0 when there are none."""
    from fhirqa.project import lexicon_file

    visits = yield ("get_resources", {"view": "encounter"})
    if not visits.get("count"):
        return {"count": 0}
    handles = []
    for word in (lexicon_file("patient_voice.json").get("checkup_types") or {}).get("words", []):
        kept = yield ("filter_by_value", {"records": visits["handle"], "op": "contains", "value": word, "field": "type_name"})
        if kept.get("count"):
            handles.append(kept["handle"])
    if not handles:
        return {"count": 0}
    if len(handles) == 1:
        return {"handle": handles[0], "count": 1}
    return dict((yield ("combine_evidence", {"handles": handles})))


def _checkup_row(growth: Growth, handle: str) -> Generator[Call, dict[str, Any], tuple[dict[str, Any], dict[str, Any]] | str]:
    """(the measurement taken at the latest check-up, that visit): linked to the encounter, else on its day; or why
    there is none."""
    from fhirqa.agent.backends.offline.plans import _day, _row

    checkups = yield from checkup_visits()
    if not checkups.get("count"):
        return "The record has no check-up visit."
    visit = _row((yield ("get_by_index", {"records": checkups["handle"], "index": -1, "order_by": "start_time"})))
    linked = yield ("filter_by_value", {"records": handle, "op": "==", "value": visit.get("ref"), "field": "encounter_ref"})
    if not linked.get("count"):
        day = _day(visit.get("start_time"))
        linked = yield ("filter_by_date", {"records": handle, "start": day, "end": day})
    if not linked.get("count"):
        return f"No {growth.item} was recorded at the last check-up ({_day(visit.get('start_time'))})."
    return _row((yield ("get_by_index", {"records": linked["handle"], "index": -1}))), visit


def _at_checkup(pq: ParsedQuestion, growth: Growth, handle: str) -> Plan:
    """The measurement taken at the latest check-up (linked to that encounter, else on its day)."""
    from fhirqa.agent.backends.offline.plans import final

    got = yield from _checkup_row(growth, handle)
    if isinstance(got, str):
        yield final([], got, status="no-data")
        return
    row, visit = got
    yield _value_final(growth, row, "At the last check-up,", f" ({visit.get('type_name') or 'check-up'})")


def _gained(pq: ParsedQuestion, growth: Growth, handle: str) -> Plan:
    """Latest minus first measurement in the window: its size, said with the verb of its sign."""
    from fhirqa.agent.backends.offline.plans import _day, _row, _with_unit, final, windowed

    if growth.since_checkup:
        got = yield from _checkup_row(growth, handle)
        if isinstance(got, str):
            yield final([], got, status="no-data")
            return
        first, visit = got
        last = _row((yield ("get_by_index", {"records": handle, "index": -1})))
        window = f" since the last check-up ({_day(visit.get('start_time'))})"
        if last.get("ref") == first.get("ref"):
            yield final([], f"No {growth.item} was measured after the last check-up ({_day(first.get('time'))}).",
                        status="no-data")
            return
    else:
        filtered = yield from windowed(pq, handle)
        scope = filtered.get("handle") or handle
        window = f" {pq.window.label}" if pq.window is not None else " over the whole record"
        if filtered.get("count") is not None and filtered["count"] < 2:
            yield final([], f"Fewer than two {growth.item} measurements{window}: no change to measure.", status="no-data")
            return
        first = _row((yield ("get_by_index", {"records": scope, "index": 0})))
        last = _row((yield ("get_by_index", {"records": scope, "index": -1})))
    diff = yield ("calculate_difference", {"a": last.get("value"), "b": first.get("value")})
    change = float(diff["difference"])
    size, unit, said = _shown(growth, abs(change), last.get("unit"))
    if growth.item == "Body Height":
        verb = "grew" if change > 0 else "shrank" if change < 0 else "did not change"
    else:
        verb = "gained" if change > 0 else "lost" if change < 0 else "stayed the same"
    asked = {"up": "gained", "down": "lost"}.get(growth.direction or "")
    note = " (a loss, not a gain)" if asked == "gained" and change < 0 and growth.item != "Body Height" else \
        " (a gain, not a loss)" if asked == "lost" and change > 0 else ""
    yield final([size], f"{verb.capitalize()} {said}{window}{note}: {growth.item} went from "
                f"{_with_unit(first.get('value'), first.get('unit'))} on {_day(first.get('time'))} to "
                f"{_with_unit(last.get('value'), last.get('unit'))} on {_day(last.get('time'))}.", unit=unit)
