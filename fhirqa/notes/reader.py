"""Reading one visit's note: anchor the question to note(s), find the section it asks about, return its content.

Three steps, all driven by data (``lexicon/note_sections.json``):

1. **Anchoring** (:func:`anchored`): the notes of a named day (the notes whose written day it is: the date the
   note's own header states, ``Date: 11/8/2024 21:21``, else its UTC day; else the closest within 14 hours), of an encounter kind in a window ("the ED visit
   in 2016"), or the latest / first note.
2. **Field**: the first field whose question cues match (chief complaint, assessment, allergies, medications,
   insurance, marital status, smoking, quit-smoking age, age, plan item, mention).
3. **Reading** (:func:`read`): the section found by its heading (canonical names from ``chunking``: ``CC``,
   ``Chief Complaint``, ``Reason for visit`` are one section) and its content: list items, a value read by the
   field's patterns, the strength of a listed drug as written, or yes/no for an item mentioned (negation-aware).
   A yes/no question over anchored notes that do not say it answers No; no notes in scope answers nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.notes.chunking import section_name, sentences
from fhirqa.notes.sources import Note

_MD_HEADER = re.compile(r"^\s*#{1,6}\s+(?P<label>.+?)\s*#*\s*$")
_LABEL_LINE = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z /&+\-]{0,40}?)\s*(?:\([^)]{0,40}\))?\s*:\s*(?P<rest>.*)$")
_STRENGTH = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|meq|units?|iu|%)(?:\s*/\s*(?:\d+(?:\.\d+)?\s*)?"
                       r"(?:ml|l|hr|h|actuat|dose|kg|g|mg))?)(?![a-z])", re.I)
_TAG = re.compile(r"\s*\((?:disorder|finding|situation|procedure|morphologic abnormality|event|observable entity)\)",
                  re.I)
DAY_SLACK = timedelta(hours=14)
_MONTHS = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
# month names as written ("feb", "february", "sept"), not words that start like one ("febrile", "marked")
_MONTH_WORDS = _MONTHS | {"january", "february", "march", "april", "june", "july", "august", "sept", "september",
                          "october", "november", "december"}


@lru_cache(maxsize=1)
def config() -> dict[str, Any]:
    """``lexicon/note_sections.json``, read once."""
    from fhirqa.project import lexicon_file

    return lexicon_file("note_sections.json")


@dataclass
class Section:
    """One section of a note: canonical name, heading as written, body lines."""

    name: str
    heading: str
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


def split_sections(text: str) -> list[Section]:
    """The note's sections in order; text before the first heading is the ``preamble``."""
    known = {a for aliases in _aliases().values() for a in aliases}
    out = [Section("preamble", "")]
    for raw in text.split("\n"):
        md = _MD_HEADER.match(raw)
        label = _LABEL_LINE.match(raw) if not md else None
        if md:
            out.append(Section(section_name(md["label"]), raw.strip()))
        elif label and re.sub(r"\s+", " ", label["label"]).strip().lower() in known:
            out.append(Section(section_name(label["label"]), raw.strip()))
            if label["rest"].strip():
                out[-1].lines.append(label["rest"].strip())
        else:
            out[-1].lines.append(raw)
    return [s for s in out if s.name != "preamble" or s.text]


@lru_cache(maxsize=1)
def _aliases() -> dict[str, tuple[str, ...]]:
    from fhirqa.notes.chunking import SECTION_ALIASES

    return SECTION_ALIASES


# -- anchoring -------------------------------------------------------------------------------------------------
_WRITTEN = re.compile(r"^\s*(?:date(?:\s+of\s+service)?|dos|service date)\s*:\s*(?:(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})"
                      r"|(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2}))", re.I | re.M)


def written_day(note: Note) -> date | None:
    """The day a note says it was written (a ``Date:`` line in its first lines, local time); None without one."""
    m = _WRITTEN.search("\n".join(note.text.splitlines()[:6]))
    if m is None:
        return None
    try:
        if m["y"]:
            return date(int(m["y"]), int(m["m"]), int(m["d"]))
        return date(int(m["iy"]), int(m["im"]), int(m["id"]))
    except ValueError:
        return None


def note_day(note: Note) -> date | None:
    """The note's day: the day it states it was written, else its UTC day."""
    return written_day(note) or (note.time.date() if note.time else None)


def anchored(notes: list[Note], start: datetime | None = None, end: datetime | None = None, which: str | None = None,
             encounter_class: str | None = None) -> list[Note]:
    """The notes a question is anchored to (see the module docstring); [] when none is in scope."""
    timed = [n for n in notes if n.time is not None]
    kinds = config().get("note_kinds", {}).get(encounter_class or "", [])
    if kinds:
        typed = [n for n in timed if any(k in (n.note_type or "").lower() for k in kinds)]
        timed = typed
    if start is not None and end is not None and end - start <= timedelta(days=2):
        exact = [n for n in timed if start.date() <= note_day(n) <= end.date()]  # type: ignore[operator]
        if exact:
            return exact
        noon = start + (end - start) / 2
        near = [n for n in timed if start - DAY_SLACK <= n.time <= end + DAY_SLACK]  # type: ignore[operator]
        return [min(near, key=lambda n: abs(n.time - noon))] if near else []  # type: ignore[operator]
    if start is not None:
        timed = [n for n in timed if n.time >= start]  # type: ignore[operator]
    if end is not None:
        timed = [n for n in timed if n.time <= end]  # type: ignore[operator]
    timed.sort(key=lambda n: n.time)  # type: ignore[arg-type,return-value]
    if which == "latest":
        return timed[-1:]
    if which == "first":
        return timed[:1]
    return timed if (kinds or start is not None) else []


