"""The note–table consistency check over a patient of an OMOP or MIMIC-III database loaded beside the views.

The same checker as for a FHIR patient (``fhirqa.consistency``), fed the database's rows read as the views
(:class:`fhirqa.sql.patient_rows.RelationalPatientRows`): notes from ``noteevents`` / ``note``, measurements from
``labevents`` + ``chartevents`` / ``measurement``, orders from ``prescriptions`` / ``drug_exposure``; both sides
cited as ``table/row id``.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from fhirqa.consistency import check_patient
from fhirqa.errors import FhirqaError
from fhirqa.sql.patient_rows import RelationalPatientRows, record_beside, sig_dose
from tests.sql.relational_beside import NOTE_REFS, OTHER, PATIENT, mimic_beside


@pytest.fixture(scope="module")
def store(sample_store: Path, tmp_path_factory) -> Path:
    """A store folder of the example patients with the test MIMIC-III database (and its notes) loaded beside."""
    root = tmp_path_factory.mktemp("relational-check")
    db = root / "db"
    shutil.copytree(sample_store, db)
    mimic_beside(db, root)
    return db


@pytest.fixture(scope="module")
def reports(store: Path) -> dict[str, dict]:
    """Subject 10006's notes checked: ``{note ref: {as written: check}}``."""
    rows = record_beside(store, PATIENT)
    assert rows is not None
    out: dict[str, dict] = {}
    for report in check_patient(None, PATIENT, rows=rows):
        out[report.note_ref] = {report.text[c.entity.span[0]:c.entity.span[1]]: c for c in report.checks}
    return out


def test_the_database_rows_read_as_the_views_columns_with_their_source_rows(store):
    rows = RelationalPatientRows.open(store / "mimic.duckdb", PATIENT)
    potassium = [r for r in rows.rows("observation") if r["name"] == "Potassium"]
    assert [(r["ref"], r["value"], r["unit"]) for r in potassium] == [
        ("labevents/1", 4.1, "mEq/L"), ("labevents/2", 5.4, "mEq/L"), ("labevents/3", 4.6, "mEq/L")]
    vancomycin = [r for r in rows.rows("medication") if r["medication_name"] == "Vancomycin"]
    assert [(r["ref"], r["dose"], r["dose_unit"]) for r in vancomycin] == [("prescriptions/2", 1000.0, "mg"),
                                                                           ("prescriptions/3", 1250.0, "mg")]
    stays = {r["ref"]: r for r in rows.rows("encounter")}
    assert set(stays) == {"admissions/1", "admissions/2"} and stays["admissions/1"]["class_code"] == "IMP"
    assert {r["encounter_ref"] for r in rows.rows("condition")} == {"admissions/1", "admissions/2"}
    assert rows.rows("allergy") == [] and rows.rows("care_plan") == []  # views MIMIC-III cannot be read as


def test_the_notes_are_the_patients_own_without_rows_marked_in_error(store):
    notes = RelationalPatientRows.open(store / "mimic.duckdb", PATIENT).rows("note")
    assert sorted(n["ref"] for n in notes) == sorted(NOTE_REFS)
    assert not any("9.9" in n["text"] or "6.9" in n["text"] for n in notes)  # the error row; the other subject's
    progress = next(n for n in notes if n["ref"] == "noteevents/1")
    assert progress["encounter_ref"] == "admissions/1" and progress["time"].isoformat() == "2164-10-24T11:00:00+00:00"


def test_rows_timed_after_now_are_hidden_as_on_the_fhir_path(store):
    from datetime import UTC, datetime

    rows = RelationalPatientRows.open(store / "mimic.duckdb", PATIENT, now=datetime(2164, 10, 24, 12, tzinfo=UTC))
    assert [r["value"] for r in rows.rows("observation") if r["name"] == "Potassium"] == [4.1, 5.4]
    assert [n["ref"] for n in rows.rows("note")] == ["noteevents/1"]  # the discharge summary is not written yet


