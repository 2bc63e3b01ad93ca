"""Kinds of note as a kind of record: "the last d/c summary", "# of radiology reports this admission", "last CXR".

A note's kind comes from its stored type (MIMIC-III ``CATEGORY: DESCRIPTION``, OMOP ``note_type``, FHIR
DocumentReference type or category), a question's kind from the words clinicians use for it; both are data
(``lexicon/note_kinds.json``). :func:`answer` answers a question about the notes of one kind: their count (never
no-data), the date of the last (or first) one, a section of it read as written (a CXR's impression, a summary's
discharge diagnoses, medications, disposition, chief complaint), a value it states, or whether it (or any note
of the kind) mentions a finding. A patient with no note of the kind asked gets no answer (``found`` False, with
``no_kind``): there is no note to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.notes.sources import Note

_HEADING = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z /&()\-]{0,50}?)\s*:\s*(?P<rest>.*)$")
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*(?P<body>.+)$")
_NAME_END = re.compile(r"\s(?:\d|\(|-\s)")  # a drug name ends where its strength, a parenthesis or a dash begins


@lru_cache(maxsize=1)
def config() -> dict[str, Any]:
    """``lexicon/note_kinds.json``, read once."""
    from fhirqa.project import lexicon_file

    return lexicon_file("note_kinds.json")


def first_match(patterns: list[str], text: str) -> re.Match[str] | None:
    """The first of ``patterns`` (regular expressions, in order) found in ``text``, or None."""
    for p in patterns:
        m = re.search(p, text)
        if m:
            return m
    return None


def kinds_of(note_type: str | None) -> set[str]:
    """Every kind a note of this stored type is (a chest x-ray is a radiology report too)."""
    text = " ".join((note_type or "").lower().split())
    if not text:
        return set()
    out: set[str] = set()
    for kind in config()["kinds"]:
        if first_match(kind["types"], text) and not first_match(kind.get("not_types", []), text):
            out.add(kind["name"])
            if kind.get("within"):
                out.add(kind["within"])
    return out


def asked_kind(question: str) -> str | None:
    """The note kind a question names ("date of last d/c summary?" → "discharge summary"), else None."""
    q = " ".join(question.lower().split())
    return next((k["name"] for k in config()["kinds"] if first_match(k["asks"], q)), None)


def of_kind(notes: list[Note], kind: str) -> list[Note]:
    """The notes of ``kind``, oldest first (undated notes first)."""
    return [n for n in notes if kind in kinds_of(n.note_type)]


@dataclass
class KindAnswer:
    """What the notes of one kind answer: the value(s), how it was read, and the note(s) it rests on."""

    found: bool
    shape: str  # "count" | "date" | "section" | "value" | "mention" | "none"
    value: list[Any]
    text: str
    notes: list[Note]
    quote: str = ""
    unit: str | None = None
    no_kind: bool = False  # the patient has no note of the kind asked


def asks(question: str, key: str) -> bool:
    """The question matches one of the lexicon's ``key`` cues (asks_date, asks_count, this_stay, first…)."""
    return first_match(config().get(key, []), " ".join(question.lower().split())) is not None


def section_asked(question: str, kind: str) -> dict[str, Any] | None:
    """The section of a note of ``kind`` the question asks for, with the kind's own words taken out first."""
    whole = q = " ".join(question.lower().split())
    spec = next(k for k in config()["kinds"] if k["name"] == kind)
    for p in spec["asks"]:
        q = re.sub(p, " ", q)
    for text in (q, whole):  # a kind named by its section ("the discharge med list") asks for that section
        found = next((s for s in config()["sections"] if first_match(s["asks"], text)
                      and not first_match(s.get("not_asks", []), text)), None)
        if found is not None:
            return found
    return None


