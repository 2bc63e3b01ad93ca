"""Questions whether something is due: "is he due for a flu shot?", "overdue for a colonoscopy?",
"when is her next A1c due?".

"Due" needs a schedule (a recommendation, an interval, a care plan) that the record does not hold, and that
an item exists says nothing about it: a flu shot given two weeks ago must not answer "Yes". The answer is the
last time the item was given or done, with how long ago, and that no schedule decides "due" (the words that
mark the question are in ``lexicon/due_questions.json``). When the question asks for the next one's time ("next vanc
trough due?"), that time is not in the record: the answer is no-data, with the last one said.
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
    """The item a "due for" question names ("" when it names only a kind: "any vaccines due?"), or None for other
    questions."""
    words = _words()
    text = pq.text.lower()
    if not any(re.search(p, text) for p in words.get("patterns", [])):
        return None
    filler = "|".join(re.escape(w) for w in words.get("filler", []))
    item = re.sub(rf"(?<![\w-])(?:{filler})(?![\w-])", " ", pq.entity, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", item).strip()


def plan_due(pq: ParsedQuestion, item: str) -> Generator[Call, dict[str, Any], None]:
    """The last time ``item`` (or the last of the kind the question names) was given or done, as "when was the last
    <item>?" answers it, said with how long ago and that the record holds no schedule to decide "due" from."""
    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.plans import final, plan

    kinds = _words().get("kind_words") or {}
    asked = item or next((kinds[v] for v in pq.hinted if v in kinds), "")
    if not asked or pq.now is None:
        yield final([], "The record holds no schedule to decide what is due, and the question names nothing to look "
                        "up.", status="no-data")
        return
    steps = plan(parse(f"when was the patient's last {asked}?", pq.now))
    result: Any = None
    while True:
        try:
            name, args = steps.send(result)
        except StopIteration:
            return
        if name == "final_answer":
            break
        result = yield (name, args)
    if args.get("status", "answered") != "answered" or not args.get("answer"):
        yield final([], f"{str(args.get('text') or '').rstrip()} The record holds no schedule to say when {asked} is due.",
                    status=args.get("status") or "no-data")
        return
    last = str(args["answer"][0])
    ago = yield ("calculate_time_offset", {"start": last, "end": pq.now.isoformat(), "unit": "days"})
    elapsed = f" ({ago['value']} days before now)" if ago.get("ok", True) and ago.get("value") is not None else ""
    said = str(args.get("text") or "").rstrip(". ")
    if any(re.search(p, pq.text.lower()) for p in _words().get("schedule_patterns", [])):
        # "next vanc trough due?": the time of a future draw or dose is an order's schedule, which no record here holds
        yield final([], f"The record holds no schedule, so the time of the next {asked} is not in it. {said}{elapsed}.",
                    status="no-data")
        return
    yield final(list(args["answer"]), f"The record holds no schedule to decide whether it is due. {said}{elapsed}.")
