"""The offline parser: what a question asks for, about what, and when, in many phrasings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.timephrases import find_window

NOW = datetime(2020, 5, 17, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "intent", "entity"),
    [
        ("What was my last A1c?", "value", "a1c"),
        ("Most recent potassium level for the patient?", "value", "potassium"),
        ("Did her glucose ever go above 180?", "threshold", "glucose"),
        ("What has his Hct averaged across all readings?", "aggregate", "hct"),
        ("Highest LDL in 2018?", "aggregate", "ldl"),
        ("How many times was hba1c measured", "count", "hba1c"),
        ("When was metformin first prescribed?", "time_of", "metformin"),
        ("How many days since her last HbA1c?", "time_since", "hba1c"),
        ("By how much did my SBP go up or down in 2019?", "change", "sbp"),
        ("Is the weight trending up or down over the last 3 years?", "trend", "weight"),
        ("What is the total daily dose of lisinopril?", "daily_dose", "lisinopril"),
        ("Has the patient ever been diagnosed with hypertension?", "exists", "hypertension"),
        ("Is she still taking amoxicillin?", "active_check", "amoxicillin"),
        ("Which conditions were active on 2015-06-01?", "active_list", ""),
        ("Current med list?", "active_list", ""),
        ("How old is the patient?", "age", None),
        ("At what age was she diagnosed with asthma?", "age_at", None),
        ("What is the patient's date of birth?", "demographic", None),
    ],
)
def test_intent_and_entity(question, intent, entity):
    parsed = parse(question, NOW)
    assert parsed.intent == intent
    if entity is not None:
        assert parsed.entity == entity


def test_first_and_last_positions():
    assert parse("What was the first A1c?", NOW).position == "first"
    assert parse("When did he start amoxicillin?", NOW).position == "first"
    assert parse("latest A1c", NOW).position == "last"


def test_after_a_drug_keeps_the_drug_apart_from_the_lab():
    parsed = parse("What was the first A1c after starting metformin?", NOW)
    assert (parsed.intent, parsed.entity, parsed.drug, parsed.position) == ("after_drug", "a1c", "metformin", "first")


def test_threshold_comparison_and_units():
    parsed = parse("Was the K ever below 3.5 in the last 2 years?", NOW)
    assert (parsed.comparison.op, parsed.comparison.value) == ("<", 3.5)
    assert parsed.window.start == datetime(2018, 5, 17, 12, tzinfo=UTC)
    daily = parse("Did vancomycin ever exceed 2 g per day?", NOW)
    assert daily.intent == "daily_dose" and (daily.comparison.value, daily.comparison.unit) == (2.0, "g")


def test_encounter_classes_from_everyday_words():
    assert parse("How many ER visits since 2018?", NOW).encounter_class == "EMER"
    assert parse("Number of hospitalizations in the past 5 years", NOW).encounter_class == "IMP"


def test_the_patients_own_name_is_not_the_entity():
    parsed = parse("What was Trey's first plt after starting Plavix?", NOW, names=("Trey", "Smith"))
    assert parsed.entity == "plt" and parsed.drug == "plavix"


def test_patient_lookup_reads_name_and_birth_date():
    parsed = parse("What is the patient ID for María del Carmen Abreu, born January 1, 1986?", NOW)
    assert (parsed.intent, parsed.lookup_name, parsed.lookup_birth) == ("lookup", "María del Carmen Abreu", "1986-01-01")


@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [
        ("in the last 6 months", datetime(2019, 11, 17, 12, tzinfo=UTC), NOW),
        ("in 2017", datetime(2017, 1, 1, tzinfo=UTC), datetime(2017, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
        ("between 1/2/2016 and 2017-06-30", datetime(2016, 1, 2, tzinfo=UTC),
         datetime(2017, 6, 30, 23, 59, 59, 999999, tzinfo=UTC)),
        ("since march 2018", datetime(2018, 3, 1, tzinfo=UTC), NOW),
        ("before 2019-01-01", None, datetime(2018, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
        ("on 3 may 2019", datetime(2019, 5, 3, tzinfo=UTC), datetime(2019, 5, 3, 23, 59, 59, 999999, tzinfo=UTC)),
    ],
)
def test_time_phrases_resolve_against_now(phrase, start, end):
    window = find_window(phrase, NOW).window
    assert (window.start, window.end) == (start, end)


def test_months_back_are_calendar_months_clamped_to_the_month_end():
    window = find_window("in the past month", datetime(2020, 3, 31, tzinfo=UTC)).window
    assert window.start == datetime(2020, 2, 29, tzinfo=UTC)
