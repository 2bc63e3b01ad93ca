"""A relational patient's notes are read without indexing them: only a search embeds (first-question latency)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fhirqa.notes.sources import Note
from fhirqa.sql import notes as sql_notes


def test_reading_notes_does_not_embed_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    note = Note(note_id="noteevents/1", patient_id="7", ref="noteevents/1", text="ECG: sinus rhythm.",
                time=datetime(2150, 1, 1, tzinfo=UTC), note_type="ECG: Report")
    reads: list[str] = []
    monkeypatch.setattr(sql_notes, "relational_notes", lambda con, schema, person: reads.append("read") or [note])
    index = sql_notes.RelationalNoteIndex(con=None, schema=None, folder=tmp_path)  # type: ignore[arg-type]
    indexed: list[Any] = []
    monkeypatch.setattr(index, "index_notes", lambda notes, patient_ids=None: indexed.append(list(notes)))
    index.add_person(type("P", (), {"patient_id": "7"})())  # type: ignore[arg-type]
    assert index.notes("7") == [note] and index.notes("7") == [note]
    assert reads == ["read"] and indexed == []  # read once, never embedded
    index.ensure("7")
    index.ensure("7")
    assert indexed == [[note]] and reads == ["read"]  # a search indexes once, from the notes already read