def named_kind(question: str) -> dict[str, Any] | None:
    """The note kind a question names ("per the H&P", "in the DC summary"): its note types and place in a stay."""
    q = question.lower()
    return next((k for k in config().get("named_note_kinds", {}).get("kinds", []) if re.search(k["asks"], q)), None)


def of_kind(notes: list[Note], kind: dict[str, Any] | None) -> list[Note]:
    """The notes whose type is the named kind; all of them when no kind is named or none has that type."""
    if not kind:
        return notes
    typed = [n for n in notes if any(t in (n.note_type or "").lower() for t in kind["types"])]
    return typed or notes


def which_note(question: str) -> str | None:
    """"latest" / "first" when the question names the last or first note or visit."""
    q = question.lower()
    if re.search(r"\b(?:last|latest|most recent|newest|current|recent)\b", q):
        return "latest"
    if re.search(r"\b(?:first|earliest|initial|oldest)\b", q):
        return "first"
    return None


# -- reading ---------------------------------------------------------------------------------------------------
@dataclass
class Reading:
    """What the anchored note says: the field, the answer, the quoted text and the note."""

    field: str
    kind: str  # "list" | "value" | "yes_no"
    value: list[Any]
    quote: str
    note: Note | None
    structured_too: bool = False  # a No may still be a record of that day (plan items)


def ask_field(question: str, entity: str | None = None) -> dict[str, Any] | None:
    """The first field whose cues the question matches (and none of its ``not_asks``).

    A lab or vital named without a word for mentioning ("K at the 10/08/2014 visit?") asks for a value, not
    whether the note mentions it.
    """
    # The offline backend replays its plan once per tool call: the same question is asked here many times.
    found = _ask_field(question, entity)
    return dict(found) if found is not None else None


@lru_cache(maxsize=4096)
def _ask_field(question: str, entity: str | None) -> dict[str, Any] | None:
    q = question.lower()
    deferred: dict[str, Any] | None = None  # the note's section as written, when no field below reads it
    for spec in config()["fields"]:
        if spec.get("reads_note"):
            asked = note_asked(question)
            if asked is None:
                continue
            if asked.cue or not asked.sections or not all(s.get("field_reads") for s in asked.sections):
                return spec
            deferred = spec  # "chief complaint at the last visit?": the field that reads it into a value first
            continue
        asks = [*spec["asks"], *spec.get("item_asks", [])]
        if not any(re.search(p, q) for p in asks) or any(re.search(p, q) for p in spec.get("not_asks", [])):
            continue
        need = spec.get("value_items_need")
        if need and _is_value_item(item_of(question, spec, entity)) and not any(re.search(p, q) for p in need):
            continue
        if deferred is not None and (spec["field"] in _ITEM_FIELDS or spec.get("item_required")):
            return deferred  # "follow-up in the last DC summary": nothing but the section is named, no item
        return spec
    return deferred


# Fields that look for an item in a note: a question naming only a section ("social history in the last note")
# has no item for them; it asks for the section.
_ITEM_FIELDS = frozenset({"mention", "plan", "finding", "ruled out"})


def _is_value_item(item: str) -> bool:
    """The item is a lab or vital by one of its whole names ("K", "SpO2"; not "chest pressure")."""
    from fhirqa.notes.retrieve import lexicon

    lex = lexicon()
    if not item:
        return False
    return any(item == n.lower() for term, names in lex.pairs if term in lex.units for n in (term, *names))


def item_of(question: str, spec: dict[str, Any], entity: str | None = None) -> str:
    """The thing asked about: the parser's entity (or the question) without cue and anchor words."""
    text = (entity if entity is not None else question).lower()
    anchor_words: set[str] = set()
    for pattern in config().get("note_kind_phrases", []):  # "in the H&P", "per the progress note": the anchor
        anchor_words |= {w for m in re.finditer(pattern, question.lower()) for w in m[0].split()}
        text = re.sub(pattern, " ", text)
    for pattern in spec["asks"]:
        text = re.sub(pattern, " ", text)
    # the parser's entity may keep a note-kind word the question used as the anchor ("cefuroxime discharge")
    cues = set(config()["cue_words"].split()) | (anchor_words if entity is not None else set())
    words = [w for w in re.findall(r"[a-z0-9'][a-z0-9/\-]*", text)
             if w not in cues and not re.search(r"\d", w) and w not in _MONTH_WORDS]
    return " ".join(words).strip()


