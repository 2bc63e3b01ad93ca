"""Questions whether something is due: "is he due for a flu shot?", "overdue for a colonoscopy?",
"when is her next A1c due?".

"Due" needs a schedule (a recommendation, an interval, a care plan) that the record does not hold, and that
an item exists says nothing about it: a flu shot given two weeks ago must not answer "Yes". The answer is the
last time the item was given or done, with how long ago, and that no schedule decides "due" (the words that
mark the question are in ``lexicon/due_questions.json``).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("due_questions.json")


def due_question(pq: ParsedQuestion) -> str | None:
    """The item a "due for" question names, or None for other questions (or when it names nothing)."""
    words = _words()
    text = pq.text.lower()
    if not any(re.search(p, text) for p in words.get("patterns", [])):
        return None
    filler = "|".join(re.escape(w) for w in words.get("filler", []))
    item = re.sub(rf"(?<![\w-])(?:{filler})(?![\w-])", " ", pq.entity, flags=re.IGNORECASE)
    item = re.sub(r"\s+", " ", item).strip()
    return item or None


def plan_due(pq: ParsedQuestion, item: str) -> Generator[Call, dict[str, Any], None]:
    """The last time ``item`` was given or done, and that the record holds no schedule to decide "due" from."""
    from fhirqa.agent.backends.offline.plans import _ambiguous, _day, _row, _row_time, final, find_records

    located = yield from find_records(pq, entity=item)
    if located is None:
        yield final([], f"The record holds no {item} at all, and no schedule to say when one is due.", status="no-data")
        return
    view, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, item)
        return
    last = yield ("get_by_index", {"records": found["handle"], "index": -1})
    row = _row(last)
    when = _row_time(row)
    if not when:
        yield final([], f"The record's {item} has no date, and the record holds no schedule to say when one is due.",
                    status="no-data")
        return
    args: dict[str, Any] = {"start": when, "unit": "days"}
    if pq.now is not None:
        args["end"] = pq.now.isoformat()
    ago = yield ("calculate_time_offset", args)
    name = next((row.get(k) for k in ("vaccine_name", "name", "medication_name") if row.get(k)), None) or item
    elapsed = f" ({ago['value']} days ago)" if ago.get("value") is not None else ""
    yield final([_day(when)], f"The record holds no schedule to decide whether it is due; the last {name} was on "
                              f"{_day(when)}{elapsed}.")
