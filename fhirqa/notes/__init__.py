"""Clinical notes: sources, chunking, a LanceDB index, structure-guided retrieval and offline extraction.

    from fhirqa.notes import NoteIndex, answer_from_notes, notes_for
    notes = notes_for(store, patient_id)                        # every note with text, oldest first
    hits = NoteIndex(store).search(patient_id, "potassium on admission", k=5, since="2025-07-01")
    finding = answer_from_notes("What was her potassium on admission?", hits)   # NoteFinding or None

See ``docs/notes.md`` for the design and the measured figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from fhirqa.notes.chunking import Chunk, chunk_note
from fhirqa.notes.extract import NoteFinding, answer_from_notes
from fhirqa.notes.index import Hit, NoteIndex, SyncReport
from fhirqa.notes.retrieve import Retrieval, build_query, retrieve
from fhirqa.notes.sources import Note, mimic_notes, notes_for, omop_notes

_RECENCY = re.compile(r"\b(last|latest|most recent|current|currently|first|earliest|initial|admission|admitted|"
                      r"arrival|discharge|discharged)\b", re.I)


def ask_notes(index: NoteIndex, patient_id: str, question: str, evidence: Iterable[Any] = (), k: int = 5,
              now: datetime | None = None) -> tuple[NoteFinding | None, Retrieval]:
    """Retrieve for ``question`` (guided by ``evidence``) and extract the answer from the hits.

    A question about the first or latest mention, or admission or discharge, looks at more chunks (``4 k``) so the newest or oldest
    note that mentions the item is among them.
    """
    depth = k * 4 if _RECENCY.search(question) else k
    found = retrieve(index, patient_id, question, evidence, k=depth, now=now)
    return answer_from_notes(question, found.hits), found


__all__ = [
    "Chunk", "Hit", "Note", "NoteFinding", "NoteIndex", "Retrieval", "SyncReport", "answer_from_notes",
    "ask_notes", "build_query", "chunk_note", "mimic_notes", "notes_for", "omop_notes", "retrieve",
]