def test_a_value_the_note_states_is_checked_against_the_labs_and_cited_on_both_sides(reports):
    checked = reports["noteevents/1"]
    potassium = checked["K 5.4"]
    assert potassium.status == "consistent" and potassium.items == ["Potassium"]
    assert [r["ref"] for r in potassium.rows] == ["labevents/2"]
    heart_rate = checked["HR 104"]
    assert heart_rate.status == "consistent" and heart_rate.rows[0]["ref"] == "chartevents/2"
    assert checked["vancomycin"].status == "consistent" and checked["vancomycin"].rows[0]["ref"] == "prescriptions/2"


def test_a_value_the_labs_do_not_hold_is_inconsistent_naming_the_field(reports):
    creatinine = reports["noteevents/1"]["Creatinine 2.9"]
    assert creatinine.status == "inconsistent" and "value" in creatinine.fields
    assert all(r["ref"].startswith("labevents/") for r in creatinine.rows)


def test_a_diagnosis_the_discharge_summary_names_is_found_among_the_stays_diagnoses(reports):
    hypertension = reports["noteevents/2"]["Hypertension"]
    assert hypertension.status == "consistent" and hypertension.rows[0]["ref"] == "diagnoses_icd/2"


def test_a_diagnosis_the_record_codes_under_another_name_of_it_is_found(store):
    """ICD-9 titles name sepsis "Unspecified septicemia", type 2 diabetes "…type II…": their ICD-9 codes (038.9,
    250.00) are in the lexicon's code families of those conditions."""
    from fhirqa.consistency import check_note

    report = check_note(None, PATIENT, "Assessment: sepsis. Type 2 diabetes.", "2165-02-03T10:00:00Z",
                        rows=record_beside(store, PATIENT))
    found = {report.text[c.entity.span[0]:c.entity.span[1]]: c for c in report.checks}
    assert found["sepsis"].status == "consistent" and found["sepsis"].items == ["Unspecified septicemia"]
    assert found["sepsis"].how.startswith("lexicon-icd") and found["sepsis"].rows[0]["ref"] == "diagnoses_icd/1"
    assert found["Type 2 diabetes"].status == "consistent" and found["Type 2 diabetes"].rows[0]["ref"] == "diagnoses_icd/3"


def test_another_subjects_note_is_checked_against_that_subjects_labs_only(store):
    rows = record_beside(store, OTHER)
    (report,) = check_patient(None, OTHER, rows=rows)
    potassium = next(c for c in report.checks if c.entity.name.upper() == "K")
    assert potassium.status == "consistent" and potassium.rows[0]["ref"] == "labevents/8"  # 10011's 6.9, not 10006's


def test_a_note_of_another_patient_is_not_found(store):
    with pytest.raises(FhirqaError, match="no note"):
        check_patient(None, PATIENT, "noteevents/4", rows=record_beside(store, PATIENT))


def test_a_patient_the_views_hold_is_read_from_the_views(store, sample_store):
    from fhirqa.store import Store

    patient = Store(sample_store).query("SELECT min(patient_id) FROM patient").rows[0][0]
    assert record_beside(store, patient) is None
    assert record_beside(store, "424242") is None  # in neither


def test_an_omop_person_gets_the_same_verdicts_as_the_fhir_patient_they_were_exported_from(sample_store, sample_omop):
    """The example patients exported to OMOP: every entity of every note is judged as on the FHIR views."""
    from fhirqa.sql.engine import open_database

    con = open_database(sample_omop)  # the process's one connection to the file (other tests open it too)
    with con.lock:
        people = con.raw.execute("SELECT person_id, person_source_value FROM person ORDER BY person_id").fetchall()
    compared = 0
    for person_id, patient_id in people:
        relational = check_patient(None, str(person_id), rows=RelationalPatientRows.open(sample_omop, str(person_id)))
        fhir = check_patient(sample_store, patient_id)
        assert len(relational) == len(fhir) > 0
        for ours, theirs in zip(relational, fhir, strict=True):
            assert ours.note_ref.startswith("note/") and ours.text.strip() == theirs.text.strip()
            assert [(c.entity.span, c.status, c.fields) for c in ours.checks] == [
                (c.entity.span, c.status, c.fields) for c in theirs.checks]
            compared += len(ours.checks)
            for check in ours.checks:
                assert all(not r.get("ref") or r["ref"].split("/")[0] in (
                    "measurement", "observation", "drug_exposure", "condition_occurrence", "procedure_occurrence")
                    for r in check.rows)
    assert compared > 1000


