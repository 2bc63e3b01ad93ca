"""How the offline SQL writer reads OMOP questions: results vs drugs, the vocabulary's domains, years of
date-shifted databases, combined visit concepts, encounter words cut short (a small OMOP file, MIMIC-like years)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql

NOW = "2158-06-30T12:00:00Z"
TABLES = {
    "person": "person_id INTEGER PRIMARY KEY, gender_concept_id INTEGER, year_of_birth INTEGER, person_source_value TEXT",
    "concept": "concept_id INTEGER PRIMARY KEY, concept_name TEXT, domain_id TEXT, vocabulary_id TEXT, "
               "concept_class_id TEXT, concept_code TEXT",
    "visit_occurrence": "visit_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, visit_concept_id INTEGER, "
                        "visit_start_date TEXT, visit_start_datetime TEXT, visit_end_date TEXT, visit_source_value TEXT",
    "condition_occurrence": "condition_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, condition_concept_id INTEGER, "
                            "condition_start_date TEXT, condition_end_date TEXT, condition_source_value TEXT",
    "drug_exposure": "drug_exposure_id INTEGER PRIMARY KEY, person_id INTEGER, drug_concept_id INTEGER, "
                     "drug_exposure_start_date TEXT, drug_exposure_end_date TEXT, drug_type_concept_id INTEGER, "
                     "drug_source_value TEXT",
    "procedure_occurrence": "procedure_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, procedure_concept_id INTEGER, "
                            "procedure_date TEXT, procedure_source_value TEXT",
    "measurement": "measurement_id INTEGER PRIMARY KEY, person_id INTEGER, measurement_concept_id INTEGER, "
                   "measurement_date TEXT, value_as_number REAL, unit_source_value TEXT, measurement_source_value TEXT",
}
ROWS = {
    "person": [(1, 8507, 2090, "p1")],
    "concept": [(2001, "Magnesium Sulfate 50 mL Bag", "Drug", "MIMIC", "Drug", "mg-bag"),
                (2002, "HYDROmorphone (Dilaudid) 2 mg Tab", "Drug", "MIMIC", "Drug", "hm-tab"),
                (2003, "Atrial fibrillation", "Condition", "SNOMED", "Clinical Finding", "49436004"),
                (2004, "Medication Reconciliation", "Procedure", "SNOMED", "Procedure", "430193006")],
    "visit_occurrence": [(1, 1, 262, "2157-02-01", None, "2157-02-05", "urgent"), (2, 1, 9201, "2157-08-01", None, "2157-08-03", "elective"),
                         (3, 1, 9202, "2156-01-01", None, "2156-01-01", "clinic"), (4, 1, 9203, "2158-01-01", None, "2158-01-01", "ed")],
    "condition_occurrence": [(1, 1, 2003, "2150-01-10", "2150-01-12", "AF")],
    "drug_exposure": [(1, 1, 2001, "2150-01-10", "2150-01-11", 32838, "mg"), (2, 1, 2002, "2151-03-01", "2151-03-02", 32838, "hm")],
    "procedure_occurrence": [(1, 1, 2004, "2156-05-05", "medrec")],
    "measurement": [],
}


@pytest.fixture(scope="module")
def omop(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("omop-shifted") / "shifted.sqlite"
    con = sqlite3.connect(path)
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        for row in ROWS[table]:
            con.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
    con.commit()
    con.close()
    return path


def ask(omop: Path, question: str, now: str = NOW):
    return ask_sql(question, patient_id="1", now=now, connection=omop)


def test_a_lab_value_question_never_answers_from_a_drug_named_like_the_lab(omop):
    for question in ("latest magnesium value", "Mg result?", "highest magnesium?"):
        answer = ask(omop, question)
        assert answer.status == "no-data", (question, answer.answer, answer.text)


def test_existence_also_searches_the_domain_the_vocabulary_files_the_name_in(omop):
    # "hx of" points at conditions; CONCEPT says hydromorphone is a Drug and medication reconciliation a Procedure
    assert ask(omop, "hx of hydromorphone use?").answer == [True]
    assert ask(omop, "any medication reconciliation on record?").answer == [True]
    assert ask(omop, "hx of atrial fibrillation?").answer == [True]
    assert ask(omop, "hx of warfarin use?").answer == [False]


def test_a_calendar_year_window_works_in_any_year(omop):
    assert ask(omop, "count of visits during 2157").answer == [2]
    assert ask(omop, "how many visits in 2156?").answer == [1]
    assert ask(omop, "how many visits between 1/1/2157 and 3/1/2157?").answer == [1]
    assert ask(omop, "how many visits?").answer == [4]


def test_a_combined_er_and_inpatient_visit_is_of_both_classes(omop):
    assert ask(omop, "how many admissions?").answer == [2]
    assert ask(omop, "how many ER visits?").answer == [2]


def test_an_encounter_word_cut_short_names_its_class(omop):
    answer = ask(omop, "How many days since his last admit?", now="2157-08-11T12:00:00Z")
    assert answer.answer == [10], answer.text
    assert ask(omop, "last admit - when?", now="2157-08-11T12:00:00Z").answer[0].startswith("2157-08-01")
