"""Tool plans for parsed questions: the offline backend's policy, one generator per intent.

A plan yields ``(tool name, arguments)`` and receives each tool's result, exactly like a model
that calls tools turn by turn; the offline backend replays it over the conversation so far.
Every number in the final answer comes out of a tool result.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.allergens import reading_said
from fhirqa.agent.backends.offline.active_administration import active_by_administration
from fhirqa.agent.backends.offline.class_note_plan import class_note, with_note
from fhirqa.agent.backends.offline.event_window_plan import condition_onset
from fhirqa.agent.backends.offline.note_kind_plan import kind_final, note_kind_question
from fhirqa.agent.backends.offline.note_list_plan import answer as notes_list_final
from fhirqa.agent.backends.offline.note_list_plan import seen_asked
from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.records_plan import plan_latest_of_kind
from fhirqa.agent.backends.offline.summary_plan import (
    as_written,
    with_visit_codes,
)
from fhirqa.agent.backends.offline.timephrases import Anchor, Window, anchor_words
from fhirqa.agent.catalog import UnknownView, view_info
from fhirqa.agent.resolver import core_name
from fhirqa.agent.tools.localtime import day_end, day_start, pinned
from fhirqa.agent.tools.localtime import iso as _local_iso
from fhirqa.agent.units import convert as _convert
from fhirqa.agent.units import display_unit
from fhirqa.agent.units import unit_key as _unit_key

Call = tuple[str, dict[str, Any]]
Plan = Generator[Call, dict[str, Any], None]



def _iso(moment: datetime | None) -> str | None:
    # calendar bounds go out without an offset, so the tools read them on each record's own clock
    return _local_iso(moment)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if abs(value) < 1e4:
            return f"{value:.4g}"
        return f"{value:.0f}" if abs(value) < 1e6 else f"{value:,.0f}"  # 15000 units, never 1.5e+04
    return str(value)


def _with_unit(value: Any, unit: str | None) -> str:
    return f"{_fmt(value)} {unit}" if unit else _fmt(value)


def _shown(row: dict[str, Any], value: Any, unit: str | None) -> str:
    """A row's value as the record states it: a comparator (">60", "<0.5") stays in front of the number."""
    comparator = row.get("value_comparator")
    return f"{comparator}{_with_unit(value, unit)}" if comparator and value is not None else _with_unit(value, unit)


def _day(iso: str | None) -> str:
    return (iso or "?")[:10]


def final(answer: list[Any], text: str, status: str = "answered", unit: str | None = None,
          list_from: str | None = None, list_field: str | None = None) -> Call:
    """The closing call; ``list_from`` (a handle) makes the answer every distinct ``list_field`` value of that set."""
    args: dict[str, Any] = {"answer": answer, "text": text, "status": status}
    if unit:
        args["unit"] = unit
    if list_from:
        args["list_from"] = list_from
        if list_field:
            args["list_field"] = list_field
    return ("final_answer", args)


def find_records(pq: ParsedQuestion, views: list[str] | None = None, entity: str | None = None,
                 **filters: Any) -> Generator[Call, dict[str, Any], tuple[str, dict[str, Any]] | None]:
    """Try the candidate views in order until the entity resolves; returns (view, result) or None.

    The last result of an unresolved search is kept in ``pq.notes`` so the answer can name the
    nearest items the record does hold.
    """
    entity = pq.entity if entity is None else entity
    candidates: list[str] = []
    order = views or pq.views
    fallback: tuple[str, dict[str, Any]] | None = None
    for view in order:
        args: dict[str, Any] = {"view": view}
        if entity:
            args["item"] = entity
        args.update({k: v for k, v in filters.items() if v is not None and _applies(k, view)})
        result = yield ("get_resources", args)
        fuzzy = str(result.get("resolved_by", "")).startswith("fuzzy")
        if result.get("ambiguous") and not fuzzy:
            pq.notes.append("ambiguous")
            return view, result
        if result.get("count") and not fuzzy:
            return view, (yield from given_doses(pq, view, result))
        # A spelling-level match counts only in a view the question pointed at ("nitroglycerin" must not
        # become "Triglycerides" because the medication list lacks it), and only when nothing matches exactly.
        if fuzzy and fallback is None and (view in pq.hinted or not pq.hinted) and (result.get("count") or result.get("ambiguous")):
            fallback = (view, result)
        candidates.extend(c for c in result.get("candidates", []) if c not in candidates)
    if fallback is not None:
        return fallback[0], (yield from given_doses(pq, *fallback))
    pq.notes.append("candidates: " + "; ".join(candidates[:5]))
    return None


# Administrations charted but not given: a dose "not-done", "entered-in-error" or "stopped" was not received.
NOT_GIVEN = ("not-done", "entered-in-error", "stopped")


# med_kind of a question about the doses not given ("was vanc ever held?"): every record, the not-done ones too
EVERY_RECORD = "every"


def given_doses(pq: ParsedQuestion, view: str, result: dict[str, Any]) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """For a "given / received / doses" question, a drug's administrations that were given (when it has any); for
    any other question about a drug, its records without the administrations charted as not done ("last vanc
    dose?" is the last one given, not the one held)."""
    if view != "medication" or result.get("ambiguous") or not result.get("handle") or pq.med_kind == EVERY_RECORD:
        return result
    if pq.med_kind != "administration":
        # "not-done" is an administration's status only (an order is stopped or on hold, never not-done)
        undone = yield ("filter_by_value", {"records": result["handle"], "op": "==", "value": "not-done", "field": "status"})
        if not undone.get("count"):
            return result
        kept = yield ("filter_by_value", {"records": result["handle"], "op": "!=", "value": "not-done", "field": "status"})
        return {**result, "handle": kept.get("handle") or result["handle"], "count": kept.get("count", 0)}
    handle, count = result["handle"], result.get("count")
    admin = yield ("filter_by_value", {"records": handle, "op": "==", "value": "administration", "field": "kind"})
    if not admin.get("count"):
        return result  # no administrations charted for it: the orders are all the record says
    handle, count = admin["handle"], admin["count"]
    for status in NOT_GIVEN:
        undone = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            given = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
            handle, count = given.get("handle") or handle, given.get("count", 0)
    return {**result, "handle": handle, "count": count}


def _applies(name: str, view: str) -> bool:
    """Whether a get_resources filter means anything for ``view`` (kind: medications; numeric, category: results)."""
    return {"kind": view == "medication", "numeric": view == "observation", "category": view == "observation"}.get(name, True)


def _row(result: dict[str, Any]) -> dict[str, Any]:
    """The row a get_by_index / find_extreme result picked ({} when the set had none)."""
    return result.get("row") or {}


def notes_answer(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Call | None]:
    """When the tables hold nothing: what the notes say, quoted, or None (then the answer is no-data)."""
    seen = seen_asked(pq)
    if seen is not None:  # "who saw her last?" and no visit names a clinician (MIMIC-III): the last note's author
        return notes_list_final(seen, (yield ("list_notes", seen.args)))
    kind = note_kind_question(pq, fallback=True)
    if kind is not None:  # "date of the last ECG?" with no ECG among the records: the last ECG report's
        call = yield from kind_final(pq, kind, fallback=True)
        if call is not None:
            return call
    if pq.intent not in ("value", "exists", "note_finding", "time_of") or not pq.entity:
        return None
    args: dict[str, Any] = {"question": pq.text}
    if pq.window and pq.window.start:
        args["start"] = _iso(pq.window.start)
    if pq.window and pq.window.end:
        args["end"] = _iso(pq.window.end)
    found = yield ("find_in_notes", args)
    if not found.get("found"):
        return None
    if found.get("kind") == "section":
        return reading_final(found)
    where = f"{found.get('note_type') or 'note'} of {_day(found.get('time'))}"
    if found.get("kind") == "finding":
        said = "documented" if found["value"] else "documented as absent"
        return final([bool(found["value"])], f"{'Yes' if found['value'] else 'No'}: {found['target']} is {said} in the "
                     f"{where}: \"{found['quote']}\"")
    if pq.intent == "exists":
        return final([True], f"Yes, in the {where}: \"{found['quote']}\"")
    return final([found["value"]], f"From the {where} (not in the structured record): \"{found['quote']}\"",
                 unit=found.get("unit"))


def _no_match(pq: ParsedQuestion, what: str) -> Call:
    near = next((n[len("candidates: "):] for n in pq.notes if n.startswith("candidates: ")), "")
    hint = f" The closest items in the record are: {near}." if near else ""
    return final([], f"The record holds no {what}.{hint}", status="no-data")


def _ambiguous(view_result: dict[str, Any], entity: str) -> Call:
    options = view_result.get("candidates", [])
    return final(options, f"'{entity}' could mean several items: {'; '.join(options)}. Please say which one.",
                 status="ambiguous")


# Encounter classes a patient is "admitted" in: the stay "this admission" means (inpatient, then emergency).
STAY_CLASSES = ("IMP", "EMER")


def _instant(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


def current_stay(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Any]:
    """The window of the patient's current stay as of now ("this admission", "since admit", "on admission").

    The latest inpatient/emergency encounter whose period contains now, else the most recent one; the
    window runs from its start to now (or to its end when it ended before now). None when there is none.
    The encounter is picked by tool calls, so the answer cites it.
    """
    from fhirqa.agent.backends.offline.timephrases import Window

    found = yield ("get_resources", {"view": "encounter"})
    if not found.get("count"):
        return None
    stays: list[dict[str, Any]] = []
    for code in STAY_CLASSES:
        of_class = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": code, "field": "class_code"})
        if of_class.get("count") and pq.now is not None:  # a stay that starts after the question's time is not known yet
            of_class = yield ("filter_by_date", {"records": of_class["handle"], "end": _iso(pq.now), "field": "start_time"})
        if of_class.get("count"):
            latest = yield ("get_by_index", {"records": of_class["handle"], "index": -1, "order_by": "start_time"})
            if _row(latest).get("start_time"):
                stays.append(_row(latest))
    now = pq.now
    dated = [(start, _instant(row.get("end_time")), row) for row in stays if (start := _instant(row.get("start_time")))]
    if not dated:
        return None
    ongoing = [d for d in dated if now is None or d[1] is None or d[1] >= now]
    start, end, _ = max(ongoing or dated, key=lambda d: d[0])
    end = now if end is None or (now is not None and end >= now) else end
    label = pq.window.label if pq.window else "this admission"
    return Window(start, end, f"{label} ({start.date()})")


def open_stay(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Any]:
    """The window of the stay the patient is in at the question's time (:func:`current_stay`), or None when the
    latest stay ended before it ("so far", "is it rising?" read the open stay, else something else)."""
    stay = yield from current_stay(pq)
    if stay is None or pq.now is None or stay.end is None or stay.end < pq.now:
        return None
    return stay


def _no_stay(pq: ParsedQuestion, what: str) -> Call:
    return final([], f"The record has no inpatient or emergency encounter to anchor '{pq.window.label if pq.window else 'this admission'}' "
                     f"to, so no {what} can be placed in it.", status="no-data")


def _stays(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], list[dict[str, Any]]]:
    """The patient's inpatient stays (classes of ``stay_classes`` in lexicon/time_anchors.json) by start.

    Only the first and the latest two of each class are fetched (no anchor reaches other stays); each is cited.
    """
    found = yield ("get_resources", {"view": "encounter"})
    if not found.get("count"):
        return []
    rows: list[dict[str, Any]] = []
    for code in anchor_words()["stay_classes"]:
        of_class = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": code, "field": "class_code"})
        count = int(of_class.get("count") or 0)
        for index in sorted({0, -2, -1} if count > 2 else set(range(-count, 0))):  # the first and the latest two
            row = _row((yield ("get_by_index", {"records": of_class["handle"], "index": index, "order_by": "start_time"})))
            if _instant(row.get("start_time")):
                rows.append(row)
    return sorted(rows, key=lambda r: _instant(r.get("start_time")) or datetime.min.replace(tzinfo=UTC))


def _surgical(name: str) -> bool:
    """A procedure name that is an operation (its words in ``surgical_terms``: -ectomy, repair, bypass …)."""
    lowered = name.lower()
    return any(term in lowered for term in anchor_words()["surgical_terms"])


