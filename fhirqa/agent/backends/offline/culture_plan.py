"""Culture results: "any cultures positive?", "what grew?", "blood cx?", "urine culture results?".

A culture is a result whose name holds one of the ``cultures.name_contains`` words of
``lexicon/item_groups.json`` ("Bacteria identified in Urine by Culture"); a specimen the question names
("blood cx", "urine culture") keeps the cultures whose name holds that specimen's word. A culture is
positive when its value names an organism (a coded organism or its text) and negative when the value is one
of ``negative_values`` ("No growth at 5 days"). The answer lists each culture with its date and what it grew.
A patient with no culture results is left to the ordinary plans (a culture may be charted as a procedure),
and so are counts ("# of blood cultures").
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("item_groups.json").get("cultures") or {}


def _any(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def culture_question(pq: ParsedQuestion) -> dict[str, Any] | None:
    """What a question about culture results asks: ``positive`` (whether / what grew), ``specimen`` (the
    specimen's name word, or None for every culture). None for other questions, for counts and elapsed times, and
    for a culture written in a note."""
    words = _words()
    text = pq.text.lower()
    if not words or not _any(words.get("question_words", []), text) or re.search(r"\bnotes?\b", text):
        return None
    positive = _any(words.get("positive_words", []), text)
    negative = not positive and _any(words.get("negative_words", []), text)  # "were the blood cx negative?"
    if not positive and not negative and pq.intent not in ("value", "list_items", "exists", "time_of"):
        return None  # "# of blood cultures", "days since the last throat culture": the ordinary plans
    specimen = next((name for name, said in (words.get("specimens") or {}).items()
                     if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in said)), None)
    return {"positive": positive, "negative": negative, "specimen": specimen}


def _negative(value: Any) -> bool:
    said = str(value or "").lower()
    return any(word in said for word in _words().get("negative_values", []))


def plan_cultures(pq: ParsedQuestion, asked: dict[str, Any]) -> Generator[Call, dict[str, Any], bool]:
    """Answer from the patient's culture results; False when the record holds none (the ordinary plans answer)."""
    from fhirqa.agent.backends.offline.plans import _empty_window, final, windowed

    found = yield ("get_resources", {"view": "observation"})
    if not found.get("count"):
        return False
    handles = []
    for word in _words().get("name_contains", []):
        named = yield ("filter_by_value", {"records": found["handle"], "op": "contains", "value": word, "field": "name"})
        if named.get("count"):
            handles.append(named["handle"])
    if not handles:
        return False
    cultures = handles[0] if len(handles) == 1 else (yield ("combine_evidence", {"handles": handles}))["handle"]
    specimen = asked["specimen"]
    what = f"{specimen} cultures" if specimen else "cultures"
    if specimen:
        of_specimen = yield ("filter_by_value", {"records": cultures, "op": "contains", "value": specimen, "field": "name"})
        if not of_specimen.get("count"):
            return False  # "throat culture": perhaps a procedure, the ordinary plans look
        cultures = of_specimen["handle"]
    scoped = yield from windowed(pq, cultures)
    if scoped.get("count") == 0:
        yield _empty_window(pq, what, scoped)
        return True
    cultures = scoped.get("handle") or cultures
    latest_first = yield ("sort_records", {"records": cultures, "descending": True})
    listed = yield ("extract_field_value", {"records": latest_first["handle"], "field": "value_string"})
    values = listed.get("values", [])
    grew = [v for v in values if v.get("value") and not _negative(v["value"])]
    shown = "; ".join(f"{v.get('name')} on {str(v.get('time') or '?')[:10]}: {v.get('value')}" for v in values)
    more = f" (and {listed['omitted']} older)" if listed.get("omitted") else ""
    label = f" {pq.window.label}" if pq.window is not None else ""
    if listed.get("missing"):
        more += f"; {listed['missing']} without a result yet"
    if asked["positive"]:
        organisms = list(dict.fromkeys(str(v["value"]) for v in grew))
        if pq.intent in ("value", "list_items") and not pq.yes_no:  # "what grew?": the organisms
            text = (f"{'; '.join(organisms)}. " if organisms else "Nothing grew. ") + f"The {what}{label}: {shown}{more}."
            yield final(organisms, text)
            return True
        verdict = "Yes" if grew else "No"
        yield final([bool(grew)], f"{verdict}: {'an organism grew' if grew else 'no organism grew'} in the {what}{label}: "
                                  f"{shown}{more}.")
        return True
    if asked["negative"]:  # "were the blood cx negative?": yes when none grew anything
        verdict = "No" if grew else "Yes"
        yield final([not grew], f"{verdict}: {'an organism grew' if grew else 'no organism grew'} in the {what}{label}: "
                                f"{shown}{more}.")
        return True
    if pq.intent == "exists":  # "any blood cultures on file?": yes, and what they showed
        yield final([True], f"Yes: the {what}{label}: {shown}{more}.")
        return True
    if pq.intent == "time_of":  # "when was the last urine culture?"
        picked = yield ("get_by_index", {"records": cultures, "index": 0 if pq.position == "first" else -1})
        row = picked.get("row") or {}
        day = str(row.get("time") or "?")[:10]
        others = f" The {what}{label}: {shown}{more}." if len(values) > 1 else ""
        yield final([day], f"{row.get('name')} on {day}: {row.get('value_string')}.{others}")
        return True
    yield final([v.get("value") for v in values], f"The {what}{label}: {shown}{more}.")
    return True
