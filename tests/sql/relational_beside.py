"""A MIMIC-III database with notes, loaded beside a store the way ``fhirqa ingest --mimic`` loads it.

The tables are the test MIMIC-III database's (:mod:`tests.sql.mimic_data`: subjects 10006 and 10011), written as
upper-case CSV files with a ``NOTEEVENTS`` table added, and loaded by :func:`fhirqa.sql.ingest_mimic` into
``<store>/mimic.duckdb``. Subject 10006's progress note states values the tables hold (K 5.4 on the morning of
10/24, HR 104) and one they do not (creatinine 2.9: the record has 2.3 and 1.7); subject 10011's note states a K
of 6.9 that is only 10011's, so a leak between the two would show.
"""

from __future__ import annotations

import csv
from pathlib import Path

from tests.sql.mimic_data import ROWS, TABLES

PATIENT, OTHER = "10006", "10011"
NOTE_COLUMNS = ("ROW_ID INTEGER PRIMARY KEY, SUBJECT_ID INTEGER, HADM_ID INTEGER, CHARTDATE TEXT, CHARTTIME TEXT, "
                "STORETIME TEXT, CATEGORY TEXT, DESCRIPTION TEXT, CGID INTEGER, ISERROR TEXT, TEXT TEXT")
NOTES = [
    (1, 10006, 142345, "2164-10-24", "2164-10-24 11:00:00", None, "Physician ", "Physician Progress Note", 17, None,
     "MICU progress note.\nObjective: HR 104. K 5.4 this morning. Creatinine 2.9 this morning.\n"
     "Assessment and Plan: hypertension. Continue vancomycin."),
    (2, 10006, 142345, "2164-11-01", None, None, "Discharge summary", "Report", None, None,
     "Discharge Diagnosis: Hypertension.\nDischarge Condition: stable."),
    (3, 10006, 142345, "2164-10-25", "2164-10-25 10:00:00", None, "Nursing", "Nursing Note", 18, "1",
     "Entered in error: K 9.9."),  # ISERROR: never read
    (4, 10011, 105331, "2126-08-20", "2126-08-20 09:00:00", None, "Physician ", "Physician Progress Note", 19, None,
     "Patient reports crushing chest pain. K 6.9 this morning."),
]
#: The refs of subject 10006's notes with text, newest first (the error row left out).
NOTE_REFS = ["noteevents/2", "noteevents/1"]


def _columns(spec: str) -> list[str]:
    return [part.split()[0] for part in spec.split(", ")]


def write_csv(folder: Path) -> Path:
    """The tables (and NOTEEVENTS) as CSV files in ``folder``, as a MIMIC-III download has them."""
    folder.mkdir(parents=True, exist_ok=True)
    tables = {**{t: (TABLES[t], ROWS.get(t, [])) for t in TABLES}, "NOTEEVENTS": (NOTE_COLUMNS, NOTES)}
    for table, (spec, rows) in tables.items():
        columns = _columns(spec)
        with (folder / f"{table}.csv").open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if v is None else v for v in row])
    return folder


def mimic_beside(store: Path, scratch: Path) -> Path:
    """Load the database into ``<store>/mimic.duckdb`` (as ``fhirqa ingest --mimic`` does); its path."""
    from fhirqa.sql import ingest_mimic

    target = store / "mimic.duckdb"
    ingest_mimic(write_csv(scratch / "mimic-csv"), target)
    return target
