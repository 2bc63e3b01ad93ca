"""``check_note_consistency``: does what a note says agree with the structured record?

"Does this note's potassium match the lab table?", "Is the A1c in the January note right?", "Do her notes
and labs disagree anywhere?": the consistency checker (:mod:`fhirqa.consistency`) reads the chosen notes,
finds each value, dose, drug, diagnosis and procedure they state, and compares it with the rows of the
canonical views as of the question's ``now``. Every comparison is cited: the note's words and the record
rows they were checked against.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.notes import _bound

MAX_SHOWN = 12  # comparisons listed in a result (counts cover them all)
_VIEWS = {"lab": "observation", "vital": "observation", "medication": "medication", "condition": "condition",
          "procedure": "procedure", "immunization": "immunization"}


def check_note_consistency(ctx: ToolContext, item: str | None = None, which: str | None = None,
                           start: str | None = None, end: str | None = None, note: str | None = None,
                           show: str = "checked", prior: bool = False,
                           category: str | None = None) -> dict[str, Any]:
    """Compare what the chosen notes state (about ``item``, or everything) with the record as of now.

    ``prior``: only the earlier results a note quotes ("Cr 0.79 (prior 0.77 on 9/12/2025)": the 0.77), each
    checked against the record on its own date; a window then chooses a note by its own time or by the date
    of the prior value it quotes. Without ``prior``, a question about one item reads the note's own value
    of it and leaves out the prior it quotes (unless that is all the note says of it); a whole-note check
    (no item) covers both. Words of ``item`` that are the patient's own names ("Arthur's notes") are
    not an item. ``category`` keeps one kind of statement (medication, condition, lab…).
    """
    from fhirqa.consistency import PatientChecker  # the checker's vocabulary loads only when asked

    if ctx.patient_id is None:
        raise ToolError("a consistency check is about one patient: no patient is selected")
    item = _without_patient_names(ctx, item) if item else None
    low, high = _bound(start, end=False), _bound(end, end=True)
    high = min(high, ctx.now) if high else ctx.now
    checker = PatientChecker(None, ctx.patient_id, rows=ctx.data)
    try:
        written = [n for n in checker.notes(note) if isinstance(n.get("time"), datetime) and n["time"] <= ctx.now]
        inside = [n for n in written if n["time"] <= high and (low is None or n["time"] >= low)]
        notes = written if prior else inside
        if which == "latest":
            notes = notes[-1:]
        elif which == "first":
            notes = notes[:1]
        reports = [checker.check(n["text"], n["time"], n.get("note_type") or "other", n.get("encounter_ref"),
                                 n.get("ref")) for n in notes]
    finally:
        checker.close()
    if prior and which is None and (start or end):
        # the window names the note's day or the prior value's day ("the 12/2 note's prior Cr from 6/3")
        refs = {n.get("ref") for n in inside}
        reports = [r for r in reports if r.note_ref in refs
                   or any(_quoted_within(c, low, high) for c in r.checks)]
    wanted = _item_names(ctx, item) if item else None
    chosen = [(report, check) for report in reports for check in report.checks
              if (check.status != "unverifiable" or show == "all") and (not prior or check.entity.prior)
              and (category is None or check.entity.category == category)
              and (wanted is None or _about(check, wanted))]
    if wanted is not None and not prior and any(not c.entity.prior for _, c in chosen):
        # "the creatinine in the note" is the note's own value: the prior it quotes is asked for by name
        chosen = [(r, c) for r, c in chosen if not c.entity.prior]
    compared = [_comparison(ctx, report, check) for report, check in chosen]
    inconsistent = [c for c in compared if c["status"] == "inconsistent"]
    consistent = [c for c in compared if c["status"] == "consistent"]
    out: dict[str, Any] = {
        "ok": True,
        "notes_checked": [{"ref": r.note_ref, "time": r.note_time.isoformat(), "note_type": r.note_type}
                          for r in reports],
        "consistent": len(consistent), "inconsistent": len(inconsistent),
        "agree": None if not (consistent or inconsistent) else not inconsistent,
        "comparisons": (inconsistent + consistent + [c for c in compared if c["status"] == "unverifiable"])[:MAX_SHOWN],
    }
    if item:
        out["item"] = item
    what = f"{'a prior value of ' if prior else ''}{item!r}" if item else ("a prior value" if prior else "")
    if category and not item:
        what = f"any {category}"
    if not reports:
        out["note"] = "no note with text in this window"
    elif not compared:
        out["note"] = (f"the chosen note(s) state nothing about {what} that the record can check" if what
                       else "the chosen note(s) state nothing the record can check")
    return out


def _fold(word: str) -> str:
    """Lower case without accents ("María" → "maria")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


