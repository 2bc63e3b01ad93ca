"""The offline plan for yes/no questions answered by a coded result's value, not by its presence.

"current smoker?" is whether the latest smoking status is a current one ("Former smoker": no); "any smoking
history (former or current) on record?" whether any charted status is ("Never smoker" throughout: no), however
many status observations exist. Which items, which states and which words ask for them is data
(``lexicon/coded_states.json``).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.project import lexicon_file

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return lexicon_file("coded_states.json")


@dataclass
class StateQuestion:
    """The item, the states asked for (their value pieces), and whether any value on record counts."""

    item: str
    states: list[str]
    values: list[str]
    ever: bool


def state_question(pq: ParsedQuestion) -> StateQuestion | None:
    """The coded-state check the question asks, or None (a value question, or no such item named)."""
    text = pq.text.lower()
    data = _data()
    if re.search(data["value_question"], text) or pq.intent not in ("value", "exists", "active_check"):
        return None
    for spec in data["items"]:
        if not re.search(spec["cue"], text):
            continue
        states = [name for name, state in spec["states"].items() if re.search(state["asked"], text)]
        if not states and re.search(spec.get("history", "$^"), text):
            states = [name for name in spec["states"] if name != spec.get("negative")]
        default = spec.get("default")
        if not states and default and re.search(default["asked"], text):
            states = [default["state"]]  # "smoker?": whether the patient smokes now
        if not states:
            return None
        values = [v for name in states for v in spec["states"][name]["values"]]
        ever = bool(re.search(data["ever"], text)) or len(states) > 1
        return StateQuestion(spec["item"], states, values, ever)
    return None


def plan_state(pq: ParsedQuestion, asked: StateQuestion) -> Generator[Call, dict[str, Any], bool]:
    """Yes/no from the latest (or any) charted value; returns False when the record holds no such item."""
    from fhirqa.agent.backends.offline.plans import _day, final

    found = yield ("get_resources", {"view": "observation", "item": asked.item})
    if not found.get("count"):
        return False
    handle = found["handle"]
    wanted = " or ".join(asked.states)
    if asked.ever:
        for piece in asked.values:
            hits = yield ("filter_by_value", {"records": handle, "op": "contains", "value": piece, "field": "value_string"})
            if hits.get("count"):
                row = (yield ("get_by_index", {"records": hits["handle"], "index": -1})).get("row") or {}
                yield final([True], f"Yes: {row.get('value_string')} on {_day(row.get('time'))}.")
                return True
        values = yield ("extract_field_value", {"records": handle, "field": "value_string", "distinct": True})
        shown = [str(v["value"]) for v in values.get("values", []) if isinstance(v, dict)]
        yield final([False], f"No: every {asked.item} on record is {' / '.join(shown) or 'unstated'} (none {wanted}).")
        return True
    row = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
    value = str(row.get("value_string") or "")
    hit = any(piece in value.lower() for piece in asked.values)
    yield final([hit], f"{'Yes' if hit else 'No'}: the latest {asked.item} is {value or 'unstated'} "
                f"({_day(row.get('time'))}).")
    return True
