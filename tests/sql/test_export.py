"""``fhirqa export omop``: the canonical views as OMOP CDM tables, and the same answers from both."""

from __future__ import annotations

import duckdb
import pytest

from fhirqa.agent.engine import ask
from fhirqa.sql import ask_sql, connect
from fhirqa.sql.export import export_omop
from fhirqa.sql.load import load_csv
from fhirqa.sql.schema import discover
from fhirqa.store import Store
from tests.sql.conftest import NOW

QUESTIONS = [
    "What was her last potassium?",
    "What was her last blood pressure?",
    "What was the highest glucose?",
    "What was the average creatinine?",
    "How many A1c measurements?",
    "How many ER visits?",
    "How many encounters?",
    "How many immunizations?",
    "Has she ever had a flu shot?",
    "What medications is she currently on?",
    "What are her active conditions?",
    "Did vancomycin ever exceed 2 g per day?",
    "What was the total daily dose of vancomycin?",
    "How many prescriptions?",
    "When was the first A1c?",
    "Is she allergic to penicillin?",
    "How old is she?",
    "What is her date of birth?",
    "Is she deceased?",
    "What was the trend of her A1c?",
    "Has she been diagnosed with diabetes?",
    "What was her first potassium after starting lisinopril?",
    "Was her systolic blood pressure ever above 140?",
]


def _patients(store):
    return dict(Store(store).query("SELECT name, patient_id FROM patient ORDER BY name").rows)


def test_the_export_writes_the_cdm_tables(sample_store, sample_omop):
    con = duckdb.connect(str(sample_omop), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"person", "visit_occurrence", "measurement", "observation", "drug_exposure", "condition_occurrence",
            "procedure_occurrence", "note", "death", "concept", "cdm_source", "person_name"} <= tables
    counts = Store(sample_store).counts()
    one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    assert one("SELECT count(*) FROM person") == counts["patient"]
    assert one("SELECT count(*) FROM visit_occurrence") == counts["encounter"]
    assert one("SELECT count(*) FROM measurement") + one("SELECT count(*) FROM observation") == counts["observation"] + counts["allergy"]
    assert one("SELECT count(*) FROM drug_exposure") == counts["medication"] + counts["immunization"]
    assert one("SELECT count(*) FROM note") == counts["note"]
    standard = ("SELECT drug_concept_id FROM drug_exposure UNION SELECT measurement_concept_id FROM measurement "
                "UNION SELECT condition_concept_id FROM condition_occurrence UNION SELECT procedure_concept_id "
                "FROM procedure_occurrence")
    assert one(f"SELECT count(*) FROM (SELECT vocabulary_id, concept_code FROM concept WHERE concept_id IN ({standard}) "
               "GROUP BY ALL HAVING count(*) > 1)") == 0  # one standard concept per code
    assert one("SELECT min(concept_id) FROM concept WHERE standard_concept IS NULL") > 2_000_000_000
    assert set(_patients(sample_store).values()) == {r[0] for r in con.execute("SELECT person_source_value FROM person").fetchall()}
    assert one("SELECT cdm_version FROM cdm_source") == "5.4"
    con.close()
    with connect(sample_omop) as db:
        assert discover(db).label == "OMOP CDM 5.4"


def _wall_clock(answer: dict) -> dict:
    """The answer with every ISO datetime as its wall-clock time: the views give a time in the offset the record
    wrote (2021-08-02T08:25:00-05:00), the OMOP export keeps local times as the CDM does (2021-08-02T08:25:00,
    read back as UTC); the same wall clock is the same answer."""
    from datetime import datetime

    def utc(value):
        if isinstance(value, str) and len(value) > 10 and value[4:5] == "-" and value[10:11] == "T":
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return value
            return moment.replace(tzinfo=None).isoformat()
        return value

    return {**answer, "answer": [utc(v) for v in answer.get("answer") or []]}


def test_fhir_views_and_the_exported_omop_database_give_the_same_answers(sample_store, sample_omop):
    from evals.cross_schema import agree

    con = connect(sample_omop)
    disagreements = []
    for name, pid in list(_patients(sample_store).items())[:3]:
        for question in QUESTIONS:
            fhir = _wall_clock(ask(question, patient_id=pid, now=NOW, db=sample_store).to_dict())
            sql = _wall_clock(ask_sql(question, patient_id=pid, now=NOW, connection=con).to_dict())
            gold = {"answer_type": "list" if len(fhir["answer"]) > 1 else "number" if isinstance(
                (fhir["answer"] or [None])[0], float) else "string", "tolerance": 1e-6}
            if not agree(gold, fhir, sql):
                disagreements.append((name, question, fhir["answer"], sql["answer"]))
    con.close()
    assert not disagreements


def test_omop_evidence_cites_table_row_column_value_and_time(sample_store, sample_omop):
    pid = _patients(sample_store)["Linda Taylor"]
    answer = ask_sql("What was her last potassium?", patient_id=pid, now=NOW, connection=sample_omop)
    (evidence,) = answer.evidence
    assert evidence.ref.startswith("measurement/") and evidence.field == "measurement.value_as_number"
    assert evidence.value == answer.answer[0] and evidence.time and evidence.unit == answer.unit
    panel = ask_sql("What was her last blood pressure?", patient_id=pid, now=NOW, connection=sample_omop)
    assert len(panel.answer) == 2 and {e.label for e in panel.evidence} == {"Systolic blood pressure", "Diastolic blood pressure"}


def test_csv_export_loads_back_and_answers_the_same(sample_store, tmp_path):
    out = tmp_path / "omop-csv"
    report = export_omop(sample_store, out, fmt="csv")
    assert (out / "person.csv").is_file() and report.tables["person"] == 5
    loaded = load_csv(out, tmp_path / "reloaded.duckdb")
    assert loaded.kind == "omop" and loaded.tables["measurement"] == report.tables["measurement"]
    pid = _patients(sample_store)["Linda Taylor"]
    for question in ("What was her last A1c?", "How many ER visits?", "What medications is she currently on?"):
        direct = ask_sql(question, patient_id=pid, now=NOW, connection=tmp_path / "reloaded.duckdb")
        fhir = ask(question, patient_id=pid, now=NOW, db=sample_store)
        assert sorted(map(str, direct.answer)) == sorted(map(str, fhir.answer))


def test_patient_lookup_reads_the_exported_names(sample_store, sample_omop):
    born = Store(sample_store).query("SELECT birth_date FROM patient WHERE name = 'Mei Wilson'").rows[0][0]
    answer = ask_sql(f"What is the patient id of Mei Wilson, born {born.isoformat()}?", patient_id=None, now=NOW,
                     connection=sample_omop)
    assert answer.answer == [_patients(sample_store)["Mei Wilson"]]
    assert answer.evidence[0].ref.startswith("person/")


def test_an_unknown_format_is_refused(sample_store, tmp_path):
    from fhirqa.sql.export import ExportError

    with pytest.raises(ExportError):
        export_omop(sample_store, tmp_path / "x", fmt="parquet")
