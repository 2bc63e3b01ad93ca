"""The command line: every sub-command on the example patients, and errors as one clear line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fhirqa.cli import main
from fhirqa.store.layout import read_manifest
from tests.conftest import SAMPLE


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    path = tmp_path_factory.mktemp("cli") / "db"
    assert main(["ingest", str(SAMPLE), "--db", str(path)]) == 0
    return path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def first_patient(capsys, db):
    _, out, _ = run(capsys, "sql", "SELECT patient_id FROM patient ORDER BY patient_id LIMIT 1", "--db", str(db), "--format", "csv")
    return out.splitlines()[1]


def test_views_lists_row_counts(db, capsys):
    code, out, _ = run(capsys, "views", "--db", str(db), "--format", "json")
    counts = {row["view"]: row["rows"] for row in json.loads(out)}
    assert code == 0 and counts["patient"] == 5 and counts["observation"] > 1000


def test_show_summarises_a_patient(db, capsys):
    pid = first_patient(capsys, db)
    code, out, _ = run(capsys, "show", pid, "--db", str(db))
    assert code == 0 and f"Patient/{pid}" in out and "rows:" in out


def test_sql_is_read_only_and_errors_are_one_line(db, capsys):
    code, _, err = run(capsys, "sql", "DELETE FROM observation", "--db", str(db))
    assert code == 2 and err.startswith("fhirqa: error: only SELECT") and "Traceback" not in err


def test_ask_json_gives_the_answer_object(db, capsys):
    pid = first_patient(capsys, db)
    code, out, _ = run(capsys, "ask", "How old is the patient?", "--patient", pid, "--db", str(db),
                       "--now", "2026-06-30T12:00:00Z", "--json")
    answer = json.loads(out)
    assert code == 0 and answer["status"] == "answered" and isinstance(answer["answer"][0], int)


def test_ask_prints_the_answer_then_the_evidence(db, capsys):
    pid = first_patient(capsys, db)
    code, out, _ = run(capsys, "ask", "latest weight", "--patient", pid, "--db", str(db), "--now", "2026-06-30T12:00:00Z")
    assert code == 0 and "Evidence" in out and "Observation/" in out


def test_batch_answers_every_line(db, capsys, tmp_path):
    pid = first_patient(capsys, db)
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps({"id": i, "patient_id": pid, "question": q, "now": "2026-06-30T12:00:00Z"})
                                   for i, q in enumerate(["last A1c", "How many encounters?"])))
    out_path = tmp_path / "a.jsonl"
    code, _, _ = run(capsys, "ask", "--batch", str(questions), "--out", str(out_path), "--db", str(db))
    answers = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert code == 0 and [a["id"] for a in answers] == [0, 1] and all(a["status"] == "answered" for a in answers)


def test_a_missing_input_is_a_clear_error_without_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "fhirqa.cli", "ingest", str(tmp_path / "nope"), "--db", str(tmp_path / "db")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "no such file or folder" in result.stderr and "Traceback" not in result.stderr


def test_rejected_records_make_a_nonzero_exit_and_a_summary(tmp_path, capsys):
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"resourceType": "Patient", "id": "p1"}\n{broken\n')
    code, out, _ = run(capsys, "ingest", str(bad), "--db", str(tmp_path / "db"))
    assert code == 1 and "1 rejected" in out and f"{bad}:2: malformed JSON" in out


def test_upgrade_remakes_what_an_older_fhirqa_left_and_then_has_nothing_to_do(tmp_path, capsys):
    db = tmp_path / "db"
    assert main(["ingest", str(SAMPLE), "--db", str(db)]) == 0
    manifest = json.loads((db / "manifest.json").read_text())
    del manifest["maps"]  # as an older fhirqa wrote it: no record of which maps made the rows
    (view,) = manifest["tables"]["view/patient"]
    older = view.replace("patient-", "patient-0ld")  # a view made by other SQL
    manifest["tables"]["view/patient"] = older  # and written as format 1 did: one file name
    (db / view).rename(db / older)
    (db / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    code, out, _ = run(capsys, "upgrade", "--db", str(db))
    assert code == 0 and "generation 2" in out and "map_observation: made again from" in out
    assert "0ld" not in read_manifest(db).parts("view/patient")[0]  # rebuilt with this fhirqa's SQL
    code, out, _ = run(capsys, "sql", "SELECT count(*) AS n FROM patient", "--db", str(db), "--format", "csv")
    assert out.splitlines()[1] == "5"
    code, out, _ = run(capsys, "upgrade", "--db", str(db))
    assert code == 0 and "already current (generation 2)" in out


def test_upgrade_of_a_folder_without_a_store_is_one_clear_line(tmp_path, capsys):
    code, _, err = run(capsys, "upgrade", "--db", str(tmp_path / "none"))
    assert code != 0 and "no fhirqa store here" in err and "Traceback" not in err
