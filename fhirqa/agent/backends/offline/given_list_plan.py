"""What was given in a window, no drug named: "what meds did he get today?", "which drugs has she received today",
"meds given in the last 24h?", "what did she get overnight?".

The answer is every drug with a completed administration in the question's window, each once with how many doses and
the last one's time, cited; orders that were active but never charted as given are not doses given. Words are in
``lexicon/question_phrases.json`` ``given_list``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_INTENTS = frozenset({"value", "list_items", "active_list", "exists"})


@lru_cache(maxsize=1)
def _words() -> tuple[re.Pattern[str], re.Pattern[str], frozenset[str]]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("question_phrases.json")["given_list"]
    return re.compile(spec["asks"]), re.compile(spec["given"]), frozenset(spec["filler"])


def given_list_asked(pq: ParsedQuestion) -> bool | None:
    """True when the question asks which drugs were given in its window and names no drug; None otherwise."""
    if pq.intent not in _INTENTS or pq.window is None or pq.comparison is not None:
        return None
    asks, given, filler = _words()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    if not asks.search(text) or not (given.search(text) or pq.med_kind == "administration"):
        return None
    if any(w not in filler for w in re.findall(r"[a-z0-9][a-z0-9'\-]*", (pq.entity or "").lower())):
        return None  # a drug or an item is named: "was heparin given today?" is the given-doses plan's
    return True


def plan_given_list(pq: ParsedQuestion, _: bool) -> Generator[Call, dict[str, Any], None]:
    """Each drug given in the window once, with its number of doses and the last dose's time."""
    from fhirqa.agent.backends.offline.events_plan import _bounds, _window
    from fhirqa.agent.backends.offline.plans import NOT_GIVEN, final

    window, said = yield from _window(pq, 24)
    if window is None:
        yield final([], f"No doses can be placed {pq.window.label if pq.window else ''}: {said}.", status="no-data")
        return
    found = yield ("get_resources", {"view": "medication", "kind": "administration"})
    if not found.get("count"):
        yield final([], "The record charts no doses given (no medication administrations).", status="no-data")
        return
    handle = found["handle"]
    for status in NOT_GIVEN:  # a dose charted as not given was not given
        kept = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
        handle = kept.get("handle") or handle
    bounds = _bounds(window)
    inside = yield ("filter_by_date", {"records": handle, **{k: v for k, v in bounds.items() if k in ("start", "end")}})
    if not inside.get("count"):
        yield final([], f"No doses were charted as given {window.label}.")
        return
    names = yield ("extract_field_value", {"records": inside["handle"], "field": "medication_name", "distinct": True})
    listed = [str(v.get("value")) for v in names.get("values", []) if isinstance(v, dict) and v.get("value")]
    parts = []
    for name in listed:
        one = yield ("filter_by_value", {"records": inside["handle"], "op": "==", "value": name, "field": "medication_name"})
        last = (yield ("get_by_index", {"records": one.get("handle") or inside["handle"], "index": -1})).get("row") or {}
        count = int(one.get("count") or 1)
        parts.append(f"{name} ({count} dose{'s' if count != 1 else ''}, last {str(last.get('time'))[:16].replace('T', ' ')})")
    yield final(listed, f"Given {window.label}: {'; '.join(parts)}.", list_from=inside["handle"], list_field="medication_name")
