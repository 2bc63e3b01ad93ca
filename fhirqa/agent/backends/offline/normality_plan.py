"""Whether a result is normal, high or low: "is her K normal?", "was the last A1c high?", "BP elevated?", "is his
creatinine up?", "Hgb low?".

The latest value (in the window) is judged by, in this order: the result's own interpretation flag (H, L, A, N …),
the reference range the result itself carries, and else the usual adult range of ``lexicon/reference_ranges.json``
(by LOINC code, in its unit after the units table's conversions, by sex where ranges differ, never an adult range
for a child). The answer names the value, its day, the range or flag used and where it came from, so the reader
can disagree; a result with none of the three is reported with no judgment. A panel (blood pressure) is judged
part by part. The answer is yes/no to the word asked ("high?" is yes only above the range; "normal?" only within).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_ADULT_AGE = 18


@dataclass(frozen=True)
class _Spec:
    asks: list[tuple[str, re.Pattern[str]]]
    frame: re.Pattern[str]
    refuse: re.Pattern[str]
    by_code: dict[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _spec() -> _Spec:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("reference_ranges.json")
    return _Spec(
        asks=[(word, re.compile("|".join(f"(?:{p})" for p in patterns))) for word, patterns in spec["asks"].items()],
        frame=re.compile(spec["frame"]),
        refuse=re.compile("|".join(f"(?:{p})" for p in spec["not"])),
        by_code={code: entry for entry in spec["entries"] for code in entry["loinc"]},
    )


def normality_asked(pq: ParsedQuestion) -> str | None:
    """``normal``, ``abnormal``, ``high``, ``low``, ``controlled`` or ``uncontrolled`` when the question asks whether a
    result is so; None otherwise."""
    if not pq.entity or pq.comparison is not None or pq.intent not in ("exists", "value", "active_check"):
        return None
    spec = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split()).strip(" ?.!")
    terse = re.search(r"^(?:\S+\s+){0,4}\S+\s+(?:normal|abnormal|high|low|elevated|ok|okay|wnl|controlled|"
                      r"uncontrolled)$", text)
    if re.search(r"^(?:any|anything)\s+abnormal\s+\S+", text) and not spec.refuse.search(text):
        return "abnormal"  # "any abnormal lytes?": the group's latest values judged ("any high K?" may ask about any value)
    if not (spec.frame.search(text) or terse) or spec.refuse.search(text):
        return None
    entity_words = {w for w in re.findall(r"[a-z0-9]+", pq.entity.lower()) if len(w) > 1}
    for word, pattern in spec.asks:
        found = pattern.search(text)
        # the word must follow the item: "is her BP high?" asks about a value, "is high BP on her list?" names a condition
        if found and not entity_words & set(re.findall(r"[a-z0-9]+", text[found.end():])):
            return word
    return None


def plan_normality(pq: ParsedQuestion, asked: str) -> Generator[Call, dict[str, Any], bool]:
    """Judge the latest value of each part of the item; False (nothing answered) when the item is not a result."""
    from fhirqa.agent.backends.offline.plans import (
        Scope,
        _entity_label,
        _row,
        analyte_handles,
        find_records,
        scoped,
    )

    entity = pq.entity
    for _, pattern in _spec().asks:
        entity = pattern.sub(" ", entity)  # "k normal": the word asked is no part of the item
    pq.entity = " ".join(entity.split()) or pq.entity
    found = yield from find_records(pq, views=["observation"])
    if found is None or not found[1].get("count") or found[1].get("ambiguous"):
        return False  # not a result: the question's other plans answer it
    got = yield from scoped(pq, f"{_entity_label(pq)} results")
    if not isinstance(got, Scope):
        yield got
        return True
    if got.view != "observation":
        return False
    person = yield ("get_resources", {"view": "patient", "fields": ["birth_date", "gender"]})
    patient = _row((yield ("get_by_index", {"records": person["handle"], "index": 0}))) if person.get("count") else {}
    handles = yield from analyte_handles(got.view, got.handle)
    verdicts: list[_Verdict] = []
    for handle in handles:
        row = _row((yield ("get_by_index", {"records": handle, "index": 0 if pq.position == "first" else -1})))
        if row.get("value") is None:
            continue
        verdicts.append(judge(row, patient, goal=asked in ("controlled", "uncontrolled")))
    if not verdicts:
        return False
    yield _final(pq, asked, verdicts)
    return True


@dataclass(frozen=True)
class _Verdict:
    """One value judged: ``side`` is low / normal / high / abnormal, or None when nothing says."""

    row: dict[str, Any]
    side: str | None
    basis: str


def judge(row: dict[str, Any], patient: dict[str, Any], *, goal: bool = False) -> _Verdict:
    """The side of the normal range ``row``'s value lies on, and what said so (flag, the record's range, the usual range).

    With ``goal`` the value is held against the usual treatment goal instead ("is her A1c controlled?"): ``normal``
    then means at goal, ``high`` above it.
    """
    from fhirqa.agent.backends.offline.plans import _fmt
    from fhirqa.agent.units import convert as _convert
    from fhirqa.agent.units import unit_key as _unit_key

    entry = _spec().by_code.get(str(row.get("code") or ""))
    if goal:
        if entry is None or entry.get("goal_high") is None:
            return _Verdict(row, None, "fhirqa has no usual treatment goal for it")
        value = _convert(float(row["value"]), row.get("unit"), entry["unit"])
        if value is None:
            return _Verdict(row, None, f"the goal is in {entry['unit']}, which {row.get('unit') or 'its unit'} does not convert to")
        return _Verdict(row, _side(value, None, entry["goal_high"]),
                        f"the usual goal {_bounds(None, entry['goal_high'], entry['unit'])}: {entry['goal_source']}")
    flag = _flag(row.get("interpretation"))
    if flag is not None:
        return _Verdict(row, flag, f"flagged {row['interpretation']} in the record")
    value, unit = float(row["value"]), row.get("unit")
    low, high = row.get("ref_low"), row.get("ref_high")
    if low is not None or high is not None:
        return _Verdict(row, _side(value, low, high), f"the record's reference range {_bounds(low, high, unit)}")
    if entry is None:
        return _Verdict(row, None, "the record gives no flag or reference range, and fhirqa has no usual range for it")
    age = _age(patient.get("birth_date"), row.get("time"))
    if entry.get("adult_only") and age is not None and age < _ADULT_AGE:
        child = f": {entry['child_note']}" if entry.get("child_note") else ""
        return _Verdict(row, None, f"the record gives no range, and the usual adult range does not apply at {age} years{child}")
    low, high = entry.get("low"), entry.get("high")
    sex = str(patient.get("gender") or "").lower()
    if "by_sex" in entry:
        if sex not in entry["by_sex"]:
            return _Verdict(row, None, "the usual range differs by sex, which the record does not give")
        low, high = entry["by_sex"][sex]
    for other, bounds in (entry.get("other_units") or {}).items():
        if _unit_key(other) == _unit_key(unit):  # "glucose 5.0 mmol/L": no unit table converts mmol to mg
            low, high = bounds
            entry = {**entry, "unit": other}
    converted = _convert(value, unit, entry["unit"])
    if converted is None:
        return _Verdict(row, None, f"the usual range is in {entry['unit']}, which {unit or 'its unit'} does not convert to")
    shown = f"{_fmt(converted)} {entry['unit']} = " if converted != value else ""
    note = f"; {entry['note']}" if entry.get("note") else ""
    who = f" for a {sex}" if "by_sex" in entry else ""
    return _Verdict(row, _side(converted, low, high),
                    f"{shown}the usual adult range{who} {_bounds(low, high, entry['unit'])} (labs differ{note})")


CRITICALLY_LOW, CRITICALLY_HIGH, CRITICAL, NOT_CRITICAL = "critically low", "critically high", "critical", "not critical"


def judge_critical(row: dict[str, Any]) -> _Verdict:
    """Whether ``row`` is a critical (panic) value: the record's own critical flag (LL, HH, AA), else the typical
    critical limits of ``lexicon/reference_ranges.json`` in the entry's unit; ``side`` None when neither applies."""
    from fhirqa.agent.backends.offline.plans import _fmt
    from fhirqa.agent.units import convert

    flag = _critical_flag(row.get("interpretation"))
    if flag is not None:
        return _Verdict(row, flag, f"flagged {row['interpretation']} in the record")
    if _flag(row.get("interpretation")) == "normal":
        return _Verdict(row, NOT_CRITICAL, f"flagged {row['interpretation']} in the record")
    entry = _spec().by_code.get(str(row.get("code") or ""))
    low, high = (entry or {}).get("critical_low"), (entry or {}).get("critical_high")
    if entry is None or (low is None and high is None) or row.get("value") is None:
        return _Verdict(row, None, "no critical flag in the record, and fhirqa holds no critical limit for it")
    value = convert(float(row["value"]), row.get("unit"), entry["unit"], entry["name"])
    if value is None:
        return _Verdict(row, None, f"the critical limits are in {entry['unit']}, which {row.get('unit') or 'its unit'} "
                                   "does not convert to")
    shown = f"{_fmt(value)} {entry['unit']} against " if value != float(row["value"]) else ""
    limits = " or ".join(part for part in (f"< {_fmt(low)}" if low is not None else "",
                                           f"> {_fmt(high)}" if high is not None else "") if part)
    basis = f"{shown}the typical critical limits {limits} {entry['unit']}; each laboratory sets its own"
    if low is not None and value < float(low):
        return _Verdict(row, CRITICALLY_LOW, basis)
    if high is not None and value > float(high):
        return _Verdict(row, CRITICALLY_HIGH, basis)
    return _Verdict(row, NOT_CRITICAL, basis)


