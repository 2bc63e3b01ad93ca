"""Time expressions, their windows, and which entity each belongs to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fhirqa.consistency.model import Entity, NoteContext
from fhirqa.consistency.timing import attach, default_window, find_times

NOTE_TIME = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)
CTX = NoteContext(NOTE_TIME, "discharge", datetime(2024, 3, 1, 7, 0, tzinfo=UTC), datetime(2024, 3, 4, 12, 0, tzinfo=UTC))


def _window(text: str) -> tuple[datetime, datetime]:
    found = find_times(text, CTX)
    assert len(found) == 1, found
    return found[0].window


@pytest.mark.parametrize(("text", "start", "end"), [
    ("K 4.2 at 0800.", "2024-03-04T07:40", "2024-03-04T08:20"),
    ("K 4.2 @ 08:00", "2024-03-04T07:40", "2024-03-04T08:20"),
    ("K 4.2 at 8:00am", "2024-03-04T07:40", "2024-03-04T08:20"),
    ("0355h BP 120/80", "2024-03-04T03:35", "2024-03-04T04:15"),
    ("K 4.2 on 3/2/2024", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on 03/02/24", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on 3-2-2024", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 (3/2)", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on Mar 2, 2024", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on 2 Mar 2024", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on HD #2", "2024-03-02T00:00", "2024-03-02T23:59"),
    ("K 4.2 on day 3 of the admission", "2024-03-03T00:00", "2024-03-03T23:59"),
    ("K 4.2 yesterday", "2024-03-03T00:00", "2024-03-03T23:59"),
    ("K 4.2 this AM", "2024-03-04T00:00", "2024-03-04T23:59"),
    ("K 4.2 on admission", "2024-02-29T19:00", "2024-03-02T07:00"),
    ("K 4.2 at discharge", "2024-03-03T12:00", "2024-03-05T00:00"),
    ("K 4.2 3 days ago", "2024-02-29T00:00", "2024-03-02T23:59"),
])
def test_windows(text, start, end):
    lo, hi = _window(text)
    assert lo.strftime("%Y-%m-%dT%H:%M") == start
    assert hi.strftime("%Y-%m-%dT%H:%M") == end


def test_values_that_look_like_times_or_dates_are_not():
    assert find_times("BP 120/80, pain 3/10, Plt 1000", CTX, [(3, 9), (16, 20), (26, 30)]) == []


def test_default_windows_by_note_kind():
    assert default_window(CTX).start == CTX.admission - timedelta(hours=12)
    progress = NoteContext(NOTE_TIME, "progress")
    window = default_window(progress)
    assert (window.start.day, window.end.day) == (3, 5)


def _ent(text: str, name: str) -> Entity:
    at = text.index(name)
    return Entity("T1", "lab", name, (at, at + len(name)), (at, at + len(name)))


def test_own_expression_prefix_and_block_heading():
    text = "Labs (3/1/2024): K 4.2, Na 139\nCXR on 3/2/2024. Cr 1.1\nLabs on admission:\nWBC 10.2\n\nGlu 102"
    ents = [_ent(text, n) for n in ("K 4.2", "Na 139", "CXR", "Cr 1.1", "WBC 10.2", "Glu 102")]
    attach(text, ents, CTX)
    k, na, cxr, cr, wbc, glu = ents
    assert k.time.text == na.time.text == "3/1/2024" and k.time.kind == "explicit"  # the line's heading
    assert cxr.time.text == "3/2/2024"  # its own
    assert cr.time.kind == "default"  # the date belongs to the CXR, not to the next sentence
    assert wbc.time.text == "on admission" and wbc.time.kind == "narrative"  # the block heading above
    assert glu.time.kind == "default"  # a blank line ends the block


@pytest.mark.parametrize("phrase", ["3 months ago", "3 months back", "3 months prior", "3 months earlier"])
def test_n_units_back_or_prior_is_the_same_as_ago(phrase):
    ctx = NoteContext(datetime(2024, 6, 15, 12, tzinfo=UTC), "progress")
    (found,) = find_times(f"Labs {phrase}: K 4.1", ctx)
    middle = datetime(2024, 3, 15, 12, tzinfo=UTC)
    assert found.kind == "narrative" and found.window[0] < middle < found.window[1]


def test_this_am_with_dots_is_today():
    ctx = NoteContext(datetime(2024, 6, 15, 12, tzinfo=UTC), "progress")
    (found,) = find_times("Hgb 15.2 g/dL this a.m. - stable", ctx)
    assert found.text == "this a.m." and found.window[0].date() == found.window[1].date() == ctx.note_time.date()


def test_a_date_in_a_parenthesis_with_its_own_value_is_not_the_outer_values():
    text = "Labs today: A1c 7.0 (prior 7.3 on 8/2/2023); K 4.1 (drawn 3/2/2024)."
    ents = [_ent(text, n) for n in ("A1c 7.0", "K 4.1")]
    attach(text, ents, CTX)
    a1c, k = ents
    assert a1c.time.text == "today"  # the line's heading; "on 8/2/2023" dates the prior 7.3, not today's 7.0
    assert k.time.text == "3/2/2024"  # a parenthesis that only dates the value keeps it
