"""The notes as documents: which notes a window, a stay, a service or an author holds, who wrote them, and a
bounded digest of each ("summarize her notes", "notes since Monday", "who wrote the last note?", "notes by
cardiology", "any nursing notes today?").

Pure functions over :class:`~fhirqa.notes.sources.Note` lists; the words, the default scope and the limits are
data (``lexicon/note_lists.json``). A note is one document (a resource with several text attachments is one
note, cited by its ``ref``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from fhirqa.notes.sources import Note

_EPOCH = datetime.min.replace(tzinfo=UTC)


@lru_cache(maxsize=1)
def config() -> dict[str, Any]:
    """``lexicon/note_lists.json``, read once."""
    from fhirqa.project import lexicon_file

    return lexicon_file("note_lists.json")


def limits() -> dict[str, int]:
    """The bounds of an answer (``limits`` of the lexicon: notes listed, summarized, digest characters)."""
    return {k: int(v) for k, v in config()["limits"].items()}


def documents(notes: list[Note]) -> list[Note]:
    """One note per document (the first attachment of a resource with several), oldest first."""
    seen: set[str] = set()
    out: list[Note] = []
    for note in sorted(notes, key=lambda n: (n.time or _EPOCH, n.ref)):
        if note.ref not in seen:
            seen.add(note.ref)
            out.append(note)
    return out


# -- authors ---------------------------------------------------------------------------------------------------
def author_of(note: Note) -> tuple[str | None, str]:
    """The note's author and where it was read: ``("Dr. X", "metadata")`` (DocumentReference.author, the
    Practitioner's name, MIMIC's caregiver), ``("Dr. X", "text")`` (the note's own header or signature line,
    ``author_patterns``) or ``(None, "")``."""
    if note.author and note.author.strip():
        return _readable(note.author.strip()), "metadata"
    head = note.text[:3000]
    for pattern in config().get("author_patterns", []):
        m = re.search(pattern, head)
        if m and m.group("name").strip():
            return " ".join(m.group("name").split()), "text"
    return None, ""


def _readable(author: str) -> str:
    """A reference kept when no name was found ("caregiver/16010") read as words ("caregiver 16010")."""
    if re.fullmatch(r"[A-Za-z]+/[\w.\-]+", author):
        kind, key = author.split("/", 1)
        return f"{kind} {key}"
    return author


def by_author(notes: list[Note], name: str) -> list[Note]:
    """The notes whose author has every word of ``name`` (a title such as Dr. and case left out)."""
    words = [w for w in re.findall(r"[a-z][a-z'\-]+", name.lower()) if w not in ("dr", "doctor")]
    if not words:
        return []
    out = []
    for note in notes:
        author, _ = author_of(note)
        mine = set(re.findall(r"[a-z][a-z'\-]+", re.sub(r"\d+", " ", (author or "").lower())))
        if all(w in mine for w in words):
            out.append(note)
    return out


# -- services --------------------------------------------------------------------------------------------------
def service_asked(question: str) -> dict[str, Any] | None:
    """The service or discipline a question names ("notes by cardiology", "the PT note"), else None."""
    low = " ".join(question.lower().split())
    for service in config().get("services", []):
        if any(re.search(p, low) for p in service.get("asks", [])) or any(
                re.search(p, question) for p in service.get("asks_cased", [])):
            return service
    return None


def service_named(name: str) -> dict[str, Any] | None:
    """The service of the lexicon called ``name`` (or one whose question words match it)."""
    low = " ".join(name.lower().split())
    for service in config().get("services", []):
        if service["name"] == low or any(re.search(p, low) for p in service.get("asks", [])):
            return service
    return None


def of_service(notes: list[Note], service: dict[str, Any]) -> list[Note]:
    """The notes that say they are of ``service``: their type, or their author's name or role, matches it."""
    out = []
    for note in notes:
        said = " ".join(f"{note.note_type or ''} | {note.author or ''}".lower().split())
        if any(re.search(p, said) for p in service["types"]):
            out.append(note)
    return out


# -- scope -----------------------------------------------------------------------------------------------------
@dataclass
class Scope:
    """The notes a question is about, newest first, and how they were chosen (said in the answer)."""

    notes: list[Note]
    how: str  # "window", "stay", "last_n", "latest", "first", "all"
    label: str  # "in the stay Encounter/…", "the last 5 notes", "between 2024-01-01 and 2024-01-07"
    stay: str | None = None
    default: bool = False  # no scope was asked: the lexicon's default chose these notes