def _event_time(pq: ParsedQuestion, anchor: Anchor) -> Generator[Call, dict[str, Any], tuple[datetime, datetime | None] | str]:
    """(start, end) of the anchor event from the record, or why there is none (the missing event, named)."""
    if anchor.event == "stay":
        stays = yield from _stays(pq)
        need = 2 if anchor.relation == "between" or anchor.which == -2 else 1
        if len(stays) < need:
            held = f"only {len(stays)} inpatient stay" if stays else "no inpatient stay"
            return f"the record holds {held}" if need == 2 and stays else "the patient was never admitted (no inpatient stay)"
        if anchor.relation == "between":
            before, last = stays[-2], stays[-1]
            end = _instant(before.get("end_time")) or _instant(before.get("start_time"))
            return end, _instant(last.get("start_time"))  # type: ignore[return-value]
        stay = stays[anchor.which] if anchor.which < 0 or len(stays) <= 3 else stays[0]
        start = _instant(stay.get("start_time"))
        end = _instant(stay.get("end_time"))
        if anchor.edge == "end" and end is None:
            return "the latest stay has no discharge yet"
        return start, end  # type: ignore[return-value]
    if anchor.event == "visit":
        found = yield ("get_resources", {"view": "encounter"})
        if not found.get("count"):
            return "the record has no visit"
        before_now = found
        if pq.now is not None:
            before_now = yield ("filter_by_date", {"records": found["handle"], "end": _iso(pq.now), "field": "start_time"})
        if not before_now.get("count"):
            return "the record has no visit before now"
        row = _row((yield ("get_by_index", {"records": before_now["handle"], "index": -1, "order_by": "start_time"})))
        return _instant(row.get("start_time")), _instant(row.get("end_time"))  # type: ignore[return-value]
    if anchor.event == "condition":  # "aspirin after the stroke": the condition's earliest onset
        return (yield from condition_onset(anchor))
    if anchor.event == "drug":
        located = yield from find_records(pq, views=["medication"], entity=anchor.name)
        if located is None or located[1].get("ambiguous"):
            return f"the record has no {anchor.name} order"
        row = _row((yield ("get_by_index", {"records": located[1]["handle"], "index": 0})))
        started = _instant(_row_time(row))
        return (started, None) if started else f"the {anchor.name} order has no date"
    # a procedure by name, or the latest operation
    found = yield ("get_resources", {"view": "procedure", **({"item": anchor.name} if anchor.name else {})})
    resolved = str(found.get("resolved_by", ""))
    if anchor.event == "procedure" and (not found.get("count") or resolved.startswith("fuzzy") or found.get("ambiguous")):
        return f"the record has no {anchor.name} (no such procedure)"
    if anchor.event == "surgery":
        operations = [name for name in (found.get("items") or []) if isinstance(name, str) and _surgical(name)]
        if not operations:
            return "the record holds no operation (no surgical procedure)"
        found = yield ("get_resources", {"view": "procedure", "item": operations[0]})
        for other in operations[1:]:  # the latest of all operations
            more = yield ("get_resources", {"view": "procedure", "item": other})
            if more.get("handle"):
                found = yield ("combine_evidence", {"handles": [found["handle"], more["handle"]]})
    row = _row((yield ("get_by_index", {"records": found["handle"], "index": -1})))
    start = _instant(_row_time(row))
    return (start, start) if start else "the procedure has no date"


def event_window(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Window | str]:
    """The question's event-anchored window as explicit bounds, or why it cannot be placed.

    Days are the record's local calendar days: the event's day is the one its time was written in
    ("HD 2" is the day after the admission's local day), and the day is read on each value's own clock.
    A calendar span kept inside the event ("overnight during her admission") is read on the event's clock.
    """
    window = pq.window
    assert window is not None and window.event is not None
    got = yield from _event_time(pq, window.event)
    if isinstance(got, str):
        return got
    return event_bounds(pq, *got)


def event_bounds(pq: ParsedQuestion, start: datetime, end: datetime | None) -> Window | str:
    """The question's event-anchored window as explicit bounds, once the event is dated (``start``, ``end``); why
    it cannot be, as text, when the window is empty."""
    window = pq.window
    assert window is not None and window.event is not None
    anchor = window.event
    edge = end if anchor.edge == "end" and end is not None else start
    tick = timedelta(microseconds=1)
    now = pq.now
    low: datetime | None
    high: datetime | None
    if anchor.relation == "day":
        day = edge.date() + timedelta(days=anchor.amount)  # edge keeps its written offset: its local day
        low, high = day_start(day), day_end(day)
    elif anchor.relation == "hours_before":
        low, high = edge - timedelta(hours=anchor.amount), edge
    elif anchor.relation == "hours_after":
        low, high = edge, edge + timedelta(hours=anchor.amount)
    elif anchor.relation == "before":
        low, high = None, edge - tick
    elif anchor.relation in ("after", "since"):
        low, high = (edge + tick if anchor.relation == "after" else edge), now
    elif anchor.relation == "between":
        low, high = start + tick, end
    elif anchor.relation == "within":  # the question's own span, inside the event
        zone = start.tzinfo  # the question's calendar span on the event's clock ("in the stay's offset")
        low = max(t for t in (pinned(window.start, zone), start) if t is not None)
        high = min(t for t in (pinned(window.end, zone), end or now) if t is not None)
    else:  # during / at
        low, high = start, end or now
    if low is not None and high is not None and low > high:
        return "the window is empty"
    return Window(low, high, f"{window.label} ({_day(_iso(edge))})", event=anchor)  # event kept: the answer names it


def windowed(pq: ParsedQuestion, handle: str, field: str | None = None) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """Apply the question's window to ``handle``; returns the filter result (or a pass-through)."""
    if pq.window is not None and pq.window.anchor == "admission":
        stay = yield from current_stay(pq)
        if stay is None:
            return {"handle": handle, "count": 0, "no_stay": True}
        pq.window = stay
    if pq.window is not None and pq.window.anchor == "event":
        placed = yield from event_window(pq)
        if isinstance(placed, str):
            return {"handle": handle, "count": 0, "no_anchor": placed}
        pq.window = placed
    if pq.window is None or pq.window.anchor:
        return {"handle": handle, "count": None}
    args: dict[str, Any] = {"records": handle}
    if pq.window.start:
        args["start"] = _iso(pq.window.start)
    if pq.window.end:
        args["end"] = _iso(pq.window.end)
    if field:
        args["field"] = field
    return (yield ("filter_by_date", args))


def _empty_window(pq: ParsedQuestion, what: str, result: dict[str, Any]) -> Call:
    """No rows in the window: say so, and name the nearest records on either side (the ones cited)."""
    if result.get("no_stay"):
        return _no_stay(pq, what)
    if result.get("no_anchor"):  # "POD1 K" with no operation: the event the window hangs on is missing
        return final([], f"No {what} {pq.window.label if pq.window else ''}: {result['no_anchor']}.", status="no-data")
    label = pq.window.label if pq.window else ""
    near = []
    for key, word in (("nearest_before", "before"), ("nearest_after", "after")):
        row = result.get(key)
        if isinstance(row, dict):
            when = _row_time(row)
            value, unit = _row_value(str(row.get("view") or "observation"), row)
            shown = f" ({_with_unit(value, unit)})" if value is not None and not isinstance(value, str) else ""
            near.append(f"the nearest {word} is from {_day(when)}{shown}")
    if not near:
        span = result.get("input_time_range") or {}
        latest = span.get("latest") if isinstance(span, dict) else None
        near = [f"the most recent one is from {_day(latest)}"] if latest else []
    extra = "; ".join(near)
    extra = f" {extra[0].upper()}{extra[1:]}." if extra else ""
    return final([], f"No {what} {label}.{extra}", status="no-data")


@dataclass
class Scope:
    """The records a question is about: their view, the handle after the window, the lookup result."""

    view: str
    handle: str
    found: dict[str, Any]


NUMERIC_INTENTS = {"value", "aggregate", "change", "trend", "threshold", "after_drug"}
# Intents that compute over values (an extreme, a mean, a crossing, a direction): a view without a value field
# (encounters) cannot answer them
VALUED_INTENTS = frozenset({"aggregate", "change", "trend", "threshold"})


def encounter_records(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], tuple[str, dict[str, Any]] | None]:
    """Encounters of the question's class ("ER visits", "admissions"), or None when it names no class."""
    if not pq.encounter_class:
        return None
    if pq.entity:
        typed = yield from find_records(pq, views=["encounter"])
        if typed is not None:
            return typed
        if pq.intent in VALUED_INTENTS:
            # "lowest SpO2 last admit": an extreme, threshold or trend needs values, which encounters do not carry;
            # an item another view holds is the question (the stay word only places it)
            others = [v for v in pq.views if v != "encounter"]
            valued = (yield from find_records(pq, views=others)) if others else None
            if valued is not None:
                return valued
        pq.entity = ""  # "trip to the ER": the class is the whole question
    found = yield ("get_resources", {"view": "encounter"})
    if not found.get("count"):
        return ("encounter", found)
    by_class = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": pq.encounter_class, "field": "class_code"})
    return ("encounter", by_class)


def scoped(pq: ParsedQuestion, what: str) -> Generator[Call, dict[str, Any], Scope | Call]:
    """Records for the entity within the window, or the final call that says why there are none."""
    numeric = pq.intent in NUMERIC_INTENTS
    found = (yield from encounter_records(pq)) or (
        yield from find_records(pq, numeric=numeric or None, category=pq.category if not pq.entity else None))
    if found is None and pq.intent == "value" and pq.entity and not pq.unit:
        # "latest HIV status", "UA blood?": a result written as text or a coded answer ("not HIV positive"),
        # looked for among results only (a drug or problem name is no value)
        found = yield from find_records(pq, views=["observation"])
    if found is None:
        from_notes = yield from notes_answer(pq)
        return from_notes or _no_match(pq, what)
    view, result = found
    if result.get("ambiguous"):
        return _ambiguous(result, pq.entity)
    if not result.get("count"):
        return final([], f"The record has no {_class_label(pq)} encounters.", status="no-data")
    handle = result["handle"]
    filtered = yield from windowed(pq, handle)
    if filtered.get("count") == 0:
        return _empty_window(pq, what, filtered)
    return Scope(view, filtered.get("handle") or handle, result)


def plan(pq: ParsedQuestion) -> Plan:
    """The plan for a parsed question; a window on clock bounds the question only implied is said in its answer."""
    steps = _plan(pq)
    order = two_parts_asked(pq.text)
    if order is not None:
        steps = answer_both(order, steps)
    return say_window(pq.window, steps) if pq.window is not None and pq.window.said else steps


@lru_cache(maxsize=1)
def _two_part() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    from fhirqa.project import lexicon_file

    words = lexicon_file("question_phrases.json")["two_part"]
    return (re.compile("|".join(words["time"])), re.compile("|".join([*words["value"], *words["reason"]])),
            re.compile("|".join(words["value_before_time"])), re.compile("|".join(words["strip"])))


def first_half(text: str) -> str:
    """``text`` without the second half of a question asking both when and what ("when was his last LDL and what was
    it?" → "when was his last LDL"): the plan answers the first, :func:`answer_both` adds the other."""
    if two_parts_asked(text) is None:
        return text
    return _two_part()[3].sub("", text)


def two_parts_asked(text: str) -> str | None:
    """``"time"`` or ``"value"`` (which the question asks first) when it asks both when and what, else None."""
    lowered = text.lower()
    time_word, value_word, extreme_word, _ = _two_part()
    when, what = time_word.search(lowered), value_word.search(lowered)
    extreme = extreme_word.search(lowered)
    if when is not None and extreme is not None and extreme.start() < when.start():
        what = extreme if what is None or extreme.start() < what.start() else what
    if when is None or what is None:
        return None
    return "time" if when.start() < what.start() else "value"


def answer_both(first: str, steps: Plan) -> Plan:
    """``steps`` with a one-item answer completed by the other half of the row it came from: the date of a value,
    the value of a date ("when was his last LDL and what was it?": both, in the order asked)."""
    row: dict[str, Any] | None = None
    call = next(steps)
    while True:
        name, args = call
        answer = args.get("answer") if name == "final_answer" else None
        if row is not None and isinstance(answer, list) and len(answer) == 1 and args.get("status", "answered") == "answered":
            when = _row_time(row)
            value = row.get("value") if row.get("value") is not None else row.get("value_string") or row.get("dose") \
                or row.get("reason_name")  # a visit's other half is its reason
            said = answer[0]
            if when and value is not None and isinstance(said, str) and said[:10] == str(when)[:10]:
                both = [said, value] if first == "time" else [value, said]
            elif when and value is not None and said == value:
                both = [str(when), value] if first == "time" else [value, str(when)]
            else:
                both = None
            if both is not None:
                call = (name, {**args, "answer": both})
        result = yield call
        if isinstance(result, dict) and isinstance(result.get("row"), dict):
            row = result["row"]
        try:
            call = steps.send(result)
        except StopIteration:
            return


def window_said(window: Window | None, text: str) -> str:
    """``text`` naming the window the question only implied ("K this morning": "… Window: this morning (2025-06-20
    00:00–12:00, up to now)."), unless it says it already; ``text`` as it is for a window the question wrote out (or
    none). Every path answering a parsed question says it so (the FHIR plans, the SQL writer)."""
    if window is None or not window.said or window.label in text:
        return text
    return f"{text.rstrip()} Window: {window.label}.".lstrip()


def say_window(window: Window, steps: Plan) -> Plan:
    """``steps`` with the final answer's text naming ``window`` (:func:`window_said`)."""
    call = next(steps)
    while True:
        name, args = call
        if name == "final_answer":
            call = (name, {**args, "text": window_said(window, str(args.get("text", "")))})
        try:
            call = steps.send((yield call))
        except StopIteration:
            return


