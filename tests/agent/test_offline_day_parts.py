"""Questions over a part of the day or a shift, answered end to end by the offline backend.

A ward record with frequent vitals, a point-of-care glucose, morning labs and insulin doses, written at −05:00.
Each gold answer is computed here from the raw rows with the clock bounds stated in this file (morning 00:00–12:00,
afternoon 12:00–18:00, evening 18:00–24:00, overnight 19:00–07:00, day shift 07:00–19:00, night shift
19:00–07:00; see ``lexicon/day_parts.json``), never from fhirqa's own window. The window applies to every kind of
question that takes one (a value, an extreme, a count, a state such as hypoxic or febrile, doses given), and the
answer says the window it assumed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, time, timedelta, timezone
from typing import Any

import pytest

from .test_tools_helpers import med, obs, offline_answer

CDT = timezone(timedelta(hours=-5))
NOW = datetime(2025, 6, 20, 10, 30, tzinfo=CDT)  # mid-morning on the ward, on the record's clock
TODAY, YESTERDAY = NOW.date(), NOW.date() - timedelta(days=1)

HR = ("Heart rate", "8867-4", "/min", "vital-signs")
SPO2 = ("Oxygen saturation in Arterial blood by Pulse oximetry", "59408-5", "%", "vital-signs")
TEMP = ("Body temperature", "8310-5", "Cel", "vital-signs")
K = ("Potassium [Moles/volume] in Serum or Plasma", "2823-3", "mmol/L", "laboratory")
INSULIN = "insulin lispro 100 UNT/ML Injectable Solution"


def local(day: Any, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=CDT)


def reading(kind: tuple[str, str, str, str], n: int, when: datetime, value: float) -> dict[str, Any]:
    name, code, unit, category = kind
    return {**obs(f"{code}-{n}", name, value, "2000-01-01T00:00:00", unit=unit, code=code, category=category),
            "time": when}


def _rows() -> dict[str, list[dict[str, Any]]]:
    """Two and a half days of ward charting, every value deterministic."""
    observations, doses = [], []
    rng = random.Random(20250620)  # fixed: the gold below is computed from whatever rows this draws
    start = local(YESTERDAY - timedelta(days=1), 0)
    hours = int((NOW - start).total_seconds() // 3600)
    for n in range(hours + 1):
        when = start + timedelta(hours=n, minutes=10)
        if when > NOW:
            break
        observations.append(reading(HR, n, when, rng.randint(55, 125)))
        if n % 2 == 0:
            observations.append(reading(SPO2, n, when, rng.choice([85, 88, 91, 93, 94, 95, 96, 97, 98, 99])))
        if n % 4 == 1:
            observations.append(reading(TEMP, n, when, rng.choice([36.4, 36.8, 37.0, 37.2, 37.5, 38.2, 38.9])))
    observations.append(reading(K, 1, local(YESTERDAY, 5, 24), 4.4))  # yesterday's morning draw; none today
    for n, (day, hour, units) in enumerate([(YESTERDAY, 8, 4), (YESTERDAY, 12, 6), (YESTERDAY, 17, 5), (YESTERDAY, 22, 2),
                                            (TODAY, 2, 3), (TODAY, 7, 0), (TODAY, 8, 4), (TODAY, 10, 6)]):
        row = med(f"i{n}", INSULIN, "administration", None, dose=float(units), unit="[iU]")
        doses.append({**row, "time": local(day, hour, 5)})
    return {"observation": observations, "medication": doses,
            "patient": [{"patient_id": "p1", "ref": "Patient/p1", "name": "Ada Lovelace", "birth_date": None,
                         "gender": "female", "deceased": False, "deceased_time": None}]}


ROWS = _rows()


def values(kind: tuple[str, str, str, str], inside: Callable[[datetime], bool]) -> list[tuple[datetime, float, str]]:
    """(time, value, ref) of the rows of ``kind`` whose local time is ``inside``, in time order."""
    return sorted((r["time"], r["value"], r["ref"]) for r in ROWS["observation"]
                  if r["name"] == kind[0] and r["time"] <= NOW and inside(r["time"]))


def clock(first: datetime, end: datetime) -> Callable[[datetime], bool]:
    """[first, end) on the record's clock."""
    return lambda t: first <= t < end


THIS_MORNING = clock(local(TODAY, 0), local(TODAY, 12))
OVERNIGHT = lambda t: local(YESTERDAY, 19) <= t <= local(TODAY, 7)  # noqa: E731 - the night's end is inclusive
NIGHT_SHIFT = clock(local(YESTERDAY, 19), local(TODAY, 7))
DAY_SHIFT = clock(local(TODAY, 7), local(TODAY, 19))
YESTERDAY_AFTERNOON = clock(local(YESTERDAY, 12), local(YESTERDAY, 18))
YESTERDAY_EVENING = clock(local(YESTERDAY, 18), local(TODAY, 0))
SINCE_MIDNIGHT = clock(local(TODAY, 0), NOW + timedelta(seconds=1))
SINCE_SEVEN = clock(local(TODAY, 7), NOW + timedelta(seconds=1))


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, ROWS, NOW)


