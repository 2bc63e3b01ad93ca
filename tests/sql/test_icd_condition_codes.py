"""Diagnoses coded in ICD are the lexicon's conditions through the SQL path: MIMIC-III ``diagnoses_icd`` writes ICD-9-CM
codes without their dot ("41071": Subendocardial infarction, an acute MI whose title never says "myocardial
infarction"), an OMOP ``condition_source_value`` may hold ICD-10-CM ("I21.4") with no concept to name it. The lexicon's
code families (``icd`` in ``lexicon/conditions.json``) match them; an "Old myocardial infarction" (412) is not the MI a
window hangs on when the acute one is coded. Every expected value is read here from the rows the test wrote."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql
from tests.sql.mimic_data import build

from .sqlite_tables import OMOP_CORE_TABLES, write_sqlite

NOW = "2165-06-01T12:00:00Z"


@pytest.fixture(scope="module")
def mimic(tmp_path_factory) -> Path:
    path = build(tmp_path_factory.mktemp("icd") / "mimic3.sqlite")
    con = sqlite3.connect(path)
    # the acute MI in the second stay (2165-02-01), an old MI noted in the first (2164-10-23)
    con.executemany("INSERT INTO DIAGNOSES_ICD VALUES (?, ?, ?, ?, ?)",
                    [(10, 10006, 155555, 2, "41071"), (11, 10006, 142345, 3, "412"), (12, 10006, 155555, 3, "5780")])
    con.executemany("INSERT INTO D_ICD_DIAGNOSES VALUES (?, ?, ?, ?)",
                    [(10, "41071", "Subendo infarct, initial", "Subendocardial infarction, initial episode of care"),
                     (11, "412", "Old myocardial infarct", "Old myocardial infarction"),
                     (12, "5780", "Hematemesis", "Hematemesis")])
    con.commit()
    con.close()
    return path


def rows(db: Path, sql: str, *params: object) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_an_icd9_code_without_its_dot_is_the_condition_the_lexicon_names(mimic):
    (admitted,) = rows(mimic, "SELECT a.ADMITTIME FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                              "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '41071'")[0]
    answer = ask_sql("did he have an MI?", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [True]
    assert "Subendocardial infarction" in answer.text and admitted[:10] in answer.text


def test_a_window_before_the_mi_ends_at_the_acute_mi_not_the_old_one(mimic):
    (admitted,) = rows(mimic, "SELECT a.ADMITTIME FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                              "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '41071'")[0]
    before = rows(mimic, "SELECT ROW_ID, VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = 50971 "
                         "AND CHARTTIME < ? ORDER BY CHARTTIME DESC", admitted)
    answer = ask_sql("last K before the MI?", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [before[0][1]]
    assert f"labevents/{before[0][0]}" in {e.ref.lower() for e in answer.evidence}
    assert "Subendocardial infarction" in answer.text  # the event the window hangs on is named


def test_a_gi_bleed_coded_as_its_sign_is_a_gi_bleed(mimic):
    # ICD-9 578.0 (Hematemesis) is in the family of gastrointestinal hemorrhage (578); its title has none of the words
    answer = ask_sql("any GI bleed?", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [True] and "Hematemesis" in answer.text


def test_codes_of_other_families_do_not_match(mimic):
    coded = {c for (c,) in rows(mimic, "SELECT ICD9_CODE FROM DIAGNOSES_ICD WHERE SUBJECT_ID = 10006")}
    assert not any(c.startswith(("491", "492", "496")) for c in coded)  # no COPD code on file
    answer = ask_sql("hx of COPD?", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [False]


def test_a_name_coded_outside_the_families_is_left_out_when_a_coded_one_exists(mimic):
    answer = ask_sql("when was his first MI?", patient_id="10006", now=NOW, connection=str(mimic))
    (admitted,) = rows(mimic, "SELECT a.ADMITTIME FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                              "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '41071'")[0]
    assert [str(a)[:10] for a in answer.answer] == [admitted[:10]]  # not the stay with "Old myocardial infarction"


OMOP_TABLES = {
    **OMOP_CORE_TABLES,
    "condition_occurrence": "condition_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, condition_concept_id INTEGER, "
                            "condition_start_datetime TEXT, condition_source_value TEXT, condition_source_concept_id INTEGER, "
                            "visit_occurrence_id INTEGER",
    "drug_exposure": "drug_exposure_id INTEGER PRIMARY KEY, person_id INTEGER, drug_concept_id INTEGER, "
                     "drug_exposure_start_datetime TEXT, drug_type_concept_id INTEGER",
}
OMOP_ROWS = {
    "person": [(1, 8507, 1950, "1950-01-01", "p1")],
    "concept": [(2000031019, "AF (Atrial Fibrillation)", "Condition", "local", "Clinical Finding", "AF (Atrial Fibrillation)"),
                (1308216, "lisinopril", "Drug", "RxNorm", "Ingredient", "29046")],
    "visit_occurrence": [(10, 1, 9201, "2020-02-27 15:33:00", "2020-03-12 07:45:00")],
    # the stay's coded diagnoses carry the stay's start (no concept: the source value only); the rhythm is charted
    # as atrial fibrillation on day 9 with its own time
    "condition_occurrence": [(1, 1, 0, "2020-02-27 15:33:00", "I4891", 0, 10),
                             (2, 1, 0, "2020-02-27 15:33:00", "N179", 0, 10),
                             (3, 1, 0, "2020-03-07 08:00:00", "AF (Atrial Fibrillation)", 2000031019, 10)],
    "drug_exposure": [(1, 1, 1308216, "2020-03-01 09:00:00", 32838)],
}


@pytest.fixture(scope="module")
def omop(tmp_path_factory) -> Path:
    return write_sqlite(tmp_path_factory.mktemp("icd-omop") / "omop.sqlite", OMOP_TABLES, OMOP_ROWS)


def test_an_icd10_source_value_without_a_concept_is_matched_by_its_family(omop):
    answer = ask_sql("hx of AKI?", patient_id="1", now="2020-06-01T00:00:00Z", connection=str(omop))
    assert answer.answer == [True]
    (row_id,) = rows(omop, "SELECT condition_occurrence_id FROM condition_occurrence WHERE condition_source_value = 'N179'")[0]
    assert f"condition_occurrence/{row_id}" in {e.ref for e in answer.evidence}


def test_a_diagnosis_dated_by_its_stay_is_dated_by_a_charted_row_of_the_stay(omop):
    charted = rows(omop, "SELECT condition_start_datetime FROM condition_occurrence WHERE condition_source_concept_id = "
                         "2000031019 ORDER BY condition_start_datetime")
    answer = ask_sql("when was he first diagnosed with atrial fibrillation?", patient_id="1", now="2020-06-01T00:00:00Z",
                     connection=str(omop))
    assert [str(a)[:10] for a in answer.answer] == [charted[0][0][:10]]


def test_labs_before_the_mi_are_each_tests_last_value_before_it(mimic):
    (admitted,) = rows(mimic, "SELECT a.ADMITTIME FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                              "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '41071'")[0]
    latest: dict[int, float] = {}
    for item, value in rows(mimic, "SELECT ITEMID, VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND CHARTTIME < ? "
                                   "ORDER BY CHARTTIME", admitted):
        latest[item] = value
    answer = ask_sql("labs before the MI", patient_id="10006", now=NOW, connection=str(mimic))
    assert sorted(answer.answer) == sorted(latest.values())
    assert f"({admitted[:10]})" in answer.text and "Subendocardial infarction" in answer.text


def test_vitals_before_the_mi_are_the_vital_signs_only(mimic):
    (admitted,) = rows(mimic, "SELECT a.ADMITTIME FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                              "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '41071'")[0]
    charted = rows(mimic, "SELECT ROW_ID, VALUENUM FROM CHARTEVENTS WHERE SUBJECT_ID = 10006 AND ERROR = 0 AND "
                          "CHARTTIME < ? ORDER BY CHARTTIME", admitted)
    answer = ask_sql("vitals before the MI", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [charted[-1][1]]  # the heart rate (the only vital charted), no lab
    assert f"chartevents/{charted[-1][0]}" in {e.ref.lower() for e in answer.evidence}


def test_a_drug_code_shaped_like_an_icd9_code_is_no_diagnosis(omop):
    # RxNorm 29046 (lisinopril) reads like ICD-9 290.46, a dementia code: ICD families are read on diagnoses only
    answer = ask_sql("when was dementia diagnosed?", patient_id="1", now="2020-06-01T00:00:00Z", connection=str(omop))
    assert answer.status == "no-data" and answer.answer == []
