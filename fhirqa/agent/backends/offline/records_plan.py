"""The offline plan for questions about care plans, care goals and imaging studies.

"# care plans she has had?", "What activities are in his Wound care care plan?", "Is there a blood pressure
goal?", "Has she had an ultrasound?", "What body site was imaged most recently?": the record views whose rows
are parts of one record (a plan's activities, a goal's targets, a study's series), so a plan, goal or study is
one ``ref``. Which words route a question here, which words name a column and which a kind of record is data
(``lexicon/record_views.json``); the answer comes from the same tools a model would call (get_resources,
count_values with distinct refs, extract_field_value, filter_by_value, get_by_index).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.catalog import view_info
from fhirqa.project import lexicon_file

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return lexicon_file("record_views.json")


@dataclass
class Route:
    """Where a question goes: the view, the name of one record (empty: the view as a whole), a kind of record
    by code (imaging modality), the column asked for, and whether only a kind word routed it."""

    view: str
    name: str = ""
    codes: list[str] = field(default_factory=list)
    kind_field: str | None = None
    asked: dict[str, Any] | None = None
    kind_only: bool = False
    active: bool = False


def _matches(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def route(pq: ParsedQuestion) -> Route | None:
    """The record view the question's words point at (care_plan, goal, imaging; allergy for one of its columns or
    kinds), or None."""
    text = pq.text.lower()
    data = _data()
    for view, spec in data["views"].items():
        kinds = spec.get("kinds") or {}
        kind_codes = [codes for pattern, codes in (kinds.get("codes") or {}).items() if re.search(pattern, text)]
        noun = _matches(spec["cues"], text)
        asked = next((f for f in data["fields"] if view in f["views"] and re.search(f["cue"], text)
                      and pq.intent in f.get("when", [pq.intent])), None)
        if spec.get("needs_field"):
            # a view with plans of its own is routed here only for a column or a kind it names
            if not ((asked or kind_codes) and (noun or (asked or {}).get("routes"))):
                continue
        elif not (noun or kind_codes):
            continue
        got = Route(view, kind_field=kinds.get("field") if kind_codes else None,
                    codes=[c for codes in kind_codes for c in codes], kind_only=not noun and bool(kinds.get("fallback")))
        got.asked = asked
        got.active = bool(re.search(data["active"], text))
        got.name = _leftover(pq.entity.lower(), spec, got.asked, kinds)
        if got.kind_only and got.name:
            return None  # "chest x-ray done?": a named procedure, answered where procedures are
        return got
    return None


def _leftover(entity: str, spec: dict[str, Any], asked: dict[str, Any] | None, kinds: dict[str, Any]) -> str:
    """The entity without the view's own words, the column words and filler: the name of one record, or ''."""
    for pattern in [*spec["strip"], *(kinds.get("codes") or {}).keys(), *([asked["cue"]] if asked else [])]:
        entity = re.sub(pattern, " ", entity, count=1)
    filler = set(_data()["filler"])
    words = [w for w in re.findall(r"[\w'/\-]+", entity) if w not in filler]
    return " ".join(words)


