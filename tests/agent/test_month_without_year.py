"""A month named without a year is the latest such month up to the question's day."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.timephrases import find_window

NOW = datetime(2026, 5, 20, 12, tzinfo=UTC)


@pytest.mark.parametrize(("phrase", "start", "end"), [
    ("potassium in March", "2026-03-01", "2026-03-31"),
    ("A1c in May", "2026-05-01", "2026-05-31"),  # the current month counts (up to now)
    ("weight during December", "2025-12-01", "2025-12-31"),  # a month still to come this year: last year's
])
def test_a_month_alone_is_the_latest_such_month(phrase, start, end):
    found = find_window(phrase.lower(), NOW)
    assert found is not None
    assert found.window.start.date().isoformat() == start and found.window.end.date().isoformat() == end


@pytest.mark.parametrize("phrase", ["may I see her last A1c", "march to the lab", "last K"])
def test_month_words_that_are_not_months_make_no_window(phrase):
    found = find_window(phrase.lower(), NOW)
    assert found is None or found.window.start is None or found.window.start.month not in (3, 5)
