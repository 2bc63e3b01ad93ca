"""Reading one visit's note: anchoring to a day / the latest note / an ED visit, then a section by its heading."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.notes.reader import anchored, ask_field, read, split_sections, which_note
from fhirqa.notes.sources import Note

SYNTHEA = """2019-01-22

# Chief Complaint
- Nasal Congestion
- Chest Pressure

# History of Present Illness
Karena692
 is a 20 year-old nonhispanic white female. Patient has a history of escherichia coli urinary tract infection.

# Social History
Patient is married. Patient quit smoking at age 16.
Patient currently has Aetna.

# Allergies
No Known Allergies.

# Medications
acetaminophen 325 mg oral tablet [tylenol]; budesonide 0.25 mg/ml inhalation suspension; hydrochlorothiazide 25 mg oral tablet

# Assessment and Plan
Patient is presenting with concussion with no loss of consciousness (disorder).

## Plan
Patient was given the following immunizations: influenza, seasonal, injectable, preservative free.
The following procedures were conducted:
- depression screening (procedure)
"""

REAL = """CC: cough x3 days
HPI: 67 yo man with COPD. Denies fever.
Allergies: NKDA
Home meds: metoprolol 25 mg PO BID; lisinopril 10 mg daily
A/P: COPD exacerbation. Start prednisone.
"""

NO_COMPLAINTS = SYNTHEA.replace("- Nasal Congestion\n- Chest Pressure", "No complaints.")


def _note(text: str, when: datetime, note_type: str = "History and physical note", ref: str = "n1") -> Note:
    return Note(f"DocumentReference/{ref}", "p1", f"DocumentReference/{ref}", text, when, note_type)


DAY = datetime(2019, 1, 22, 15, tzinfo=UTC)


def _ask(question: str, text: str = SYNTHEA, item: str | None = None):
    return read(question, [_note(text, DAY)], item)


def test_sections_are_found_by_markdown_headings_and_by_labels_with_their_synonyms():
    names = [s.name for s in split_sections(SYNTHEA)]
    assert names[1:6] == ["chief complaint", "history of present illness", "social history", "allergies", "medications"]
    assert [s.name for s in split_sections(REAL)] == ["chief complaint", "history of present illness", "allergies",
                                                      "medications", "assessment and plan"]


def test_anchoring_picks_the_note_of_a_named_day_the_latest_note_or_the_ed_note_of_a_year():
    a = _note("x", datetime(2016, 3, 2, 15, tzinfo=UTC), "Emergency department note", "a")
    b = _note("y", datetime(2016, 8, 30, 4, tzinfo=UTC), ref="b")
    c = _note("z", datetime(2019, 1, 22, 15, tzinfo=UTC), ref="c")
    notes = [a, b, c]
    assert anchored(notes, datetime(2016, 8, 30, tzinfo=UTC), datetime(2016, 8, 30, 23, 59, tzinfo=UTC)) == [b]
    assert anchored(notes, which="latest") == [c]
    assert anchored(notes, which="first") == [a]
    assert anchored(notes, datetime(2016, 1, 1, tzinfo=UTC), datetime(2016, 12, 31, tzinfo=UTC),
                    encounter_class="EMER") == [a]
    # a late-evening local note is dated the next UTC day: the closest note within 14 hours
    assert anchored(notes, datetime(2016, 8, 29, tzinfo=UTC), datetime(2016, 8, 29, 23, 59, tzinfo=UTC)) == [b]
    assert anchored(notes, datetime(2017, 1, 1, tzinfo=UTC), datetime(2017, 1, 1, 23, 59, tzinfo=UTC)) == []
    assert which_note("polydipsia in her last note?") == "latest"


def test_section_content_questions_return_the_sections_items_not_a_yes_no():
    assert _ask("what did she c/o at the 1/22/2019 visit?", item="").value == ["Nasal Congestion", "Chest Pressure"]
    assert _ask("CC at the visit?", NO_COMPLAINTS, item="").value == ["No complaints"]
    assert _ask("assessment in the note?", item="").value == ["concussion with no loss of consciousness"]
    assert _ask("chief complaint?", REAL, item="").value == ["cough x3 days"]
    assert _ask("A/P in the note?", REAL, item="").value == ["COPD exacerbation", "Start prednisone"]


def test_social_history_values_are_read_as_written():
    assert _ask("what insurance did she have in the note?").value == ["Aetna"]
    assert _ask("age she quit smoking, per social hx in the note?").value == [16]
    assert _ask("married in the note?").value == [True]
    assert _ask("how old was she at the visit (per the note)?").value == [20]
    assert _ask("age per the HPI?", REAL).value == [67]


def test_allergy_questions_read_nkda_in_either_polarity():
    assert _ask("NKDA in the latest note?").value == [True]
    assert _ask("any known allergies in the note?").value == [False]
    assert _ask("NKDA at the visit?", REAL).value == [True]


def test_med_list_membership_and_strength_as_written_by_brand_or_generic():
    assert _ask("Tylenol dose on the med list", item="tylenol").value == ["325 mg"]
    assert _ask("what dose of HCTZ was listed?", item="hctz").value == ["25 mg"]
    assert _ask("Pulmicort mg in the note?", item="pulmicort").value == ["0.25 mg/ml"]
    assert _ask("how much metoprolol in the note?", REAL, item="metoprolol").value == ["25 mg"]
    assert _ask("taking tacrolimus in the note?", item="tacrolimus").value == [False]
    assert _ask("meds in the note include acetaminophen?", item="acetaminophen").value == [True]


def test_mentions_match_aliases_and_word_forms_and_an_absent_or_negated_item_is_no():
    assert _ask("was UTI mentioned in the note?", item="uti").value == [True]
    assert _ask("depression screen done on 1/22/2019?", item="depression screen").value == [True]
    assert _ask("influenza vaccine on 1/22/2019?", item="influenza vaccine").value == [True]
    assert _ask("was hospice mentioned in the note?", item="hospice").value == [False]
    assert _ask("any fever in the note?", REAL, item="fever").value == [False]  # "Denies fever."


def test_a_named_symptom_against_no_complaints_is_no_and_a_listed_one_is_yes():
    assert _ask("c/o nasal congestion at the visit?", NO_COMPLAINTS, item="nasal congestion").value == [False]
    assert _ask("was she complaining of congestion at the visit?", item="congestion").value == [True]
    assert _ask("polyuria in the note - yes or no?", SYNTHEA.replace("Chest Pressure", "Frequent Urination"),
                item="polyuria").value == [True]


def test_a_lab_named_at_a_visit_asks_for_a_value_not_a_mention():
    assert ask_field("K at the 10/08/2014 visit?", "K") is None
    assert ask_field("SpO2 value in the note from 12/16/1990", "SpO2") is None
    assert ask_field("was BP mentioned in the note?", "BP")["field"] == "mention"


def test_a_note_is_dated_by_the_day_its_header_states_not_only_its_utc_day():
    # written 11/8 21:21 local (-06:00) = 11/9 03:21 UTC; a chest X-ray report falls on 11/8 UTC too
    hp = _note("ADMISSION HISTORY AND PHYSICAL\nDate: 11/8/2024 21:21    Author: Dr. A\nA/P:\n1. Cellulitis",
               datetime(2024, 11, 9, 3, 21, tzinfo=UTC), ref="hp")
    xr = _note("CHEST X-RAY\nImpression: no acute process", datetime(2024, 11, 8, 14, tzinfo=UTC), "Radiology", "xr")
    pn = _note("HOSPITALIST PROGRESS NOTE\nDate: 2024-11-09 10:00\nS: feels better",
               datetime(2024, 11, 9, 16, tzinfo=UTC), ref="pn")
    notes = [xr, hp, pn]
    day = (datetime(2024, 11, 8, tzinfo=UTC), datetime(2024, 11, 8, 23, 59, tzinfo=UTC))
    assert anchored(notes, *day) == [xr, hp]
    assert anchored(notes, datetime(2024, 11, 9, tzinfo=UTC), datetime(2024, 11, 9, 23, 59, tzinfo=UTC)) == [pn]


def test_a_mention_at_a_named_note_kind_matches_the_term_not_the_note_kind_words():
    from fhirqa.notes.reader import item_of

    spec = ask_field("ceftriaxone documented in the progress note from Jan 6, 2025?")
    assert item_of("ceftriaxone documented in the progress note from Jan 6, 2025?", spec) == "ceftriaxone"
    assert item_of("x", spec, "ceftriaxone progress") == "ceftriaxone"  # the parser's entity
    assert item_of("Was heparin mentioned in the 2024-11-22 H&P?", spec) == "heparin"
    assert item_of("x", spec, "febrile overnight progress") == "febrile overnight"  # "feb…" is not a month
    note = ("HOSPITALIST PROGRESS NOTE\nDate: 1/6/2025 10:56\nS: Afebrile overnight.\n"
            "Inpatient meds: ceftriaxone 1 g IV q24h; heparin 5,000 units SC q8h.")
    assert _ask("ceftriaxone documented in the progress note from Jan 6, 2025?", note).value == [True]
    assert _ask("anything about acetaminophen in the 1/6/2025 progress note?", note).value == [False]
    assert _ask("Febrile overnight per the 2025-01-06 progress note?", note,
                item="febrile overnight progress").value == [False]
