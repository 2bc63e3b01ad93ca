"""$check-consistency (and a consistency question) for patients of OMOP/MIMIC databases loaded beside the views.

A real server over a store folder holding the example patients' FHIR views, the test MIMIC-III database with its
notes (``mimic.duckdb``, subjects 10006 and 10011) and the example patients exported to OMOP (``omop.duckdb``,
person_id 1…). A relational patient's notes are checked by the same checker as a FHIR patient's, against their
database's rows; a token confined to one patient reaches no other patient's notes or checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import NAME_A, Server, run_relational_server
from tests.sql.relational_beside import OTHER, PATIENT

CHECK = "/api/patients/{}/check-consistency"


@pytest.fixture(scope="module")
def relational(sample_store: Path, keys: Any, ids: dict[str, str], tmp_path_factory) -> Iterator[Server]:
    """The server, with the test MIMIC-III database and the store's OMOP export beside it."""
    with run_relational_server(sample_store, keys, ids[NAME_A], tmp_path_factory.mktemp("relational-check"),
                               omop=True) as running:
        yield running


def entities(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A report's entities by the words the note wrote."""
    return {e["text"]: e for e in report["entities"]}


def test_every_note_of_a_mimic_patient_is_checked_against_their_labs(relational):
    with relational.client(relational.token()) as client:
        response = client.post(CHECK.format(PATIENT), json={})
    assert response.status_code == 200, response.text
    reports = response.json()["reports"]
    assert [r["note_ref"] for r in reports] == ["noteevents/1", "noteevents/2"]  # oldest first; the error row never
    progress = entities(reports[0])
    assert progress["K 5.4"]["status"] == "consistent" and progress["K 5.4"]["rows"][0]["ref"] == "labevents/2"
    assert progress["HR 104"]["rows"][0]["ref"] == "chartevents/2"
    assert progress["Creatinine 2.9"]["status"] == "inconsistent" and "value" in progress["Creatinine 2.9"]["fields"]
    assert reports[0]["encounter"] == "admissions/1"


def test_one_note_named_by_its_source_row_through_the_fhir_operation(relational):
    body = {"resourceType": "Parameters", "parameter": [{"name": "note", "valueReference": {"reference": "noteevents/1"}}]}
    with relational.client(relational.token()) as client:
        response = client.post(f"/Patient/{PATIENT}/$check-consistency", json=body)
    assert response.status_code == 200, response.text
    (report,) = response.json()["parameter"]
    parts = {p["name"]: p for p in report["part"]}
    assert parts["note"]["valueReference"]["reference"] == "noteevents/1"
    assert parts["inconsistent"]["valueInteger"] == 1
    detail = json.loads(parts["detail"]["valueString"])
    assert {e["rows"][0]["ref"] for e in detail["entities"] if e["rows"]} >= {"labevents/2", "prescriptions/2"}


def test_a_pasted_note_is_checked_against_the_databases_record(relational):
    with relational.client(relational.token()) as client:
        response = client.post(CHECK.format(PATIENT), json={"text": "K 4.6 this morning.", "time": "2164-10-25T09:00:00Z"})
    assert response.status_code == 200, response.text
    (checked,) = response.json()["reports"][0]["entities"]
    assert checked["status"] == "consistent" and checked["rows"][0]["ref"] == "labevents/3"


def test_an_omop_persons_note_is_checked_against_their_measurements(relational):
    with relational.client(relational.token()) as client:
        response = client.post(CHECK.format("1"), json={"note": "note/1"})
    assert response.status_code == 200, response.text
    (report,) = response.json()["reports"]
    refs = {row["ref"].split("/")[0] for e in report["entities"] for row in e["rows"]}
    assert report["note_ref"] == "note/1" and report["counts"]["consistent"] > 0
    assert "measurement" in refs and refs <= {"measurement", "observation", "drug_exposure", "condition_occurrence",
                                              "procedure_occurrence"}


def test_a_token_for_one_patient_never_checks_anothers_notes(relational, ids):
    with relational.client(relational.token("patient/*.rs", patient=PATIENT)) as client:
        assert client.post(CHECK.format(PATIENT), json={"note": "noteevents/1"}).status_code == 200
        assert client.post(CHECK.format(OTHER), json={}).status_code == 403
        assert client.post(f"/Patient/{OTHER}/$check-consistency",
                           json={"resourceType": "Parameters", "parameter": []}).status_code == 403
        # 10011's note asked through 10006's path: not this patient's note
        crossed = client.post(CHECK.format(PATIENT), json={"note": "noteevents/4"})
        assert crossed.status_code in (400, 404) and "reports" not in crossed.text and "6.9" not in crossed.text
    with relational.client(relational.token("patient/*.rs", patient=ids[NAME_A])) as client:
        assert client.post(CHECK.format(PATIENT), json={}).status_code == 403


def test_a_patient_in_no_database_is_404(relational):
    with relational.client(relational.token()) as client:
        assert client.post(CHECK.format("999999999"), json={}).status_code == 404


def test_a_question_whether_a_mimic_notes_potassium_matches_the_labs_is_answered_citing_both(relational):
    pytest.importorskip("lancedb")
    question = {"question": "Does the 10/24/2164 note's potassium match the labs?", "now": "2164-11-15T12:00:00Z"}
    with relational.client(relational.token()) as client:
        response = client.post(f"/api/patients/{PATIENT}/ask", json=question)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "answered" and body["answer"] == [True], body["text"]
    assert [e["ref"] for e in body["evidence"]] == ["noteevents/1", "labevents/2"]
    assert body["trace"]["source"] == "mimic.duckdb"
