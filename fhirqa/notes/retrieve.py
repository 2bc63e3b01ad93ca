"""Structure-guided retrieval: the question, plus what the tables already said, finds the note chunks.

The retrieval query is the question with the structured evidence already found (item names, values, units)
and the clinician words behind the question's abbreviations (``K`` ↔ potassium, Lasix ↔ furosemide, from
``lexicon/``). The time window comes from explicit dates in the question, or, when the evidence is timed,
a few days around it (chunks outside are used only to fill up to ``k``); the section filter comes from a
section the question names ("in the assessment", "discharge medications"). With no evidence, retrieval is
note-only: the question (expanded) is the query and nothing narrows it but the question itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.notes.index import Hit, NoteIndex

EVIDENCE_DAYS = 3  # window around timed evidence
MAX_EVIDENCE = 6  # evidence items folded into the query
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                        "september", "october", "november", "december"], start=1)}
_SECTION_WORDS = {  # phrases in a question that name a section
    "chief complaint": "chief complaint", "presenting complaint": "chief complaint", "hpi": "history of present",
    "history of present illness": "history of present", "assessment": "assessment", "a/p": "assessment",
    "plan": "plan", "hospital course": "hospital course", "discharge medication": "discharge medications",
    "home med": "medications", "allerg": "allergies", "social history": "social history",
    "family history": "family history", "review of systems": "review of systems", "impression": "impression",
    "findings": "findings", "past medical history": "past medical history",
}


@dataclass
class Retrieval:
    """Hits and how they were looked for (for the trace)."""

    hits: list[Hit]
    query: str
    since: datetime | None = None
    until: datetime | None = None
    section: str | None = None
    guided: bool = False  # structured evidence shaped the query
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Lexicon:
    """Names of labs, vitals and drugs from ``lexicon/``: the part of it the notes path uses."""

    pairs: list[tuple[str, list[str]]]  # (term, other names) for labs/vitals, then drugs
    strict: frozenset[str]  # names matched only in their own case ("K", "Na", "T")
    units: dict[str, str | None]  # lab/vital term → its usual unit (labs and vitals only)


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The lexicon, read once; empty when the folder cannot be read (queries are then not expanded)."""
    try:
        from fhirqa.project import data_dir

        folder = data_dir("lexicon")
        abbreviations = json.loads((folder / "abbreviations.json").read_text("utf-8"))
        drugs = json.loads((folder / "drugs.json").read_text("utf-8"))
    except Exception:  # noqa: BLE001
        return Lexicon([], frozenset(), {})
    entries = abbreviations.get("entries", [])
    pairs = [(e["term"], [a for a in e.get("aliases", []) if a]) for e in entries]
    pairs += [(d["generic"], [*d.get("brands", []), *d.get("aliases", [])]) for d in drugs.get("drugs", [])]
    return Lexicon(pairs, frozenset(abbreviations.get("case_sensitive_in_text", [])),
                   {e["term"]: e.get("unit") for e in entries})


def find_phrase(phrase: str, text: str, case_sensitive: bool = False) -> re.Match[str] | None:
    """``phrase`` as a whole word or phrase in ``text``."""
    if (phrase not in text) if case_sensitive else (phrase.lower() not in text.lower()):
        return None  # most lexicon names are absent: skip the regex
    pattern = r"(?<![A-Za-z0-9])" + re.escape(phrase) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, 0 if case_sensitive else re.IGNORECASE)


def aliases_in(text: str) -> list[tuple[str, list[str]]]:
    """Lexicon entries (term, every name) that ``text`` mentions, longest mention first."""
    lex = lexicon()
    found: list[tuple[int, str, list[str]]] = []
    for term, aliases in lex.pairs:
        names = [term, *aliases]
        lengths = [len(n) for n in names if find_phrase(n, text, case_sensitive=n in lex.strict)]
        if lengths:
            found.append((max(lengths), term, names))
    return [(term, names) for _, term, names in sorted(found, key=lambda f: -f[0])]


def expand(question: str) -> str:
    """The question plus the other names of the items it mentions (a few short ones each)."""
    extra: list[str] = []
    for term, names in aliases_in(question)[:3]:
        for name in [term, *sorted(names, key=len)[:4]]:
            if not find_phrase(name, question) and name not in extra:
                extra.append(name)
    return question if not extra else f"{question} ({', '.join(extra)})"


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def build_query(question: str, evidence: Iterable[Any] = ()) -> str:
    """The question (expanded) plus names, values and units of up to ``MAX_EVIDENCE`` evidence items."""
    parts: list[str] = []
    for item in list(evidence)[:MAX_EVIDENCE]:
        label = _get(item, "label") or ""
        value, unit = _get(item, "value"), _get(item, "unit")
        words = " ".join(str(p) for p in (label, value if isinstance(value, int | float | str) else "", unit or "")
                         if p not in (None, "")).strip()
        if words and words not in parts and len(words) < 200:
            parts.append(words)
    query = expand(question)
    return query if not parts else f"{query} | {'; '.join(parts)}"


