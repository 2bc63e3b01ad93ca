"""Searching one patient's chunks in memory: the same vector ranking as LanceDB, BM25 for words, filters first."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from fhirqa.notes import NoteIndex
from fhirqa.notes.memory import PatientChunks, terms
from fhirqa.notes.sources import notes_for

from .conftest import HashEmbedder
from .test_index import NOTES, _store


def chunk(text: str, when: str | None = None, section: str = "|") -> dict:
    moment = datetime.fromisoformat(when).replace(tzinfo=UTC) if when else None
    return {"chunk_id": text[:8], "text": text, "time": moment, "section": section}


def test_terms_are_lower_cased_stemmed_and_without_stop_words():
    assert terms("The patient was RUNNING a fever; diabetic, on diabetes meds") == [
        "patient", "run", "fever", "diabet", "diabet", "med"]


def test_bm25_ranks_both_words_first_then_the_rarer_word():
    texts = ["fever and cough", "fever", "fever, rash", "rash", "cough", "fever again"]
    chunks = PatientChunks([chunk(t) for t in texts], None)
    keep = np.ones(len(texts), dtype=bool)
    ranked = [r["text"] for r in chunks.by_text("rash fever", keep, 10)]
    assert ranked[:2] == ["fever, rash", "rash"]  # rash is in 2 chunks, fever in 4: the rarer word weighs more
    assert set(ranked[2:]) == {"fever", "fever and cough", "fever again"}
    assert chunks.by_text("pneumonia", keep, 10) == []  # no shared term: nothing, not everything


def test_filters_apply_before_ranking_and_untimed_chunks_fail_a_window():
    chunks = PatientChunks([chunk("K 5.4", "2025-07-18T22:00:00"), chunk("K 4.6", "2025-07-20T15:00:00", "|labs|"),
                            chunk("K 9.9")], None)
    keep = chunks.mask(datetime(2025, 7, 19, tzinfo=UTC), None, None)
    assert keep.tolist() == [False, True, False]
    assert [r["text"] for r in chunks.by_text("K", keep, 10)] == ["K 4.6"]
    assert chunks.mask(None, None, "labs").tolist() == [False, True, False]


def test_vector_ranking_equals_lancedb_exact_search(tmp_path):
    store = _store(tmp_path, NOTES)
    index = NoteIndex(store, embedder=HashEmbedder())
    index.ensure("p1")
    for query in ("vancomycin trough", "potassium on admission", "metformin", "chest pain"):
        vector = index.embedder.encode([query])[0]
        lance = (index.table().search(vector, vector_column_name="vector").distance_type("cosine")
                 .where("patient_id = 'p1'", prefilter=True).limit(20).to_list())
        chunks = index._chunks("p1")
        mine = chunks.by_vector(vector, np.ones(len(chunks), dtype=bool), 20)
        assert [r["chunk_id"] for r in mine] == [r["chunk_id"] for r in lance]
        assert np.allclose([r["_distance"] for r in mine], [r["_distance"] for r in lance], atol=1e-5)


def test_re_indexing_a_patient_replaces_the_chunks_searched_in_memory(tmp_path):
    store = _store(tmp_path, NOTES)
    index = NoteIndex(store, embedder=HashEmbedder())
    assert "DocumentReference/a" in {h.ref for h in index.search("p1", "sepsis vancomycin", k=5)}
    index.index_notes([n for n in notes_for(store, "p1") if n.ref != "DocumentReference/a"])
    assert "DocumentReference/a" not in {h.ref for h in index.search("p1", "sepsis vancomycin", k=5)}
