"""Questions that name several items at once: "last K and Mg?", "Na, K, Cr from the last BMP?", "is she on both an
ACE inhibitor and a statin?", "any history of MI or stroke?".

The items are found as a run of phrases the lexicon reads *as a whole* (``Lexicon.lookup``: "K", "ACE inhibitor",
"MI"), joined by the words of ``lexicon/conjunctions.json`` ("and", "or", ",", "&", "/"). The question is asked once
per item, with the run replaced by that item ("last K?", "last Mg?"), each through the ordinary plans, and the
answers are put together: yes/no answers into one (all of them for "and"/"both", any for "or"/"either"), other
answers side by side, each item's text kept. A run that is itself one known phrase ("nausea and vomiting") and
questions that relate the items ("ratio of BUN and creatinine", "between X and Y") are left whole.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
MAX_ITEM_WORDS = 4
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'+\-.]*[A-Za-z0-9+]|[A-Za-z0-9]|[,&/]")


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("conjunctions.json")


@dataclass(frozen=True)
class Parts:
    """Where a question names several items: the question asked once per item, and how to join the answers."""

    questions: tuple[str, ...]
    items: tuple[str, ...]
    any_of: bool  # "or"/"either": a yes/no is Yes when one item's is; otherwise when all are


def item_parts(pq: ParsedQuestion) -> Parts | None:
    """The per-item questions of a question naming several items, or None."""
    words = _words()
    text = pq.text.strip()
    lowered = text.lower()
    if any(re.search(p, lowered) for p in words["keep_whole"]):
        return None
    # Items inside parentheses gloss the word before them ("tetanus shot (Td, Tdap or DTaP)"): one thing, not several.
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text) if not _in_parentheses(text, m.start())]
    chain = _chain(tokens, words)
    if chain is None:
        return None
    items, joiners, start, end = chain
    whole = text[start:end]
    from fhirqa.agent.lexicon import Lexicon

    if Lexicon.load().lookup(whole):  # "nausea and vomiting": one phrase of the lexicon, not two items
        return None
    before, after = text[:start], text[end:]
    quantifier = re.search(r"\b(both|either|any of|all of)\s+$", before, re.IGNORECASE)
    if quantifier:
        before = before[: quantifier.start()]
    said = (quantifier.group(1).lower() if quantifier else "")
    any_of = said in words["any_words"] or (said not in words["all_words"] and any(j in words["or"] for j in joiners))
    questions = tuple(f"{before}{item}{after}" for item in items)
    return Parts(questions, tuple(items), any_of)


def _in_parentheses(text: str, at: int) -> bool:
    """True when position ``at`` of ``text`` lies inside an open parenthesis."""
    return text.count("(", 0, at) > text.count(")", 0, at)


def _chain(tokens: list[tuple[str, int, int]], words: dict[str, Any]) -> tuple[list[str], list[str], int, int] | None:
    """The first run item (joiner item)+ in ``tokens``: the items as written, the joiners, the run's span."""
    i = 0
    while i < len(tokens):
        first = _item_at(tokens, i, words)
        if first is None:
            i += 1
            continue
        items, joiners = [first[0]], []
        start, end, j = first[1], first[2], first[3]
        while True:
            joined, k = _joiner_at(tokens, j, words)
            if joined is None:
                break
            nxt = _item_at(tokens, k, words)
            if nxt is None:
                break
            items.append(nxt[0])
            joiners.append(joined)
            end, j = nxt[2], nxt[3]
        if len(items) >= 2:
            return items, joiners, start, end
        i += 1
    return None


def _item_at(tokens: list[tuple[str, int, int]], i: int, words: dict[str, Any]) -> tuple[str, int, int, int] | None:
    """The longest known phrase starting at token ``i`` (after an article): (text, start, end, next token index)."""
    from fhirqa.agent.lexicon import Lexicon

    lexicon = Lexicon.load()
    opening = tokens[i][1] if i < len(tokens) else 0  # the run starts at the article ("both an ACE inhibitor")
    if i < len(tokens) and tokens[i][0].lower() in words["articles"]:
        i += 1
    for width in range(MAX_ITEM_WORDS, 0, -1):
        span = tokens[i:i + width]
        if len(span) < width or any(t[0] in ",&/" or t[0].lower() in words["and"] + words["or"] for t in span):
            continue
        if width == 1 and span[0][0].lower() in words["not_items"]:
            return None
        phrase = " ".join(t[0] for t in span)
        if lexicon.lookup(phrase):
            return phrase, opening, span[-1][2], i + width
    return None


def _joiner_at(tokens: list[tuple[str, int, int]], j: int, words: dict[str, Any]) -> tuple[str | None, int]:
    """The joiner at token ``j`` ("and", "or", ",", ", and", "&", "/"): (its word, the index after it)."""
    if j >= len(tokens):
        return None, j
    word = tokens[j][0].lower()
    if word == "," and j + 1 < len(tokens) and tokens[j + 1][0].lower() in words["and"] + words["or"]:
        return tokens[j + 1][0].lower(), j + 2
    if word in words["and"] or word in words["or"] or word == ",":
        return word, j + 1
    return None, j


def plan_parts(pq: ParsedQuestion, parts: Parts) -> Generator[Call, dict[str, Any], None]:
    """Run the plan of each per-item question, then give one answer that joins theirs."""
    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.plans import final, plan

    finals: list[dict[str, Any]] = []
    for question in parts.questions:
        assert pq.now is not None
        steps = plan(parse(question, pq.now))
        try:
            call = next(steps)
            while call[0] != "final_answer":
                call = steps.send((yield call))
        except StopIteration:
            continue
        finals.append(call[1])
    args = joined_answer(parts, finals)
    yield final(args["answer"], args["text"], status=args["status"], unit=args.get("unit"))


def joined_answer(parts: Parts, finals: list[dict[str, Any]]) -> dict[str, Any]:
    """One answer (``answer``, ``text``, ``status``, ``unit``) from the answers of each item's question: yes/no
    answers joined into one (any for "or", all otherwise), other answers side by side, each item's text kept."""
    answered = [f for f in finals if f.get("status", "answered") == "answered"]
    texts = " ".join(f"[{item}] {f.get('text', '')}".strip() for item, f in zip(parts.items, finals, strict=False))
    if not answered:
        status = "no-data" if all(f.get("status") == "no-data" for f in finals) else "error"
        return _args([], texts or "None of the items could be answered.", status=status)
    answers = [f.get("answer") or [] for f in finals]
    if all(len(a) == 1 and isinstance(a[0], bool) for a in answers):
        yes = any(a[0] for a in answers) if parts.any_of else all(a[0] for a in answers)
        joined = "one of them" if parts.any_of else "all of them"
        return _args([yes], f"{'Yes' if yes else 'No'} ({joined} asked). {texts}")
    units = {f.get("unit") for f in answered}
    if len({repr(f.get("answer")) for f in answered}) == 1 and len(answered) > 1:
        # every item led to the same record ("Td or Tdap?" when the patient had one Td): one answer, said once
        return _args(list(answered[0].get("answer") or []), str(answered[0].get("text", "")), unit=units.pop())
    values = [v for f in answered for v in (f.get("answer") or [])]
    return _args(values, texts, unit=units.pop() if len(units) == 1 else None)


def _args(answer: list[Any], text: str, status: str = "answered", unit: str | None = None) -> dict[str, Any]:
    return {"answer": answer, "text": text, "status": status, "unit": unit}
