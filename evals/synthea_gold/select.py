"""Deterministic, patient-diverse selection of candidates per category."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from .candidate import Candidate

CATEGORIES = ("latest_value", "first_value", "value_in_window", "min_max", "average", "count_measurements",
              "count_encounters", "count_other", "existence_positive", "existence_negative", "first_last_time",
              "time_since", "change", "trend", "threshold", "daily_dose", "after_drug", "active_conditions",
              "active_medications", "age", "demographics", "patient_lookup")


def pattern_of(candidate: Candidate) -> str:
    """The template without its phrasing variant (``value_in_window/latest-year``)."""
    return candidate.template.rsplit("/", 1)[0]


def _group_key(candidate: Candidate) -> str:
    if candidate.answer_type == "boolean":
        return f"{pattern_of(candidate)}={candidate.expected}"
    if candidate.expected_status != "answered":
        return f"{pattern_of(candidate)}=no-data"
    if candidate.answer_type == "list" and not candidate.expected:
        return f"{pattern_of(candidate)}=empty"
    return pattern_of(candidate)


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Drop repeated questions (same patient, same words, same now)."""
    seen: set[tuple[str | None, str, str]] = set()
    out = []
    for c in candidates:
        key = (c.patient_id, c.question.casefold(), c.now.isoformat())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def select(candidates: Sequence[Candidate], target: int, rng: random.Random, usage: Counter[str | None],
           group_caps: dict[str, int] | None = None) -> list[Candidate]:
    """Round-robin over question patterns (and over true/false for booleans), preferring unused wordings,
    then little-used patients."""
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in dedupe(candidates):
        groups[_group_key(c)].append(c)
    keys = sorted(groups)
    for key in keys:
        rng.shuffle(groups[key])
    rng.shuffle(keys)
    caps = group_caps or {}

    def cap_key(key: str) -> str:
        pattern = key.split("/", 1)[-1]
        return next((prefix for prefix in caps if pattern.startswith(prefix)), key)

    taken: Counter[str] = Counter()
    phrasing: Counter[str] = Counter()  # prefer wordings not used yet in this category
    chosen: list[Candidate] = []
    while len(chosen) < target:
        progressed = False
        for key in keys:
            group = groups[key]
            ck = cap_key(key)
            if not group or len(chosen) >= target or taken[ck] >= caps.get(ck, target):
                continue
            best = min(range(len(group)),
                       key=lambda j, g=group: (phrasing[g[j].template], usage[g[j].patient_id], j))
            pick = group.pop(best)
            chosen.append(pick)
            phrasing[pick.template] += 1
            taken[ck] += 1
            usage[pick.patient_id] += 1
            progressed = True
        if not progressed:
            break
    return chosen
