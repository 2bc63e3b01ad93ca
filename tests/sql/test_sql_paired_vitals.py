"""A paired vital (blood pressure: systolic and diastolic) read over time on the SQL path reads both parts, as the FHIR
path does (``plans.analyte_handles``, the lexicon's ``components``): a trend, a change or a range is answered per part,
never the first systolic against the last diastolic, and a run of readings is listed as "120/80" pairs.

MIMIC-III charts each part as its own CHARTEVENTS row (NBP 220179/220180, arterial 220050/220051), OMOP as two
measurements (LOINC 8480-6, 8462-4): the parts of one reading are the rows of one instant, of the same device when two
devices charted at that instant. Every expected value is read here from the rows the test wrote."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql
from tests.sql.mimic_data import build

from .sqlite_tables import OMOP_CORE_TABLES, write_sqlite

NOW = "2164-10-25T12:00:00Z"
SYSTOLIC, DIASTOLIC = (220179, 220050), (220180, 220051)  # NBP, arterial
ITEMS = [(91, 220179, "Non Invasive Blood Pressure systolic", "NBPs"), (92, 220180, "Non Invasive Blood Pressure diastolic", "NBPd"),
         (93, 220050, "Arterial Blood Pressure systolic", "ABPs"), (94, 220051, "Arterial Blood Pressure diastolic", "ABPd")]
CHARTED = [("2164-10-24 08:00:00", 220179, 118), ("2164-10-24 08:00:00", 220180, 70),
           ("2164-10-24 08:00:00", 220050, 124), ("2164-10-24 08:00:00", 220051, 66),  # an arterial line at the same time
           ("2164-10-24 20:00:00", 220179, 96), ("2164-10-24 20:00:00", 220180, 58),
           ("2164-10-25 06:00:00", 220179, 142), ("2164-10-25 06:00:00", 220180, 88)]


@pytest.fixture(scope="module")
def mimic(tmp_path_factory) -> Path:
    path = build(tmp_path_factory.mktemp("bp") / "mimic3.sqlite")
    con = sqlite3.connect(path)
    for rid, item, label, abbreviation in ITEMS:
        con.execute("INSERT INTO D_ITEMS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rid, item, label, abbreviation, "metavision", "chartevents", "Routine Vital Signs", "mmHg", "Numeric", None))
    for i, (when, item, value) in enumerate(CHARTED):
        con.execute("INSERT INTO CHARTEVENTS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (100 + i, 10006, 142345, 206504, item, when, None, 1, str(value), float(value), "mmHg", 0, 0, None, None))
    con.commit()
    con.close()
    return path


def part(db: Path, items: tuple[int, ...]) -> list[tuple[str, int, float]]:
    """(charttime, itemid, value) of one part, in time order (ties: row order)."""
    con = sqlite3.connect(db)
    try:
        marks = ", ".join("?" * len(items))
        return con.execute(f"SELECT CHARTTIME, ITEMID, VALUENUM FROM CHARTEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID IN "
                           f"({marks}) ORDER BY CHARTTIME, ROW_ID", items).fetchall()
    finally:
        con.close()


def trend(values: list[float]) -> str:
    relative = (values[-1] - values[0]) / abs(values[0])
    return "increasing" if relative > 0.05 else "decreasing" if relative < -0.05 else "stable"  # the 5 % rule


def test_a_bp_trend_is_one_trend_per_part(mimic):
    systolic, diastolic = ([v for _, _, v in part(mimic, items)] for items in (SYSTOLIC, DIASTOLIC))
    answer = ask_sql("BP trend", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [trend(systolic), trend(diastolic)]
    assert "systolic" in answer.text and "diastolic" in answer.text


def test_a_bp_change_is_one_change_per_part(mimic):
    systolic, diastolic = ([v for _, _, v in part(mimic, items)] for items in (SYSTOLIC, DIASTOLIC))
    answer = ask_sql("change in BP", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [systolic[-1] - systolic[0], diastolic[-1] - diastolic[0]]


def test_a_bp_range_is_the_lowest_and_highest_of_each_part(mimic):
    systolic, diastolic = ([v for _, _, v in part(mimic, items)] for items in (SYSTOLIC, DIASTOLIC))
    answer = ask_sql("BP range", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == [min(systolic), max(systolic), min(diastolic), max(diastolic)]
    assert "ranged from" in answer.text


def fmt(value: float) -> str:
    return f"{value:g}"


def readings(db: Path) -> list[str]:
    """"s/d" of each reading in time order: the parts charted at one time by one device (NBP with NBP)."""
    device = {220179: "nbp", 220180: "nbp", 220050: "art", 220051: "art"}
    dia = {(t, device[i]): v for t, i, v in part(db, DIASTOLIC)}
    return [f"{fmt(v)}/{fmt(dia[(t, device[i])])}" for t, i, v in part(db, SYSTOLIC)]


def test_the_last_readings_are_listed_as_pairs(mimic):
    answer = ask_sql("last 2 BPs", patient_id="10006", now=NOW, connection=str(mimic))
    assert answer.answer == readings(mimic)[-2:]


def test_two_devices_at_one_time_are_two_readings(mimic):
    answer = ask_sql("BP history", patient_id="10006", now=NOW, connection=str(mimic))
    assert sorted(answer.answer) == sorted(readings(mimic))  # 124/66 (arterial) and 118/70 (NBP), never 124/70


OMOP_TABLES = {
    **OMOP_CORE_TABLES,
    "condition_occurrence": "condition_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, condition_concept_id INTEGER, "
                            "condition_start_date TEXT",
    "measurement": "measurement_id INTEGER PRIMARY KEY, person_id INTEGER, measurement_concept_id INTEGER, "
                   "measurement_datetime TEXT, value_as_number REAL, unit_source_value TEXT",
}
SBP, DBP = 3004249, 3012888
OMOP_ROWS = {
    "person": [(1, 8532, 1960, "1960-02-02", "p1")],
    "concept": [(SBP, "Systolic blood pressure", "Measurement", "LOINC", "Clinical Observation", "8480-6"),
                (DBP, "Diastolic blood pressure", "Measurement", "LOINC", "Clinical Observation", "8462-4")],
    "visit_occurrence": [], "condition_occurrence": [],
    "measurement": [(1, 1, SBP, "2021-01-04 09:00:00", 150.0, "mm[Hg]"), (2, 1, DBP, "2021-01-04 09:00:00", 95.0, "mm[Hg]"),
                    (3, 1, SBP, "2022-01-10 09:00:00", 128.0, "mm[Hg]"), (4, 1, DBP, "2022-01-10 09:00:00", 94.0, "mm[Hg]"),
                    (5, 1, SBP, "2023-01-09 09:00:00", 131.0, "mm[Hg]"), (6, 1, DBP, "2023-01-09 09:00:00", 80.0, "mm[Hg]")],
}


@pytest.fixture(scope="module")
def omop(tmp_path_factory) -> Path:
    return write_sqlite(tmp_path_factory.mktemp("bp-omop") / "omop.sqlite", OMOP_TABLES, OMOP_ROWS)


def measured(concept: int) -> list[float]:
    return [r[4] for r in sorted(OMOP_ROWS["measurement"], key=lambda r: r[3]) if r[2] == concept]


def test_omop_bp_trend_and_pairs(omop):
    answer = ask_sql("BP trend", patient_id="1", now="2023-06-01T00:00:00Z", connection=str(omop))
    assert answer.answer == [trend(measured(SBP)), trend(measured(DBP))]
    listed = ask_sql("last 2 BPs", patient_id="1", now="2023-06-01T00:00:00Z", connection=str(omop))
    assert listed.answer == [f"{fmt(s)}/{fmt(d)}" for s, d in zip(measured(SBP), measured(DBP), strict=True)][-2:]
