"""What the record cannot tell about a drug class, said with the answer: "is she on DVT ppx?" is answered by the
class members the record holds (apixaban 5 MG), but whether a member is given as prophylaxis or as treatment
is not recorded, and no dose rule decides it here. A class of ``lexicon/drugs.json`` with an ``answer_note``
has that note added to an answer that found something.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
Plan = Generator[Call, dict[str, Any], None]


@lru_cache(maxsize=1)
def _notes() -> tuple[tuple[str, str], ...]:
    """(normalized name or alias, note) of every class with an ``answer_note``, longest name first."""
    from fhirqa.agent.lexicon import normalize
    from fhirqa.project import lexicon_file

    pairs = [(normalize(name), group["answer_note"]) for group in lexicon_file("drugs.json").get("classes", [])
             if group.get("answer_note") for name in [group["name"], *group.get("aliases", [])]]
    return tuple(sorted(pairs, key=lambda p: len(p[0]), reverse=True))


def class_note(pq: ParsedQuestion) -> str | None:
    """The ``answer_note`` of the drug class the question's item names, or None."""
    from fhirqa.agent.lexicon import normalize

    entity = normalize(pq.entity) if pq.entity else ""
    return next((note for name, note in _notes() if name and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", entity)), None)


def with_note(planner: Callable[[ParsedQuestion], Plan], note: str) -> Callable[[ParsedQuestion], Plan]:
    """``planner`` whose final answer, when it found something, ends with ``note``."""

    def noted(pq: ParsedQuestion) -> Plan:
        steps = planner(pq)
        result: Any = None
        while True:
            try:
                call = steps.send(result)
            except StopIteration:
                return
            if call[0] == "final_answer" and call[1].get("status", "answered") == "answered" \
                    and call[1].get("answer") not in ([], [False]):
                call = (call[0], {**call[1], "text": f"{call[1].get('text', '').rstrip()} {note}"})
            result = yield call

    return noted
