"""The shared OMOP data sets load and answer; FHIR views and their OMOP export agree (skipped without ../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql, connect
from fhirqa.sql.load import load_csv
from fhirqa.sql.schema import discover

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def synthea27(tmp_path_factory):
    from tests.sql.conftest import SHARED

    source = SHARED / "omop" / "synthea27nj" / "Synthea27Nj_5.4.zip"
    if not source.is_file():
        pytest.skip(f"{source} is absent (the shared data set is in CI and developer checkouts)")
    report = load_csv(source, tmp_path_factory.mktemp("s27") / "synthea27nj.duckdb")
    con = connect(report.path)
    yield con, report
    con.close()


@pytest.fixture(scope="module")
def mimic_iv(tmp_path_factory):
    from tests.sql.conftest import SHARED

    source = SHARED / "omop" / "mimic-iv-demo-omop-5.3"
    if not source.is_dir():
        pytest.skip(f"{source} is absent (the shared data set is in CI and developer checkouts)")
    report = load_csv(source, tmp_path_factory.mktemp("mimic4") / "mimic-iv-demo.duckdb")
    con = connect(report.path)
    yield con, report
    con.close()


def test_synthea27nj_omop_54_loads_and_answers(synthea27):
    con, report = synthea27
    schema = discover(con)
    assert schema.label == "OMOP CDM 5.4" and report.tables["person"] == 28 and report.tables["measurement"] == 10_040
    concept = con.raw.execute("SELECT concept_code FROM concept WHERE concept_id = 3025315").fetchone()
    assert concept == ("29463-7",)  # codes stay text
    now = "2023-01-01T00:00:00Z"
    weight = ask_sql("What was his last weight?", patient_id="1", now=now, connection=con)
    expected = con.raw.execute("SELECT value_as_number, measurement_id FROM measurement WHERE person_id = 1 AND "
                               "measurement_concept_id = 3025315 ORDER BY measurement_datetime DESC LIMIT 1").fetchone()
    assert weight.answer == [expected[0]] and weight.evidence[0].ref == f"measurement/{expected[1]}" and weight.unit == "kg"
    source_id = con.raw.execute("SELECT person_source_value FROM person WHERE person_id = 1").fetchone()[0]
    by_source = ask_sql("What was his last weight?", patient_id=source_id, now=now, connection=con)
    assert by_source.answer == weight.answer
    visits = con.raw.execute("SELECT count(*) FROM visit_occurrence WHERE person_id = 1").fetchone()[0]
    assert ask_sql("How many encounters has he had?", patient_id="1", now=now, connection=con).answer == [visits]
    assert ask_sql("Has he ever had acute viral pharyngitis?", patient_id="1", now=now, connection=con).answer == [True]
    assert ask_sql("What is his gender?", patient_id="1", now=now, connection=con).answer == ["male"]
    assert ask_sql("How many acetaminophen prescriptions?", patient_id="1", now=now, connection=con).answer == [8]


def test_mimic_iv_demo_omop_53_loads_and_answers(mimic_iv):
    con, report = mimic_iv
    schema = discover(con)
    assert schema.label == "OMOP CDM 5.3" and report.tables["person"] == 100
    assert "measurement" not in schema.tables  # absent from this extract
    person, subject = con.raw.execute("SELECT person_id, person_source_value FROM person WHERE person_source_value = "
                                      "'10014354'").fetchone()
    now = "2200-01-01T00:00:00Z"
    admissions = ask_sql("How many hospital admissions has he had?", patient_id=subject, now=now, connection=con)
    # an admission is a visit coded inpatient, or one that records where the patient was admitted from (this ETL codes
    # admissions by admission type: 8870 "EW EMER.", 581385 "OBSERVATION ADMIT", 8883 same-day surgery)
    expected = con.raw.execute("SELECT count(*) FROM visit_occurrence WHERE person_id = ? AND (visit_concept_id IN (9201, 262) "
                               "OR coalesce(admitting_source_concept_id, 0) <> 0 OR admitting_source_value IS NOT NULL)",
                               [person]).fetchone()[0]
    assert admissions.answer == [expected] and expected > 0
    saline = ask_sql("Has he been given sodium chloride?", patient_id=subject, now=now, connection=con)
    assert saline.answer == [True] and saline.evidence[0].ref.startswith("drug_exposure/")
    af = ask_sql("Was he ever in atrial fibrillation?", patient_id=subject, now=now, connection=con)
    assert af.answer == [True] and af.evidence[0].ref.startswith("condition_occurrence/")
    procedures = con.raw.execute("SELECT count(*) FROM procedure_occurrence WHERE person_id = ?", [person]).fetchone()[0]
    assert ask_sql("How many procedures has he had?", patient_id=str(person), now=now, connection=con).answer == [procedures]


def _bundles_for(folder: Path, patient_ids: set[str]) -> list[Path]:
    """The bundle files holding these patients (their id appears near the top of the file)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        with path.open("rb") as handle:
            head = handle.read(20_000).decode("utf-8", "ignore")
        if any(pid in head for pid in patient_ids):
            found.append(path)
    return found


def test_cross_schema_agreement_on_synthea_r4(shared, tmp_path):
    """Two questions per category of the evaluation set, FHIR views against the same data exported to OMOP."""
    from evals.cross_schema import run
    from fhirqa.sources import FileSource
    from fhirqa.sql.export import export_omop
    from fhirqa.store import ingest
    from tests.sql.conftest import ROOT

    questions = [json.loads(line) for line in (ROOT / "evals" / "synthea-r4.jsonl").read_text().splitlines() if line]
    chosen: dict[str, list[dict]] = {}
    for q in questions:
        if len(chosen.setdefault(q["category"], [])) < 2:
            chosen[q["category"]].append(q)
    picked = [q for qs in chosen.values() for q in qs]
    wanted = {q["patient_id"] for q in picked if q["patient_id"]} | {q["expected"][0] for q in picked
                                                                     if q["category"] == "patient_lookup"}
    bundles = _bundles_for(shared / "synthea-r4", wanted)
    db = tmp_path / "db"
    ingest([FileSource(bundles)], db)
    omop = tmp_path / "omop.duckdb"
    export_omop(db, omop)
    subset = tmp_path / "questions.jsonl"
    subset.write_text("\n".join(json.dumps(q) for q in picked))
    report = run(db, omop, subset)
    assert report["total"] == 44
    assert report["agreement"] >= 0.95, report["disagreements"]
    assert all(c["agree"] >= 1 for c in report["by_category"].values())
