"""Questions about the notes of one kind route to them (offline/note_kind_plan.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.note_kind_plan import note_kind_question, plan_note_kind
from fhirqa.agent.backends.offline.parser import parse

NOW = datetime(2165, 6, 9, 12, tzinfo=UTC)


@pytest.mark.parametrize(("question", "kind"), [
    ("date of last d/c summary?", "discharge summary"),
    ("# of nursing notes this admit?", "nursing note"),
    ("last CXR impression?", "chest x-ray"),
    ("any PE on the imaging reports?", "radiology report"),
    ("K in the last progress note?", "progress note"),
    # a kind that is also a procedure or study: the record's tables answer first, the reports when they hold nothing
    ("Could you check whether she ever had any CXR?", None),
    ("How many times has he had a chest film since January?", None),
    ("what is the latest potassium?", None),
])
def test_which_questions_are_about_a_kind_of_note(question: str, kind: str | None) -> None:
    assert note_kind_question(parse(question, NOW)) == kind


def test_a_procedure_kind_is_the_fallback_once_the_tables_hold_nothing() -> None:
    assert note_kind_question(parse("when was the last CXR?", NOW), fallback=True) == "chest x-ray"


def drive(question: str, tool_result: dict) -> list:
    pq = parse(question, NOW)
    plan = plan_note_kind(pq, note_kind_question(pq, fallback=True))  # type: ignore[arg-type]
    calls = [next(plan)]
    try:
        calls.append(plan.send(tool_result))
        next(plan)
    except StopIteration:
        pass
    return calls


def test_the_kind_goes_to_find_in_notes_and_no_note_of_it_is_no_data() -> None:
    calls = drive("date of the last ECG?", {"ok": True, "found": False, "no_kind": True, "text": "No ECG on file."})
    assert calls[0] == ("find_in_notes", {"question": "date of the last ECG?", "note_kind": "ECG"})
    assert calls[1][1]["status"] == "no-data"


def test_a_section_this_reader_cannot_find_leaves_the_question_to_the_other_plans() -> None:
    calls = drive("principal dx per the 7/8/2023 DC summary?", {"ok": True, "found": False, "no_kind": False})
    assert calls[0][1]["note_kind"] == "discharge summary" and "start" in calls[0][1]
    assert len(calls) == 1  # no final answer: the note reader of the visit tries next
