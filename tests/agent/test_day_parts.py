"""Parts of the day and shifts as windows: "this morning", "tonight", "this shift", "since midnight", "since 7".

A ward question names a span of the clock, not of the calendar. The spans and their clock bounds are data
(``lexicon/day_parts.json``): morning (AM) 00:00–12:00, so that the early lab draw is this morning's, afternoon 12:00–18:00, PM 12:00–24:00, evening 18:00–24:00,
tonight 19:00–07:00, the day shift 07:00–19:00 and the night shift 19:00–07:00. Each phrase is the **latest such
span begun by now, cut at now**: "this afternoon" asked at 15:00 is 12:00 to 15:00 today, asked at 10:30 it is the
whole of yesterday's afternoon. Bounds are on the record's clock (``now`` in the record's offset). Meanings:
docs/questions.md, "Parts of the day and shifts".
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.agent.tools.localtime import is_floating, wall

CDT = timezone(timedelta(hours=-5))


def at(text: str) -> datetime:
    """A time on the record's clock (−05:00)."""
    return datetime.fromisoformat(text).replace(tzinfo=CDT)


def bounds(phrase: str, now: datetime) -> tuple[str, str, str]:
    """The window of ``phrase`` as wall-clock ISO text (start, end) and its label."""
    found = find_window(phrase.lower(), now)
    assert found is not None, phrase
    w = found.window
    assert w.start is not None and w.end is not None
    return wall(w.start).isoformat(), wall(w.end).isoformat(), w.label


MID_MORNING = at("2025-06-20T10:30:00")
LATE_EVENING = at("2025-06-20T21:00:00")
SMALL_HOURS = at("2025-06-20T03:00:00")
LAST = ".999999"  # a span that is over ends just before its end clock: 12:00 is the afternoon's


