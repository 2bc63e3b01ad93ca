"""Kinds of note as a kind of record (fhirqa.notes.kinds, lexicon/note_kinds.json)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.notes import kinds
from fhirqa.notes.sources import Note

NOW = datetime(2165, 6, 9, 12, tzinfo=UTC)

SUMMARY = """Admission Date:  [**2165-5-20**]     Discharge Date:   [**2165-5-31**]

Chief Complaint:
Worsening shortness of breath and wheezing

Discharge Medications:
1. Prednisone 40 mg PO daily
2. Metoprolol Tartrate 25 mg PO BID
3. Albuterol Inhaler 2 puffs q4h

Discharge Disposition:
Extended Care

Discharge Diagnosis:
Primary:
COPD exacerbation

Secondary:
Hypercarbic respiratory failure

Discharge Condition:
Mental Status: Clear and coherent.
"""

CXR = """[**2165-5-27**] 3:34 PM
CHEST (PORTABLE AP)                                             Clip # [**Clip Number (Radiology) 41769**]
Reason: worsening shortness of breath
Admitting Diagnosis: WORSENING SHORTNESS OF BREATH AND WHEEZING
______________________________________________________________________________
                                 FINAL REPORT
FINDINGS:  Portable AP view of the chest. There is no pneumothorax.

IMPRESSION:  Hyperinflated lungs without focal consolidation.
"""


def note(i: int, kind: str, text: str, when: str, stay: str = "admission/2") -> Note:
    return Note(note_id=f"noteevents/{i}", patient_id="p", ref=f"noteevents/{i}", text=text,
                time=datetime.fromisoformat(when).replace(tzinfo=UTC), note_type=kind, encounter_ref=stay)


NOTES = [
    note(1, "Discharge summary: Report", SUMMARY.replace("Extended Care", "Home"), "2164-08-18", "admission/1"),
    note(2, "Radiology: CHEST (PORTABLE AP)", CXR.replace("Hyperinflated", "Clear"), "2164-08-12T10:00", "admission/1"),
    note(3, "Radiology: CHEST (PORTABLE AP)", CXR, "2165-05-27T15:34"),
    note(4, "Radiology: CT HEAD W/O CONTRAST", "IMPRESSION: No acute intracranial process.", "2165-05-28T09:00"),
    note(5, "Nursing/other: Report", "Skin: Stage II pressure ulcer on sacrum.", "2165-05-28T05:00"),
    note(6, "Physician: Physician Resident Progress Note", "Labs / Radiology: Na 139, K 4.7, Cr 1.1", "2165-05-29T09:13"),
    note(7, "Nursing: Nursing Progress Note", "Skin: Skin intact.", "2165-05-30T05:05"),
    note(8, "ECG: Report", "Atrial fibrillation with rapid ventricular response.", "2165-05-20"),
    note(9, "Discharge summary: Report", SUMMARY, "2165-05-31"),
]


@pytest.mark.parametrize(("note_type", "expected"), [
    ("Discharge summary: Report", {"discharge summary"}),
    ("Radiology: CHEST (PORTABLE AP)", {"chest x-ray", "radiology report"}),
    ("Radiology: CT HEAD W/O CONTRAST", {"radiology report"}),
    ("Nursing: Nursing Progress Note", {"nursing note"}),  # a nursing progress note is not a physician's
    ("Physician: Physician Resident Progress Note", {"progress note"}),
    ("Echo: Report", {"echo"}),
    ("ECG: Report", {"ECG"}),
    ("Progress note", {"progress note"}),  # a FHIR DocumentReference.type display
    ("History and physical note", {"H&P"}),
    (None, set()),
])
def test_a_note_kind_comes_from_its_stored_type(note_type: str | None, expected: set[str]) -> None:
    assert kinds.kinds_of(note_type) == expected


@pytest.mark.parametrize(("question", "kind"), [
    ("date of last d/c summary?", "discharge summary"),
    ("any pneumothorax on the chest x-ray reports?", "chest x-ray"),  # the narrower kind first
    ("# of imaging reports this admit?", "radiology report"),
    ("date of most recent TTE?", "echo"),
    ("last EKG show afib?", "ECG"),
    ("date of the most recent nursing progress note?", "nursing note"),
    ("K in the last progress note?", "progress note"),
    ("what is the latest potassium?", None),
])
def test_the_words_clinicians_use_name_the_kind(question: str, kind: str | None) -> None:
    assert kinds.asked_kind(question) == kind


def ask(question: str, kind: str | None = None, **kw: object) -> kinds.KindAnswer:
    return kinds.answer(question, kind or kinds.asked_kind(question) or "", NOTES, NOW, **kw)  # type: ignore[arg-type]


def test_counts_dates_and_the_latest_stay() -> None:
    assert ask("How many discharge summaries are on file?").value == [2]
    assert ask("how many radiology reports this admission?").value == [2]  # the latest stay's (admission/2)
    assert ask("how many echo reports are on file?").value == [0]  # a count is never no-data
    assert ask("date of the last chest x-ray report?").value == ["2165-05-27"]
    assert ask("when was the last nursing note?").value == ["2165-05-30"]


def test_no_note_of_the_kind_is_no_answer() -> None:
    read = ask("date of most recent TTE?")
    assert not read.found and read.no_kind


def test_sections_of_the_last_summary_read_as_written() -> None:
    assert ask("what did the last discharge summary list as discharge dx?").value == [
        "COPD exacerbation", "Hypercarbic respiratory failure"]  # the Primary:/Secondary: sub-heads are not items
    assert ask("principal discharge dx per the last summary?").value == ["COPD exacerbation"]
    assert ask("Discharge disposition per the last discharge summary?").value == ["Extended Care"]
    assert ask("chief complaint per the last d/c summary?").value == ["Worsening shortness of breath and wheezing"]
    assert ask("d/c meds per the summary?").value == ["Prednisone", "Metoprolol Tartrate", "Albuterol Inhaler"]


def test_a_drug_on_the_discharge_list_is_the_drug_as_named() -> None:
    assert ask("Albuterol Inhaler on the d/c med list of the last discharge summary?").value == [True]
    assert ask("was he discharged on metoprolol succinate per the last summary?").value == [False]  # tartrate
    assert ask("Warfarin on the d/c med list of the last discharge summary?").value == [False]


def test_an_impression_is_one_string_without_the_header() -> None:
    assert ask("last CXR impression?").value == ["Hyperinflated lungs without focal consolidation."]
    day = datetime(2164, 8, 12, tzinfo=UTC)
    read = ask("CXR impression on 2164-08-12?", start=day, end=day.replace(hour=23, minute=59))
    assert read.value == ["Clear lungs without focal consolidation."]


def test_values_and_mentions_read_from_the_note_of_the_kind() -> None:
    assert ask("K in the last progress note?", item="k").value == [4.7]
    # the last nursing note, not the one before it that documents the ulcer
    assert ask("last nursing note say anything about pressure ulcer?", item="pressure ulcer").value == [False]
    assert ask("last ECG show afib?", item="afib").value == [True]
    negated = ask("any pneumothorax on the chest x-ray reports?", item="pneumothorax")
    assert negated.value == [False] and "no pneumothorax" in negated.quote


FHIR_SUMMARY = """DISCHARGE SUMMARY
Date: 1/7/2026 15:57    Author: Dr. Farid Goldberg

