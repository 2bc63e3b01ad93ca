"""How long a drug has been given: "how many days has she been on vanc?", "what day of zosyn is he on?", "abx day
#?", "how long was she on cefepime?".

The ``medication_courses`` tool cuts the drug's administrations into courses (no gap over 48 h; orders when no dose
is charted); the latest course answers. An ongoing course gives its day ("day 5": the first dose's day is day 1);
a finished one its length, and the answer says it is not given now, so a course from an earlier stay is never
counted up to today. Words in ``lexicon/therapy_duration.json``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_FILLER = frozenset({"how", "many", "days", "day", "long", "has", "have", "had", "was", "were", "is", "did", "she",
                     "he", "they", "the", "patient", "pt", "been", "on", "getting", "receiving", "taking", "get",
                     "receive", "take", "what", "of", "it", "number", "no", "count", "duration", "therapy",
                     "treatment", "her", "his", "their", "my", "course", "so", "far", "now", "currently", "yrs", "yr",
                     "years", "year", "months", "month", "mos", "wks", "wk", "weeks", "week", "in"})


_DAYS_PER = {"years": 365.25, "months": 30.44, "weeks": 7.0}


@lru_cache(maxsize=1)
def _spec() -> tuple[re.Pattern[str], float]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("therapy_duration.json")
    return re.compile("|".join(f"(?:{p})" for p in spec["asks"])), float(spec["gap_hours"])


@lru_cache(maxsize=1)
def _units() -> tuple[tuple[str, re.Pattern[str]], ...]:
    from fhirqa.project import lexicon_file

    units = lexicon_file("therapy_duration.json").get("units", {})
    return tuple((unit, re.compile(rf"\b(?:{'|'.join(words)})\b")) for unit, words in units.items())


def _asked_unit(text: str) -> str | None:
    """The unit a length is asked in ("yrs on Pulmicort?": years), None for days."""
    lowered = " ".join(text.lower().split())
    return next((unit for unit, pattern in _units() if pattern.search(lowered)), None)


def therapy_asked(pq: ParsedQuestion) -> str | None:
    """The drug or class whose days of therapy are asked, as the question words it; None otherwise."""
    from fhirqa.agent.lexicon import Lexicon

    asks, _ = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    if not asks.search(text):
        return None
    return Lexicon.load().drug_phrase([w for w in re.findall(r"[a-z0-9][a-z0-9\-/]*", text) if w not in _FILLER])


def plan_therapy_days(pq: ParsedQuestion, drug: str) -> Generator[Call, dict[str, Any], None]:
    """The latest course of ``drug``: its day when ongoing, its length when over."""
    from fhirqa.agent.backends.offline.plans import final

    _, gap = _spec()
    found = yield ("medication_courses", {"item": drug, "gap_hours": gap})
    courses = found.get("courses") or []
    if not found.get("found") or not courses:
        yield final([], f"The record has no {drug} given or ordered.", status="no-data")
        return
    course = courses[-1]
    doses = f", {course['doses']} doses" if course.get("doses") else ""
    read = "administrations" if course.get("from") == "administrations" else "orders (no dose charted)"
    span = f"from {str(course['start'])[:10]} to {str(course['end'])[:10]}"
    if course["days"] > 365:
        span += f" (about {course['days'] / 365.25:.0f} years)"
    earlier = f" ({len(courses) - 1} earlier course{'s' if len(courses) > 2 else ''} on file)" if len(courses) > 1 else ""
    unit = _asked_unit(pq.text)
    if unit is not None:  # "yrs on Pulmicort?": completed years, the days said beside them
        length = int(course["days"] // _DAYS_PER[unit])
        state = "so far" if course.get("ongoing") else "(not given now)"
        yield final([length], f"{length} {unit} {state}: {course['name']} {span} ({course['days']} days{doses}), read "
                              f"from its {read}{earlier}.", unit=unit)
        return
    if course.get("ongoing"):
        yield final([course["days"]], f"Day {course['days']} of {drug}: {course['name']} {span}{doses}, read from its "
                                      f"{read}{earlier}.", unit="days")
        return
    yield final([course["days"]], f"Not given now: the last course of {drug} lasted {course['days']} days, {span}"
                                  f"{doses} ({course['name']}, read from its {read}){earlier}.", unit="days")
