"""Question frames the FHIR path reads, on a MIMIC-III database through the SQL path (fhirqa/sql/frames.py).

The database is the shared MIMIC-III test file (tests/sql/mimic_data.py) with a few more rows: temperatures charted
in °F (as MIMIC-III writes them, unit "?F"), systolic pressures, and a lisinopril dose raised from 5 to 10 mg. Every
expected value is read here by a direct SQL scan of the file, never from fhirqa's answer.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from fhirqa.sql import ask_sql
from tests.sql.mimic_data import build

EXTRA = {
    "D_ITEMS": [(90, 223761, "Temperature Fahrenheit", "Temperature F", "metavision", "chartevents", "Routine Vital Signs",
                 "?F", "Numeric", None),
                (91, 220179, "Non Invasive Blood Pressure systolic", "NBPs", "metavision", "chartevents",
                 "Routine Vital Signs", "mmHg", "Numeric", None)],
    "CHARTEVENTS": [
        (90, 10006, 142345, 206504, 223761, "2164-10-24 06:00:00", None, 1, "99.1", 99.1, "?F", 0, 0, None, None),
        (91, 10006, 142345, 206504, 223761, "2164-10-24 20:00:00", None, 1, "100.9", 100.9, "?F", 0, 0, None, None),
        (92, 10006, 142345, 206504, 223761, "2164-10-25 08:00:00", None, 1, "98.6", 98.6, "?F", 0, 0, None, None),
        (93, 10006, 142345, 206504, 220179, "2164-10-24 08:00:00", None, 1, "118", 118.0, "mmHg", 0, 0, None, None),
        (94, 10006, 142345, 206504, 220179, "2164-10-24 20:00:00", None, 1, "86", 86.0, "mmHg", 0, 0, None, None),
        # the other patient is febrile: a leak would show
        (95, 10011, 105331, 232110, 223761, "2126-08-15 08:00:00", None, 1, "102.2", 102.2, "?F", 0, 0, None, None)],
    "PRESCRIPTIONS": [
        (90, 10006, 155555, None, "2165-02-01 00:00:00", "2165-02-03 00:00:00", "MAIN", "Lisinopril", "Lisinopril",
         "Lisinopril", "LISI5", "000001", "00000000001", "5mg Tab", "5", "mg", "1", "TAB", "PO"),
        (91, 10006, 155555, None, "2165-02-03 00:00:00", "2165-02-05 00:00:00", "MAIN", "Lisinopril", "Lisinopril",
         "Lisinopril", "LISI10", "000002", "00000000002", "10mg Tab", "10", "mg", "1", "TAB", "PO")],
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = build(tmp_path_factory.mktemp("frames") / "mimic3.sqlite")
    con = sqlite3.connect(path)
    for table, rows in EXTRA.items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    con.commit()
    con.close()
    return path


def scan(db, sql, *params):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def ask(db, question, now, patient="10006"):
    return ask_sql(question, patient_id=patient, now=now, connection=str(db))


def refs(answer):
    return {e.ref.lower() for e in answer.evidence}


# -- clinical states -------------------------------------------------------------------------------------------
def _charted(db, itemid, start, end, patient=10006):
    return scan(db, "SELECT ROW_ID, VALUENUM FROM CHARTEVENTS WHERE SUBJECT_ID = ? AND ITEMID = ? AND CHARTTIME >= ? "
                    "AND CHARTTIME <= ? AND (ERROR IS NULL OR ERROR = 0)", patient, itemid, start, end)


@pytest.mark.parametrize("now", ["2164-10-25T00:00:00Z", "2164-10-24T12:00:00Z"])
def test_febrile_reads_fahrenheit_charting_in_celsius_terms(db, now):
    """A °F chart is compared at 100.4 °F: 99.1 °F is no fever (read raw against 38 it would be)."""
    moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
    start = moment.replace(day=moment.day - 1).strftime("%Y-%m-%d %H:%M:%S")
    temps = _charted(db, 223761, start, moment.strftime("%Y-%m-%d %H:%M:%S"))
    febrile = any((v - 32) * 5 / 9 >= 38.0 for _, v in temps)
    answer = ask(db, "is he febrile?", now)
    assert answer.status == "answered" and answer.answer == [febrile]
    hottest = max(temps, key=lambda r: r[1])
    assert f"chartevents/{hottest[0]}" in refs(answer)
    assert "last 24 hours" in answer.text and "38" in answer.text
    assert ask(db, "afebrile?", now).answer == [not febrile]


def test_hypotensive_and_tachycardic_in_the_last_24_hours(db):
    now = "2164-10-25T00:00:00Z"
    pressures = _charted(db, 220179, "2164-10-24 00:00:00", "2164-10-25 00:00:00")
    rates = _charted(db, 211, "2164-10-24 00:00:00", "2164-10-25 00:00:00")  # the 250 marked ERROR = 1 is left out
    hypotensive = ask(db, "hypotensive?", now)
    assert hypotensive.answer == [any(v < 90 for _, v in pressures)]
    assert f"chartevents/{min(pressures, key=lambda r: r[1])[0]}" in refs(hypotensive)
    tachycardic = ask(db, "tachycardic in the last 24 h?", now)
    assert tachycardic.answer == [any(v > 100 for _, v in rates)]
    assert "chartevents/3" not in refs(tachycardic)


def test_a_state_over_the_current_stay(db):
    """"febrile this admission?": the state over the stay's dates, the stay cited."""
    stay = scan(db, "SELECT ROW_ID, ADMITTIME, DISCHTIME, EDREGTIME FROM ADMISSIONS WHERE SUBJECT_ID = 10006 "
                    "AND ADMITTIME <= '2164-10-26' ORDER BY ADMITTIME DESC LIMIT 1")[0]
    temps = _charted(db, 223761, stay[3] or stay[1], stay[2])
    answer = ask(db, "febrile this admission?", "2164-10-26T00:00:00Z")
    assert answer.answer == [any((v - 32) * 5 / 9 >= 38.0 for _, v in temps)]
    assert f"admissions/{stay[0]}" in refs(answer)


