"""Reading a relational patient's record like the views: rows of one view, and `fhirqa show`."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import duckdb
import pytest

from fhirqa.errors import FhirqaError
from fhirqa.sql.browse import RelationalPatient, UnknownRelationalView


def test_a_views_rows_are_the_patients_own_oldest_first_with_their_source_rows(mimic_db):
    rows = RelationalPatient(mimic_db, "10006").rows("observation", name="potassium", limit=50)
    potassium = [r for r in rows.rows if r["name"] == "Potassium"]
    assert [r["value"] for r in potassium] == [4.1, 5.4, 4.6]  # 10011's 6.9 and 7.2 never appear
    assert [r["ref"] for r in potassium] == ["labevents/1", "labevents/2", "labevents/3"]
    assert rows.columns[-1] == "ref" and rows.source == "MIMIC-III" and not rows.truncated
    assert potassium[0]["time"].startswith("2164-10-23T17:30")


def test_a_time_window_is_since_inclusive_and_until_exclusive(mimic_db):
    patient = RelationalPatient(mimic_db, "10006")
    since = datetime(2164, 10, 24, 4, tzinfo=UTC)
    until = datetime(2164, 10, 25, 4, tzinfo=UTC)
    rows = patient.rows("observation", name="potassium", since=since, until=until)
    assert [r["value"] for r in rows.rows if r["name"] == "Potassium"] == [5.4]


def test_a_page_says_when_more_rows_were_left_out(mimic_db):
    rows = RelationalPatient(mimic_db, "10006").rows("observation", limit=2)
    assert len(rows.rows) == 2 and rows.truncated
    assert rows.as_json()["count"] == 2


def test_a_name_filter_is_a_literal_substring_not_a_pattern(mimic_db):
    assert RelationalPatient(mimic_db, "10006").rows("observation", name="%").rows == []


def test_a_view_the_schema_cannot_read_is_an_error_naming_the_views_it_has(mimic_db):
    with pytest.raises(UnknownRelationalView, match="has no 'note' view .*observation"):
        RelationalPatient(mimic_db, "10006").rows("note")


def test_an_unknown_patient_is_an_error_naming_the_database(mimic_db):
    with pytest.raises(FhirqaError, match="no patient '424242'"):
        RelationalPatient(mimic_db, "424242")


def test_the_summary_has_demographics_counts_and_latest_rows(mimic_db):
    text = RelationalPatient(mimic_db, "10006").summary(limit=3)
    assert "born 2094-03-05" in text and "Patient/10006" in text
    assert "observation" in text.splitlines()[1]
    assert "Latest observations" in text and "labevents/" in text
    assert "6.9" not in text  # the other patient's potassium


@pytest.fixture(scope="module")
def omop_folder(sample_store, tmp_path_factory):
    """A store folder with the example patients exported to omop.duckdb beside the views; one person_id."""
    from fhirqa.sql.export import export_omop

    db = tmp_path_factory.mktemp("browse") / "db"
    shutil.copytree(sample_store, db)
    export_omop(db, db / "omop.duckdb")
    with duckdb.connect(str(db / "omop.duckdb"), read_only=True) as con:
        person = str(con.execute("SELECT min(person_id) FROM person").fetchone()[0])
    return db, person


def test_show_prints_a_person_who_lives_only_in_the_omop_database(omop_folder, capsys):
    from fhirqa.cli import main

    db, person = omop_folder
    assert main(["show", person, "--db", str(db), "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert f"Patient/{person}" in out and "OMOP" in out and "Latest observations" in out


def test_show_of_nobody_names_both_places_it_looked(omop_folder, capsys):
    from fhirqa.cli import main

    db, _ = omop_folder
    assert main(["show", "nobody-at-all", "--db", str(db)]) != 0
    err = capsys.readouterr().err
    assert "neither in the views nor in omop.duckdb" in err
