"""Questions that ask for a note itself ("summarize the last note", "A&P from the last note"): recognised by what
remains once the note, the reading words and the sections are taken out; read as an extractive digest or as the
sections asked, written as the note writes them."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.notes.reader import ask_field, digest, note_asked, note_section, outline
from fhirqa.notes.sources import Note

SYNTHEA = """1994-11-12

# Chief Complaint
- Hunger
- Thirst
- Frequent Urination

# History of Present Illness
Marine542 Ai120
 is a 67 year-old nonhispanic white female. Patient has a history of end-stage renal disease (disorder), chronic kidney disease stage 3 (disorder).

# Social History
Patient is married. Patient has never smoked.
Patient currently has Medicare.

# Allergies
No Known Allergies.

# Medications
lisinopril 10 mg oral tablet; 24 hr metformin hydrochloride 500 mg extended release oral tablet; nitrofurantoin 5 mg/ml oral suspension

# Assessment and Plan

## Plan

The following procedures were conducted:
- hospice care (regime/therapy)
- hospice care (regime/therapy)
- hospice care (regime/therapy)
"""

EMPTY_PLAN = SYNTHEA.split("## Plan")[0] + "## Plan\n"

H_AND_P = """ADMISSION HISTORY AND PHYSICAL
St. Brendan Regional Medical Center - Inpatient Medicine
Date: 11/22/2024 19:12    Author: Dr. Catherine Oyelaran
Patient: Anthony Sanchez    DOB: 11/23/2003    MRN 1521443

CC: spreading redness, warmth and swelling of the left lower leg.
HPI: 20 y/o M with hx of GERD, MDD who presents c/o spreading redness, warmth and swelling of the left lower leg x 4 days. In the ED he was febrile, HR 99, SpO2 97% on RA. Denies recent travel or sick contacts.
Home meds: sertraline 50 mg PO daily; pantoprazole 40 mg PO daily.
Allergies: NKDA.

Vitals on arrival (16:20): BP 118/79, HR 99, RR 13, T 38.2, SpO2 97% RA.
Labs on admission (16:37): Na 138, K 4.4, Cr 0.96, WBC 15.4, Hgb 14.7.

Assessment/Plan:
20 y/o M with hx of GERD, MDD admitted for left lower extremity cellulitis.
1. Left lower extremity cellulitis - WBC 15.4, T 38.2, HR 99. Start vancomycin 1,000 mg IV q12h.
2. VTE ppx: heparin 5,000 units SC q8h.
3. Code status: Full code.
"""

MIMIC_DS = """Admission Date:  [**2164-5-10**]     Discharge Date:   [**2164-5-15**]

Allergies:
Patient recorded as having No Known Allergies to Drugs

Chief Complaint:
Worsening shortness of breath and wheezing

Past Medical History:
COPD on 2L home oxygen
Hypertension

Brief Hospital Course:
He was admitted to the MICU. He was intubated on arrival for hypoxemic respiratory failure and extubated on hospital day 3.

Discharge Diagnosis:
Primary:
COPD exacerbation