def _critical_flag(interpretation: Any) -> str | None:
    """critically low / high / critical from an interpretation code or display ("LL", "HH", "AA", "Critical high");
    None for any other flag (an "H" says nothing about a critical limit)."""
    if not interpretation:
        return None
    text = str(interpretation).strip().lower()
    words = set(re.findall(r"[a-z]+", text))
    critical = text in ("ll", "hh", "aa", "<<", ">>") or bool(words & {"critical", "critically", "panic"})
    if not critical:
        return None
    if text in ("ll", "<<") or "low" in words:
        return CRITICALLY_LOW
    if text in ("hh", ">>") or "high" in words:
        return CRITICALLY_HIGH
    return CRITICAL


def _flag(interpretation: Any) -> str | None:
    """low / high / abnormal / normal from an interpretation code or its display ("H", "Low", "critical high")."""
    if not interpretation:
        return None
    text = str(interpretation).strip().lower()
    words = set(re.findall(r"[a-z]+", text))
    if text in ("h", "hh", "hu", ">") or "high" in words:
        return "high"
    if text in ("l", "ll", "lu", "<") or "low" in words:
        return "low"
    if text in ("a", "aa") or "abnormal" in words or "critical" in words:
        return "abnormal"
    if text == "n" or "normal" in words:
        return "normal"
    return None


