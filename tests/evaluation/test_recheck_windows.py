"""Windowed gold answers re-derived from the question's own words: the window is parsed from the text
("in 2019", "since March 2016", "between 3/4/2019 and June 30, 2020", "over the past 18 months") with
an implementation separate from the builder's, and the values are read with FHIRPath."""

from __future__ import annotations

import calendar
import re
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from statistics import fmean

import pytest

from .helpers import committed_questions
from .test_recheck_fhirpath import _instant, _series, fp

PER_PATTERN = 1
pytestmark = pytest.mark.shared
UTC = UTC
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})


def parse_day(text: str) -> date:
    """2019-03-04, 3/4/2019, March 4, 2019, Mar 4, 2019."""
    text = text.strip()
    if m := re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", text):
        return date(int(m[1]), int(m[2]), int(m[3]))
    if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
        return date(int(m[3]), int(m[1]), int(m[2]))
    m = re.fullmatch(r"([A-Za-z]+) (\d{1,2}), (\d{4})", text)
    assert m, text
    return date(int(m[3]), MONTHS[m[1].lower()], int(m[2]))


def minus_months(moment: datetime, months: int) -> datetime:
    y, mo = divmod(moment.year * 12 + moment.month - 1 - months, 12)
    return moment.replace(year=y, month=mo + 1, day=min(moment.day, calendar.monthrange(y, mo + 1)[1]))


def window_of(question: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The [start, end] a question's words name, or None when it names no window."""
    q = question.rstrip("?")
    if m := re.search(r"(?:between|from) (.+?) (?:and|to) (.+)$", q):
        return (datetime.combine(parse_day(m[1]), time(0), UTC),
                datetime.combine(parse_day(m[2]), time(23, 59, 59, 999999), UTC))
    if m := re.search(r"(?:in|during|in calendar year) (\d{4})$", q):
        y = int(m[1])
        return datetime(y, 1, 1, tzinfo=UTC), datetime(y, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    if m := re.search(r"since ([A-Za-z]+) (\d{4})$", q):
        return datetime(int(m[2]), MONTHS[m[1].lower()], 1, tzinfo=UTC), now
    if m := re.search(r"since (.+)$", q):
        return datetime.combine(parse_day(m[1]), time(0), UTC), now
    if m := re.search(r"(?:last|past) (?:(\d+) )?(day|week|month|year|yr)s?$", q):
        n, unit = int(m[1] or 1), m[2]
        if unit == "day":
            return now - timedelta(days=n), now
        if unit == "week":
            return now - timedelta(weeks=n), now
        return minus_months(now, n if unit == "month" else 12 * n), now
    return None


def pick(prefix: str) -> list[dict]:
    """PER_PATTERN answered questions (with gold refs) of each pattern under ``prefix``."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in committed_questions():
        if r["template"].startswith(prefix) and r["expected_status"] == "answered" and r["gold_refs"]:
            groups[r["template"].rsplit("/", 1)[0]].append(r)
    return [r for key in sorted(groups) for r in groups[key][:PER_PATTERN]]


def series_for(row: dict) -> list[tuple[datetime, float]]:
    """(time, value) of the question's item; for BP, the component its words name."""
    pid, ref_id = row["patient_id"], row["gold_refs"][0].split("/")[1]
    if row["category"] in {"value_in_window", "min_max"}:
        return _series(pid, ref_id, row["expected"][0])
    comps = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and id = %rid).component"
               ".where(code.coding.code = %c).valueQuantity.value", rid=ref_id,
               c="8480-6" if re.search(r"systolic|SBP", row["question"]) else "8462-4")
    if comps:
        return _series(pid, ref_id, float(comps[0]))
    (value,) = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and id = %rid)"
                  ".valueQuantity.value", rid=ref_id)
    return _series(pid, ref_id, float(value))


@pytest.mark.parametrize("prefix", ["value_in_window/", "min_max/", "average/", "count_measurements/"])
def test_windowed_values(prefix: str) -> None:
    rows = pick(prefix)
    assert rows
    for row in rows:
        now = _instant(row["now"])
        window = window_of(row["question"], now) or (datetime.min.replace(tzinfo=UTC), now)
        inside = sorted((t, v) for t, v in series_for(row) if window[0] <= t <= window[1])
        values = [v for _, v in inside]
        pattern = row["template"].split("/")[1]
        if prefix == "value_in_window/":
            got = values[-1] if pattern.startswith("latest") else values[0]
        elif prefix == "min_max/":
            got = max(values) if pattern.startswith("max") else min(values)
        elif prefix == "average/":
            got = fmean(values)
        else:
            got = len(values)
        assert got == pytest.approx(row["expected"][0], rel=1e-6), (row["id"], row["question"])


def test_windowed_encounter_counts() -> None:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in committed_questions():
        if r["category"] == "count_encounters":
            groups[r["template"].rsplit("/", 1)[0]].append(r)
    rows = [g[0] for _, g in sorted(groups.items())]
    assert rows
    for row in rows:
        klass = row["template"].split("/")[1].split("-")[0]
        now = _instant(row["now"])
        window = window_of(row["question"], now) or (datetime.min.replace(tzinfo=UTC), now)
        where = "resourceType = 'Encounter'" + ("" if klass == "ALL" else " and class.code = %k")
        starts = [_instant(s) for s in fp(row["patient_id"], f"Bundle.entry.resource.where({where}).period.start",
                                          k=klass)]
        assert sum(window[0] <= s <= window[1] for s in starts) == row["expected"][0], (row["id"], row["question"])


def test_window_parser() -> None:
    now = datetime(2021, 3, 15, 12, tzinfo=UTC)
    assert window_of("Max K between 3/4/2019 and June 30, 2020?", now)[0] == datetime(2019, 3, 4, tzinfo=UTC)
    assert window_of("Last K since January 2018?", now)[0] == datetime(2018, 1, 1, tzinfo=UTC)
    assert window_of("Mean wt over the past 18 months?", now)[0] == datetime(2019, 9, 15, 12, tzinfo=UTC)
    assert window_of("Last K in the past year?", now)[0] == datetime(2020, 3, 15, 12, tzinfo=UTC)
    assert window_of("Last K?", now) is None
