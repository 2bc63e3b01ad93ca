"""The ``python -m fhirqa.synth`` entry point and ``main(argv)``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from fhirqa.synth import main


def test_main_writes_bundles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--patients", "2", "--seed", "4", "--out", str(tmp_path)]) == 0
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2 and files[0].name.startswith("0000_")
    bundle = orjson.loads(files[0].read_bytes())
    assert bundle["resourceType"] == "Bundle" and bundle["type"] == "transaction"
    assert "Observation" in capsys.readouterr().out


def test_main_ndjson_and_now(tmp_path: Path) -> None:
    code = main(
        ["-n", "1", "--out", str(tmp_path), "--format", "ndjson", "--now", "2025-01-01T00:00:00Z", "-q"]
    )
    assert code == 0
    patient = orjson.loads((tmp_path / "Patient.000.ndjson").read_bytes().splitlines()[0])
    assert patient["resourceType"] == "Patient"
    enc = [orjson.loads(x) for x in (tmp_path / "Encounter.000.ndjson").read_bytes().splitlines()]
    assert max(e["period"]["end"] for e in enc) < "2025-01-02"


def test_pretty_bundle_is_same_json(tmp_path: Path) -> None:
    main(["-n", "1", "--out", str(tmp_path / "a"), "-q"])
    main(["-n", "1", "--out", str(tmp_path / "b"), "--pretty", "-q"])
    (a,), (b,) = list((tmp_path / "a").iterdir()), list((tmp_path / "b").iterdir())
    assert orjson.loads(a.read_bytes()) == orjson.loads(b.read_bytes())
    assert len(b.read_bytes()) > len(a.read_bytes())


def test_module_entry_point_independent_of_hash_seed(tmp_path: Path) -> None:
    """Separate processes with different PYTHONHASHSEED produce identical files."""
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [sys.executable, "-m", "fhirqa.synth", "-n", "2", "--out", str(out), "-q"], check=True, env=env
        )
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
