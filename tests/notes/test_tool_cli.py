"""search_notes for the composer (evidence per quoted sentence, nothing after now) and ``fhirqa notes``."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.tools import execute
from fhirqa.cli import main
from fhirqa.notes import NoteIndex

from ..agent.test_tools_helpers import make_ctx
from .conftest import HashEmbedder
from .test_index import NOTES, _store


def test_search_notes_cites_each_quoted_sentence_and_hides_later_notes(tmp_path):
    ctx = make_ctx()
    ctx.now = datetime(2025, 7, 31, tzinfo=UTC)
    ctx.notes = NoteIndex(_store(tmp_path, NOTES), embedder=HashEmbedder())
    result = execute(ctx, "search_notes", {"query": "vancomycin trough", "k": 3})
    assert result["ok"] and result["count"] == 2  # note c (2025-08-06) is after now
    top = result["hits"][0]
    assert top["ref"] == "DocumentReference/b" and "Vanc trough 20.8" in top["quote"]
    cited = ctx.evidence[("DocumentReference/b", "note.text")]
    assert cited.value == top["quote"] and cited.time.startswith("2025-07-20") and cited.label == "Progress note"
    assert {e.field for e in ctx.evidence.values()} == {"note.text"}

    windowed = execute(ctx, "search_notes", {"query": "potassium", "start": "2025-07-20", "end": "2025-07-20"})
    assert [h["ref"] for h in windowed["hits"]] == ["DocumentReference/b"]
    empty = execute(ctx, "search_notes", {"query": "potassium", "section": "hospital course"})
    assert empty["count"] == 0 and empty["notes_coverage"]["count"] == 3
    assert not execute(ctx, "search_notes", {"query": "k", "start": "July"})["ok"]


def test_search_notes_without_notes_is_a_clear_error():
    result = execute(make_ctx(), "search_notes", {"query": "chest pain"})
    assert not result["ok"] and "no clinical notes" in result["error"]


def test_cli_lists_shows_and_searches(tmp_path, capsys, monkeypatch):
    store = _store(tmp_path, NOTES)
    monkeypatch.setattr("fhirqa.notes.index.get_embedder", lambda: HashEmbedder())
    assert main(["notes", "p1", "--db", str(store.db)]) == 0
    out = capsys.readouterr().out
    assert "DocumentReference/a" in out and "History and physical note" in out and "3 note(s)" in out
    assert main(["notes", "p1", "--db", str(store.db), "--show", "DocumentReference/b"]) == 0
    assert "Vanc trough 20.8" in capsys.readouterr().out
    assert main(["notes", "Patient/p1", "--db", str(store.db), "--search", "metformin dose", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#1  2025-08-06  Outpatient Note") and "metformin 500 mg" in out
    assert main(["notes", "--build", "--db", str(store.db)]) == 0
    assert "2 patient(s), 4 notes" in capsys.readouterr().out
    assert main(["notes", "--db", str(store.db)]) == 2
