"""Question frames from lay and pharmacist wording: how the parser reads them (no record needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.parser import parse

NOW = datetime(2021, 3, 23, 12, tzinfo=UTC)


@pytest.mark.parametrize("question, aggregate, entity", [
    ("How low did her potassium get in 2019?", "min", "potassium"),
    ("how high did his A1c go last year?", "max", "a1c"),
    ("How low has her sodium been?", "min", "sodium"),
])
def test_how_low_or_high_did_it_get_asks_for_the_extreme(question, aggregate, entity):
    pq = parse(question, NOW)
    assert (pq.intent, pq.aggregate, pq.entity.lower()) == ("aggregate", aggregate, entity)


def test_how_high_is_it_is_still_the_value_itself():
    assert parse("how high is his A1c?", NOW).aggregate is None


def test_back_in_a_year_is_a_window_word_not_part_of_the_item():
    pq = parse("any high blood pressure back in 2010?", NOW)
    assert pq.entity == "high blood pressure" and pq.window is not None
    assert parse("back pain ever?", NOW).entity == "back pain"


def test_top_and_bottom_blood_pressure_numbers_are_the_components_not_a_maximum():
    first = parse("What was the first top blood pressure number ever recorded for me?", NOW)
    assert (first.intent, first.position, first.aggregate) == ("value", "first", None)
    assert parse("How many times has my bottom blood pressure number been checked?", NOW).intent == "count"


def test_months_since_the_last_event_counts_from_the_last_even_with_has_it_been():
    pq = parse("How many months has it been since my last flu shot?", NOW)
    assert (pq.intent, pq.position, pq.time_unit) == ("time_since", "last", "months")
    assert parse("how many yrs has she had HLD?", NOW).position == "first"  # a duration: since the first onset


@pytest.mark.parametrize("question, intent, kind", [
    ("Which of my conditions are still active?", "active_list", "condition"),
    ("which meds is she still taking?", "active_list", "medication"),
    ("is she still on metformin?", "active_check", "medication"),
    ("Does she still have asthma?", "active_check", "condition"),
])
def test_which_of_asks_for_the_list_and_is_or_does_asks_whether(question, intent, kind):
    pq = parse(question, NOW)
    assert (pq.intent, pq.list_kind) == (intent, kind)


@pytest.mark.parametrize("question, name, birth", [
    ("Pull up the chart for Charita Adams, DOB September 14, 2001.", "Charita Adams", "2001-09-14"),
    ("I'm Trey Berge, born Jan 13, 1913. What's my patient ID?", "Trey Berge", "1913-01-13"),
    ("Open the record for Ana Lopez, born 3/4/1950", "Ana Lopez", "1950-03-04"),
])
def test_chart_requests_and_first_person_introductions_are_patient_lookups(question, name, birth):
    pq = parse(question, NOW)
    assert (pq.intent, pq.lookup_name, pq.lookup_birth) == ("lookup", name, birth)


def test_a_question_about_her_chart_is_not_a_lookup():
    assert parse("what was the last A1c in her chart?", NOW).intent != "lookup"
