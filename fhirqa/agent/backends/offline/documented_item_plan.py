"""Items only the notes hold, written as a labelled line: "what's his code status?", "is he full code?", "DNR?".

The structured views have no code status; an H&P writes "Code status: Full code." The latest note passage before
now that states the label answers, quoted and cited. A question naming one of the item's values ("full code?",
"DNR?") is a yes/no: whether the value written is that one. Words in ``lexicon/documented_items.json``; such an
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
def _items() -> list[dict[str, Any]]:
    from fhirqa.project import lexicon_file

    return list(lexicon_file("documented_items.json")["items"])


def documented_item(pq: ParsedQuestion) -> dict[str, Any] | None:
    """The documented item the question asks about (its lexicon entry), or None."""
    text = " ".join(pq.text.lower().split())
    return next((item for item in _items() if any(re.search(p, text) for p in item["asks"])), None)


def _asked_choices(item: dict[str, Any], text: str) -> list[str]:
    return [name for name, said in item.get("choices", {}).items()
            if any(re.search(rf"\b{re.escape(s)}\b", text) for s in said)]


def plan_documented(pq: ParsedQuestion, item: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """The value the latest note before now writes for the item (or whether it is the one asked)."""
    from fhirqa.agent.backends.offline.plans import _iso, final

    args: dict[str, Any] = {"query": item["query"], "k": 8}
    if pq.now is not None:
        args["end"] = _iso(pq.now)
    found = yield ("search_notes", args)
    patterns = [re.compile(p, re.IGNORECASE) for p in item["values"]]
    written: list[tuple[str, str, dict[str, Any]]] = []
    for hit in found.get("hits") or []:
        for pattern in patterns:
            m = pattern.search(str(hit.get("text") or ""))
            if m:
                written.append((str(hit.get("date") or ""), m["v"].strip(), hit))
                break
    if not written:
        yield final([], f"No note before now states the {item['name']} (the structured record does not hold it).",
                    status="no-data")
        return
    day, value, hit = max(written, key=lambda w: w[0])  # the latest note that writes it
    where = f"{hit.get('note_type') or 'note'} of {day[:10]}"
    text = " ".join(pq.text.lower().split())
    asked = _asked_choices(item, text)
    if asked and not _WHAT.search(text):
        held = _asked_choices(item, value.lower())
        yes = all(choice in held for choice in asked)
        yield final([yes], f"{'Yes' if yes else 'No'}: {item['name']} per the {where}: \"{value}\".")
        return
    yield final([value], f"{value}: {item['name']} per the {where} (not in the structured record).")