def names_for(item: str) -> list[str]:
    """``item`` and its other names: the data's symptom aliases, then the lexicon's aliases and class members."""
    names = [item]
    aliases = config().get("term_aliases", {})
    names += aliases.get(item, [])
    words = item.split()
    for i, word in enumerate(words):  # "repeat labs" is also "repeat BMP": a word of the phrase by its other names
        if len(words) > 1 and word in aliases:
            names += [" ".join([*words[:i], alias, *words[i + 1:]]) for alias in aliases[word]]
    try:
        from fhirqa.agent.lexicon import Lexicon

        lex = Lexicon.load()
        for exp in lex.expand(item):
            if exp.matched and len(exp.matched) < len(item) - 3 and exp.matched != item:
                continue  # a known word inside a longer phrase is not the phrase
            names += [exp.term, *sorted(lex.aliases_of(exp.term))]
            names += lex.class_members(exp.term) or lex.class_members(item)
    except Exception:  # noqa: BLE001, S110 - the lexicon only widens the match
        pass
    optional = set(config().get("optional_words", []))
    out: list[str] = []
    for name in names:
        words = [w for w in name.lower().split() if w not in optional] or name.lower().split()
        short = " ".join(words)
        for n in (name.lower(), short):
            if n and n not in out and len(n) > 1:
                out.append(n)
    return out


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def mentions(name: str, sentence: str) -> re.Match[str] | None:
    """``name`` in ``sentence``: the phrase, or its words in order in other forms (screen = screening)."""
    exact = re.search(r"(?<![a-z0-9])" + re.escape(name) + r"(?![a-z0-9])", sentence, re.I)
    if exact or len(name) <= 3:
        return exact
    parts = [re.escape(_stem(w)) + r"[a-z]*" for w in name.split()]
    return re.search(r"(?<![a-z0-9])" + r"[\s,\-]+(?:[a-z]+[\s,\-]+){0,2}?".join(parts) + r"(?![a-z0-9])", sentence,
                     re.I)


def may_mention(names: list[str], text: str) -> bool:
    """False only when no name can match in ``text`` by :func:`mentions` (a cheap test before sentence splitting).

    Every match of :func:`mentions` contains each word's stem as written, so a text lacking a stem of every
    name is skipped without changing any reading.
    """
    low = text.lower()
    for name in names:
        words = name.lower().split()
        if len(name) <= 3 or len(words) == 1 and len(words[0]) <= 3:
            if name.lower() in low:
                return True
        elif all(_stem(w) in low for w in words):
            return True
    return False


def whole_record_asked(question: str) -> bool:
    """The question asks about the notes as a whole ("any note mention X?", "X ever mentioned in her notes?")."""
    q = question.lower()
    return any(re.search(p, q) for p in config().get("whole_record_asks", []))


def read_every(question: str, notes: list[Note], entity: str | None = None) -> Reading | None:
    """Whether any of ``notes`` mentions the item (newest mention first): a mention question over the whole record.

    Every note is read, not a search's top passages, so a mention in an old note, a history list or a chief
    complaint counts, and a No means no note says it. Notes that cannot mention any of the item's names are
    skipped before their sentences are read. None when the question is not a mention question.
    """
    spec = ask_field(question)
    if spec is None or spec["field"] != "mention" or not notes:
        return None
    item = item_of(question, spec, entity)
    if not item:
        return None
    names = names_for(item)
    candidates = [n for n in notes if may_mention(names, n.text)]
    reading = read(question, candidates, entity)
    if reading is not None and reading.value == [True]:
        return reading
    return _negated_mention(spec, names, candidates) or \
        Reading(spec["field"], "yes_no", [False], "", None, bool(spec.get("structured_too")))


def _negated_mention(spec: dict[str, Any], names: list[str], notes: list[Note]) -> Reading | None:
    """The newest sentence that names the item only to deny it ("Denies chest pain"): a No worth quoting."""
    from fhirqa.notes.extract import negated

    for note in sorted(notes, key=lambda n: n.time or datetime.min, reverse=True):
        for sentence in sentences(note.text):
            for name in names:
                m = mentions(name, sentence)
                if m and negated(sentence, m.start(), m.end()):
                    return Reading(spec["field"], "yes_no", [False], sentence, note)
    return None


def _sections(note: Note, wanted: list[str]) -> list[Section]:
    found = [s for s in split_sections(note.text) if s.name in wanted]
    return sorted(found, key=lambda s: wanted.index(s.name))


def _items(section: Section) -> list[str]:
    """A section's items: bullets, ``;``-separated entries, else its sentences."""
    lines = [ln.strip() for ln in section.lines if ln.strip()]
    bullets = [re.sub(r"^(?:[-*•]|\d+[.)])\s*", "", ln) for ln in lines if re.match(r"^(?:[-*•]|\d+[.)])\s", ln)]
    if bullets:
        return bullets
    text = " ".join(lines)
    if ";" in text:
        return [p.strip().rstrip(".") for p in text.split(";") if p.strip()]
    return sentences(text)


