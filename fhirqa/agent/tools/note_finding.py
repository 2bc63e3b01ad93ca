"""``find_in_notes``: the value, dose or finding a question asks about, read from the patient's notes.

Deterministic: the same note search as ``search_notes``, then rule-based extraction
(``fhirqa.notes.extract.answer_from_notes``: the number after the name, the strength after the drug, a
symptom mentioned or negated). The sentence it rests on is cited, so an answer from the notes is as
traceable as one from the tables.
"""

from __future__ import annotations

from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.notes import _bound


def find_in_notes(ctx: ToolContext, question: str, k: int = 8, start: str | None = None,
                  end: str | None = None) -> dict[str, Any]:
    """What the notes say about ``question`` (within [start, end]), with the sentence cited; found=false otherwise."""
    notes = getattr(ctx, "notes", None)
    if notes is None or ctx.patient_id is None:
        raise ToolError("no clinical notes are available for this question; answer from the structured views")
    if not question.strip():
        raise ToolError("question is empty")
    from fhirqa.notes.extract import answer_from_notes

    low, high = _bound(start, end=False), _bound(end, end=True)
    high = min(high, ctx.now) if high else ctx.now
    hits = notes.search(ctx.patient_id, question, k=max(1, min(20, k)), since=low, until=high)
    finding = answer_from_notes(question, hits)
    if finding is None:
        return {"ok": True, "found": False, "searched_passages": len(hits),
                "note": "not documented in the notes" if hits else "no note passage matches"}
    moment = finding.time.isoformat() if finding.time else (finding.date or None)
    ctx.cite(Evidence(ref=finding.ref, field="note.text", value=finding.sentence, time=moment,
                      label=finding.note_type, unit=finding.unit))
    return {"ok": True, "found": True, "kind": finding.kind, "target": finding.target, "value": finding.value,
            "unit": finding.unit, "negated": finding.negated, "quote": finding.sentence, "ref": finding.ref,
            "time": moment, "note_type": finding.note_type}
