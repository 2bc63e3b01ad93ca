""""Any note mention X?": a mention question asked of the notes as a whole reads every note, not a search's top hits.

A No is an answer (every note was read and none says it), a mention in an old note, a history list or a chief
complaint counts, and no note is embedded to answer it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.plans import plan
from fhirqa.agent.tools.base import ToolContext
from fhirqa.agent.tools.note_finding import find_in_notes
from fhirqa.notes.reader import may_mention, read_every, whole_record_asked
from fhirqa.notes.sources import Note

NOW = datetime(2023, 1, 1, 12, tzinfo=UTC)


def _note(day: int, year: int, text: str) -> Note:
    ref = f"DocumentReference/n{year}{day}"
    return Note(ref, "p1", ref, text, datetime(year, 1, day, 16, tzinfo=UTC), "History and physical note")


OLD = _note(5, 1985, "# Chief Complaint\n- Thirst\n\n# Assessment and Plan\nPatient is presenting with essential "
                     "hypertension (disorder).")
NEW = _note(7, 2021, "# History of Present Illness\nPatient has a history of fracture of ankle, viral sinusitis.\n\n"
                     "# Chief Complaint\nNo complaints.")
LATER = _note(9, 2024, "# Assessment and Plan\nPatient is presenting with wheezing.")  # after now: never read


class Notes:
    """A patient's notes whose search must not be needed for a whole-record mention question."""

    def __init__(self, notes: list[Note]) -> None:
        self._notes = notes
        self.searches = 0

    def notes(self, patient_id: str) -> list[Note]:
        return self._notes

    def search(self, *args: object, **kwargs: object) -> list[object]:
        self.searches += 1
        return []


def _ctx(notes: Notes) -> ToolContext:
    ctx = ToolContext.__new__(ToolContext)
    ctx.notes, ctx.patient_id, ctx.now, ctx.cite = notes, "p1", NOW, lambda evidence: None
    return ctx


def test_questions_about_the_notes_as_a_whole_are_recognised():
    for question in ("any note mention fracture?", "wheezing ever mentioned in her notes?",
                     "is hypertension documented in any note?", "do the notes say anything about back pain?",
                     "was anemia noted in any of his notes?", "fracture in the notes?",
                     "any note documenting hypertension?"):
        assert whole_record_asked(question), question
    assert not whole_record_asked("was wheezing mentioned?")


def test_a_mention_in_an_older_note_or_a_chief_complaint_list_is_yes_quoting_the_newest_mention():
    assert read_every("thirst ever mentioned in her notes?", [OLD, NEW]).value == [True]
    reading = read_every("is hypertension documented in any note?", [OLD, NEW])
    assert reading.value == [True] and reading.note is OLD and "essential hypertension" in reading.quote
    assert read_every("any note mention fracture?", [OLD, NEW]).note is NEW  # a history list counts


def test_a_term_no_note_holds_is_a_plain_no_not_missing_data():
    reading = read_every("any note mention back pain?", [OLD, NEW])
    assert reading.value == [False] and reading.note is None


def test_a_mention_only_denied_is_no_quoting_the_denial():
    denied = _note(3, 2020, "# History of Present Illness\nDenies chest pain, SOB.")
    reading = read_every("any note mention chest pain?", [OLD, denied])
    assert reading.value == [False] and reading.note is denied and "Denies chest pain" in reading.quote
    steps = plan(parse("any note mention chest pain?", NOW))
    next(steps)
    final = steps.send({"ok": True, "found": True, "kind": "section", "field": "mention", "answer_kind": "yes_no",
                        "value": [False], "quote": "Denies chest pain, SOB.", "time": "2020-01-03T16:00:00+00:00",
                        "note_type": "History and physical note", "scope": "all notes", "notes_in_scope": 2,
                        "first": "1985-01-05", "last": "2020-01-03"})
    assert final[1]["answer"] == [False] and "only as absent" in final[1]["text"]


def test_the_lexical_prefilter_keeps_every_note_a_stemmed_mention_could_match():
    assert may_mention(["screen"], "depression screening (procedure)")
    assert may_mention(["mi"], "history of MI")
    assert not may_mention(["back pain"], "Patient has a history of fracture of ankle.")


def test_find_in_notes_reads_every_note_before_now_without_searching():
    notes = Notes([OLD, NEW, LATER])
    ctx = _ctx(notes)
    no = find_in_notes(ctx, "wheezing ever mentioned in her notes?", item="wheezing")
    assert no["found"] and no["value"] == [False] and no["notes_in_scope"] == 2 and no["scope"] == "all notes"
    yes = find_in_notes(ctx, "do the notes say anything about sinusitis?", item="sinusitis")
    assert yes["value"] == [True] and yes["ref"] == NEW.ref
    assert notes.searches == 0


def test_a_finding_no_note_can_hold_is_not_searched_for():
    notes = Notes([OLD, NEW])
    result = find_in_notes(_ctx(notes), "did she report chest pain?")
    assert result["found"] is False and notes.searches == 0
    find_in_notes(_ctx(notes), "did she report thirst?")
    assert notes.searches == 1  # a note holds the word: the search decides, as before


def test_the_plan_answers_yes_or_no_from_every_note():
    steps = plan(parse("any note mention fracture?", NOW))
    name, args = next(steps)
    assert name == "find_in_notes" and args["item"] == "fracture"
    final = steps.send({"ok": True, "found": True, "kind": "section", "field": "mention", "answer_kind": "yes_no",
                        "value": [False], "quote": "", "scope": "all notes", "notes_in_scope": 30,
                        "first": "1996-07-05", "last": "2023-01-17"})
    assert final[0] == "final_answer" and final[1]["answer"] == [False] and final[1]["status"] == "answered"
    assert "30 notes" in final[1]["text"]