def _counts_kind(question: str, kind: str) -> bool:
    """The question counts the notes themselves ("# of imaging reports", "how many discharge summaries"), not a
    number a note states ("how many days was the LOS in the DC summary?"): the kind follows the count cue
    within two words."""
    q = " ".join(question.lower().split())
    spec = next(k for k in config()["kinds"] if k["name"] == kind)
    for cue in config().get("asks_count", []):
        for m in re.finditer(cue, q):
            rest = q[m.end():]
            for p in spec["asks"]:
                k = re.search(p, rest)
                if k and len(rest[:k.start()].split()) <= 2:
                    return True
                # "echo count?", "CXR count this admit": the kind just before the count word
                if any(not q[b.end():m.start()].strip() for b in re.finditer(p, q[:m.start()])):
                    return True
    return False


def shape_of(question: str, kind: str) -> str:
    """How a question about notes of ``kind`` is answered: count, date, section or a reading of the text."""
    if asks(question, "asks_count") and _counts_kind(question, kind):
        return "count"
    if section_asked(question, kind) is not None:
        return "section"
    if asks(question, "asks_date") and not re.search(r"\bon (?:\d|[a-z]{3,9} \d)", question.lower()):
        return "date"
    return "text"


def _in_stay(notes: list[Note], all_notes: list[Note]) -> tuple[list[Note], str | None]:
    """The notes of the patient's latest stay: the encounter of their latest dated note (None without encounters)."""
    dated = [n for n in all_notes if n.encounter_ref and n.time is not None]
    if not dated:
        return notes, None
    stay = max(dated, key=lambda n: n.time).encounter_ref  # type: ignore[arg-type,return-value]
    return [n for n in notes if n.encounter_ref == stay], stay


def _within(note: Note, start: datetime | None, end: datetime | None) -> bool:
    """The note is dated in [start, end]. A note dated by its day only (midnight: MIMIC-III ``CHARTDATE`` of an ECG
    or a discharge summary) belongs to every instant of that day: the admission-day ECG is in a stay that began at
    06:07, the discharge-day summary in one that ended at 15:44."""
    moment = note.time
    if moment is None:
        return False
    if moment.time() == datetime.min.time():
        return (start is None or start.date() <= moment.date()) and (end is None or moment.date() <= end.date())
    return (start is None or moment >= start) and (end is None or moment <= end)


def answer(question: str, kind: str, notes: list[Note], now: datetime, start: datetime | None = None,
           end: datetime | None = None, item: str | None = None) -> KindAnswer:
    """Answer ``question`` from the patient's notes of ``kind`` dated at or before ``now`` (see the module doc)."""
    mine = [n for n in notes if n.time is None or n.time <= now]
    typed = [n for n in of_kind(mine, kind) if n.time is not None]
    typed.sort(key=lambda n: n.time)  # type: ignore[arg-type,return-value]
    shape = shape_of(question, kind)
    plural = kind if kind.endswith("s") else f"{kind}s"
    if shape == "count":
        if start is not None or end is not None:  # the window asked, or the stay the caller placed
            scope = [n for n in typed if _within(n, start, end)]
            where = f" from {start.date() if start else 'the first'} to {end.date() if end else 'now'}"
        else:
            scope, stay = _in_stay(typed, mine) if asks(question, "this_stay") else (typed, None)
            where = f" in {stay}" if stay else " on file"
        return KindAnswer(True, "count", [len(scope)], f"{len(scope)} {plural}{where}.", scope)
    if start is not None and end is not None and end - start <= timedelta(days=2):
        from fhirqa.notes.reader import anchored

        typed = anchored(typed, start, end)  # the day the note says it was written, else the nearest that day
    elif start is not None or end is not None:
        typed = [n for n in typed if _within(n, start, end)]
    if not typed:
        known = any(kinds_of(n.note_type) for n in mine)
        return KindAnswer(False, "none", [], f"No {kind} on file" + (" in that window." if start else "."), [],
                          no_kind=known)
    if shape == "text" and asks(question, "asks_every") and start is None:
        if not item:  # "ever had any CXR?": a report of the kind is on file
            return KindAnswer(True, "mention", [True], f"Yes: {len(typed)} {plural} on file, the last of "
                              f"{typed[-1].date}.", typed)
        return _mention(question, typed, item, every=True)
    target = typed[0] if asks(question, "first") else typed[-1]
    if start is not None and end is not None and len(typed) > 1 and shape != "date":
        target = typed[-1]
    if shape == "date":
        return KindAnswer(True, "date", [target.date], f"The {'first' if target is typed[0] and len(typed) > 1 and asks(question, 'first') else 'last'} "
                          f"{kind} is dated {target.date} ({target.note_type}).", [target])
    if shape == "section":
        spec = section_asked(question, kind)
        return _section(question, spec, target, item)  # type: ignore[arg-type]
    value = _value(question, target, item)
    if value is not None:
        return value
    if asks(question, "asks_open"):  # "what cefuroxime dose…?": not a yes/no this reader can give
        return KindAnswer(False, "text", [], f"Not read from the {kind}.", [target])
    return _mention(question, [target], item, every=False)