def test_no_values_in_the_window_is_no_data(db):
    answer = ask(db, "is he febrile?", "2165-02-03T00:00:00Z")
    assert answer.status == "no-data" and answer.answer == []


# -- several items ------------------------------------------------------------------------------------------------
def test_last_of_two_items_each_answered(db):
    def last(itemid):
        return scan(db, "SELECT ROW_ID, VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = ? "
                        "ORDER BY CHARTTIME DESC LIMIT 1", itemid)[0]

    potassium, creatinine = last(50971), last(50912)
    answer = ask(db, "last K and creatinine?", "2166-01-01T00:00:00Z")
    assert answer.answer == [potassium[1], creatinine[1]]
    assert {f"labevents/{potassium[0]}", f"labevents/{creatinine[0]}"} <= refs(answer)


# -- event windows ---------------------------------------------------------------------------------------------------
def _sepsis_onset(db):
    """The first admission coded with septicemia (ICD-9 038.9): MIMIC dates a diagnosis by its admission."""
    return scan(db, "SELECT min(a.ADMITTIME) FROM DIAGNOSES_ICD d JOIN ADMISSIONS a ON a.HADM_ID = d.HADM_ID "
                    "WHERE d.SUBJECT_ID = 10006 AND d.ICD9_CODE = '0389'")[0][0]


def test_a_value_before_and_after_a_diagnosis(db):
    onset = _sepsis_onset(db)
    ks = scan(db, "SELECT ROW_ID, VALUENUM, CHARTTIME FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = 50971 "
                  "ORDER BY CHARTTIME")
    before = [k for k in ks if k[2] < onset][-1]
    after = [k for k in ks if k[2] >= onset][0]
    now = "2166-01-01T00:00:00Z"
    answer = ask(db, "K before the sepsis dx?", now)
    assert answer.answer == [before[1]] and f"labevents/{before[0]}" in refs(answer)
    assert "septicemia" in answer.text.lower() and onset[:10] in answer.text  # the event and its date are said
    first = ask(db, "first K after the sepsis dx?", now)
    assert first.answer == [after[1]] and f"labevents/{after[0]}" in refs(first)


def test_an_event_the_record_lacks_is_said_not_answered_over_all_time(db):
    assert not scan(db, "SELECT 1 FROM DIAGNOSES_ICD WHERE SUBJECT_ID = 10006 AND ICD9_CODE LIKE '434%'")
    answer = ask(db, "heparin after the stroke?", "2166-01-01T00:00:00Z")
    assert answer.status == "no-data" and answer.answer == []
    assert "no stroke" in answer.text


