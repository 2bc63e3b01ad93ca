"""``fhirqa serve``: ``--dev`` prints a working local token; without it there is none and none is accepted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from fhirqa.cli import main
from tests.server.conftest import copy_store, free_port


def _serve(db: Path, port: int, *flags: str) -> subprocess.Popen[str]:
    env = {**os.environ, "FHIRQA_SERVER_LOG_LEVEL": "warning"}
    return subprocess.Popen([sys.executable, "-m", "fhirqa.cli", "serve", "--db", str(db), "--port", str(port),  # noqa: S603
                             *flags], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def _ready(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("the server did not start")


def test_dev_mode_prints_a_token_that_works_and_is_off_by_default(sample_store: Path, tmp_path: Path):
    db = copy_store(sample_store, tmp_path / "db")
    port = free_port()
    dev = _serve(db, port, "--dev")
    try:
        assert dev.stdout is not None
        lines = [dev.stdout.readline() for _ in range(2)]
        token = lines[1].strip()
        assert "--dev" in lines[0] and re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+", token)
        _ready(port)
        ok = httpx.get(f"http://127.0.0.1:{port}/views", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200
    finally:
        dev.send_signal(signal.SIGINT)
        dev.communicate(timeout=30)  # also closes the pipe
    plain = _serve(db, port)  # same state folder, same key: the dev token is well signed, and still refused
    try:
        _ready(port)
        response = httpx.get(f"http://127.0.0.1:{port}/views", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401 and "--dev" in response.json()["issue"][0]["diagnostics"]
        assert httpx.get(f"http://127.0.0.1:{port}/views").status_code == 401
    finally:
        plain.send_signal(signal.SIGTERM)
        out, _ = plain.communicate(timeout=30)
    assert "token" not in out  # nothing printed without --dev


def test_dev_mode_refuses_a_public_address(sample_store: Path, capsys):
    assert main(["serve", "--db", str(sample_store), "--dev", "--host", "0.0.0.0"]) == 2  # noqa: S104
    assert "loopback" in capsys.readouterr().err
