"""Paths and the gold builder import for the evaluation tests."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "evals"
QUESTIONS = EVALS / "synthea-r4.jsonl"
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SYNTHEA = SHARED_DATA / "synthea-r4"


def builder() -> ModuleType:
    """``evals/build_synthea_questions.py`` as a module (it puts ``evals/`` on ``sys.path`` itself)."""
    if str(EVALS) not in sys.path:
        sys.path.insert(0, str(EVALS))
    return importlib.import_module("build_synthea_questions")


def gold_module(name: str) -> ModuleType:
    """A module of the ``synthea_gold`` package."""
    builder()
    return importlib.import_module(f"synthea_gold.{name}")


def committed_questions() -> list[dict[str, Any]]:
    """The committed question set."""
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def need_synthea() -> Path:
    """The Synthea folder, or skip with the reason."""
    if not SYNTHEA.is_dir():
        pytest.skip(f"{SYNTHEA} is absent (a fresh clone has no ../shared/data; CI and developer checkouts do)")
    return SYNTHEA
