"""What clinicians ask of an OMOP or MIMIC-III patient that the views already answered for FHIR patients.

- Allergies: MIMIC-III keeps no allergy table, so the latest note's Allergies section answers "NKDA?",
  "allergic to penicillin?", "allergies?" (and says plainly when no note documents any); OMOP's allergy rows
  answer for OMOP patients.
- Starts in a window: "new meds since admission?", "meds started in the last 60 days?" list the drugs first
  ordered in the window; an earlier order of the same drug makes it a renewal, not a start.
- Counts of studies: "how many CXRs this admission?", "# echos?" count the reports of that kind (MIMIC keeps no
  study rows), each cited.
- "This admission" is the latest admission in ADMISSIONS, not the stay of the latest dated note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fhirqa.sql.engine import ask_sql, close_all
from tests.sql.mimic_data import build_with_notes

pytest.importorskip("lancedb")

# Subject 10006: admission 142345 (2164-10-23 21:09 → 11-01 17:15), then 155555 (2165-02-01 08:00 → 02-05 12:00).
NOTES = [
    (1, 10006, 142345, "2164-10-24", "2164-10-24 06:00:00", None, "Radiology", "CHEST (PORTABLE AP)", None, None,
     "IMPRESSION: Right lower lobe opacity."),
    (2, 10006, 142345, "2164-10-27", "2164-10-27 06:00:00", None, "Radiology", "CHEST (PORTABLE AP)", None, None,
     "IMPRESSION: Improving opacity."),
    (3, 10006, 142345, "2164-10-25", None, None, "Echo", "Report", None, None, "Conclusions: EF 55%."),
    (4, 10006, 142345, "2164-11-01", None, None, "Discharge summary", "Report", None, None,
     "Admission Date:  [**2164-10-23**]\n\nAllergies:\nPenicillins / Codeine\n\nChief Complaint:\nFever\n"),
    (5, 10006, 155555, "2165-02-01", None, None, "ECG", "Report", None, None, "Sinus rhythm."),  # dated by day only
    (6, 10006, 155555, "2165-02-02", "2165-02-02 10:00:00", None, "Radiology", "CHEST (PA & LAT)", None, None,
     "IMPRESSION: No acute process."),
    # an addendum to the first stay's chart, signed after the second stay: the latest dated note, not "this admission"
    (7, 10006, 142345, "2165-03-01", "2165-03-01 09:00:00", None, "Nursing/other", "Report", None, None,
     "Late entry: wound care teaching completed."),
]
LATER = "2165-03-10T12:00:00Z"


@pytest.fixture(scope="module")
def mimic(tmp_path_factory) -> Path:
    """The test MIMIC-III database with reports, a discharge summary and an addendum in NOTEEVENTS."""
    return build_with_notes(tmp_path_factory.mktemp("mimic-gaps") / "mimic3.sqlite", NOTES)


def ask(question: str, db: Path, now: str = LATER, patient: str = "10006"):
    return ask_sql(question, patient_id=patient, now=now, connection=db)


def test_mimic_allergies_are_read_from_the_latest_notes_allergies_section(mimic):
    nkda = ask("NKDA?", mimic)
    assert nkda.status == "answered" and nkda.answer == [False], nkda.text
    assert "Penicillins / Codeine" in nkda.text and [e.ref for e in nkda.evidence] == ["noteevents/4"]
    assert ask("allergic to penicillin?", mimic).answer == [True]
    assert ask("pcn allergy?", mimic).answer == [True]  # PCN: the penicillin class
    assert ask("is he allergic to sulfa?", mimic).answer == [False]
    assert ask("allergies?", mimic).answer == ["Penicillins", "Codeine"]
    assert ask("any drug allergies?", mimic).answer == [True]


def test_without_an_allergy_note_the_answer_says_the_record_keeps_no_allergy_list(mimic):
    answer = ask("NKDA?", mimic, now="2126-09-01T00:00:00Z", patient="10011")
    assert answer.status == "no-data" and answer.answer == []
    assert "no structured allergy list" in answer.text and "no note documents allergies" in answer.text


def test_new_meds_since_admission_are_the_drugs_first_ordered_in_the_stay(mimic):
    answer = ask("new meds since admission?", mimic, now="2164-10-30T12:00:00Z")
    # Heparin's order is dated by day only (STARTDATE 2164-10-23 00:00): it is the admission day's, hence the stay's
    assert answer.answer == ["Heparin", "Vancomycin"], answer.text
    assert ask("what meds were started in the last 60 days?", mimic).answer == ["Metoprolol Tartrate"]


def test_any_new_meds_asks_for_them_too(mimic):
    assert ask("any new meds this admit?", mimic, now="2164-10-30T12:00:00Z").answer == ["Heparin", "Vancomycin"]


def test_an_order_dated_by_its_day_only_belongs_to_the_stay_begun_that_day(mimic):
    # PRESCRIPTIONS STARTDATE 2164-10-23 00:00; the stay began at 16:43 (ED) that day
    answer = ask("any heparin this admission?", mimic, now="2164-10-30T12:00:00Z")
    assert answer.answer == [True], answer.text


def test_a_drug_ordered_before_the_window_is_a_renewal_not_a_start(mimic):
    answer = ask("meds started since 10/25/2164?", mimic, now="2164-10-30T12:00:00Z")
    assert answer.answer == [] and "renewed" in answer.text and "Vancomycin" in answer.text, answer.text


def test_a_count_of_studies_counts_the_reports_of_that_kind_in_the_latest_admission(mimic):
    cxr = ask("How many CXRs this admission?", mimic)
    # the latest admission is 155555, though the latest dated note (the addendum) belongs to 142345
    assert cxr.answer == [1] and [e.ref for e in cxr.evidence] == ["noteevents/6"], cxr.text
    assert ask("# ECGs this admit?", mimic).answer == [1]  # the admission-day ECG dated by its day only
    assert ask("how many echos has he had?", mimic).answer == [1] and ask("echo count?", mimic).answer == [1]
    assert ask("how many chest x-rays has he had?", mimic).answer == [3]


def test_omop_allergy_rows_answer_nkda_by_whether_an_allergen_is_a_drug(sample_store, sample_omop):
    from fhirqa.store import Store

    people = dict(Store(sample_store).query("SELECT name, patient_id FROM patient").rows)
    linda, matthew = people["Linda Taylor"], people["Matthew Young"]  # lisinopril; peanut

    def omop(question: str, pid: str):
        return ask_sql(question, patient_id=pid, now="2025-06-15T12:00:00Z", connection=sample_omop)

    try:
        assert omop("NKDA?", linda).answer == [False] and omop("NKDA?", matthew).answer == [True]
        assert omop("any drug allergies?", linda).answer == [True]
        assert omop("any drug allergies?", matthew).answer == [False]  # a peanut allergy is no drug allergy
        assert omop("allergic to lisinopril?", linda).answer == [True]
        assert omop("allergies?", matthew).answer == ["Peanut (substance)"]
    finally:
        close_all()  # other tests open the shared export read-only
