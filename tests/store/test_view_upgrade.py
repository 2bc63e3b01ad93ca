"""A store built with older view SQL (fhirqa upgraded since) gets the current views on its next ingest."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from fhirqa.project import data_dir
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest


@pytest.fixture
def views_copy(tmp_path: Path, monkeypatch) -> Path:
    """The project's views in a folder the test may edit, used by ingest in place of the real ones."""
    folder = tmp_path / "views"
    shutil.copytree(data_dir("views"), folder)
    real = data_dir

    def views_here(name: str) -> Path:
        return folder if name == "views" else real(name)

    # ``fhirqa.store.ingest`` as an attribute is the function; the module is the one ingest reads its views from
    monkeypatch.setattr(importlib.import_module("fhirqa.store.ingest"), "data_dir", views_here)
    return folder


def test_an_ingest_that_changes_nothing_still_rebuilds_a_view_whose_sql_changed(db, sample_dir, views_copy):
    ingest([FileSource([sample_dir])], db)
    before = Store(db).manifest.generation
    sql = (views_copy / "patient.sql").read_text()
    (views_copy / "patient.sql").write_text(sql.replace("SELECT", "SELECT 'upgraded' AS marker,", 1))

    report = ingest([FileSource([sample_dir])], db)

    assert not report.changed and "views rebuilt" in " ".join(report.notes)
    store = Store(db)
    assert store.manifest.generation == before + 1
    assert {r[0] for r in store.query("SELECT DISTINCT marker FROM patient").rows} == {"upgraded"}
    assert store.counts()["observation"] > 0  # every other table carried over


def test_the_same_input_twice_with_the_same_views_changes_no_generation(db, sample_dir, views_copy):
    ingest([FileSource([sample_dir])], db)
    before = Store(db).manifest.generation
    report = ingest([FileSource([sample_dir])], db)
    assert not report.changed and Store(db).manifest.generation == before
    assert not any("views rebuilt" in note for note in report.notes)