def _none_marked(spec: dict[str, Any], text: str) -> re.Match[str] | None:
    for pattern in spec.get("none", []):
        m = re.search(pattern, text, re.I | re.M)
        if m:
            return m
    return None


def _clean(value: str) -> str:
    return _TAG.sub("", value).strip().strip(".").strip()


def read(question: str, notes: list[Note], entity: str | None = None) -> Reading | None:
    """What the anchored ``notes`` say to ``question`` (newest note first), or None when the field is not there."""
    spec = ask_field(question)
    if spec is None or not notes:
        return None
    if spec.get("reads_note"):
        return _read_note(question, notes)
    item = item_of(question, spec, entity)
    if spec.get("item_required") and not item:
        return None
    ordered = sorted(notes, key=lambda n: n.time or datetime.min, reverse=True)
    yes_no_default: Reading | None = None
    for note in ordered:
        reading = _read_one(question, spec, item, note)
        if reading is None:
            continue
        if reading.kind == "yes_no" and reading.value == [False]:
            yes_no_default = yes_no_default or reading
            continue
        return reading
    return yes_no_default


def _read_one(question: str, spec: dict[str, Any], item: str, note: Note) -> Reading | None:
    name = spec["field"]
    q = question.lower()
    wanted = spec.get("item_sections", spec["sections"]) if item else spec["sections"]
    sections = _sections(note, wanted) if wanted else []
    if wanted and not sections and name not in ("age",):
        if not spec.get("whole_note_fallback"):
            return None
        wanted = []  # a note without history sections: its whole text
    text = "\n".join(s.text for s in sections) if sections else note.text
    if name == "medications":
        return _read_medication(spec, item, q, sections, note)
    if name in ("plan", "mention", "ruled out", "finding") or (name in ("chief complaint", "follow-up") and item):
        return _read_mention(spec, item, note, sections, q)
    said = [w for w in spec.get("yes_no_words", []) if re.search(rf"\b{re.escape(w)}\b", q)]
    if said and sections:  # "discharged home?": whether the section says the word asked
        hit = next((w for w in said if re.search(rf"\b{re.escape(w)}\b", text, re.I)), None)
        return Reading(name, "yes_no", [hit is not None], text.split("\n")[0].strip(), note)
    if name == "allergies":
        none = _none_marked(spec, text)
        absence = any(re.search(p, q) for p in spec.get("absence_asks", []))
        entries = [] if none else _items(sections[0])
        quote = none[0] if none else "; ".join(entries)
        if not entries and not none:
            return None
        return Reading(name, "yes_no", [bool(none) if absence else bool(entries)], quote, note)
    if name == "chief complaint" or (name == "assessment" and not spec.get("values")):
        none = _none_marked(spec, text)
        if none:
            return Reading(name, "list", [spec.get("none_answer", "none")], none[0].strip(), note)
        entries = [_clean(e) for e in _items(sections[0]) if e.strip()]
        return Reading(name, "list", entries, "; ".join(entries), note) if entries else None
    principal = name == "assessment" and any(re.search(p, q) for p in spec.get("principal_asks", []))
    secondary = name == "assessment" and any(re.search(p, q) for p in spec.get("secondary_asks", []))
    if (principal or secondary) and sections:
        reading = _principal(spec, sections, note, secondary=secondary)
        if reading is not None:
            return reading
    for pattern in spec.get("values", []):
        m = re.search(pattern, text, re.I | re.M)
        if not m:
            continue
        raw = m["v"].strip()
        if name == "assessment":
            values: list[Any] = [_clean(v) for v in re.split(r",\s+(?![^()]*\))", raw) if _clean(v)]
            return Reading(name, "list", values[:1] if principal else values, m[0].strip(), note)
        if spec.get("number"):
            return Reading(name, "value", [int(raw)], m[0].strip(), note)
        word = spec.get("yes_no_word")
        if word and re.search(rf"\b{re.escape(word)}\b", q):
            return Reading(name, "yes_no", [raw.lower() == word], m[0].strip(), note)
        return Reading(name, "value", [_clean(raw)], m[0].strip(), note)
    if spec.get("span_days"):
        return _span_days(spec, text, note)
    if name == "assessment" and sections:
        stop = set(spec.get("stop_sections", []))
        entries = [_clean(e) for s in sections if s.name not in stop for e in _items(s)]
        if any(re.search(p, q) for p in spec.get("dx_asks", [])):
            entries = _diagnoses(spec, entries)
        return Reading(name, "list", entries, "; ".join(entries), note) if entries else None
    return None


def _span_days(spec: dict[str, Any], text: str, note: Note) -> Reading | None:
    """Days between two dates the note writes (``Admit: 10/4/2025 … Discharge: 10/7/2025`` → 3), else None.

    Hospital length of stay counts midnights: the discharge day minus the admission day.
    """
    found: list[tuple[date, str]] = []
    for pattern in spec["span_days"]:
        m = re.search(pattern, text, re.I)
        day = _written_date(m["d"]) if m else None
        if m is None or day is None:
            return None
        found.append((day, m[0].strip()))
    (first, q1), (last, q2) = found
    if last < first:
        return None
    return Reading(spec["field"], "value", [(last - first).days], f"{q1} … {q2}", note)


