"""Fixtures for the relational adapters: a MIMIC-III-shaped SQLite file, the example patients exported to OMOP."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sql.mimic_data import build

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
SAMPLE = ROOT / "examples" / "sample"
NOW = "2026-06-30T12:00:00Z"


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path_factory, monkeypatch):
    """Loaded CSV sources and table descriptions go to a temporary cache, never the user's."""
    monkeypatch.setenv("FHIRQA_SQL_CACHE", str(tmp_path_factory.getbasetemp() / "sql-cache"))
    monkeypatch.setenv("FHIRQA_EMBEDDINGS", "off")


@pytest.fixture(scope="session")
def mimic_db(tmp_path_factory) -> Path:
    """A MIMIC-III-shaped SQLite database (official table and column names), two patients."""
    return build(tmp_path_factory.mktemp("mimic") / "mimic3.sqlite")


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory) -> Path:
    """The committed example patients ingested into a store."""
    from fhirqa.sources import FileSource
    from fhirqa.store import ingest

    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    db = tmp_path_factory.mktemp("sample") / "db"
    ingest([FileSource([SAMPLE])], db)
    return db


@pytest.fixture(scope="session")
def sample_omop(sample_store, tmp_path_factory) -> Path:
    """The example patients exported to an OMOP CDM DuckDB file."""
    from fhirqa.sql.export import export_omop

    out = tmp_path_factory.mktemp("omop") / "sample.duckdb"
    export_omop(sample_store, out)
    return out


@pytest.fixture
def shared() -> Path:
    """``../shared/data``; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the shared data set is in CI and developer checkouts)")
    return SHARED
