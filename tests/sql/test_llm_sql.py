"""The LLM SQL writer, driven by a scripted model: retries on database errors and on empty results, scoped rows."""

from __future__ import annotations

import json

import pytest

from fhirqa.agent.backends.base import ModelTurn
from fhirqa.sql import ask_sql, connect

NOW = "2166-01-01T00:00:00Z"


class Scripted:
    """A model that replies from a list, and remembers what it was sent."""

    name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[str, list]] = []

    def complete(self, messages, tools, *, role):
        self.seen.append((role, list(messages)))
        if role == "describer":
            return ModelTurn(text="A table.", prompt_tokens=1, completion_tokens=1)
        return ModelTurn(text=self.replies.pop(0), prompt_tokens=100, completion_tokens=10)


def sql(text: str) -> str:
    return json.dumps({"sql": text})


@pytest.fixture(scope="module")
def con(mimic_db):
    connection = connect(mimic_db)
    yield connection
    connection.close()


def test_a_database_error_is_sent_back_and_the_fixed_query_answers(con):
    model = Scripted([
        sql("SELECT valuenum, charttime FROM labevents WHERE potassium > 1"),
        sql("SELECT l.row_id, l.valuenum, l.valueuom, l.charttime FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid "
            "WHERE d.label = 'Potassium' ORDER BY l.charttime DESC LIMIT 1"),
        json.dumps({"answer": [4.6], "unit": "mEq/L", "status": "answered", "text": "The last potassium was 4.6 mEq/L."}),
    ])
    answer = ask_sql("What was his last potassium?", patient_id="10006", now=NOW, connection=con, backend=model)
    assert answer.status == "answered" and answer.answer == [4.6] and answer.unit == "mEq/L"
    attempts = answer.trace["attempts"]
    assert len(attempts) == 2 and "error" in attempts[0] and attempts[1]["rows"] == 1
    fix_request = model.seen[1][1][-1].content
    assert "potassium" in fix_request.lower() and "refused or failed" in fix_request
    assert [e.ref for e in answer.evidence] == ["labevents/3"] and answer.evidence[0].field == "labevents.valuenum"
    assert answer.tokens["prompt"] >= 300 and answer.backend == "scripted"
    assert "labevents" in answer.trace["tables"] and "d_labitems" in answer.trace["tables"]


def test_the_prompt_shows_the_tables_and_only_the_patients_own_sample_row(con):
    model = Scripted([sql("SELECT row_id, valuenum FROM labevents LIMIT 1"),
                      json.dumps({"answer": [1], "status": "answered", "text": "ok"})])
    ask_sql("What was his last potassium lab?", patient_id="10006", now=NOW, connection=con, backend=model)
    system, user = model.seen[0][1][0].content, model.seen[0][1][1].content
    assert "Do not filter by patient" in system and "## labevents" in user and "Columns:" in user
    assert '"subject_id": 10006' in user and "10011" not in user


def test_an_empty_result_where_the_patient_has_rows_gets_one_more_try(con):
    model = Scripted([
        sql("SELECT l.row_id, l.valuenum FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid WHERE d.label = 'K+'"),
        sql("SELECT l.row_id, l.valuenum FROM labevents l JOIN d_labitems d ON d.itemid = l.itemid WHERE d.label = 'Potassium' "
            "ORDER BY l.valuenum DESC LIMIT 1"),
        json.dumps({"answer": [5.4], "status": "answered", "text": "Highest 5.4."}),
    ])
    answer = ask_sql("What was his highest potassium?", patient_id="10006", now=NOW, connection=con, backend=model)
    assert answer.answer == [5.4] and [a["rows"] for a in answer.trace["attempts"]] == [0, 1]
    assert "returned no rows" in model.seen[1][1][-1].content


def test_writes_and_other_patients_are_refused_whatever_the_model_writes(con):
    other = sql("SELECT * FROM labevents WHERE subject_id = 10011")
    model = Scripted([sql("DROP TABLE labevents"), other, other, json.dumps({"answer": [], "status": "no-data", "text": "None."})])
    answer = ask_sql("Show the other patient's labs", patient_id="10006", now=NOW, connection=con, backend=model)
    attempts = answer.trace["attempts"]
    assert "only SELECT" in attempts[0]["error"]
    assert [a["rows"] for a in attempts[1:]] == [0, 0]  # scoped: subject 10011's rows are not this patient's
    assert answer.status == "no-data" and answer.evidence == []


def test_three_retries_then_an_error(con):
    model = Scripted([sql("SELECT nothing FROM nowhere")] * 4)
    answer = ask_sql("What was his last potassium?", patient_id="10006", now=NOW, connection=con, backend=model)
    assert answer.status == "error" and len(answer.trace["attempts"]) == 4 and answer.answer == []


def test_an_unknown_schema_is_answered_by_the_model_with_the_patient_scoped(tmp_path):
    import sqlite3

    path = tmp_path / "clinic.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE lab_results (id INTEGER PRIMARY KEY, patient_id TEXT, test TEXT, value REAL, taken_at TEXT)")
    db.executemany("INSERT INTO lab_results VALUES (?, ?, ?, ?, ?)", [(1, "p1", "potassium", 4.2, "2020-01-01 10:00:00"),
                                                                         (2, "p2", "potassium", 6.1, "2020-02-01 10:00:00")])
    db.commit()
    db.close()
    model = Scripted([sql("SELECT id, value, taken_at FROM lab_results WHERE test = 'potassium' ORDER BY taken_at DESC LIMIT 1"),
                      json.dumps({"answer": [4.2], "unit": "mmol/L", "status": "answered", "text": "4.2"})])
    answer = ask_sql("What was the last potassium?", patient_id="p1", now=NOW, connection=path, backend=model)
    assert answer.answer == [4.2] and answer.trace["schema"] == "unknown schema"
    assert answer.trace["attempts"][0]["rows"] == 1 and answer.evidence[0].ref == "lab_results/1"
    offline = ask_sql("What was the last potassium?", patient_id="p1", now=NOW, connection=path)
    assert offline.status == "refused" and "LLM backend" in offline.text
