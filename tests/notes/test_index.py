"""The LanceDB index: built on demand per patient, incremental by content hash, hybrid search with filters."""

from __future__ import annotations

import json

from fhirqa.notes import NoteIndex
from fhirqa.notes.index import _fuse
from fhirqa.notes.sources import notes_for

from .conftest import HashEmbedder, ingest
from .test_sources import _b64, _doc

NOTES = {
    "a": ("2025-07-18T22:00:00Z", "History and physical note",
          "CC: fever and dysuria.\nLabs on admission: Na 136, K 5.4, Cr 2.69.\nA/P:\n1. Sepsis - start vancomycin."),
    "b": ("2025-07-20T15:00:00Z", "Progress note", "S: Afebrile overnight.\nLabs this AM: K 4.6, Cr 2.29.\n"
                                                   "A/P:\n1. Vanc trough 20.8, decreased to vancomycin 1,000 mg q24h."),
    "c": ("2025-08-06T15:00:00Z", "Outpatient Note", "S: Feels well. Denies chest pain.\nCurrent meds: metformin 500 mg "
                                                     "PO BID.\nA/P:\n1. T2DM - continue metformin."),
}


def _store(tmp_path, notes: dict, version: int = 1):
    resources = [{"resourceType": "Patient", "id": "p1"}, {"resourceType": "Patient", "id": "p2"}]
    for key, (date, kind, text) in notes.items():
        doc = _doc(key, date, {"contentType": "text/plain", "data": _b64(text.encode())}, kind)
        doc["meta"] = {"versionId": str(version)}
        resources.append(doc)
    other = _doc("other", "2025-07-19T10:00:00Z", {"contentType": "text/plain", "data": _b64(b"K 9.9 elsewhere.")})
    other["subject"] = {"reference": "Patient/p2"}
    resources.append(other)
    path = tmp_path / f"bundle{version}.json"
    path.write_text(json.dumps({"resourceType": "Bundle", "type": "collection",
                                "entry": [{"resource": r} for r in resources]}), "utf-8")
    return ingest([path], tmp_path / "db")


def test_built_on_demand_then_only_changed_notes_are_re_embedded(tmp_path):
    store = _store(tmp_path, NOTES)
    embedder = HashEmbedder()
    index = NoteIndex(store, embedder=embedder)
    hits = index.search("p1", "vancomycin trough")  # the first search indexes p1, and only p1
    assert hits[0].ref == "DocumentReference/b" and "Vanc trough 20.8" in hits[0].quote("vanc trough")
    assert {r["patient_id"] for r in index.chunk_rows()} == {"p1"}
    first = embedder.encoded
    assert first == len(index.chunk_rows("p1")) + 1 >= 4  # the chunks, and the query
    assert NoteIndex(store, embedder=embedder).build(["p1"]).embedded_notes == 0  # a new process: hashes match
    assert embedder.encoded == first

    changed = dict(NOTES)
    changed["c"] = (NOTES["c"][0], NOTES["c"][1], NOTES["c"][2].replace("500 mg", "1000 mg"))
    del changed["a"]
    store = _store(tmp_path, changed, version=2)
    report = NoteIndex(store, embedder=embedder).build(["p1"])
    assert (report.embedded_notes, report.removed_notes, report.notes) == (1, 0, 3)
    rows = index.chunk_rows("p1")
    assert any("1000 mg" in r["text"] for r in rows) and not any("500 mg" in r["text"] for r in rows)

    kept = [n for n in notes_for(store, "p1") if n.ref != "DocumentReference/a"]
    report = index.index_notes(kept)  # the given notes are now p1's notes: "a" is removed
    assert (report.embedded_notes, report.removed_notes) == (0, 1)
    assert {r["note_id"] for r in index.chunk_rows("p1")} == {"DocumentReference/b", "DocumentReference/c"}


def test_time_window_and_section_filters(tmp_path):
    index = NoteIndex(_store(tmp_path, NOTES), embedder=HashEmbedder())
    assert {h.ref for h in index.search("p1", "potassium K", k=5)} == {f"DocumentReference/{x}" for x in "abc"}
    window = index.search("p1", "potassium K", since="2025-07-19", until="2025-07-31")
    assert [h.ref for h in window] == ["DocumentReference/b"] and window[0].date == "2025-07-20"
    assert index.search("p1", "K", until="2025-07-18")[0].ref == "DocumentReference/a"  # a bare date: the whole day
    meds = index.search("p1", "metformin", section="medications")
    assert [h.ref for h in meds] == ["DocumentReference/c"] and "medications" in meds[0].section
    assert index.search("p1", "anything", section="hospital course") == []
    assert all(h.patient_id == "p1" for h in index.search("p1", "K 9.9 elsewhere", k=10))
    assert index.coverage("p1") == {"count": 3, "first": "2025-07-18", "last": "2025-08-06"}


def test_full_text_only_without_embeddings(tmp_path):
    index = NoteIndex(_store(tmp_path, NOTES), embedder=None)
    assert index.table_name == "chunks_lexical"
    hits = index.search("p1", "metformin")
    assert hits and hits[0].ref == "DocumentReference/c" and hits[0].vector_score is None


def test_modes_and_fusion(tmp_path):
    index = NoteIndex(_store(tmp_path, NOTES), embedder=HashEmbedder())
    for mode in ("hybrid", "vector", "text"):
        assert index.search("p1", "vancomycin trough", mode=mode)[0].ref == "DocumentReference/b"
    row = {"patient_id": "p", "chunk_id": "x", "text": "t", "ref": "R/1", "note_id": "R/1", "date": "", "time": None}
    both = _fuse([row, {**row, "chunk_id": "y"}], [{**row, "chunk_id": "y", "_score": 3.0}], k=2)
    assert [h.chunk_id for h in both] == ["y", "x"] and both[0].text_score == 3.0


def test_real_model_index_finds_note_only_facts(model_index, mei):
    hits = model_index.search(mei, "vancomycin trough level", k=3)
    assert any("Vanc trough 20.8" in h.text for h in hits)
    hits = model_index.search(mei, "how did she feel, was she short of breath", k=5, since="2024-06-01",
                              until="2024-06-30")
    assert hits and all(h.date.startswith("2024-06") for h in hits)
