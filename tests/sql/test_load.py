"""Loading OMOP and MIMIC-III CSV files (folders, zips, gzipped files) into DuckDB, and detecting what they are."""

from __future__ import annotations

import gzip
import zipfile

import pytest

from fhirqa.sql.connect import ConnectError, connect
from fhirqa.sql.load import LoadError, cached_load, load_csv, omop_type
from fhirqa.sql.schema import discover

PERSON = "person_id,gender_concept_id,year_of_birth,birth_datetime,person_source_value\n1,8532,1980,1980-02-03 00:00:00,abc\n"
CONCEPT = "concept_id,concept_name,domain_id,vocabulary_id,concept_class_id,standard_concept,concept_code,valid_start_date," \
          "valid_end_date,invalid_reason\n3025315,Body weight,Measurement,LOINC,Clinical Observation,S,0123-4,19700101,20991231,\n"
MEASUREMENT = "measurement_id,person_id,measurement_concept_id,measurement_date,measurement_datetime,value_as_number," \
              "unit_source_value,measurement_source_value\n7,1,3025315,20200105,2020-01-05 08:00:00,70.5,kg,0123-4\n"
VISIT = "visit_occurrence_id,person_id,visit_concept_id,visit_start_date,admitting_source_concept_id\n1,1,9201,2020-01-05,0\n"


def _omop_folder(folder, **extra):
    folder.mkdir()
    files = {"PERSON.csv": PERSON, "CONCEPT.csv": CONCEPT, "MEASUREMENT.csv": MEASUREMENT, "VISIT_OCCURRENCE.csv": VISIT,
             "README.md": "not a table", **extra}
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_omop_csv_types_follow_the_cdm(tmp_path):
    report = load_csv(_omop_folder(tmp_path / "omop"), tmp_path / "omop.duckdb")
    assert report.kind == "omop" and report.tables == {"person": 1, "concept": 1, "measurement": 1, "visit_occurrence": 1}
    assert report.skipped == ["README.md"] and "measurement" in report.summary()
    with connect(report.path) as con:
        schema = discover(con)
        types = {c.name: c.type for c in schema.tables["measurement"].columns}
        assert types["measurement_id"] == "BIGINT" and types["measurement_date"] == "DATE"
        assert types["measurement_datetime"] == "TIMESTAMP" and types["value_as_number"] == "DOUBLE"
        assert types["measurement_source_value"] == "VARCHAR"
        assert con.raw.execute("SELECT concept_code, valid_start_date FROM concept").fetchone()[0] == "0123-4"
        assert str(con.raw.execute("SELECT measurement_date FROM measurement").fetchone()[0]) == "2020-01-05"  # YYYYMMDD read
        assert schema.label == "OMOP CDM 5.3"  # admitting_source_concept_id, no episode table, no cdm_source


def test_the_cdm_version_is_read_from_cdm_source(tmp_path):
    folder = _omop_folder(tmp_path / "omop54", **{"cdm_source.csv": "cdm_source_name,cdm_version\nx,v5.4.1\n"})
    with connect(load_csv(folder, tmp_path / "omop54.duckdb").path) as con:
        assert discover(con).label == "OMOP CDM 5.4"


def test_a_zip_with_macos_leftovers_loads(tmp_path):
    archive = tmp_path / "omop.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("PERSON.csv", PERSON)
        z.writestr("__MACOSX/._PERSON.csv", "junk")
        z.writestr("CONCEPT.csv", CONCEPT)
    report = load_csv(archive, tmp_path / "zip.duckdb")
    assert report.tables == {"person": 1, "concept": 1}


def test_mimic_csv_gz_files_load_with_lower_case_names(tmp_path):
    folder = tmp_path / "mimic"
    folder.mkdir()
    with gzip.open(folder / "PATIENTS.csv.gz", "wt") as out:
        out.write("ROW_ID,SUBJECT_ID,GENDER,DOB,DOD\n1,10006,M,2094-03-05 00:00:00,\n")
    (folder / "ADMISSIONS.csv").write_text("ROW_ID,SUBJECT_ID,HADM_ID,ADMITTIME\n1,10006,142345,2164-10-23 21:09:00\n")
    report = load_csv(folder, tmp_path / "mimic.duckdb")
    assert report.kind == "mimic" and set(report.tables) == {"patients", "admissions"}
    with connect(report.path) as con:
        schema = discover(con)
        assert schema.kind == "mimic-iii" and schema.tables["patients"].has("subject_id")
        assert con.raw.execute("SELECT typeof(admittime) FROM admissions").fetchone()[0] == "TIMESTAMP"


def test_a_folder_connects_through_a_cached_load(tmp_path, monkeypatch):
    monkeypatch.setenv("FHIRQA_SQL_CACHE", str(tmp_path / "cache"))
    folder = _omop_folder(tmp_path / "omop")
    first = cached_load(folder)
    assert first.parent == tmp_path / "cache" and cached_load(folder) == first
    with connect(folder) as con:
        assert con.dialect == "duckdb" and con.path == first


def test_bad_inputs_say_what_is_wrong(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LoadError, match="no CSV files"):
        load_csv(empty, tmp_path / "x.duckdb")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ConnectError, match="not a SQLite or DuckDB"):
        connect(tmp_path / "notes.txt")
    with pytest.raises(ConnectError, match="no such"):
        connect(tmp_path / "missing.sqlite")


@pytest.mark.parametrize(("column", "kind"), [("person_id", "BIGINT"), ("vocabulary_id", "VARCHAR"), ("concept_code", "VARCHAR"),
                                              ("drug_exposure_start_datetime", "TIMESTAMP"), ("days_supply", "INTEGER"),
                                              ("value_as_number", "DOUBLE"), ("verbatim_end_date", "DATE"), ("sig", "VARCHAR")])
def test_omop_column_types(column, kind):
    assert omop_type(column) == kind
