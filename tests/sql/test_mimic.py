"""Questions on a MIMIC-III-shaped SQLite database: labs, charted vitals, prescriptions, diagnoses, admissions."""

from __future__ import annotations

import pytest

from fhirqa.sql import ask_sql
from fhirqa.sql.connect import connect
from fhirqa.sql.schema import discover
from tests.sql.mimic_data import ROWS

NOW = "2166-01-01T00:00:00Z"
OTHER_ROWS = {f"labevents/{r[0]}" for r in ROWS["LABEVENTS"] if r[1] == 10011}


@pytest.fixture(scope="module")
def con(mimic_db):
    connection = connect(mimic_db)
    yield connection
    connection.close()


def ask(con, question, patient="10006", now=NOW):
    return ask_sql(question, patient_id=patient, now=now, connection=con)


def test_the_schema_is_detected_as_mimic_iii(con):
    schema = discover(con)
    assert schema.kind == "mimic-iii" and schema.label == "MIMIC-III"
    assert schema.patient_key("labevents") == "subject_id" and schema.is_dictionary("d_labitems")
    assert schema.row_key("labevents") == "row_id"


@pytest.mark.parametrize(("question", "expected", "refs"), [
    ("What was his last potassium?", [4.6], ["labevents/3"]),
    ("What was his first creatinine?", [2.3], ["labevents/4"]),
    ("What was his highest creatinine?", [2.3], ["labevents/4"]),
    ("How many potassium measurements does he have?", [3], ["labevents/1", "labevents/2", "labevents/3"]),
    ("Was his potassium ever above 5.0?", [True], ["labevents/2"]),
    ("Was his potassium ever above 6.0?", [False], ["labevents/2"]),
    ("What was his last heart rate?", [104.0], ["chartevents/2"]),
])
def test_lab_and_chart_questions(con, question, expected, refs):
    answer = ask(con, question)
    assert answer.status == "answered" and answer.answer == expected
    assert [e.ref for e in answer.evidence] == refs
    assert not {e.ref for e in answer.evidence} & OTHER_ROWS


def test_lab_evidence_names_table_row_column_value_and_time(con):
    answer = ask(con, "What was his last potassium?")
    (evidence,) = answer.evidence
    assert evidence.field == "labevents.valuenum" and evidence.value == 4.6 and evidence.unit == "mEq/L"
    assert evidence.time.startswith("2164-10-25T04:00") and evidence.label == "Potassium"
    assert answer.unit == "mEq/L" and any("labevents" in s["sql"] for s in answer.trace["sql"])


def test_a_charted_error_is_not_a_value(con):
    answer = ask(con, "What was his highest heart rate?")
    assert answer.answer == [104.0]  # the 250 bpm row is marked ERROR = 1


def test_prescription_questions(con):
    first = ask(con, "When was heparin first prescribed?")
    assert first.answer[0].startswith("2164-10-23") and first.evidence[0].ref == "prescriptions/1"
    assert ask(con, "How many vancomycin prescriptions does he have?").answer == [2]
    assert ask(con, "Is he currently taking metoprolol?").answer == [True]
    assert ask(con, "Is he still taking heparin?").answer == [False]
    assert ask(con, "What medications is he currently on?").answer == ["Metoprolol Tartrate"]
    assert ask(con, "# active meds?").answer == [1]  # a count of the same list, not the list
    assert ask(con, "how many meds is he currently on?").answer == [1]
    assert ask(con, "how many meds is he currently on?", now="2100-01-01T00:00:00Z").answer == [0]  # before any
    assert ask(con, "Has he ever been prescribed lorazepam?").answer == [False]  # only the other patient was


def test_administered_totals_per_day(con):
    answer = ask(con, "What was the total daily insulin dose?")
    assert answer.answer == [10.0] and answer.unit == "U"
    assert {e.ref for e in answer.evidence} == {"inputevents_cv/1", "inputevents_cv/2"}


def test_diagnosis_questions(con):
    htn = ask(con, "Has he been diagnosed with hypertension?")
    assert htn.answer == [True] and htn.evidence[0].ref == "diagnoses_icd/2"
    assert ask(con, "Does he have diabetes?").answer == [True]
    when = ask(con, "When was he first diagnosed with diabetes?")
    assert when.answer[0].startswith("2165-02-01")  # the admission's time
    assert ask(con, "Has he had acute kidney failure?").answer == [False]  # the other patient's diagnosis


def test_admissions_demographics_and_procedures(con):
    assert ask(con, "How many hospital admissions has he had?").answer == [2]
    assert ask(con, "How many ER visits has he had?").answer == [1]
    assert ask(con, "What is his gender?").answer == ["male"]
    assert ask(con, "How old is he?").answer == [71]
    assert ask(con, "Has he had a venous catheterization?").answer == [True]
    assert ask(con, "Is he deceased?").answer == [False]
    assert ask(con, "Is she deceased?", patient="10011").answer == [True]


def test_the_record_is_read_as_of_now(con):
    # patient 10011 has a potassium in 2170; asked in 2130 the latest is the 2126 value
    assert ask(con, "What was her last potassium?", patient="10011", now="2130-01-01T00:00:00Z").answer == [6.9]
    assert ask(con, "What was her last potassium?", patient="10011", now="2171-01-01T00:00:00Z").answer == [7.2]


def test_missing_items_and_patients(con):
    assert ask(con, "What was his last PSA?").status == "no-data"
    unknown = ask(con, "What was his last potassium?", patient="999")
    assert unknown.status == "error" and "No patient" in unknown.text
