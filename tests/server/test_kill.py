"""kill -9 mid-ingest: the store stays readable and no acknowledged job is lost.

The server runs as a real subprocess (``python -m fhirqa.cli serve``), configured by a TOML file
and the environment. Eight ingest jobs are queued; once some have completed and another is running,
the server is killed with SIGKILL. Before and after a restart, the store must open and hold every
patient whose job the server had reported completed; those jobs must still say completed; the
interrupted one (and those still queued) must resume and finish; and SIGTERM then stops the server
gracefully.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import jwt
import pytest

import fhirqa
from tests import builders
from tests.server.conftest import ISSUER, Keys, copy_store, free_port

JOBS = 8
OBSERVATIONS = 150  # per job: enough that an ingest takes a noticeable moment


def _body(n: int) -> bytes:
    pid = f"kill-p{n}"
    resources = [builders.patient(pid)] + [
        builders.observation(f"kill-o{n}-{i}", pid, value=float(i), when=f"2024-01-01T{i % 24:02d}:{i % 60:02d}:00Z")
        for i in range(OBSERVATIONS)]
    return "\n".join(json.dumps(r) for r in resources).encode()


def _start(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FHIRQA_SERVER_PORT": str(port)}  # the port from the environment, the rest from the file
    with log.open("ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "fhirqa.cli", "serve", "--config", str(config)],  # noqa: S603
                                   stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the server did not become ready:\n" + log.read_text()[-3000:])


def _store_patients(db: Path) -> dict[str, int]:
    """Observations per kill-test patient, read straight from the store (it must open)."""
    rows = fhirqa.Store(db).query("SELECT patient_id, count(*) FROM observation WHERE patient_id LIKE 'kill-p%' "
                                  "GROUP BY 1").rows
    return dict(rows)


@pytest.mark.slow
def test_kill_mid_ingest_loses_no_acknowledged_job(sample_store: Path, keys: Keys, tmp_path: Path):
    db = copy_store(sample_store, tmp_path / "db")
    config = tmp_path / "server.toml"
    config.write_text(
        f'db = "{db}"\nstate_dir = "{tmp_path / "state"}"\nrate_limit_per_minute = 100000\nrate_limit_burst = 10000\n'
        f'shutdown_grace_s = 30\n\n[[issuers]]\nissuer = "{ISSUER}"\njwks_file = "{keys.ehr_jwks}"\n')
    port = free_port()
    log = tmp_path / "server.log"
    process = _start(config, port, log)
    url = f"http://127.0.0.1:{port}"
    now = int(time.time())
    token = jwt.encode({"iss": ISSUER, "aud": url, "sub": "loader", "scope": "system/*.rs system/*.cu",
                        "iat": now, "exp": now + 600}, keys.ehr, algorithm="RS256", headers={"kid": "ehr-1"})
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        acknowledged = []
        for n in range(JOBS):
            response = http.post("/$ingest", content=_body(n), headers={"Content-Type": "application/fhir+ndjson",
                                                                         "Prefer": "respond-async"})
            assert response.status_code == 202, response.text
            acknowledged.append((response.json()["id"], f"kill-p{n}"))
        deadline = time.monotonic() + 60
        while True:
            jobs = {j["id"]: j["status"] for j in http.get("/jobs", params={"limit": 100}).json()["jobs"]}
            completed = [pid for job, pid in acknowledged if jobs[job] == "completed"]
            if len(completed) >= 2 and "running" in jobs.values():
                process.send_signal(signal.SIGKILL)
                break
            assert time.monotonic() < deadline and len(completed) < JOBS, "no moment with a job running to kill"
            time.sleep(0.01)
        process.wait(10)
        done_before = {job for job, _ in acknowledged if jobs[job] == "completed"}
        on_disk = [json.loads(p.read_text()) for p in (tmp_path / "state" / "jobs").glob("*.json")]
        cut_short = {j["id"] for j in on_disk if j["status"] == "running"}  # usually one; none if between jobs

        # The store opens right after the kill and holds every acknowledged patient, complete.
        stored = _store_patients(db)
        for pid in completed:
            assert stored.get(pid) == OBSERVATIONS, (pid, stored)

        process = _start(config, port, log)
        for job in done_before:
            status = http.get(f"/jobs/{job}")
            assert status.status_code == 200 and status.json()["status"] == "completed"
        # The interrupted job and the queued ones resume on their own and finish.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            jobs = {j["id"]: j for j in http.get("/jobs", params={"limit": 100}).json()["jobs"]}
            if all(jobs[job]["status"] == "completed" for job, _ in acknowledged):
                break
            time.sleep(0.1)
        else:
            raise AssertionError({job: jobs[job]["status"] for job, _ in acknowledged})
        for job in cut_short:
            assert "interrupted" in " ".join(jobs[job]["notes"]), jobs[job]
        assert _store_patients(db) == {pid: OBSERVATIONS for _, pid in acknowledged}
        rows = http.get("/Patient/kill-p0/views/observation", params={"limit": 1000}).json()
        assert rows["count"] == OBSERVATIONS
        assert http.get("/readyz").json()["status"] == "ready"
    finally:
        http.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # graceful: uvicorn drains, the writer stops
            # uvicorn re-raises the signal once shut down, so a clean stop exits by SIGTERM.
            assert process.wait(30) in (0, -signal.SIGTERM), log.read_text()[-3000:]
            assert "Application shutdown complete" in log.read_text()
