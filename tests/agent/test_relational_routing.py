"""One store folder, two forms of record: FHIR views first, then an OMOP/MIMIC database loaded beside them."""

from __future__ import annotations

import shutil

import pytest

from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

NOW = "2026-06-30T12:00:00Z"
QUESTION = "What was the last A1c?"


@pytest.fixture(scope="module")
def fhir_and_omop(tmp_path_factory):
    """The example patients as FHIR views, and the same patients exported to ``omop.duckdb`` beside them."""
    from fhirqa.sql.export import export_omop
    from tests.conftest import SAMPLE

    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    db = tmp_path_factory.mktemp("both") / "db"
    ingest([FileSource([SAMPLE])], db)
    export_omop(db, db / "omop.duckdb")
    return db


def person_ids(omop) -> list[tuple[str, str]]:
    import duckdb

    with duckdb.connect(str(omop), read_only=True) as con:
        return [(str(p), s) for p, s in con.execute(
            "SELECT person_id, person_source_value FROM person ORDER BY person_id").fetchall()]


def test_a_patient_of_the_fhir_views_is_answered_from_them(fhir_and_omop):
    patient = Store(fhir_and_omop).query("SELECT patient_id FROM patient ORDER BY 1").rows[0][0]
    answer = ask(QUESTION, patient_id=patient, now=NOW, db=fhir_and_omop)
    assert answer.status == "answered" and "source" not in answer.trace
    assert all("/" in e.ref and not e.ref.startswith("measurement/") for e in answer.evidence)


def test_a_patient_only_in_the_omop_database_is_answered_from_it(fhir_and_omop):
    person_id, source_value = person_ids(fhir_and_omop / "omop.duckdb")[0]
    from_fhir = ask(QUESTION, patient_id=source_value, now=NOW, db=fhir_and_omop)
    routed = ask(QUESTION, patient_id=person_id, now=NOW, db=fhir_and_omop)  # an OMOP person_id, not a FHIR id
    assert routed.trace["source"] == "omop.duckdb" and routed.trace["schema"].startswith("OMOP")
    assert routed.status == "answered" and routed.answer == from_fhir.answer


def test_a_folder_holding_only_a_relational_database_answers_too(fhir_and_omop, tmp_path):
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(fhir_and_omop / "omop.duckdb", only / "omop.duckdb")
    person_id, _ = person_ids(only / "omop.duckdb")[0]
    answer = ask(QUESTION, patient_id=person_id, now=NOW, db=only)
    assert answer.status == "answered" and answer.trace["source"] == "omop.duckdb"


def test_a_patient_in_neither_is_still_an_error_naming_the_store(fhir_and_omop):
    answer = ask(QUESTION, patient_id="no-such-patient", now=NOW, db=fhir_and_omop)
    assert answer.status == "error" and "no-such-patient" in answer.text


def test_a_damaged_database_beside_the_store_is_named_in_the_error(fhir_and_omop, tmp_path):
    from fhirqa.errors import FhirqaError

    db = tmp_path / "db"
    shutil.copytree(fhir_and_omop, db, ignore=shutil.ignore_patterns("omop.duckdb"))
    (db / "omop.duckdb").write_bytes(b"not a database")
    with pytest.raises(FhirqaError, match="omop.duckdb"):
        ask(QUESTION, patient_id="42", now=NOW, db=db)
