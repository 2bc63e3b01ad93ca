"""A chronic condition as a whole: "summarize her diabetes management", "how is his HTN doing?", "diabetes overview".

The overview is the questions a clinician asks in turn about the condition (when it was diagnosed, whether it is
controlled, the recent values of its measure, what the patient takes for it: ``lexicon/condition_overview.json``),
each parsed and answered by the ordinary planner, so every part is read, judged and cited exactly as it would be
asked alone; a part the record cannot answer says so in its line. The answer lists the lines.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("condition_overview.json")


def overview_asked(pq: ParsedQuestion) -> dict[str, Any] | None:
    """The condition an overview question asks about (its entry in the lexicon file), or None."""
    spec = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    if not any(re.search(p, text) for p in spec["asks"]):
        return None
    return next((c for c in spec["conditions"] if re.search(c["words"], text)), None)


def plan_overview(pq: ParsedQuestion, condition: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """Each part of the overview answered by the planner; the lines joined, every part's rows cited."""
    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.plans import _day, _iso, final, plan
    from fhirqa.agent.backends.offline.summary_plan import _run

    if pq.now is None:
        yield final([], "An overview needs the question's time.", status="error")
        return
    lines: list[str] = []
    for part in condition["parts"]:
        got = yield from _run(plan(parse(part["ask"], pq.now)))
        if got is None:
            continue
        lines.append(f"{part['label']} {str(got.get('text') or '').strip()}")
    if not lines:
        yield final([], f"The record holds nothing about {condition['name']}.", status="no-data")
        return
    text = f"{condition['name'].capitalize()} (as of {_day(_iso(pq.now))}). " + " ".join(lines)
    yield final(lines, text)
