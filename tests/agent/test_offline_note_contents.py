"""The offline plans and ``find_in_notes`` for a question that asks for a note itself: the note is anchored (a day,
the latest, the first, a kind), read as written (a digest, or the sections asked) and cited by its reference."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.plans import plan
from fhirqa.agent.tools.base import ToolContext
from fhirqa.agent.tools.note_finding import find_in_notes
from fhirqa.notes.sources import Note

NOW = datetime(2024, 11, 25, 12, tzinfo=UTC)

H_AND_P = """ADMISSION HISTORY AND PHYSICAL
Date: 11/22/2024 19:12    Author: Dr. Catherine Oyelaran
Patient: Anthony Sanchez    DOB: 11/23/2003    MRN 1521443

CC: spreading redness, warmth and swelling of the left lower leg.
HPI: 20 y/o M with hx of GERD who presents c/o spreading redness of the left lower leg x 4 days.
Home meds: sertraline 50 mg PO daily; pantoprazole 40 mg PO daily.

Assessment/Plan:
20 y/o M with hx of GERD admitted for left lower extremity cellulitis.
1. Left lower extremity cellulitis - WBC 15.4. Start vancomycin 1,000 mg IV q12h.
2. VTE ppx: heparin 5,000 units SC q8h.
"""

SUMMARY = """DISCHARGE SUMMARY
Date: 11/24/2024 14:54    Author: Dr. Catherine Oyelaran

Admit: 11/22/2024 16:12    Discharge: 11/24/2024 12:13    LOS: 2 days
Principal dx: left lower extremity cellulitis
Hospital course: Treated with vancomycin; WBC 15.4 on admission -> 11.8.

Discharge medications:
  NEW: cephalexin 500 mg PO QID x 7 days
  CONTINUE: sertraline 50 mg PO daily

Follow-up: PCP in 1-2 weeks with repeat BMP/CBC.
"""

ECG = "Normal sinus rhythm, rate 88. No acute ST-T wave changes."


def _note(ref: str, text: str, when: datetime, note_type: str, author: str | None = "Dr. Catherine Oyelaran") -> Note:
    return Note(ref, "p1", ref, text, when, note_type, author, "Encounter/stay")


HP = _note("DocumentReference/hp", H_AND_P, datetime(2024, 11, 23, 1, 12, tzinfo=UTC), "History and physical note")
DS = _note("DocumentReference/ds", SUMMARY, datetime(2024, 11, 24, 20, 54, tzinfo=UTC), "Discharge summary")
EKG = _note("DiagnosticReport/ekg", ECG, datetime(2024, 11, 25, 8, tzinfo=UTC), "EKG study", None)
LATER = _note("DocumentReference/later", "CC: cough", datetime(2024, 12, 9, tzinfo=UTC), "Outpatient Note")


class Notes:
    def __init__(self, notes: list[Note]) -> None:
        self._notes = notes

    def notes(self, patient_id: str) -> list[Note]:
        return self._notes

    def search(self, *args: object, **kwargs: object) -> list[object]:
        raise AssertionError("a note asked for itself is read whole, never searched")


def _ctx(notes: list[Note]) -> tuple[ToolContext, list]:
    cited: list = []
    ctx = ToolContext.__new__(ToolContext)
    ctx.notes, ctx.patient_id, ctx.now, ctx.cite = Notes(notes), "p1", NOW, cited.append
    return ctx, cited


def _run(question: str, notes: list[Note]) -> tuple[dict, list]:
    """The offline plan's final answer, with ``find_in_notes`` answered over ``notes``."""
    ctx, cited = _ctx(notes)
    steps = plan(parse(question, NOW))
    call = next(steps)
    while call[0] != "final_answer":
        assert call[0] == "find_in_notes", call
        call = steps.send(find_in_notes(ctx, **call[1]))
    return call[1], cited


def test_the_plan_asks_find_in_notes_for_the_note_itself_with_its_anchor():
    assert next(plan(parse("summarize the last note", NOW))) == (
        "find_in_notes", {"question": "summarize the last note", "read": "note", "which": "latest"})
    assert next(plan(parse("read me the first note", NOW)))[1]["which"] == "first"
    args = next(plan(parse("pull up the ED note from 10/26/2022", NOW)))[1]
    assert args["read"] == "note" and args["start"].startswith("2022-10-26") and args["end"].startswith("2022-10-26")
    args = next(plan(parse("labs from the 11/23/2024 progress note", NOW)))[1]
    assert args["start"].startswith("2024-11-23") and args["end"].startswith("2024-11-23")  # that day, not since


def test_summarize_the_last_note_is_its_digest_under_its_kind_date_author_and_reference():
    answer, cited = _run("summarize the last note", [HP, DS, EKG, LATER])
    assert answer["status"] == "answered"
    assert answer["text"].startswith("The last note — EKG study, 2024-11-25 (Encounter/stay; DiagnosticReport/ekg):")
    assert answer["answer"] == [ECG]  # a note without headings is its text
    assert [e.ref for e in cited] == ["DiagnosticReport/ekg"]  # a note after now is never read


