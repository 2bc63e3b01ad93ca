"""Schemathesis against the server's own OpenAPI schema: no 5xx, no response that breaks the schema.

Bounded (a few examples per operation, a fixed seed, a request timeout) so it stays well under a
minute (``FHIRQA_ST_SEED`` and ``FHIRQA_ST_EXAMPLES`` explore further); marked ``slow`` so ``-m "not slow"`` skips it locally, but it runs in CI's default run.
Every check runs except ``positive_data_acceptance``: a schema-valid body can still be refused for
what it means (a question about a patient the store does not have, a ``strict`` ingest of a bad record).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import copy_store, make_config, run_server

pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install schemathesis)")


@pytest.mark.slow
def test_schemathesis_finds_no_server_errors_or_schema_violations(sample_store: Path, keys, ids, tmp_path):
    config = make_config(copy_store(sample_store, tmp_path / "db"), tmp_path / "state", keys, ids["Linda Taylor"],
                         pull_allowed=["http://127.0.0.1:9/"])
    with run_server(config, keys) as server:
        token = server.token("system/*.cruds")
        command = [
            sys.executable, "-m", "schemathesis.cli", "run", f"{server.url}/openapi.json",
            "--header", f"Authorization: Bearer {token}",
            "--checks", "all", "--exclude-checks", "positive_data_acceptance",
            "--max-examples", os.environ.get("FHIRQA_ST_EXAMPLES", "8"),
            "--seed", os.environ.get("FHIRQA_ST_SEED", "20261130"), "--request-timeout", "30", "--max-failures", "10",
            "--suppress-health-check", "all", "--workers", "1",  # one worker: CPython 3.11 ast.parse is not thread-safe
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=tmp_path)  # noqa: S603
    report = done.stdout[-12000:] + done.stderr[-3000:]
    assert done.returncode == 0, report
    assert "Selected: 20/20" in report or "Tested:" in report, report