Secondary:
Hypercarbic respiratory failure
"""


def _note(text: str, note_type: str = "History and physical note") -> Note:
    return Note("DocumentReference/n1", "p1", "DocumentReference/n1", text, datetime(2024, 11, 23, 1, tzinfo=UTC),
                note_type, "Dr. Catherine Oyelaran", "Encounter/e1")


def _entry(question: str) -> dict:
    asked = note_asked(question)
    assert asked is not None and len(asked.sections) == 1, question
    return asked.sections[0]


def test_a_question_that_names_a_note_and_nothing_else_asks_for_the_note():
    for question in ("summarize the last note", "what did the last note say?", "show me the most recent note",
                     "last note?", "read me the first note", "pull up the ED note from 3/2/2019",
                     "what was in the 1/5/2020 note", "open the most recent note", "summarize the last discharge summary",
                     "what was documented at the 11/06/1986 visit?"):
        asked = note_asked(question)
        assert asked is not None and asked.sections == (), question
        assert ask_field(question)["field"] == "note", question


def test_a_section_named_by_its_heading_is_asked_as_written():
    assert _entry("give me the assessment and plan from the last note")["section"] == "assessment and plan"
    assert _entry("A&P from the last note")["section"] == "assessment and plan"  # not "plan" inside it
    assert _entry("HPI of the last visit")["section"] == "history of present illness"
    assert _entry("plan from yesterday's note")["section"] == "plan"
    assert _entry("what meds were listed in the last note")["section"] == "medications"
    two = note_asked("HPI and A/P from the 11/22/2024 H&P")
    assert [e["section"] for e in two.sections] == ["history of present illness", "assessment and plan"]


def test_anything_else_asked_of_a_note_is_not_the_note_itself():
    for question in ("what did the last note say about chest pain?", "when was the last note?",
                     "who wrote the last note?", "how many notes?", "last visit?", "meds at the last visit?",
                     "was hospice mentioned in the 9/18/1963 note?", "any note mention fracture?",
                     "A/P in the 05/13/2006 note - what was she presenting with?", "what is her potassium?",
                     "What A1c was documented in the H&P on 10/13/2025?"):
        assert note_asked(question) is None, question


def test_a_section_a_field_reads_into_a_value_keeps_that_field_unless_a_reading_word_asks_for_the_text():
    assert ask_field("chief complaint in the last note")["field"] == "chief complaint"
    assert ask_field("CC in the 07/15/1985 note?")["field"] == "chief complaint"
    assert ask_field("allergies in the last note?")["field"] == "allergies"
    assert ask_field("assessment in the 1 Dec 2021 note?")["field"] == "assessment"  # its diagnosis
    assert ask_field("show me the chief complaint in the last note")["field"] == "note"
    # a field that needs an item has none here: the section itself is asked
    assert ask_field("follow-up in the last DC summary")["field"] == "note"


def test_the_digest_gives_each_heading_with_its_first_lines_and_the_plan_in_full():
    lines = digest(_note(SYNTHEA))
    assert lines[0] == "Chief Complaint: Hunger; Thirst; Frequent Urination"
    assert lines[1].startswith("History of Present Illness: Marine542 Ai120 is a 67 year-old")  # lines joined
    assert "Allergies: No Known Allergies." in lines
    assert lines[-1] == ("Assessment and Plan › Plan: The following procedures were conducted: "
                         "hospice care (regime/therapy) ×3")  # a repeated item said once, with its count
    assert not any(line.startswith("1994") for line in lines)  # the date line is the header's


def test_an_empty_plan_is_said_to_be_empty_and_identifying_header_lines_are_left_out():
    assert digest(_note(EMPTY_PLAN))[-1] == "Assessment and Plan › Plan: (nothing written)"
    lines = digest(_note(H_AND_P))
    assert not any(line.startswith(("Date", "Patient", "ADMISSION")) for line in lines)
    assert lines[0] == "CC: spreading redness, warmth and swelling of the left lower leg."
    assert "Vitals on arrival (16:20): BP 118/79, HR 99, RR 13, T 38.2, SpO2 97% RA." in lines
    assert lines[-1] == ("Assessment/Plan: 20 y/o M with hx of GERD, MDD admitted for left lower extremity cellulitis. "
                         "1. Left lower extremity cellulitis - WBC 15.4, T 38.2, HR 99. Start vancomycin 1,000 mg IV "
                         "q12h. 2. VTE ppx: heparin 5,000 units SC q8h. 3. Code status: Full code.")


def test_a_long_note_is_bounded_and_names_the_parts_left_out():
    long = "\n".join(f"Item {i}: " + "word " * 60 for i in range(40)) + "\nA/P: 1. Sepsis - start abx."
    lines = digest(_note(long), max_chars=800)
    assert sum(len(line) for line in lines[:-2]) <= 800
    assert lines[-2] == "A/P: 1. Sepsis - start abx."  # the plan is always kept
    assert lines[-1].startswith("Also: Item ")


def test_a_mimic_discharge_summary_keeps_its_headings_and_the_diagnoses_under_their_heading():
    lines = digest(_note(MIMIC_DS, "Discharge summary"))
    assert "Past Medical History: COPD on 2L home oxygen; Hypertension" in lines
    assert "Discharge Diagnosis › Primary: COPD exacerbation" in lines
    assert "Secondary: Hypercarbic respiratory failure" in lines
    assert [p.name for p in outline(MIMIC_DS)][:3] == ["admission date", "allergies", "chief complaint"]


def test_a_section_is_read_as_written_with_the_parts_under_its_heading():
    ap = note_section(_note(H_AND_P), _entry("A&P from the last note"))
    assert ap.heading == "Assessment/Plan" and ap.items[0].startswith("20 y/o M") and len(ap.items) == 4
    assert ap.items[1].startswith("Left lower extremity cellulitis")  # entries; the text keeps the numbers
    assert "\n1. Left lower extremity cellulitis" in ap.text
    meds = note_section(_note(SYNTHEA), _entry("what meds were listed in the last note"))
    assert meds.items == ["lisinopril 10 mg oral tablet", "24 hr metformin hydrochloride 500 mg extended release oral "
                          "tablet", "nitrofurantoin 5 mg/ml oral suspension"]
    synthea_ap = note_section(_note(SYNTHEA), _entry("A&P from the last note"))
    assert synthea_ap.items[0] == "Plan:" and "hospice care (regime/therapy) ×3" in synthea_ap.items
    empty = note_section(_note(EMPTY_PLAN), _entry("A&P from the last note"))
    assert empty.present and empty.items == []
    cxr = _note("EXAM: XR Chest 2 Views\nFINDINGS: Lungs are clear.\n\nIMPRESSION: No acute abnormality.", "XR Chest")
    dx = note_section(_note(MIMIC_DS, "Discharge summary"), _entry("discharge diagnoses in the last note"))
    assert dx.heading == "Discharge Diagnosis"
    assert dx.items == ["Primary:", "COPD exacerbation", "Secondary:", "Hypercarbic respiratory failure"]
    assert not note_section(cxr, _entry("HPI of the last visit")).present
    assert note_section(cxr, _entry("A&P from the last note")).items == ["No acute abnormality"]  # its impression
