"""Held-out gold, step 4: the question record, the per-patient context, wording helpers and selection.

Every random choice comes from ``seeded(...)``: an RNG seeded by a string, so the same data gives the same
bytes. Templates are ``<category>/<pattern>/<form>.<register>``: the sentence form (``short``, ``ask``,
``narr``) and the register of the name (``abbr``, ``full``, ``lay``, ``typo``), so a report can say which
kind of wording fails.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from build_heldout_fhir import Record
from build_heldout_time import add_months, iso_instant
from build_heldout_vocab import Concept, Item

# How often each register of a name is used (a few misspellings, not most).
REGISTER_WEIGHTS = {"abbr": 0.3, "full": 0.2, "lay": 0.4, "typo": 0.1}


def seeded(*parts: str) -> random.Random:
    """A reproducible RNG for test-data choices (not cryptography)."""
    return random.Random(":".join(parts))  # noqa: S311


@dataclass
class Question:
    """One question and its gold answer."""

    patient_id: str | None
    question: str
    now: datetime
    category: str
    answer_type: str
    expected: list[Any]
    template: str
    refs: list[str] = field(default_factory=list)
    status: str = "answered"
    tolerance: float = 0.0

    def to_json(self, qid: str) -> dict[str, Any]:
        """The JSONL object, keys in the order of ``evals/synthea-r4.jsonl``."""
        return {"id": qid, "patient_id": self.patient_id, "question": self.question, "now": iso_instant(self.now),
                "category": self.category, "answer_type": self.answer_type, "expected": self.expected,
                "expected_status": self.status, "tolerance": self.tolerance, "gold_refs": sorted(set(self.refs)),
                "template": self.template}


@dataclass
class Population:
    """Item keys and concept keys that some patient of the data set has."""

    items: set[str]
    concepts: set[str]


@dataclass
class Context:
    """A patient, the moment of asking, a late moment (relative windows empty) and an RNG."""

    record: Record
    now: datetime
    late: datetime
    population: Population
    rng: random.Random
    dataset: str

    def pick(self, options: Sequence[Any]) -> Any:
        """A seeded choice."""
        return self.rng.choice(list(options))

    def name(self, thing: Item | Concept, registers: Sequence[str] = ("abbr", "full", "lay", "typo")) -> tuple[str, str]:
        """A name of an item or concept in a weighted-random register it has; returns (name, register)."""
        have = [r for r in registers if thing.says(r)]
        weights = [REGISTER_WEIGHTS[r] for r in have]
        register = self.rng.choices(have, weights)[0]
        return self.pick(thing.says(register)), register

    def who(self) -> tuple[str, str]:
        """A possessive for the patient and its pronoun (``("Ms. Rivera's", "her")``)."""
        r = self.record
        pron = {"female": "her", "male": "his"}.get(r.gender, "their")
        title = {"female": "Ms.", "male": "Mr."}.get(r.gender, "")
        options = [("the pt's", pron), ("pt's", pron), (f"{pron}", pron), ("this patient's", pron),
                   (f"{title} {r.family}'s".strip(), pron), (f"{r.given}'s", pron)]
        return self.pick(options)

    def subj(self) -> tuple[str, str]:
        """A subject for the patient and its pronoun (``("Ms. Rivera", "she")``)."""
        r = self.record
        pron = {"female": "she", "male": "he"}.get(r.gender, "they")
        title = {"female": "Ms.", "male": "Mr."}.get(r.gender, "")
        return self.pick([("the pt", pron), ("pt", pron), (pron, pron), ("this patient", pron),
                          (f"{title} {r.family}".strip(), pron), (r.given, pron)])


def cap(text: str) -> str:
    """First letter upper-cased, the rest untouched."""
    return text[:1].upper() + text[1:]


def tidy(text: str) -> str:
    """Collapse doubled spaces, drop spaces before punctuation, capitalise."""
    text = " ".join(text.split())
    for mark in "?.,:":
        text = text.replace(f" {mark}", mark)
    return cap(text.replace(",,", ",").strip(" ,"))


def choose_now(record: Record, rng: random.Random) -> tuple[datetime, datetime]:
    """Noon UTC 4–25 days after the last recorded fact, on a day ≤ 28; and a late now 2–5 years on."""
    day = record.last_time().date() + timedelta(days=rng.randint(4, 25))
    while day.day > 28:
        day += timedelta(days=1)
    now = datetime.combine(day, time(12), UTC)
    return now, add_months(now, 12 * rng.randint(2, 5))


def pattern_of(q: Question) -> str:
    """``value_in_window/latest-since`` (the template without its wording)."""
    return q.template.rsplit("/", 1)[0]


def _group(q: Question) -> str:
    """The round-robin group: category, the pattern's first word, and the answer's kind for booleans."""
    category, pattern = pattern_of(q).split("/", 1)
    coarse = pattern.split("-")[0]
    if q.answer_type == "boolean":
        return f"{category}/{coarse}={q.expected}"
    if q.status != "answered":
        return f"{category}/{coarse}=no-data"
    if q.answer_type == "list" and not q.expected:
        return f"{category}/{coarse}=empty"
    return f"{category}/{coarse}"


def select(candidates: Sequence[Question], target: int, rng: random.Random, usage: Counter[str | None],
           caps: dict[str, int] | None = None, first: Sequence[str] = ()) -> list[Question]:
    """Round-robin over pattern groups (true/false and no-data apart); within a group prefer patterns named in
    ``first``, then patterns, wordings and patients used least. ``caps`` limits a pattern (by its name)."""
    seen: set[tuple[str | None, str]] = set()
    groups: dict[str, list[Question]] = defaultdict(list)
    for q in candidates:
        key = (q.patient_id, q.question.casefold())
        if key not in seen:
            seen.add(key)
            groups[_group(q)].append(q)
    keys = sorted(groups)
    for key in keys:
        rng.shuffle(groups[key])
    rng.shuffle(keys)
    caps = caps or {}
    patterns: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    chosen: list[Question] = []

    def rank(q: Question, j: int) -> tuple:
        p = pattern_of(q)
        return (p not in first, patterns[p], forms[q.template.rsplit("/", 1)[1].split(".")[0]], usage[q.patient_id], j)

    while len(chosen) < target:
        progressed = False
        for key in keys:
            group = [(j, q) for j, q in enumerate(groups[key])
                     if patterns[pattern_of(q)] < caps.get(pattern_of(q).split("/", 1)[1], target)]
            if not group or len(chosen) >= target:
                continue
            j, pick = min(group, key=lambda jq: rank(jq[1], jq[0]))
            del groups[key][j]
            chosen.append(pick)
            patterns[pattern_of(pick)] += 1
            forms[pick.template.rsplit("/", 1)[1].split(".")[0]] += 1
            usage[pick.patient_id] += 1
            progressed = True
        if not progressed:
            break
    return chosen
