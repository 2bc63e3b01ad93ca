"""Fixtures shared by the question-answering tests."""

from __future__ import annotations

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import ingest


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory):
    """A store of the committed example patients (examples/sample), made once per test module."""
    from tests.conftest import SAMPLE

    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample is missing")
    db = tmp_path_factory.mktemp("sample") / "db"
    ingest([FileSource([SAMPLE])], db)
    return db