@pytest.mark.parametrize(("phrase", "now", "start", "end"), [
    # a part under way: from its start to now
    ("vitals this morning", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("labs this AM", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("glucose this a.m.", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("AM labs?", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("AM K", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("morning Cr?", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("vitals this morning", SMALL_HOURS, "2025-06-20T00:00:00", "2025-06-20T03:00:00"),  # the morning has begun
    ("HR this evening", LATE_EVENING, "2025-06-20T18:00:00", "2025-06-20T21:00:00"),
    ("max temp tonight", LATE_EVENING, "2025-06-20T19:00:00", "2025-06-20T21:00:00"),
    ("max temp tonight", SMALL_HOURS, "2025-06-19T19:00:00", "2025-06-20T03:00:00"),
    # a part not yet begun today: the latest one that has happened, whole
    ("UOP this afternoon", at("2025-06-20T15:00:00"), "2025-06-20T12:00:00", "2025-06-20T15:00:00"),
    ("UOP this afternoon", MID_MORNING, "2025-06-19T12:00:00", "2025-06-19T17:59:59" + LAST),
    ("K this pm", MID_MORNING, "2025-06-19T12:00:00", "2025-06-19T23:59:59" + LAST),
    ("HR this evening", MID_MORNING, "2025-06-19T18:00:00", "2025-06-19T23:59:59" + LAST),
    ("BP yesterday morning", MID_MORNING, "2025-06-19T00:00:00", "2025-06-19T11:59:59" + LAST),
    ("temp yesterday evening", MID_MORNING, "2025-06-19T18:00:00", "2025-06-19T23:59:59" + LAST),
    # shifts: "this shift" contains now; "last shift" is the one before it, whole
    ("how much insulin this shift?", MID_MORNING, "2025-06-20T07:00:00", "2025-06-20T10:30:00"),
    ("how much insulin this shift?", LATE_EVENING, "2025-06-20T19:00:00", "2025-06-20T21:00:00"),
    ("how much insulin this shift?", SMALL_HOURS, "2025-06-19T19:00:00", "2025-06-20T03:00:00"),
    ("any PRNs last shift?", MID_MORNING, "2025-06-19T19:00:00", "2025-06-20T06:59:59" + LAST),
    ("SpO2 during the night shift", MID_MORNING, "2025-06-19T19:00:00", "2025-06-20T06:59:59" + LAST),
    ("BP on day shift", MID_MORNING, "2025-06-20T07:00:00", "2025-06-20T10:30:00"),
    ("falls last night shift", LATE_EVENING, "2025-06-19T19:00:00", "2025-06-20T06:59:59" + LAST),
    # from a clock time
    ("BP since midnight", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("K earlier today", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    ("HR since 7", MID_MORNING, "2025-06-20T07:00:00", "2025-06-20T10:30:00"),
    ("HR since 7", LATE_EVENING, "2025-06-20T19:00:00", "2025-06-20T21:00:00"),
    ("HR since 7", SMALL_HOURS, "2025-06-19T19:00:00", "2025-06-20T03:00:00"),
    ("HR since 07:30", MID_MORNING, "2025-06-20T07:30:00", "2025-06-20T10:30:00"),
    ("HR since 0730", MID_MORNING, "2025-06-20T07:30:00", "2025-06-20T10:30:00"),
    ("HR since 1900h", MID_MORNING, "2025-06-19T19:00:00", "2025-06-20T10:30:00"),
    ("temp since 2pm", MID_MORNING, "2025-06-19T14:00:00", "2025-06-20T10:30:00"),
    ("temp since 7a", LATE_EVENING, "2025-06-20T07:00:00", "2025-06-20T21:00:00"),
    ("UOP since 8 this morning", LATE_EVENING, "2025-06-20T08:00:00", "2025-06-20T21:00:00"),
    ("what happened in the last few hours", MID_MORNING, "2025-06-20T07:30:00", "2025-06-20T10:30:00"),
    ("HR since noon", MID_MORNING, "2025-06-19T12:00:00", "2025-06-20T10:30:00"),
    ("HR since 11 last night", MID_MORNING, "2025-06-19T23:00:00", "2025-06-20T10:30:00"),
    ("HR since 2 overnight", MID_MORNING, "2025-06-20T02:00:00", "2025-06-20T10:30:00"),
    # "since" a part of the day runs from its start to now
    ("K since yesterday", MID_MORNING, "2025-06-19T00:00:00", "2025-06-20T10:30:00"),
    ("HR since yesterday evening", MID_MORNING, "2025-06-19T18:00:00", "2025-06-20T10:30:00"),
    ("HR since this morning", MID_MORNING, "2025-06-20T00:00:00", "2025-06-20T10:30:00"),
    # a span of the clock: the latest such start before now, to the first such end after it, cut at now
    ("UOP from 7:00 to 11", MID_MORNING, "2025-06-20T07:00:00", "2025-06-20T10:30:00"),
    ("HR between 2 and 4 am", MID_MORNING, "2025-06-20T02:00:00", "2025-06-20T04:00:00"),
    ("HR from 7pm to 2", MID_MORNING, "2025-06-19T19:00:00", "2025-06-20T02:00:00"),
    ("HR between 0700 and 0900", MID_MORNING, "2025-06-20T07:00:00", "2025-06-20T09:00:00"),
])
def test_a_part_of_the_day_is_the_latest_such_span_begun_by_now(phrase: str, now: datetime, start: str, end: str) -> None:
    got_start, got_end, _ = bounds(phrase, now)
    assert (got_start, got_end) == (start, end)


def test_the_window_says_its_clock_bounds_so_the_assumption_is_visible() -> None:
    assert bounds("vitals this morning", MID_MORNING)[2] == "this morning (2025-06-20 00:00–12:00, up to now)"
    assert bounds("insulin this shift", MID_MORNING)[2] == "this shift (the day shift, 2025-06-20 07:00–19:00, up to now)"
    assert bounds("HR since 7", LATE_EVENING)[2] == "since 19:00 (2025-06-20 19:00, up to now)"
    assert "19:00 to 2025-06-20 07:00" in bounds("SpO2 on night shift", MID_MORNING)[2]
    found = find_window("hr this morning", MID_MORNING)
    assert found is not None and found.window.said


def test_a_part_of_the_day_starts_on_the_records_clock_and_ends_at_the_instant_now() -> None:
    found = find_window("k this morning", MID_MORNING)
    assert found is not None
    assert is_floating(found.window.start)  # 06:00 on each value's own clock
    assert found.window.end == MID_MORNING  # an instant


@pytest.mark.parametrize("phrase", [
    "K since 2019",  # a year
    "K since 7/1",  # a day
    "HR since 1900",  # four digits without a leading 0 or an h: a year
    "no fever for 7 days since 7 days ago",
    "what is her morning dose of metoprolol",  # a scheduled dose, not a window
    "did she get 7 mg since",
    "I am worried about her K",
    "am i due for a flu shot",  # the verb, not the morning
    "morning glucose over the past week",  # another window named: "morning" says which values, the week is the window
    "any K between 3 and 5",  # a range of values: neither end is written as a clock time
    "did K go from 3 to 5",
    "K since 3 to 5",
])
def test_words_that_are_not_a_part_of_the_day_are_no_day_part_window(phrase: str) -> None:
    found = find_window(phrase.lower(), MID_MORNING)
    assert found is None or found.kind != "day_part"


def test_last_night_shift_is_a_shift_and_last_night_stays_overnight() -> None:
    shift = find_window("falls last night shift", LATE_EVENING)
    night = find_window("febrile last night", LATE_EVENING)
    assert shift is not None and shift.kind == "day_part"
    assert night is not None and night.kind == "overnight"


def test_a_written_date_names_the_day_so_no_part_of_today_is_read() -> None:
    found = find_window("febrile this morning per the 6/12 progress note", MID_MORNING)
    assert found is not None and found.kind != "day_part"


PHRASES = ["this morning", "this am", "am labs", "this afternoon", "this pm", "this evening", "tonight",
           "yesterday morning", "yesterday evening", "this shift", "last shift", "on day shift", "the night shift",
           "last night shift", "since midnight", "earlier today", "since 7", "since 12", "since 07:30", "since 2pm",
           "since 11 pm", "since 0700", "since 9 tonight", "the last few hours", "in the past several hours",
           "since noon", "since 11 last night", "since yesterday", "since yesterday evening", "since this afternoon",
           "from 7:00 to 11", "between 2 and 4 am", "from 7pm to 2", "between 2300 h and 0100 h"]


@given(moment=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2035, 12, 31)),
       offset=st.integers(min_value=-12 * 60, max_value=14 * 60), phrase=st.sampled_from(PHRASES))
def test_for_any_now_a_part_of_the_day_ends_at_or_before_now_and_has_positive_length(
        moment: datetime, offset: int, phrase: str) -> None:
    now = moment.replace(tzinfo=timezone(timedelta(minutes=offset)))
    found = find_window(f"hr {phrase}", now)
    assert found is not None, phrase
    start, end = found.window.start, found.window.end
    assert start is not None and end is not None
    # both bounds read on the record's clock, which is now's own offset here
    assert wall(end) <= wall(now)
    assert wall(start) < wall(end)