Principal dx: community-acquired pneumonia
Secondary dx: hyperkalemia; hypertension
Disposition: Home health

Discharge medications:
  NEW: cefuroxime 500 mg PO BID x 5 days
  CONTINUE: lisinopril 10 mg PO daily

Follow-up: PCP in 1-2 weeks with repeat BMP/CBC.
"""


def test_a_summary_written_with_inline_headings_reads_the_same() -> None:
    notes = [Note(note_id="DocumentReference/1", patient_id="p", ref="DocumentReference/1", text=FHIR_SUMMARY,
                  time=datetime(2026, 1, 7, 23, 57, tzinfo=UTC), note_type="Discharge summary")]
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def read(question: str) -> list[object]:
        return kinds.answer(question, "discharge summary", notes, now).value

    assert read("discharge diagnoses on the last discharge summary?") == [
        "community-acquired pneumonia", "hyperkalemia", "hypertension"]
    assert read("principal dx per the last discharge summary?") == ["community-acquired pneumonia"]
    assert read("secondary dx per the last discharge summary?") == ["hyperkalemia", "hypertension"]
    assert read("discharge meds per the last d/c summary?") == ["cefuroxime", "lisinopril"]  # "NEW:" is no name
    assert read("date of the last discharge summary?") == ["2026-01-07"]