def _plan(pq: ParsedQuestion) -> Plan:
    """The plan for a parsed question."""
    from fhirqa.agent.backends.offline.frames import FRAMES

    for frame in FRAMES:  # the question frames, in their order (frames.py)
        found = frame.detect(pq)
        if found is None:
            continue
        answered = yield from frame.answer(pq, found)
        if answered or not frame.may_pass:
            return
    # a visit named by its kind ("last physical") is also found by the codes of that encounter type
    planner = with_visit_codes(plan_stay if pq.stay_event else _PLANS.get(pq.intent, plan_value))
    at_note = note_value(pq)
    if at_note is not None:  # "K per the 11/8/2024 H&P?": that note's value, no-data when it does not state it
        found = yield ("find_in_notes", at_note)
        if found.get("found"):
            where = f"{found.get('note_type') or 'note'} of {_day(found.get('time'))}"
            yield final([found["value"]], f"{found['value']}, per the {where}: \"{found.get('quote')}\"",
                        unit=found.get("unit"))
            return
        if found.get("anchored"):
            yield final([], f"Not stated in that day's note ({found.get('note')}).", status="no-data")
            return
    note = class_note(pq)
    if note is not None:  # "DVT ppx?": the class members found, and what the record cannot tell about them
        planner = with_note(planner, note)
    visit = note_visit(pq)
    if visit is None:
        yield from planner(pq)
        return
    args, strong, field = visit
    if not strong:  # a generic cue ("any X on <day>?"): the tables first, the visit's note when they hold nothing
        yield from _tables_then_note(pq, planner(pq), args)
        return
    found = yield ("find_in_notes", args)
    if field == "note":  # "summarize the last note", "A&P from the 3/2/2019 note": the note itself, as written
        yield note_final(found)
        return
    if found.get("found") and found.get("kind") == "section":
        if found.get("structured_too") and found.get("value") == [False]:
            yield from plan_exists(pq)  # a plan item not in the note may still be a record of that day
            return
        yield reading_final(found)
        return
    yield from (plan_exists(pq) if field == "plan" else planner(pq))


# Words that make a question about a visit's note, not only its records (data: the field cues of
# lexicon/note_sections.json say which section; these say the note itself is meant).
_NOTE_WORDS = re.compile(r"\b(?:notes?|per the|hpi|social hx|social history|mention\w*|documented|noted|anything about|"
                         r"c/o|complain\w*|listed|med list|yes or no)\b")
_COMPUTED = frozenset({"count", "aggregate", "daily_dose", "after_drug", "change", "trend", "threshold", "time_since"})
_DAY_FROM = re.compile(r"\b(note|visit|encounter|h&p|summary)\s+from\s+(?=\d|[a-z]{3})")


def note_value(pq: ParsedQuestion) -> dict[str, Any] | None:
    """``find_in_notes`` arguments when a lab or vital is asked as one dated note (H&P, progress note…) states it."""
    from fhirqa.agent.tools.note_finding import value_at_note
    from fhirqa.notes.extract import written_summary

    if not value_at_note(pq.text):
        return None
    if pq.intent in _COMPUTED and not (pq.intent == "aggregate" and written_summary(pq.text)):
        return None  # "Tmax in the progress note?" is the number the note writes as "Tmax", not a computation
    window = pq.window
    text = pq.text.lower()
    if window is not None and window.label.startswith("since") and _DAY_FROM.search(text) and pq.now is not None:
        from fhirqa.agent.backends.offline.timephrases import find_window

        day = find_window(_DAY_FROM.sub(lambda m: f"{m[1]} on ", text), pq.now)
        window = day.window if day else window
    if window is None or window.start is None or window.end is None:
        return None
    if window.end - window.start > timedelta(days=2):
        # "per the H&P of the December 2023 admission": the stay's one note of that kind in a longer window
        from fhirqa.notes.reader import named_kind

        kind = named_kind(pq.text)
        if kind is None or not kind.get("which") or window.end - window.start > timedelta(days=62):
            return None
        return {"question": pq.text, "start": _iso(window.start), "end": _iso(window.end), "which": kind["which"]}
    return {"question": pq.text, "start": _iso(window.start), "end": _iso(window.end)}


def note_visit(pq: ParsedQuestion) -> tuple[dict[str, Any], bool, str] | None:
    """``find_in_notes`` arguments when the question reads one visit's note (anchor + section), else None.

    Returns (arguments, strong, field): strong when the question's words point at the note or at a section
    only notes hold (chief complaint, insurance…); a generic "any X on <day>?" is weak.
    """
    from fhirqa.notes.reader import ask_field, item_of, which_note, whole_record_asked

    spec = ask_field(pq.text, pq.entity)
    if spec is None:
        return None
    if pq.intent in _COMPUTED and not (pq.intent == "count" and spec.get("answers_count")):
        return None  # "Heparin doses given 9/12/2025?" counts administrations; no section holds it
    # ("How many days was the LOS in the DC summary?" is the number the note writes, not a count of records)
    field = spec["field"]
    text = pq.text.lower()
    if pq.med_kind == "administration" and field in ("medications", "plan", "mention") and not _NOTE_WORDS.search(text):
        return None  # "how much heparin was given on Nov 29?", "any APAP given yesterday?": the administrations say
    window = pq.window
    if window is not None and window.label.startswith("since") and _DAY_FROM.search(text) and pq.now is not None:
        from fhirqa.agent.backends.offline.timephrases import find_window

        day = find_window(_DAY_FROM.sub(lambda m: f"{m[1]} on ", text), pq.now)
        window = day.window if day else window
    if window is None and pq.at_time is not None:  # "on the med list on 8/11/2018": a list at a day
        from fhirqa.agent.backends.offline.timephrases import Window

        day0 = pq.at_time.replace(hour=0, minute=0, second=0, microsecond=0)
        window = Window(day0, day0 + timedelta(days=1) - timedelta(microseconds=1), f"on {day0.date()}")
    args: dict[str, Any] = {"question": pq.text}
    one_day = window is not None and window.start is not None and window.end is not None \
        and window.end - window.start <= timedelta(days=2)
    which = which_note(text) if re.search(r"\b(?:note|visit|documented)\b", text) and not one_day else None
    if field == "note":  # the note itself: a day's, else the latest (first) in the window or on file
        args["read"] = "note"
        if window is not None and window.label.startswith("since") and pq.now is not None:
            from fhirqa.agent.backends.offline.timephrases import find_window

            day = find_window(re.sub(r"\bfrom\b", "on", text), pq.now)  # "labs from the 11/23 progress note"
            window = day.window if day else window
            one_day = window is not None and window.start is not None and window.end is not None \
                and window.end - window.start <= timedelta(days=2)
        if window is not None and window.start is not None and window.end is not None:
            args["start"], args["end"] = _iso(window.start), _iso(window.end)
        if not one_day:
            args["which"] = which_note(text) or "latest"
        if pq.encounter_class:
            args["encounter_class"] = pq.encounter_class
        if window is not pq.window:
            pq.window = window
        return args, True, field
    if one_day and window is not None:
        args["start"], args["end"] = _iso(window.start), _iso(window.end)
    elif pq.encounter_class and window is not None and window.start is not None:
        args["start"], args["end"], args["encounter_class"] = _iso(window.start), _iso(window.end), pq.encounter_class
    elif which:
        args["which"] = which
    elif field == "mention" and whole_record_asked(text):  # "any note mention X?": every note, not one visit's
        if window is not None and window.start is not None:
            args["start"] = _iso(window.start)
        if window is not None and window.end is not None:
            args["end"] = _iso(window.end)
    else:
        return None
    item = item_of(pq.text, spec, pq.entity)
    if spec.get("item_required") and not item:
        return None
    args["item"] = item
    if window is not pq.window:
        pq.window = window
    strong = field != "mention" or bool(_NOTE_WORDS.search(text))
    return args, strong, field


def reading_final(found: dict[str, Any]) -> Call:
    """The final answer for a section read from a visit's note."""
    where = f"{found.get('note_type') or 'note'} of {_day(found.get('time'))}"
    value = found.get("value") or []
    quote = found.get("quote") or ""
    if found.get("answer_kind") == "yes_no" and found.get("scope") == "all notes":
        yes = bool(value and value[0])
        span = f"{found.get('notes_in_scope')} notes, {found.get('first')} to {found.get('last')}"
        if yes:
            return final([True], f"Yes, in the {where} ({span} read): \"{quote}\"")
        if quote:  # named only to be denied
            return final([False], f"No: mentioned only as absent, in the {where} ({span} read): \"{quote}\"")
        return final([False], f"No: none of the patient's notes mentions it ({span} read).")
    if found.get("answer_kind") == "yes_no":
        yes = bool(value and value[0])
        said = f'"{quote}"' if quote else "not documented there"
        return final([yes], f"{'Yes' if yes else 'No'}, per the {where} ({found.get('field')}): {said}")
    shown = "; ".join(str(v) for v in value)
    return final(list(value), f"{shown}, per the {where} ({found.get('field')}): \"{quote}\"")


def note_final(found: dict[str, Any]) -> Call:
    """The final answer for a note read as written (``find_in_notes`` with ``read="note"``): its digest or the
    sections asked, under the note's kind, date, author and reference; no-data when there is no such note or the
    section holds nothing."""
    value = list(found.get("value") or [])
    text = str(found.get("text") or "No notes on file for this patient.")
    if not found.get("ok", True):
        return final([], "No notes on file for this patient.", status="no-data")
    return final(value, text, status="answered" if found.get("found") and value else "no-data")


def _tables_then_note(pq: ParsedQuestion, base: Plan, args: dict[str, Any]) -> Plan:
    """Run ``base``; when it ends with nothing (no-data or No), read the visit's note instead."""
    call = next(base)
    while call[0] != "final_answer":
        result = yield call
        try:
            call = base.send(result)
        except StopIteration:
            return
    answer = call[1]
    if answer.get("status") == "no-data" or answer.get("answer") == [False]:
        found = yield ("find_in_notes", args)
        if found.get("found") and found.get("kind") == "section":
            yield reading_final(found)
            return
    yield call


def _entity_label(pq: ParsedQuestion) -> str:
    return as_written(pq.entity, pq.text) or "matching records"  # "I/O" as asked, not "i/o"


def _strength(pq: ParsedQuestion, row: dict[str, Any]) -> tuple[float, str] | None:
    """The strength a drug's name states ("Hydrochlorothiazide 25 MG" → 25 mg) when the question asks its dose and
    the order's own dose is not a mass (``lexicon/medication_regimen.json`` ``strength``); None otherwise."""
    from fhirqa.project import lexicon_file

    spec = lexicon_file("medication_regimen.json").get("strength") or {}
    text = " ".join(pq.text.lower().split())
    if not spec or not re.search(spec["asks"], text) or re.search(spec["not"], text):
        return None
    if row.get("dose") is not None and str(row.get("dose_unit") or "").lower() in spec["mass_units"]:
        return None  # the order states its dose in a mass: that is the answer
    name = str(row.get("medication_name") or "")
    found = re.findall(spec["in_name"], name, flags=re.I)
    if len(found) != 1 or "/" in name:
        return None  # several ingredients or a concentration: no one strength
    number, unit = found[0]
    return float(number), unit.lower()


def plan_value(pq: ParsedQuestion) -> Plan:
    """Latest / first value of an item, optionally within a window; several items (BP) each answered."""
    got = yield from scoped(pq, f"{_entity_label(pq)} results")
    if not isinstance(got, Scope):
        yield got
        return
    view, handle, found = got.view, got.handle, got.found
    if not pq.entity and view in ("immunization", "procedure", "imaging"):  # "last immunization?": one day's doses
        yield from plan_latest_of_kind(pq, view, handle)
        return
    how = str(found.get("resolved_by", ""))
    if how == "lexicon:class" and view == "medication" and re.search(r"\b(?:is|are|am)\b.*\b(?:on|taking)\b", pq.text.lower()) \
            and _asks_which(pq):
        pq.list_kind = "medication"  # "what statins is she on?": the class's members on the active list
        yield from plan_active_list(pq)
        return
    if how == "lexicon:class" and view == "medication" and re.fullmatch(r"[a-z'-]+(?: [a-z'-]+)?", " ".join(
            pq.text.lower().split()).strip(" ?.!")) and pq.window is None:
        # "statin?", "beta blocker?": the class alone asks whether she is on one, not the dose of the latest order
        pq.intent, pq.list_kind, pq.views, pq.kind_cued = "active_check", "medication", ["medication"], True
        yield from plan_active_check(pq)
        return
    if how == "lexicon:class" and view != "observation" and _asks_which(pq):
        # "what surgeries has she had?", "PSH?": the class's members in the record, each once (not the latest one)
        names = yield ("extract_field_value", {"records": handle, "field": name_field(view), "distinct": True})
        values = [v["value"] for v in names.get("values", []) if isinstance(v, dict)]
        total = names.get("count") or len(values)
        yield final([], f"{total} in the record: {'; '.join(map(str, values))}{_more(names, len(values))}.",
                    list_from=handle, list_field=name_field(view))
        return
    # Names one lexicon concept resolved to are one analyte ("WBC Auto" and "Leukocytes … Automated count");
    # a panel's components are several (systolic, diastolic), and so are a lab group's member tests ("CBC")
    one_concept = how.startswith("lexicon") and "components" not in how and not (view == "observation" and how == "lexicon:class")
    # a visit has no analytes: "last time she was in the ED" is the latest visit of every name the words found
    one_concept = one_concept or view == "encounter"
    groups = [found.get("items") or []] if one_concept else item_groups(found.get("items") or [])
    answers: list[Any] = []
    parts: list[str] = []
    unit = None
    index = 0 if pq.position == "first" else -1
    for group in groups or [[]]:
        h = handle
        if len(groups) > 1:
            # Several analytes (systolic and diastolic): one answer each; names of one analyte stay together.
            sub = yield ("get_resources", {"view": view, "item": group[0]})
            h = sub["handle"]
            filtered = yield from windowed(pq, h)
            if filtered.get("count") == 0:
                continue
            h = filtered.get("handle") or h
        row = _row((yield ("get_by_index", {"records": h, "index": index})))
        if view == "encounter":  # a visit carries no value: its day is the answer ("last annual exam?")
            answers.append(_row_time(row))
            parts.append(f"{label(row, pq.entity)} was on {_day(_row_time(row))}")
            continue
        value, unit = _row_value(view, row)
        strength = _strength(pq, row) if view == "medication" else None
        if strength is not None:
            # "HCTZ dose?": the strength the order's name states, since the order gives no dose in mg
            value, unit = strength
            answers.append(value)
            per = f", {_fmt(row['dose'])} per dose" if row.get("dose") is not None else ""
            parts.append(f"{row.get('medication_name')}: {_with_unit(value, unit)} (the strength its name states{per}) "
                         f"on {_day(_row_time(row))}")
            continue
        answers.append(value)
        parts.append(f"{row.get(name_field(view)) or pq.entity}: {_shown(row, value, unit)} on {_day(_row_time(row))}")
    word = "first" if pq.position == "first" else "most recent"
    # "…, the day after his chest x-ray, 2 views (2026-01-01)": the anchor event the window came from, and its day
    anchored = f", {pq.window.label}" if pq.window is not None and pq.window.event is not None else ""
    if len(answers) == 1 and pq.unit:
        converted, to = _asked_unit(pq, answers[0], unit, label(row))
        if to != unit:  # "weight in lbs": the record's kilograms, converted by the units table
            parts[0] += f" = {_with_unit(converted, to)}"
            answers, unit = [converted], to
    yield final(answers, f"The {word} {'; '.join(parts)}{anchored}.", unit=unit if len(answers) == 1 else None)


