"""``search_notes``: the patient's clinical notes, searched by meaning and words, each quoted sentence cited.

The tool reads ``ctx.notes``, an object with ``search(patient_id, query, k=, since=, until=, section=)``
returning hits (``fhirqa.notes.NoteIndex`` is one) and optionally ``coverage(patient_id)``; the engine sets it
for questions about one patient. Notes dated after the question's ``now`` are never returned.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.tools.base import ToolContext, ToolError

MAX_K = 20
TEXT_PREVIEW = 700  # characters of a chunk shown to a model


def _bound(value: str | None, end: bool) -> datetime | None:
    if not value:
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        moment = datetime.combine(date.fromisoformat(text), time.max if end else time.min) if len(text) == 10 \
            else datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(f"{'end' if end else 'start'}={value!r} is not an ISO date or datetime "
                        "(e.g. '2024-03-01')") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def search_notes(ctx: ToolContext, query: str, k: int = 5, start: str | None = None, end: str | None = None,
                 section: str | None = None) -> dict[str, Any]:
    """The ``k`` note passages that best match ``query`` in [start, end] (and ``section``), with quotes cited."""
    notes = getattr(ctx, "notes", None)
    if notes is None or ctx.patient_id is None:
        raise ToolError("no clinical notes are available for this question; answer from the structured views")
    if not query.strip():
        raise ToolError("query is empty: give the words to look for, e.g. 'potassium on admission'")
    k = max(1, min(MAX_K, k))
    low, high = _bound(start, end=False), _bound(end, end=True)
    high = min(high, ctx.now) if high else ctx.now
    if low and low > high:
        raise ToolError(f"start {low.isoformat()} is after end {high.isoformat()}")
    hits = notes.search(ctx.patient_id, query, k=k, since=low, until=high, section=section)
    shown = []
    for hit in hits:
        quote = hit.quote(query)
        moment = hit.time.isoformat() if hit.time else (hit.date or None)
        ctx.cite(Evidence(ref=hit.ref, field="note.text", value=quote, time=moment, label=hit.note_type))
        text = hit.text if len(hit.text) <= TEXT_PREVIEW else hit.text[:TEXT_PREVIEW] + " …"
        shown.append({"ref": hit.ref, "date": hit.date, "note_type": hit.note_type, "section": hit.section,
                      "score": round(hit.score, 4), "quote": quote, "text": text})
    out: dict[str, Any] = {"ok": True, "count": len(shown), "hits": shown,
                           "window": {"start": low.isoformat() if low else None, "end": high.isoformat()}}
    if not shown:
        coverage = getattr(notes, "coverage", None)
        span = coverage(ctx.patient_id) if callable(coverage) else None
        out["note"] = ("no note passage matches in this window/section" if span and span.get("count")
                       else "this patient has no notes with text")
        if span:
            out["notes_coverage"] = span
    return out