# -- medication changes and days of therapy --------------------------------------------------------------------------
def _doses(db, drug):
    return scan(db, "SELECT ROW_ID, DOSE_VAL_RX, STARTDATE, ENDDATE FROM PRESCRIPTIONS WHERE SUBJECT_ID = 10006 "
                    "AND DRUG = ? ORDER BY STARTDATE", drug)


def test_was_a_dose_changed(db):
    now = "2165-03-01T00:00:00Z"
    lisinopril = _doses(db, "Lisinopril")
    raised = ask(db, "was the lisinopril dose increased?", now)
    assert raised.answer == [float(lisinopril[-1][1]) > float(lisinopril[0][1])]
    assert f"prescriptions/{lisinopril[-1][0]}" in refs(raised)
    metoprolol = _doses(db, "Metoprolol Tartrate")
    assert ask(db, "was the metoprolol dose changed?", now).answer == [len({d[1] for d in metoprolol}) > 1]


def test_any_med_changes_in_a_window(db):
    now = "2165-03-01T00:00:00Z"
    answer = ask(db, "any med changes in the last 6 months?", now)
    changed = {"Lisinopril"} if len({d[1] for d in _doses(db, "Lisinopril")}) > 1 else set()
    assert changed <= set(answer.answer)
    assert "Dose changed" in answer.text


def test_days_on_a_drug_from_its_orders(db):
    """"how many days on vanc?": the course of overlapping orders running now, its first day being day 1."""
    now = "2164-10-27T12:00:00Z"
    orders = _doses(db, "Vancomycin")
    assert all(later[2] <= earlier[3] for earlier, later in zip(orders, orders[1:], strict=False))  # one course
    first_day = datetime.fromisoformat(orders[0][2]).date()
    answer = ask(db, "how many days on vanc?", now)
    assert answer.unit == "days" and answer.answer == [(datetime.fromisoformat(now[:10]).date() - first_day).days + 1]
    assert f"prescriptions/{orders[0][0]}" in refs(answer)


def test_a_stay_named_by_its_diagnosis(db):
    """"K during the admission for sepsis?": the stay with septicemia coded, not the latest one (which has no K)."""
    stay = scan(db, "SELECT a.ROW_ID, coalesce(a.EDREGTIME, a.ADMITTIME), a.DISCHTIME FROM ADMISSIONS a JOIN DIAGNOSES_ICD d "
                    "ON d.HADM_ID = a.HADM_ID WHERE a.SUBJECT_ID = 10006 AND d.ICD9_CODE = '0389' ORDER BY a.ADMITTIME DESC")[0]
    last = scan(db, "SELECT ROW_ID, VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = 50971 AND CHARTTIME >= ? "
                    "AND CHARTTIME <= ? ORDER BY CHARTTIME DESC LIMIT 1", stay[1], stay[2])[0]
    answer = ask(db, "last K during the admission for sepsis?", "2166-01-01T00:00:00Z")
    assert answer.answer == [last[1]]
    assert {f"labevents/{last[0]}", f"admissions/{stay[0]}"} <= refs(answer)
    missing = ask(db, "last K during the admission for pneumonia?", "2166-01-01T00:00:00Z")
    assert missing.status == "no-data" and "pneumonia" in missing.text


def test_a_state_and_a_missing_event_are_not_answered_from_old_notes(tmp_path):
    """A note of last month saying "febrile overnight" is not today's fever, nor does a note mentioning heparin answer
    "heparin after the stroke?" when the record holds no stroke."""
    pytest.importorskip("lancedb")
    from tests.sql.mimic_data import build_with_notes

    note = (1, 10006, 142345, "2164-10-24", "2164-10-24 09:00:00", None, "Physician ", "Physician Progress Note", 17, None,
            "Subjective: febrile overnight after a stroke scare.\nPlan: continue heparin.")
    db = build_with_notes(tmp_path / "mimic3.sqlite", [note])
    now = "2164-11-15T12:00:00Z"
    assert not scan(db, "SELECT 1 FROM CHARTEVENTS WHERE SUBJECT_ID = 10006 AND CHARTTIME >= '2164-11-14 12:00:00'")
    febrile = ask(db, "is he febrile?", now)
    assert febrile.status == "no-data" and not any(e.ref.startswith("noteevents/") for e in febrile.evidence)
    stroke = ask(db, "heparin after the stroke?", now)
    assert stroke.status == "no-data" and "no stroke" in stroke.text