def _asks_which(pq: ParsedQuestion) -> bool:
    """"What/which X has she had?", "list her X", "X history": every member of a class, not the latest one."""
    text = " ".join(pq.text.lower().split())
    if re.search(r"\b(?:last|latest|most recent|first|current|currently|recent|now)\b", text):
        return False
    return bool(re.match(r"^(?:what|which|list|name|show)\b", text) or re.search(r"\b(?:history|hx|psh)\b", text))


def item_groups(items: list[str]) -> list[list[str]]:
    """Item names grouped by analyte: "Hematocrit … by Automated count" and "Hematocrit …" are one."""
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(core_name(item), []).append(item)
    return list(groups.values())


def label(row: dict[str, Any], default: str = "") -> str:
    """What a row is called, whichever view it came from (an encounter by its type or class)."""
    for key in ("name", "medication_name", "type_name", "class_name", "note_type"):
        if row.get(key):
            return str(row[key])
    return default or "record"


def _row_time(row: dict[str, Any]) -> str | None:
    for key in ("time", "start_time", "onset_time", "recorded_time", "authored_on"):
        if row.get(key):
            return row[key]
    return None


def _row_value(view: str, row: dict[str, Any]) -> tuple[Any, str | None]:
    if view == "observation":
        if row.get("value") is not None:
            return row["value"], row.get("unit")
        return row.get("value_string"), None
    if view == "medication":
        if row.get("dose") is not None:
            return row["dose"], row.get("dose_unit")
        return row.get("medication_name"), None
    return row.get("name"), None


def plan_aggregate(pq: ParsedQuestion) -> Plan:
    """Mean / median / sum, or max / min with the row it came from."""
    if pq.aggregate == "sum" and not pq.encounter_class:
        # "total medication reconciliation since 2014": a total of records that carry no value is their count
        located = (yield from find_records(pq, numeric=None)) if pq.entity else (None, None)
        view = located[0] if located else None
        if view == "medication" and _one_day(pq):
            # "heparin in total on Nov 29": what was given that day, summed (not a count of orders)
            yield from plan_daily_dose(pq)
            return
        if (view or (pq.views[0] if pq.views else "observation")) != "observation":
            yield from plan_count(pq)
            return
    got = yield from scoped(pq, f"{_entity_label(pq)} results")
    if not isinstance(got, Scope):
        yield got
        return
    view, handle, found = got.view, got.handle, got.found
    window = f" {pq.window.label}" if pq.window else ""
    # "average BP": systolic and diastolic each get their own statistic, never one over both
    handles = (yield from analyte_handles(view, handle)) if view == "observation" else [handle]
    if pq.aggregate == "range":
        yield from _plan_range(pq, view, handles, window)
        return
    answers: list[Any] = []
    texts: list[str] = []
    units: set[str | None] = set()
    if pq.aggregate in ("max", "min"):
        word = "highest" if pq.aggregate == "max" else "lowest"
        for each in handles:
            row = _row((yield ("find_extreme", {"records": each, "mode": pq.aggregate})))
            value, unit = _row_value(view, row)
            converted, to = _asked_unit(pq, value, unit, label(row))
            also = f" = {_with_unit(converted, to)}" if to != unit else ""
            answers.append(converted)
            units.add(to)
            texts.append(f"The {word} {label(row, pq.entity)}{window} was {_shown(row, value, unit)}{also} on "
                         f"{_day(row.get('time'))}.")
        yield final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)
        return
    word = {"mean": "average", "median": "median", "sum": "total"}.get(pq.aggregate or "", pq.aggregate or "")
    for each in handles:
        result = yield ("aggregate", {"records": each, "op": pq.aggregate})
        value, unit = _asked_unit(pq, result["value"], result.get("unit"))
        if len(handles) > 1:
            names = yield ("extract_field_value", {"records": each, "field": name_field(view), "distinct": True})
            items = [str(v["value"]) for v in names.get("values", []) if isinstance(v, dict)]
        else:
            items = found.get("items") or [pq.entity]
        answers.append(value)
        units.add(unit)
        texts.append(f"The {word} {', '.join(items)}{window} was {_with_unit(value, unit)} over "
                     f"{result.get('n', '?')} values.")
    yield final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)


def _plan_range(pq: ParsedQuestion, view: str, handles: list[str], window: str) -> Plan:
    """The lowest and the highest value (each with its day) per analyte: "BP range this year"."""
    answers: list[Any] = []
    texts: list[str] = []
    units: set[str | None] = set()
    for each in handles:
        low = _row((yield ("find_extreme", {"records": each, "mode": "min"})))
        high = _row((yield ("find_extreme", {"records": each, "mode": "max"})))
        if not low or not high:
            continue
        (lo, unit), (hi, _) = _row_value(view, low), _row_value(view, high)
        units.add(unit)
        counted = yield ("aggregate", {"records": each, "op": "count"})
        n = counted.get("value")
        name = label(high, pq.entity)
        if low.get("ref") == high.get("ref") and lo == hi:
            answers.append(lo)
            texts.append(f"Only one {name} value{window}: {_shown(high, hi, unit)} on {_day(high.get('time'))}.")
            continue
        answers += [lo, hi]
        texts.append(f"{name}{window} ranged from {_shown(low, lo, unit)} on {_day(low.get('time'))} to "
                     f"{_shown(high, hi, unit)} on {_day(high.get('time'))}" + (f" ({n} values)." if n else "."))
    if not answers:
        yield final([], f"No numeric {_entity_label(pq)} values{window}.", status="no-data")
        return
    yield final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)


def plan_count(pq: ParsedQuestion) -> Plan:
    """How many measurements / prescriptions / encounters (by class) / procedures."""
    encounter_question = bool(pq.views) and pq.views[0] == "encounter"
    if encounter_question and pq.entity:
        typed = yield from find_records(pq, views=["encounter"])
        if typed is None:
            pq.entity = ""  # words like "healthcare" or "calendar" name no encounter type: count them all
    # a type the words name ("urgent care visits": its type code) is counted, not the whole class it belongs to
    if (pq.encounter_class and not (encounter_question and pq.entity)) or (not pq.entity and encounter_question):
        found = yield ("get_resources", {"view": "encounter"})
        handle = found.get("handle")
        if handle and pq.encounter_class:
            found = yield ("filter_by_value", {"records": handle, "op": "==", "value": pq.encounter_class, "field": "class_code"})
            handle = found.get("handle")
        what = {"IMP": "inpatient", "EMER": "emergency", "AMB": "ambulatory", "VR": "virtual",
                "HH": "home health", "WELLNESS": "wellness"}.get(pq.encounter_class or "", "")
        label = f"{what} encounters".strip()
    elif not pq.entity:
        view = pq.views[0] if pq.views else "observation"
        found = yield ("get_resources", {"view": view, **({"kind": "request"} if view == "medication" else {})})
        handle = found.get("handle")
        label = {"medication": "prescriptions", "condition": "conditions", "procedure": "procedures",
                 "immunization": "immunizations", "observation": "observations", "allergy": "allergies"}.get(view, view)
    else:
        located = yield from find_records(pq, kind=pq.med_kind or "request")
        if located is None:
            yield final([0], f"The record has no {pq.entity}; the count is 0.")
            return
        view, found = located
        if found.get("ambiguous"):
            yield _ambiguous(found, pq.entity)
            return
        handle = found["handle"]
        noun = "doses given" if pq.med_kind == "administration" else "prescriptions"
        label = f"{', '.join(found.get('items') or [pq.entity])} " + (noun if view == "medication" else "records")
    if not handle:
        yield final([0], f"The record has no {label}.")
        return
    filtered = yield from windowed(pq, handle)
    handle = filtered.get("handle") or handle
    if filtered.get("no_anchor"):
        yield _empty_window(pq, label, filtered)
        return
    if filtered.get("count") == 0:
        yield final([0], f"There were no {label} {pq.window.label if pq.window else ''}.".replace("  ", " "))
        return
    counted = yield ("count_values", {"records": handle})
    window = f" {pq.window.label}" if pq.window else ""
    reasons = ""
    if encounter_question and re.search(r"\b(?:why|reasons?|what for)\b", pq.text.lower()):
        # "how many ED visits and why?": the count, and each visit's day and reason
        listed = []
        for index in range(min(int(counted["count"]), 20)):
            row = _row((yield ("get_by_index", {"records": handle, "index": index})))
            listed.append(f"{_day(_row_time(row))} {row.get('reason_name') or 'no reason recorded'}")
        more = f"; and {int(counted['count']) - 20} more" if int(counted["count"]) > 20 else ""
        reasons = f" By visit: {'; '.join(listed)}{more}."
    yield final([counted["count"]], f"{counted['count']} {label}{window}.{reasons}")


def _class_label(pq: ParsedQuestion) -> str:
    return {"IMP": "inpatient", "EMER": "emergency", "AMB": "ambulatory", "VR": "virtual", "HH": "home health",
            "WELLNESS": "wellness"}.get(pq.encounter_class or "", "matching")


@lru_cache(maxsize=1)
def _undocumented_topics() -> list[tuple[str, str, list[re.Pattern[str]]]]:
    from fhirqa.project import lexicon_file

    topics = lexicon_file("undocumented_topics.json")["topics"]
    return [(name, spec["search"], [re.compile(p) for p in spec["asks"]]) for name, spec in topics.items()]


def undocumented_topic(question: str) -> str | None:
    """The social or family history topic a question asks about (``lexicon/undocumented_topics.json``), or None:
    on such a topic a record that holds nothing answers nothing, not No."""
    text = " ".join(question.lower().split())
    return next((name for name, _, patterns in _undocumented_topics() if any(p.search(text) for p in patterns)), None)


def _topic_search(topic: str) -> str:
    return next(search for name, search, _ in _undocumented_topics() if name == topic)


@lru_cache(maxsize=1)
def _allergy_classes() -> frozenset[str]:
    from fhirqa.project import lexicon_file

    return frozenset(lexicon_file("allergy_classes.json")["classes"])


def _generics_of(name: str) -> set[str]:
    """The generics a drug or allergen name stands for: the drug, a class's members, or the combinations holding it
    ("sulfamethoxazole" → trimethoprim/sulfamethoxazole)."""
    from fhirqa.agent.lexicon import Lexicon, normalize

    lexicon = Lexicon.load()
    generic = lexicon.drug_generic(name)
    if generic:
        return {generic}
    members = lexicon.class_members(name)
    if members:
        return set(members)
    key = normalize(name)
    return {m for c in lexicon.data["drugs"]["classes"] for m in c["members"] if key in
            (normalize(part) for part in m.split("/"))}


def _allergy_by_class(drug: str) -> Generator[Call, dict[str, Any], Call | None]:
    """Yes, by class, when the allergy list names another member of an allergy class ``drug`` belongs to (cited);
    None when it does not (the caller says No)."""
    from fhirqa.agent.lexicon import Lexicon

    lexicon = Lexicon.load()
    asked = _generics_of(drug)
    classes = {c for g in asked for c in lexicon.drug_classes(g)} & _allergy_classes()
    if not classes:
        return None
    listed = yield ("get_resources", {"view": "allergy"})
    if not listed.get("count"):
        return None
    names = yield ("extract_field_value", {"records": listed["handle"], "field": "name", "distinct": True})
    for value in names.get("values") or []:
        name = str(value.get("value") if isinstance(value, dict) else value)
        shared = sorted({c for g in _generics_of(name) for c in lexicon.drug_classes(g)} & classes)
        if not shared:
            continue
        one = yield ("filter_by_value", {"records": listed["handle"], "op": "==", "value": name, "field": "name"})
        row = _row((yield ("get_by_index", {"records": one.get("handle") or listed["handle"], "index": -1})))
        return final([True], f"Yes, by class: the record holds an allergy to {row.get('name') or name} "
                             f"({row.get('ref')}), and {drug} is a drug of the same class ({', '.join(shared)}); no "
                             f"allergy to {drug} itself is recorded.")
    return None