def split(note: Note) -> list[tuple[str, list[str]]]:
    """The note as (heading, lines) pairs; a heading's text on its own line is its first line."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for raw in note.text.splitlines():
        m = _HEADING.match(raw) if raw[:1].strip() else None  # an indented "NEW: cefuroxime …" is a section's line
        if m and not _NUMBERED.match(raw) and len(m["label"].split()) <= 5:
            out.append((" ".join(m["label"].lower().split()), [m["rest"].strip()] if m["rest"].strip() else []))
        else:
            out[-1][1].append(raw.strip())
    return out


def _body(spec: dict[str, Any], note: Note) -> list[str] | None:
    """The lines of the section ``spec`` names (sub-heads kept, marked ``\\x00``), None when the note has none."""
    parts = split(note)
    heads = [re.compile(rf"^(?:{h})$") for h in spec["headings"]]
    subs = [re.compile(rf"^(?:{h})$") for h in spec.get("subheads", [])]
    for i, (label, lines) in enumerate(parts):
        if not any(h.match(label) for h in heads):
            continue
        body = ["\x00" + label, *lines]  # the heading itself may be a sub-head ("Principal dx: CAP")
        for label2, more in parts[i + 1:]:
            if not any(s.match(label2) for s in subs):
                break
            body.append("\x00" + label2)
            body.extend(more)
        if spec["answer"] == "text":  # a paragraph: up to the first blank line after its text
            text: list[str] = []
            for line in body:
                if not line and text:
                    break
                if line and not line.startswith("\x00"):
                    text.append(line)
            return text
        return body
    return None


def _section(question: str, spec: dict[str, Any], note: Note, item: str | None) -> KindAnswer:
    body = _body(spec, note)
    name = spec["name"]
    if body is None:
        return KindAnswer(False, "section", [], f"The {note.note_type} of {note.date} has no {name} section.", [note])
    lines = [b for b in body if b and not b.startswith("\x00")]
    how = spec["answer"]
    if how == "text":
        value = [" ".join(" ".join(lines).split())] if lines else []
    elif how == "line":
        value = lines[:1]
    elif how in ("after_subhead", "under_subhead"):
        sub = re.compile(rf"^(?:{spec['subhead']})$")
        value = []
        for i, b in enumerate(body):
            if b.startswith("\x00") and sub.match(b[1:]):
                under = [x for x in body[i + 1:] if x]
                end = next((j for j, x in enumerate(under) if x.startswith("\x00")), len(under))
                value = under[:end][:1] if how == "after_subhead" else [
                    part.strip() for x in under[:end] for part in x.split(";") if part.strip()]
                break
        if how == "after_subhead":
            value = value or lines[:1]  # no sub-heads: the first diagnosis listed is the primary one
    elif how == "names":
        value = [_drug_name(b) for b in lines]
    else:  # a list written on one line ("Secondary dx: hyperkalemia; hypertension") is its items
        value = [part.strip() for line in lines for part in line.split(";") if part.strip()]
    quote = "; ".join(lines)
    if how == "names":
        member = first_match(spec.get("member", []), " ".join(question.lower().split()).rstrip("?. "))
        wanted = (member["item"] if member else None) or None
        if wanted and lines:
            hit = next((b for b, v in zip(lines, value, strict=True) if _same_drug(wanted, v)), None)
            said = f'"{hit}"' if hit else "not on it"
            return KindAnswer(True, "mention", [hit is not None],
                              f"{'Yes' if hit else 'No'}: the {name} of the {note.note_type} of {note.date} "
                              f"({len(lines)} listed): {said}.", [note], quote=hit or quote)
    if not value:
        return KindAnswer(False, "section", [], f"The {name} section of the {note.date} note is empty.", [note])
    return KindAnswer(True, "section", value, f"{'; '.join(str(v) for v in value)}, per the {name} of the "
                      f"{note.note_type} of {note.date}.", [note], quote=quote)


def _drug_name(line: str) -> str:
    m = _NUMBERED.match(line)
    body = m["body"] if m else line
    body = re.sub(r"^[A-Z][A-Z ]{1,20}:\s*", "", body)  # a status label ("NEW:", "CONTINUE:") is not the name
    return _NAME_END.split(body, maxsplit=1)[0].strip()


def _same_drug(asked: str, listed: str) -> bool:
    """Every word of the drug asked is a word of the listed name ("metoprolol" is on "Metoprolol Succinate"; a
    salt asked, "metoprolol succinate", is not "Metoprolol Tartrate")."""
    words = set(re.findall(r"[a-z0-9]+", listed.lower()))
    asked_words = [w for w in re.findall(r"[a-z0-9]+", asked.lower()) if w not in {"the", "a", "an"}]
    return bool(asked_words) and all(w in words for w in asked_words)


def _value(question: str, note: Note, item: str | None) -> KindAnswer | None:
    """A lab or vital value the note writes, when the question asks for one (the finding asked is a lab or vital
    by one of its whole names: "pressure ulcer" is not a blood pressure)."""
    from fhirqa.notes.extract import MEASUREMENT, answer_from_notes, parse_target
    from fhirqa.notes.index import Hit
    from fhirqa.notes.reader import _is_value_item

    q = question
    for k in config()["kinds"]:
        for p in k["asks"]:
            q = re.sub(p, " ", q, flags=re.I)
    if item and not _is_value_item(item.lower()):
        return None
    target = parse_target(q)
    if target is None or target.kind != "value" or not (
            any(_is_value_item(n.lower()) for n in target.names) or MEASUREMENT.search(target.name)):
        return None
    hit = Hit(text=note.text, ref=note.ref, note_id=note.note_id, chunk_id=note.note_id, date=note.date,
              time=note.time, note_type=note.note_type, section="", score=1.0, patient_id=note.patient_id)
    finding = answer_from_notes(q, [hit])
    if finding is None:
        return KindAnswer(False, "value", [], f"The {note.note_type} of {note.date} does not state it.", [note])
    return KindAnswer(True, "value", [finding.value], f"{finding.value}{' ' + finding.unit if finding.unit else ''}, "
                      f"per the {note.note_type} of {note.date}: \"{finding.sentence}\"", [note],
                      quote=finding.sentence, unit=finding.unit)


def _mention(question: str, notes: list[Note], item: str | None, every: bool) -> KindAnswer:
    """Whether the note (any of the notes, with ``every``) affirms ``item``; a negated mention is No, quoted."""
    from fhirqa.notes.chunking import sentences
    from fhirqa.notes.extract import negated
    from fhirqa.notes.reader import mentions, names_for

    if not item:
        return KindAnswer(False, "mention", [], "Could not tell what to look for in the note.", notes)
    names = names_for(item.lower())
    denied = ""
    for note in reversed(notes):  # newest first: the quote is the latest that says it
        for sentence in sentences(note.text):
            for name in names:
                m = mentions(name, sentence)
                if m is None:
                    continue
                if not negated(sentence, m.start(), m.end()):
                    scope = f"{len(notes)} notes read" if every else f"the {note.note_type} of {note.date}"
                    return KindAnswer(True, "mention", [True], f"Yes ({scope}): \"{sentence}\"", [note],
                                      quote=sentence)
                denied = denied or sentence
    last = notes[-1]
    scope = f"{len(notes)} notes read" if every else f"the {last.note_type} of {last.date}"
    said = f": \"{denied}\"" if denied else ": not mentioned"
    return KindAnswer(True, "mention", [False], f"No ({scope}){said}.", notes if every else [last], quote=denied)