# -- the same over OMOP CDM ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def omop(tmp_path_factory):
    """The OMOP file of tests/sql/test_omop_stays.py (sepsis in 2022, AFib and CHF in 2023, heart rates, K, heparin
    and vancomycin administrations) with body temperatures in °C."""
    from tests.sql.test_omop_stays import ROWS, TABLES

    rows = {table: list(values) for table, values in ROWS.items()}
    rows["concept"].append((3020891, "Body temperature", "Measurement", "LOINC", "Clinical Observation", "8310-5"))
    rows["measurement"] += [(20, 1, 3020891, "2023-03-02 06:00:00", 38.4, "Cel"),
                            (21, 1, 3020891, "2023-03-04 23:00:00", 37.1, "Cel")]
    path = tmp_path_factory.mktemp("omop-frames") / "omop.sqlite"
    con = sqlite3.connect(path)
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[table][0]))})", rows[table])
    con.commit()
    con.close()
    return path


def test_omop_value_after_a_condition_and_a_state(omop):
    onset = scan(omop, "SELECT min(condition_start_date) FROM condition_occurrence c JOIN concept k "
                       "ON k.concept_id = c.condition_concept_id WHERE c.person_id = 1 AND k.concept_name = 'Sepsis'")[0][0]
    ks = scan(omop, "SELECT measurement_id, value_as_number, measurement_datetime FROM measurement WHERE person_id = 1 "
                    "AND measurement_concept_id = 3023103 AND measurement_datetime >= ? ORDER BY measurement_datetime", onset)
    answer = ask(omop, "first K after the sepsis dx?", "2023-05-01T12:00:00Z", patient="1")
    assert answer.answer == [ks[0][1]] and f"measurement/{ks[0][0]}" in refs(answer)
    assert onset in answer.text
    temps = scan(omop, "SELECT measurement_id, value_as_number FROM measurement WHERE person_id = 1 AND "
                       "measurement_concept_id = 3020891 AND measurement_datetime >= '2023-03-01 12:00:00' AND "
                       "measurement_datetime <= '2023-03-02 12:00:00'")
    febrile = ask(omop, "is she febrile?", "2023-03-02T12:00:00Z", patient="1")
    assert febrile.answer == [any(v >= 38.0 for _, v in temps)]
    assert f"measurement/{max(temps, key=lambda r: r[1])[0]}" in refs(febrile)


def test_omop_days_of_therapy_from_administrations(omop):
    doses = scan(omop, "SELECT drug_exposure_id, drug_exposure_start_datetime FROM drug_exposure WHERE person_id = 1 AND "
                       "drug_concept_id = 1707687 AND stop_reason = 'completed' ORDER BY drug_exposure_start_datetime")
    # the course is the doses given, none 48 h apart; its days run from the first dose's day to the last one's
    answer = ask(omop, "how many days on vanc?", "2023-03-03T08:00:00Z", patient="1")
    first, last = (datetime.fromisoformat(doses[i][1]).date() for i in (0, -1))
    assert answer.answer == [(last - first).days + 1] and answer.unit == "days", answer.text
    assert {f"drug_exposure/{doses[0][0]}", f"drug_exposure/{doses[-1][0]}"} <= refs(answer)


@pytest.mark.parametrize(("limit", "unit"), [(150, "umol/L"), (210, "µmol/L")])
def test_a_lab_limit_in_another_unit_is_converted_for_the_analyte(db, limit, unit):
    """"Cr > 150 umol/L?" of values in mg/dL: the limit in mg/dL (÷ 88.4), never 150 read as mg/dL."""
    values = [v for (v,) in scan(db, "SELECT VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = 50912")]
    expected = any(v * 10 / 113.12 * 1000 > limit for v in values)  # 2.3 mg/dL = 203 µmol/L
    answer = ask(db, f"any creatinine > {limit} {unit}?", "2164-10-26T00:00:00Z")
    assert answer.answer == [expected]
    assert "mg/dL" in answer.text and "=" in answer.text
