"""A small MIMIC-III-shaped SQLite database: official table and column names (upper case, as in the CSV files).

Two patients. Subject 10006 is the one the tests ask about; subject 10011 has rows in every table with
different values (a higher potassium, another diagnosis), so a leak would show up in the answers.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

TABLES = {
    "PATIENTS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, GENDER TEXT, DOB TEXT, DOD TEXT, DOD_HOSP TEXT, DOD_SSN TEXT, "
                "EXPIRE_FLAG INTEGER",
    "ADMISSIONS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ADMITTIME TEXT, DISCHTIME TEXT, DEATHTIME TEXT, "
                  "ADMISSION_TYPE TEXT, ADMISSION_LOCATION TEXT, DISCHARGE_LOCATION TEXT, INSURANCE TEXT, LANGUAGE TEXT, "
                  "RELIGION TEXT, MARITAL_STATUS TEXT, ETHNICITY TEXT, EDREGTIME TEXT, EDOUTTIME TEXT, DIAGNOSIS TEXT, "
                  "HOSPITAL_EXPIRE_FLAG INTEGER, HAS_CHARTEVENTS_DATA INTEGER",
    "ICUSTAYS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ICUSTAY_ID INTEGER, DBSOURCE TEXT, "
                "FIRST_CAREUNIT TEXT, LAST_CAREUNIT TEXT, FIRST_WARDID INTEGER, LAST_WARDID INTEGER, INTIME TEXT, OUTTIME TEXT, "
                "LOS REAL",
    "D_LABITEMS": "ROW_ID INTEGER PRIMARY KEY, ITEMID INTEGER, LABEL TEXT, FLUID TEXT, CATEGORY TEXT, LOINC_CODE TEXT",
    "LABEVENTS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ITEMID INTEGER, CHARTTIME TEXT, VALUE TEXT, "
                 "VALUENUM REAL, VALUEUOM TEXT, FLAG TEXT",
    "D_ITEMS": "ROW_ID INTEGER PRIMARY KEY, ITEMID INTEGER, LABEL TEXT, ABBREVIATION TEXT, DBSOURCE TEXT, LINKSTO TEXT, "
               "CATEGORY TEXT, UNITNAME TEXT, PARAM_TYPE TEXT, CONCEPTID INTEGER",
    "CHARTEVENTS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ICUSTAY_ID INTEGER, ITEMID INTEGER, "
                   "CHARTTIME TEXT, STORETIME TEXT, CGID INTEGER, VALUE TEXT, VALUENUM REAL, VALUEUOM TEXT, WARNING INTEGER, "
                   "ERROR INTEGER, RESULTSTATUS TEXT, STOPPED TEXT",
    "PRESCRIPTIONS": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ICUSTAY_ID INTEGER, STARTDATE TEXT, "
                     "ENDDATE TEXT, DRUG_TYPE TEXT, DRUG TEXT, DRUG_NAME_POE TEXT, DRUG_NAME_GENERIC TEXT, FORMULARY_DRUG_CD TEXT, "
                     "GSN TEXT, NDC TEXT, PROD_STRENGTH TEXT, DOSE_VAL_RX TEXT, DOSE_UNIT_RX TEXT, FORM_VAL_DISP TEXT, "
                     "FORM_UNIT_DISP TEXT, ROUTE TEXT",
    "INPUTEVENTS_MV": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ICUSTAY_ID INTEGER, STARTTIME TEXT, "
                      "ENDTIME TEXT, ITEMID INTEGER, AMOUNT REAL, AMOUNTUOM TEXT, RATE REAL, RATEUOM TEXT, STORETIME TEXT, "
                      "CGID INTEGER, ORDERID INTEGER, LINKORDERID INTEGER, ORDERCATEGORYNAME TEXT, SECONDARYORDERCATEGORYNAME TEXT, "
                      "ORDERCOMPONENTTYPEDESCRIPTION TEXT, ORDERCATEGORYDESCRIPTION TEXT, PATIENTWEIGHT REAL, TOTALAMOUNT REAL, "
                      "TOTALAMOUNTUOM TEXT, ISOPENBAG INTEGER, CONTINUEINNEXTDEPT INTEGER, CANCELREASON INTEGER, "
                      "STATUSDESCRIPTION TEXT, COMMENTS_EDITEDBY TEXT, COMMENTS_CANCELEDBY TEXT, COMMENTS_DATE TEXT, "
                      "ORIGINALAMOUNT REAL, ORIGINALRATE REAL",
    "INPUTEVENTS_CV": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, ICUSTAY_ID INTEGER, CHARTTIME TEXT, "
                      "ITEMID INTEGER, AMOUNT REAL, AMOUNTUOM TEXT, RATE REAL, RATEUOM TEXT, STORETIME TEXT, CGID INTEGER, "
                      "ORDERID INTEGER, LINKORDERID INTEGER, STOPPED TEXT, NEWBOTTLE INTEGER, ORIGINALAMOUNT REAL, "
                      "ORIGINALAMOUNTUOM TEXT, ORIGINALROUTE TEXT, ORIGINALRATE REAL, ORIGINALRATEUOM TEXT, ORIGINALSITE TEXT",
    "DIAGNOSES_ICD": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, SEQ_NUM INTEGER, ICD9_CODE TEXT",
    "D_ICD_DIAGNOSES": "ROW_ID INTEGER PRIMARY KEY, ICD9_CODE TEXT, SHORT_TITLE TEXT, LONG_TITLE TEXT",
    "PROCEDURES_ICD": "ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, SEQ_NUM INTEGER, ICD9_CODE TEXT",
    "D_ICD_PROCEDURES": "ROW_ID INTEGER PRIMARY KEY, ICD9_CODE TEXT, SHORT_TITLE TEXT, LONG_TITLE TEXT",
}

ROWS: dict[str, list[tuple]] = {
    "PATIENTS": [(1, 10006, "M", "2094-03-05 00:00:00", None, None, None, 0),
                 (2, 10011, "F", "2090-06-05 00:00:00", "2126-08-28 00:00:00", "2126-08-28 00:00:00", None, 1)],
    "ADMISSIONS": [
        (1, 10006, 142345, "2164-10-23 21:09:00", "2164-11-01 17:15:00", None, "EMERGENCY", "EMERGENCY ROOM ADMIT", "HOME",
         "Medicare", None, "CATHOLIC", "SEPARATED", "BLACK/AFRICAN AMERICAN", "2164-10-23 16:43:00", "2164-10-23 23:00:00",
         "SEPSIS", 0, 1),
        (2, 10006, 155555, "2165-02-01 08:00:00", "2165-02-05 12:00:00", None, "ELECTIVE", "PHYS REFERRAL/NORMAL DELI", "HOME",
         "Medicare", None, "CATHOLIC", "SEPARATED", "BLACK/AFRICAN AMERICAN", None, None, "CHEST PAIN", 0, 1),
        (3, 10011, 105331, "2126-08-14 22:32:00", "2126-08-28 18:59:00", "2126-08-28 18:59:00", "EMERGENCY", "TRANSFER FROM HOSP",
         "DEAD/EXPIRED", "Private", None, "CATHOLIC", "SINGLE", "UNKNOWN/NOT SPECIFIED", None, None, "HEPATITIS B", 1, 1)],
    "ICUSTAYS": [(1, 10006, 142345, 206504, "carevue", "MICU", "MICU", 52, 52, "2164-10-23 21:10:15", "2164-10-25 12:21:07", 1.6),
                 (2, 10011, 105331, 232110, "metavision", "MICU", "MICU", 15, 15, "2126-08-14 22:34:00", "2126-08-28 18:59:00", 13.8)],
    "D_LABITEMS": [(1, 50971, "Potassium", "Blood", "Chemistry", "2823-3"), (2, 50912, "Creatinine", "Blood", "Chemistry", "2160-0"),
                   (3, 51222, "Hemoglobin", "Blood", "Hematology", "718-7"), (4, 51097, "Potassium, Urine", "Urine", "Chemistry", "2828-2")],
    "LABEVENTS": [
        (1, 10006, 142345, 50971, "2164-10-23 17:30:00", "4.1", 4.1, "mEq/L", None),
        (2, 10006, 142345, 50971, "2164-10-24 04:00:00", "5.4", 5.4, "mEq/L", "abnormal"),
        (3, 10006, 142345, 50971, "2164-10-25 04:00:00", "4.6", 4.6, "mEq/L", None),
        (4, 10006, 142345, 50912, "2164-10-23 17:30:00", "2.3", 2.3, "mg/dL", "abnormal"),
        (5, 10006, 142345, 50912, "2164-10-25 04:00:00", "1.7", 1.7, "mg/dL", "abnormal"),
        (6, 10006, 155555, 51222, "2165-02-01 09:00:00", "11.2", 11.2, "g/dL", "abnormal"),
        (7, 10006, 155555, 51097, "2165-02-02 09:00:00", "38", 38.0, "mEq/L", None),
        (8, 10011, 105331, 50971, "2126-08-20 05:00:00", "6.9", 6.9, "mEq/L", "abnormal"),
        (9, 10011, 105331, 50971, "2170-01-01 05:00:00", "7.2", 7.2, "mEq/L", "abnormal"),
        (10, 10011, 105331, 50912, "2126-08-20 05:00:00", "4.8", 4.8, "mg/dL", "abnormal")],
    "D_ITEMS": [(1, 211, "Heart Rate", None, "carevue", "chartevents", None, "bpm", None, None),
                (2, 220045, "Heart Rate", "HR", "metavision", "chartevents", "Routine Vital Signs", "bpm", "Numeric", None),
                (3, 30045, "Insulin", None, "carevue", "inputevents_cv", None, None, None, None),
                (4, 225158, "NaCl 0.9%", "NaCl 0.9%", "metavision", "inputevents_mv", "Fluids/Intake", "mL", "Solution", None)],
    "CHARTEVENTS": [
        (1, 10006, 142345, 206504, 211, "2164-10-23 22:00:00", None, 1, "88", 88.0, "bpm", 0, 0, None, None),
        (2, 10006, 142345, 206504, 211, "2164-10-24 08:00:00", None, 1, "104", 104.0, "bpm", 0, 0, None, None),
        (3, 10006, 142345, 206504, 211, "2164-10-24 09:00:00", None, 1, "250", 250.0, "bpm", 0, 1, None, None),
        (4, 10011, 105331, 232110, 220045, "2126-08-15 08:00:00", None, 1, "130", 130.0, "bpm", 0, 0, None, None)],
    "PRESCRIPTIONS": [
        (1, 10006, 142345, 206504, "2164-10-23 00:00:00", "2164-10-26 00:00:00", "MAIN", "Heparin", "Heparin", "Heparin Sodium",
         "HEPA5I", "006549", "63323026201", "5000 Unit/mL Vial", "5000", "UNIT", "1", "mL", "SC"),
        (2, 10006, 142345, 206504, "2164-10-24 00:00:00", "2164-10-28 00:00:00", "MAIN", "Vancomycin", "Vancomycin",
         "Vancomycin HCl", "VANC1F", "043952", "00338355248", "1g Frozen Bag", "1000", "mg", "1", "BAG", "IV"),
        (3, 10006, 142345, 206504, "2164-10-26 00:00:00", "2164-10-30 00:00:00", "MAIN", "Vancomycin", "Vancomycin",
         "Vancomycin HCl", "VANC1F", "043952", "00338355248", "1g Frozen Bag", "1250", "mg", "1", "BAG", "IV"),
        (4, 10006, 155555, None, "2165-02-01 00:00:00", "2199-01-01 00:00:00", "MAIN", "Metoprolol Tartrate", "Metoprolol",
         "Metoprolol Tartrate", "METO25", "006396", "51079025520", "25mg Tab", "25", "mg", "1", "TAB", "PO"),
        (5, 10011, 105331, 232110, "2126-08-15 00:00:00", "2126-08-20 00:00:00", "MAIN", "Lorazepam", "Lorazepam", "Lorazepam",
         "LORA2I", "003757", "00641604425", "2mg/mL Vial", "1", "mg", "0.5", "mL", "IV")],
    "INPUTEVENTS_CV": [(1, 10006, 142345, 206504, "2164-10-24 02:00:00", 30045, 4.0, "U", None, None, None, 1, 1, 1, None, None,
                        4.0, "U", "Intravenous", None, None, None),
                       (2, 10006, 142345, 206504, "2164-10-24 14:00:00", 30045, 6.0, "U", None, None, None, 1, 2, 2, None, None,
                        6.0, "U", "Intravenous", None, None, None)],
    "INPUTEVENTS_MV": [(1, 10011, 105331, 232110, "2126-08-15 09:00:00", "2126-08-15 10:00:00", 225158, 500.0, "ml", 500.0,
                        "mL/hour", None, 1, 1, 1, "Fluids", None, "Main order parameter", "Continuous IV", 70.0, 500.0, "ml",
                        0, 0, 0, "FinishedRunning", None, None, None, 500.0, 500.0)],
    "DIAGNOSES_ICD": [(1, 10006, 142345, 1, "0389"), (2, 10006, 142345, 2, "4019"), (3, 10006, 155555, 1, "25000"),
                      (4, 10011, 105331, 1, "5849")],
    "D_ICD_DIAGNOSES": [(1, "0389", "Septicemia NOS", "Unspecified septicemia"),
                        (2, "4019", "Hypertension NOS", "Unspecified essential hypertension"),
                        (3, "25000", "DMII wo cmp nt st uncntr", "Diabetes mellitus without mention of complication, type II or "
                         "unspecified type, not stated as uncontrolled"),
                        (4, "5849", "Acute kidney failure NOS", "Acute kidney failure, unspecified")],
    "PROCEDURES_ICD": [(1, 10006, 142345, 1, "3893"), (2, 10011, 105331, 1, "9604")],
    "D_ICD_PROCEDURES": [(1, "3893", "Venous cath NEC", "Venous catheterization, not elsewhere classified"),
                         (2, "9604", "Insert endotracheal tube", "Insertion of endotracheal tube")],
}


def build(path: Path) -> Path:
    """Write the database to ``path`` and return it."""
    con = sqlite3.connect(path)
    for table, columns in TABLES.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        rows = ROWS.get(table, [])
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    con.commit()
    con.close()
    return path


#: MIMIC-III NOTEEVENTS columns, as in the CSV.
NOTE_COLUMNS = ("ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, CHARTDATE TEXT, CHARTTIME TEXT, "
                "STORETIME TEXT, CATEGORY TEXT, DESCRIPTION TEXT, CGID INTEGER, ISERROR TEXT, TEXT TEXT")


def build_with_notes(path: Path, notes: list[tuple]) -> Path:
    """The database of :func:`build` with a NOTEEVENTS table holding ``notes`` (rows in NOTE_COLUMNS order)."""
    build(path)
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE NOTEEVENTS ({NOTE_COLUMNS})")
    con.executemany(f"INSERT INTO NOTEEVENTS VALUES ({', '.join('?' * 11)})", notes)
    con.commit()
    con.close()
    return path