@pytest.mark.parametrize(("question", "kind", "inside", "pick"), [
    ("max HR this morning", HR, THIS_MORNING, max),
    ("highest heart rate this AM?", HR, THIS_MORNING, max),
    ("lowest SpO2 overnight", SPO2, OVERNIGHT, min),
    ("lowest O2 sat on night shift", SPO2, NIGHT_SHIFT, min),
    ("min HR this shift", HR, DAY_SHIFT, min),
    ("Tmax this afternoon", TEMP, YESTERDAY_AFTERNOON, max),  # asked at 10:30: yesterday's afternoon
    ("peak HR this evening", HR, YESTERDAY_EVENING, max),
    ("max temp since midnight", TEMP, SINCE_MIDNIGHT, max),
    ("lowest HR since 7", HR, SINCE_SEVEN, min),
])
def test_an_extreme_over_a_part_of_the_day_is_the_extreme_of_the_rows_in_it(question, kind, inside, pick) -> None:
    rows = values(kind, inside)
    gold = pick(v for _, v, _ in rows)
    got = ask(question)
    assert got["answer"] == [gold], got["text"]
    assert {ref for _, v, ref in rows if v == gold} & got["cited"]


@pytest.mark.parametrize(("question", "kind", "inside"), [
    ("HR this morning?", HR, THIS_MORNING),
    ("SpO2 since 7", SPO2, SINCE_SEVEN),
    ("temp yesterday evening", TEMP, YESTERDAY_EVENING),
])
def test_a_value_over_a_part_of_the_day_is_the_latest_in_it_and_the_answer_says_the_window(question, kind, inside) -> None:
    when, gold, ref = values(kind, inside)[-1]
    got = ask(question)
    assert got["answer"] == [gold] and ref in got["cited"]
    assert "Window:" in got["text"] or "(20" in got["text"]  # the assumed clock bounds are said


def test_the_answer_names_the_clock_bounds_it_assumed() -> None:
    assert "2025-06-20 00:00–12:00" in ask("HR this morning?")["text"]
    assert "the day shift, 2025-06-20 07:00–19:00" in ask("min HR this shift")["text"]


@pytest.mark.parametrize(("question", "inside"), [
    ("how many HR readings since midnight?", SINCE_MIDNIGHT),
    ("number of heart rate values this morning", THIS_MORNING),
])
def test_a_count_over_a_part_of_the_day_counts_the_rows_in_it(question, inside) -> None:
    assert ask(question)["answer"] == [len(values(HR, inside))]


@pytest.mark.parametrize(("question", "kind", "inside", "test"), [
    ("was she hypoxic overnight?", SPO2, OVERNIGHT, lambda v: v < 90),
    ("any hypoxia last shift?", SPO2, NIGHT_SHIFT, lambda v: v < 90),
    ("was she hypoxic since 7?", SPO2, SINCE_SEVEN, lambda v: v < 90),
    ("any fever this afternoon?", TEMP, YESTERDAY_AFTERNOON, lambda v: v >= 38.0),
    ("febrile this morning?", TEMP, THIS_MORNING, lambda v: v >= 38.0),
    ("any fever last night?", TEMP, OVERNIGHT, lambda v: v >= 38.0),
])
def test_a_state_over_a_part_of_the_day_is_read_from_the_rows_in_it(question, kind, inside, test) -> None:
    rows = values(kind, inside)
    assert rows, "the fixture charts this part of the day"
    assert ask(question)["answer"] == [any(test(v) for _, v, _ in rows)]


def given(inside: Callable[[datetime], bool]) -> float:
    return sum(r["dose"] for r in ROWS["medication"] if inside(r["time"]) and r["time"] <= NOW)


@pytest.mark.parametrize(("question", "inside"), [
    ("how much insulin this shift?", DAY_SHIFT),
    ("how much insulin overnight?", OVERNIGHT),
    ("total insulin given since midnight", SINCE_MIDNIGHT),
    ("how much insulin did she get last shift", NIGHT_SHIFT),
    ("how much insulin yesterday afternoon?", YESTERDAY_AFTERNOON),
])
def test_how_much_of_a_drug_over_a_part_of_the_day_is_what_was_given_in_it(question, inside) -> None:
    got = ask(question)
    assert got["answer"] == [given(inside)], got["text"]


def test_an_empty_part_of_the_day_says_so_and_names_the_latest_value_before_it() -> None:
    assert not values(K, THIS_MORNING)
    got = ask("K this morning?")
    assert got["status"] == "no-data" and got["answer"] == []
    assert "this morning" in got["text"] and "4.4" in got["text"]  # yesterday's 05:24 draw, named, not answered