@pytest.mark.parametrize("sig, dose", [
    ("500.0 mg 2 times per 1.0 d", (500.0, "mg")),
    ("Inject 12 units under the skin at bedtime", (12.0, "units")),
    ("5,000 units SC", (5000.0, "units")),
    ("Take 2 tablets (500 mg) by mouth twice daily", (2.0, "tablets")),
    ("as directed", None),
    (None, None),
])
def test_an_omop_order_without_a_dose_takes_the_one_its_sig_starts_with(sig, dose):
    assert sig_dose(sig) == dose


def test_fhirqa_check_reads_a_patient_only_the_database_holds(store, capsys):
    from fhirqa.cli import main

    assert main(["check", PATIENT, "--db", str(store)]) == 1  # the creatinine disagrees
    out = capsys.readouterr().out
    assert "noteevents/1" in out and "Creatinine 2.9" in out and "2 note(s)" in out
    assert main(["check", PATIENT, "--db", str(store), "--note", "noteevents/2", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["note_ref"] == "noteevents/2" and report["patient_id"] == PATIENT
    assert report["entities"][0]["rows"][0]["ref"] == "diagnoses_icd/2"


def test_fhirqa_check_of_a_pasted_note_reads_the_databases_record(store, tmp_path, capsys):
    from fhirqa.cli import main

    note = tmp_path / "note.txt"
    note.write_text("K 4.6 this morning.", encoding="utf-8")
    code = main(["check", PATIENT, "--db", str(store), "--text", str(note), "--time", "2164-10-25T09:00:00Z", "--json"])
    (report,) = json.loads(capsys.readouterr().out)
    assert code == 0 and report["entities"][0]["status"] == "consistent"
    assert report["entities"][0]["rows"][0]["ref"] == "labevents/3"


# -- "does the note's K match the labs?" asked of the patient (the check_note_consistency tool on the SQL path) --
# the note plans run with the notes' index, as on the FHIR path
needs_index = pytest.mark.skipif(importlib.util.find_spec("lancedb") is None, reason="lancedb is not installed")


def ask(store: Path, question: str, patient: str = PATIENT, now: str = "2164-11-15T12:00:00Z"):
    from fhirqa.sql.engine import ask_sql

    return ask_sql(question, patient_id=patient, now=now, connection=store / "mimic.duckdb")


@needs_index
def test_a_question_whether_a_notes_value_matches_the_labs_is_answered_citing_both(store):
    answer = ask(store, "Does the 10/24/2164 note's potassium match the labs?")
    assert answer.status == "answered" and answer.answer == [True], answer.text
    assert [e.ref for e in answer.evidence] == ["noteevents/1", "labevents/2"]
    assert answer.trace["source_notes"] == "noteevents" and "5.4" in answer.text


@needs_index
def test_a_disagreement_is_answered_no_with_what_the_record_has(store):
    answer = ask(store, "Does the creatinine in the progress note match the lab table?")
    assert answer.answer == [False], answer.text
    assert "Creatinine 2.9" in answer.text and {"noteevents/1"} <= {e.ref for e in answer.evidence}


@needs_index
def test_the_record_of_the_question_is_as_of_its_now(store):
    answer = ask(store, "Do her notes and labs disagree anywhere?", now="2164-10-24T12:00:00Z")
    assert answer.answer == [True] and {e.ref for e in answer.evidence if e.ref.startswith("noteevents/")} == {
        "noteevents/1"}  # the discharge summary is written later


@needs_index
def test_another_subjects_question_reads_that_subjects_note_and_labs(store):
    answer = ask(store, "Does the note's K match the labs?", patient=OTHER, now="2126-09-01T00:00:00Z")
    assert answer.answer == [True], answer.text
    assert [e.ref for e in answer.evidence] == ["noteevents/4", "labevents/8"]
