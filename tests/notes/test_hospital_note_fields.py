"""Reading hospital notes (H&P, discharge summary, ED note, clinic note) for what one question asks.

Each test is one mechanism of ``fhirqa.notes.reader`` driven by ``lexicon/note_sections.json``: the principal
diagnosis apart from the secondary ones, diagnosis names without their plan text, disposition, follow-up
items, findings reported or denied, "ruled out", and length of stay.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.notes.reader import ask_field, item_of, names_for, read
from fhirqa.notes.sources import Note

DAY = datetime(2024, 3, 4, 18, tzinfo=UTC)

SUMMARY = """DISCHARGE SUMMARY
Date: 3/4/2024 13:00
Admit: 2/29/2024 22:10    Discharge: 3/4/2024 11:00    LOS: 4 days
Primary diagnosis: acute pyelonephritis
Secondary diagnoses: type 2 diabetes; chronic kidney disease stage 3a
Disposition: Skilled nursing facility

Hospital course: treated with ceftriaxone, then cephalexin.

Discharge medications:
  NEW: cephalexin 500 mg PO QID x 10 days
  CONTINUE: metformin 500 mg PO BID

Follow-up: nephrology clinic in 2 weeks with repeat CMP. Return for fever or flank pain.
"""

HP = """ADMISSION HISTORY AND PHYSICAL
Date: 3/4/2024 21:00
CC: flank pain, dysuria and chills.
HPI: 71 y/o F with T2DM presents c/o right flank pain and dysuria x 3 days. In the ED she was afebrile, HR 101.
Denies hematuria or vomiting.

