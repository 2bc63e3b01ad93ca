"""What happened in a window, and the doses given as needed: "o/n events", "what happened overnight?", "anything new in
the last 6 hours?", "what did I miss since 7a?", "interval events since yesterday"; "any PRNs overnight?", "what PRNs
has she needed today?", "how many PRN tylenol doses since admit?".

**Events.** A question is an events question when it says one of the ``asks`` of ``lexicon/window_events.json`` and
nothing else is left of the item the parser read ("what happened to her K overnight?" keeps K and stays a value;
"febrile overnight?" stays a state; "any new meds?" stays the reconciliation's). The window is the question's (the
stay and event anchors placed by tool calls first, so they are cited); none asked is the last ``default_hours``,
said. The ``window_events`` tool reads the record (results judged by the normality plan's judgement, clinical
states crossed, PRN and held doses, orders started or stopped, procedures, encounters, notes); the answer lists at
most ``max_events`` in time order and says how many more there are. A window with records and no events says what
was read ("no events charted: 24 results, none abnormal …"); a window with no record at all is no-data.

**PRN.** "PRN" is a class of doses, not of drugs (``as_needed`` of ``lexicon/medication_activity.json``): a dose is
PRN when it or the order it names is marked as needed (asNeeded, a PRN reason, "PRN"/"as needed" in the sig). The
answer is read from the administrations given in the window (none asked: the last ``default_hours``, said); a record
that marks no medication as needed at all says so instead of answering that none were given.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_INTENTS = frozenset({"value", "exists", "list_items", "change"})  # "what changed since …?" names no item
_PRN_INTENTS = frozenset({"value", "exists", "list_items", "count"})


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("window_events.json")


@lru_cache(maxsize=1)
def _prn() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("medication_activity.json")["as_needed"]


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def _said(words: list[str], text: str) -> bool:
    return re.search(rf"(?<![\w/])(?:{_alt(words)})(?![\w/])", text) is not None


def _left(text: str, words: list[str], filler: list[str]) -> list[str]:
    """The words of ``text`` once ``words`` (phrases) and ``filler`` are taken out."""
    rest = re.sub(rf"(?<![\w/])(?:{_alt(words)})(?![\w/])", " ", text)
    drop = {w.lower() for w in filler}
    return [w for w in re.findall(r"[a-z0-9][a-z0-9'/&.\-]*", rest) if w.strip(".") not in drop
            and not re.fullmatch(r"[\d#]+", w)]


def _text(pq: ParsedQuestion) -> str:
    return " ".join(pq.text.lower().replace("’", "'").split())


def events_asked(pq: ParsedQuestion) -> bool | None:
    """True when the question asks what happened in a window (see the module docstring), else None."""
    spec = _spec()
    if pq.intent not in _INTENTS or pq.comparison is not None:
        return None
    text = _text(pq)
    implied = _implied(pq)
    asks = list(spec["asks"])
    if pq.window is not None and pq.window.anchor is None:  # "summary of the last 24 hours": a clock window's events
        asks += spec.get("asks_with_window", [])
    if not _said(asks, text) and implied is None:
        return None
    words = [*asks, *(implied.split() if implied else []), "night"] if implied else asks
    if _left((pq.entity or "").lower(), words, spec["filler"]):
        return None  # "what happened to her K overnight?": an item is asked
    if pq.category or pq.hinted or pq.list_kind or pq.encounter_class or pq.med_kind or (
            pq.aggregate is not None and (pq.aggregate != "started" or _starts(text))):
        # "what's new with her labs overnight?", "anything new started in the past 3 months?": one kind of record or
        # one reading of it is asked, which the other plans answer ("anything new" alone is read as a start too)
        return None
    return True


def _implied(pq: ParsedQuestion) -> str | None:
    """The window phrase an ``implies`` phrase names ("how was her night?": overnight), when no window was read."""
    if pq.window is not None:
        return None
    text = _text(pq)
    return next((window for pattern, window in _spec().get("implies", {}).items() if re.search(pattern, text)), None)


def _starts(text: str) -> bool:
    """The question says a start word of ``started_in_window`` (lexicon/question_phrases.json) other than an ``asks``
    phrase's own "new": "anything new started …" asks what was started."""
    from fhirqa.project import lexicon_file

    asked = re.sub(rf"(?<![\w/])(?:{_alt(_spec()['asks'])})(?![\w/])", " ", text)
    return _said(lexicon_file("question_phrases.json")["started_in_window"]["verbs"], asked)


