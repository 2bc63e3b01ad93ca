"""The offline plan for "is the goal met?": the latest measurement against the target the Goal states.

"A1c goal met?", "is his BP at goal?", "blood sugar at goal (<108)?": a goal on file is not an answer. The Goal's
target is read from its structured target (``target_value`` with its comparator, ``target_low``/``target_high``),
else from a number in its description ("Hemoglobin A1c total in Blood < 7.0", "Maintain blood pressure below
140/90 mmHg"); what it measures from ``target_measure``, else from the description's words before the comparison.
The latest result of that measure at ``now`` is compared with it, and the answer says what was compared. No
matching goal, or a goal without a target or without a measurement, is said as such (no-data), never Yes. The words
(comparators, the verbs before a measure, measures read as a pair like systolic/diastolic) are data:
``lexicon/record_views.json``, ``views.goal.attainment``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

Call = tuple[str, dict[str, Any]]


@dataclass
class Target:
    """What a goal aims at: the measure, and one bound (or a low-high range) per measured part."""

    measure: str
    bounds: list[tuple[str, float, float | None]]  # (comparator or 'range', value or low, high)
    source: str  # 'target' (structured) or 'description' (a number in the text)


def target_of(row: dict[str, Any], spec: dict[str, Any]) -> Target | None:
    """The goal row's target: the structured one when the Goal states it, else a comparison in its description;
    None when it has neither."""
    measure = str(row.get("target_measure") or "")
    name = str(row.get("name") or "")
    if row.get("target_value") is not None:
        op = row.get("target_comparator") or "<="
        return Target(measure or _measure_words(name, spec), [(op, float(row["target_value"]), None)], "target")
    if row.get("target_low") is not None or row.get("target_high") is not None:
        low, high = row.get("target_low"), row.get("target_high")
        bound = ("range", float(low), float(high)) if low is not None and high is not None else (
            (">=", float(low), None) if low is not None else ("<=", float(high), None))  # type: ignore[arg-type]
        return Target(measure or _measure_words(name, spec), [bound], "target")
    found = _comparison(name, spec)
    if found is None:
        return None
    op, numbers, start = found
    return Target(measure or _measure_words(name[:start], spec), [(op, n, None) for n in numbers], "description")


def _comparators(spec: dict[str, Any]) -> list[tuple[str, str]]:
    words = spec["comparators"]
    return sorted(words.items(), key=lambda kv: -len(kv[0]))  # "less than" before "<"


def _comparison(text: str, spec: dict[str, Any]) -> tuple[str, list[float], int] | None:
    """The first '<comparator> <number>[/<number>]' in ``text``: the comparator, the numbers, where it starts."""
    alternatives = "|".join(re.escape(word) for word, _ in _comparators(spec))
    m = re.search(rf"(?<![\w])({alternatives})\s*(\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?", text, re.I)
    if m is None:
        return None
    op = dict(_comparators(spec))[m.group(1).lower()] if m.group(1).lower() in spec["comparators"] else m.group(1)
    numbers = [float(m.group(2))] + ([float(m.group(3))] if m.group(3) else [])
    return op, numbers, m.start()


def _measure_words(text: str, spec: dict[str, Any]) -> str:
    """What a description measures: its words before the comparison, without the leading verb ('Maintain')."""
    return re.sub(spec["verbs"], "", text.strip(), flags=re.I).strip(" :,-")


def meets(value: float, bound: tuple[str, float, float | None]) -> bool:
    """Whether ``value`` satisfies one bound of a target."""
    op, number, high = bound
    if op == "range":
        return number <= value <= (high if high is not None else value)
    return {"<": value < number, "<=": value <= number, ">": value > number, ">=": value >= number}.get(op, False)


def _fmt(value: float) -> str:
    return f"{value:g}"


def plan_attainment(name: str, spec: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """Whether the goal named ``name`` (words of its description; '' for any goal) is met by the latest
    measurement."""
    from fhirqa.agent.backends.offline.plans import _day, final

    rules = spec["attainment"]
    found = yield ("get_resources", {"view": "goal"})
    handle, count = found.get("handle"), found.get("count") or 0
    words = name.split() if count else []
    everything = handle
    for word in words:
        narrowed = yield ("filter_by_value", {"records": handle, "op": "contains", "value": word, "field": "name"})
        handle, count = narrowed.get("handle") or handle, narrowed.get("count") or 0
        if not count:
            break
    for word in words if not count and len(words) > 1 else []:
        # a word the parser garbled ("the A1c < 7 goal" -> "a1c oal") must not hide the goal another word names
        narrowed = yield ("filter_by_value", {"records": everything, "op": "contains", "value": word, "field": "name"})
        if narrowed.get("count"):
            handle, count = narrowed.get("handle") or everything, narrowed["count"]
            break
    what = f"{name} goal" if name else "goal"
    if not count:
        yield final([], f"No {what} is on file, so whether one is met cannot be said.", status="no-data")
        return
    row = (yield ("get_by_index", {"records": handle, "index": -1, "order_by": "name"})).get("row") or {}
    goal = row.get("name") or what
    target = target_of(row, rules)
    if target is None:
        yield final([], f"The goal '{goal}' states no measurable target, so whether it is met cannot be said.",
                    status="no-data")
        return
    measures = rules["pairs"].get(target.measure.lower().strip(), [target.measure])
    if len(measures) != len(target.bounds):
        measures = [target.measure] * len(target.bounds)
    compared: list[str] = []
    met = True
    for measure, bound in zip(measures, target.bounds, strict=True):
        results = yield ("get_resources", {"view": "observation", "item": measure, "numeric": True})
        if not results.get("count") or results.get("ambiguous"):
            yield final([], f"No {measure} result on file to compare with the goal '{goal}'.", status="no-data")
            return
        latest = (yield ("get_by_index", {"records": results["handle"], "index": -1})).get("row") or {}
        value = latest.get("value")
        if value is None:
            yield final([], f"The latest {measure} has no numeric value to compare with the goal '{goal}'.",
                        status="no-data")
            return
        ok = meets(float(value), bound)
        met = met and ok
        op, number, high = bound
        wanted = f"{_fmt(number)}-{_fmt(high)}" if op == "range" and high is not None else f"{op} {_fmt(number)}"
        unit = f" {latest['unit']}" if latest.get("unit") else ""
        compared.append(f"{latest.get('name') or measure} {_fmt(float(value))}{unit} on {_day(latest.get('time'))} "
                        f"{'meets' if ok else 'does not meet'} {wanted}")
    yield final([met], f"{'Yes' if met else 'No'}: {'; '.join(compared)} (goal: {goal}).")
