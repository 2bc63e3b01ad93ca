"""Mechanisms for wording the checker was not tuned on: a dose without a unit in a sig, salt and form
abbreviations between a drug and its dose, a clock time leading a list bullet, chemistry names and verb forms of a
vital, procedures through the lexicon, a heading ending the section before it, a date in a sentence's lead-in
and a phrase ("that visit") pointing back to the date named before it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.consistency import PatientChecker
from fhirqa.consistency.model import NoteContext
from fhirqa.consistency.segment import segment
from fhirqa.consistency.timing import find_times
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import observation, patient, transaction, write_json

VISIT = "2024-03-01T14:00:00Z"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"


def _med(mid: str, code: str, text: str) -> dict[str, Any]:
    return {"resourceType": "MedicationRequest", "id": mid, "status": "active", "intent": "order",
            "medicationCodeableConcept": {"coding": [{"system": RXNORM, "code": code, "display": text}], "text": text},
            "subject": {"reference": "Patient/p3"}, "authoredOn": "2023-06-01T10:00:00Z"}


def _vital(oid: str, code: str, display: str, value: float, unit: str, when: str) -> dict[str, Any]:
    obs = observation(oid, "p3", code, display, value, unit, when)
    obs["category"][0]["coding"][0]["code"] = "vital-signs"
    return obs


def _bp(when: str) -> dict[str, Any]:
    return {"resourceType": "Observation", "id": "bp3", "status": "final",
            "category": [{"coding": [{"code": "vital-signs"}]}],
            "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9", "display": "Blood Pressure"}]},
            "subject": {"reference": "Patient/p3"}, "effectiveDateTime": when,
            "component": [
                {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6",
                                      "display": "Systolic Blood Pressure"}]},
                 "valueQuantity": {"value": 147.2, "unit": "mm[Hg]"}},
                {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4",
                                      "display": "Diastolic Blood Pressure"}]},
                 "valueQuantity": {"value": 103.8, "unit": "mm[Hg]"}}]}


def _resources() -> list[dict[str, Any]]:
    return [
        patient("p3"),
        _med("m1", "310798", "Hydrochlorothiazide 25 MG Oral Tablet"),
        _med("m2", "866412", "24 HR metoprolol succinate 100 MG Extended Release Oral Tablet"),
        # the visit: weight at 13:30
        _vital("wt", "29463-7", "Body Weight", 68.61, "kg", "2024-03-01T13:30:00Z"),
        observation("k0", "p3", "6298-4", "Potassium", 4.72, "mmol/L", "2024-03-01T13:30:00Z"),
        # an earlier visit a letter writes about
        _bp("2024-02-20T10:00:00Z"),
        observation("k1", "p3", "6298-4", "Potassium", 4.08, "mmol/L", "2024-02-20T10:00:00Z"),
        observation("a1c", "p3", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.1, "%",
                    "2024-02-20T10:00:00Z"),
    ]


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("consistency-wording")
    ingest([FileSource([write_json(root / "in" / "bundle.json", transaction(*_resources()))])], root / "db")
    c = PatientChecker(Store(root / "db"), "p3")
    yield c
    c.close()


def _verdicts(checker, text: str, kind: str = "Progress note", time: str = VISIT):
    report = checker.check(text, time, kind)
    return [(report.text[c.entity.span[0]:c.entity.span[1]], c.status, c.fields, c.entity.skip) for c in report.checks]


# 1. a dose without a unit after a drug, before a frequency or route: the product strength's unit
@pytest.mark.parametrize(("text", "status", "fields"), [
    ("HCTZ 10 qhs", "inconsistent", ["value"]),
    ("HCTZ 25 qhs", "consistent", []),
    ("hydrochlorothiazide 500 qAM", "inconsistent", ["value"]),
    ("hydrochlorothiazide 25 once a day", "consistent", []),
    ("hydrochlorothiazide 25 PO", "consistent", []),
])
def test_a_dose_without_a_unit_is_compared_in_the_strengths_unit(checker, text, status, fields):
    (_, got, got_fields, _), = _verdicts(checker, f"Meds: {text}.")
    assert (got, got_fields) == (status, fields)


def test_a_bare_number_not_before_a_frequency_is_no_dose(checker):
    (written, status, _, _), = _verdicts(checker, "Meds: HCTZ 10, then stopped.")
    assert (written, status) == ("HCTZ", "consistent")  # a listed drug, no dose read


# 2. salt and form abbreviations between the name and the dose are data (shorthand.json salts / dose_forms)
@pytest.mark.parametrize(("text", "status"), [
    ("metoprolol succ 50 mg qd", "inconsistent"),
    ("metoprolol succ 100 mg qd", "consistent"),
    ("metoprolol succ ER 50 mg daily", "inconsistent"),
    ("metoprolol XL 100 mg daily", "consistent"),
])
def test_salt_and_form_abbreviations_keep_the_dose(checker, text, status):
    (_, got, fields, _), = _verdicts(checker, f"Meds: {text}.")
    assert got == status and (status == "consistent" or fields == ["value"])


def test_a_salt_symbol_counts_only_as_written_and_without_a_comma(checker):
    verdicts = _verdicts(checker, "Meds: HCTZ, K 4.7 today.")
    assert ("K 4.7", "consistent") in [(w, s) for w, s, *_ in verdicts]  # the potassium value, not a dose


# 3. a clock time leading a bullet times the line's statements
@pytest.mark.parametrize(("line", "status"), [
    ("- 13:30: wt 68.6 kg", "consistent"),
    ("- 12:30: wt 68.6 kg", "inconsistent"),
    ("- 1330: wt 68.6 kg", "consistent"),
    ("- 1230 - wt 68.6 kg", "inconsistent"),
])
def test_a_clock_time_leading_a_bullet(checker, line, status):
    (_, got, fields, _), = _verdicts(checker, f"Nursing note\nA:\n{line}\n", kind="Nursing note")
    assert got == status and (status == "consistent" or fields == ["time"])


def test_a_bullet_value_is_no_range_across_the_next_bullet(checker):
    verdicts = _verdicts(checker, "A:\n- 0903: pain score 4/10\n- 13:30: wt 68.6 kg\n", kind="Nursing note")
    pain = next(v for v in verdicts if v[0].startswith("pain"))
    assert pain[3] != "range"


# 4. chemistry names, verb forms of a vital, procedures through the lexicon
def test_kalium_and_weighed(checker):
    assert _verdicts(checker, "Labs today: Kalium 4.7 mmol/L.")[0][:2] == ("Kalium 4.7 mmol/L", "consistent")
    assert _verdicts(checker, "Labs today: Kalium 5.9.")[0][1:3] == ("inconsistent", ["value"])
    (_, status, fields, _), = _verdicts(checker, "Today she weighed 68.6 lb.")
    assert (status, fields) == ("inconsistent", ["unit"])
    assert _verdicts(checker, "Today she weighed 68.6 kg.")[0][1] == "consistent"


@pytest.mark.parametrize("name", ["cardiac cath", "knee arthroscopy", "heart cath"])
def test_an_absent_procedure_named_in_everyday_words(checker, name):
    (written, status, fields, _), = _verdicts(checker, f"ED course: Had {name} which was unremarkable.",
                                              kind="ED note")
    assert (written, status, fields) == (name, "inconsistent", ["existence"])


# 5. a heading ends the section before it, on its own line or after a sentence on the same line
def _kinds(text: str) -> list[tuple[str, str]]:
    return [(s.kind, text[s.start:s.end].strip()) for s in segment(text)]


def test_a_heading_ends_the_family_history():
    kinds = dict((body, kind) for kind, body in _kinds("FHx: father with MI at 58.\nTaking: HCTZ 25 mg qAM.\n"))
    assert kinds["Taking: HCTZ 25 mg qAM."[len("Taking: "):]] == "meds"
    same_line = _kinds("FHx: mother T2DM. Meds: HCTZ 25 mg qAM.")
    assert same_line[-1] == ("meds", "HCTZ 25 mg qAM.")
    # a heading of no known kind ends a one-line family history, not a block of relatives under its own heading
    assert _kinds("FHx: mother T2DM.\nCurrent: HCTZ 25 mg.\n")[-1] == ("other", "Current: HCTZ 25 mg.")
    block = _kinds("FHx:\nMother: diabetes\nFather: MI\n")
    assert block == [("family_history", "Mother: diabetes\nFather: MI")]


def test_a_drug_after_the_family_history_is_checked(checker):
    verdicts = _verdicts(checker, "FHx: father with MI at 58; mother T2DM.\nRule out PE.\n"
                                  "Taking: hydrochlorothiazide 25 mcg qAM.\n")
    drug = next(v for v in verdicts if v[0].startswith("hydrochlorothiazide"))
    assert drug[1:3] == ("inconsistent", ["unit"])


# 6. a date in a sentence's lead-in times the sentence; "that visit" the date named before it
LETTER_TIME = "2024-03-05T10:00:00Z"


@pytest.mark.parametrize("date", ["February 20", "20 Feb", "2/20", "Feb 20th"])
def test_a_date_leading_a_sentence_times_its_values(checker, date):
    text = (f"Dear Dr Okafor,\n\nI reviewed Ms Grant in clinic on {date}. Her problems are stable.\n\n"
            f"At that visit her blood pressure was 147 over 104. Bloods taken on {date} showed A1c 6.1%, K 4.1.\n")
    verdicts = _verdicts(checker, text, kind="Clinic letter", time=LETTER_TIME)
    values = [(w, s) for w, s, *_ in verdicts]
    assert [s for _, s in values] == ["consistent"] * 4, verdicts
    wrong = _verdicts(checker, text.replace("K 4.1", "K 4.7"), kind="Clinic letter", time=LETTER_TIME)
    assert wrong[-1][1] == "inconsistent"  # 4.7 is the visit of 3/1, not of 2/20


def test_month_day_dates_without_a_year():
    ctx = NoteContext(datetime(2024, 3, 5, 10, tzinfo=UTC), "other")
    texts = {e.text for e in find_times("seen on May 5 and 14 Aug, decreased 2 points, may 5 be", ctx)}
    assert texts == {"May 5", "14 Aug"}
    (aug,) = [e for e in find_times("on 14 Aug", ctx)]
    assert aug.window[0].date().isoformat() == "2023-08-14"  # the last 14 Aug up to the note
    assert find_times("At that visit BP was high.", ctx) == []  # nothing named before it: the note's window
    carried = find_times("Seen on 2/20. At that visit BP was high.", ctx)
    assert [e.text for e in carried] == ["2/20", "At that visit"] and carried[1].window == carried[0].window