def _written_date(text: str) -> date | None:
    """``10/7/2025`` or ``2025-10-07`` as a date; None when it is not a real day."""
    try:
        if "/" in text:
            month, day, year = (int(p) for p in text.split("/"))
            return date(year, month, day)
        return date.fromisoformat(text)
    except ValueError:
        return None


def _diagnoses(spec: dict[str, Any], entries: list[str]) -> list[str]:
    """The diagnoses among assessment items: each item's name without its plan, items that are no diagnosis left out.

    An A/P item reads "<diagnosis> - <data>. <plan>" ("Hyperkalemia - K 5.5. Repeat BMP"); a question for the
    diagnosis wants the name. Items such as "VTE ppx: heparin…", "Code status: Full code", "Immunizations given
    today: …" or a bare "none" are parts of the plan, not problems (``not_dx_items``).
    """
    skip = [re.compile(p, re.I) for p in spec.get("not_dx_items", [])]
    end = re.compile(spec["dx_head_end"], re.I) if spec.get("dx_head_end") else None
    out: list[str] = []
    for entry in entries:
        if any(p.search(entry) for p in skip):
            continue
        head = _clean(end.split(entry, maxsplit=1)[0]) if end else entry
        if head and head not in out:
            out.append(head)
    return out


def _principal(spec: dict[str, Any], sections: list[Section], note: Note, secondary: bool = False) -> Reading | None:
    """The one principal diagnosis (or, ``secondary``, the others): a ``Principal dx:`` line when the note has
    one, else the first listed problem.

    Discharge summaries write the principal diagnosis on its own line before the secondary ones; an H&P or a
    clinic note lists the problem that brought the patient in first in its numbered A/P ("1. CAP - …").
    """
    stop = set(spec.get("stop_sections", []))
    usable = [s for s in sections if s.name not in stop]
    headed = [s for s in usable if any(re.search(p, s.heading, re.I) for p in spec.get("principal_headings", []))]
    if secondary:
        if headed:
            rest = [e for s in usable if s not in headed for e in _diagnoses(spec, [_clean(x) for x in _items(s)])]
        else:
            rest = _diagnoses(spec, [_clean(x) for s in usable for x in _items(s)])[1:]
        return Reading(spec["field"], "list", rest or ["none"], "; ".join(rest) or "none", note)
    for group in (headed, usable):
        for section in group:
            entries = _diagnoses(spec, [_clean(e) for e in _items(section)])
            if entries:
                return Reading(spec["field"], "list", entries[:1], entries[0], note)
    return None


def _read_medication(spec: dict[str, Any], item: str, q: str, sections: list[Section], note: Note) -> Reading | None:
    entries = [e for s in sections for e in _items(s)]
    names = names_for(item)
    listed = [e for e in entries if any(mentions(n, e) for n in names)]
    if any(re.search(p, q) for p in spec.get("strength_asks", [])):
        for entry in listed:
            m = _STRENGTH.search(entry)
            if m:
                return Reading("medications", "value", [re.sub(r"\s+", " ", m[1]).strip()], entry, note)
        return None  # not listed: the dose is not in this note
    if listed:
        return Reading("medications", "yes_no", [True], listed[0], note)
    quote = _none_marked(spec, "\n".join(s.text for s in sections))
    return Reading("medications", "yes_no", [False], quote[0] if quote else "; ".join(entries), note)


def _read_denied(spec: dict[str, Any], names: list[str], body: str, note: Note) -> Reading:
    """"Did she deny X?": Yes where a sentence names X negated ("Denies X", "no X"), else No."""
    from fhirqa.notes.extract import negated

    for sentence in sentences(body):
        for name in names:
            m = mentions(name, sentence)
            if m and negated(sentence, m.start(), m.end()):
                return Reading(spec["field"], "yes_no", [True], sentence, note)
    return Reading(spec["field"], "yes_no", [False], "", note)


def _read_mention(spec: dict[str, Any], item: str, note: Note, sections: list[Section],
                  question: str = "") -> Reading | None:
    from fhirqa.notes.extract import negated

    names = names_for(item)
    body = "\n".join(s.text for s in sections) if sections else note.text
    # "Was ACS ruled out?": the item counts only where the sentence also says the field's context ("ruled out")
    context = [re.compile(p, re.I) for p in spec.get("context", [])]
    if question and any(re.search(p, question.lower()) for p in spec.get("inverse_asks", [])):
        return _read_denied(spec, names, body, note)
    for sentence in sentences(body):
        if sentence.startswith("#"):
            continue
        if context and (not any(c.search(sentence) for c in context)
                        or any(re.search(p, sentence, re.I) for p in spec.get("context_not", []))):
            continue  # "MI not yet ruled out", "troponin to rule out ACS": not ruled out
        for name in names:
            m = mentions(name, sentence)
            if m and (context or not negated(sentence, m.start(), m.end())):
                return Reading(spec["field"], "yes_no", [True], sentence, note, bool(spec.get("structured_too")))
    return Reading(spec["field"], "yes_no", [False], "", note, bool(spec.get("structured_too")))


