"""Pieces of the server on their own: configuration, job recovery, answer Parameters, JSON logs."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import orjson
import pytest

import fhirqa
from fhirqa.server.config import ConfigError, load_config
from fhirqa.server.fhir import answer_parameters, reference_of, typed_value
from fhirqa.server.jobs import Job, JobManager
from fhirqa.server.logs import JsonFormatter
from tests import builders


def test_config_file_then_environment_then_flags(tmp_path: Path):
    jwks = tmp_path / "ehr.json"
    jwks.write_text('{"keys": []}')
    file = tmp_path / "server.toml"
    file.write_text('db = "store"\nport = 9000\nrate_limit_per_minute = 10\nallowed_backends = ["offline"]\n'
                    '[[issuers]]\nissuer = "https://ehr.test"\njwks_file = "ehr.json"\n'
                    '[[clients]]\nclient_id = "c1"\nscope = "system/*.rs"\npublic_key_file = "c1.pem"\n')
    config = load_config(file, env={"FHIRQA_SERVER_PORT": "9100", "FHIRQA_SERVER_AUDIT_QUESTIONS": "false"},
                         overrides={"host": "127.0.0.1", "port": None})
    assert config.db == tmp_path / "store"  # relative to the file
    assert config.port == 9100 and config.rate_limit_per_minute == 10 and config.audit_questions is False
    assert config.issuers[0].jwks_file == jwks and config.clients[0].public_key_file == tmp_path / "c1.pem"
    assert config.public_url == "http://127.0.0.1:9100" and config.token_url.endswith("/auth/token")
    assert config.state_path == tmp_path / "store.server"
    with pytest.raises(ConfigError, match="unknown setting"):
        load_config(None, env={}, overrides={"nonsense": 1})
    with pytest.raises(ConfigError, match="loopback"):
        load_config(None, env={}, overrides={"dev": True, "host": "0.0.0.0"})  # noqa: S104 - refused on purpose
    with pytest.raises(ConfigError, match="true or false"):
        load_config(None, env={"FHIRQA_SERVER_DEV": "maybe"})


def test_interrupted_job_is_requeued_and_completes(tmp_path: Path):
    db, state = tmp_path / "db", tmp_path / "state"
    jobs_dir = state / "jobs"
    jobs_dir.mkdir(parents=True)
    # What a kill -9 during an ingest leaves: the job marked running, its input on disk.
    job = Job(id="a" * 32, kind="ingest", owner="o", status="running", attempts=1, request={"format": "ndjson"})
    (jobs_dir / f"{job.id}.json").write_bytes(orjson.dumps(job.__dict__))
    (jobs_dir / f"{job.id}.input").write_text(json.dumps(builders.patient("rec-1")) + "\n")
    # And a pull whose bearer token lived only in memory: it cannot resume.
    pull = Job(id="b" * 32, kind="pull", owner="o", status="running", request={"url": "http://x", "token_given": True})
    (jobs_dir / f"{pull.id}.json").write_bytes(orjson.dumps(pull.__dict__))
    manager = JobManager(db, state)
    manager.start()
    try:
        deadline = time.monotonic() + 30
        # The job is marked completed, then its input file is dropped: wait for both (no race under load).
        while (manager.get(job.id).status != "completed" or (jobs_dir / f"{job.id}.input").exists()) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        recovered = manager.get(job.id)
        assert recovered.status == "completed" and recovered.attempts == 2
        assert "interrupted" in recovered.notes[0]
        assert not (jobs_dir / f"{job.id}.input").exists()  # input dropped once stored
        assert manager.get(pull.id).status == "interrupted"
        assert "token" in manager.get(pull.id).error["issue"][0]["diagnostics"]
    finally:
        manager.stop(5)
    assert fhirqa.Store(db).query("SELECT id FROM resources").rows == [("rec-1",)]
    on_disk = orjson.loads((jobs_dir / f"{job.id}.json").read_bytes())
    assert on_disk["status"] == "completed"


def test_answer_parameters_types_and_references():
    assert typed_value(True) == {"valueBoolean": True}
    assert typed_value(3) == {"valueInteger": 3} and typed_value(2**40) == {"valueDecimal": 2**40}
    assert typed_value("2024-01-02") == {"valueDate": "2024-01-02"}
    assert typed_value("2024-01-02T03:04:05+00:00") == {"valueDateTime": "2024-01-02T03:04:05+00:00"}
    assert typed_value("text") == {"valueString": "text"}
    assert reference_of("note:DocumentReference/9#chunk-2") == "DocumentReference/9"
    params = answer_parameters({"answer": [], "text": "Which one?", "status": "ambiguous", "candidates": ["a", "b"],
                                "evidence": [{"ref": "note:DocumentReference/9#chunk-2", "field": "note.text",
                                              "value": "x"}]}, None)
    names = [p["name"] for p in params["parameter"]]
    assert names.count("candidate") == 2 and "answer" not in names
    evidence = next(p for p in params["parameter"] if p["name"] == "evidence")
    assert evidence["part"][0] == {"name": "reference", "valueReference": {"reference": "DocumentReference/9"}}
    assert {"name": "source", "valueString": "note:DocumentReference/9#chunk-2"} in evidence["part"]


def test_json_log_lines_carry_extra_fields():
    record = logging.LogRecord("fhirqa.server", logging.INFO, __file__, 1, "request", None, None)
    record.route = "/jobs"
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "request" and line["route"] == "/jobs" and line["level"] == "info"


def test_ingest_jobs_wait_for_another_writer(tmp_path: Path):
    """A CLI ingest holding the store's lock makes the job wait its turn, not fail."""
    from fhirqa.store.layout import writer_lock

    db, state = tmp_path / "db", tmp_path / "state"
    manager = JobManager(db, state)
    manager.start()
    try:
        with writer_lock(db):
            job = Job(id="c" * 32, kind="ingest", owner="o", request={"format": "ndjson"})
            manager.input_path(job.id).write_text(json.dumps(builders.patient("wait-1")) + "\n")
            manager.submit_ingest(job)
            time.sleep(1.5)  # longer than one lock retry
            assert manager.get(job.id).status == "running" and manager.get(job.id).error is None
        deadline = time.monotonic() + 30
        while manager.get(job.id).status == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert manager.get(job.id).status == "completed"
    finally:
        manager.stop(5)
