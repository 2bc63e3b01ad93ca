"""Windows that hang on a clinical event the record dates by a condition: "aspirin after the stroke?",
"statin since the MI?", "any A1c after the diabetes dx?", "was she on a beta blocker before the PE?".

The event is a condition the question names (a term or alias of ``lexicon/conditions.json``, or any name
followed by a diagnosis word, "after the gout dx"); its date is the condition's earliest onset in the record,
found by tool calls so the answer cites it. The window then runs from it (after, since) or up to it (before),
and the asked item is looked for inside it by the ordinary plans. A condition the record does not hold
leaves no window: the answer says the event is missing, it never guesses a date.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.timephrases import Anchor, Window, anchor_words

Call = tuple[str, dict[str, Any]]

_ARTICLE = r"(?:(?:the|his|her|their|my|this|that|pt's|patient's|(?:the\s+)?(?:patient|pt)'s)\s+)?"
_QUALIFIER = r"(?:(?:first|initial|index|original|recent|last|latest|most\s+recent|new)\s+)?"
# after the name: words that say the event is its diagnosis or onset ("the diabetes dx", "her stroke event")
_DX_WORDS = r"(?:dx|diagnosis|diagnosed|onset|event|episode|was\s+diagnosed)"
# words a name before a diagnosis word is never made of ("after the initial dx", "since the patient was diagnosed")
_NOT_A_NAME = frozenset("""first initial index original recent last latest most new primary secondary final working
    differential admission admitting discharge she he they patient pt her his their the a an""".split())
_SUBJECT = r"(?:she|he|they|(?:the\s+)?(?:patient|pt))"
# "how long since the stroke?", "years after her MI": the time from the event is asked, not a window
_ELAPSED = re.compile(r"\b(?:how\s+long|how\s+many\s+\w+|time|days|weeks|months|years|yrs|mos|wks)\s*$")


@lru_cache(maxsize=1)
def _condition_names() -> tuple[str, ...]:
    """Condition terms and aliases of ``lexicon/conditions.json`` (lower case, two letters or more), longest first."""
    from fhirqa.project import lexicon_file

    entries = lexicon_file("conditions.json").get("entries", [])
    names = {n.lower() for e in entries for n in [e.get("term", ""), *e.get("aliases", [])] if len(n) >= 2}
    return tuple(sorted(names, key=len, reverse=True))


def _alt(words: Any) -> str:
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)) + ")"


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    w = anchor_words()
    # "pre" is left out: "pre diabetes" is a condition's name, not "before diabetes"
    before, after = _alt([b for b in w["before_words"] if b != "pre"]), _alt(w["after_words"])
    known = _alt(_condition_names())
    return re.compile(
        rf"\b(?P<rel>{after}|{before})\s+{_ARTICLE}{_QUALIFIER}"
        # a condition the lexicon knows ("the MI", "his stroke"), its diagnosis word optional
        rf"(?:(?P<known>{known})(?:\s+{_DX_WORDS})?"
        # "since she was diagnosed with diabetes", "after he was dx'd with gout"
        rf"|{_SUBJECT}\s+(?:was|were|got)\s+(?:diagnosed|dx'?d)\s+with\s+(?:(?:a|an)\s+)?"
        rf"(?P<withname>{known}(?![\w-])|[a-z][a-z0-9'\-]*(?:\s+[a-z][a-z0-9'\-]*){{0,2}}(?=\s*(?:[,.;]|$)))"
        # any other name, only when a diagnosis word follows it ("after the gout dx", "since her cancer diagnosis")
        rf"|(?P<named>[a-z][a-z0-9'\-]*(?:\s+[a-z][a-z0-9'\-]*){{0,3}}?)\s+{_DX_WORDS})"
        rf"(?![\w-])")


def condition_event(text: str) -> tuple[Window, int, int] | None:
    """The first "after / since / before <condition>" phrase of normalized ``text``: (window, start, end), else None.

    The window is unresolved (``anchor="event"``); :func:`condition_onset` dates it from the record.
    """
    for m in _pattern().finditer(text):
        if _ELAPSED.search(text[: m.start()]):
            continue  # "how many years since the MI": the event itself is asked about
        name = re.sub(r"\s+", " ", (m.group("known") or m.group("named") or m.group("withname") or "").strip())
        if not m.group("known") and _NOT_A_NAME.intersection(name.split()):
            continue  # "after the initial dx": no condition is named
        rel = re.sub(r"\s+", " ", m.group("rel"))
        # "after the MI" keeps the onset's own instant: what was started at the diagnosis visit came after it
        relation = "before" if rel in anchor_words()["before_words"] else "since"
        phrase = re.sub(r"\s+", " ", m.group(0).strip())
        window = Window(None, None, phrase, anchor="event", event=Anchor("condition", relation, name=name))
        return window, m.start(), m.end()
    return None


def condition_onset(anchor: Anchor) -> Generator[Call, dict[str, Any], tuple[datetime, datetime] | str]:
    """(onset, onset) of the condition ``anchor`` names, its earliest record, or why there is none.

    Only an exact (lexicon or name) match counts: a spelling-level guess would date the window from another
    condition.
    """
    from fhirqa.agent.backends.offline.plans import _instant  # plans imports this module

    found = yield ("get_resources", {"view": "condition", "item": anchor.name})
    resolved = str(found.get("resolved_by", ""))
    if not found.get("count") or resolved.startswith("fuzzy") or found.get("ambiguous"):
        return f"the record has no {anchor.name} (no such condition)"
    row = (yield ("get_by_index", {"records": found["handle"], "index": 0})).get("row") or {}
    onset = _instant(row.get("onset_time")) or _instant(row.get("recorded_time"))
    return (onset, onset) if onset else f"the {anchor.name} record has no onset date"
