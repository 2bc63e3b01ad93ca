"""Questions about the notes as documents (offline/note_list_plan.py + the list_notes tool): summaries of the notes
of a window or stay, counts, whether any, who wrote them, a service's or an author's notes. The notes are hand-made;
expected answers are read from them, not from fhirqa."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.note_list_plan import notes_asked
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.tools.base import ToolContext
from fhirqa.notes.sources import Note

from .test_tools_helpers import FakeRows

NOW = datetime(2024, 3, 25, 12, tzinfo=UTC)  # a Monday


def _note(ref: str, when: str, note_type: str, author: str | None, stay: str | None, text: str) -> Note:
    return Note(note_id=ref, patient_id="p1", ref=ref, text=text, time=datetime.fromisoformat(when),
                note_type=note_type, author=author, encounter_ref=stay)


NOTES = [
    _note("DocumentReference/old", "2023-11-02T15:00:00+00:00", "Clinic note", "Dr. Ana Reyes", "Encounter/e0",
          "CC: cough.\nAssessment: viral URI.\nPlan: fluids."),
    _note("DocumentReference/hp", "2024-03-20T18:00:00+00:00", "History and physical note", "Dr. Farid Goldberg",
          "Encounter/stay", "CC: chest pain.\nHPI: 60 y/o M with chest pain x 2 days.\nAssessment/Plan:\n1. NSTEMI - "
          "heparin, cardiology consult."),
    _note("DocumentReference/rn", "2024-03-22T08:00:00+00:00", "Nursing note", "Kim Lee, RN", "Encounter/stay",
          "Neuro: A&Ox3.\nResp: RA, sats 97%."),
    _note("DocumentReference/pt", "2024-03-23T14:00:00+00:00", "Physical therapy evaluation", None, "Encounter/stay",
          "PT EVALUATION\nSigned by: Jo Park, PT\nAssessment: ambulates 150 ft with rolling walker.\n"
          "Plan: PT daily."),
    _note("DocumentReference/cards", "2024-03-24T09:00:00+00:00", "Cardiology consult note", "Dr. Sam Okafor",
          "Encounter/stay", "Impression: NSTEMI, medical management.\nPlan: cath if recurrent pain."),
]


class _Notes:
    def notes(self, patient_id: str) -> list[Note]:
        return list(NOTES)


def ask(question: str) -> dict:
    from fhirqa.agent.backends.offline import OfflineBackend
    from fhirqa.agent.composer import compose
    from fhirqa.agent.resolver import ConceptResolver
    from fhirqa.agent.tools import tool_specs

    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows({}), resolve=ConceptResolver(), notes=_Notes())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {e.ref for e in ctx.evidence.values()}}


STAY = ["DocumentReference/cards", "DocumentReference/pt", "DocumentReference/rn", "DocumentReference/hp"]


@pytest.mark.parametrize(("question", "mode"), [
    ("summarize her notes", "summary"),
    ("what do the recent notes say?", "summary"),
    ("summarize the notes from this admission", "summary"),
    ("notes since Monday", "list"),
    ("how many notes this admission?", "count"),
    ("any new notes since yesterday?", "any"),
    ("any nursing notes today?", "any"),
    ("who wrote the last note?", "author"),
    ("notes by cardiology", "list"),
    ("what did the PT note say?", "summary"),
    ("notes by Dr. Reyes", "list"),
    ("what did cardiology say?", "summary"),  # a service that says something: its notes
    ("when was the last note?", "when"),
    ("give me a rundown of the notes since admission", "summary"),
    # something else asked of the notes, or one note read: the other readers'
    ("did any note mention chest pain?", None),
    ("summarize the last note", None),
    ("what did the last note say?", None),
    ("# of nursing notes this admit?", None),
    ("what was the last potassium?", None),
    ("who saw her last?", None),
    ("Has he had any imaging studies?", None),  # the studies are records; their reports only when named
    ("what was the PT?", None),  # prothrombin time, not physical therapy
    ("cardiology follow-up?", None),
])
def test_which_questions_ask_for_the_notes_as_documents(question, mode):
    asked = notes_asked(parse(question, NOW))
    assert (asked.mode if asked else None) == mode


def test_summarize_her_notes_reads_the_latest_stay_and_says_so():
    out = ask("summarize her notes")
    assert out["status"] == "answered"
    assert "4 notes in the latest stay (Encounter/stay)" in out["text"] and "no window was asked" in out["text"]
    assert len(out["answer"]) == 4 and out["answer"][0].startswith("2024-03-24 Cardiology consult note, Dr. Sam Okafor")
    assert "NSTEMI, medical management" in out["answer"][0]
    assert out["cited"] == set(STAY)


def test_a_count_and_a_window_that_runs_to_now():
    out = ask("how many notes this admission?")
    assert out["answer"] == [4] and out["cited"] == set(STAY)
    out = ask("notes since Friday")  # Friday 2024-03-22 to now
    assert [a[:10] for a in out["answer"]] == ["2024-03-24", "2024-03-23", "2024-03-22"]
    assert ask("how many notes has she had?")["answer"] == [5]


def test_any_notes_in_a_window_is_yes_or_no_with_the_last_one_named():
    assert ask("any new notes since yesterday?")["answer"] == [True]
    out = ask("any nursing notes today?")
    assert out["answer"] == [False] and "2024-03-22 Nursing note" in out["text"]


def test_who_wrote_a_note_is_its_author_else_its_signature_line():
    assert ask("who wrote the last note?")["answer"] == ["Dr. Sam Okafor"]
    out = ask("who wrote the PT note?")
    assert out["answer"] == ["Jo Park"] and "signature line" in out["text"]


def test_a_service_or_an_author_chooses_the_notes():
    assert [a[:10] for a in ask("notes by cardiology")["answer"]] == ["2024-03-24"]
    out = ask("what did the PT note say?")
    assert "ambulates 150 ft with rolling walker" in out["answer"][0] and out["cited"] == {"DocumentReference/pt"}
    assert [a[:10] for a in ask("notes by Dr. Reyes")["answer"]] == ["2023-11-02"]
    none = ask("notes by social work")
    assert none["status"] == "no-data" and "No social work notes on file" in none["text"]


def test_when_the_last_note_was_written():
    out = ask("when was the last note?")
    assert out["answer"] == ["2024-03-24"] and out["cited"] == {"DocumentReference/cards"}


@pytest.mark.parametrize(("question", "start", "end"), [
    ("notes from 2023", "2023-01-01", "2023-12-31"),  # the notes written then
    ("notes from 3/22", "2024-03-22", "2024-03-22"),
    ("notes since 3/22", "2024-03-22", None),  # since: to now
    ("notes since Friday", "2024-03-22", None),
])
def test_notes_from_a_period_are_that_periods_and_since_runs_to_now(question, start, end):
    args = notes_asked(parse(question, NOW)).args  # type: ignore[union-attr]
    assert args["start"][:10] == start and (args.get("end") or "")[:10] == (end or "")


@pytest.mark.parametrize(("question", "asked"), [
    ("who saw her last?", True),
    ("who saw him today?", True),
    ("last seen by?", True),
    ("who saw her for the rash?", False),  # a visit for something: the visits answer
])
def test_who_saw_her_is_read_as_the_last_author_only_as_the_fallback(question, asked):
    from fhirqa.agent.backends.offline.note_list_plan import seen_asked

    assert (seen_asked(parse(question, NOW)) is not None) == asked
    assert notes_asked(parse(question, NOW)) is None  # never before the visits