def _as_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            return _as_time(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def evidence_window(evidence: Iterable[Any], days: int = EVIDENCE_DAYS) -> tuple[datetime | None, datetime | None]:
    """A window ``days`` around the evidence times (none when untimed, or spread over more than a year)."""
    times = [t for t in (_as_time(_get(e, "time")) for e in evidence) if t]
    if not times or max(times) - min(times) > timedelta(days=366):
        return None, None
    return min(times) - timedelta(days=days), max(times) + timedelta(days=days)


def question_window(question: str) -> tuple[datetime | None, datetime | None]:
    """A window from an explicit date in the question: ``7/18/2025``, ``2025-07-18``, ``July 2025``, ``in 2024``."""
    text = question.lower()
    day = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text) or re.search(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b", text)
    if day:
        parts = [int(g) for g in day.groups()]
        y, m, d = parts if day.re.pattern.startswith(r"\b(\d{4})") else (parts[2], parts[0], parts[1])
        try:
            start = datetime(y, m, d, tzinfo=UTC)
        except ValueError:
            return None, None
        # A note written late in the evening local time is dated the next day in UTC.
        return start - timedelta(hours=14), start + timedelta(days=1, hours=14)
    month = re.search(r"\b(" + "|".join(_MONTHS) + r")\s+(\d{4})\b", text)
    if month:
        y, m = int(month[2]), _MONTHS[month[1]]
        end = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=UTC)
        return datetime(y, m, 1, tzinfo=UTC), end - timedelta(microseconds=1)
    year = re.search(r"\b(?:in|during|of)\s+((?:19|20)\d{2})\b", text)
    if year:
        y = int(year[1])
        return datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC) - timedelta(microseconds=1)
    return None, None


def question_section(question: str) -> str | None:
    """The section a question names ("in the assessment", "discharge medications"), if any."""
    text = question.lower()
    for phrase, section in sorted(_SECTION_WORDS.items(), key=lambda p: -len(p[0])):
        if re.search(r"(?<![a-z])" + re.escape(phrase), text) and re.search(r"\b(section|note|listed|under|in the)\b",
                                                                            text):
            return section
    return None


def retrieve(index: NoteIndex, patient_id: str, question: str, evidence: Iterable[Any] = (), k: int = 5,
             since: Any = None, until: Any = None, section: str | None = None,
             now: datetime | None = None) -> Retrieval:
    """Chunks for ``question``, guided by ``evidence`` (tool-cited values) when there is any.

    Explicit ``since``/``until``/``section`` win; else they come from the question, else (for the window)
    from the evidence, whose window is soft: other chunks fill up to ``k``. ``now`` hides later notes.
    """
    evidence = list(evidence)
    query = build_query(question, evidence)
    result = Retrieval([], query, guided=bool(evidence))
    section = section or question_section(question)
    result.section = section
    hard_since, hard_until = _as_time(since), _as_time(until)
    if hard_since is None and hard_until is None:
        hard_since, hard_until = question_window(question)
    if now is not None:
        hard_until = min(hard_until, now) if hard_until else now
    soft_since, soft_until = (None, None) if hard_since or (hard_until and hard_until != now) else \
        evidence_window(evidence)
    if soft_since:
        soft_until = min(soft_until, now) if now and soft_until else soft_until
        hits = index.search(patient_id, query, k=k, since=soft_since, until=soft_until, section=section)
        result.notes.append(f"evidence window {soft_since.date()}..{soft_until.date() if soft_until else ''}: "
                            f"{len(hits)} hit(s)")
        if len(hits) < k:
            seen = {h.chunk_id for h in hits}
            more = index.search(patient_id, query, k=k * 2, until=hard_until, section=section)
            hits += [h for h in more if h.chunk_id not in seen][: k - len(hits)]
        result.since, result.until = soft_since, soft_until
    else:
        hits = index.search(patient_id, query, k=k, since=hard_since, until=hard_until, section=section)
        result.since, result.until = hard_since, hard_until
    result.hits = hits
    return result