def plan_exists(pq: ParsedQuestion) -> Plan:
    """Yes/no: is the item anywhere in the record (within the window)? True negatives say what was searched.

    A question that names its kind of record ("allergic to", "prescribed", "vaccinated") is answered from
    that kind only: penicillin on the medication list is not a penicillin allergy.
    """
    located = yield from encounter_records(pq)
    if located is not None and not located[1].get("count"):
        yield final([False], f"No: the record has no {_class_label(pq)} encounters.")
        return
    pointed = [v for v in pq.views if v in pq.hinted or v in pq.lexicon_views]
    located = located or (yield from find_records(pq, views=pointed or None))
    if located is None and pq.med_kind == "administration":
        charted = yield ("get_resources", {"view": "medication", "kind": "administration"})
        if charted.get("count"):  # a chart of what was given that does not hold it: a plan line in a note is no dose
            yield final([False], f"No: no administration of '{pq.entity}' is charted"
                        f"{(' ' + pq.window.label) if pq.window else ''} ({charted['count']} administrations of other drugs are).")
            return
    if located is None:
        from_notes = yield from notes_answer(pq)
        if from_notes is not None:
            yield from_notes
            return
        searched = ", ".join(pointed or pq.views[:4])
        asked = f"nothing matching '{as_written(pq.entity, pq.text)}'" if pq.entity else "no such records"
        topic = undocumented_topic(pq.text)
        if topic is not None and pq.entity != _topic_search(topic):
            # "does she drink?": the topic's own words may find what the question's did not (an AUDIT-C), and its
            # latest value is the answer (a screen on file is no Yes by itself)
            again = yield from find_records(pq, entity=_topic_search(topic))
            if again is not None:
                pq.entity, pq.intent = _topic_search(topic), "value"
                yield from plan_value(pq)
                return
        if topic is not None:  # an uncharted habit or family history is unknown, not No
            yield final([], f"Not documented: the record says nothing about {topic} ({asked}; searched {searched} and "
                            "the notes).", status="no-data")
            return
        if "allergy" in pointed and pq.entity:
            # "is he allergic to amoxicillin?" with a penicillin allergy on file: yes, by class
            by_class = yield from _allergy_by_class(pq.entity)
            if by_class is not None:
                yield by_class
                return
        yield final([False], f"No: {asked} in the record (searched {searched}).")
        return
    view, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, pq.entity)
        return
    filtered = yield from windowed(pq, found["handle"])
    if filtered.get("no_anchor"):  # "any K after discharge?" for a patient never admitted: unanswerable, not No
        yield _empty_window(pq, f"{pq.entity} records", filtered)
        return
    if filtered.get("count") == 0:
        what = pq.entity or f"{_class_label(pq)} encounters"  # "any ED visits this year?": the class is the item
        said = " ".join(filter(None, [what, pq.window.label if pq.window else ""]))
        yield final([False], f"No {said}, although the record has some at other times.")
        return
    row = _row((yield ("get_by_index", {"records": filtered.get("handle") or found["handle"], "index": -1})))
    name = label(row, pq.entity)
    read_as = reading_said(str(found.get("resolved_by") or ""), pq.entity)  # "cats" read as animal dander
    yield final([True], f"Yes: {name}, most recently on {_day(_row_time(row))}{read_as}.")


def _asks_latest(text: str) -> bool:
    """Whether a threshold is asked of the latest value alone (``question_phrases.json`` ``latest_only``)."""
    from fhirqa.project import lexicon_file

    pattern = (lexicon_file("question_phrases.json").get("latest_only") or {}).get("pattern")
    return bool(pattern and re.search(pattern, " ".join(text.lower().split())))


def plan_threshold(pq: ParsedQuestion) -> Plan:
    """Ever above / below a value (within the window)?"""
    cmp = pq.comparison
    assert cmp is not None
    got = yield from scoped(pq, f"{_entity_label(pq)} results")
    if not isinstance(got, Scope):
        yield got
        return
    view, handle = got.view, got.handle
    asks_latest = _asks_latest(pq.text)
    # the latest row only when it is read: its value, or its unit for a threshold written in one
    latest = _row((yield ("get_by_index", {"records": handle, "index": -1}))) if asks_latest or cmp.unit else {}
    # "any doses of vanc over 1.5 g?" of doses charted in mg: the threshold in the record's unit (1500 mg)
    limit, said = cmp.value, _fmt(cmp.value)
    record_unit = _row_value(view, latest)[1] if latest else None
    if cmp.unit and record_unit and _unit_key(cmp.unit) != _unit_key(record_unit):
        converted = _convert_for(float(cmp.value), cmp.unit, record_unit, pq.entity, label(latest))
        if converted is None:
            yield final([], f"The record gives {_entity_label(pq)} in {record_unit}, which {display_unit(cmp.unit)} does not convert to.",
                        status="no-data")
            return
        limit, said = converted, f"{_fmt(cmp.value)} {display_unit(cmp.unit)} = {_with_unit(converted, record_unit)}"
    if asks_latest:
        # "GFR < 60 on the latest?": the latest value alone, not whether any ever was
        row = latest
        value, unit = _row_value(view, row)
        if not isinstance(value, int | float):
            yield final([], f"The latest {_entity_label(pq)} has no numeric value to compare.", status="no-data")
            return
        met = {"<": value < limit, "<=": value <= limit, ">": value > limit, ">=": value >= limit,
               "==": value == limit}.get(cmp.op, False)
        yield final([met], f"{'Yes' if met else 'No'}: the latest {label(row, pq.entity)} was {_with_unit(value, unit)} "
                    f"on {_day(row.get('time'))} ({'' if met else 'not '}{cmp.op} {said}).")
        return
    hits = yield ("filter_by_value", {"records": handle, "op": cmp.op, "value": limit})
    window = f" {pq.window.label}" if pq.window else ""
    if hits.get("count"):
        mode = "max" if cmp.op.startswith(">") else "min"
        row = _row((yield ("find_extreme", {"records": hits["handle"], "mode": mode})))
        value, unit = _row_value(view, row)
        yield final([True], f"Yes: {hits['count']} value(s) {cmp.op} {said}{window}; the extreme was "
                    f"{_with_unit(value, unit)} on {_day(row.get('time'))}.")
        return
    mode = "max" if cmp.op.startswith(">") else "min"
    row = _row((yield ("find_extreme", {"records": handle, "mode": mode})))
    value, unit = _row_value(view, row)
    yield final([False], f"No: none {cmp.op} {said}{window}; the {'highest' if mode == 'max' else 'lowest'} was "
                f"{_with_unit(value, unit)} on {_day(row.get('time'))}.")


@dataclass
class Picked:
    """The first or last row of the question's records, and its view."""

    view: str
    row: dict[str, Any]


def picked_row(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Picked | Call]:
    """The question's first or last event (by its position), or the final call that says why there is none."""
    got = yield from scoped(pq, f"{_entity_label(pq)} records")
    if not isinstance(got, Scope):
        return got
    row = _row((yield ("get_by_index", {"records": got.handle, "index": 0 if pq.position == "first" else -1})))
    return Picked(got.view, row)


def _extreme_asked(text: str) -> str | None:
    """``max`` or ``min`` when a "when" question asks the time of an extreme value ("when was her highest A1c?")."""
    from fhirqa.project import lexicon_file

    words = lexicon_file("question_phrases.json")["extreme_time"]
    lowered = text.lower()
    return next((mode for mode in ("max", "min") if re.search(words[mode], lowered)), None)


def plan_time_of(pq: ParsedQuestion) -> Plan:
    """Date of the first / last event, or of the highest / lowest value."""
    mode = _extreme_asked(pq.text)
    if mode is not None:
        scope = yield from scoped(pq, f"{_entity_label(pq)} results")
        if not isinstance(scope, Scope):
            yield scope
            return
        got: Picked | Call = Picked(scope.view, _row((yield ("find_extreme", {"records": scope.handle, "mode": mode}))))
    else:
        got = yield from picked_row(pq)
    if not isinstance(got, Picked):
        yield got
        return
    row = got.row
    when = _row_time(row)
    word = ("highest" if mode == "max" else "lowest") if mode else "first" if pq.position == "first" else "last"
    name = label(row, pq.entity)
    # "when was her A1c last checked (and what was it)?": a result's date comes with what it found; "when did she
    # last see a doctor (and why)?": a visit's with its reason
    value, unit = _row_value(got.view, row) if got.view in ("observation", "medication") else (None, None)
    if got.view == "medication" and row.get("dose") is None:
        value = None  # a drug's name is no finding: only a dose it was given is said
    found = f": {_with_unit(value, unit)}" if value is not None and value != "" else ""
    if got.view == "encounter" and row.get("reason_name"):
        found = f" (reason: {row['reason_name']})"
    yield final([when], f"The {word} {name} was on {_day(when)}{found}.")


def plan_time_since(pq: ParsedQuestion) -> Plan:
    """Time elapsed from the last (or first) event until now."""
    got = yield from picked_row(pq)
    if not isinstance(got, Picked):
        yield got
        return
    row = got.row
    when = _row_time(row)
    offset = yield ("calculate_time_offset", {"start": when, "unit": pq.time_unit})
    yield final([offset["value"]], f"{_fmt(offset['value'])} {pq.time_unit} since {label(row, pq.entity)} on {_day(when)}.",
                unit=pq.time_unit)


def _first_last(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], list[tuple[Any, ...]] | Call]:
    """(view, first row, last row, difference result) per item compared, or the final call when there is no change.

    Each item is compared with itself: a set holding several items (systolic and diastolic for "BP", two
    analytes a phrase named) gives one comparison per item, never the first of one against the last of another.
    """
    got = yield from scoped(pq, f"{_entity_label(pq)} results")
    if not isinstance(got, Scope):
        return got
    view, handle = got.view, got.handle
    first = _row((yield ("get_by_index", {"records": handle, "index": 0})))
    last = _row((yield ("get_by_index", {"records": handle, "index": -1})))
    handles = [handle]
    if first.get(name_field(view)) != last.get(name_field(view)):
        handles = yield from analyte_handles(view, handle)
    out: list[tuple[Any, ...]] = []
    single: Call | None = None
    for each in handles:
        if each != handle:
            first = _row((yield ("get_by_index", {"records": each, "index": 0})))
            last = _row((yield ("get_by_index", {"records": each, "index": -1})))
        if first.get("ref") == last.get("ref") and first.get("time") == last.get("time"):
            single = single or final([], f"Only one {label(last, pq.entity)} value{(' ' + pq.window.label) if pq.window else ''} "
                                         f"({_with_unit(*_row_value(view, first))} on {_day(first.get('time'))}); a change needs two.",
                                     status="no-data")
            continue
        values = (_row_value(view, first)[0], _row_value(view, last)[0])
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):  # names, codes: no arithmetic
            single = single or final([], f"{_entity_label(pq).capitalize()} has no numbers to compare: the first is "
                                         f"{_fmt(values[0])} ({_day(first.get('time'))}), the last {_fmt(values[1])} "
                                         f"({_day(last.get('time'))}).", status="no-data")
            continue
        diff = yield ("calculate_difference", {"a": values[1], "b": values[0]})
        out.append((view, first, last, diff))
    if not out:
        assert single is not None
        return single
    return out


_MAX_ITEMS_COMPARED = 4  # "BP": systolic and diastolic; a phrase naming a few analytes


def analyte_handles(view: str, handle: str) -> Generator[Call, dict[str, Any], list[str]]:
    """``handle`` cut into one set per analyte it holds (systolic and diastolic for "BP"), or ``[handle]``.

    Names of one test (two eGFR codes) stay one set; a statistic, a series or a comparison is then computed
    per analyte, never over the systolic and diastolic values together.
    """
    field = name_field(view)
    names = yield ("extract_field_value", {"records": handle, "field": field, "distinct": True})
    analytes = _analytes([str(v["value"]) for v in names.get("values", []) if isinstance(v, dict)])
    if len(analytes) < 2:
        return [handle]
    handles = []
    for members in list(analytes.values())[:_MAX_ITEMS_COMPARED]:
        one = handle
        if len(members) == 1:  # one name: keep it (one call, however many other analytes the set holds)
            kept = yield ("filter_by_value", {"records": one, "op": "==", "value": members[0], "field": field})
            handles.append(kept.get("handle") or one)
            continue
        for other in (n for group in analytes.values() if group is not members for n in group):
            narrowed = yield ("filter_by_value", {"records": one, "op": "!=", "value": other, "field": field})
            one = narrowed.get("handle") or one
        handles.append(one)
    return handles


