"""Shared fixtures: where the example and shared data are, and a fresh store per test."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
SAMPLE = ROOT / "examples" / "sample"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; tests that need it skip when a fresh clone does not have it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (CI and developer checkouts have it)")
    return SHARED_DATA


@pytest.fixture
def sample_dir() -> Path:
    """The committed example patients (examples/sample)."""
    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample has not been generated yet")
    return SAMPLE


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store folder that does not exist yet."""
    return tmp_path / "db"
