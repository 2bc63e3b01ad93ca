"""The page for a patient who lives in an OMOP database loaded beside the views: found, headed, rows shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.server.conftest import Server, copy_store, make_config, run_server

A = "Linda Taylor"


@pytest.fixture(scope="module")
def omop_ui(sample_store: Path, keys: Any, ids: dict[str, str], tmp_path_factory) -> Iterator[tuple[Server, str, str]]:
    """A server whose store has the example patients also exported to omop.duckdb; an OMOP person_id and
    the key of one of that person's measurement rows."""
    from fhirqa.sql.export import export_omop

    root = tmp_path_factory.mktemp("omop-ui")
    db = copy_store(sample_store, root / "db")
    export_omop(db, db / "omop.duckdb")
    with duckdb.connect(str(db / "omop.duckdb"), read_only=True) as con:
        person = con.execute("SELECT min(person_id) FROM person").fetchone()[0]
        row = con.execute("SELECT min(measurement_id) FROM measurement WHERE person_id = ?", [person]).fetchone()[0]
    with run_server(make_config(db, root / "state", keys, ids[A]), keys) as running:
        yield running, str(person), str(row)


def test_the_header_of_an_omop_person_has_demographics_and_problems_with_their_source_rows(omop_ui):
    server, person, _ = omop_ui
    with server.client(server.token("system/*.rs")) as client:
        response = client.get(f"/ui/api/patients/{person}/header")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["patient"]["id"] == person and body["patient"]["source"].startswith("OMOP")
    assert body["patient"]["birth_date"] and body["withheld"] == []
    assert all(p["ref"].startswith("condition_occurrence/") for p in body["problems"])
    assert body["allergies"] == []


def test_a_source_row_of_the_person_is_shown_and_another_persons_is_not(omop_ui):
    server, person, row = omop_ui
    with server.client(server.token("system/*.rs")) as client:
        own = client.get(f"/ui/api/patients/{person}/resources/measurement/{row}")
        other = client.get(f"/ui/api/patients/{int(person) + 1}/resources/measurement/{row}")
        unknown_table = client.get(f"/ui/api/patients/{person}/resources/no_such_table/{row}")
    assert own.status_code == 200, own.text
    assert str(own.json()["person_id"]) == person and str(own.json()["measurement_id"]) == row
    assert other.status_code == 404 and unknown_table.status_code == 404


def test_a_token_for_patient_a_reaches_no_omop_person(omop_ui, ids):
    server, person, row = omop_ui
    with server.client(server.token("patient/*.rs", patient=ids[A])) as client:
        assert client.get(f"/ui/api/patients/{person}/header").status_code == 403
        assert client.get(f"/ui/api/patients/{person}/resources/measurement/{row}").status_code == 403
        found = client.get("/ui/api/patients", params={"q": person}).json()["patients"]
    assert found == []


def test_search_finds_an_omop_person_by_id_and_lists_their_notes(omop_ui):
    server, person, _ = omop_ui
    with server.client(server.token("system/*.rs")) as client:
        found = client.get("/ui/api/patients", params={"q": person}).json()["patients"]
        notes = client.get(f"/ui/api/patients/{person}/notes")
    assert [p["id"] for p in found] == [person] and found[0]["source"].startswith("OMOP")
    listed = notes.json()["notes"]
    assert notes.status_code == 200 and listed and all(n["ref"].startswith("note/") for n in listed)
    times = [n["time"] for n in listed]
    assert times == sorted(times, reverse=True)  # newest first, as a FHIR patient's
