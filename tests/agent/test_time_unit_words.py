"""An abbreviated time unit is a unit only as a word of its own: joined to more letters by "&", "/" or "-" it is
part of another word ("last H&P" is the last history and physical, not the last hour; "last d/c summary" a discharge;
"past D-dimer" a lab), while "last 24h", "past 2 d" and "3 h ago" stay windows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.parser import parse

NOW = datetime(2165, 6, 9, 12, tzinfo=UTC)


@pytest.mark.parametrize("question", ["last H&P", "what did the last H&P say?", "last h&p?", "last d/c summary date",
                                      "past D-dimer?", "last h/o stroke"])
def test_a_unit_letter_joined_to_a_word_is_no_window(question):
    assert parse(question, NOW).window is None


@pytest.mark.parametrize(("question", "label"), [("K in the last 24h", "in the last 24 hours"),
                                                 ("K past 2 d", "in the last 2 days"), ("BP 3 h ago", "3 h ago"),
                                                 ("past year's A1c", "in the last 1 year")])
def test_a_unit_standing_alone_is_still_a_window(question, label):
    assert parse(question, NOW).window.label == label


@pytest.mark.parametrize("question", ["new meds since admission?", "meds started since admit?",
                                      "what was started this admission"])
def test_a_start_word_before_the_current_stay_lists_what_was_started_in_it(question):
    pq = parse(question, NOW)
    assert (pq.intent, pq.aggregate, pq.window.anchor) == ("list_items", "started", "admission")
