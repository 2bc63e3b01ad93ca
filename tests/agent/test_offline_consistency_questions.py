"""'Does the note agree with the record?' questions, answered offline by checking the note against the views."""

from __future__ import annotations

import pytest

from fhirqa.agent.backends.offline.consistency_plan import asks_consistency
from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import ingest
from tests.builders import condition, note, observation, patient, transaction, write_json

NOW = "2024-03-10T12:00:00Z"
NOTE = "PROGRESS NOTE\nO: Labs: K 5.9 (drawn 3/1/2024); Na 139 (prior 131 on 1/5/2024).\nA/P: hyperkalemia.\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ccq")
    write_json(folder / "in" / "p1.json", transaction(
        patient("p1"),
        observation("k1", value=4.1, when="2024-03-01T08:00:00Z"),
        observation("na1", code="2951-2", display="Sodium", value=139, when="2024-03-01T08:00:00Z"),
        observation("na0", code="2951-2", display="Sodium", value=131, when="2024-01-05T08:00:00Z"),
        note("n1", NOTE, "2024-03-02T10:00:00Z"),
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


# --- the failure classes of the blind probe (evals/probe_note_record), in other words and other notes ---

CLINIC = ("CLINIC NOTE\nO: Labs: Cr 1.3 (previously 0.9 on 2/12/2024); K 4.6 this AM.\n"
          "A/P:\n# Hypertension - stable.\n# Gout - flaring.\nMeds: continue lisinopril 20 mg PO daily.\n")
LATER_NOW = "2024-04-20T12:00:00Z"


def _med(mid: str, text: str, when: str) -> dict:
    return {"resourceType": "MedicationRequest", "id": mid, "status": "active", "intent": "order",
            "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                                      "code": "314076", "display": text}], "text": text},
            "subject": {"reference": "Patient/p1"}, "authoredOn": when,
            "dosageInstruction": [{"doseAndRate": [{"doseQuantity": {"value": 10, "unit": "mg"}}]}]}


@pytest.fixture(scope="module")
def clinic_db(tmp_path_factory):
    """Ada Lovelace: a clinic note with a wrong prior creatinine, an unrecorded diagnosis and a wrong dose."""
    folder = tmp_path_factory.mktemp("ccq2")
    cr = {"code": "2160-0", "display": "Creatinine", "unit": "mg/dL"}
    write_json(folder / "in" / "p1.json", transaction(
        patient("p1"),
        observation("cr0", **cr, value=1.0, when="2024-02-12T08:00:00Z"),
        observation("cr1", **cr, value=1.3, when="2024-03-28T08:00:00Z"),
        observation("k1", value=4.6, when="2024-03-28T08:00:00Z"),
        condition("c1", display="Hypertension"),
        _med("m1", "lisinopril 10 MG Oral Tablet", "2023-05-01T10:00:00Z"),
        note("n1", CLINIC, "2024-03-28T10:00:00Z"),
    ))
    ingest([FileSource([folder / "in"])], folder / "db")
    return folder / "db"


def _ask(question: str, db, now: str = "2024-04-05T12:00:00Z"):
    return ask(question, patient_id="p1", now=now, db=db)


@pytest.mark.parametrize(("question", "expected"), [
    ("Chart audit: the 3/28 note lists Gout - is that diagnosis supported by the problem list?", False),
    ("Chart audit: the 3/28 note lists Gout - is that diagnosis unsupported by the problem list?", True),
    ("the latest note has Hypertension in the A/P - is it supported by her problems?", True),
])
def test_a_diagnosis_in_a_note_is_checked_against_the_conditions_not_listed(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text


@pytest.mark.parametrize(("question", "expected"), [
    ("Is everything in her most recent note consistent with the record?", False),
    ("Is anything in the latest note inconsistent with the chart?", True),
    ("Does the whole of her last note agree with the labs?", False),
])
def test_everything_in_a_note_is_the_whole_note_not_an_item(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text


@pytest.mark.parametrize("word", ["consistnet", "consistant", "inconsistant", "discrepencies", "discrepancys",
                                  "contradicst", "acurate"])
def test_a_verdict_word_with_one_slip_still_asks_for_a_check(word):
    assert asks_consistency(f"is the K in the latest note {word}?")


def test_one_slip_is_read_only_on_long_words():
    from fhirqa.agent.backends.offline.consistency_plan import normalise

    assert normalise("Was her K in the March note in range?") == "Was her K in the March note in range?"
    assert normalise("any discrepencies, consistant?") == "any discrepancies, consistent?"
    assert not asks_consistency("Did the March note mention a batch of samples?")


def test_a_misspelled_verdict_question_gets_a_verdict(clinic_db):
    answer = _ask("any discrepencies in the latest note vs the chart?", clinic_db)
    assert answer.status == "answered" and answer.answer == [True]


@pytest.mark.parametrize(("question", "expected"), [
    ("Do Ada's notes and labs conflict anywhere?", True),
    ("Does Lovelace's documentation agree with the chart?", False),
])
def test_the_patients_own_name_is_not_an_item(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text
    assert "Ada" not in answer.text and "Lovelace" not in answer.text


@pytest.mark.parametrize(("question", "expected"), [
    ("The 3/28 note quotes an earlier creatinine from 2/12/2024 - is that value wrong?", True),
    ("Is the previous Cr (2/12/2024) cited in the March 28 note accurate?", False),
    ("does the prior creatinine in the latest note match the labs?", False),
])
def test_a_prior_value_is_checked_on_its_own_date(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text
    assert "0.9" in answer.text and "1.0" in answer.text  # the note's prior and the record's value on 2/12


def test_the_notes_own_value_is_not_its_prior(clinic_db):
    answer = _ask("is the creatinine documented in the 3/28 note right?", clinic_db)
    assert answer.answer == [True] and "Cr 1.3" in answer.text


def test_a_whole_note_check_includes_the_prior_it_quotes(tmp_path):
    write_json(tmp_path / "in" / "p1.json", transaction(
        patient("p1"),
        observation("cr0", code="2160-0", display="Creatinine", unit="mg/dL", value=1.0, when="2024-02-12T08:00:00Z"),
        observation("cr1", code="2160-0", display="Creatinine", unit="mg/dL", value=1.3, when="2024-04-02T08:00:00Z"),
        note("n2", "PROGRESS NOTE\nO: Cr 1.3 (prior 1.4 on 2/12/2024).\n", "2024-04-02T10:00:00Z"),
    ))
    ingest([FileSource([tmp_path / "in"])], tmp_path / "db")
    answer = _ask("any mismatch in the 4/2 progress note vs the chart?", tmp_path / "db", LATER_NOW)
    assert answer.answer == [True] and "prior 1.4" in answer.text


@pytest.mark.parametrize(("question", "expected"), [
    ("Is the lisinopril dose in her latest note what was prescribed?", False),
    ("Is the lisinopril in the 3/28 clinic note something her orders do not support (dose or drug)?", True),
])
def test_a_dose_in_a_note_is_compared_with_the_order(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text
    assert "lisinopril 20 mg" in answer.text


@pytest.mark.parametrize(("question", "expected", "quoted"), [
    ("pharmacy: are the meds in her latest note consistent with what's ordered?", False, "lisinopril 20 mg"),
    ("Are the diagnoses in the 3/28 note all backed up by her problem list?", False, "Gout"),
])
def test_a_kind_of_statement_checks_every_statement_of_that_kind(clinic_db, question, expected, quoted):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text
    assert quoted in answer.text and "Cr " not in answer.text  # the labs are another kind


def test_a_diagnosis_that_agrees_is_quoted_with_its_onset(clinic_db):
    answer = _ask("Is hypertension in the latest note supported by the conditions?", clinic_db)
    assert answer.answer == [True] and "on 2020-05-01" in answer.text and "None" not in answer.text


def test_have_the_right_value_is_a_verdict_question(clinic_db):
    answer = _ask("Does the 3/28 note have the right potassium?", clinic_db)
    assert answer.answer == [True] and "K 4.6" in answer.text


@pytest.mark.parametrize(("question", "expected"), [
    ("Does the 3/28 note misstate the potassium?", False),
    ("Is the K in the 3/28 note off from what the lab reported?", False),
    ("Does the latest note's potassium reflect the lab value?", True),
    ("Is the potassium charted in her last note in agreement with the labs?", True),
    ("Is there any inconsistency between the A/P of the last note and her problem list?", True),
])
def test_more_verdict_phrasings(clinic_db, question, expected):
    answer = _ask(question, clinic_db)
    assert answer.status == "answered" and answer.answer == [expected], answer.text
