"""The candidate question and the per-patient context generators work in."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any

from . import phrasing as ph
from . import timeutil as tu
from .record import Measurement, PatientRecord
from .vocab import ITEMS, Item, item_values


@dataclass
class Candidate:
    """One question with its gold answer, before selection gives it an id."""

    patient_id: str | None
    question: str
    now: datetime
    category: str
    answer_type: str
    expected: list[Any]
    expected_status: str = "answered"
    tolerance: float = 0.0
    gold_refs: list[str] = field(default_factory=list)
    template: str = ""

    def to_json(self, qid: str) -> dict[str, Any]:
        """The committed JSONL object."""
        return {
            "id": qid,
            "patient_id": self.patient_id,
            "question": self.question,
            "now": tu.iso_instant(self.now),
            "category": self.category,
            "answer_type": self.answer_type,
            "expected": self.expected,
            "expected_status": self.expected_status,
            "tolerance": self.tolerance,
            "gold_refs": sorted(set(self.gold_refs)),
            "template": self.template,
        }


@dataclass
class Population:
    """What exists anywhere in the data set (for true negatives: real names from other patients)."""

    item_keys: set[str]
    concept_keys: set[str]


@dataclass
class Context:
    """A patient, the moment questions are asked, and a seeded RNG."""

    record: PatientRecord
    now: datetime
    late_now: datetime  # years after the record ends: relative windows are empty
    population: Population
    rng: random.Random

    def voice(self) -> ph.Voice:
        """A random perspective (her/his, the patient's, my, first name)."""
        return ph.pick_voice(self.rng, self.record)

    def values(self, item: Item) -> list[Measurement]:
        """The patient's values of one item, oldest first."""
        return item_values(self.record, item)

    def present_items(self, keys: Sequence[str], minimum: int = 1) -> list[Item]:
        """Items (in the given order) with at least ``minimum`` values."""
        return [ITEMS[k] for k in keys if len(self.values(ITEMS[k])) >= minimum]

    def pick(self, options: Sequence[Any]) -> Any:
        """A seeded choice."""
        return self.rng.choice(list(options))


def seeded(*parts: str) -> random.Random:
    """A reproducible RNG for test-data choices (not cryptography): same parts, same sequence."""
    return random.Random(":".join(parts))  # noqa: S311


def choose_now(record: PatientRecord, rng: random.Random) -> tuple[datetime, datetime]:
    """A few days after the last recorded fact, at noon UTC, on a day ≤ 28; and a "late" now years after."""
    last = record.last_event_time()
    day = last.date() + timedelta(days=rng.randint(3, 21))
    while day.day > 28:
        day += timedelta(days=1)
    now = datetime.combine(day, time(12), tu.UTC)
    late = tu.add_months(now, 12 * rng.randint(2, 4))
    return now, late


def stable(window: tu.Window, compute: Callable[[tu.Window], Any], margin_days: int = 7) -> tuple[bool, Any]:
    """Compute over a window; a relative window's result must not change if its start moves ±margin days.

    Questions whose answer depends on calendar edge cases (30-day months, time of day at the window's
    start) are not generated: the set tests the documented semantics, not off-by-one-day conventions.
    """
    value = compute(window)
    if window.relative:
        for shift in (-margin_days, margin_days):
            if compute(window.shifted(shift)) != value:
                return False, value
    return True, value


def in_window(values: Sequence[Measurement], window: tu.Window) -> list[Measurement]:
    """Values whose time lies in the window."""
    return [m for m in values if window.contains(m.time)]
