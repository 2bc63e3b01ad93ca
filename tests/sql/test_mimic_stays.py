"""MIMIC-III questions about one stay, the diagnoses of an admission, administrations and chart vitals.

One patient with two admissions and three ICU stays, loaded from upper-case CSV files the way `fhirqa ingest
--mimic` loads them. Every answer here differs from the answer over the whole record, so a window that is not
applied shows up. The last admission (hadm 302) runs 2151-06-01 08:00 – 2151-06-09 16:00 after an ED registration
at 05:00 (a creatinine was drawn in the ED at 06:30: the stay starts at the ED); its last ICU stay (403)
2151-06-06 08:00 – 2151-06-07 08:00.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql, connect, ingest_mimic
from tests.sql.mimic_data import TABLES

NOW = "2151-06-20T12:00:00Z"
PATIENT = "20001"
S = 20001  # subject

ROWS: dict[str, list[tuple]] = {
    "PATIENTS": [(1, S, "M", "2100-06-05 00:00:00", None, None, None, 0)],
    "ADMISSIONS": [
        (1, S, 301, "2150-01-05 10:00:00", "2150-01-12 12:00:00", None, "EMERGENCY", "EMERGENCY ROOM ADMIT", "HOME", "Medicare",
         None, None, None, "WHITE", "2150-01-05 08:00:00", "2150-01-05 10:00:00", "SEPSIS", 0, 1),
        (2, S, 302, "2151-06-01 08:00:00", "2151-06-09 16:00:00", None, "EMERGENCY", "EMERGENCY ROOM ADMIT", "HOME", "Medicare",
         None, None, None, "WHITE", "2151-06-01 05:00:00", "2151-06-01 08:00:00", "CHF", 0, 1),
    ],
    "ICUSTAYS": [
        (1, S, 301, 401, "metavision", "MICU", "MICU", 50, 50, "2150-01-05 12:00:00", "2150-01-08 12:00:00", 3.0),
        (2, S, 302, 402, "metavision", "CCU", "CCU", 7, 7, "2151-06-02 00:00:00", "2151-06-04 00:00:00", 2.0),
        (3, S, 302, 403, "metavision", "CCU", "CCU", 7, 7, "2151-06-06 08:00:00", "2151-06-07 08:00:00", 1.0),
    ],
    "D_LABITEMS": [(1, 50912, "Creatinine", "Blood", "Chemistry", "2160-0"), (2, 50813, "Lactate", "Blood", "Blood Gas", "32693-4")],
    "LABEVENTS": [
        (1, S, 301, 50912, "2150-01-05 11:00:00", "2.5", 2.5, "mg/dL", "abnormal"),
        (2, S, 301, 50912, "2150-01-10 05:00:00", "3.1", 3.1, "mg/dL", "abnormal"),
        (3, S, None, 50912, "2151-03-01 09:00:00", "1.0", 1.0, "mg/dL", None),
        (8, S, 302, 50912, "2151-06-01 06:30:00", "1.3", 1.3, "mg/dL", "abnormal"),  # drawn in the ED
        (4, S, 302, 50912, "2151-06-01 09:00:00", "1.4", 1.4, "mg/dL", "abnormal"),
        (5, S, 302, 50912, "2151-06-03 05:00:00", "1.8", 1.8, "mg/dL", "abnormal"),
        (6, S, 302, 50912, "2151-06-08 05:00:00", "1.6", 1.6, "mg/dL", "abnormal"),
        (7, S, 301, 50813, "2150-01-05 13:00:00", "4.2", 4.2, "mmol/L", "abnormal"),
    ],
    "D_ITEMS": [
        (1, 220045, "Heart Rate", "HR", "metavision", "chartevents", "Routine Vital Signs", "bpm", "Numeric", None),
        (2, 220277, "O2 saturation pulseoxymetry", "SpO2", "metavision", "chartevents", "Respiratory", "%", "Numeric", None),
        (3, 223761, "Temperature Fahrenheit", "Temperature F", "metavision", "chartevents", "Routine Vital Signs", "?F",
         "Numeric", None),
        (5, 220179, "Non Invasive Blood Pressure systolic", "NBPs", "metavision", "chartevents", "Routine Vital Signs",
         "mmHg", "Numeric", None),
        (6, 220180, "Non Invasive Blood Pressure diastolic", "NBPd", "metavision", "chartevents", "Routine Vital Signs",
         "mmHg", "Numeric", None),
        (7, 220181, "Non Invasive Blood Pressure mean", "NBPm", "metavision", "chartevents", "Routine Vital Signs",
         "mmHg", "Numeric", None),
        (4, 225152, "Heparin Sodium", "Heparin Sodium", "metavision", "inputevents_mv", "Medications", "units", "Solution", None),
    ],
    "CHARTEVENTS": [
        (1, S, 302, 402, 220045, "2151-06-02 01:00:00", None, 1, "110", 110.0, "bpm", 0, 0, None, None),
        (2, S, 302, 402, 220045, "2151-06-03 01:00:00", None, 1, "90", 90.0, "bpm", 0, 0, None, None),
        (3, S, 302, 403, 220045, "2151-06-06 10:00:00", None, 1, "72", 72.0, "bpm", 0, 0, None, None),
        (4, S, 302, 403, 220045, "2151-06-06 14:00:00", None, 1, "80", 80.0, "bpm", 0, 0, None, None),
        (5, S, 302, 403, 220045, "2151-06-06 15:00:00", None, 1, "0", 0.0, "bpm", 0, 1, None, None),
        (6, S, 302, 402, 220277, "2151-06-02 01:00:00", None, 1, "88", 88.0, "%", 0, 0, None, None),
        (7, S, 302, 403, 220277, "2151-06-06 10:00:00", None, 1, "97", 97.0, "%", 0, 0, None, None),
        (8, S, 302, 403, 220277, "2151-06-06 14:00:00", None, 1, "93", 93.0, "%", 0, 0, None, None),
        (9, S, 302, 402, 223761, "2151-06-02 04:00:00", None, 1, "101.5", 101.5, "?F", 0, 0, None, None),
        (10, S, 302, 403, 223761, "2151-06-06 12:00:00", None, 1, "99.1", 99.1, "?F", 0, 0, None, None),
        (11, S, 302, 403, 220179, "2151-06-06 10:00:00", None, 1, "128", 128.0, "mmHg", 0, 0, None, None),
        (12, S, 302, 403, 220180, "2151-06-06 10:00:00", None, 1, "64", 64.0, "mmHg", 0, 0, None, None),
        (13, S, 302, 403, 220181, "2151-06-06 10:00:00", None, 1, "85", 85.0, "mmHg", 0, 0, None, None),
    ],
    "PRESCRIPTIONS": [
        (1, S, 302, None, "2151-06-01 00:00:00", "2151-06-09 00:00:00", "MAIN", "Heparin", "Heparin", "Heparin Sodium", "HEPA5I",
         "006549", "63323026201", "5000 Unit Vial", "5000", "UNIT", "1", "VIAL", "SC"),
        (2, S, 302, None, "2151-06-01 00:00:00", "2151-06-09 00:00:00", "MAIN", "Pantoprazole", "Pantoprazole", "Pantoprazole",
         "PANT40", "027462", "00008092355", "40mg Vial", "40", "mg", "1", "VIAL", "IV"),
    ],
    "INPUTEVENTS_MV": [
        (1, S, 302, 402, "2151-06-02 02:00:00", "2151-06-02 06:00:00", 225152, 4000.0, "units", 1000.0, "units/hour"),
        (2, S, 302, 402, "2151-06-02 06:00:00", "2151-06-02 10:00:00", 225152, 4000.0, "units", 1000.0, "units/hour"),
        (3, S, 302, 402, "2151-06-02 06:00:00", "2151-06-02 10:00:00", 225152, 3600.0, "units", 900.0, "units/hour"),
    ],
    "D_ICD_DIAGNOSES": [(1, "4280", "CHF NOS", "Congestive heart failure, unspecified"),
                        (2, "42731", "Atrial fibrillation", "Atrial fibrillation"),
                        (3, "4019", "Hypertension NOS", "Unspecified essential hypertension"),
                        (4, "0389", "Septicemia NOS", "Unspecified septicemia"),
                        (5, "5849", "Acute kidney failure NOS", "Acute kidney failure, unspecified")],
    "DIAGNOSES_ICD": [(1, S, 302, 2, "42731"), (2, S, 302, 1, "4280"), (3, S, 302, 3, "4019"),
                      (4, S, 301, 1, "0389"), (5, S, 301, 2, "5849")],
    "D_ICD_PROCEDURES": [(1, "3893", "Venous cath NEC", "Venous catheterization, not elsewhere classified"),
                         (2, "9904", "Packed cell transfusion", "Transfusion of packed cells")],
    "PROCEDURES_ICD": [(1, S, 301, 1, "3893"), (2, S, 302, 1, "9904")],
}
# the statuses of the administrations above: the second segment was superseded (charted again as the third)
STATUS = {1: "FinishedRunning", 2: "Rewritten", 3: "FinishedRunning"}


def _columns(table: str) -> list[str]:
    return [part.split()[0] for part in TABLES[table].split(", ")]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mimic-stays")
    source = folder / "csv"
    source.mkdir()
    for table, rows in ROWS.items():
        columns = _columns(table)
        with (source / f"{table}.csv").open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            for row in rows:
                full = list(row) + [None] * (len(columns) - len(row))
                if table == "INPUTEVENTS_MV":
                    full[columns.index("STATUSDESCRIPTION")] = STATUS[row[0]]
                writer.writerow(["" if v is None else v for v in full])
    target = folder / "mimic.duckdb"
    ingest_mimic(source, target)
    return target


def ask(db: Path, question: str):
    return ask_sql(question, patient_id=PATIENT, now=NOW, connection=db)


def test_all_digit_icd9_codes_are_loaded_as_text_and_the_procedure_view_reads(db):
    con = connect(db)
    try:
        types = dict(con.raw.execute("SELECT table_name, data_type FROM information_schema.columns "
                                     "WHERE column_name = 'icd9_code'").fetchall())
    finally:
        con.close()
    assert set(types.values()) == {"VARCHAR"}
    answer = ask(db, "any venous catheterization?")
    assert answer.status == "answered" and answer.answer == [True]
    assert ask(db, "how many vancomycin orders?").answer == [0]  # reads every view, the procedure one too


@pytest.mark.parametrize("question, expected", [
    ("creat on admission?", 1.3),                       # first value of the last stay, an ED draw (whole record: 2.5)
    ("admission creatinine this admit?", 1.3),          # the admission word is the window, not the item
    ("creatinine on admit?", 1.3),                      # "on admit": no window read by the parser
    ("max creatinine this admission", 1.8),             # whole record: 3.1
    ("how many creatinine values this admission?", 4),  # whole record: 7
    ("max HR during the ICU stay", 80.0),               # last ICU stay only (the earlier stay had 110)
    ("O2 sat min during the ICU stay", 93.0),           # MIMIC's 'O2 saturation pulseoxymetry' by its LOINC code
    ("Tmax during the ICU stay?", 99.1),                # 'Temperature Fahrenheit'
])
def test_stay_windows_are_the_last_admission_or_the_last_icu_stay(db, question, expected):
    answer = ask(db, question)
    assert answer.status == "answered", answer.text
    assert answer.answer == [expected], answer.text


def test_a_stay_without_the_item_is_no_data_not_an_earlier_stay(db):
    answer = ask(db, "max lactate this admission")
    assert answer.status == "no-data", answer.text  # lactate only in the first admission


def test_a_threshold_in_the_icu_stay(db):
    answer = ask(db, "any fever (temp > 100.4) during the ICU stay?")
    assert answer.answer == [False], answer.text  # 101.5 was in the earlier ICU stay


def test_icu_stays_are_counted_from_icustays(db):
    assert ask(db, "how many ICU stays?").answer == [3]
    assert ask(db, "how many admissions?").answer == [2]


def test_last_hr_is_the_last_heart_rate_not_the_last_hour(db):
    answer = ask(db, "last HR charted?")
    assert answer.status == "answered" and answer.answer == [80.0], answer.text  # the ERROR = 1 row (0) left out


def test_diagnoses_of_the_last_admission_in_seq_num_order(db):
    answer = ask(db, "diagnoses of the last admission?")
    assert answer.answer == ["Congestive heart failure, unspecified", "Atrial fibrillation",
                             "Unspecified essential hypertension"], answer.text
    assert any(e.ref.startswith("diagnoses_icd/") for e in answer.evidence)
    assert ask(db, "primary dx of the last admission?").answer == ["Congestive heart failure, unspecified"]
    assert ask(db, "principal diagnosis of the first admission?").answer == ["Unspecified septicemia"]


def test_day_totals_add_the_administrations_not_the_order_and_skip_rewritten_rows(db):
    answer = ask(db, "total hep given on 6/2/2151 (units)?")
    assert answer.status == "answered" and answer.answer == [7600.0], answer.text
    assert all(e.ref.startswith("inputevents_mv/") for e in answer.evidence)


def test_given_is_a_yes_no_question(db):
    assert ask(db, "pantoprazole given?").answer == [True]
    assert ask(db, "furosemide given?").answer == [False]


def test_age_when_admitted_is_at_the_admission(db):
    assert ask(db, "how old was he when admitted (last admission)?").answer == [50]  # born 2100-06-05, admitted 2151-06-01
    assert ask(db, "age?").answer == [51]  # now 2151-06-20


def test_sepsis_reaches_the_icd9_septicemia_title(db):
    answer = ask(db, "sepsis on his problem list?")
    assert answer.answer == [True], answer.text


def test_the_icu_stays_themselves(db):
    assert ask(db, "was he in the ICU?").answer == [True]
    assert ask(db, "when was his last ICU stay?").answer == ["2151-06-06T08:00:00+00:00"]


def test_a_blood_pressure_is_answered_by_its_systolic_and_diastolic_items(db):
    answer = ask(db, "last BP")
    assert answer.answer == [128.0, 64.0], answer.text  # the mean (85) is not a component of a blood pressure
    answer = ask(db, "avg BP during the ICU stay")
    assert answer.answer == [128.0, 64.0], answer.text  # one mean per component, never the mean of the mixture (96)


def test_administrations_counted_and_checked_by_their_own_names(db):
    assert ask(db, "how many times was heparin given?").answer == [2]  # Heparin Sodium, the Rewritten row left out
    assert ask(db, "how many heparin orders?").answer == [1]           # PRESCRIPTIONS "Heparin"
    assert ask(db, "heparin given on 6/2/2151?").answer == [True]
    assert ask(db, "heparin given on 6/5/2151?").answer == [False]