def _window(pq: ParsedQuestion, hours: int) -> Generator[Call, dict[str, Any], tuple[Any, str]]:
    """The window placed (stay and event anchors by tool calls), and the words saying a default was read; the window
    is None with the reason as text when its anchor is missing."""
    from fhirqa.agent.backends.offline.plans import current_stay, event_window
    from fhirqa.agent.backends.offline.timephrases import Window

    assert pq.now is not None
    window = pq.window
    implied = _implied(pq)
    if implied is not None:  # "how was her night?": the window its words name
        from fhirqa.agent.backends.offline.timephrases import find_window

        found = find_window(implied, pq.now)
        window = found.window if found is not None else None
    if window is None:
        return Window(pq.now - timedelta(hours=hours), pq.now, f"in the last {hours} hours"), \
            f" (no time was asked: the last {hours} hours)"
    if window.anchor == "admission":
        stay = yield from current_stay(pq)
        if stay is None:
            return None, f"the record has no inpatient or emergency stay to anchor '{window.label}' to"
        return stay, ""
    if window.anchor == "event":
        placed = yield from event_window(pq)
        return (None, placed) if isinstance(placed, str) else (placed, "")
    return window, ""


def _bounds(window: Any) -> dict[str, Any]:
    from fhirqa.agent.backends.offline.plans import _iso

    args: dict[str, Any] = {}
    if window.start is not None:
        args["start"] = _iso(window.start)
    if window.end is not None:
        args["end"] = _iso(window.end)
    return args


def _clock(iso: Any) -> str:
    """"01-03 02:15" from an ISO time: the record's own wall clock, as charted."""
    text = str(iso or "?")
    return f"{text[5:10]} {text[11:16]}" if len(text) >= 16 else text[:10]


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _what_was_read(counts: dict[str, int]) -> str:
    """The records the window holds, in words ("24 results, none abnormal; 40 vital signs, no state crossed …")."""
    parts = []
    if counts.get("results"):
        parts.append(f"{_n(counts['results'], 'result', 'results')}, none judged abnormal"
                     + (f" ({counts['results'] - counts.get('results_judged', 0)} without a flag or range to judge by)"
                        if counts.get("results_judged", 0) < counts["results"] else ""))
    if counts.get("vital_signs"):
        parts.append(f"{_n(counts['vital_signs'], 'vital sign', 'vital signs')}, none past a clinical state's threshold")
    if counts.get("doses_given"):
        prn = "" if counts.get("prn_marked_in_record") else " (the record marks no dose or order PRN)"
        parts.append(f"{_n(counts['doses_given'], 'dose', 'doses')} given as scheduled, none PRN{prn} and none held")
    if counts.get("orders"):
        parts.append(f"{_n(counts['orders'], 'order', 'orders')}, none a start, stop or dose change")
    return "; ".join(parts) or "no results, doses or orders"


def plan_events(pq: ParsedQuestion, _: Any = None) -> Generator[Call, dict[str, Any], None]:
    """The events of the question's window, listed in time order and bounded (see the module docstring)."""
    from fhirqa.agent.backends.offline.plans import final

    spec = _spec()
    window, said = yield from _window(pq, int(spec["default_hours"]))
    if window is None:
        yield final([], f"No events can be placed {pq.window.label if pq.window else ''}: {said}.", status="no-data")
        return
    shown = int(spec["max_events"])
    got = yield ("window_events", {**_bounds(window), "limit": shown})
    counts: dict[str, int] = got.get("counts") or {}
    label = window.label
    yes_no = any(re.search(p, _text(pq)) for p in spec["yes_no"])
    if not got.get("records_in_window"):
        yield final([False] if yes_no else [], f"Nothing is charted {label}{said}: no results, vital signs, doses, "
                                               "orders, procedures, encounters or notes in that window.", status="no-data")
        return
    events = got.get("events") or []
    total = int(got.get("count") or 0)
    if not total:
        text = f"No events charted {label}{said}: {_what_was_read(counts)}; no procedures, admissions or discharges, " \
               f"and no notes."
        yield final([False] if yes_no else [], text)
        return
    lines = [f"{_clock(e.get('time'))} {e.get('what')} ({e.get('ref')})" for e in events]
    more = f"; and {total - len(events)} more" if total > len(events) else ""
    tally = ", ".join(_n(counts[k], one, many) for k, one, many in (
        ("abnormal_results", "abnormal result", "abnormal results"), ("states_crossed", "state crossed", "states crossed"),
        ("prn_doses", "PRN dose", "PRN doses"), ("doses_not_given", "dose not given", "doses not given"),
        ("order_changes", "order change", "order changes"), ("procedures", "procedure", "procedures"),
        ("encounters", "admission/discharge", "admissions/discharges"), ("notes", "note", "notes")) if counts.get(k))
    text = f"{'Yes: ' if yes_no else ''}{total} event{'s' if total != 1 else ''} {label}{said} ({tally}): " \
           f"{'; '.join(lines)}{more}."
    yield final([True] if yes_no else [e.get("what") for e in events], text)


