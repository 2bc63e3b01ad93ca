"""Questions about the notes of one kind ("date of last d/c summary?", "# of imaging reports this admit?",
"last CXR impression?", "K in the last progress note?", "last nursing note say anything about pressure ulcer?").

A note kind (``lexicon/note_kinds.json``) is a kind of record, not an item: the plan asks ``find_in_notes`` with
``note_kind`` and answers from what the notes of that kind hold. A patient with no note of the kind asked gets
no-data (there is no note to read); a count is never no-data.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import timedelta
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


def note_kind_question(pq: ParsedQuestion, fallback: bool = False) -> str | None:
    """The note kind the question is about, when it asks about notes of that kind, else None.

    A kind that is also a procedure or study ("had any CXR?") is the notes' only when the question names the
    report, or as the ``fallback`` once the tables hold nothing.
    """
    from fhirqa.notes import kinds

    kind = kinds.asked_kind(pq.text)
    if kind is None:
        return None
    spec = next(k for k in kinds.config()["kinds"] if k["name"] == kind)
    if spec.get("also_a_record") and not fallback and not kinds.asks(pq.text, "report_words") and not (
            _item(pq) and kinds.shape_of(pq.text, kind) == "text" and not kinds.asks(pq.text, "asks_open")):
        return None  # "ever had a CXR?" is the study; "any consolidation on the last CXR?" is its report's finding
    shape = kinds.shape_of(pq.text, kind)
    if shape in ("count", "date", "section"):
        return kind
    # a reading of the text: only of the last / first note of the kind, or of every note of it
    if kinds.asks(pq.text, "asks_every") or re.search(r"\b(?:last|latest|most recent|newest|first|earliest)\b",
                                                       pq.text.lower()):
        return kind
    return None


def _item(pq: ParsedQuestion) -> str | None:
    """The finding asked about, with the words for the kind of note taken out of the parsed entity."""
    from fhirqa.notes import kinds

    entity = (pq.entity or "").lower()
    for kind in kinds.config()["kinds"]:
        for p in kind["asks"]:
            entity = re.sub(p, " ", entity)
    noise = set(kinds.config().get("entity_noise", []))
    words = [w for w in entity.split() if w not in noise]
    return " ".join(words) or None


def _window(pq: ParsedQuestion, kind: str) -> Any:
    """The question's time window read with the kind's words taken out ("the last H&P" is no "last H[our]")."""
    from fhirqa.agent.backends.offline.timephrases import find_window
    from fhirqa.notes import kinds

    if pq.window is None or pq.now is None:
        return pq.window
    text = " ".join(pq.text.lower().split())
    spec = next(k for k in kinds.config()["kinds"] if k["name"] == kind)
    for p in spec["asks"]:
        text = re.sub(p, lambda m: "note".ljust(len(m.group(0))), text)
    found = find_window(text, pq.now)
    return found.window if found else None


def plan_note_kind(pq: ParsedQuestion, kind: str) -> Generator[Call, dict[str, Any], bool]:
    """Answer from the notes of ``kind``; returns True when the final answer was given."""
    call = yield from kind_final(pq, kind)
    if call is None:
        return False
    yield call
    return True


def kind_final(pq: ParsedQuestion, kind: str, fallback: bool = False) -> Generator[Call, dict[str, Any], Call | None]:
    """The final answer from the notes of ``kind`` (not yet given), or None when they cannot answer.

    As the ``fallback`` of tables that hold nothing, notes that do not answer leave the tables' answer
    ("ever had an echo?" stays No when there is no echo report either).
    """
    from fhirqa.agent.backends.offline.plans import _iso, final
    from fhirqa.notes import kinds

    args: dict[str, Any] = {"question": pq.text, "note_kind": kind}
    window = _window(pq, kind)
    stay = pq.window
    if window is not None and window.anchor and stay is not None and not stay.anchor and stay.start and stay.end:
        # the stay the caller already placed ("this admission": the latest admission in the record), not the stay
        # of the latest dated note the reader would otherwise take
        args["start"], args["end"] = _iso(stay.start), _iso(stay.end)
    elif (window is not None and window.start is not None and window.end is not None
            and not kinds.asks(pq.text, "this_stay") and window.end - window.start <= timedelta(days=400)):
        args["start"], args["end"] = _iso(window.start), _iso(window.end)
    item = _item(pq)
    if item:
        args["item"] = item
    if kinds.asks(pq.text, "lab_at_note"):
        return (yield from _lab_at_note(pq, kind, item))
    found = yield ("find_in_notes", args)
    if not found.get("ok", True):
        return None
    text = str(found.get("text") or "")
    if found.get("found"):
        return final(list(found.get("value") or []), text, unit=found.get("unit"))
    if fallback or not found.get("no_kind"):
        return None  # the notes of the kind do not say it as this reader reads them: the other plans try
    return final([], text or f"No {kind} states it.", status="no-data")


def chosen_note(pq: ParsedQuestion, kind: str) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The last (or first) note of ``kind`` as ``find_in_notes`` finds it: its ``ref`` and ``time``, or ``no_kind``."""
    from fhirqa.notes import kinds

    which = "first" if kinds.asks(pq.text, "first") else "last"
    return (yield ("find_in_notes", {"question": f"date of the {which} {kind}", "note_kind": kind}))


def _lab_at_note(pq: ParsedQuestion, kind: str, item: str | None) -> Generator[Call, dict[str, Any], Call | None]:
    """The record's value of ``item`` the note of ``kind`` is checked against (the lab at or before its time)."""
    from fhirqa.agent.backends.offline.plans import final

    note = yield from chosen_note(pq, kind)
    if not note.get("found"):
        return final([], str(note.get("text") or f"No {kind} on file."), status="no-data")
    args: dict[str, Any] = {"note": note["ref"]}
    if item:
        args["item"] = item
    result = yield ("check_note_consistency", args)
    for comparison in result.get("comparisons") or []:
        rows = comparison.get("record") or []
        if rows and rows[0].get("value") is not None:
            row = rows[0]
            unit = row.get("unit")
            return final([row["value"]], f"{row['value']}{' ' + unit if unit else ''} ({row.get('item')}, "
                        f"{str(row.get('time') or '')[:16]}), the lab at the time of the {kind} of "
                        f"{str(note.get('time') or '')[:10]}.", unit=unit)
    return None
