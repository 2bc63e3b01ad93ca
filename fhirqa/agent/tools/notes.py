"""``search_notes``: the patient's clinical notes, searched by meaning and words, each quoted sentence cited.

The tool reads ``ctx.notes``, an object with ``search(patient_id, query, k=, since=, until=, section=)``
returning hits (``fhirqa.notes.NoteIndex`` is one) and optionally ``coverage(patient_id)``; the engine sets it
for questions about one patient. Notes dated after the question's ``now`` are never returned.
"""

from __future__ import annotations

import re
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


def _calendar(value: str | None, end: bool) -> datetime | None:
    """An ISO bound as ``list_notes`` reads it: with an offset an instant; without one a wall-clock time (naive),
    compared with each note's own clock; a date alone is its whole day."""
    if not value:
        return None
    moment = _bound(value, end)
    text = value.strip()
    if moment is not None and len(text) > 10 and not (text.endswith("Z") or re.search(r"[+-]\d\d:?\d\d$", text)):
        return moment.replace(tzinfo=None)
    if moment is not None and len(text) == 10:
        return moment.replace(tzinfo=None)
    return moment


def list_notes(ctx: ToolContext, start: str | None = None, end: str | None = None, stay: str | None = None,
               which: str | None = None, last: int | None = None, note_kind: str | None = None,
               service: str | None = None, author: str | None = None, summarize: bool = False) -> dict[str, Any]:
    """The patient's notes as documents: those in [start, end], in a ``stay`` ("latest" or an encounter
    reference), the ``which`` (latest/first) one or the ``last`` N, of a ``note_kind``, ``service`` or ``author``;
    with none of the scope arguments, the default scope of ``lexicon/note_lists.json`` (the latest stay's notes,
    else the last N). Each listed note gives its date, kind, author and encounter, with ``summarize`` also an
    extractive digest; bounded (``limits``), with the count of notes in scope and of those listed and summarized.
    Every listed note is cited. Never returns notes after ``ctx.now``.
    """
    from fhirqa.notes import listing

    notes = getattr(ctx, "notes", None)
    if notes is None or ctx.patient_id is None or not callable(getattr(notes, "notes", None)):
        raise ToolError("no clinical notes are available for this question; answer from the structured views")
    if which not in (None, "latest", "first", "all"):
        raise ToolError(f"which={which!r}: use 'latest', 'first' or 'all'")
    low, high = _calendar(start, end=False), _calendar(end, end=True)  # no offset: on each note's own clock
    if low and high and (low.tzinfo is None) == (high.tzinfo is None) and low > high:
        raise ToolError(f"start {low.isoformat()} is after end {high.isoformat()}")
    mine = [n for n in notes.notes(ctx.patient_id) if n.time is not None and n.time <= ctx.now]
    on_file = len(listing.documents(mine))
    what = "notes"
    if note_kind:
        from fhirqa.notes import kinds

        if not any(k["name"] == note_kind for k in kinds.config()["kinds"]):
            raise ToolError(f"note_kind={note_kind!r} is not a known kind: "
                            + ", ".join(k["name"] for k in kinds.config()["kinds"]))
        mine, what = kinds.of_kind(mine, note_kind), f"{note_kind}s"
    if service:
        spec = listing.service_named(service)
        if spec is None:
            raise ToolError(f"service={service!r} is not a known service: "
                            + ", ".join(s["name"] for s in listing.config()["services"]))
        mine, what = listing.of_service(mine, spec), f"{spec['name']} notes"
    if author:
        mine, what = listing.by_author(mine, author), f"notes by {author}"
    of_that = listing.documents(mine)
    scope = listing.choose(of_that, start=low, end=high, stay=stay, which=which,
                           last=max(1, min(100, last)) if last else None)
    bounds = listing.limits()
    listed = scope.notes[:bounds["max_listed"]]
    summarized = len(listed[:bounds["max_summarized"]]) if summarize else 0
    items = [listing.entry(n, summary=i < summarized) for i, n in enumerate(listed)]
    for note, item in zip(listed, items, strict=True):
        moment = item["time"]
        ctx.cite(Evidence(ref=note.ref, field="note.note_type", value=note.note_type, time=moment,
                          label=note.note_type))
        if item.get("author"):
            ctx.cite(Evidence(ref=note.ref, field="note.author", value=item["author"], time=moment,
                              label=note.note_type))
        if item.get("summary"):
            digest = " | ".join(item["summary"])
            ctx.cite(Evidence(ref=note.ref, field="note.text", value=digest[:300] + (" …" if len(digest) > 300 else ""),
                              time=moment, label=note.note_type))
            limit = bounds["material_chars"]
            item["text"] = note.text if len(note.text) <= limit else note.text[:limit] + " …"
    out: dict[str, Any] = {"ok": True, "count": len(scope.notes), "listed": len(items), "summarized": summarized,
                           "scope": scope.how, "scope_label": scope.label, "stay": scope.stay, "default_scope": scope.default, "what": what,
                           "notes_on_file": on_file, "of_that_kind_on_file": len(of_that), "notes": items}
    if len(scope.notes) > len(items):
        out["left_out"] = len(scope.notes) - len(items)
    if not scope.notes and of_that:
        last_one = of_that[-1]
        out["last_on_file"] = listing.entry(last_one)
    return out