def test_what_did_the_last_note_say_reads_headings_with_their_first_lines():
    answer, cited = _run("what did the last note say?", [HP, DS])
    assert answer["answer"][:2] == ["Admit: 11/22/2024 16:12 Discharge: 11/24/2024 12:13 LOS: 2 days",
                                    "Principal dx: left lower extremity cellulitis"]
    assert "Discharge medications: NEW: cephalexin 500 mg PO QID x 7 days; CONTINUE: sertraline 50 mg PO daily" \
        in answer["answer"]
    assert "Dr. Catherine Oyelaran" in answer["text"] and cited[0].ref == "DocumentReference/ds"


def test_a_section_asked_is_returned_as_written_from_the_latest_note_that_has_it():
    answer, cited = _run("give me the A&P from the last note", [HP, DS, EKG])
    assert answer["answer"] == ["20 y/o M with hx of GERD admitted for left lower extremity cellulitis",
                                "Left lower extremity cellulitis - WBC 15.4. Start vancomycin 1,000 mg IV q12h",
                                "VTE ppx: heparin 5,000 units SC q8h"]
    assert "\n1. Left lower extremity cellulitis" in answer["text"]  # the text as written keeps the numbers
    assert answer["text"].startswith("The last note (EKG study of 2024-11-25) has no assessment and plan; from the "
                                     "last one that does — History and physical note, 2024-11-23")
    assert [e.ref for e in cited] == ["DocumentReference/hp"]
    meds, _ = _run("what meds were listed in the last note", [HP, DS])
    assert meds["answer"] == ["NEW: cephalexin 500 mg PO QID x 7 days", "CONTINUE: sertraline 50 mg PO daily"]


def test_a_dated_note_of_a_named_kind_is_that_days_note_of_that_kind():
    answer, cited = _run("pull up the discharge summary from 11/24/2024", [HP, DS, EKG])
    assert answer["status"] == "answered" and [e.ref for e in cited] == ["DocumentReference/ds"]
    none, _ = _run("pull up the ED note from 11/24/2024", [HP, DS, EKG])
    assert none["status"] == "no-data" and none["text"] == "No ED notes on file for this patient."
    missing, _ = _run("what was in the 1/5/2020 note", [HP, DS])
    assert missing["status"] == "no-data"
    assert missing["text"] == "No note on 2020-01-05; the nearest: History and physical note of 2024-11-23."


def test_a_day_with_several_notes_gives_each_and_cites_each():
    day = [HP, _note("DiagnosticReport/cxr", "IMPRESSION: No acute abnormality.", datetime(2024, 11, 24, 3, tzinfo=UTC),
                     "XR Chest 2 Views", None), DS]
    answer, cited = _run("what was in the 11/24/2024 note", day)
    assert answer["text"].startswith("2 notes on 2024-11-24:\n\nXR Chest 2 Views, 2024-11-24")
    assert [e.ref for e in cited] == ["DiagnosticReport/cxr", "DocumentReference/ds"]
    # the H&P written on 11/22 (its Date: line), stored at 01:12 UTC on the 23rd, is that day's nearest note
    assert _run("what was in the 11/23/2024 note", day)[1][0].ref == "DocumentReference/hp"


def test_an_empty_section_and_a_patient_without_notes_are_plainly_no_data():
    empty = _note("DocumentReference/s", "# Chief Complaint\n- Cough\n\n# Assessment and Plan\n\n## Plan\n",
                  datetime(2024, 1, 5, tzinfo=UTC), "History and physical note")
    answer, _ = _run("A&P from the last note", [empty])
    assert answer["status"] == "no-data" and "Assessment and Plan: (nothing written under this heading)" in answer["text"]
    nothing, cited = _run("summarize the last note", [])
    assert nothing == {"answer": [], "text": "No notes on file for this patient.", "status": "no-data"} and not cited


def test_a_note_kind_caller_gets_the_note_itself_when_the_question_asks_for_it():
    ctx, cited = _ctx([HP, DS, EKG])
    found = find_in_notes(ctx, "summarize the last discharge summary", note_kind="discharge summary")
    assert found["kind"] == "note" and found["ref"] == "DocumentReference/ds"
    assert found["text"].startswith("The last discharge summary — Discharge summary, 2024-11-24")
    assert found["notes"][0]["text"] == SUMMARY  # the text a model summarizes from
    explicit = find_in_notes(ctx, "last H&P", note_kind="discharge summary", read="note")
    assert explicit["ref"] == "DocumentReference/ds"
    first = find_in_notes(ctx, "read me the first note of the stay", read="note")  # "first" read from the question
    assert first["ref"] == "DocumentReference/hp"
    # the kind's own readings stay with the note-kind reader
    for question in ("date of the last discharge summary", "List the discharge diagnoses documented in the latest "
                     "discharge summary."):
        assert find_in_notes(ctx, question, note_kind="discharge summary")["kind"] == "note_kind", question