# -- the note itself -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoteAsk:
    """A question that asks for a note itself: the sections it names (none: the whole note) and whether it used a
    reading word ("summarize", "show", "what did … say")."""

    sections: tuple[dict[str, Any], ...]
    cue: bool


def _note_spec() -> dict[str, Any] | None:
    return next((f for f in config()["fields"] if f.get("reads_note")), None)


def _word(phrase: str) -> str:
    return r"(?<![a-z0-9&/])" + re.escape(phrase) + r"(?![a-z0-9&/])"


def note_asked(question: str, kind_words: tuple[str, ...] = ()) -> NoteAsk | None:
    """The note (or its sections) the question asks for as written, or None when it asks something of a note.

    A question asks for the note itself when it names a note ("the last note", "the ED note from 3/2/2019", "the
    H&P", ``kind_words`` for the kind a caller already knows) and nothing else remains once the reading words
    ("summarize", "show me", "what did … say"), the sections it names ("A&P", "HPI", "meds"), the anchor words
    (last, first, dates) and filler are taken out: "what did the last note say about chest pain?" leaves "chest
    pain", a mention. A visit instead of a note ("HPI of the last visit") needs a reading word or a section only
    notes hold, since "meds at the last visit" is also a question for the record.
    """
    return _note_asked(" ".join(question.lower().split()), tuple(kind_words))


@lru_cache(maxsize=2048)
def _note_asked(q: str, kind_words: tuple[str, ...]) -> NoteAsk | None:
    spec = _note_spec()
    if spec is None:
        return None
    q = f" {q} "
    named = False
    kinds = [k["asks"] for k in config().get("named_note_kinds", {}).get("kinds", [])]
    for pattern in (*kind_words, *kinds, *spec["note_words"], *config().get("note_kind_phrases", [])):
        if re.search(pattern, q):
            named, q = True, re.sub(pattern, " ", q)
    visit = any(re.search(p, q) for p in spec["visit_words"])
    for pattern in spec["visit_words"]:
        q = re.sub(pattern, " ", q)
    if not named and not visit:
        return None
    cue = False
    for pattern in spec["asks"]:
        if re.search(pattern, q):
            cue, q = True, re.sub(pattern, " ", q)
    found: list[tuple[int, dict[str, Any]]] = []
    words = sorted(((w, e) for e in spec["sections_asked"] for w in e["words"]), key=lambda we: -len(we[0]))
    for word, entry in words:  # longest first: "assessment and plan" before "plan"
        m = re.search(_word(word), q)
        if m is None:
            continue
        if all(e is not entry for _, e in found):
            found.append((m.start(), entry))
        q = re.sub(_word(word), " ", q)
    sections = tuple(e for _, e in sorted(found, key=lambda pe: pe[0]))
    drop = set(spec["anchor_words"].split()) | set(spec["filler_words"].split())
    for token in re.findall(r"[a-z0-9][a-z0-9'&/\-]*", q):
        token = re.sub(r"'s?$", "", token)
        if token and token not in drop and token not in _MONTH_WORDS and not _DATE_TOKEN.fullmatch(token):
            return None  # something else is asked of the note (an item, a date, who wrote it)
    if not named and not cue and not (sections and all(s.get("notes_only") for s in sections)):
        return None  # "meds at the last visit?": the record's list, not the visit's note
    if not cue and not sections and not named:
        return None
    return NoteAsk(sections, cue)


# A date, time or ordinal as written ("3/2/2019", "2019-03-02", "13th", "'19"): the anchor, not an item ("A1c" is).
_DATE_TOKEN = re.compile(r"[\d/\-:.,']+|\d{1,2}(?:st|nd|rd|th)")


def _digest_config() -> dict[str, Any]:
    spec = _note_spec() or {}
    return spec.get("digest", {})


_GENERIC_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z0-9 /&+#'\-]{0,48}?(?:\s*\([^)]{0,40}\))?)\s*:(?!\d)\s*"
                            r"(?P<rest>.*)$")
_ITEM_MARK = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_RULE = re.compile(r"^\s*[_=\-*]{5,}\s*$")
# A line such as "The following procedures were conducted:" is a sentence ending in a colon, not a heading.
_SENTENCE_WORDS = frozenset({"was", "were", "is", "are", "has", "have", "had", "will", "the", "this", "he", "she"})


@dataclass
class Part:
    """One part of a note as written: its heading, canonical name, level (``#`` count; labels 1) and lines."""

    heading: str
    name: str
    level: int
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(ln for ln in self.lines if ln.strip()).strip()