def _side(value: float, low: Any, high: Any) -> str:
    if low is not None and value < float(low):
        return "low"
    if high is not None and value > float(high):
        return "high"
    return "normal"


def _bounds(low: Any, high: Any, unit: str | None) -> str:
    from fhirqa.agent.backends.offline.plans import _fmt

    unit = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"{_fmt(low)}–{_fmt(high)}{unit}"
    return f"{_fmt(low)}{unit} or more" if low is not None else f"{_fmt(high)}{unit} or less"


def _age(birth: Any, when: Any) -> int | None:
    """Completed years from ``birth`` to the result's ``when`` (ISO strings), None when either is missing."""
    try:
        born = date.fromisoformat(str(birth)[:10])
        at = datetime.fromisoformat(str(when)).date()
    except (TypeError, ValueError):
        return None
    return at.year - born.year - ((at.month, at.day) < (born.month, born.day))


_WORDS = {"low": "low", "high": "high", "normal": "within the normal range", "abnormal": "abnormal"}
_GOAL_WORDS = {"normal": "at goal", "high": "above goal", "low": "at goal"}


def _final(pq: ParsedQuestion, asked: str, verdicts: list[_Verdict]) -> Call:
    from fhirqa.agent.backends.offline.plans import _day, _shown, final, label

    words = _GOAL_WORDS if asked in ("controlled", "uncontrolled") else _WORDS
    parts = []
    for v in verdicts:
        said = f"{words[v.side]} ({v.basis})" if v.side is not None else f"not judged: {v.basis}"
        parts.append(f"{label(v.row, pq.entity)} {_shown(v.row, v.row['value'], v.row.get('unit'))} on "
                     f"{_day(v.row.get('time'))}: {said}")
    judged = [v.side for v in verdicts if v.side is not None]
    if not judged:
        return final([], "; ".join(parts) + ".", status="no-data")
    outside = [s for s in judged if s != "normal"]
    answer = {"normal": not outside, "abnormal": bool(outside), "high": "high" in judged, "low": "low" in judged,
              "controlled": "high" not in judged, "uncontrolled": "high" in judged}[asked]
    if asked in ("high", "low") and "abnormal" in judged and asked not in judged:
        # flagged abnormal without a direction: not a yes or a no to "high?"
        return final([], "Abnormal, direction not given: " + "; ".join(parts) + ".", status="no-data")
    return final([answer], f"{'Yes' if answer else 'No'}: " + "; ".join(parts) + ".")