def plan_records(pq: ParsedQuestion, got: Route) -> Generator[Call, dict[str, Any], bool]:
    """Answer from one record view; returns False (having called only lookups) when a question named by a kind
    word alone ("an ultrasound?") finds nothing there, so the caller can try the other views."""
    from fhirqa.agent.backends.offline.plans import _ambiguous, _day, final, windowed

    spec = _data()["views"][got.view]
    noun = spec["noun"]
    info = view_info(got.view)
    kind = f"{'/'.join(got.codes)} " if got.codes else ""  # "medication allergies", "US imaging studies"
    what = f"'{got.name}' among the {kind}{noun}" if got.name else f"{kind}{noun}"
    args: dict[str, Any] = {"view": got.view}
    if got.codes:
        kind_arg = (spec.get("kinds") or {}).get("arg", "codes")
        args[kind_arg] = got.codes if kind_arg == "codes" else got.codes[0]
    if got.name and spec.get("match") == "resolve":
        args["item"] = got.name
    found = yield ("get_resources", args)
    if found.get("ambiguous"):
        yield _ambiguous(found, got.name)
        return True
    handle, count = found.get("handle"), found.get("count") or 0
    if count and got.name and spec.get("match") == "contains":
        found = yield ("filter_by_value", {"records": handle, "op": "contains", "value": got.name,
                                           "field": info.name_field})
        handle, count = found.get("handle") or handle, found.get("count") or 0
    if count and handle and pq.window is not None:
        filtered = yield from windowed(pq, str(handle))
        if filtered.get("count") is not None:
            handle, count = filtered.get("handle") or handle, filtered.get("count") or 0
    if not count and got.kind_only:
        return False
    asked = got.asked
    if not count:
        if pq.intent == "count":
            yield final([0], f"The record has no {what}; the count is 0.")
        elif pq.intent in ("exists", "active_check"):
            yield final([False], f"No: the record has no {what}.")
        elif not got.name and asked is None and pq.intent not in ("time_of", "time_since"):
            yield final([], f"The record has no {what}.")
        else:
            yield final([], f"The record has no {what}.", status="no-data")
        return True
    status_field = spec.get("status_field", "status")
    if pq.intent == "count":
        if got.active and not got.name:  # "how many active care plans?"
            active = yield ("filter_by_value", {"records": handle, "op": "==", "value": "active", "field": status_field})
            if not active.get("count"):
                yield final([0], f"No active {noun}; the count is 0.")
                return True
            handle, what = active.get("handle") or handle, f"active {noun}"
        counted = yield ("count_values", {"records": handle, "field": "ref", "distinct": True})
        yield final([counted["count"]], f"{counted['count']} {what} on record.")
        return True
    if asked is not None:
        if asked.get("all"):
            values = yield ("extract_field_value", {"records": handle, "field": asked["field"], "distinct": True})
            shown = [v["value"] for v in values.get("values", []) if isinstance(v, dict)]
            yield final([], f"{asked['label'].capitalize()} of {what}: {'; '.join(map(str, shown))}.",
                        list_from=handle, list_field=asked["field"])
            return True
        row = (yield ("get_by_index", {"records": handle, "index": 0 if asked.get("position") == "first" else -1})).get("row") or {}
        value = row.get(asked["field"])
        if value in (None, ""):
            yield final([], f"{row.get(info.name_field) or what}: no {asked['label']} recorded.", status="no-data")
            return True
        written = _day(value) if asked["field"].endswith("_time") else value
        yield final([value], f"{row.get(info.name_field) or what}: {asked['label']} {written}.")
        return True
    if got.name and (pq.intent == "active_check" or got.active):
        row = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
        status = row.get(status_field)
        yield final([status == "active"], f"{'Yes' if status == 'active' else 'No'}: {row.get(info.name_field)} is "
                    f"{status or 'without a status'} (since {_day(row.get(info.time_field))}).")
        return True
    if pq.intent in ("time_of", "time_since"):
        row = (yield ("get_by_index", {"records": handle, "index": 0 if pq.position == "first" else -1})).get("row") or {}
        when = row.get(info.time_field)
        if pq.intent == "time_since":
            offset = yield ("calculate_time_offset", {"start": when, "unit": pq.time_unit})
            yield final([offset["value"]], f"{offset['value']} {pq.time_unit} since {row.get(info.name_field)} on {_day(when)}.",
                        unit=pq.time_unit)
            return True
        word = "first" if pq.position == "first" else "last"
        yield final([when], f"The {word} of the {what} ({row.get(info.name_field)}) was on {_day(when)}.")
        return True
    if pq.intent == "exists" or (got.name and pq.yes_no):
        names = yield ("extract_field_value", {"records": handle, "field": info.name_field, "distinct": True})
        shown = [str(v["value"]) for v in names.get("values", []) if isinstance(v, dict)]
        span = found.get("time_range") or {}
        latest = f", most recently on {_day(span.get('latest'))}" if isinstance(span, dict) and span.get("latest") else ""
        yield final([True], f"Yes: {'; '.join(shown) or what}{latest}.")
        return True
    if got.active and not got.name:
        active = yield ("filter_by_value", {"records": handle, "op": "==", "value": "active", "field": status_field})
        if not active.get("count"):
            yield final([], f"No active {noun}.")
            return True
        handle = active.get("handle") or handle
    names = yield ("extract_field_value", {"records": handle, "field": info.name_field, "distinct": True})
    shown = [v["value"] for v in names.get("values", []) if isinstance(v, dict)]
    yield final([], f"{'Active ' if got.active else ''}{noun}: {'; '.join(map(str, shown))}.",
                list_from=handle, list_field=info.name_field)
    return True
