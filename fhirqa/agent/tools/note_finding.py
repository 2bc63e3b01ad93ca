"""``find_in_notes``: the value, dose or finding a question asks about, read from the patient's notes.

Deterministic: the same note search as ``search_notes``, then rule-based extraction
(``fhirqa.notes.extract.answer_from_notes``: the number after the name, the strength after the drug, a
symptom mentioned or negated). The sentence it rests on is cited, so an answer from the notes is as
traceable as one from the tables.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.notes import _bound


def find_in_notes(ctx: ToolContext, question: str, k: int = 8, start: str | None = None,
                  end: str | None = None, which: str | None = None, encounter_class: str | None = None,
                  item: str | None = None, note_kind: str | None = None, read: str | None = None) -> dict[str, Any]:
    """What the notes say about ``question`` (within [start, end]), with the sentence cited; found=false otherwise.

    Anchored to a visit (a day's window, ``which`` = latest/first note, or ``encounter_class`` in the window), a
    question about a section (chief complaint, assessment, allergies, medications, social history, plan, a
    mention) is read from that visit's whole note (``fhirqa.notes.reader``). With ``note_kind`` (a discharge
    summary, chest x-ray, nursing note…: ``lexicon/note_kinds.json``) only the notes of that kind answer
    (``fhirqa.notes.kinds``): their count, the last one's date, a section, a value or a mention.

    ``read="note"`` (or a question that asks for the note itself: "summarize the last note", "A&P from the
    3/2/2019 note", "show me the last discharge summary") returns the anchored note as written: its kind, date,
    author and encounter, an extractive digest (each section's heading with its first lines, the assessment,
    plan and diagnoses in full) or the sections the question names, cited by the note's reference.
    """
    notes = getattr(ctx, "notes", None)
    if notes is None or ctx.patient_id is None:
        raise ToolError("no clinical notes are available for this question; answer from the structured views")
    if not question.strip():
        raise ToolError("question is empty")
    from fhirqa.notes.extract import answer_from_notes

    low, high = _bound(start, end=False), _bound(end, end=True)
    high = min(high, ctx.now) if high else ctx.now
    if callable(getattr(notes, "notes", None)) and _reads_note(question, read, note_kind):
        return _read_note(ctx, notes, question, low, high, which, encounter_class, note_kind)
    if note_kind and callable(getattr(notes, "notes", None)):
        return _of_kind(ctx, notes, question, note_kind, low, _bound(end, end=True), item)
    one_day = bool(low and high - low <= timedelta(days=2))
    if (one_day or (low and which)) and callable(getattr(notes, "notes", None)) and value_at_note(question):
        return _value_at_note(ctx, notes, question, low, high, None if one_day else which)  # type: ignore[arg-type]
    whole = callable(getattr(notes, "notes", None))
    if (which or encounter_class or one_day) and whole:
        visit = _read_visit(ctx, notes, question, low, high, which, encounter_class, item)
        if visit is not None:
            return visit
    elif item and whole:
        every = _read_every(ctx, notes, question, low, high, item)
        if every is not None:
            return every
    if whole and not _written_anywhere(question, notes.notes(ctx.patient_id), low, high):
        # No note can hold the answer: skip the search, whose first use embeds every note of the patient.
        return {"ok": True, "found": False, "searched_passages": 0, "note": "no note passage matches"}
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


def _in_window(notes: list[Any], low: datetime | None, high: datetime) -> list[Any]:
    """The notes a search over [low, high] can return (notes without a time only when no start is given)."""
    return [n for n in notes if (n.time is None and low is None)
            or (n.time is not None and (low is None or n.time >= low) and n.time <= high)]


def _written_anywhere(question: str, notes: list[Any], low: datetime | None, high: datetime) -> bool:
    """False when no note in the window contains any name the question's target may be written as.

    ``answer_from_notes`` reads only sentences that contain one of those names (case-insensitively at most), so
    when none is in any note's text the search cannot change the answer and is skipped (a lexical pre-filter: a
    patient's first search embeds all their notes). True when the question has no target the extractor reads.
    """
    from fhirqa.notes.extract import parse_target, written_forms

    target = parse_target(question)
    if target is None:
        return True
    forms = [" ".join(f.lower().split()) for f in written_forms(target)]
    scope = [n for n in notes if n.time is None or ((low is None or n.time >= low) and n.time <= high)]
    # whitespace as chunks render it: a phrase broken over a line in the note is one phrase in its chunk
    return any(f in " ".join(n.text.lower().split()) for n in scope for f in forms)


def _read_every(ctx: ToolContext, notes: Any, question: str, low: datetime | None, high: datetime,
                item: str) -> dict[str, Any] | None:
    """Whether any note in the window mentions ``item``, every note read (``reader.read_every``); None when the
    question is not a mention question asked of the notes as a whole."""
    from fhirqa.notes import reader

    if not reader.whole_record_asked(question):
        return None
    scope = _in_window(notes.notes(ctx.patient_id), low, high)
    if not scope:
        return {"ok": True, "found": False, "anchored": True, "note": "no notes on file in that window"}
    reading = reader.read_every(question, scope, item)
    if reading is None:
        return None
    days = sorted(n.time.date().isoformat() for n in scope if n.time is not None)
    span = {"notes_in_scope": len(scope), "first": days[0] if days else None, "last": days[-1] if days else None}
    note = reading.note
    if note is None:  # no note mentions it: the answer rests on every note read
        return {"ok": True, "found": True, "kind": "section", "field": reading.field, "answer_kind": reading.kind,
                "value": reading.value, "quote": "", "scope": "all notes", **span}
    moment = note.time.isoformat() if note.time else None
    ctx.cite(Evidence(ref=note.ref, field="note.text", value=reading.quote, time=moment, label=note.note_type))
    return {"ok": True, "found": True, "kind": "section", "field": reading.field, "answer_kind": reading.kind,
            "value": reading.value, "quote": reading.quote, "ref": note.ref, "time": moment,
            "note_type": note.note_type, "scope": "all notes", **span}


# A note named by its kind: a value asked "per the H&P" / "in the progress note" is read from that note itself.
# "at ED discharge" names the ED provider note too: the vitals at ED discharge are written in its disposition.
NOTE_NAMED = re.compile(r"\b(?:h&p|history and physical|progress note|hospitalist(?: note)?|discharge summary|"
                        r"dc summary|summary|(?:ed|provider|admission|clinic) note|(?:ed|er|emergency department) "
                        r"discharge)\b", re.I)
_MENTION = re.compile(r"\b(?:mention\w*|documented|noted|anything about|any|yes or no)\b")


def value_at_note(question: str) -> bool:
    """True when the question asks for a lab or vital value, or a dose, as a named (dated) note states it."""
    from fhirqa.notes.extract import MEASUREMENT, parse_target
    from fhirqa.notes.reader import _is_value_item, ask_field

    if not NOTE_NAMED.search(question):
        return False
    field = ask_field(question)
    if field is not None and (field.get("not_a_lab") or field.get("reads_note")):
        return False  # "length of stay in the DC summary?": the note's LOS, not a body length
    q = question.lower()
    if re.match(r"\s*(?:was|were|is|are|did|does|do|has|had)\b", q) or (
            _MENTION.search(q) and not re.match(r"\s*(?:what|which|how)\b", q)):
        return False  # "Was lactate mentioned in the H&P?", "Was repeat BMP part of the follow-up…?" ask yes/no
    target = parse_target(NOTE_NAMED.sub(" ", question))
    if target is not None and target.kind == "dose":
        return True  # "heparin dose for VTE ppx in the Jan 4, 2025 H&P?": the strength as that note writes it
    return target is not None and target.kind == "value" and (
        any(_is_value_item(n.lower()) for n in target.names) or bool(MEASUREMENT.search(target.name)))


def _value_at_note(ctx: ToolContext, notes: Any, question: str, low: datetime, high: datetime,
                   which: str | None = None) -> dict[str, Any]:
    """The value read from the whole text of the day's note(s); found=false (anchored) when they do not state it.

    With ``which`` (a longer window: "per the H&P of the December 2023 admission"), the first or latest note
    of the kind the question names in that window.
    """
    from fhirqa.notes import reader
    from fhirqa.notes.extract import answer_from_notes
    from fhirqa.notes.index import Hit

    visit = [n for n in reader.anchored(notes.notes(ctx.patient_id), low, high) if n.time is None or n.time <= ctx.now]
    if which:
        visit = reader.of_kind(visit, reader.named_kind(question))
        visit = visit[:1] if which == "first" else visit[-1:]
    if not visit:
        return {"ok": True, "found": False, "note": "no note of that day"}
    hits = [Hit(text=n.text, ref=n.ref, note_id=n.note_id, chunk_id=n.note_id, date=n.date, time=n.time,
                note_type=n.note_type, section="", score=1.0, patient_id=n.patient_id) for n in visit]
    finding = answer_from_notes(question, hits)
    if finding is None:
        return {"ok": True, "found": False, "anchored": True, "notes_in_scope": len(visit),
                "note": "that day's note does not state it"}
    moment = finding.time.isoformat() if finding.time else (finding.date or None)
    ctx.cite(Evidence(ref=finding.ref, field="note.text", value=finding.sentence, time=moment,
                      label=finding.note_type, unit=finding.unit))
    return {"ok": True, "found": True, "anchored": True, "kind": finding.kind, "target": finding.target,
            "value": finding.value, "unit": finding.unit, "negated": finding.negated, "quote": finding.sentence,
            "ref": finding.ref, "time": moment, "note_type": finding.note_type}


def _read_visit(ctx: ToolContext, notes: Any, question: str, low: datetime | None, high: datetime,
                which: str | None, encounter_class: str | None, item: str | None) -> dict[str, Any] | None:
    """The anchored note's section answer; None when the question is not a section question."""
    from fhirqa.notes import reader

    if reader.ask_field(question) is None:
        return None
    visit = reader.anchored(notes.notes(ctx.patient_id), low, high, which, encounter_class)
    visit = [n for n in visit if n.time is None or n.time <= ctx.now]
    if not visit:
        return {"ok": True, "found": False, "anchored": True, "note": "no note of that visit"}
    reading = reader.read(question, visit, item)
    if reading is None:
        return {"ok": True, "found": False, "anchored": True, "notes_in_scope": len(visit),
                "note": "that visit's note does not hold the section asked about"}
    note = reading.note or visit[-1]
    moment = note.time.isoformat() if note.time else None
    ctx.cite(Evidence(ref=note.ref, field="note.text", value=reading.quote or "(not mentioned)", time=moment,
                      label=note.note_type))
    return {"ok": True, "found": True, "kind": "section", "field": reading.field, "answer_kind": reading.kind,
            "value": reading.value, "quote": reading.quote, "ref": note.ref, "time": moment,
            "note_type": note.note_type, "structured_too": reading.structured_too}


def _of_kind(ctx: ToolContext, notes: Any, question: str, kind: str, low: datetime | None, high: datetime | None,
             item: str | None) -> dict[str, Any]:
    """``find_in_notes`` over the notes of one kind (``fhirqa.notes.kinds.answer``), every note it rests on cited."""
    from fhirqa.notes import kinds

    read = kinds.answer(question, kind, notes.notes(ctx.patient_id), ctx.now, low, high, item)
    for note in read.notes[-20:]:
        ctx.cite(Evidence(ref=note.ref, field="note.text", value=read.quote or note.date,
                          time=note.time.isoformat() if note.time else None, label=note.note_type))
    last = read.notes[-1] if read.notes else None
    return {"ok": True, "found": read.found, "kind": "note_kind", "note_kind": kind, "answer_kind": read.shape,
            "value": read.value, "unit": read.unit, "text": read.text, "quote": read.quote, "no_kind": read.no_kind,
            "notes_in_scope": len(read.notes), "ref": last.ref if last else None,
            "time": last.time.isoformat() if last and last.time else None,
            "note_type": last.note_type if last else None}


# -- the note itself -------------------------------------------------------------------------------------------
def _kind_words(note_kind: str | None) -> tuple[str, ...]:
    """The question words for ``note_kind`` (``lexicon/note_kinds.json``): they name the note, they ask nothing."""
    if not note_kind:
        return ()
    from fhirqa.notes import kinds

    spec = next((k for k in kinds.config()["kinds"] if k["name"] == note_kind), None)
    return tuple(spec["asks"]) if spec else ()


def _reads_note(question: str, read: str | None, note_kind: str | None) -> bool:
    """Whether ``find_in_notes`` returns the note itself: asked (``read="note"``), or the question asks for it.

    With a ``note_kind`` the kind's own readings (its impression, its discharge diagnoses, a value, a count) stay
    with ``fhirqa.notes.kinds``; the note itself is returned when the question asks for the whole note
    ("summarize the last discharge summary", "last discharge summary?") or a section that reader has no entry for
    ("hospital course from the last DC summary").
    """
    from fhirqa.notes import reader

    if read is not None:
        return read == "note"
    if note_kind:
        from fhirqa.notes import kinds

        asked = reader.note_asked(question, _kind_words(note_kind))
        return asked is not None and (not asked.sections or kinds.section_asked(question, note_kind) is None)
    spec = reader.ask_field(question)
    return spec is not None and bool(spec.get("reads_note"))


def _read_note(ctx: ToolContext, notes: Any, question: str, low: datetime | None, high: datetime,
               which: str | None, encounter_class: str | None, note_kind: str | None) -> dict[str, Any]:
    """The anchored note (a day's notes, the latest / first, of a kind) as written, or the sections asked."""
    from fhirqa.notes import reader

    asked = reader.note_asked(question, _kind_words(note_kind)) or reader.NoteAsk((), True)
    which = which or reader.which_note(question)  # a caller that named only the kind: "the first DC summary"
    scope, label = _note_scope(ctx, notes, question, encounter_class, note_kind)
    plural = label if label.endswith("s") else f"{label}s"
    if not scope:
        text = "No notes on file for this patient." if label == "note" else f"No {plural} on file for this patient."
        return {"ok": True, "found": False, "kind": "note", "anchored": True, "no_notes": True, "text": text}
    one_day = low is not None and high - low <= timedelta(days=2)
    if one_day and low is not None:
        chosen = reader.anchored(scope, low, high)
        if not chosen:
            return {"ok": True, "found": False, "kind": "note", "anchored": True, "notes_in_scope": 0,
                    "text": f"No {label} on {low.date().isoformat()}{_nearest(scope, low)}."}
        order = chosen
    else:
        within = [n for n in scope if (low is None or n.time >= low) and n.time <= high]
        if not within:
            return {"ok": True, "found": False, "kind": "note", "anchored": True, "notes_in_scope": 0,
                    "text": f"No {label} between {low.date() if low else 'the start'} and {high.date()}."}
        order = within if which == "first" else within[::-1]
        chosen = order[:1]
    word = "" if one_day else ("first" if which == "first" else "last")
    if asked.sections:
        return _read_sections(ctx, asked, chosen if one_day else order, label, word)
    shown = chosen[:4]
    budget = int(reader._digest_config().get("max_chars", 1800))
    value: list[str] = []
    texts: list[str] = []
    for note in shown:
        lines = reader.digest(note, max(600, budget // len(shown)))
        _cite_note(ctx, note, "\n".join(lines))
        value += lines if len(shown) == 1 else [f"{_about(note)}: " + " | ".join(lines)]
        texts.append(f"{_about(note, with_ref=True)}:\n" + "\n".join(lines))
    if len(shown) == 1:
        head = f"The {word} {label}" if word else f"The {label} of {shown[0].date}"
        text = f"{head} — {texts[0]}"
    else:
        more = f" ({len(chosen) - len(shown)} more not shown)" if len(chosen) > len(shown) else ""
        text = f"{len(chosen)} {plural} on {shown[0].date}{more}:\n\n" + "\n\n".join(texts)
    first = shown[0]
    return {"ok": True, "found": True, "kind": "note", "answer_kind": "note", "value": value, "text": text,
            "ref": first.ref, "time": first.time.isoformat() if first.time else None, "note_type": first.note_type,
            "author": first.author, "encounter": first.encounter_ref, "notes_in_scope": len(chosen),
            "notes": [_note_material(n) for n in shown]}


def _note_scope(ctx: ToolContext, notes: Any, question: str, encounter_class: str | None,
                note_kind: str | None) -> tuple[list[Any], str]:
    """The patient's dated notes before now, of the kind asked (a ``note_kind``, a kind the question names, an
    ``encounter_class``), oldest first, and what to call them."""
    from fhirqa.notes import reader

    mine = [n for n in notes.notes(ctx.patient_id) if n.time is not None and n.time <= ctx.now]
    label = "note"
    if note_kind:
        from fhirqa.notes import kinds

        mine, label = kinds.of_kind(mine, note_kind), note_kind
    else:
        named = reader.named_kind(question)
        kinds_of_class = reader.config().get("note_kinds", {}).get(encounter_class or "", [])
        if named is not None:  # "the ED note from 3/2/2019": only notes of that kind, none when there is none
            mine = [n for n in mine if any(t in (n.note_type or "").lower() for t in named["types"])]
            label = named.get("name") or label
        elif kinds_of_class:
            mine = [n for n in mine if any(k in (n.note_type or "").lower() for k in kinds_of_class)]
    return sorted(mine, key=lambda n: n.time), label


def _read_sections(ctx: ToolContext, asked: Any, candidates: list[Any], label: str, word: str) -> dict[str, Any]:
    """The sections asked, as written, from the first candidate note that has one of them (the anchored note,
    else the nearest earlier one for "the last note": "plan from the last note" when the last is an ECG read)."""
    from fhirqa.notes import reader

    note = next((n for n in candidates if any(reader.note_section(n, e).present for e in asked.sections)), None)
    names = " and ".join(e["section"] for e in asked.sections)
    if note is None:
        anchor = candidates[0]
        heads = ", ".join(reader.headings(anchor)[:12]) or "no headings"
        where = f"the {word} {label}" if word else f"the {label} of {anchor.date}"
        text = (f"No {names} section in {where} ({anchor.note_type} of {anchor.date}; its sections: {heads})"
                if len(candidates) == 1
                else f"No {label} on file has a {names} section")
        _cite_note(ctx, anchor, "(no such section)")
        return {"ok": True, "found": False, "kind": "note", "anchored": True, "answer_kind": "section",
                "no_section": True, "text": text + ".", "ref": anchor.ref, "note_type": anchor.note_type}
    read = [reader.note_section(note, e) for e in asked.sections]
    value: list[str] = []
    parts: list[str] = []
    for section in read:
        if not section.present:
            parts.append(f"{section.asked}: not in this note")
        elif not section.items:
            parts.append(f"{section.heading}: (nothing written under this heading)")
        else:
            value += section.items
            parts.append(f"{section.heading}:\n{section.text}" if len(read) > 1 or "\n" in section.text
                         else f"{section.heading}: {section.text}")
    latest_word = f"the {word} {label}" if word else f"the {label} of {note.date}"
    first = candidates[0]
    lead = f"From {latest_word}" if note is first else \
        f"The {word} {label} ({first.note_type} of {first.date}) has no {names}; from the {word} one that does"
    text = f"{lead} — {_about(note, with_ref=True)}:\n" + "\n".join(parts)
    quote = "\n".join(s.text for s in read if s.text)
    _cite_note(ctx, note, quote or "(nothing written)")
    return {"ok": True, "found": True, "kind": "note", "answer_kind": "section", "value": value, "text": text,
            "empty": not value, "sections": [{"asked": s.asked, "heading": s.heading, "text": s.text} for s in read],
            "quote": quote, "ref": note.ref, "time": note.time.isoformat() if note.time else None,
            "note_type": note.note_type, "author": note.author, "encounter": note.encounter_ref}


def _about(note: Any, with_ref: bool = False) -> str:
    """"History and physical note, 1994-11-13, Dr. X (Encounter/…)": what the note is, when and by whom."""
    bits = [note.note_type or "note", note.date]
    if note.author:
        bits.append(note.author)
    extra = [x for x in ((note.encounter_ref if note.encounter_ref else None), note.ref if with_ref else None) if x]
    return ", ".join(bits) + (f" ({'; '.join(extra)})" if extra else "")


def _nearest(scope: list[Any], moment: datetime) -> str:
    """"; the nearest notes are of 2019-02-27 and 2019-03-14": the notes on either side of a day without one."""
    before = [n for n in scope if n.time < moment]
    after = [n for n in scope if n.time >= moment]
    near = [f"{n.note_type} of {n.date}" for n in (before[-1:] + after[:1])]
    return f"; the nearest: {' and '.join(near)}" if near else ""


def _cite_note(ctx: ToolContext, note: Any, value: str) -> None:
    shown = value if len(value) <= 300 else value[:300].rsplit(" ", 1)[0] + " …"
    ctx.cite(Evidence(ref=note.ref, field="note.text", value=shown, time=note.time.isoformat() if note.time else None,
                      label=note.note_type))


NOTE_MATERIAL_CHARS = 6000  # a note's text given to a model to summarize, beyond the digest


def _note_material(note: Any) -> dict[str, Any]:
    """What a model summarizing the note reads: its metadata and its text as written (bounded)."""
    text = note.text if len(note.text) <= NOTE_MATERIAL_CHARS else note.text[:NOTE_MATERIAL_CHARS] + " …"
    return {"ref": note.ref, "date": note.date, "time": note.time.isoformat() if note.time else None,
            "note_type": note.note_type, "author": note.author, "encounter": note.encounter_ref, "text": text}
