"""Whether a chronic condition is controlled: "is his diabetes controlled?", "DM well controlled?", "HTN
controlled?", "is his sugar under control?", "is her A1c controlled?".

A condition is not controlled because it is on the problem list: control is judged from the measure that defines it
(A1c for diabetes, blood pressure for hypertension; ``lexicon/condition_control.json``). The patient's own Goal for
that measure is used when one is on file ("Hemoglobin A1c total in Blood < 7.0", "Maintain blood pressure below
140/90 mmHg": ``goal_attainment_plan``); else the usual treatment goal of ``lexicon/reference_ranges.json``
(``normality_plan``). The answer names the value, its day and the goal it was held against. No measure on file is
said as such (no-data), never Yes.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class ControlAsked:
    """What a control question names: the condition or measure, its measure and goal words, and the side asked."""

    name: str
    measure: str
    goal_words: str
    uncontrolled: bool


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("condition_control.json")


def control_asked(pq: ParsedQuestion) -> ControlAsked | None:
    """The condition or measure whose control the question asks about, or None when it asks something else."""
    spec = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split()).strip(" ?.!")
    if re.search(spec["not"], text) or pq.comparison is not None:
        return None
    control = re.search(spec["control"], text) is not None
    at_goal = re.search(spec["at_goal"], text) is not None
    if not (control or at_goal):
        return None
    for subject in spec["subjects"]:
        if re.search(subject["words"], text) and (control or subject.get("at_goal")):
            return ControlAsked(subject["name"], subject["measure"], subject["goal_words"],
                                re.search(spec["uncontrolled"], text) is not None)
    return None


def plan_control(pq: ParsedQuestion, asked: ControlAsked) -> Generator[Call, dict[str, Any], bool]:
    """The latest measure against the patient's Goal for it, else against the usual treatment goal."""
    from fhirqa.agent.backends.offline.goal_attainment_plan import plan_attainment
    from fhirqa.agent.backends.offline.normality_plan import plan_normality
    from fhirqa.agent.backends.offline.plans import final
    from fhirqa.agent.backends.offline.records_plan import view_spec

    if pq.window is None:
        goals = yield ("get_resources", {"view": "goal"})
        if goals.get("count"):
            named = yield ("filter_by_value", {"records": goals["handle"], "op": "contains",
                                               "value": asked.goal_words, "field": "name"})
            if named.get("count"):
                pq.notes.append(f"{asked.name} control read as the patient's {asked.goal_words} goal")
                answer = yield from _negated(plan_attainment(asked.goal_words, view_spec("goal")), asked.uncontrolled)
                return answer
    pq.entity, pq.intent = asked.measure, "value"
    pq.notes.append(f"{asked.name} control read as the latest {asked.measure} against the usual treatment goal")
    judged = yield from plan_normality(pq, "uncontrolled" if asked.uncontrolled else "controlled")
    if not judged:
        yield final([], f"No {asked.measure} result on file to judge {asked.name} control by.", status="no-data")
    return True


def _negated(steps: Generator[Call, dict[str, Any], Any], negate: bool) -> Generator[Call, dict[str, Any], bool]:
    """``steps`` with a yes/no final answer turned round when the question asks 'uncontrolled?'."""
    call = next(steps)
    while True:
        name, args = call
        if negate and name == "final_answer" and args.get("status") == "answered" and args.get("answer") in ([True], [False]):
            text = str(args.get("text", ""))
            flipped = not args["answer"][0]
            text = re.sub(r"^(Yes|No):", "Yes:" if flipped else "No:", text)
            call = (name, {**args, "answer": [flipped], "text": f"{text} (asked whether it is uncontrolled)"})
        try:
            call = steps.send((yield call))
        except StopIteration:
            return True
