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


def _raw_notes() -> dict[str, list[dict]]:
    """patient id -> its DocumentReferences as the bulk export writes them (the gold: no fhirqa code)."""
    import json

    out: dict[str, list[dict]] = {}
    for path in sorted((SHARED_DATA / "synthea-bulk-10").glob("DocumentReference.*.ndjson")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                doc = json.loads(line)
                out.setdefault(doc["subject"]["reference"].split("/")[-1], []).append(doc)
    return out


def test_the_notes_as_documents_match_the_raw_export(bulk_store):
    """list_notes over every bulk patient: the count of notes in a year, the last note's author and kind, and the
    default scope (the last 5 when the latest visit holds one note) agree with the raw DocumentReferences."""
    from datetime import datetime

    from fhirqa.agent.tools.base import ToolContext
    from fhirqa.agent.tools.registry import execute

    index = NoteIndex(bulk_store, embedder=HashEmbedder())
    raw = _raw_notes()
    assert sum(len(v) for v in raw.values()) == 1215
    for patient, docs in raw.items():
        docs = sorted(docs, key=lambda d: d["date"])
        now = datetime.fromisoformat(docs[-1]["date"].replace("Z", "+00:00"))
        year = now.year
        ctx = ToolContext(patient_id=patient, now=now, data=None, resolve=None, notes=index)  # type: ignore[arg-type]
        counted = execute(ctx, "list_notes", {"start": f"{year}-01-01", "end": f"{year}-12-31", "which": "all"})
        assert counted["count"] == sum(d["date"].startswith(str(year)) for d in docs), patient
        last = execute(ctx, "list_notes", {"which": "latest"})["notes"][0]
        assert last["ref"] == f"DocumentReference/{docs[-1]['id']}"
        assert last["author"] == docs[-1]["author"][0]["display"]
        assert last["note_type"] == docs[-1]["type"]["coding"][0]["display"]
        default = execute(ctx, "list_notes", {})
        same_visit = [d for d in docs if d["context"]["encounter"][0]["reference"].endswith(
            docs[-1]["context"]["encounter"][0]["reference"].split("/")[-1])]
        assert default["count"] == (len(same_visit) if len(same_visit) >= 2 else min(5, len(docs)))
        assert default["listed"] <= 20 and default["summarized"] == 0
