"""Duplicate therapy, as a pharmacist verifying orders asks: "same med on the active list twice?", "any active med
duplicated?", "duplicate therapy?", "is acetaminophen ordered twice?".

The active MedicationRequests are grouped by ingredient (the lexicon's generic of each order's name; a combination
counts for each of its ingredients, so Percocet beside Tylenol is acetaminophen twice); an ingredient on two or more
active orders is a duplicate, each order cited. An order whose name the lexicon cannot read is said, not guessed at.
Words in ``lexicon/question_phrases.json`` ``duplicate_therapy``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> tuple[re.Pattern[str], frozenset[str]]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("question_phrases.json")["duplicate_therapy"]
    return re.compile(spec["asks"]), frozenset(spec["filler"])


def duplicate_asked(pq: ParsedQuestion) -> str | None:
    """The ingredient asked about ("" for any) when the question asks about duplicate orders; None otherwise."""
    asks, filler = _words()
    text = " ".join(pq.text.lower().split())
    if not asks.search(text) or pq.intent in ("count", "time_of", "time_since"):
        return None
    left = [w for w in re.findall(r"[a-z0-9][a-z0-9'\-]*", (pq.entity or "").lower()) if w not in filler]
    if not left:
        return ""
    generics = _ingredients(" ".join(left))
    return sorted(generics)[0] if len(generics) == 1 else None


def _ingredients(name: str) -> set[str]:
    """The generics an order's name holds ("Acetaminophen 325 MG / oxyCODONE … Tablet" → acetaminophen, oxycodone)."""
    from fhirqa.agent.lexicon import Lexicon

    lexicon = Lexicon.load()
    found: set[str] = set()
    for part in re.split(r"\s/\s|\s\+\s", name):
        generic = lexicon.drug_generic(part)
        if generic:
            found.update(g.strip() for g in generic.split("/") if g.strip())
    if not found and (generic := lexicon.drug_generic(name)):
        found.update(g.strip() for g in generic.split("/") if g.strip())
    return found


def plan_duplicates(pq: ParsedQuestion, ingredient: str) -> Generator[Call, dict[str, Any], None]:
    """Each ingredient on two or more active orders, with the orders; Yes/No asked as one, else the list."""
    from fhirqa.agent.backends.offline.plans import _row, final

    orders = yield ("get_resources", {"view": "medication", "kind": "request"})
    active = (yield ("filter_by_value", {"records": orders["handle"], "op": "==", "value": "active", "field": "status"})) \
        if orders.get("count") else {"count": 0}
    if not active.get("count"):
        yield final([False], "No: the record holds no active medication orders, so none is duplicated.")
        return
    names = yield ("extract_field_value", {"records": active["handle"], "field": "medication_name", "distinct": True})
    by_ingredient: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    unread: list[str] = []
    for value in names.get("values") or []:
        name = str(value.get("value") if isinstance(value, dict) else value)
        ingredients = _ingredients(name)
        if not ingredients:
            unread.append(name)
            continue
        one = yield ("filter_by_value", {"records": active["handle"], "op": "==", "value": name, "field": "medication_name"})
        for index in range(int(one.get("count") or 0)):
            row = _row((yield ("get_by_index", {"records": one.get("handle") or active["handle"], "index": index})))
            for generic in ingredients:
                by_ingredient.setdefault(generic, []).append((name, row))
    if ingredient:
        by_ingredient = {g: rows for g, rows in by_ingredient.items() if g == ingredient}
    doubled = {g: rows for g, rows in sorted(by_ingredient.items()) if len({r.get("ref") for _, r in rows}) > 1}
    unread_said = f" Not read as a known drug: {'; '.join(unread)}." if unread else ""
    scope = f"{ingredient} " if ingredient else ""
    if not doubled:
        count = len({r.get("ref") for rows in by_ingredient.values() for _, r in rows})
        yield final([False], f"No: no {scope}ingredient is on more than one of the {count} active order(s).{unread_said}")
        return
    said = "; ".join(f"{g} on {len(rows)} active orders: " + ", ".join(
        f"{name} ({row.get('ref')}, {str(row.get('time'))[:10]})" for name, row in rows) for g, rows in doubled.items())
    yes_no = re.match(r"^(?:is|are|any|does|do|has|have|same|duplicate)\b", " ".join(pq.text.lower().split()))
    answer: list[Any] = [True] if yes_no or not re.match(r"^(?:which|what|list)\b", pq.text.lower()) else sorted(doubled)
    yield final(answer, f"Yes: {said}.{unread_said}")