def in_window(notes: list[Note], start: datetime | None, end: datetime | None) -> list[Note]:
    """The dated notes within [start, end] (either end open). A bound without a time zone is a calendar bound, read
    on each note's own clock ("on 11/20" is the day the note was written on, wherever its offset puts it in UTC);
    an aware bound is an instant ("the last 48 hours")."""
    def after(note: Note, bound: datetime) -> bool:
        return (note.wall_clock >= bound) if bound.tzinfo is None else note.time >= bound  # type: ignore[operator]

    def before(note: Note, bound: datetime) -> bool:
        return (note.wall_clock <= bound) if bound.tzinfo is None else note.time <= bound  # type: ignore[operator]

    return [n for n in notes if n.time is not None and (start is None or after(n, start))
            and (end is None or before(n, end))]


def latest_stay(notes: list[Note]) -> tuple[str | None, list[Note]]:
    """The encounter of the latest dated note and its notes (an admission's notes), oldest first."""
    dated = [n for n in notes if n.time is not None]
    if not dated:
        return None, []
    stay = max(dated, key=lambda n: (n.time, n.ref)).encounter_ref
    if not stay:
        return None, []
    return stay, [n for n in notes if n.encounter_ref == stay]


def choose(notes: list[Note], *, start: datetime | None = None, end: datetime | None = None,
           stay: str | None = None, which: str | None = None, last: int | None = None) -> Scope:
    """The notes asked for: a window, a stay (``"latest"`` or an encounter reference), the latest / first one,
    all of them (``which="all"``), the last ``last``; with none of these, the default scope (``default_scope`` of the lexicon: the latest stay
    when it holds several notes, else the last N notes). ``notes`` are the patient's notes before now."""
    docs = documents(notes)
    windowed = start is not None or end is not None
    if windowed:
        docs = in_window(docs, start, end)
    label = _span(start, end) if windowed else ""
    if stay:
        ref, held = latest_stay(docs) if stay == "latest" else (stay, [n for n in docs if n.encounter_ref == stay])
        held = held if ref else []
        return Scope(held[::-1], "stay", f"in the stay {ref}" if ref else "in the latest stay (none on file)", ref)
    if which == "all":
        return Scope(docs[::-1], "all", label or "on file")
    if which in ("latest", "first"):
        pick = docs[-1:] if which == "latest" else docs[:1]
        return Scope(pick, which, f"the {'last' if which == 'latest' else 'first'}" + (f" {label}" if label else ""))
    if last:
        return Scope(docs[-last:][::-1], "last_n", f"the last {last}" + (f" {label}" if label else ""))
    if windowed:
        return Scope(docs[::-1], "window", label)
    return default_scope(docs)


def default_scope(docs: list[Note]) -> Scope:
    """No window asked: the latest stay's notes when it holds ``stay_min_notes`` or more, else the last N."""
    spec = config()["default_scope"]
    ref, held = latest_stay(docs)
    if ref and len(held) >= int(spec["stay_min_notes"]):
        return Scope(held[::-1], "stay", f"in the latest stay ({ref})", ref, default=True)
    n = int(spec["last_n"])
    return Scope(docs[-n:][::-1], "last_n", f"the last {n}", default=True)


def _span(start: datetime | None, end: datetime | None) -> str:
    if start is not None and end is not None:
        a, b = start.date().isoformat(), end.date().isoformat()
        return f"on {a}" if a == b else f"between {a} and {b}"
    if start is not None:
        return f"since {start.date().isoformat()}"
    if end is not None:
        return f"up to {end.date().isoformat()}"
    return ""


# -- what a note is and says -----------------------------------------------------------------------------------
def entry(note: Note, summary: bool = False) -> dict[str, Any]:
    """A note as listed: reference, date, time, kind, author (and where it was read), encounter; with
    ``summary`` its extractive digest (``reader.digest``, bounded by ``digest_chars``)."""
    author, source = author_of(note)
    local = note.wall_clock
    out: dict[str, Any] = {"ref": note.ref, "date": local.date().isoformat() if local else "",
                           "time": note.time.isoformat() if note.time else None,
                           "note_type": note.note_type, "author": author, "encounter": note.encounter_ref}
    if author and source == "text":
        out["author_from"] = "the note's text"
    if summary:
        from fhirqa.notes.reader import digest

        out["summary"] = digest(note, limits()["digest_chars"])
    return out


def line(item: dict[str, Any]) -> str:
    """"2024-11-08 History and physical note, Dr. X (DocumentReference/…)": one listed note."""
    who = f", {item['author']}" if item.get("author") else ""
    return f"{item.get('date') or 'undated'} {item.get('note_type') or 'note'}{who} ({item['ref']})"
