"""The whole pipeline on hand-written notes against a small store: verdicts, pinpointed fields, the report."""

from __future__ import annotations

import json

import pytest

from fhirqa.consistency import check_note, check_patient, note_kind
from fhirqa.consistency.match import Match
from fhirqa.consistency.verify import strengths

PROGRESS = "2024-03-01T14:00:00Z"


def _verdicts(checker, text: str, when: str = PROGRESS, kind: str = "Progress note", encounter: str | None = None):
    report = checker.check(text, when, kind, encounter)
    return [(report.text[c.entity.span[0]:c.entity.span[1]], c.status, c.fields) for c in report.checks]


@pytest.mark.parametrize(("text", "status", "fields"), [
    ("K 4.2", "consistent", []),
    ("K 4.5", "inconsistent", ["value"]),
    ("K 4.2 mg/dL", "inconsistent", ["unit"]),
    ("K 4.2 mEq/L", "consistent", []),
    ("K 4.2 at 0800", "consistent", []),
    ("K 4.2 at 0900", "inconsistent", ["time"]),
    ("Mg 2.0", "inconsistent", ["existence"]),
    ("WBC 10.2", "consistent", []),
    ("glucose 5.7 mmol/L", "consistent", []),
    ("temp 99.9", "consistent", []),
    ("T 37.7", "consistent", []),
    ("Wt 176.8 lb", "consistent", []),
    ("Wt 80.2 lb", "inconsistent", ["unit"]),
])
def test_type1_checks(checker, text, status, fields):
    (written, got, got_fields), = _verdicts(checker, text)
    assert (got, got_fields) == (status, fields), written


def test_blood_pressure_and_a_value_copied_from_another_day(checker):
    assert [v[1:] for v in _verdicts(checker, "BP 128/82")] == [("consistent", []), ("consistent", [])]
    assert [v[1:] for v in _verdicts(checker, "BP 128/90")] == [("consistent", []), ("inconsistent", ["value"])]
    # K 5.4 was the next morning's value: within a day of the window, so the time disagrees, not the value
    assert _verdicts(checker, "K 5.4 at 0800")[0][1:] == ("inconsistent", ["time"])


def test_drugs(checker):
    assert _verdicts(checker, "Lasix 40 mg IV given")[0][1:] == ("consistent", [])
    assert _verdicts(checker, "Lasix 80 mg IV given")[0][1:] == ("inconsistent", ["value"])
    assert _verdicts(checker, "Meds: Zocor 20 mg PO daily")[0][1:] == ("consistent", [])
    assert _verdicts(checker, "Meds: simvastatin 20 mcg daily")[0][1:] == ("inconsistent", ["unit"])
    assert _verdicts(checker, "Meds: simvastatin 20 mg BID")[0][1:] == ("inconsistent", ["frequency"])
    assert _verdicts(checker, "Meds: atorvastatin 20 mg daily")[0][1:] == ("inconsistent", ["existence"])
    # a drug started in this note's window must have been ordered in it (simvastatin was ordered in 2023)
    assert _verdicts(checker, "Started on simvastatin today.")[0][1:] == ("inconsistent", ["time"])


def test_existence_of_diagnoses_procedures_vaccines(checker):
    verdicts = _verdicts(checker, "PMH: HTN, CHF. CXR done. Flu shot given yesterday.", when="2024-03-03T10:00:00Z")
    assert [v[1:] for v in verdicts] == [("consistent", []), ("inconsistent", ["existence"]),
                                         ("inconsistent", ["time"]), ("consistent", [])]


def test_discharge_summary_window_is_the_stay(checker):
    text = "K 5.4 on HD #2. K 5.4 on HD #3. CXR on 3/1/2024."
    verdicts = _verdicts(checker, text, when="2024-03-04T12:00:00Z", kind="Discharge summary", encounter="Encounter/e1")
    assert [v[1:] for v in verdicts] == [("consistent", []), ("inconsistent", ["time"]), ("consistent", [])]


def test_unverifiable_statements_are_reported_not_flagged(checker):
    verdicts = _verdicts(checker, "Denies CHF. FHx: mother with CKD. Plan: recheck Mg 2.0 tomorrow.")
    assert {v[1] for v in verdicts} == {"unverifiable"}


def test_report_json_table_and_rows(store):
    report = check_note(store, "p1", "Labs: K 4.5, Cr 1.1. Mg 2.0.", PROGRESS, "progress")
    data = json.loads(report.to_json(with_text=True))
    assert data["counts"] == {"consistent": 1, "inconsistent": 2, "unverifiable": 0}
    k = data["entities"][0]
    assert k["fields"] == ["value"] and k["entity"]["span"] == [6, 11] and k["text"] == "K 4.5"
    assert k["rows"][0]["ref"] == "Observation/k1" and "value ≈ 4.5 ±0.05" in k["query"]
    table = report.to_table()
    assert "inconsistent" in table and "existence" in table and "Potassium" in table


def test_check_patient_reads_notes_from_the_note_view(store):
    (report,) = check_patient(store, "p1")
    assert report.note_ref == "DocumentReference/d1" and report.encounter == "Encounter/e1"
    by_text = {report.text[c.entity.span[0]:c.entity.span[1]]: (c.status, c.fields) for c in report.checks}
    assert by_text["K 5.4"] == ("consistent", []) and by_text["Cr 1.1"] == ("consistent", [])
    assert by_text["CHF"] == ("inconsistent", ["existence"]) and by_text["HTN"] == ("consistent", [])
    assert by_text["Lasix 40 mg"] == ("consistent", []) and by_text["simvastatin 20 mg"] == ("consistent", [])


def test_note_kinds_and_strengths():
    assert [note_kind(t) for t in ("Discharge summary", "History and physical note", "Nursing note", "Progress note",
                                   "Consult")] == ["discharge", "admission", "nursing", "progress", "other"]
    assert strengths({"medication_name": "Acetaminophen 325 MG Oral Tablet", "dose": 2, "dose_unit": None}) == [
        (325.0, "mg"), (650.0, "mg")]
    assert Match("observation").names == []


def test_cli_check(store, capsys):
    from fhirqa.cli import main

    assert main(["check", "p1", "--db", str(store.db)]) == 1  # the stored note says CHF, which the record lacks
    out = capsys.readouterr().out
    assert "DocumentReference/d1" in out and "existence" in out and "1 inconsistent" in out
    assert main(["check", "p1", "--db", str(store.db), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)[0]["counts"]["inconsistent"] == 1
