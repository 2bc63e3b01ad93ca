"""Items only the notes hold, written as a labelled line: "what's his code status?", "is he full code?", "DNR?".

The structured views have no code status; an H&P writes "Code status: Full code." The latest note passage before
now that states the label answers, quoted and cited. A question naming one of the item's values ("full code?",
"DNR?") is a yes/no: whether the value written is that one. A window ("code status on admission?") or a note kind
("per the H&P") narrows the notes read; "was code status mentioned in the Jul 6 progress note?" is whether a note read states
it. Words in ``lexicon/documented_items.json``; such an
entry also keeps the item's name whole, so "code status" is never read as its first word completed to a drug
("code" → codeine).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_WHAT = re.compile(r"^(?:what|which|whats|what's)\b|\bwhat (?:is|was)\b")


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("documented_items.json")


def _items() -> list[dict[str, Any]]:
    return list(_spec()["items"])


def documented_item(pq: ParsedQuestion) -> dict[str, Any] | None:
    """The documented item the question asks about (its lexicon entry), or None."""
    text = " ".join(pq.text.lower().split())
    if any(re.search(p, text) for p in _spec().get("not_when", [])):
        return None  # "has his code status changed?": the note plans read it
    return next((item for item in _items() if any(re.search(p, text) for p in item["asks"])), None)


def _bounds(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], tuple[Any, Any] | str]:
    """(start, end) of the notes to read: the question's window (the stay for "on admission"), else up to now."""
    from fhirqa.agent.backends.offline.plans import current_stay, event_window

    window = pq.window
    if window is not None and window.anchor == "admission":
        window = yield from current_stay(pq)
        if window is None:
            return "the record has no inpatient or emergency stay"
    elif window is not None and window.anchor == "event":
        placed = yield from event_window(pq)
        if isinstance(placed, str):
            return placed
        window = placed
    start = window.start if window is not None else None
    end = window.end if window is not None and window.end is not None else pq.now
    if pq.now is not None and end is not None and end > pq.now:
        end = pq.now  # never a note written after now
    return start, end


def _asked_choices(item: dict[str, Any], text: str) -> list[str]:
    return [name for name, said in item.get("choices", {}).items()
            if any(re.search(rf"\b{re.escape(s)}\b", text) for s in said)]


def plan_documented(pq: ParsedQuestion, item: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """The value the latest note before now writes for the item (or whether it is the one asked)."""
    from fhirqa.agent.backends.offline.plans import _iso, final
    from fhirqa.notes.reader import named_kind

    bounds = yield from _bounds(pq)
    if isinstance(bounds, str):
        yield final([], f"No {item['name']} can be placed {pq.window.label if pq.window else ''}: {bounds}.",
                    status="no-data")
        return
    args: dict[str, Any] = {"query": item["query"], "k": 8}
    if bounds[0] is not None:
        args["start"] = _iso(bounds[0])
    if bounds[1] is not None:
        args["end"] = _iso(bounds[1])
    found = yield ("search_notes", args)
    patterns = [re.compile(p, re.IGNORECASE) for p in item["values"]]
    kind = named_kind(pq.text)  # "code status per the H&P?": that kind of note only
    hits = [h for h in found.get("hits") or []
            if kind is None or any(t in str(h.get("note_type") or "").lower() for t in kind["types"])]
    written: list[tuple[str, str, dict[str, Any]]] = []
    for hit in hits:
        for pattern in patterns:
            m = pattern.search(str(hit.get("text") or ""))
            if m:
                written.append((str(hit.get("date") or ""), m["v"].strip(), hit))
                break
    text = " ".join(pq.text.lower().split())
    if any(re.search(p, text) for p in _spec().get("mention_asks", [])):  # "was code status mentioned in …?"
        if not written:
            yield final([False], f"No: {'no ' + kind['name'] if kind else 'no note'} {pq.window.label + ' ' if pq.window else ''}"
                                 f"states the {item['name']} ({len(hits)} passage(s) read).")
            return
        day, value, hit = max(written, key=lambda w: w[0])
        yield final([True], f"Yes: \"{item['name'].capitalize()}: {value}\" in the {hit.get('note_type') or 'note'} of {day[:10]}.")
        return
    if not written:
        where = f"no {kind['name']}" if kind else "no note"
        yield final([], f"{where[0].upper()}{where[1:]} {pq.window.label + ' ' if pq.window else 'before now '}states the "
                        f"{item['name']} (the structured record does not hold it).", status="no-data")
        return
    first = kind is not None and kind.get("which") == "first"  # "per the H&P": the stay's first, the admission note
    day, value, hit = (min if first else max)(written, key=lambda w: w[0])
    where = f"{hit.get('note_type') or 'note'} of {day[:10]}"
    asked = _asked_choices(item, text)
    if asked and not _WHAT.search(text):
        held = _asked_choices(item, value.lower())
        yes = all(choice in held for choice in asked)
        yield final([yes], f"{'Yes' if yes else 'No'}: {item['name']} per the {where}: \"{value}\".")
        return
    yield final([value], f"{value}: {item['name']} per the {where} (not in the structured record).")
