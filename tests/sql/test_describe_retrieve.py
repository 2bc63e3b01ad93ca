"""Table descriptions (built-in, derived, LLM; cached beside the database) and table retrieval."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from fhirqa.agent.backends.base import ModelTurn
from fhirqa.sql.connect import connect
from fhirqa.sql.describe import cache_path, describe
from fhirqa.sql.retrieve import rank, select_tables
from fhirqa.sql.schema import discover


@pytest.fixture
def custom_db(tmp_path):
    """An unknown schema: a lab results table keyed by patient, a dictionary of tests, a site table."""
    path = tmp_path / "clinic.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE lab_results (id INTEGER PRIMARY KEY, patient_id TEXT, test_code TEXT, value REAL, unit TEXT, "
                "taken_at TIMESTAMP)")
    con.execute("CREATE TABLE d_tests (test_code TEXT PRIMARY KEY, label TEXT)")
    con.execute("CREATE TABLE sites (site_id INTEGER, city TEXT)")
    con.execute("INSERT INTO d_tests VALUES ('K', 'Potassium'), ('NA', 'Sodium')")
    con.execute("INSERT INTO lab_results VALUES (1, 'p1', 'K', 4.2, 'mmol/L', '2020-01-01 10:00:00')")
    con.commit()
    con.close()
    return path


class Describer:
    name = "scripted"

    def __init__(self):
        self.calls = 0

    def complete(self, messages, tools, *, role):
        self.calls += 1
        assert role == "describer" and "Columns:" in messages[-1].content
        return ModelTurn(text="Laboratory results per patient with values and units.")


def test_builtin_descriptions_for_mimic_tables(mimic_db):
    with connect(mimic_db) as con:
        descriptions = describe(con, discover(con))
    assert descriptions["labevents"].source == "builtin" and "Laboratory results" in descriptions["labevents"].text
    assert descriptions["labevents"].columns["valuenum"] == "numeric result"
    assert descriptions["d_labitems"].source == "builtin" and len(descriptions) == 14


def test_derived_descriptions_for_an_unknown_schema(custom_db):
    with connect(custom_db) as con:
        schema = discover(con)
        descriptions = describe(con, schema)
    assert schema.kind == "unknown" and schema.patient_key("lab_results") == "patient_id" and schema.is_dictionary("d_tests")
    lab = descriptions["lab_results"]
    assert lab.source == "derived" and "patient key patient_id" in lab.text and "taken_at" in lab.text and "value" in lab.text
    assert "dictionary" in descriptions["d_tests"].text.lower() and "Potassium" in descriptions["d_tests"].text
    assert "Potassium" not in lab.text and "p1" not in lab.text  # patient rows are never sampled


def test_llm_descriptions_are_cached_beside_the_database_and_reused(custom_db):
    model = Describer()
    with connect(custom_db) as con:
        first = describe(con, discover(con), backend=model)
        path = cache_path(con)
    assert first["lab_results"].source == "llm" and model.calls == 3 and path.is_file()
    assert json.loads(path.read_text())["lab_results"]["text"].startswith("Laboratory results")
    with connect(custom_db) as con:
        again = describe(con, discover(con), backend=model)
    assert model.calls == 3 and again["lab_results"].text == first["lab_results"].text
    db = sqlite3.connect(custom_db)
    db.execute("ALTER TABLE lab_results ADD COLUMN flag TEXT")
    db.commit()
    db.close()
    with connect(custom_db) as con:
        changed = describe(con, discover(con), backend=model)
    assert model.calls == 4 and changed["lab_results"].source == "llm"  # only the changed table is described again


def test_retrieval_ranks_the_tables_a_question_needs(mimic_db, custom_db):
    with connect(mimic_db) as con:
        schema = discover(con)
        descriptions = describe(con, schema)
        chosen = select_tables("What was his last potassium?", descriptions, schema, k=3)
        assert chosen[0] == "labevents" and "d_labitems" in chosen
        drugs = select_tables("When was heparin first prescribed?", descriptions, schema, k=3)
        assert drugs[0] == "prescriptions"
        dx = select_tables("Which ICD-9 diagnoses were billed?", descriptions, schema, k=2, boost={})
        assert "diagnoses_icd" in dx and "d_icd_diagnoses" in dx
    with connect(custom_db) as con:
        schema = discover(con)
        ranked = rank("lab results values", describe(con, schema), schema, embedder=None)
        assert ranked[0].table == "lab_results" and ranked[0].semantic is None


def test_embeddings_are_blended_in_when_available(mimic_db):
    class Fake:
        def encode(self, texts):
            vectors = np.array([[1.0, 0.0] if "chart" in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32)
            vectors[0] = [1.0, 0.0]  # the question
            return vectors

    with connect(mimic_db) as con:
        schema = discover(con)
        ranked = rank("vitals", describe(con, schema), schema, embedder=Fake())
    assert all(s.semantic is not None for s in ranked)
    assert ranked[0].table in {"chartevents", "d_items", "noteevents"} or ranked[0].semantic == 1.0