def outline(text: str) -> list[Part]:
    """The note's parts in order: every ``# heading`` and ``Label:`` line opens one (known section names and any
    other short label, as a reader sees them); the text before the first is the ``preamble``."""
    parts = [Part("", "preamble", 0)]
    for raw in text.replace("\r\n", "\n").split("\n"):
        if _RULE.match(raw):
            continue  # a ruled line ("______") separates, it says nothing
        md = _MD_HEADER.match(raw)
        if md and len(md["label"].split()) <= 6 and ": " not in md["label"]:  # "# COPD exacerbation: …" is a line
            parts.append(Part(md["label"].strip(), section_name(md["label"]), len(raw.strip()) - len(
                raw.strip().lstrip("#"))))
            continue
        label = _GENERIC_LABEL.match(raw) if raw[:1].strip() and not _ITEM_MARK.match(raw) else None
        words = re.sub(r"\(.*\)", "", label["label"]).lower().split() if label else []
        if label and (section_name(label["label"]) in _aliases() or len(words) <= 5 and not _SENTENCE_WORDS & set(words)):
            heading = label["label"].strip()
            parts.append(Part(heading, section_name(heading), 1))
            if label["rest"].strip():
                parts[-1].lines.append(label["rest"].strip())
            continue
        parts[-1].lines.append(raw.rstrip())
    return [p for p in parts if p.name != "preamble" or p.text]


def _with_children(parts: list[Part], i: int) -> list[Part]:
    """Part ``i`` and the parts under it: deeper ``#`` parts (``# Assessment and Plan`` holds ``## Plan``), or,
    under a label with nothing on its own ("Discharge Diagnosis:"), the labels of no known section that follow
    with text ("Primary: COPD exacerbation", "Secondary: …") up to the next empty label or known section."""
    head = parts[i]
    out = [head]
    for part in parts[i + 1:]:
        if head.level == 0:
            break
        if part.level > head.level or (head.level == part.level == 1 and not head.text and part.text
                                        and part.name not in _aliases()):
            out.append(part)
            continue
        break
    return out


def _collapse(items: list[str]) -> list[str]:
    """Items with a run of repeats said once with its count ("hospice care (regime/therapy) ×26")."""
    runs: list[list[Any]] = []
    for item in items:
        if runs and runs[-1][0] == item:
            runs[-1][1] += 1
        else:
            runs.append([item, 1])
    return [f"{item} ×{n}" if n > 1 else item for item, n in runs]


def _semicolon_list(line: str) -> bool:
    """A line that is a ``;``-separated list ("lisinopril 10 mg oral tablet; metformin …"), not prose that uses a
    semicolon between clauses ("Treated with vancomycin …; vancomycin … Vanc trough 7.2 …")."""
    return ";" in line and not re.search(r"[a-z)]\.\s+[A-Z]", line)


def part_items(part: Part) -> list[str]:
    """A part's entries as written: its lines (list marks and numbers dropped: the list is the numbering; a final
    period dropped), a one-line section split into its ``;`` entries or its sentences, repeats said once with their
    count."""
    lines = [ln.strip() for ln in part.lines if ln.strip()]
    if len(lines) == 1:  # one line: a ";" list, else its sentences ("A/P: COPD exacerbation. Start prednisone.")
        lines = [p.strip() for p in lines[0].split(";")] if _semicolon_list(lines[0]) else sentences(lines[0])
    items = [_ITEM_MARK.sub("", ln).strip() for ln in lines]
    return _collapse([re.sub(r"(?<![.\s][a-z])\.$", "", i) if i.endswith(".") else i for i in items if i])


def _is_header(part: Part) -> bool:
    return part.name in set(_digest_config().get("header_labels", []))


