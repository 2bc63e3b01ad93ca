"""The notes as documents (fhirqa/notes/listing.py): which notes a window, a stay, a service or an author holds,
who wrote them, and the default scope when nothing is asked (lexicon/note_lists.json)."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.notes import listing
from fhirqa.notes.sources import Note


def _note(ref: str, day: int, note_type: str, author: str | None = None, stay: str | None = None,
          text: str = "Plan: continue.") -> Note:
    return Note(note_id=ref, patient_id="p1", ref=ref, text=text, time=datetime(2024, 3, day, 10, tzinfo=UTC),
                note_type=note_type, author=author, encounter_ref=stay)


CLINIC = [_note(f"DocumentReference/c{d}", d, "Clinic note", "Dr. Ana Reyes", f"Encounter/e{d}") for d in (1, 3, 5, 7,
                                                                                                        9, 11)]
STAY = [
    _note("noteevents/1", 20, "Nursing: Nursing Progress Note", "caregiver/16010", "admission/7"),
    _note("noteevents/2", 21, "Rehab Services: Rehab/PT Eval", "caregiver/16011", "admission/7"),
    _note("noteevents/3", 22, "Physician: Cardiology Physician Note", "caregiver/17001", "admission/7"),
]


def test_without_a_window_the_latest_stay_is_read_when_it_holds_several_notes():
    scope = listing.choose(CLINIC + STAY)
    assert scope.how == "stay" and scope.default and scope.stay == "admission/7"
    assert [n.ref for n in scope.notes] == ["noteevents/3", "noteevents/2", "noteevents/1"]  # newest first


def test_without_a_window_or_a_stay_of_several_notes_the_last_n_are_read():
    scope = listing.choose(CLINIC)
    n = listing.config()["default_scope"]["last_n"]
    assert scope.how == "last_n" and scope.default
    assert [x.ref for x in scope.notes] == [x.ref for x in CLINIC[::-1][:n]]


def test_a_window_all_and_the_last_n():
    notes = CLINIC + STAY
    week = listing.choose(notes, start=datetime(2024, 3, 4, tzinfo=UTC), end=datetime(2024, 3, 9, 23, tzinfo=UTC))
    assert [n.ref for n in week.notes] == ["DocumentReference/c9", "DocumentReference/c7", "DocumentReference/c5"]
    assert len(listing.choose(notes, which="all").notes) == 9
    assert [n.ref for n in listing.choose(notes, last=2).notes] == ["noteevents/3", "noteevents/2"]
    assert [n.ref for n in listing.choose(notes, which="first").notes] == ["DocumentReference/c1"]


def test_a_resource_with_two_attachments_is_one_document():
    twin = Note(note_id="DocumentReference/c1#2", patient_id="p1", ref="DocumentReference/c1", text="<p>same</p>",
                time=CLINIC[0].time, note_type="Clinic note")
    assert len(listing.documents([*CLINIC, twin])) == len(CLINIC)


def test_services_are_read_from_what_a_note_says_of_itself():
    pt = listing.service_asked("what did the PT note say?")
    assert pt is not None and pt["name"] == "physical therapy"
    assert [n.ref for n in listing.of_service(STAY, pt)] == ["noteevents/2"]
    cards = listing.service_asked("notes by cardiology")
    assert cards is not None and [n.ref for n in listing.of_service(STAY, cards)] == ["noteevents/3"]
    # "pt" in lower case is the patient, not physical therapy
    assert listing.service_asked("what did the pt say in her notes?") is None


def test_the_author_is_the_metadata_else_the_notes_own_signature_line():
    assert listing.author_of(CLINIC[0]) == ("Dr. Ana Reyes", "metadata")
    assert listing.author_of(STAY[0]) == ("caregiver 16010", "metadata")  # a MIMIC caregiver id, read as words
    signed = _note("DocumentReference/x", 2, "Progress note",
                   text="PROGRESS NOTE\nDate: 3/2/2024 10:00    Author: Dr. Farid Goldberg\nS: feels well.")
    assert listing.author_of(signed) == ("Dr. Farid Goldberg", "text")
    assert listing.author_of(_note("DocumentReference/y", 2, "Progress note", text="S: feels well.")) == (None, "")


def test_notes_by_an_author_match_every_word_asked_in_any_case():
    assert len(listing.by_author(CLINIC + STAY, "reyes")) == len(CLINIC)
    assert listing.by_author(CLINIC, "Dr. Ana Reyes") == CLINIC
    assert listing.by_author(CLINIC, "Patel") == []


def test_a_calendar_day_is_the_day_on_the_notes_own_clock():
    # written 2024-03-20 21:30 at -05:00: March 21 in UTC, March 20 where it was written
    late = Note(note_id="DocumentReference/late", patient_id="p1", ref="DocumentReference/late", text="S: ok.",
                time=datetime(2024, 3, 21, 2, 30, tzinfo=UTC), note_type="Progress note", time_offset=-300)
    day = (datetime(2024, 3, 20), datetime(2024, 3, 20, 23, 59, 59))  # calendar bounds: no time zone
    assert listing.in_window([late], *day) == [late]
    assert listing.in_window([late], datetime(2024, 3, 21), datetime(2024, 3, 21, 23, 59, 59)) == []
    # an instant bound stays an instant
    assert listing.in_window([late], datetime(2024, 3, 21, 2, tzinfo=UTC), None) == [late]
    assert listing.entry(late)["date"] == "2024-03-20"
