"""Sentence-aware chunks of a note: about 256 tokens, about 32 tokens of overlap, sections kept.

A note is read as sections (a Markdown ``# Header`` line, or a known label at the start of a line:
``CC:``, ``HPI:``, ``S:``, ``A/P:``, ``Home meds:``, ``Labs on admission (17:43):``…), each section as
sentences. Sentences are packed into chunks up to the token budget; a chunk that starts inside a section
repeats the section's header, and the next chunk starts with the last ~32 tokens of sentences of the one
before. Every chunk begins with ``[YYYY-MM-DD note type]`` so its time survives retrieval.

Token counts are an estimate of the MiniLM word-piece count (words, numbers and punctuation × 1.2; the
measured ratio on the Synthea and sample notes is 1.19), so chunks stay within the model's 256-piece window
without loading a tokenizer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from fhirqa.notes.sources import Note

MAX_TOKENS = 256
OVERLAP_TOKENS = 32
_TOKEN = re.compile(r"[A-Za-z]+|\d+|[^\w\s]")
_PIECES_PER_TOKEN = 1.2

# Labels that open a section when they start a line ("Label:" or "# Label"), by canonical section name.
SECTION_ALIASES: dict[str, tuple[str, ...]] = {
    "chief complaint": ("chief complaint", "cc", "cc/hpi", "reason for visit", "reason for admission", "indication"),
    "history of present illness": ("history of present illness", "hpi", "history"),
    "subjective": ("s", "subjective", "interval history"),
    "objective": ("o", "objective", "exam", "physical exam", "physical examination"),
    "assessment and plan": ("a/p", "a&p", "assessment/plan", "assessment and plan", "assessment & plan",
                            "assessment", "impression and plan", "mdm/plan", "mdm"),
    "plan": ("plan", "p"),
    "past medical history": ("pmh", "past medical history", "medical history", "problem list"),
    "past surgical history": ("psh", "past surgical history", "surgical history"),
    "medications": ("medications", "meds", "home meds", "home medications", "current meds",
                    "current medications", "inpatient meds", "active medications"),
    "discharge medications": ("discharge medications", "discharge meds"),
    "allergies": ("allergies", "allergy"),
    "social history": ("social history", "social", "sh"),
    "family history": ("family history", "fh", "fhx"),
    "review of systems": ("review of systems", "ros"),
    "vitals": ("vitals", "vital signs", "vitals on arrival", "last vitals", "triage vitals"),
    "labs": ("labs", "labs today", "labs on admission", "labs this am", "last labs", "laboratory",
             "laboratory data", "results"),
    "hospital course": ("hospital course", "brief hospital course"),
    "diagnoses": ("principal dx", "secondary dx", "diagnoses", "diagnosis", "discharge diagnosis",
                  "admission diagnosis", "principal diagnosis", "primary dx", "primary diagnosis", "secondary diagnosis",
                  "secondary diagnoses", "admitting dx", "admitting diagnosis", "discharge diagnoses", "discharge dx"),
    "disposition": ("disposition", "dispo"),
    "follow-up": ("follow-up", "follow up", "followup", "instructions", "discharge instructions"),
    "findings": ("findings",),
    "impression": ("impression", "conclusion", "conclusions"),
    "procedures": ("procedures", "procedure"),
}
_LABELS = {alias: name for name, aliases in SECTION_ALIASES.items() for alias in aliases}
_MD_HEADER = re.compile(r"^\s*#{1,6}\s+(?P<label>.+?)\s*#*\s*$")
_LABEL_LINE = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z /&+\-]{0,40}?)\s*(?:\([^)]{0,40}\))?\s*:\s*(?P<rest>.*)$")
_ABBREVIATIONS = ("dr", "mr", "mrs", "ms", "st", "vs", "e.g", "i.e", "approx", "no", "pt", "fig", "inc")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def count_tokens(text: str) -> int:
    """Estimated MiniLM word pieces in ``text``."""
    return math.ceil(len(_TOKEN.findall(text)) * _PIECES_PER_TOKEN)


def section_name(label: str) -> str:
    """The canonical section name of a header label (``A/P`` → ``assessment and plan``); lower case if unknown."""
    key = re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", label)).strip().strip(":").strip().lower()
    return _LABELS.get(key, key)


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of one paragraph; abbreviations (Dr., vs.) and decimals (1.63) do not end a sentence."""
    parts = _SENTENCE_END.split(paragraph.strip())
    out: list[str] = []
    for part in parts:
        if out and (out[-1].lower().rsplit(None, 1)[-1].rstrip(".") in _ABBREVIATIONS
                    or re.fullmatch(r"\(?\d{1,2}[.)]", out[-1])):  # "Dr. Kaplan", "1. Sepsis"
            out[-1] = f"{out[-1]} {part}"
        elif part.strip():
            out.append(part.strip())
    return out


def sentences(text: str) -> list[str]:
    """Sentences of a text, line by line (a list item or a label line is its own sentence)."""
    return [s for line in _logical_lines(text) for s in split_sentences(line)]


