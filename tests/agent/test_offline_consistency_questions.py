"""'Does the note agree with the record?' questions, answered offline by checking the note against the views."""

from __future__ import annotations

import base64

import pytest

from fhirqa.agent.backends.offline.consistency_plan import asks_consistency
from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import ingest
from tests.builders import observation, patient, transaction, write_json

NOW = "2024-03-10T12:00:00Z"
NOTE = "PROGRESS NOTE\nO: Labs: K 5.9 (drawn 3/1/2024); Na 139 (prior 131 on 1/5/2024).\nA/P: hyperkalemia.\n"


def _note(nid: str, text: str, when: str) -> dict:
    return {"resourceType": "DocumentReference", "id": nid, "status": "current",
            "type": {"text": "Progress note"}, "subject": {"reference": "Patient/p1"}, "date": when,
            "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(text.encode()).decode()}}]}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ccq")
    write_json(folder / "in" / "p1.json", transaction(
        patient("p1"),
        observation("k1", value=4.1, when="2024-03-01T08:00:00Z"),
        observation("na1", code="2951-2", display="Sodium", value=139, when="2024-03-01T08:00:00Z"),
        observation("na0", code="2951-2", display="Sodium", value=131, when="2024-01-05T08:00:00Z"),
        _note("n1", NOTE, "2024-03-02T10:00:00Z"),
    ))
    ingest([FileSource([folder / "in"])], folder / "db")
    return folder / "db"


def test_a_mismatch_is_no_with_both_sides_and_their_sources(db):
    answer = ask("Does this note's potassium match the lab table?", patient_id="p1", now=NOW, db=db)
    assert answer.status == "answered" and answer.answer == [False]
    assert "K 5.9" in answer.text and "4.1" in answer.text
    assert {"DocumentReference/n1", "Observation/k1"} <= {e.ref for e in answer.evidence}


def test_a_match_is_yes(db):
    answer = ask("is the sodium in the latest progress note right?", patient_id="p1", now=NOW, db=db)
    assert answer.answer == [True] and "Na 139" in answer.text


def test_asking_whether_they_disagree_turns_the_answer_around(db):
    answer = ask("Do her notes and labs disagree anywhere?", patient_id="p1", now=NOW, db=db)
    assert answer.answer == [True] and "K 5.9" in answer.text


def test_an_item_the_note_does_not_state_is_no_data(db):
    answer = ask("Does the note's hemoglobin match the labs?", patient_id="p1", now=NOW, db=db)
    assert answer.status == "no-data"


@pytest.mark.parametrize("question", [
    "Did the note mention right knee pain?", "What was her last potassium?", "Is there a discharge summary?",
    "What did the progress note say about her potassium?",
])
def test_other_note_questions_are_not_consistency_checks(question):
    assert not asks_consistency(question)


@pytest.mark.parametrize("question", [
    "any discrepancies between the H&P and the labs?", "Does the BP in the 4/2 note line up with the vitals?",
    "Is the A1c documented in January correct?", "note vs chart: do the Cr values agree?",
])
def test_consistency_questions_in_other_words(question):
    assert asks_consistency(question)


def test_now_bounds_the_notes_checked(db):
    answer = ask("Do her notes and labs disagree anywhere?", patient_id="p1", now="2024-03-01T12:00:00Z", db=db)
    assert answer.status == "no-data"  # the only note was written on 3/2, after this now