def _analytes(names: list[str]) -> dict[str, list[str]]:
    """Item names grouped by what the lexicon reads them as (its first reading, else the name itself): names of one
    test (two eGFR codes) share a group, the parts of a panel (systolic, diastolic) do not."""
    from fhirqa.agent.lexicon import Lexicon

    groups: dict[str, list[str]] = {}
    lexicon = Lexicon.load()
    order = _component_order()
    for name in names:
        readings = lexicon.expand(name)
        # "Non Invasive Blood Pressure systolic" reads as the panel and as its part: the part is the analyte
        parts = [r for r in readings if r.term.lower() in order]
        reading = parts[0] if parts else readings[0] if readings else None
        groups.setdefault(reading.term if reading is not None else name, []).append(name)
    # A panel's parts in the order the panel is written (systolic before diastolic: "120/80")
    ranked = sorted(groups.items(), key=lambda kv: min(order.get(n.lower(), len(order)) for n in kv[1]))
    return dict(ranked)


@lru_cache(maxsize=1)
def _component_order() -> dict[str, int]:
    """Position of each panel component name in its panel (lexicon ``components``), lower-cased."""
    from fhirqa.agent.lexicon import Lexicon

    order: dict[str, int] = {}
    for entries in Lexicon.load().data.values():
        for entry in entries.get("entries", []) if isinstance(entries, dict) else []:
            for i, name in enumerate(entry.get("components") or [] if isinstance(entry, dict) else []):
                order.setdefault(str(name).lower(), i)
    return order


def plan_change(pq: ParsedQuestion) -> Plan:
    """Last minus first value within the window (across a drug's start: first after minus last before), per item."""
    if pq.around_drug and pq.drug:
        yield from plan_around_drug(pq)
        return
    got = yield from _first_last(pq)
    if isinstance(got, tuple):
        yield got
        return
    answers, texts, units = [], [], set()
    for view, first, last, diff in got:
        unit = _row_value(view, last)[1]
        units.add(unit)
        answers.append(diff["difference"])
        texts.append(f"{label(last, pq.entity)} went from {_with_unit(*_row_value(view, first))} on "
                     f"{_day(first.get('time'))} to {_with_unit(*_row_value(view, last))} on {_day(last.get('time'))}: "
                     f"a change of {_with_unit(diff['difference'], unit)}.")
    yield final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)


TREND_THRESHOLD = 0.05  # relative change that counts as a trend (docs/questions.md)


def plan_trend(pq: ParsedQuestion) -> Plan:
    """Increasing / decreasing / stable by the relative change from first to last value, per item."""
    got = yield from _first_last(pq)
    if isinstance(got, tuple):
        yield got
        return
    answers, texts = [], []
    for view, first, last, diff in got:
        base = _row_value(view, first)[0]
        relative = diff["difference"] / abs(base) if base else 0.0
        trend = "increasing" if relative > TREND_THRESHOLD else "decreasing" if relative < -TREND_THRESHOLD else "stable"
        answers.append(trend)
        texts.append(f"{trend.capitalize()}: {label(last, pq.entity)} went from {_with_unit(*_row_value(view, first))} "
                     f"on {_day(first.get('time'))} to {_with_unit(*_row_value(view, last))} on "
                     f"{_day(last.get('time'))} ({relative:+.0%}).")
    yield final(answers, " ".join(texts))


def plan_daily_dose(pq: ParsedQuestion) -> Plan:
    """Daily total: from the latest order's dose × frequency, or the per-day sum of administrations."""
    located = yield from find_records(pq, views=["medication"])
    if located is None and pq.aggregate == "sum" and not pq.comparison:
        # "total flu shots given in 2019": not a drug's doses but records of another kind, counted. A drug
        # the record does not hold at all has no daily dose: that is no data, not a count of 0.
        elsewhere = yield from find_records(pq)
        if elsewhere is not None and elsewhere[0] != "medication":
            yield from plan_count(pq)
            return
    if located is None:
        if pq.comparison:  # "ever more than 2 g of vanc in a day?" with no vancomycin at all: no
            yield final([False], f"No: the record has no {pq.entity} at all.")
            return
        yield _no_match(pq, f"medication matching '{pq.entity}'")
        return
    _, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, pq.entity)
        return
    handle = found["handle"]
    admin = yield ("filter_by_value", {"records": handle, "op": "==", "value": "administration", "field": "kind"})
    if admin.get("count") and pq.med_kind != "request":
        yield from _administered_per_day(pq, admin["handle"])
        return
    requests = yield ("filter_by_value", {"records": handle, "op": "==", "value": "request", "field": "kind"})
    target = str(requests.get("handle")) if requests.get("count") else handle
    # The most recent order that states a dose and a frequency (later orders may carry only a name).
    dosed = yield ("filter_by_value", {"records": target, "op": "exists", "field": "daily_dose"})
    if dosed.get("count"):
        target = dosed["handle"]
    filtered = yield from windowed(pq, target)
    if filtered.get("count") == 0:
        yield _empty_window(pq, f"{pq.entity} orders", filtered)
        return
    row = _row((yield ("get_by_index", {"records": filtered.get("handle") or target, "index": -1})))
    daily = row.get("daily_dose")
    if daily is None:
        yield final([], f"The latest {row.get('medication_name', pq.entity)} order ({_day(row.get('time'))}) has no dose and frequency to compute a daily total from.", status="no-data")
        return
    unit = row.get("dose_unit")
    if pq.comparison:
        limit = _convert(pq.comparison.value, pq.comparison.unit, unit) or pq.comparison.value
        yield final([_compare(daily, pq.comparison.op, limit)], f"The ordered daily dose is {_with_unit(daily, unit)}.")
        return
    yield final([daily], f"{row.get('medication_name', pq.entity)} ordered {_day(row.get('time'))}: {_fmt(row.get('dose'))} "
                f"{unit or 'unit(s)'} × {row.get('frequency')} per {_fmt(row.get('period'))} {row.get('period_unit')} = {_with_unit(daily, unit)} per day.", unit=unit)


def _administered_per_day(pq: ParsedQuestion, handle: str) -> Plan:
    """Daily totals of what was given: over a limit on any day, the peak day, one day's total, or the latest day."""
    for status in NOT_GIVEN:
        # a dose charted as not given (or in error) was not given
        undone = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            given = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
            handle = given.get("handle") or handle
    scoped_admin = yield from windowed(pq, handle)
    if scoped_admin.get("count") == 0:
        yield _empty_window(pq, f"{pq.entity} administrations", scoped_admin)
        return
    handle = scoped_admin.get("handle") or handle
    if _one_day(pq) and not pq.comparison:
        total = yield ("aggregate", {"records": handle, "op": "sum", "field": "dose"})
        value, unit = _asked_unit(pq, total["value"], total.get("unit"))
        yield final([value], f"Total {pq.entity} given {pq.window.label if pq.window else ''}: {_with_unit(value, unit)} "
                    f"over {total.get('n', '?')} administrations.", unit=unit)
        return
    per_day = yield ("aggregate", {"records": handle, "op": "sum", "field": "dose", "group_by": "day"})
    unit = per_day.get("unit")
    peak: dict[str, Any] | None = per_day.get("highest_day")
    if pq.comparison:
        limit = _convert(pq.comparison.value, pq.comparison.unit, unit)
        if limit is None:
            yield final([], f"Cannot compare {pq.comparison.unit} with {unit}.", status="error")
            return
        over = peak is not None and _compare(peak["value"], pq.comparison.op, limit)
        shown = f"{_fmt(pq.comparison.value)} {pq.comparison.unit or unit or ''}".strip()
        if peak is None:
            text = "No: the highest daily total was n/a."
        elif over:
            text = f"Yes: the highest daily total was {_with_unit(peak['value'], unit)} on {peak['day']}, {pq.comparison.op} {shown}."
        else:
            text = f"No: the highest daily total was {_with_unit(peak['value'], unit)} on {peak['day']}."
        yield final([over], text)
        return
    if pq.aggregate in ("max", "min") and peak:
        extreme = peak if pq.aggregate == "max" else per_day.get("lowest_day") or peak
        word = "highest" if pq.aggregate == "max" else "lowest"
        yield final([extreme["value"]], f"The {word} daily total of {pq.entity} was {_with_unit(extreme['value'], unit)} on "
                    f"{extreme['day']}.", unit=unit)
        return
    last = _row((yield ("get_by_index", {"records": handle, "index": -1})))
    day = _day(last.get("time"))
    that_day = yield ("filter_by_date", {"records": handle, "start": day, "end": day})
    total = yield ("aggregate", {"records": that_day["handle"], "op": "sum", "field": "dose"})
    yield final([total["value"]], f"Total {pq.entity} given on {day}: {_with_unit(total['value'], total.get('unit'))} "
                f"over {total.get('n', '?')} administrations.", unit=total.get("unit"))


def _convert_for(value: float, unit: str | None, to: str | None, *names: str | None) -> float | None:
    """``value`` converted for the first of ``names`` (the question's item, then the record's) that converts it:
    "BUN > 20 mg/dL" against urea in mmol/L is read as the question means BUN, not as the record's urea."""
    for name in names or ("",):
        converted = _convert(value, unit, to, name or "")
        if converted is not None:
            return converted
    return None


def _asked_unit(pq: ParsedQuestion, value: Any, unit: str | None, name: str = "") -> tuple[Any, str | None]:
    """``value`` in the unit the question asked for ("in grams", "glucose in mmol/L"), when the two units convert
    (concentrations of an analyte named by the question's item or by ``name``, the record's)."""
    if pq.unit and isinstance(value, (int, float)) and not isinstance(value, bool) and unit:
        converted = _convert_for(float(value), unit, pq.unit, pq.entity, name)
        if converted is not None and _unit_key(unit) != _unit_key(pq.unit):
            return converted, display_unit(pq.unit)
    return value, unit


def _one_day(pq: ParsedQuestion) -> bool:
    """Whether the question's window is a single day ("on 2025-09-12", "on Nov 29")."""
    w = pq.window
    return w is not None and w.start is not None and w.end is not None and (w.end - w.start).total_seconds() <= 86_400


def _compare(a: float, op: str, b: float) -> bool:
    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b, "==": a == b}.get(op, False)


def _first_order(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], tuple[dict[str, Any], Call | None]]:
    """The first order of the question's drug, or the closing call when there is none or the name is ambiguous."""
    located = yield from find_records(pq, views=["medication"], entity=pq.drug)
    if located is None:
        return {}, _no_match(pq, f"medication matching '{pq.drug}'")
    _, drug = located
    if drug.get("ambiguous"):
        return {}, _ambiguous(drug, pq.drug or "")
    return _row((yield ("get_by_index", {"records": drug["handle"], "index": 0}))), None


def plan_after_drug(pq: ParsedQuestion) -> Plan:
    """First / last value of an item after a drug was first started."""
    start_row, failed = yield from _first_order(pq)
    if failed is not None:
        yield failed
        return
    started = start_row.get("time")
    found = yield from find_records(pq, views=[v for v in pq.views if v != "medication"] or ["observation"])
    if found is None:
        yield _no_match(pq, f"{pq.entity} results")
        return
    view, result = found
    if result.get("ambiguous"):
        yield _ambiguous(result, pq.entity)
        return
    after = yield ("filter_by_date", {"records": result["handle"], "start": started})
    drug_name = start_row.get("medication_name", pq.drug)
    if not after.get("count"):
        yield final([], f"No {pq.entity} after {drug_name} was started on {_day(started)}.", status="no-data")
        return
    if pq.aggregate in ("max", "min"):  # "the lowest TG since I started the statin": the extreme after the start
        row = _row((yield ("find_extreme", {"records": after["handle"], "mode": pq.aggregate})))
        word = "highest" if pq.aggregate == "max" else "lowest"
    else:
        row = _row((yield ("get_by_index", {"records": after["handle"], "index": 0 if pq.position == "first" else -1})))
        word = "first" if pq.position == "first" else "most recent"
    value, unit = _row_value(view, row)
    yield final([value], f"The {word} {label(row, pq.entity)} after {drug_name} started on {_day(started)} was "
                f"{_with_unit(value, unit)} on {_day(row.get('time'))}.", unit=unit)


def plan_around_drug(pq: ParsedQuestion) -> Plan:
    """"LDL before vs after the statin": the first value after the drug's first prescription minus the last before it."""
    start_row, failed = yield from _first_order(pq)
    if failed is not None:
        yield failed
        return
    started = _instant(start_row.get("time"))
    found = yield from find_records(pq, views=[v for v in pq.views if v != "medication"] or ["observation"], numeric=True)
    if found is None or started is None:
        yield _no_match(pq, f"{pq.entity} results")
        return
    view, result = found
    if result.get("ambiguous"):
        yield _ambiguous(result, pq.entity)
        return
    drug_name = start_row.get("medication_name", pq.drug)
    before = yield ("filter_by_date", {"records": result["handle"], "end": _iso(started - timedelta(microseconds=1))})
    after = yield ("filter_by_date", {"records": result["handle"], "start": _iso(started)})
    if not before.get("count") or not after.get("count"):
        side = "before" if not before.get("count") else "after"
        yield final([], f"No {pq.entity} {side} {drug_name} was started on {_day(_iso(started))}; a change needs one on "
                    "each side.", status="no-data")
        return
    last_before = _row((yield ("get_by_index", {"records": before["handle"], "index": -1})))
    first_after = _row((yield ("get_by_index", {"records": after["handle"], "index": 0})))
    (a, unit), (b, _) = _row_value(view, first_after), _row_value(view, last_before)
    diff = yield ("calculate_difference", {"a": a, "b": b})
    yield final([diff["difference"]], f"{label(first_after, pq.entity)}: {_with_unit(b, unit)} on {_day(last_before.get('time'))} "
                f"(last before {drug_name} started {_day(_iso(started))}) → {_with_unit(a, unit)} on "
                f"{_day(first_after.get('time'))} (first after): a change of {_with_unit(diff['difference'], unit)}.", unit=unit)