def _logical_lines(text: str) -> list[str]:
    """Lines, with a continuation line (starting in lower case, after a line without end mark) joined."""
    lines: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            lines.append("")
            continue
        previous = lines[-1] if lines else ""
        if (previous and line[0].islower() and not previous.endswith((".", ":", ";", "!", "?"))
                and not previous.startswith("#")):
            lines[-1] = f"{previous} {line}"
        else:
            lines.append(line)
    return [line for line in lines if line]


@dataclass
class _Unit:
    """One sentence with its section and whether it starts a line in the source."""

    section: str  # canonical name
    header: str  # the header as written ("# Medications", "A/P:"); "" for the note's preamble
    inline: bool  # header and first sentence share a line ("S: Feels well.")
    text: str
    newline: bool
    tokens: int = 0


@dataclass
class Chunk:
    """A piece of one note, ready to embed and index."""

    note_id: str
    index: int
    text: str  # prefix + body: what is embedded, searched and shown
    sections: list[str] = field(default_factory=list)

    @property
    def chunk_id(self) -> str:
        """Unique within the patient's notes."""
        return f"{self.note_id}#c{self.index}"

    @property
    def body(self) -> str:
        """The text without the ``[date type]`` line."""
        return self.text.split("\n", 1)[1] if self.text.startswith("[") and "\n" in self.text else self.text


def prefix(note: Note) -> str:
    """``[2025-07-18 History and physical note]``: the line every chunk of the note starts with."""
    parts = [p for p in (note.date, note.note_type or note.source) if p]
    return "[" + " ".join(parts) + "]"


def _units(text: str, budget: int) -> list[_Unit]:
    units: list[_Unit] = []
    section, header = "preamble", ""
    for line in _logical_lines(text):
        inline = False
        md = _MD_HEADER.match(line)
        label = _LABEL_LINE.match(line) if not md else None
        if md:
            section, header, line = section_name(md["label"]), line, ""
        elif label and section_name(label["label"]) in SECTION_ALIASES:
            section = section_name(label["label"])
            header, line, inline = line[: len(line) - len(label["rest"])].rstrip(), label["rest"], True
        if not line:
            if md or inline:  # a header alone on its line still marks where the section starts
                units.append(_Unit(section, header, False, "", True, count_tokens(header)))
            continue
        for i, sentence in enumerate(split_sentences(line)):
            for piece in _pieces(sentence, budget):
                units.append(_Unit(section, header, inline and i == 0, piece, i == 0, count_tokens(piece)))
    return units


def _pieces(sentence: str, budget: int) -> list[str]:
    """A sentence longer than the budget, cut into word windows that overlap by a few words."""
    if count_tokens(sentence) <= budget:
        return [sentence]
    words = sentence.split()
    out, start = [], 0
    while start < len(words):
        end = start
        while end < len(words) and count_tokens(" ".join(words[start:end + 1])) <= budget:
            end += 1
        end = max(end, start + 1)
        out.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        start = max(start + 1, end - max(1, (end - start) // 8))
    return out


def _render(units: list[_Unit]) -> str:
    out: list[str] = []
    key: tuple[str, str] | None = None
    for u in units:
        here = (u.section, u.header)
        if not u.text:  # a bare header line
            out.append(("\n" if out else "") + u.header)
        elif here != key and u.header:  # entering a section, or starting a chunk inside one: show its header
            out.append(("\n" if out else "") + u.header + (" " if u.inline else "\n") + u.text)
        elif u.newline:
            out.append(("\n" if out else "") + u.text)
        else:
            out.append((" " if out else "") + u.text)
        key = here
    return "".join(out).strip()


def chunk_note(note: Note, max_tokens: int = MAX_TOKENS, overlap: int = OVERLAP_TOKENS) -> list[Chunk]:
    """The note's chunks, in order; every chunk has at least one sentence the previous chunk did not."""
    head = prefix(note)
    room = max(32, max_tokens - count_tokens(head) - 2)  # the model adds [CLS] and [SEP]
    units = _units(note.text, budget=room - 16)
    chunks: list[Chunk] = []
    current: list[_Unit] = []
    fresh = False

    def size(items: list[_Unit]) -> int:
        return count_tokens(_render(items)) if items else 0

    def flush() -> None:
        while current and not current[-1].text:  # a header whose sentences open the next chunk
            current.pop()
        body = _render(current)
        if body:
            sections = list(dict.fromkeys(u.section for u in current))
            chunks.append(Chunk(note.note_id, len(chunks), f"{head}\n{body}", sections))

    for unit in units:
        if current and fresh and size([*current, unit]) > room:
            flush()
            tail: list[_Unit] = []
            for previous in reversed(current):
                if not previous.text or sum(u.tokens for u in tail) + previous.tokens > overlap:
                    break
                tail.insert(0, previous)
            current = tail if size([*tail, unit]) <= room else []
            fresh = False
        current.append(unit)
        fresh = fresh or bool(unit.text)
    if current and fresh:
        flush()
    return chunks
