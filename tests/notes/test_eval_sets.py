"""The committed notes evaluation sets are what the builder makes from the raw note text."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_eval_sets_are_current():
    result = subprocess.run([sys.executable, str(ROOT / "evals" / "notes" / "build_notes_eval.py"), "--check"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
