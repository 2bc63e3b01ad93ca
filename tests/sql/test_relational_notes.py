"""Note questions about a patient of an OMOP or MIMIC-III database: the FHIR path's note plans over their notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fhirqa.sql.engine import ask_sql
from tests.sql.conftest import NOW
from tests.sql.mimic_data import build_with_notes

pytest.importorskip("lancedb")

# 10011's note says what 10006's do not (a leak would show).
NOTES = [
    (1, 10006, 142345, "2164-10-24", "2164-10-24 09:00:00", None, "Physician ", "Physician Progress Note", 17, None,
     "MICU progress note.\nSubjective: febrile overnight, no chest pain.\nObjective: Lactate 3.1. K 5.4.\n"
     "Assessment and Plan: sepsis, likely urinary source. Continue vancomycin."),
    (2, 10006, 142345, "2164-11-01", None, None, "Discharge summary", "Report", None, None,
     "Discharge Diagnosis: Sepsis. Hypertension.\nDischarge Condition: stable. Denies shortness of breath."),
    (3, 10006, 142345, "2164-10-25", "2164-10-25 10:00:00", None, "Nursing", "Nursing Note", 18, "1",
     "Entered in error: patient reports chest pain."),  # ISERROR: never read
    (4, 10011, 105331, "2126-08-16", "2126-08-16 08:00:00", None, "Physician ", "Physician Progress Note", 19, None,
     "Patient reports crushing chest pain. K 6.9."),
]


@pytest.fixture(scope="module")
def mimic_with_notes(tmp_path_factory) -> Path:
    """The test MIMIC-III database with a NOTEEVENTS table."""
    return build_with_notes(tmp_path_factory.mktemp("mimic-notes") / "mimic3.sqlite", NOTES)


def ask(question: str, db: Path, patient: str = "10006", now: str = "2164-11-15T12:00:00Z"):
    return ask_sql(question, patient_id=patient, now=now, connection=db)


def test_a_value_a_dated_note_states_is_read_from_that_note_and_cited(mimic_with_notes):
    answer = ask("K per the 10/24/2164 progress note?", mimic_with_notes)
    assert answer.status == "answered" and answer.answer == [5.4], answer.text
    assert [e.ref for e in answer.evidence] == ["noteevents/1"]


def test_a_mention_and_its_negation_are_read_from_the_patients_own_notes(mimic_with_notes):
    assert ask("Does the 10/24/2164 note mention chest pain?", mimic_with_notes).answer == [False]
    assert ask("Does the 8/16/2126 note mention chest pain?", mimic_with_notes, "10011",
               "2126-09-01T00:00:00Z").answer == [True]


def test_a_note_marked_in_error_is_never_read(mimic_with_notes):
    answer = ask("Does the 10/25/2164 note mention chest pain?", mimic_with_notes)
    assert answer.answer != [True], answer.text


def test_a_question_the_tables_answer_is_still_answered_from_them(mimic_with_notes):
    answer = ask("What was the last potassium?", mimic_with_notes)
    assert answer.answer == [4.6] and answer.evidence[0].ref.startswith("labevents/")
    assert "source_notes" not in answer.trace


def test_a_database_without_notes_answers_note_questions_as_before(mimic_db):
    answer = ask("K per the 10/24/2164 progress note?", mimic_db)
    assert answer.status in ("no-data", "answered") and "source_notes" not in answer.trace


def test_an_omop_person_gets_the_same_note_answer_as_the_fhir_patient_they_were_exported_from(sample_omop,
                                                                                               sample_store):
    from fhirqa.agent.engine import ask as ask_fhir
    from fhirqa.store import Store

    patient, moment = Store(sample_store).query(
        "SELECT patient_id, max(time) FROM note GROUP BY 1 ORDER BY 1 LIMIT 1").rows[0]
    question = f"Does the {moment.month}/{moment.day}/{moment.year} note mention chest pain?"
    # The OMOP person is asked by their source id, the FHIR patient id: answered from the database's note table.
    from_omop = ask_sql(question, patient_id=patient, now=NOW, connection=sample_omop)
    assert from_omop.status == "answered" and from_omop.evidence[0].ref.startswith("note/"), from_omop.text
    from_fhir = ask_fhir(question, patient_id=patient, now=NOW, db=sample_store)
    assert from_omop.answer == from_fhir.answer