def _without_patient_names(ctx: ToolContext, item: str) -> str | None:
    """``item`` without the words that are the patient's own names (patient view); None when nothing is left."""
    names: set[str] = set()
    for row in ctx.data.rows("patient"):
        for key in ("name", "name_raw", "given", "family"):
            names.update(_fold(w) for w in re.findall(r"[^\W\d_]+", str(row.get(key) or "")) if len(w) > 1)
    kept = [w for w in item.split() if _fold(re.sub(r"['’]s$", "", w)) not in names]
    return " ".join(kept) or None


def _quoted_within(check: Any, low: datetime | None, high: datetime | None) -> bool:
    """True when ``check`` is a prior value whose own date falls inside the window."""
    when = check.entity.time
    if not check.entity.prior or when is None:
        return False
    return (low is None or when.end >= low) and (high is None or when.start <= high)


def _item_names(ctx: ToolContext, item: str) -> set[str]:
    """The phrase and what it resolves to among the patient's own item names, lower-cased."""
    names = {item.lower().strip()}
    for view in ("observation", "medication", "condition", "procedure", "immunization"):
        names.update(n.lower() for n in ctx.resolve(view, item, ctx.data.items(view)).matched)
    return names


def _about(check: Any, wanted: set[str]) -> bool:
    """True when the note's words or the record items they matched are the item asked about."""
    said = check.entity.name.lower()
    items = {i.lower() for i in check.items}
    if items & wanted:
        return True
    return any(re.search(rf"\b{re.escape(w)}\b", said) or re.search(rf"\b{re.escape(said)}\b", w)
               for w in wanted if w)


def _comparison(ctx: ToolContext, report: Any, check: Any) -> dict[str, Any]:
    """One comparison as a model (and a clinician) reads it, its note words and record rows cited."""
    entity = check.entity
    written = report.text[entity.span[0]:entity.span[1]]
    note_time = report.note_time.isoformat()
    if report.note_ref:
        ctx.cite(Evidence(ref=report.note_ref, field="note.text", value=written, time=note_time,
                          label=report.note_type))
    view = _VIEWS.get(entity.category, "observation")
    record = []
    for row in check.rows[:3]:
        moment = row.get("time") or row.get("start_time") or row.get("authored_on") or row.get("onset_time")
        when = moment.isoformat() if isinstance(moment, datetime) else moment
        # an order's row names its drug and dose in the medication view's own columns
        value = next((row[k] for k in ("value", "dose", "dose_value") if row.get(k) is not None), None)
        item, unit = row.get("name") or row.get("medication_name"), row.get("unit") or row.get("dose_unit")
        shown = {"ref": row.get("ref"), "item": item, "value": value, "unit": unit, "time": when}
        record.append({k: v for k, v in shown.items() if v is not None})
        if row.get("ref"):
            ctx.cite(Evidence(ref=row["ref"], field=f"{view}.value", value=value, time=when, label=item, unit=unit))
    return {"note_ref": report.note_ref, "note_time": note_time, "note_type": report.note_type,
            "as_written": written, "prior": entity.prior, "category": entity.category, "status": check.status, "fields": check.fields,
            "items": check.items, "reason": check.reason, "record": record}