def stay_classes(pq: ParsedQuestion) -> list[str]:
    """Encounter classes whose encounters are stays: the class the question names ("discharged from the ED"),
    else the lexicon's stay classes with their related codes (inpatient: IMP, ACUTE, NONAC)."""
    if pq.encounter_class and pq.encounter_class != "IMP":
        return [pq.encounter_class]
    from fhirqa.agent.lexicon import Lexicon

    encounters = Lexicon.load().data["encounters"]
    kinds = encounters.get("stay_events", {}).get("stay_classes", ["IMP"])
    codes = [code for group in encounters["classes"] if group["code"] in kinds
             for code in (group["code"], *group.get("related_codes", []))]
    return codes or ["IMP"]


def plan_stay(pq: ParsedQuestion) -> Plan:
    """A stay's end or length: the last (first) discharge date, days since it, discharges counted, length of stay.

    A discharge is the end of a stay's period (a stay still open at now has none yet); a length of stay is the
    calendar days from the admission date to the discharge date, or to now while the stay goes on.
    """
    discharge = pq.stay_event == "discharge"
    order = "end_time" if discharge else "start_time"
    found = yield ("get_resources", {"view": "encounter"})
    rows: list[dict[str, Any]] = []
    total = 0
    for code in stay_classes(pq) if found.get("count") else []:
        of_class = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": code, "field": "class_code"})
        if not of_class.get("count"):
            continue
        handle = of_class["handle"]
        if discharge:  # ended by now: an open stay has no discharge yet
            ended = yield ("filter_by_date", {"records": handle, "end": _iso(pq.now), "field": "end_time"})
            if not ended.get("count"):
                continue
            handle = ended["handle"]
        filtered = yield from windowed(pq, handle, field=order)
        if filtered.get("count") == 0:
            continue
        handle = filtered.get("handle") or handle
        if pq.intent == "count":
            total += (yield ("count_values", {"records": handle}))["count"]
            continue
        index = 0 if pq.position == "first" else -1
        rows.append(_row((yield ("get_by_index", {"records": handle, "index": index, "order_by": order}))))
    window = f" {pq.window.label}" if pq.window and not pq.window.anchor else ""
    what = "discharges" if discharge else "inpatient stays"
    if pq.intent == "count":
        yield final([total], f"{total} {what}{window}.")
        return
    dated = [r for r in rows if _instant(r.get(order))]
    if pq.intent == "exists":
        yield final([bool(dated)], f"Yes: {len(dated)} or more {what}{window}." if dated else f"No {what}{window} in the record.")
        return
    if not dated:
        yield final([], f"The record has no {what}{window}.", status="no-data")
        return
    pick = min if pq.position == "first" else max
    row = pick(dated, key=lambda r: _instant(r[order]))  # type: ignore[arg-type,return-value]
    word = "first" if pq.position == "first" else "last"
    stay = f"{label(row, 'stay')} admitted {_day(row.get('start_time'))}"
    if discharge and pq.intent == "time_since":
        offset = yield ("calculate_time_offset", {"start": row["end_time"], "unit": pq.time_unit})
        yield final([offset["value"]], f"{_fmt(offset['value'])} {pq.time_unit} since the {word} discharge on "
                    f"{_day(row['end_time'])} ({stay}).", unit=pq.time_unit)
        return
    if discharge:
        yield final([row["end_time"]], f"The {word} discharge was on {_day(row['end_time'])} ({stay}).")
        return
    end = _instant(row.get("end_time"))
    ongoing = end is None or (pq.now is not None and end > pq.now)
    if pq.stay_event == "hospital_day":
        yield from _hospital_day(row, ongoing)
        return
    args: dict[str, Any] = {"start": row["start_time"], "unit": pq.time_unit}
    if not ongoing:
        args["end"] = row["end_time"]
        if pq.time_unit == "days":  # calendar days between the dates the stay was written with (the ones said)
            args.update(start=_day(row["start_time"]), end=_day(row["end_time"]))
    length = yield ("calculate_time_offset", args)
    until = "so far (still admitted)" if ongoing else f"to discharge on {_day(row['end_time'])}"
    yield final([length["value"]], f"Length of the {word} stay: {_fmt(length['value'])} {pq.time_unit}, from admission on "
                f"{_day(row['start_time'])} {until} ({label(row, 'stay')}).", unit=pq.time_unit)


def _hospital_day(row: dict[str, Any], ongoing: bool) -> Plan:
    """Which day of the stay it is now: day 1 is the day of admission (calendar days since it, plus one)."""
    stay = f"{label(row, 'stay')} admitted {_day(row.get('start_time'))}"
    if not ongoing:
        yield final([], f"Not in a stay now: the last one ({stay}) ended on {_day(row.get('end_time'))}.", status="no-data")
        return
    since = yield ("calculate_time_offset", {"start": row["start_time"], "unit": "days"})
    day = since["value"] + 1
    yield final([day], f"Hospital day {day} ({stay}; day 1 is the day of admission).")


def plan_active_list(pq: ParsedQuestion) -> Plan:
    """Conditions, medications or allergies active at a time (default: now)."""
    view = {"medication": "medication", "allergy": "allergy"}.get(pq.list_kind or "", "condition")
    at = pq.at_time or pq.now
    when = f"on {pq.at_time.date()}" if pq.at_time else "currently"
    drug = _drug_entity(pq) if view == "medication" else None
    if view == "medication":
        # "what antihypertensives is she taking?": the active list of that class (or drug) only
        found = yield ("get_resources", {"view": "medication", "kind": "request", **({"item": drug} if drug else {})})
        if not found.get("count"):
            if drug and pq.aggregate != "absent":
                yield final([0] if pq.aggregate == "count" else [], f"No {drug} orders in the record.")
                return
            yield _no_entries(pq, "The record has no medication orders.")
            return
        if pq.at_time is None:
            active = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "active", "field": "status"})
        else:
            active = yield ("filter_by_date", {"records": found["handle"], "end": _iso(at)})
            if active.get("count"):
                active = yield ("filter_by_date", {"records": active["handle"], "start": _iso(at), "field": "end_time",
                                                   "include_missing": True})
    else:
        found = yield ("get_resources", {"view": view})
        if not found.get("count"):
            yield _no_entries(pq, f"The record has no {view} entries.")
            return
        onset = "onset_time" if view == "condition" else "recorded_time"
        active = yield ("filter_by_date", {"records": found["handle"], "end": _iso(at), "field": onset,
                                           "include_missing": view != "condition"})
        if active.get("count") and view == "condition":
            active = yield ("filter_by_date", {"records": active["handle"], "start": _iso(at), "field": "abatement_time",
                                               "include_missing": True})
            if active.get("count") and pq.at_time is None:
                active = yield from _clinically_active(active, at)
    if pq.aggregate == "absent":  # "NKDA?": whether the list holds no item of the category asked
        yield from _none_of_category(pq, view, active, when)
        return
    kind = (drug if drug.endswith("s") else f"{drug}s") if drug else _plural(pq.list_kind or view)
    if not active.get("count"):
        yield final([0] if pq.aggregate == "count" else [], f"No active {kind} {when}.")
        return
    names = yield ("extract_field_value", {"records": active["handle"], "field": name_field(view), "distinct": True})
    values = [v["value"] for v in names.get("values", []) if isinstance(v, dict)]  # not the "… N more" marker
    more = _more(names, len(values))
    if pq.aggregate == "count":  # "# active meds?": distinct items on the current list (a renewal is one drug)
        total = names.get("count") or len(values)
        yield final([total], f"{total} active {kind} {when}: {'; '.join(map(str, values))}{more}.")
        return
    # The answer holds every item (list_from), not only the ones the preview showed.
    yield final([], f"Active {kind} {when}: {'; '.join(map(str, values))}{more}.",
                list_from=active["handle"], list_field=name_field(view))


def _drug_entity(pq: ParsedQuestion) -> str | None:
    """The drug or drug class a medication list question names ("what statins is she on?"), None for the whole list."""
    from fhirqa.agent.lexicon import Lexicon

    if not pq.entity:
        return None
    return Lexicon.load().drug_phrase(pq.entity.lower().split())


def _no_entries(pq: ParsedQuestion, text: str) -> Call:
    """The answer when the record holds no entry of the list's kind: an empty list, a count of 0, or Yes to "NKDA?"."""
    if pq.aggregate == "absent":
        return final([True], f"Yes: {text[0].lower()}{text[1:]}")
    return final([0] if pq.aggregate == "count" else [], text)


def _none_of_category(pq: ParsedQuestion, view: str, active: dict[str, Any], when: str) -> Plan:
    """Yes when the current list holds no item of ``pq.list_category`` ("NKDA?": no drug allergy), naming the others."""
    kind = pq.list_kind or view
    what = f"{pq.list_category} {kind}" if pq.list_category else kind
    if not active.get("count"):
        yield final([True], f"Yes: no {what} is recorded {when}.")
        return
    hits = active
    if pq.list_category:
        hits = yield ("filter_by_value", {"records": active["handle"], "op": "contains", "value": pq.list_category,
                                          "field": "category"})
    if not hits.get("count"):
        others = yield ("extract_field_value", {"records": active["handle"], "field": name_field(view), "distinct": True})
        shown = "; ".join(str(v["value"]) for v in others.get("values", []) if isinstance(v, dict))
        yield final([True], f"Yes: no {what} is recorded {when} (other {kind} entries: {shown}).")
        return
    names = yield ("extract_field_value", {"records": hits["handle"], "field": name_field(view), "distinct": True})
    shown = "; ".join(str(v["value"]) for v in names.get("values", []) if isinstance(v, dict))
    yield final([False], f"No: {what} entries are recorded {when}: {shown}.")


def _plural(kind: str) -> str:
    """"allergy" → "allergies", "medication" → "medications"."""
    return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"


def _clinically_active(result: dict[str, Any], at: datetime | str | None = None) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """Conditions still open by their clinical status (an MI charted 'inactive' without an end date is over).

    With ``at``, a condition whose abatement lies after ``at`` is open then whatever its status says: the status is
    the record's last word, written when it resolved, later than ``at`` (a colon polyp found in 1991 and removed in
    1992 is on the list of a question asked in March 1992)."""
    dated: dict[str, Any] = {}
    if at is not None and result.get("count"):
        start = at if isinstance(at, str) else _iso(at)
        dated = yield ("filter_by_date", {"records": result["handle"], "start": start, "field": "abatement_time"})
    result = yield from _open_by_status(result)
    if dated.get("count") and result.get("handle"):
        result = yield ("combine_evidence", {"handles": [result["handle"], dated["handle"]]})
    return result


