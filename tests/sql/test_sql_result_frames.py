"""A result's values on a MIMIC-III database through the SQL path: whether the latest is normal or high (by the usual
range of lexicon/reference_ranges.json, mmHg read as mm[Hg]), and a listed run of values. The FHIR path's plans run
over the patient's rows; every expected value is read here by a direct SQL scan of the file."""

from __future__ import annotations

import sqlite3

import pytest

from fhirqa.sql import ask_sql
from tests.sql.mimic_data import build

SYSTOLIC = 220179
ROWS = [(93, "2164-10-24 08:00:00", 118.0), (94, "2164-10-24 20:00:00", 86.0), (96, "2164-10-25 06:00:00", 142.0)]
NOW = "2164-10-25T12:00:00Z"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = build(tmp_path_factory.mktemp("results") / "mimic3.sqlite")
    con = sqlite3.connect(path)
    con.execute("INSERT INTO D_ITEMS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (91, SYSTOLIC, "Non Invasive Blood Pressure systolic", "NBPs", "metavision", "chartevents",
                 "Routine Vital Signs", "mmHg", "Numeric", None))
    con.executemany("INSERT INTO CHARTEVENTS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(rid, 10006, 142345, 206504, SYSTOLIC, when, None, 1, str(v), v, "mmHg", 0, 0, None, None)
                     for rid, when, v in ROWS])
    con.commit()
    con.close()
    return path


def charted(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT ROW_ID, CHARTTIME, VALUENUM FROM CHARTEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = ? "
                           "ORDER BY CHARTTIME", (SYSTOLIC,)).fetchall()
    finally:
        con.close()


def test_whether_the_latest_value_is_high_uses_the_usual_range(db):
    latest = charted(db)[-1]
    answer = ask_sql("is his systolic BP high?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [latest[2] > 119]  # ACC/AHA: 120 and over is above normal
    assert f"chartevents/{latest[0]}" in {e.ref.lower() for e in answer.evidence}
    assert "ACC/AHA" in answer.text


def test_a_listed_run_of_values_in_time_order(db):
    answer = ask_sql("list his systolic pressures", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [v for _, _, v in charted(db)]


def test_overnight_events_read_the_charted_values_as_the_fhir_path_does(db):
    night = [(rid, v) for rid, when, v in charted(db) if "2164-10-24 19:00" <= when <= "2164-10-25 07:00"]
    low = min(night, key=lambda row: row[1])
    answer = ask_sql("o/n events", patient_id="10006", now=NOW, connection=str(db))
    assert low[1] < 90 and "hypotensive" in answer.text  # the bedside threshold of lexicon/clinical_states.json
    assert f"chartevents/{low[0]}" in {e.ref.lower() for e in answer.evidence}


def test_a_direction_asked_now_reads_the_stay_the_patient_is_in(db):
    # the fixture's admission (2164-10-23) holds the question's time: its first and last values, 5 % rule
    first, last = charted(db)[0], charted(db)[-1]
    answer = ask_sql("is his systolic BP rising?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [(last[2] - first[2]) / first[2] > 0.05] == [True]
    assert "this admission" in answer.text and f"{first[2]:g} mmHg" in answer.text


def test_the_reason_for_admission_is_the_stays_admitting_diagnosis(db):
    con = sqlite3.connect(db)
    try:
        (reason,) = con.execute("SELECT DIAGNOSIS FROM ADMISSIONS WHERE SUBJECT_ID = 10006 AND ADMITTIME <= ? "
                                "ORDER BY ADMITTIME DESC LIMIT 1", (NOW[:10] + " 23:59:59",)).fetchone()
    finally:
        con.close()
    for question in ("reason for admission", "why was he admitted?", "admitting dx?"):
        answer = ask_sql(question, patient_id="10006", now=NOW, connection=str(db))
        assert answer.answer == [reason] == ["SEPSIS"], question
        assert any(e.ref.lower().startswith("admissions/") for e in answer.evidence), question


def test_abnormal_vitals_and_a_checklist_run_as_on_the_fhir_path(db):
    latest = charted(db)[-1]
    day = [(rid, v) for rid, when, v in charted(db) if when[:10] == latest[1][:10]]  # the latest day with vitals
    answer = ask_sql("any abnormal vitals?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [any(v > 119 for _, v in day)] == [True]  # 142: above the usual range
    assert f"chartevents/{latest[0]}" in {e.ref.lower() for e in answer.evidence}
    parts = ask_sql("last systolic BP; is his systolic BP high?", patient_id="10006", now=NOW, connection=str(db))
    assert parts.answer == [latest[2], True]
    assert parts.text.startswith("Last systolic BP:") and "Is his systolic BP high:" in parts.text
