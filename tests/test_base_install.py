"""The README's first command installs fhirqa without extras: the main job must work with none of them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import SAMPLE

# Packages only the extras bring (numpy arrives with lancedb/torch, not with the base dependencies).
EXTRAS_ONLY = ("numpy", "lancedb", "torch", "sentence_transformers", "openai", "google", "pypdf", "snowballstemmer")

SCRIPT = textwrap.dedent("""
    import sys
    class Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {blocked!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: not a base dependency)")
            return None
    sys.meta_path.insert(0, Missing())
    import fhirqa
    from fhirqa.sources import FileSource
    db = sys.argv[2]
    fhirqa.ingest([FileSource([sys.argv[1]])], db)
    pid = fhirqa.Store(db).query("SELECT patient_id FROM patient WHERE name = 'Linda Taylor'").rows[0][0]
    for question in ("How did her A1c change over the last 3 years?", "What medications is she on?",
                     "Did she complain of chest pain?"):
        answer = fhirqa.ask(question, patient_id=pid, now="2026-06-30T12:00:00Z", db=db)
        print(answer.status, answer.text)
""")


def test_the_main_job_runs_without_any_extra(tmp_path):
    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    script = SCRIPT.format(blocked=set(EXTRAS_ONLY))
    result = subprocess.run([sys.executable, "-c", script, str(SAMPLE), str(tmp_path / "db")],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith("answered") and "A1c" in lines[0], result.stdout
    assert not any(line.startswith("error") for line in lines), result.stdout
