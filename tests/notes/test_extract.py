"""Offline extraction from retrieved text: values, doses, findings with negation, and "not documented"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.notes import Hit, answer_from_notes
from fhirqa.notes.extract import negated, parse_target


def hit(text: str, ref: str = "DocumentReference/1", when: str = "2025-07-19T14:00:00", kind: str = "Progress note",
        score: float = 0.03) -> Hit:
    moment = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return Hit(f"[{moment.date()} {kind}]\n{text}", ref, ref, f"{ref}#c0", moment.date().isoformat(), moment, kind,
               "labs", score)


@pytest.mark.parametrize(("question", "kind", "target"), [
    ("What was her potassium on admission?", "value", "Potassium"),
    ("What was the vanc trough?", "value", "Vancomycin trough"),  # the lexicon's lab term, as "Potassium"
    ("What dose of Lasix is she on?", "dose", "furosemide"),
    ("How much metformin does he take?", "dose", "metformin"),
    ("Did she report chest pain?", "finding", "chest pain"),
    ("Was the patient short of breath at the visit on 7/19/2025?", "finding", "shortness of breath"),
    ("Did the patient complain of cough at the visit on 1986-05-01?", "finding", "cough"),
])
def test_question_shapes(question, kind, target):
    parsed = parse_target(question)
    assert (parsed.kind, parsed.name) == (kind, target)


def test_a_value_written_after_its_abbreviation():
    hits = [hit("Labs on admission (17:43): Na 136, K 5.4, Cr 2.69, Lactate 3.6.")]
    found = answer_from_notes("What was her potassium on admission?", hits)
    assert (found.kind, found.value, found.unit, found.ref) == ("value", 5.4, "mmol/L", "DocumentReference/1")
    assert found.sentence.startswith("Labs on admission") and found.answer == [5.4]
    assert answer_from_notes("What was the lactate?", hits).value == 3.6
    assert answer_from_notes("What was the blood pressure?", [hit("Vitals: BP 87/67, HR 85.")]).value == "87/67"
    assert answer_from_notes("What was his sodium?", [hit("Nausea resolved.")]) is None  # not documented


def test_a_trend_gives_the_later_value_at_discharge():
    hits = [hit("Hospital course: K 5.0 on admission -> 4.3 (7/26/2025).", kind="Discharge summary")]
    assert answer_from_notes("What was the potassium at discharge?", hits).value == 4.3
    assert answer_from_notes("What was the potassium on admission?", hits).value == 5.0


def test_a_dose_near_the_drug_name():
    hits = [hit("Current meds: amlodipine 5 mg PO daily; furosemide 40 mg PO daily; metformin 500 mg PO BID.")]
    assert answer_from_notes("What dose of Lasix is she on?", hits).value == "40 mg"
    assert answer_from_notes("What is the metformin dose?", hits).value == "500 mg"
    assert answer_from_notes("What dose of warfarin is she on?", hits) is None


@pytest.mark.parametrize(("sentence", "present"), [
    ("Denies chest pain, SOB, fever or dizziness.", False),
    ("No fever or chills.", False),
    ("S: Afebrile overnight.", False),
    ("Febrile overnight, still fatigued.", True),
    ("CC: fever, rigors, dysuria and confusion.", True),
    ("Denies cough but reports fever.", True),
    ("Fever: none.", False),
    ("Return for fever, worsening SOB or chest pain.", None),
])
def test_findings_with_negation(sentence, present):
    found = answer_from_notes("Did she have a fever?", [hit(sentence)])
    assert (None if found is None else not found.negated) is present


def test_negation_scope_ends_at_the_clause():
    sentence = "Denies chest pain; reports SOB."
    assert negated(sentence, sentence.index("chest"), sentence.index("chest") + 10)
    assert not negated(sentence, sentence.index("SOB"), sentence.index("SOB") + 3)


def test_which_mention_wins():
    early = hit("Labs: K 4.1.", "DocumentReference/early", "2024-01-05T15:00:00", "Outpatient Note", 0.02)
    late = hit("Labs: K 4.9.", "DocumentReference/late", "2025-03-05T15:00:00", "Outpatient Note", 0.01)
    admission = hit("Labs on admission: K 5.6.", "DocumentReference/hp", "2024-06-01T15:00:00",
                    "History and physical note", 0.005)
    hits = [early, late, admission]
    assert answer_from_notes("What was her potassium?", hits).value == 4.1  # the best-ranked hit
    assert answer_from_notes("What was her latest potassium?", hits).value == 4.9
    assert answer_from_notes("What was her first potassium?", hits).value == 4.1
    assert answer_from_notes("What was her potassium on admission?", hits).value == 5.6
    assert answer_from_notes("What was her potassium on 3/5/2025?", hits).value == 4.9  # the note of that day
    found = answer_from_notes("What was her latest potassium?", hits)
    assert found.date == "2025-03-05" and "DocumentReference/late" in found.text and '"Labs: K 4.9."' in found.text


def test_a_vanc_trough_is_read_from_notes_by_its_shorthands():
    assert {"vanc trough", "vanc level"} <= set(parse_target("What was the vanc trough?").names)
