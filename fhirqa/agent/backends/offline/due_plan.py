"""Questions whether something is due: "is he due for a flu shot?", "overdue for a colonoscopy?",
"when is her next A1c due?".

"Due" needs a schedule (a recommendation, an interval, a care plan), and that an item exists says nothing about
it: a flu shot given two weeks ago must not answer "Yes". A vaccine with a well-established adult interval in
``lexicon/immunization_schedule.json`` (influenza each season from 1 August, Td/Tdap every 10 years) is judged by
that rule: due when no dose lies in the current season or interval; the answer names the rule and the last dose,
and "has he had his flu shot this season?" is its negation. Anything else is answered with the last time the item
was given or done, with how long ago, and that the record holds no schedule to decide "due" (the words that mark
the question are in ``lexicon/due_questions.json``). When the question asks for the next one's time ("next vanc
trough due?"), that time is not in the record: the answer is no-data, with the last one said.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("due_questions.json")


@lru_cache(maxsize=1)
def _schedule() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("immunization_schedule.json")


def _rule(item: str) -> dict[str, Any] | None:
    """The schedule rule for the vaccine ``item`` names, or None."""
    text = item.lower()
    return next((r for r in _schedule()["rules"] if any(re.search(p, text) for p in r["asked"])), None)


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
    rule = _rule(asked)
    why_not = ""
    if rule is not None and not any(re.search(p, pq.text.lower()) for p in _words().get("schedule_patterns", [])):
        judged = yield from _by_rule(pq, rule)
        if judged is True:
            return
        why_not = f" {judged}" if isinstance(judged, str) else ""
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
    yield final(list(args["answer"]), f"The record holds no schedule to decide whether it is due.{why_not} {said}{elapsed}.")


def _threshold(rule: dict[str, Any], now: datetime) -> tuple[datetime, str]:
    """The instant from which a dose counts for ``rule`` at ``now``, and how the rule says it."""
    if rule.get("season_start"):
        month, day = (int(x) for x in str(rule["season_start"]).split("-"))
        year = now.year if (now.month, now.day) >= (month, day) else now.year - 1
        start = datetime(year, month, day, tzinfo=UTC)
        return start, f"the season began on {start.date().isoformat()}"
    years = int(rule["interval_years"])
    try:
        start = now.replace(year=now.year - years)
    except ValueError:  # 29 February
        start = now.replace(year=now.year - years, day=28)
    return start, f"{years} years before now is {start.date().isoformat()}"


def _by_rule(pq: ParsedQuestion, rule: dict[str, Any]) -> Generator[Call, dict[str, Any], bool | str]:
    """Judge "due" by ``rule`` (True: answered); else why the adult rule does not apply to the patient (nothing
    answered)."""
    from fhirqa.agent.backends.offline.plans import _day, _instant, _row, final

    assert pq.now is not None
    person = yield ("get_resources", {"view": "patient", "fields": ["birth_date"]})
    birth = _row((yield ("get_by_index", {"records": person["handle"], "index": 0}))).get("birth_date") \
        if person.get("count") else None
    try:
        born = date.fromisoformat(str(birth)[:10])
    except ValueError:
        return "The record gives no birth date, so the adult schedule cannot be said to apply."
    now_day = pq.now.date()
    age = now_day.year - born.year - ((now_day.month, now_day.day) < (born.month, born.day))
    months = (now_day.year - born.year) * 12 + now_day.month - born.month - (now_day.day < born.day)
    if months < float(rule.get("min_age") or 0) * 12:
        said = f"{age} years" if age else f"{months} months"
        return f"The {rule['name']} schedule fhirqa knows does not apply at {said}."
    found = yield ("get_resources", {"view": "immunization"})
    doses: list[str] = []
    if found.get("count"):
        for word in rule["given"]:
            hit = yield ("filter_by_value", {"records": found["handle"], "op": "contains", "value": word, "field": "name"})
            if hit.get("count"):
                doses.append(hit["handle"])
    last: dict[str, Any] = {}
    if doses:
        every = (yield ("combine_evidence", {"handles": doses})) if len(doses) > 1 else {"handle": doses[0]}
        ordered = yield ("sort_records", {"records": every["handle"]})
        last = _row((yield ("get_by_index", {"records": ordered.get("handle") or every["handle"], "index": -1})))
    start, window = _threshold(rule, pq.now.astimezone(UTC))
    when = _instant(last.get("time")) if last else None
    due = when is None or when < start
    text = pq.text.lower()
    said = (f"the last was {last.get('name')} on {_day(last.get('time'))}" if last else
            f"no {rule['name']} vaccine is on record")
    reason = (f"{'due' if due else 'not due'}: {said}; {window} (rule: {rule['source']}; fhirqa's schedule, "
              f"not an order in the record)")
    if re.search(r"\bwhen\b", text):
        if not last:
            yield final([], f"No {rule['name']} vaccine is on record; {reason}.", status="no-data")
        else:
            yield final([last.get("time")], f"The last {rule['name']} vaccine was on {_day(last.get('time'))}; {reason}.")
        return True
    if any(re.search(p, text) for p in _schedule().get("given_patterns", [])):
        given = not due  # "has he had his flu shot this season?"
        yield final([given], f"{'Yes' if given else 'No'}: {said}; {window} (rule: {rule['source']}).")
        return True
    yield final([due], f"{'Yes' if due else 'No'}, {reason}.")
    return True