def _open_by_status(result: dict[str, Any]) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The conditions whose clinical status is not a closed one."""
    for closed in ("inactive", "resolved", "remission"):
        if not result.get("count"):
            break
        kept = yield ("filter_by_value", {"records": result["handle"], "op": "!=", "value": closed, "field": "clinical_status"})
        if kept.get("count") is not None and kept.get("handle"):
            result = kept
    return result


def name_field(view: str) -> str:
    """The column that names an item in ``view`` (from the catalog)."""
    try:
        return view_info(view).name_field
    except UnknownView:
        return "name"


def plan_list_items(pq: ParsedQuestion) -> Plan:
    """Distinct item names of a view (within the window)."""
    if pq.aggregate == "started":
        yield from plan_started(pq)
        return
    view = pq.views[0] if pq.views else "condition"
    found = yield ("get_resources", {"view": view})
    if not found.get("count"):
        yield final([], f"The record has no {view} entries.", status="no-data")
        return
    filtered = yield from windowed(pq, found["handle"])
    if filtered.get("count") == 0:
        yield _empty_window(pq, f"{view} entries", filtered)
        return
    handle = filtered.get("handle") or found["handle"]
    names = yield ("extract_field_value", {"records": handle, "field": name_field(view), "distinct": True})
    values = [v["value"] for v in names.get("values", []) if isinstance(v, dict)]  # not the "… N more" marker
    total = names.get("count") or len(values)
    yield final([], f"{total} distinct: {'; '.join(map(str, values))}{_more(names, len(values))}.",
                list_from=handle, list_field=name_field(view))


_MAX_STARTED_ROWS = 60  # rows of a window read one by one for "what was started"; more is a list, not a start


def plan_started(pq: ParsedQuestion) -> Plan:
    """Items first recorded in the window ("what was started in the last 90 days?"): names ordered in the window
    that no earlier record has (a renewal is not a start)."""
    view = pq.views[0] if pq.views else "medication"
    what = "medications" if view == "medication" else f"{view} entries"
    found = yield ("get_resources", {"view": view, **({"kind": "request"} if view == "medication" else {})})
    if not found.get("count"):
        yield final([], f"The record has no {what}.")
        return
    inside = yield from windowed(pq, found["handle"])
    label_ = pq.window.label if pq.window else "in that window"
    if not inside.get("count"):
        yield final([False] if pq.yes_no else [], f"{'No: nothing' if pq.yes_no else 'Nothing'} was started {label_} "
                    f"(no {what} in that window).")
        return
    window = inside.get("window") or {}
    earlier: dict[str, Any] = {}
    start = _instant(window.get("start"))
    if start is not None:
        earlier = yield ("filter_by_date", {"records": found["handle"], "end": _iso(start - timedelta(seconds=1))})
    started: list[Any] = []
    renewed: list[Any] = []
    # row by row (a result's preview is cut to its first and last rows when sent back): few rows in a window
    for index in range(min(int(inside["count"]), _MAX_STARTED_ROWS)):
        row = _row((yield ("get_by_index", {"records": inside["handle"], "index": index})))
        name = row.get(name_field(view))
        if name is None or name in started or name in renewed:
            continue
        if earlier.get("count"):
            before = yield ("filter_by_value", {"records": earlier["handle"], "op": "==", "value": name,
                                                "field": name_field(view)})
            if before.get("count") and view == "condition" and row.get("onset_time") is not None:
                # a problem that had resolved before this onset is a new episode ("viral sinusitis" again), not the
                # same diagnosis carried on
                before = yield ("filter_by_date", {"records": before["handle"], "start": str(row["onset_time"]),
                                                   "field": "abatement_time", "include_missing": True})
            if before.get("count"):
                renewed.append(name)
                continue
        started.append(name)
    also = f" ({len(renewed)} renewed, ordered before too: {'; '.join(map(str, renewed))})" if renewed else ""
    if pq.yes_no:  # "any new meds this admission?": yes or no, and what was started
        yield final([bool(started)], f"Yes: started {label_}: {'; '.join(map(str, started))}{also}." if started
                    else f"No: nothing new was started {label_}{also}.")
        return
    if not started:
        yield final([], f"Nothing new was started {label_}{also}.")
        return
    yield final(started, f"Started {label_}: {'; '.join(map(str, started))}{also}.")


def _more(names: dict[str, Any], shown: int) -> str:
    """" (and N more)" when a result listed fewer distinct values than it counted."""
    total = names.get("count")
    left = total - shown if isinstance(total, int) and total > shown else 0
    return f" (and {left} more)" if left else ""


def plan_age(pq: ParsedQuestion) -> Plan:
    """Completed years from birth to now (or to death)."""
    found = yield ("get_resources", {"view": "patient", "fields": ["name", "birth_date", "deceased_time"]})
    if not found.get("count"):
        yield final([], "The record has no Patient resource.", status="no-data")
        return
    row = _row((yield ("get_by_index", {"records": found["handle"], "index": 0, "order_by": "birth_date"})))
    if not row.get("birth_date"):
        yield final([], "The record has no birth date.", status="no-data")
        return
    if pq.encounter_class:
        yield from _age_at_encounter(pq, row)
        return
    args: dict[str, Any] = {"start": row["birth_date"], "unit": "years"}
    if row.get("deceased_time"):
        args["end"] = row["deceased_time"]
    age = yield ("calculate_time_offset", args)
    died = f" at death on {_day(row['deceased_time'])}" if row.get("deceased_time") else ""
    yield final([age["value"]], f"{row.get('name', 'The patient')} is {age['value']} years old{died} (born {row['birth_date']}).", unit="years")


def _age_at_encounter(pq: ParsedQuestion, person: dict[str, Any]) -> Plan:
    """"How old was he when admitted?": completed years at the start of the latest (first) encounter of the class
    the question names, as the SQL path answers it."""
    found = yield from encounter_records(pq)
    if found is None or not found[1].get("count"):
        yield final([], f"The record has no {_class_label(pq)} encounters.", status="no-data")
        return
    row = _row((yield ("get_by_index", {"records": found[1]["handle"], "index": 0 if pq.position == "first" else -1})))
    when = _row_time(row)
    age = yield ("calculate_time_offset", {"start": person["birth_date"], "end": when, "unit": "years"})
    which = "first" if pq.position == "first" else "latest"
    yield final([age["value"]], f"{age['value']} years old at the {which} {_class_label(pq)} encounter on {_day(when)} "
                f"(born {person['birth_date']}).", unit="years")


def plan_demographic(pq: ParsedQuestion) -> Plan:
    """Birth date, gender, name or death from the patient view (or a fact of ``lexicon/demographics.json``)."""
    from fhirqa.project import lexicon_file

    spec = lexicon_file("demographics.json")["fields"].get(pq.demographic or "")
    if spec is not None:
        yield from _patient_fact(pq, str(pq.demographic), spec)
        return
    field = {"birth_date": "birth_date", "gender": "gender", "name": "name", "deceased": "deceased_time",
             "is_deceased": "deceased_time", "is_alive": "deceased_time"}[pq.demographic or "name"]
    found = yield ("get_resources", {"view": "patient", "fields": ["name", field]})
    if not found.get("count"):
        yield final([], "The record has no Patient resource.", status="no-data")
        return
    value = (yield ("extract_field_value", {"records": found["handle"], "field": field}))["values"]
    values = [v["value"] if isinstance(v, dict) else v for v in value if (v["value"] if isinstance(v, dict) else v) is not None]
    if pq.demographic == "is_alive":
        yield final([not values], f"No: died on {_day(values[0])}." if values else "Yes: no death is recorded.")
        return
    if pq.demographic == "is_deceased":
        yield final([bool(values)], f"Yes: died on {_day(values[0])}." if values else "No death is recorded.")
        return
    if pq.demographic == "deceased":  # the date of death: none recorded is no date (a living patient)
        yield (final([values[0]], f"Died on {_day(values[0])}.") if values
               else final([], "No death is recorded.", status="no-data"))
        return
    if not values:
        yield final([], f"The record has no {field.replace('_', ' ')}.", status="no-data")
        return
    yield final(values[:1], f"{field.replace('_', ' ').capitalize()}: {values[0]}.")


def _patient_fact(pq: ParsedQuestion, field: str, spec: dict[str, Any]) -> Plan:
    """A patient view column as the record writes it, with words for a code; a yes/no ("is she married?") is
    whether the value is one of the words the question names."""
    also = spec.get("also")
    found = yield ("get_resources", {"view": "patient", "fields": ["name", field, *([also] if also else [])]})
    if not found.get("count"):
        yield final([], "The record has no Patient resource.", status="no-data")
        return
    row = _row((yield ("get_by_index", {"records": found["handle"], "index": 0})))
    raw = row.get(field)
    if raw in (None, ""):
        yield final([], f"The record does not state the patient's {spec['say'].lower()}.", status="no-data")
        return
    codes = {k.lower(): v for k, v in (spec.get("codes") or {}).items()}
    text = str(raw)
    words = codes.get(text.lower()) or codes.get(text.lower().split("-")[0])
    shown = f"{words} ({text})" if words and words.lower() != text.lower() else text
    if also and row.get(also):
        shown = f"{shown}, {row[also]}"
    value = words or text
    asked = " ".join(pq.text.lower().split())
    yes_no = pq.yes_no or re.match(r"^(?:is|are|was|were|does|do|has|have)\b", asked) is not None
    for word, yes_values in (spec.get("yes") or {}).items():
        if yes_no and re.search(rf"\b{re.escape(word)}", asked):
            yes = value.lower() in {v.lower() for v in yes_values}
            yield final([yes], f"{'Yes' if yes else 'No'}: {spec['say'].lower()} {shown}.")
            return
    yield final([value], f"{spec['say']}: {shown}.")


def plan_age_at(pq: ParsedQuestion) -> Plan:
    """Age (completed years) at the first (or last) time of an event: "age at diabetes diagnosis"."""
    pq.entity = " ".join(w for w in pq.entity.split() if w not in ("age", "old", "years"))
    got = yield from picked_row(pq)
    if not isinstance(got, Picked):
        yield got
        return
    row = got.row
    when = _row_time(row)
    person = yield ("get_resources", {"view": "patient", "fields": ["name", "birth_date"]})
    born = _row((yield ("get_by_index", {"records": person["handle"], "index": 0, "order_by": "birth_date"})))
    age = yield ("calculate_time_offset", {"start": born["birth_date"], "end": when, "unit": "years"})
    yield final([age["value"]], f"{age['value']} years old at {row.get(name_field(got.view)) or pq.entity} on {_day(when)} "
                f"(born {born['birth_date']}).", unit="years")


def plan_active_check(pq: ParsedQuestion) -> Plan:
    """Yes/no: is this condition or medication active now (or at the asked date)?"""
    view = {"medication": "medication", "allergy": "allergy"}.get(pq.list_kind or "", "condition")
    # Words that named no kind ("X still active?") let X be found wherever it is: a drug, a problem, an allergy.
    kinds = [view] if pq.kind_cued else [v for v in pq.views if v in ("condition", "medication", "allergy")] or [view]
    located = yield from find_records(pq, views=kinds, kind="request")
    if located is None:
        # doses charted without an order the record holds still say whether the drug is on board
        given = (yield from active_by_administration(pq, None, {})) if "medication" in kinds and pq.at_time is None else None
        topic = undocumented_topic(pq.text) if given is None else None
        if topic is not None:  # "is she sexually active?": uncharted is unknown, not No
            yield final([], f"Not documented: the record says nothing about {topic}.", status="no-data")
            return
        yield given or final([False], f"No: the record has no {pq.entity} at all.")
        return
    view, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, pq.entity)
        return
    at = _iso(pq.at_time or pq.now)
    if view == "medication":
        active = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "active", "field": "status"})
        if pq.at_time is None:  # now: the doses given count too ("is she on heparin?" with the order closed)
            current = _row((yield ("get_by_index", {"records": active["handle"], "index": -1}))) if active.get("count") else None
            latest = _row((yield ("get_by_index", {"records": found["handle"], "index": -1})))
            given = yield from active_by_administration(pq, current, latest)
            if given is not None:
                yield given
                return
    else:
        started = yield ("filter_by_date", {"records": found["handle"], "end": at, "field": "onset_time", "include_missing": True})
        active = started
        if started.get("count"):
            active = yield ("filter_by_date", {"records": started["handle"], "start": at, "field": "abatement_time", "include_missing": True})
            if active.get("count") and pq.at_time is None:
                active = yield from _clinically_active(active, at)
    if active.get("count"):
        row = _row((yield ("get_by_index", {"records": active["handle"], "index": -1})))
        if pq.asks_resolved:  # "is her prediabetes resolved?": No, still active
            yield final([False], f"No: {row.get(name_field(view))} is still active (since {_day(_row_time(row))}).")
            return
        yield final([True], f"Yes: {row.get(name_field(view))} is active (since {_day(_row_time(row))}).")
        return
    row = _row((yield ("get_by_index", {"records": found["handle"], "index": -1})))
    ended = row.get("abatement_time") or row.get("end_time")
    detail = f", ended {_day(ended)}" if ended else f", status {row.get('status') or row.get('clinical_status')}"
    if pq.asks_resolved:
        yield final([True], f"Yes: {row.get(name_field(view))} is no longer active (last recorded {_day(_row_time(row))}{detail}).")
        return
    yield final([False], f"No: {row.get(name_field(view))} is not active (last recorded {_day(_row_time(row))}{detail}).")


def plan_lookup(pq: ParsedQuestion) -> Plan:
    """Patient id from name and birth date."""
    args = {k: v for k, v in (("name", pq.lookup_name), ("birth_date", pq.lookup_birth)) if v}
    if not args:
        yield final([], "Give the patient's name and birth date to look them up.", status="refused")
        return
    found = yield ("find_patient", args)
    patients = found.get("patients") or []
    if not patients:
        yield final([], f"No patient matches {', '.join(args.values())}.", status="no-data")
        return
    if len(patients) > 1:
        yield final([p["patient_id"] for p in patients], f"{len(patients)} patients match: " +
                    "; ".join(f"{p['name']} ({p['birth_date']}) {p['patient_id']}" for p in patients), status="ambiguous")
        return
    p = patients[0]
    yield final([p["patient_id"]], f"{p['name']}, born {p['birth_date']}: Patient/{p['patient_id']}.")


def plan_note_finding(pq: ParsedQuestion) -> Plan:
    """Symptoms, complaints and what was documented: answered from the notes, quoted.

    A number to compare with ("ever reported pain above 5/10?") is a threshold on a charted item when the record
    holds its values: the notes answer only what the tables do not."""
    if pq.comparison is not None and pq.entity:
        charted = yield from find_records(pq, views=["observation"], numeric=True)
        if charted is not None and charted[1].get("count"):
            yield from plan_threshold(pq)
            return
    from_notes = yield from notes_answer(pq)
    if from_notes is not None:
        yield from_notes
        return
    yield final([], "Not documented in the notes available for this patient.", status="no-data")


_PLANS = {
    "value": plan_value, "aggregate": plan_aggregate, "count": plan_count, "exists": plan_exists,
    "threshold": plan_threshold, "time_of": plan_time_of, "time_since": plan_time_since, "change": plan_change,
    "trend": plan_trend, "daily_dose": plan_daily_dose, "after_drug": plan_after_drug, "active_list": plan_active_list,
    "list_items": plan_list_items, "age": plan_age, "demographic": plan_demographic, "age_at": plan_age_at,
    "active_check": plan_active_check, "lookup": plan_lookup, "note_finding": plan_note_finding,
    "stay_length": plan_stay,
}
