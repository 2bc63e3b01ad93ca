"""The runner: asks every question through ``ask``, scores, summarises, writes failures (no engine needed)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from fhirqa.agent.answer import Answer
from fhirqa.evaluation.run import EvalReport, load_questions, main, run_eval

QUESTIONS = [
    {"id": "latest_value-001", "patient_id": "p1", "question": "Last K?", "now": "2021-01-10T12:00:00Z",
     "category": "latest_value", "answer_type": "number", "expected": [4.2], "expected_status": "answered",
     "tolerance": 0.01, "gold_refs": ["Observation/o1"], "template": "latest_value/3"},
    {"id": "latest_value-002", "patient_id": "p2", "question": "Last Na?", "now": "2021-01-10T12:00:00Z",
     "category": "latest_value", "answer_type": "number", "expected": [140.0], "expected_status": "answered",
     "tolerance": 0.01, "gold_refs": ["Observation/o2"], "template": "latest_value/1"},
    {"id": "existence_negative-001", "patient_id": "p1", "question": "Last TSH?", "now": "2021-01-10T12:00:00Z",
     "category": "existence_negative", "answer_type": "number", "expected": [], "expected_status": "no-data",
     "tolerance": 0.0, "gold_refs": [], "template": "existence_negative/absent-item/0"},
    {"id": "count_encounters-001", "patient_id": "p1", "question": "How many ER visits?",
     "now": "2021-01-10T12:00:00Z", "category": "count_encounters", "answer_type": "count", "expected": [2],
     "expected_status": "answered", "tolerance": 0.0, "gold_refs": [], "template": "count_encounters/EMER-all/0"},
]
REPLIES: dict[str, Any] = {
    "Last K?": Answer(answer=[4.2], text="4.2 mmol/L"),
    "Last Na?": Answer(answer=[131.0], text="131"),
    "Last TSH?": Answer(answer=[], text="no TSH on record", status="no-data"),
    "How many ER visits?": RuntimeError("boom"),
}


def fake_ask(*, question: str, patient_id: str | None, now: Any, db: Any, backend: str = "offline") -> Answer:
    reply = REPLIES[question]
    if isinstance(reply, Exception):
        raise reply
    return reply


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_run_scores_each_question(questions: Path) -> None:
    report = run_eval(questions, "db", ask=fake_ask)
    assert [r.correct for r in report.results] == [True, False, True, False]
    assert report.by_category() == {"latest_value": (1, 2), "existence_negative": (1, 1),
                                    "count_encounters": (0, 1)}
    assert report.accuracy == 0.5


def test_exception_is_an_error_answer(questions: Path) -> None:
    report = run_eval(questions, "db", ask=fake_ask)
    err = report.results[-1]
    assert err.got_status == "error" and "RuntimeError: boom" in err.reason


def test_filters_categories_and_limit(questions: Path) -> None:
    assert len(run_eval(questions, "db", ask=fake_ask, categories=["latest_value"]).results) == 2
    assert len(run_eval(questions, "db", ask=fake_ask, limit=1).results) == 1


def test_format_text_lists_categories_latency_and_failures(questions: Path) -> None:
    text = run_eval(questions, "db", ask=fake_ask).format_text()
    assert "latest_value" in text and "overall" in text and "50.0%" in text
    assert "latency: median" in text and "p95" in text
    assert "latest_value-002 [latest_value] Last Na?" in text and "expected: [140.0]" in text
    assert "got: [131.0]" in text


def test_to_json_round_trips(questions: Path) -> None:
    report = run_eval(questions, "db", ask=fake_ask)
    data = json.loads(report.to_json())
    assert data["total"] == 4 and data["correct"] == 2
    assert data["by_category"]["latest_value"] == {"correct": 1, "total": 2, "accuracy": 0.5}
    assert len(data["results"]) == 4


def test_empty_report() -> None:
    report = EvalReport("none.jsonl", "offline")
    assert report.accuracy == 0.0 and report.latency() == {"median_ms": 0.0, "p95_ms": 0.0}
    assert "failures: none" in report.format_text()


def test_load_questions_rejects_missing_keys(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing"):
        load_questions(path)


def test_main_uses_the_engine_and_writes_failures(questions: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    engine = types.ModuleType("fhirqa.agent.engine")
    engine.ask = fake_ask  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fhirqa.agent.engine", engine)
    failures, report = tmp_path / "fail.jsonl", tmp_path / "report.json"
    code = main(["--questions", str(questions), "--db", str(tmp_path), "--failures", str(failures),
                 "--json", str(report), "--by-template"])
    assert code == 0
    out = capsys.readouterr().out
    assert "overall" in out and "by pattern:" in out
    lines = [json.loads(x) for x in failures.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["latest_value-002", "count_encounters-001"]
    assert json.loads(report.read_text())["total"] == 4
