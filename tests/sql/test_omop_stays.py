"""The same stay mechanisms over OMOP CDM: ICU stays are visit_detail rows of an ICU concept, an admission's
diagnoses are the condition_occurrence rows of its visit, the principal one marked by a primary status concept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql

NOW = "2023-05-01T12:00:00Z"
TABLES = {
    "person": "person_id INTEGER PRIMARY KEY, gender_concept_id INTEGER, year_of_birth INTEGER, birth_datetime TEXT, "
              "person_source_value TEXT",
    "concept": "concept_id INTEGER PRIMARY KEY, concept_name TEXT, domain_id TEXT, vocabulary_id TEXT, "
               "concept_class_id TEXT, concept_code TEXT",
    "visit_occurrence": "visit_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, visit_concept_id INTEGER, "
                        "visit_start_datetime TEXT, visit_end_datetime TEXT, visit_source_concept_id INTEGER",
    "visit_detail": "visit_detail_id INTEGER PRIMARY KEY, person_id INTEGER, visit_detail_concept_id INTEGER, "
                    "visit_detail_start_datetime TEXT, visit_detail_end_datetime TEXT, visit_occurrence_id INTEGER",
    "condition_occurrence": "condition_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, condition_concept_id INTEGER, "
                            "condition_start_date TEXT, condition_status_concept_id INTEGER, visit_occurrence_id INTEGER",
    "drug_exposure": "drug_exposure_id INTEGER PRIMARY KEY, person_id INTEGER, drug_concept_id INTEGER, "
                     "drug_exposure_start_datetime TEXT, drug_type_concept_id INTEGER, quantity REAL, stop_reason TEXT, "
                     "dose_unit_source_value TEXT",
    "measurement": "measurement_id INTEGER PRIMARY KEY, person_id INTEGER, measurement_concept_id INTEGER, "
                   "measurement_datetime TEXT, value_as_number REAL, unit_source_value TEXT",
}
ROWS = {
    "person": [(1, 8532, 1960, "1960-02-02", "p1")],
    "concept": [(3027018, "Heart rate", "Measurement", "LOINC", "Clinical Observation", "8867-4"),
                (3023103, "Potassium [Moles/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2823-3"),
                (4229440, "Chronic congestive heart failure", "Condition", "SNOMED", "Clinical Finding", "48447003"),
                (313217, "Atrial fibrillation", "Condition", "SNOMED", "Clinical Finding", "49436004"),
                (132797, "Sepsis", "Condition", "SNOMED", "Clinical Finding", "91302008"),
                (4085799, "Encounter for check up", "Visit", "SNOMED", "Procedure", "185349003"),
                (4236873, "Outpatient procedure", "Visit", "SNOMED", "Procedure", "371883000"),
                (1367571, "heparin 5000 UNT/ML Injectable Solution", "Drug", "RxNorm", "Clinical Drug", "1361615"),
                (1707687, "vancomycin 1000 MG Injection", "Drug", "RxNorm", "Clinical Drug", "1807513"),
                (3049187, "Glomerular filtration rate/1.73 sq M.predicted by Creatinine-based formula (CKD-EPI 2021)",
                 "Measurement", "LOINC", "Lab Test", "98979-8")],
    "visit_occurrence": [(10, 1, 9201, "2022-01-03 10:00:00", "2022-01-09 10:00:00", None),
                         (11, 1, 9201, "2023-03-01 10:00:00", "2023-03-08 10:00:00", None),
                         (12, 1, 9202, "2021-05-05 09:00:00", "2021-05-05 10:00:00", 4085799),
                         (13, 1, 9202, "2021-09-09 09:00:00", "2021-09-09 10:00:00", 4236873)],
    "visit_detail": [(100, 1, 32037, "2022-01-03 12:00:00", "2022-01-05 12:00:00", 10),
                     (101, 1, 32037, "2023-03-02 00:00:00", "2023-03-03 00:00:00", 11),
                     (102, 1, 8863, "2023-03-03 00:00:00", "2023-03-08 10:00:00", 11)],  # a ward, not an ICU
    "condition_occurrence": [(1, 1, 132797, "2022-01-03", 32902, 10),
                             (2, 1, 313217, "2023-03-01", 32908, 11),
                             (3, 1, 4229440, "2023-03-01", 32902, 11)],
    # administrations (type 32818): on 2023-03-02 two heparin doses were given and a third was not ('not-done')
    "drug_exposure": [(1, 1, 1367571, "2023-03-02 06:00:00", 32818, 5000.0, "completed", "[U]"),
                      (2, 1, 1367571, "2023-03-02 14:00:00", 32818, 5000.0, "completed", "[U]"),
                      (3, 1, 1367571, "2023-03-02 22:00:00", 32818, 5000.0, "not-done", "[U]"),
                      (4, 1, 1707687, "2023-03-02 09:00:00", 32818, 1000.0, "completed", "mg"),
                      (5, 1, 1707687, "2023-03-02 21:00:00", 32818, 1000.0, "completed", "mg")],
    "measurement": [(7, 1, 3049187, "2023-03-01 11:00:00", 55.0, "mL/min/{1.73_m2}"),
                    (1, 1, 3027018, "2022-01-04 00:00:00", 130.0, "/min"),
                    (2, 1, 3027018, "2023-03-02 06:00:00", 96.0, "/min"),
                    (3, 1, 3027018, "2023-03-04 06:00:00", 120.0, "/min"),  # on the ward, after the ICU stay
                    (4, 1, 3023103, "2022-01-03 11:00:00", 5.9, "mmol/L"),
                    (5, 1, 3023103, "2023-03-01 11:00:00", 4.1, "mmol/L"),
                    (6, 1, 3023103, "2023-03-05 11:00:00", 3.6, "mmol/L")],
}


@pytest.fixture(scope="module")
def omop(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("omop-stays") / "stays.sqlite"
    con = sqlite3.connect(path)
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        for row in ROWS[table]:
            con.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
    con.commit()
    con.close()
    return path


def ask(omop: Path, question: str):
    return ask_sql(question, patient_id="1", now=NOW, connection=omop)


def test_icu_stays_are_visit_details_of_an_icu_concept(omop):
    assert ask(omop, "how many ICU stays?").answer == [2]
    answer = ask(omop, "max HR during the ICU stay")
    assert answer.answer == [96.0], answer.text  # not 130 (the earlier stay) nor 120 (the ward, same admission)


def test_on_admission_is_the_first_value_of_the_last_visit(omop):
    assert ask(omop, "K on admission?").answer == [4.1]


def test_the_principal_diagnosis_is_the_primary_status_concept(omop):
    assert ask(omop, "primary dx of the last admission?").answer == ["Chronic congestive heart failure"]
    answer = ask(omop, "diagnoses of the last admission?")
    assert answer.answer == ["Chronic congestive heart failure", "Atrial fibrillation"], answer.text


def test_an_administration_not_given_is_not_counted(omop):
    assert ask(omop, "heparin total on 3/2/2023?").answer == [10000.0]
    assert ask(omop, "how many doses of heparin were given on 3/2/2023?").answer == [2]


def test_a_day_total_in_the_unit_asked_for(omop):
    assert ask(omop, "total vanco given on 3/2/2023, in grams?").answer == [2.0]


def test_a_lexicon_condition_is_not_read_in_a_method_name(omop):
    answer = ask(omop, "hx of CKD?")  # the eGFR result's name holds "(CKD-EPI 2021)"; the record has no CKD
    assert answer.answer == [False], answer.text


def test_an_encounter_word_is_a_class_not_a_second_name_to_search(omop):
    # "appointment" means an ambulatory visit; its lexicon aliases ("outpatient …") must not pick the visit named
    # "Outpatient procedure" over the first ambulatory one
    assert ask(omop, "Clinic appointment, first date").answer == ["2021-05-05T09:00:00+00:00"]