Assessment/Plan:
71 y/o F admitted for pyelonephritis.
1. Acute pyelonephritis - WBC 16.1, lactate 1.4. Start ceftriaxone 1 g IV q24h.
2. AKI on CKD 3a: Cr 1.9 (baseline 1.3). IV fluids, trend BMP.
3. VTE ppx: enoxaparin 40 mg SC daily.
4. Code status: DNR/DNI.
"""

CLINIC = """CLINIC NOTE - ACUTE VISIT
Date: 3/4/2024 10:15
S: 44 y/o M here for right ear pain x 2 days. Reports subjective fevers. Denies hearing loss or vertigo.
O: T 37.9, HR 90.
A/P:
1. Acute otitis media, right. Amoxicillin 875 mg PO BID x 10 days.
2. Asthma - well controlled on albuterol PRN.
3. Immunizations given today: Tdap.
"""

ED = """ED PROVIDER NOTE
Date: 3/4/2024 02:40
CC/HPI: 58 y/o M c/o pleuritic chest pain. In the ED he was febrile to 38.4.
MDM/Plan:
1. Chest pain - troponin negative x2, ECG without ischemia; ACS ruled out. CTA chest pending to rule out PE.
Disposition: discharged home in stable condition at 06:10, BP 131/77, HR 82.
"""


def _read(question: str, text: str):
    note = Note("DocumentReference/n", "p1", "DocumentReference/n", text, DAY, "Note")
    return read(question, [note])


def test_the_principal_diagnosis_is_its_own_line_not_the_secondary_ones():
    reading = _read("principal dx per the discharge summary?", SUMMARY)
    assert reading.value == ["acute pyelonephritis"]
    # asked without "principal", the note's diagnoses are all listed
    assert _read("discharge diagnoses per the summary?", SUMMARY).value == [
        "acute pyelonephritis", "type 2 diabetes", "chronic kidney disease stage 3a"]


def test_an_admitting_or_acute_visit_dx_is_the_first_listed_problem_without_its_plan():
    assert _read("admitting dx in the H&P?", HP).value == ["Acute pyelonephritis"]
    assert _read("dx at the acute visit?", CLINIC).value == ["Acute otitis media, right"]


def test_a_dx_question_lists_problem_names_and_leaves_out_plan_items():
    # "VTE ppx: …", "Code status: …" and "Immunizations given today: …" are plan entries, not problems
    assert _read("dx in the H&P?", HP).value == ["Acute pyelonephritis", "AKI on CKD 3a"]
    assert _read("diagnoses at the visit?", CLINIC).value == ["Acute otitis media, right", "Asthma"]
    # "A/P" asked keeps the items as written, plan included
    assert _read("A/P in the note?", CLINIC).value[0].startswith("Acute otitis media, right. Amoxicillin")


def test_disposition_is_read_as_written_and_a_named_place_answers_yes_or_no():
    assert _read("Disposition per the discharge summary?", SUMMARY).value == ["Skilled nursing facility"]
    assert _read("where was she discharged to?", SUMMARY).value == ["Skilled nursing facility"]
    assert _read("Was she discharged home?", SUMMARY).value == [False]
    assert _read("ED dispo - sent home?", ED).value == [True]
    assert _read("what was the ED disposition?", ED).value == ["home"]


def test_a_follow_up_item_is_looked_for_in_the_follow_up_section_by_its_other_names():
    # "repeat labs" is also "repeat CMP" (term_aliases: labs)
    assert "repeat labs" in names_for("repeat labs") and "repeat cmp" in names_for("repeat labs")
    assert _read("did the summary ask for repeat labs at follow-up?", SUMMARY).value == [True]
    assert _read("Was nephrology follow-up arranged per the summary?", SUMMARY).value == [True]
    assert _read("Was cardiology follow-up arranged per the summary?", SUMMARY).value == [False]


def test_a_finding_is_reported_when_the_history_says_it_and_no_when_it_is_denied_or_negated():
    assert _read("febrile in the ED per the H&P?", ED).value == [True]
    assert _read("febrile in the ED per the H&P?", HP).value == [False]  # "In the ED she was afebrile"
    assert _read("chills reported in the H&P?", HP).value == [True]  # a chief-complaint symptom
    assert _read("hematuria reported in the H&P?", HP).value == [False]  # "Denies hematuria"
    # "c/o X" reads the history sections of a note without a CC line too: "Denies … vertigo" is No
    assert _read("c/o vertigo at the visit?", CLINIC).value == [False]
    assert _read("c/o ear pain at the visit?", CLINIC).value == [True]
    # the finding word is the item, not a cue word to drop
    assert item_of("Was she febrile in the ED per the H&P?", ask_field("Was she febrile in the ED per the H&P?")) \
        == "febrile"


def test_ruled_out_needs_the_note_to_say_so_and_a_pending_rule_out_is_not_one():
    assert _read("Was ACS ruled out in the ED?", ED).value == [True]
    assert _read("Was PE ruled out in the ED?", ED).value == [False]  # "CTA chest pending to rule out PE"
    assert _read("Was ACS ruled out at the visit?", CLINIC).value == [False]  # never mentioned


def test_length_of_stay_is_the_number_the_note_writes_else_the_days_between_its_dates():
    assert _read("length of stay in the DC summary?", SUMMARY).value == [4]
    undated = SUMMARY.replace("    LOS: 4 days", "")
    assert _read("How many days was the length of stay in the DC summary?", undated).value == [4]
    short = "DISCHARGE SUMMARY\nAdmission date: 2024-03-01\nDischarge date: 2024-03-03\n"
    assert _read("LOS per the discharge summary?", short).value == [2]


def test_secondary_diagnoses_are_the_ones_besides_the_principal():
    assert _read("secondary diagnoses per the discharge summary?", SUMMARY).value == [
        "type 2 diabetes", "chronic kidney disease stage 3a"]
    # without a principal line, the problems after the first one
    assert _read("other diagnoses in the H&P?", HP).value == ["AKI on CKD 3a"]


def test_did_she_deny_x_is_yes_where_the_note_negates_x():
    assert _read("Did she deny hematuria in the H&P?", HP).value == [True]
    assert _read("Did she deny dysuria in the H&P?", HP).value == [False]  # she reported it