def _short(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, whole sentences when the first fits, else cut at a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    out = ""
    for sentence in sentences(text):
        if len(out) + len(sentence) + 1 > limit:
            room = limit - len(out) - 1
            if room >= 60 or not out:  # room left: the next sentence's start, cut at a word
                out = f"{out} {sentence[:room].rsplit(' ', 1)[0].rstrip(',;:')}".strip()
            break
        out = f"{out} {sentence}".strip()
    return out + " …"


def _part_line(part: Part, full: bool) -> str:
    """One part of the digest: its content in full (assessment, plan, diagnoses) or its first sentence(s) / items."""
    cfg = _digest_config()
    lines = [ln.strip() for ln in part.lines if ln.strip()]
    if not lines:
        return ""
    listed = len(lines) > 1 and all(_ITEM_MARK.match(ln) for ln in lines) or (
        len(lines) == 1 and _semicolon_list(lines[0]))
    if full:  # as written: numbered problems keep their numbers; list marks and repeats go
        unmarked = [_ITEM_MARK.sub("", ln) if _ITEM_MARK.match(ln) and not ln[:1].isdigit() else ln for ln in lines]
        return _short(_joined(_collapse(unmarked)), int(cfg.get("full_chars", 900)))
    if listed:
        items = part_items(part)
        shown = min(len(items), int(cfg.get("items_shown", 8)))
        while shown > 1 and len("; ".join(items[:shown])) > int(cfg.get("line_chars", 200)) * 2:
            shown -= 1  # whole items only
        more = f" … (+{len(items) - shown} more)" if len(items) > shown else ""
        return "; ".join(items[:shown]) + more
    return _short(_joined(lines), int(cfg.get("line_chars", 200)))


def _joined(lines: list[str]) -> str:
    """Lines as one text: a line without an end mark ("COPD on 2L home oxygen") ends an entry ("; "), a line
    starting in lower case continues the one before."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif line[:1].islower() or out.endswith((".", "!", "?", ";", ":", ",")):
            out = f"{out} {line}"
        else:
            out = f"{out}; {line}"
    return out


def digest(note: Note, max_chars: int | None = None) -> list[str]:
    """An extractive digest of ``note``: ``Heading: first sentence(s) or items`` per part, in the note's order.

    The assessment, plan, impression and diagnoses are kept in full (``full_sections``); identifying header lines
    (date, author, patient, MRN) are left to the answer's header; the text before the first heading is kept
    only when the note has no headings (an ECG read, a short report). Bounded by ``max_chars``: parts that do not
    fit are named at the end.
    """
    cfg = _digest_config()
    full_names = set(cfg.get("full_sections", []))
    parts = [p for p in outline(note.text) if not _is_header(p)]
    body = [p for p in parts if p.name != "preamble"]
    if not body:
        text = " ".join(ln.strip() for p in parts for ln in p.lines if ln.strip())
        return [_short(text, max_chars or int(cfg.get("max_chars", 1800)))] if text else []
    lines: list[tuple[str, bool, str]] = []  # (line, full, heading)
    prefix, prefix_full = "", False  # an empty heading over the parts under it
    for i, part in enumerate(body):
        heading = f"{prefix} › {part.heading}" if prefix else part.heading
        full = part.name in full_names or prefix_full
        content = _part_line(part, full)
        if not content:
            nxt = body[i + 1] if i + 1 < len(body) else None
            if nxt is not None and (nxt.level > part.level or (part.level == nxt.level == 1 and
                                                               nxt.name not in _aliases())):
                prefix, prefix_full = heading, full  # "# Assessment and Plan" over "## Plan"; "Discharge Diagnosis:"
                continue  # over "Primary:"
            if full:
                lines.append((f"{heading}: (nothing written)", True, heading))
        else:
            lines.append((f"{heading}: {content}", full, heading))
        prefix, prefix_full = "", False
    budget = max_chars or int(cfg.get("max_chars", 1800))
    reserved = sum(len(ln) + 1 for ln, full, _ in lines if full)
    out, left_out, used = [], [], 0
    for line, full, heading in lines:
        if full or used + reserved + len(line) + 1 <= budget:
            out.append(line)
            used += 0 if full else len(line) + 1
        else:
            left_out.append(heading)
    if left_out:
        out.append("Also: " + ", ".join(left_out) + ".")
    return out


@dataclass
class NoteSection:
    """A section of one note as written: its heading(s), its entries, and whether it is there at all."""

    note: Note
    asked: str  # the section asked for (canonical name)
    heading: str  # the heading as written ("" when the note has none of the names it is read from)
    items: list[str]
    text: str

    @property
    def present(self) -> bool:
        return bool(self.heading)


def note_section(note: Note, entry: dict[str, Any]) -> NoteSection:
    """The section ``entry`` names (``sections_asked`` of the lexicon), read from the first of its ``read``
    names the note has, with the ``#`` parts under it: its entries and its text as written (no heading: the note
    does not have it; a heading with nothing under it: no entries)."""
    parts = outline(note.text)
    for name in entry["read"]:
        for i, part in enumerate(parts):
            if part.name != name and part.heading.lower() != name:
                continue
            items: list[str] = []
            written: list[str] = []
            for j, sub in enumerate(_with_children(parts, i)):
                if j and sub.text:  # a sub-head with text under it ("## Plan") is kept as written
                    items.append(f"{sub.heading}:")
                    written.append(f"{sub.heading}:")
                items += part_items(sub)
                written += [ln.rstrip() for ln in sub.lines if ln.strip()]
            text = "\n".join(written).strip()
            limit = int(_digest_config().get("section_chars", 4000))
            if len(text) > limit:
                text = text[:limit].rsplit("\n", 1)[0] + "\n…"
            return NoteSection(note, entry["section"], part.heading, items, text)
    return NoteSection(note, entry["section"], "", [], "")


def headings(note: Note) -> list[str]:
    """The note's headings as written, identifying header lines left out."""
    return [p.heading for p in outline(note.text) if p.name != "preamble" and not _is_header(p)]


def _read_note(question: str, notes: list[Note]) -> Reading | None:
    """The note itself for :func:`read`: the sections asked as written from the newest note that has one (their
    entries), else the newest note's digest."""
    asked = note_asked(question) or NoteAsk((), True)
    ordered = sorted(notes, key=lambda n: n.time or datetime.min, reverse=True)
    if not asked.sections:
        return Reading("note", "list", digest(ordered[0]), "", ordered[0])
    for note in ordered:
        found = [note_section(note, e) for e in asked.sections]
        if any(f.present for f in found):
            items = [i for f in found for i in f.items]
            return Reading("note", "list", items, "\n".join(f.text for f in found if f.text), note)
    return None
