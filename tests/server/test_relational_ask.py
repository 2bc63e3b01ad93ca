"""$ask over a store folder holding FHIR views and an OMOP database beside them: each patient from where they live."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.conftest import NAME_A, NOW, Server, ask_parameters, copy_store, make_config, run_server

QUESTION = "What was the last A1c?"


@pytest.fixture(scope="module")
def both(sample_store: Path, keys, ids, tmp_path_factory) -> Iterator[tuple[Server, str]]:
    """A server whose store also has the example patients exported to omop.duckdb; the first OMOP person_id."""
    import duckdb

    from fhirqa.sql.export import export_omop

    root = tmp_path_factory.mktemp("relational")
    db = copy_store(sample_store, root / "db")
    export_omop(db, db / "omop.duckdb")
    with duckdb.connect(str(db / "omop.duckdb"), read_only=True) as con:
        person = str(con.execute("SELECT min(person_id) FROM person").fetchone()[0])
    with run_server(make_config(db, root / "state", keys, ids[NAME_A]), keys) as running:
        yield running, person


def test_a_person_only_in_the_omop_database_is_answered_from_it(both):
    server, person = both
    with server.client(server.token()) as client:
        response = client.post(f"/api/patients/{person}/ask", json={"question": QUESTION, "now": NOW})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "answered" and body["trace"]["source"] == "omop.duckdb"


def test_a_patient_token_reaches_no_omop_person_but_its_own(both, ids):
    server, person = both
    token = server.token("patient/*.rs", patient=ids[NAME_A])
    with server.client(token) as client:
        assert client.post(f"/Patient/{person}/$ask", json=ask_parameters(QUESTION)).status_code == 403
        assert client.post(f"/Patient/{ids[NAME_A]}/$ask", json=ask_parameters(QUESTION)).status_code == 200


def test_a_person_in_neither_is_404(both):
    server, _ = both
    with server.client(server.token()) as client:
        assert client.post("/Patient/999999999/$ask", json=ask_parameters(QUESTION)).status_code == 404


def test_a_person_only_in_the_omop_database_has_view_rows_with_their_source_rows(both):
    server, person = both
    with server.client(server.token()) as client:
        response = client.get(f"/Patient/{person}/views/observation", params={"name": "a1c", "limit": 5})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["source"].startswith("OMOP") and body["patient"] == person
    assert body["rows"] and all(row["ref"].startswith("measurement/") for row in body["rows"])
    assert all("a1c" in row["name"].lower() for row in body["rows"])
    times = [row["time"] for row in body["rows"]]
    assert times == sorted(times)  # oldest first, as a FHIR store's view reads


def test_a_patient_token_reads_no_omop_persons_view(both, ids):
    server, person = both
    with server.client(server.token("patient/*.rs", patient=ids[NAME_A])) as client:
        assert client.get(f"/Patient/{person}/views/observation").status_code == 403


def test_a_view_the_omop_database_cannot_read_is_404_naming_what_it_has(both):
    server, person = both
    with server.client(server.token()) as client:
        response = client.get(f"/Patient/{person}/views/note")
    assert response.status_code == 404 and "observation" in response.text
