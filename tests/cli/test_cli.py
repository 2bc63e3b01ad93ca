"""The command line: every sub-command on the example patients, and errors as one clear line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fhirqa.cli import main
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
