"""All 1,215 notes of ../shared/data/synthea-bulk-10 are read, chunked and indexed (fast hash embedder here;
bench/notes_bench.py does the same with the real model and measures it)."""

from __future__ import annotations

import pytest

from fhirqa.notes import NoteIndex, chunk_note, notes_for

from .conftest import SHARED_DATA, HashEmbedder, ingest

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def bulk_store(tmp_path_factory):
    folder = SHARED_DATA / "synthea-bulk-10"
    if not folder.is_dir():
        pytest.skip("../shared/data/synthea-bulk-10 is absent (CI and developer checkouts have it)")
    return ingest([folder], tmp_path_factory.mktemp("bulk10") / "db")


def test_every_bulk_note_is_indexed(bulk_store):
    patients = [r[0] for r in bulk_store.query("SELECT DISTINCT patient_id FROM note ORDER BY 1").rows]
    notes = [n for p in patients for n in notes_for(bulk_store, p)]
    assert len(notes) == 1215 and len(patients) == 13
    sample = notes[::50]
    for note in sample:
        chunks = chunk_note(note)
        assert chunks and all(c.text.startswith(f"[{note.date} ") for c in chunks)
        assert "# Chief Complaint" in " ".join(c.text for c in chunks) or "Chief Complaint" not in note.text
    index = NoteIndex(bulk_store, embedder=HashEmbedder())
    report = index.build()
    assert (report.patients, report.notes, report.embedded_notes) == (13, 1215, 1215)
    assert len({r["note_id"] for r in index.chunk_rows()}) == 1215
    assert index.build().embedded_notes == 0
