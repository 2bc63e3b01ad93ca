"""The notes as documents for a MIMIC-III patient ("how many notes this admission?", "who wrote the last note?",
"summarize his notes"): the FHIR path's plan over NOTEEVENTS, with CAREGIVERS giving an author's role."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fhirqa.sql.engine import ask_sql
from tests.sql.mimic_data import build_with_notes

pytest.importorskip("lancedb")

NOTES = [
    (1, 10006, 142345, "2164-10-24", "2164-10-24 09:00:00", None, "Physician ", "Physician Progress Note", 17, None,
     "Assessment and Plan: sepsis, likely urinary source. Continue vancomycin."),
    (2, 10006, 142345, "2164-10-25", "2164-10-25 10:00:00", None, "Rehab Services", "Rehab/PT Eval", 18, None,
     "Assessment: ambulates 50 ft with walker.\nPlan: PT daily."),
    (3, 10006, 142345, "2164-10-26", "2164-10-26 10:00:00", None, "Nursing", "Nursing Note", 19, "1",
     "Entered in error."),  # ISERROR: not a note
    (4, 10006, 142345, "2164-11-01", None, None, "Discharge summary", "Report", 20, None,
     "Discharge Diagnosis: Sepsis.\nDischarge Condition: stable."),
]
ROLES = [(1, 17, "MD", "Resident/Fellow/PA/NP"), (2, 18, "PT", "Rehabilitation"), (3, 20, "MD", "Attending")]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = build_with_notes(tmp_path_factory.mktemp("mimic-note-docs") / "mimic3.sqlite", NOTES)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE CAREGIVERS (ROW_ID INTEGER, CGID INTEGER, LABEL TEXT, DESCRIPTION TEXT)")
    con.executemany("INSERT INTO CAREGIVERS VALUES (?, ?, ?, ?)", ROLES)
    con.commit()
    con.close()
    return path


def ask(question: str, db: Path):
    return ask_sql(question, patient_id="10006", now="2164-11-15T12:00:00Z", connection=db)


def test_the_notes_of_the_admission_are_counted_without_the_one_in_error(db):
    answer = ask("how many notes this admission?", db)
    assert answer.answer == [3], answer.text
    assert {e.ref for e in answer.evidence} == {"noteevents/1", "noteevents/2", "noteevents/4"}


def test_the_author_is_the_caregiver_with_the_role_caregivers_gives(db):
    answer = ask("who wrote the last note?", db)
    assert answer.answer == ["caregiver 20 (MD)"], answer.text
    assert [e.ref for e in answer.evidence if e.field == "note.author"] == ["noteevents/4"]


def test_a_services_note_is_read_by_what_the_note_says_of_itself(db):
    answer = ask("what did the PT note say?", db)
    assert answer.status == "answered" and "ambulates 50 ft with walker" in answer.answer[0], answer.text


def test_her_notes_summarized_say_how_many_were_read(db):
    answer = ask("summarize his notes", db)
    assert answer.status == "answered" and len(answer.answer) == 3
    assert "3 notes in the latest stay (admission/142345)" in answer.text


def test_who_saw_him_last_is_the_last_notes_author_when_no_visit_names_a_clinician(db):
    answer = ask("who saw him last?", db)
    assert answer.answer == ["caregiver 20 (MD)"], answer.text
    assert "visits name no clinician" in answer.text
