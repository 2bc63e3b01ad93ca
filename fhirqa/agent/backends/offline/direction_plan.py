"""Up/down questions as patients ask them: "did my A1c go up since last time?", "has my BMI gotten higher or lower in
the past 2 years?", "did my kidney numbers get worse?", "are my kidneys getting worse compared to last time?".

Definitions (docs/questions.md, "Patient and parent wording"):

- **Since last time** (and "get worse / better" with no window): the latest result against the one before it.
- **Over a window** ("in the past 2 years") without "since last time": the first and the last result in the window,
  by the 5 % trend rule of the trend questions (increasing / decreasing / stable).
- **A yes/no** ("did it go up?") answers whether it moved in the direction asked; **a choice** ("higher or lower?")
  names the direction. "Worse" and "better" follow the item's polarity: a higher eGFR or HDL is better, a higher
  creatinine, A1c, glucose, LDL, cholesterol, triglycerides or blood pressure is worse
  (``lexicon/patient_voice.json`` ``direction``); an item with no polarity is answered with the direction, not a verdict.

The answer always gives the two values and their days, so a patient sees what was compared.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.then_now_plan import names_time_back

Call = tuple[str, dict[str, Any]]
Plan = Generator[Call, dict[str, Any], None]


@dataclass
class Direction:
    """What an up/down question asks."""

    asked: str  # "up" | "down" | "worse" | "better" | "choice"
    previous: bool  # compare the latest result with the one before it (else the window's first and last)
    entity: str  # the item, without the direction words
    verdict: bool = False  # a choice between better and worse (not higher and lower)
    recent: bool = False  # "is his Cr rising?", "hgb dropping?": now, i.e. over this stay or against the result before


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return dict(lexicon_file("patient_voice.json").get("direction") or {})


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def direction_question(pq: ParsedQuestion) -> Direction | None:
    """The up/down question ``pq`` asks about one item, or None."""
    spec = _spec()
    if not spec or not pq.entity or pq.comparison is not None or pq.intent in (
            "after_drug", "count", "aggregate", "time_of", "time_since", "threshold"):
        return None
    text = " ".join(re.sub(r"[?!,;()]", " ", pq.text.lower().replace("’", "'")).split())
    # "hgb dropping?", "cr bumped?": a direction word ending the question asks yes or no as "is it …?" does
    # ("A1c up vs prior?", "K higher than the previous one?": the same, with the result compared with said after it)
    bare = re.search(rf"\b(?:{_alt([*spec['up'], *spec['down']])})(?:\s+(?:{_alt(spec['previous'])}))?\W*$", text) is not None
    if not (bare or re.match(r"^(?:did|has|have|is|are|was|were|do|does|am)\b", text)) or re.search(r"\bhow (?:much|many)\b", text):
        return None  # "how much did it go up" is a change; only yes/no and choice forms are directions
    if pq.window is not None and names_time_back(text):
        return None  # "higher than a year ago?", "up since this time last year?": against the value nearest then
    previous = re.search(rf"\b(?:{_alt(spec['previous'])})\b", text) is not None
    found = {kind: m.start() for kind in ("worse", "better", "up", "down")
             if (m := re.search(rf"\b(?:{_alt(spec[kind])})\b", text))}
    if re.search(rf"\b(?:{_alt(spec['choice'])})\b", text) or {"up", "down"} <= set(found) or {"worse", "better"} <= set(found):
        asked = "choice"  # "higher or lower?", "going up, going down or holding steady?": which way
    elif found:
        asked = min(found, key=lambda kind: found[kind])
    else:
        return None
    if asked in ("worse", "better") and pq.window is None:
        previous = True  # "did my kidney numbers get worse?": than the test before
    recent = False
    if asked in ("up", "down") and not previous and pq.window is None:
        # "is his creatinine rising?", "has his K gone up?", "hgb dropping?": now, not since the first result on file
        recent = True
        if re.search(rf"\b(?:{_alt(spec.get('sudden', []))})\b", text):
            previous = True  # "cr bumped?", "hgb dropped?": a step from the result before, not the stay's course
    words = [w for kind in ("up", "down", "worse", "better", "choice", "previous") for w in spec[kind]]
    entity = re.sub(rf"\b(?:{_alt(words)})\b", " ", pq.entity.lower())
    entity = re.sub(r"\b(?:gotten|getting|get|got|go|gone|going|been|compared|to|than|since|my|last|time|or|and)\b", " ", entity)
    entity = " ".join(entity.split())
    if _names_a_drug(entity):
        return None  # "did they increase his simvastatin dose?": an order changed, not a result
    verdict = asked == "choice" and bool({"worse", "better"} & set(found)) and not {"up", "down"} & set(found)
    return Direction(asked, previous, entity, verdict, recent) if entity else None


def _names_a_drug(entity: str) -> bool:
    """Whether ``entity`` is a drug or its dose ("simvastatin dose", "insulin"), which has no results to compare."""
    from fhirqa.agent.lexicon import Lexicon

    words = entity.split()
    if {"level", "levels", "trough", "troughs", "peak", "concentration"} & set(words):
        return False  # "vanc level": a result named after the drug
    return bool({"dose", "doses", "dosage", "dosing"} & set(words)) or bool(Lexicon.load().drug_phrase(words))


def _is_panel(entity: str) -> bool:
    """Whether the lexicon reads ``entity`` as a panel of components (blood pressure: systolic and diastolic)."""
    from fhirqa.agent.lexicon import Lexicon

    return any(e.detail.get("components") for e in Lexicon.load().expand(entity))


def _polarity(name: str) -> str | None:
    """"higher" when a higher value of ``name`` is better, "lower" when a lower one is, None when neither."""
    lowered = name.lower()
    for key, word in (("higher_is_better", "higher"), ("lower_is_better", "lower")):
        if any(term in lowered for term in _spec().get(key, [])):
            return word
    return None


def plan_direction(pq: ParsedQuestion, direction: Direction) -> Plan:
    """Find the item's series (each component of a panel: systolic and diastolic), compare the two results of
    each, answer the direction asked."""
    from fhirqa.agent.backends.offline.plans import final, find_records, item_groups, open_stay, plan_trend

    located = yield from find_records(pq, views=["observation"], entity=direction.entity, numeric=True)
    if located is None:
        yield final([], f"The record has no {direction.entity} results.", status="no-data")
        return
    if direction.recent:
        # in a stay now: its first and last results (5 % rule); otherwise the latest against the one before
        stay = yield from open_stay(pq)
        if stay is not None:
            pq.window = stay
        else:
            direction.previous = True
    _, found = located
    groups = item_groups(found.get("items") or [])
    how = str(found.get("resolved_by", ""))
    handles = [found["handle"]]
    if len(groups) > 1 and ("components" in how or _is_panel(direction.entity)):  # "blood pressure": each number
        handles = []
        for group in groups:
            sub = yield ("get_resources", {"view": "observation", "item": group[0], "numeric": True})
            if sub.get("count"):
                handles.append(sub["handle"])
    elif len(groups) > 1 and not how.startswith("lexicon"):
        # several analytes matched the words (one code under several names is one test): the one measured most often
        counts = []
        for group in groups:
            sub = yield ("get_resources", {"view": "observation", "item": group[0], "numeric": True})
            counts.append((sub.get("count") or 0, sub.get("handle")))
        handles = [max(counts, key=lambda c: c[0])[1] or found["handle"]]
    if direction.asked == "choice" and not direction.previous and not direction.verdict and len(handles) == 1:
        # "has my BMI gotten higher or lower in the past 2 years?": the trend question's own reading (5 % rule)
        pq.intent, pq.entity = "trend", direction.entity
        yield from plan_trend(pq)
        return
    answers, texts = [], []
    for handle in handles:
        got = yield from _compared(pq, direction, handle)
        if isinstance(got, str):
            yield final([], got, status="no-data")
            return
        answers.append(got[0])
        texts.append(got[1])
    yield final(answers, " ".join(texts))


def _compared(pq: ParsedQuestion, direction: Direction, handle: str) -> Generator[Call, dict[str, Any], tuple[Any, str] | str]:
    """(answer, sentence) for one series, or why it cannot be compared."""
    from fhirqa.agent.backends.offline.plans import TREND_THRESHOLD, _day, _row, _with_unit, windowed

    if not direction.previous:
        filtered = yield from windowed(pq, handle)
        handle = filtered.get("handle") or handle
        if filtered.get("count") is not None and filtered["count"] < 2 and not direction.recent:
            window = pq.window.label if pq.window else ""
            return f"Fewer than two {direction.entity} results {window}: nothing to compare."
        if filtered.get("count") is not None and filtered["count"] < 2:  # one result this stay: against the one before
            direction.previous, pq.window = True, None
            return (yield from _compared(pq, direction, handle))
        before = _row((yield ("get_by_index", {"records": handle, "index": 0})))
    else:
        count = (yield ("count_values", {"records": handle})).get("count", 0)
        if count < 2:
            return f"Only one {direction.entity} result: nothing to compare it with."
        before = _row((yield ("get_by_index", {"records": handle, "index": -2})))
    after = _row((yield ("get_by_index", {"records": handle, "index": -1})))
    a, b = before.get("value"), after.get("value")
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return f"The {direction.entity} results are not numbers to compare."
    name = after.get("name") or direction.entity
    also = f" ({before.get('name')})" if before.get("name") and before.get("name") != name else ""
    said = (f"{name} was {_with_unit(a, before.get('unit'))} on {_day(before.get('time'))}{also} and "
            f"{_with_unit(b, after.get('unit'))} on {_day(after.get('time'))}")
    relative = (b - a) / abs(a) if a else 0.0
    if direction.previous:
        trend = "increasing" if b > a else "decreasing" if b < a else "stable"
        change = ""
    else:
        trend = "increasing" if relative > TREND_THRESHOLD else "decreasing" if relative < -TREND_THRESHOLD else "stable"
        change = f" ({relative:+.1%} {pq.window.label if pq.window else ''}; within ±{TREND_THRESHOLD:.0%} counts as stable)"
    moved = {"increasing": "up", "decreasing": "down"}.get(trend)
    polarity = _polarity(str(name))
    better = moved is not None and polarity is not None and (moved == "up") == (polarity == "higher")
    worse = moved is not None and polarity is not None and not better
    verdict = "worse" if worse else "better" if better else "unchanged" if moved is None else None
    if direction.asked == "choice" and not direction.verdict:
        return trend, f"{trend.capitalize()}: {said}{change}."
    if direction.asked in ("up", "down"):
        yes = moved == direction.asked
        return yes, f"{'Yes' if yes else 'No'}: {said}{change}."
    if verdict is None:
        return trend, (f"{trend.capitalize()}: {said}{change}; whether that is better or worse depends on the test, "
                       "so ask your care team.")
    why = f" (for this test a {polarity} value is better)" if polarity else ""
    if direction.asked == "choice":
        return verdict, f"{verdict.capitalize()}: {said}{change}{why}."
    yes = worse if direction.asked == "worse" else better
    return yes, f"{'Yes' if yes else 'No'}: {said}{change}, {verdict}{why}."