# -- PRN doses -------------------------------------------------------------------------------------------------------
def prn_asked(pq: ParsedQuestion) -> str | None:
    """The drug a PRN question names ("" for any drug), or None when the question is not about PRN doses given."""
    spec = _prn()
    if pq.intent not in _PRN_INTENTS:
        return None
    text = _text(pq)
    if not _said(spec["words"], text) or any(re.search(p, text) for p in spec["not_when"]):
        return None
    from fhirqa.agent.backends.offline.purpose_plan import purpose_named

    drug = " ".join(_left((pq.entity or "").lower(), spec["words"], spec["filler"]))
    # "any PRN for pain overnight?": the purpose names the class that treats it (lexicon/medication_purposes.json)
    return purpose_named(drug) or drug


def plan_prn(pq: ParsedQuestion, drug: str) -> Generator[Call, dict[str, Any], None]:
    """The PRN doses of ``drug`` (every drug when empty) given in the window: counted, listed or yes/no."""
    from fhirqa.agent.backends.offline.plans import _ambiguous, final

    spec = _prn()
    what = f"PRN {drug}" if drug else "PRN"
    args: dict[str, Any] = {"view": "medication", "kind": "administration", "as_needed": True}
    if drug:
        args["item"] = drug
    found = yield ("get_resources", args)
    if found.get("ambiguous"):
        yield _ambiguous(found, drug)
        return
    if str(found.get("resolved_by", "")).startswith("fuzzy") or (drug and not found.get("count") and found.get("candidates") is not None
                                                                  and "no medication item" in str(found.get("note", ""))):
        # "any PRN haldol o/n?" of a drug never ordered or given: a No (none was given), as for a drug class
        absent = f"no {drug} is on file for this patient (no order or dose of it)"
        if pq.intent in ("exists", "count"):
            yield final([False] if pq.intent == "exists" else [0], f"{'No: ' if pq.intent == 'exists' else 'None: '}{absent}.")
        else:
            yield final([], f"{absent[0].upper()}{absent[1:]}.", status="no-data")
        return
    if not found.get("prn_marked"):
        yield final([], "The record does not mark any order or dose as needed (PRN): no asNeeded, no PRN reason and "
                        "no 'PRN' or 'as needed' in a sig, so PRN doses cannot be told from scheduled ones.",
                    status="no-data")
        return
    window, said = yield from _window(pq, int(spec["default_hours"]))
    if window is None:
        yield final([], f"No {what} doses can be placed {pq.window.label if pq.window else ''}: {said}.", status="no-data")
        return
    label = window.label
    count = 0
    handle = found.get("handle")
    if found.get("count"):
        scoped = yield ("filter_by_date", {"records": handle, **_bounds(window)})
        handle, count = scoped.get("handle"), int(scoped.get("count") or 0)
    if count:
        given = yield from _given(str(handle), count)
        handle, count = given["handle"], int(given["count"] or 0)
    if not count:
        if pq.intent == "count":
            yield final([0], f"No {what} doses were given {label}{said}.")
        else:
            yield final([False] if pq.intent == "exists" else [], f"No: no {what} dose was given {label}{said}.")
        return
    listed = yield ("extract_field_value", {"records": handle, "field": "medication_name"})
    doses = [f"{v.get('value')} at {_clock(v.get('time'))} ({v.get('ref')})" for v in listed.get("values", [])]
    more = f" and {listed['omitted']} more" if listed.get("omitted") else ""
    said_doses = f"{count} {what} dose{'s' if count != 1 else ''} given {label}{said}: {'; '.join(doses)}{more}."
    if pq.intent == "count":
        yield final([count], said_doses)
    elif pq.intent == "exists":
        yield final([True], f"Yes: {said_doses}")
    else:
        yield final([], said_doses, list_from=handle, list_field="medication_name")


def _given(handle: str, count: int) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The doses of ``handle`` (``count`` rows) that were given: the ones charted not given left out."""
    from fhirqa.agent.tools.events import not_given_statuses

    result: dict[str, Any] = {"handle": handle, "count": count}
    for status in sorted(not_given_statuses()):
        undone = yield ("filter_by_value", {"records": result["handle"], "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            result = yield ("filter_by_value", {"records": result["handle"], "op": "!=", "value": status, "field": "status"})
    return result

