"""Fixtures for the notes tests: the committed sample store, a fast hash embedder, the real model index."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

import fhirqa
from fhirqa.store import Store

pytest.importorskip("lancedb", reason="the notes index needs LanceDB: pip install lancedb")

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SAMPLE = ROOT / "examples" / "sample"


class HashEmbedder:
    """A deterministic bag-of-words embedder: fast, no model, similar texts get similar vectors."""

    name = "test-hash"
    dimension = 64

    def __init__(self) -> None:
        self.encoded = 0  # texts embedded so far

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0  # noqa: S324
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def ingest(paths: list[Path], db: Path) -> Store:
    """A store holding ``paths``."""
    fhirqa.ingest([fhirqa.FileSource([str(p) for p in paths])], db)
    return Store(db)


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """examples/sample ingested once per session."""
    if not any(SAMPLE.glob("*.json")):
        pytest.skip("examples/sample has not been generated")
    return ingest([SAMPLE], tmp_path_factory.mktemp("notes-sample") / "db")


def patient_id(store: Store, name: str) -> str:
    """The id of the patient called ``name``."""
    return store.query("SELECT patient_id FROM patient WHERE name = ?", [name]).rows[0][0]


@pytest.fixture(scope="session")
def mei(sample_store: Store) -> str:
    """Mei Wilson: clinic notes, an admission for urosepsis with H&P, progress notes and a discharge summary."""
    return patient_id(sample_store, "Mei Wilson")


@pytest.fixture(scope="session")
def model_index(sample_store: Store, mei: str, tmp_path_factory: pytest.TempPathFactory):
    """A handful of Mei Wilson's notes indexed with the packaged MiniLM (loaded once per session)."""
    from fhirqa.agent.embeddings import get_embedder, unavailable_reason
    from fhirqa.notes import NoteIndex, notes_for

    embedder = get_embedder()
    if embedder is None:
        pytest.skip(f"sentence embeddings unavailable: {unavailable_reason() or 'FHIRQA_EMBEDDINGS is off'}")
    index = NoteIndex(sample_store, embedder=embedder, path=tmp_path_factory.mktemp("notes-index") / "notes.lance")
    notes = notes_for(sample_store, mei)
    kinds = ("History and physical note", "Discharge summary")
    chosen = [n for n in notes if n.note_type in kinds or n.date in ("2025-07-20", "2025-07-21")
              or n.date.startswith("2024-06")]
    index.index_notes(chosen)
    return index
