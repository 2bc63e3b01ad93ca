"""ICU shorthand over a MIMIC-III-shaped database: the shared parser's readings reach the SQL path unchanged.

The parser (``fhirqa/agent/backends/offline/parser.py``) reads "last HR" as the last heart rate, "<drug> given?" as a
yes/no about the drug's administrations (its orders when none are charted), "K on admit" as the first value of the
stay, "K units?" as a question about the unit; the lexicon holds the ICU drug shorthand ("hep", "vanc"). The SQL path
answers the same readings from MIMIC's tables (PRESCRIPTIONS, CHARTEVENTS without ``ERROR = 1``, LABEVENTS).
"""

from __future__ import annotations

import pytest

from fhirqa.sql import ask_sql
from fhirqa.sql.connect import connect

NOW = "2166-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def con(mimic_db):
    connection = connect(mimic_db)
    yield connection
    connection.close()


def ask(con, question, patient="10006", now=NOW):
    return ask_sql(question, patient_id=patient, now=now, connection=con)


def test_last_hr_is_the_last_heart_rate_charted_without_error(con):
    answer = ask(con, "last HR?")
    assert answer.status == "answered" and answer.answer == [104.0]
    assert [e.ref for e in answer.evidence] == ["chartevents/2"]


@pytest.mark.parametrize(("question", "cited"), [
    ("hep given?", "prescriptions/1"),  # ordered, no administration charted: the order says so
    ("was vanc given", "prescriptions/3"),
])
def test_a_drug_given_is_a_yes_no_question_citing_the_record(con, question, cited):
    answer = ask(con, question)
    assert answer.status == "answered" and answer.answer == [True]
    assert cited in {e.ref for e in answer.evidence}


def test_a_drug_never_ordered_nor_given_is_no(con):
    answer = ask(con, "did he get zosyn?")
    assert answer.status == "answered" and answer.answer == [False]


def test_the_value_on_admit_is_the_first_of_the_stay_named(con):
    answer = ask(con, "K on admit during the admission before last")
    assert answer.status == "answered" and answer.answer == [4.1]


def test_a_question_about_the_unit_answers_the_unit(con):
    answer = ask(con, "K units?")
    assert answer.status == "answered" and answer.answer == ["mEq/L"] and answer.unit == "mEq/L"
    assert "4.6" in answer.text
