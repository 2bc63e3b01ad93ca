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

from fhirqa.agent.backends.offline.goal_attainment_plan import plan_attainment
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
    member: str = ""  # "does the X plan include Y?": Y, looked for among the plan's parts
    in_progress: bool = False  # "open CP activities?": the parts still in progress, of the records in force
    dated: bool = False  # "last imaging?": the date of the latest record, not its name
    over_notes: bool = False  # a coded column of a visit ("reason for the last visit?") is read before its note
    attainment: bool = False  # "A1c goal met?": the latest measurement against the goal's target
    kind_check: bool = False  # "last imaging an x-ray?": whether the latest record is of the kind named
    by_item: bool = False  # a word naming one record routed the question ("uses a CPAP?": the device view)


def view_spec(view: str) -> dict[str, Any]:
    """The words of one record view (``lexicon/record_views.json``), read-only."""
    return dict(_data()["views"][view])


def _matches(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def route(pq: ParsedQuestion) -> Route | None:
    """The record view the question's words point at (care_plan, goal, imaging; allergy and encounter for one of
    their columns or kinds), or None."""
    text = pq.text.lower()
    data = _data()
    for view, spec in data["views"].items():
        kinds = spec.get("kinds") or {}
        kind_codes = [codes for pattern, codes in (kinds.get("codes") or {}).items() if re.search(pattern, text)]
        noun = _matches(spec["cues"], text)
        asked = next((f for f in data["fields"] if view in f["views"] and re.search(f["cue"], text)
                      and pq.intent in f.get("when", [pq.intent]) and not re.search(f.get("unless", "(?!)"), text)), None)
        named = _matches(spec.get("name_cues", []), text)  # "last visit for X": X names the records
        item = _matches(spec.get("items", []), text)  # "uses a CPAP?": a word naming one record of the view
        elsewhere = _matches(spec.get("items_elsewhere", []), text)  # "pacemaker?": also charted elsewhere
        if (item or elsewhere) and not noun and re.search(spec.get("unless", "(?!)"), text):
            item = elsewhere = False  # "when was the pacemaker placed?": the placement is a procedure
        if spec.get("needs_field"):
            # a view with plans of its own is routed here only for a column or a kind it names
            if not ((asked or kind_codes or named) and (noun or (asked or {}).get("routes"))):
                continue
        elif not (noun or kind_codes or item or elsewhere or (asked or {}).get("routes")):
            continue
        got = Route(view, kind_field=kinds.get("field") if kind_codes else None,
                    codes=[c for codes in kind_codes for c in codes],
                    kind_only=not noun and (bool(kinds.get("fallback")) or (elsewhere and not item)))
        got.by_item = item or elsewhere
        got.asked = asked
        got.active = bool(re.search(data["active"], text))
        entity = _with_aliases(pq.entity.lower(), text, spec)
        parts = next((m for m in (re.search(p, entity) for p in spec.get("member", [])) if m), None)
        if parts is not None and asked is not None and asked.get("all"):
            # "does the diabetes plan include exercise therapy?": the plan is named, and one of its parts
            got.member = _leftover(parts.group("item"), {"strip": []}, None, {})
            entity = parts.group("plan")
        attainment = spec.get("attainment")
        if attainment and re.search(attainment["cue"], text):
            got.attainment, got.asked = True, None
            entity = re.sub(attainment["strip"], " ", entity)
        got.name = _leftover(entity, spec, got.asked, kinds)
        if kind_codes and kinds.get("latest_is") and re.search(kinds["latest_is"], text):
            got.kind_check, got.kind_only, got.name = True, False, ""
        if spec.get("name_cues") and not named:
            got.name = ""  # only "visit for X" names encounters; other words are the column asked or the class
        progress = spec.get("in_progress")
        got.in_progress = bool(progress and asked is not None and asked.get("all") and not got.member
                               and re.search(progress["cue"], text))
        got.dated = bool(spec.get("dated") and asked is None and re.search(data["dated"], text))
        got.over_notes = bool(spec.get("over_notes") and (asked is not None or named)
                              and not re.search(spec.get("note_words", "(?!)"), text))
        if got.kind_only and got.name and not got.by_item:
            return None  # "chest x-ray done?": a named procedure, answered where procedures are
        return got
    return None


def _with_aliases(entity: str, text: str, spec: dict[str, Any]) -> str:
    """The entity with the view's shorthand spelt out ("DM self mgmt" -> "diabetes self management"); a shorthand
    the parser dropped from the entity (PT, read as 'patient') comes back when it stands right before the
    view's noun ("PT plan")."""
    for pattern, means in (spec.get("aliases") or {}).items():
        if not re.search(pattern, entity) and spec.get("alias_before") and re.search(
                f"(?:{pattern}){spec['alias_before']}", text):
            entity = f"{means} {entity}"
        entity = re.sub(pattern, means, entity)
    return entity


def _leftover(entity: str, spec: dict[str, Any], asked: dict[str, Any] | None, kinds: dict[str, Any]) -> str:
    """The entity without the view's own words, the column words and filler: the name of one record, or ''."""
    # the kind words first: one may lean on a view word the strip removes ("US imaging")
    for pattern in [*(kinds.get("codes") or {}).keys(), *spec["strip"], *([asked["cue"]] if asked else [])]:
        entity = re.sub(pattern, " ", entity, count=1)
    filler = set(_data()["filler"])
    words = [w for w in re.findall(r"[\w'/\-]+", entity) if w not in filler]
    return " ".join(words)


def plan_records(pq: ParsedQuestion, got: Route) -> Generator[Call, dict[str, Any], bool]:
    """Answer from one record view; returns False (having called only lookups) when a question named by a kind
    word alone ("an ultrasound?") finds nothing there, so the caller can try the other views."""
    from fhirqa.agent.backends.offline.plans import _ambiguous, _day, final, windowed

    spec = _data()["views"][got.view]
    if got.attainment:
        yield from plan_attainment(got.name, spec)
        return True
    if got.kind_check:
        yield from _latest_is_kind(pq, got, spec)
        return True
    noun = spec["noun"]
    info = view_info(got.view)
    intent = pq.intent
    if spec.get("presence") and got.name and got.asked is None and intent == "value":
        intent = "exists"  # "uses a CPAP?", "walker?": whether the record holds one (a device has no value)
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
        # every word of the name, each inside the record's name: the question drops the words a name keeps
        # ("concussion with no loss of consciousness" -> "concussion no loss consciousness")
        for word in got.name.split():
            found = yield ("filter_by_value", {"records": handle, "op": "contains", "value": word,
                                               "field": spec.get("match_field") or info.name_field})
            handle, count = found.get("handle") or handle, found.get("count") or 0
            if not count:
                break
    if count and spec.get("class_field") and pq.encounter_class:  # "reason for the last ER visit": that class only
        found = yield ("filter_by_value", {"records": handle, "op": "==", "value": pq.encounter_class,
                                           "field": spec["class_field"]})
        handle, count = found.get("handle") or handle, found.get("count") or 0
        what = f"{_CLASS_WORDS.get(pq.encounter_class, pq.encounter_class)} {what}"
    if count and handle and pq.window is not None:
        filtered = yield from windowed(pq, str(handle))
        if filtered.get("count") is not None:
            handle, count = filtered.get("handle") or handle, filtered.get("count") or 0
    if not count and (got.kind_only or (got.over_notes and _note_may_say(pq))):
        return False  # nothing coded here: the other views, or the visit's note, may answer
    asked = got.asked
    if not count:
        if intent == "count" and not (asked or {}).get("value"):
            yield final([0], f"The record has no {what}; the count is 0.")
        elif intent in ("exists", "active_check"):
            yield final([False], f"No: the record has no {what}.")
        elif not got.name and asked is None and intent not in ("time_of", "time_since") and not got.dated:
            yield final([], f"The record has no {what}.")
        else:
            yield final([], f"The record has no {what}.", status="no-data")
        return True
    status_field = spec.get("status_field", "status")
    if intent == "count" and not (asked or {}).get("value"):
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
            yield from _parts(pq, got, spec, str(handle), what)
            return True
        if asked.get("latest_with"):  # "who saw her last?": the latest record that names one
            named = yield ("filter_by_value", {"records": handle, "op": "exists", "field": asked["field"]})
            if not named.get("count"):
                if got.over_notes and _note_may_say(pq):
                    return False  # no coded payer or clinician: a note may name one
                yield final([], f"No {asked['label']} recorded for the {what}.", status="no-data")
                return True
            handle = named.get("handle") or handle
        row = (yield ("get_by_index", {"records": handle, "index": 0 if asked.get("position") == "first" else -1})).get("row") or {}
        value = row.get(asked["field"])
        if value in (None, "") and got.over_notes and _note_may_say(pq):
            return False  # the visit does not code it: its note may say ("reason for the last visit?")
        on_day = f" on {_day(row.get(info.time_field))}" if row.get(info.time_field) and asked["field"] != info.time_field else ""
        if value in (None, ""):
            yield final([], f"{row.get(info.name_field) or what}{on_day}: no {asked['label']} recorded.", status="no-data")
            return True
        written = _day(value) if asked["field"].endswith("_time") else value
        yield final([value], f"{row.get(info.name_field) or what}{on_day}: {asked['label']} {written}.")
        return True
    if got.name and (intent == "active_check" or got.active) and not info.time_field:
        # no time to say which record is the latest: any of them in force ("is the wheelchair active?")
        active = yield ("filter_by_value", {"records": handle, "op": "==", "value": "active", "field": status_field})
        states = yield ("extract_field_value", {"records": active.get("handle") if active.get("count") else handle,
                                                "field": status_field, "distinct": True})
        shown = [str(v["value"]) for v in states.get("values", []) if isinstance(v, dict)]
        yield final([bool(active.get("count"))], f"{'Yes' if active.get('count') else 'No'}: '{got.name}' among the "
                    f"{noun} is {' / '.join(shown) or 'without a status'}.")
        return True
    if got.name and (intent == "active_check" or got.active):
        row = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
        status = row.get(status_field)
        since = f" (since {_day(row.get(info.time_field))})" if info.time_field and row.get(info.time_field) else ""
        yield final([status == "active"], f"{'Yes' if status == 'active' else 'No'}: {row.get(info.name_field)} is "
                    f"{status or 'without a status'}{since}.")
        return True
    if (intent in ("time_of", "time_since") or (got.dated and intent == "value" and not pq.yes_no)) and not info.time_field:
        # "when did she get her wheelchair?": a device records no date of use (its manufacture date is none)
        names = yield ("extract_field_value", {"records": handle, "field": info.name_field, "distinct": True})
        shown = [str(v["value"]) for v in names.get("values", []) if isinstance(v, dict)]
        yield final([], f"{'; '.join(shown) or what}: on record without a date; the record gives no date of use "
                        f"for {noun}.", status="no-data")
        return True
    if intent in ("time_of", "time_since") or (got.dated and intent == "value" and not pq.yes_no):
        row = (yield ("get_by_index", {"records": handle, "index": 0 if pq.position == "first" else -1})).get("row") or {}
        when = row.get(info.time_field)
        if intent == "time_since":
            offset = yield ("calculate_time_offset", {"start": when, "unit": pq.time_unit})
            yield final([offset["value"]], f"{offset['value']} {pq.time_unit} since {row.get(info.name_field)} on {_day(when)}.",
                        unit=pq.time_unit)
            return True
        word = "first" if pq.position == "first" else "last"
        yield final([when], f"The {word} of the {what} ({row.get(info.name_field)}) was on {_day(when)}.")
        return True
    if intent == "exists" or (got.name and pq.yes_no):
        names = yield ("extract_field_value", {"records": handle, "field": info.name_field, "distinct": True})
        shown = [str(v["value"]) for v in names.get("values", []) if isinstance(v, dict)]
        span = found.get("time_range") or {}
        latest = f", most recently on {_day(span.get('latest'))}" if isinstance(span, dict) and span.get("latest") else ""
        # "any devices documented? which ones": the list itself answers
        yield final(shown if _asks_which_too(pq.text) and shown else [True], f"Yes: {'; '.join(shown) or what}{latest}.")
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


# Readable names of the encounter classes a question can name ("reason for the last ER visit")
_CLASS_WORDS = {"EMER": "emergency", "IMP": "inpatient", "AMB": "ambulatory", "OBSENC": "observation"}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _parts(pq: ParsedQuestion, got: Route, spec: dict[str, Any], handle: str, what: str) -> Generator[Call, dict[str, Any], None]:
    """The parts of the named records (a plan's activities): all of them, those still in progress in the records
    in force ("open CP activities?"), or whether one is among them ("does the diabetes plan include exercise?")."""
    from fhirqa.agent.backends.offline.plans import final

    asked = got.asked or {}
    status_field = spec.get("status_field", "status")
    if got.active or got.in_progress:
        active = yield ("filter_by_value", {"records": handle, "op": "==", "value": "active", "field": status_field})
        if not active.get("count"):
            yield final([], f"No active {spec['noun']}.")
            return
        handle, what = active.get("handle") or handle, f"active {what}"
    if got.in_progress:
        progress = spec["in_progress"]
        going = yield ("filter_by_value", {"records": handle, "op": "==", "value": progress["value"],
                                           "field": progress["field"]})
        if not going.get("count"):
            yield final([], f"No {asked['label']} {progress['value']} in the {what}.")
            return
        handle, what = going.get("handle") or handle, f"{what}, {progress['value']}"
    values = yield ("extract_field_value", {"records": handle, "field": asked["field"], "distinct": True})
    shown = [str(v["value"]) for v in values.get("values", []) if isinstance(v, dict) and v.get("value") is not None]
    if got.member:
        wanted = set(_words(got.member))
        hits = [v for v in shown if wanted <= set(_words(v))]
        if hits:
            yield final([True], f"Yes: {'; '.join(hits)} is among the {asked['label']} of {what}.")
        else:
            yield final([False], f"No: '{got.member}' is not among the {asked['label']} of {what} "
                                 f"({'; '.join(shown) or 'none recorded'}).")
        return
    yield final([], f"{asked['label'].capitalize()} of {what}: {'; '.join(shown)}.", list_from=handle,
                list_field=asked["field"])


def plan_latest_of_kind(pq: ParsedQuestion, view: str, handle: str) -> Generator[Call, dict[str, Any], None]:
    """"last immunization?", "what was his last vaccine?": the records of the latest (else first) day of a kind
    that carries no value, by name; not the latest record of every item the kind holds."""
    from fhirqa.agent.backends.offline.plans import _day, final

    info = view_info(view)
    row = (yield ("get_by_index", {"records": handle, "index": 0 if pq.position == "first" else -1})).get("row") or {}
    when = row.get(info.time_field)
    if not when:
        yield final([], f"No dated {view} records.", status="no-data")
        return
    day = _day(when)
    same_day = yield ("filter_by_date", {"records": handle, "start": day, "end": day})
    names = yield ("extract_field_value", {"records": same_day.get("handle") or handle, "field": info.name_field,
                                           "distinct": True})
    shown = [str(v["value"]) for v in names.get("values", []) if isinstance(v, dict) and v.get("value") is not None]
    word = "first" if pq.position == "first" else "most recent"
    yield final([], f"The {word} ({day}): {'; '.join(shown) or row.get(info.name_field)}.",
                list_from=same_day.get("handle") or handle, list_field=info.name_field)


def _latest_is_kind(pq: ParsedQuestion, got: Route, spec: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """"last imaging an x-ray?": whether the latest (else first) record's coded kind is one the question names."""
    from fhirqa.agent.backends.offline.plans import _day, final

    info = view_info(got.view)
    found = yield ("get_resources", {"view": got.view})
    if not found.get("count"):
        yield final([], f"The record has no {spec['noun']}.", status="no-data")
        return
    row = (yield ("get_by_index", {"records": found["handle"], "index": 0 if pq.position == "first" else -1})).get("row") or {}
    kind = row.get(got.kind_field or "")
    same = kind in got.codes
    yield final([same], f"{'Yes' if same else 'No'}: the {'first' if pq.position == 'first' else 'latest'} of the "
                        f"{spec['noun']} ({row.get(info.name_field)}, {_day(row.get(info.time_field))}) is {kind}.")


def _note_may_say(pq: ParsedQuestion) -> bool:
    """Whether a visit's note is a place to look when the visit does not code what is asked: the question points
    at a visit the notes plans know ("reason for the last visit?", "insurance at the 08/18/2021 visit?")."""
    from fhirqa.agent.backends.offline.plans import note_value, note_visit

    return note_visit(pq) is not None or note_value(pq) is not None


def _asks_which_too(text: str) -> bool:
    """Whether a yes/no question also asks which ("any devices documented? which ones"): ``question_phrases.json``
    ``which_too``."""
    from fhirqa.project import lexicon_file

    pattern = (lexicon_file("question_phrases.json").get("which_too") or {}).get("pattern")
    return bool(pattern and re.search(pattern, " ".join(text.lower().split())))
