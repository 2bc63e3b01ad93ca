"""``fhirqa omop load|tables|ask`` and ``fhirqa export omop``."""

from __future__ import annotations

import json

from fhirqa.cli import main
from tests.sql.conftest import NOW
from tests.sql.test_load import _omop_folder


def test_omop_load_and_tables(tmp_path, capsys):
    out = tmp_path / "omop.duckdb"
    assert main(["omop", "load", str(_omop_folder(tmp_path / "csv")), "--out", str(out)]) == 0
    assert "measurement" in capsys.readouterr().out and out.is_file()
    assert main(["omop", "tables", str(out), "--format", "csv"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("table,rows,patient key") and "measurement,1,person_id,builtin" in text


def test_omop_ask_prints_the_answer_and_its_rows(mimic_db, capsys):
    assert main(["omop", "ask", "What was his last potassium?", "--database", str(mimic_db), "--patient", "10006",
                 "--now", "2166-01-01T00:00:00Z"]) == 0
    text = capsys.readouterr().out
    assert "answer: [4.6] mEq/L" in text and "labevents/3" in text and "labevents.valuenum" in text
    assert main(["omop", "ask", "What was his last potassium?", "--database", str(mimic_db), "--patient", "10006",
                 "--now", "2166-01-01T00:00:00Z", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == [4.6] and data["trace"]["schema"] == "MIMIC-III" and data["trace"]["sql"]


def test_omop_ask_with_an_unknown_patient_fails_with_one_line(mimic_db, capsys):
    assert main(["omop", "ask", "last potassium", "--database", str(mimic_db), "--patient", "1"]) == 1
    assert "No patient '1'" in capsys.readouterr().out


def test_export_omop(sample_store, tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["export", "omop", "--db", str(sample_store), "--out", str(out), "--format", "csv"]) == 0
    assert "person" in capsys.readouterr().out and (out / "measurement.csv").is_file()
    assert main(["omop", "ask", "How many ER visits has she had?", "--database", str(out), "--patient", "1", "--now", NOW]) == 0


def test_a_missing_database_is_one_error_line(tmp_path, capsys):
    assert main(["omop", "tables", str(tmp_path / "nothing.duckdb")]) == 2
    assert capsys.readouterr().err.startswith("fhirqa: error:")
