"""The records the consistency pipeline passes between its stages.

``Section`` (segment) → ``Entity`` (extract) → ``TimeRef`` (timing) → item search (match) → ``Check``
(verify) → ``NoteReport`` (report).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

Span = tuple[int, int]

# Entity categories and the canonical view each is checked against
VIEWS = {"lab": "observation", "vital": "observation", "medication": "medication", "condition": "condition",
         "procedure": "procedure", "immunization": "immunization"}
STATUSES = ("consistent", "inconsistent", "unverifiable")
FIELDS = ("value", "unit", "time", "existence", "frequency")


@dataclass(frozen=True)
class Section:
    """A topical section of a note: ``kind`` (hpi, pmh, meds, labs, plan, family_history…) and its body."""

    kind: str
    title: str
    start: int  # offset of the body (after the heading)
    end: int


@dataclass
class TimeRef:
    """When an entity is said to have happened: an inclusive window and how the note said it."""

    start: datetime
    end: datetime
    kind: str  # explicit, narrative, default
    text: str = ""  # the expression as written ("" for the note's default window)
    span: Span | None = None

    def contains(self, moment: datetime) -> bool:
        """True when ``moment`` falls inside the window."""
        return self.start <= moment <= self.end

    def to_json(self) -> dict[str, Any]:
        """The window as JSON (ISO times)."""
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "kind": self.kind, "text": self.text,
                "span": list(self.span) if self.span else None}


@dataclass
class Entity:
    """One checkable statement of a note.

    Type 1 (``cls = "T1"``) has a numeric value (a lab, a vital, a dose); Type 2 (``"T2"``) is checked for
    existence (a drug started, a diagnosis, a procedure done).
    """

    cls: str
    category: str  # lab, vital, medication, condition, procedure, immunization
    name: str  # as written
    span: Span  # the whole mention
    name_span: Span
    section: str = "other"
    value: float | None = None
    value_text: str = ""
    value_span: Span | None = None
    decimals: int = 0
    comparator: str = ""  # "", "<", ">", "<=", ">="
    unit: str = ""  # as written ("" when none)
    component: str = ""  # "systolic" / "diastolic" for a blood pressure
    route: str = ""
    frequency: str = ""
    context: str = "mentioned"  # listed (a medication list), given (started/given/prescribed), history, diagnosis
    skip: str = ""  # why the statement is not checked: negated, family history, plan, home reading, allergy
    source: str = "rules"  # rules or llm
    search: str = ""  # the phrase the item search uses when not the name as written (shorthand, record names)
    prior: bool = False  # a value quoted as an earlier result ("Cr 0.79 (prior 0.77 on 9/12/2025)": the 0.77)
    time: TimeRef | None = None

    @property
    def view(self) -> str:
        """The canonical view this entity is checked against."""
        return VIEWS[self.category]

    def to_json(self) -> dict[str, Any]:
        """The entity as JSON."""
        out = {k: v for k, v in asdict(self).items() if k != "time"}
        out["span"], out["name_span"] = list(self.span), list(self.name_span)
        out["value_span"] = list(self.value_span) if self.value_span else None
        out["time"] = self.time.to_json() if self.time else None
        return out


@dataclass
class Check:
    """The verdict on one entity: consistent / inconsistent / unverifiable, why, and the rows compared."""

    entity: Entity
    status: str
    fields: list[str] = field(default_factory=list)  # mismatching fields: value, unit, time, existence, frequency
    items: list[str] = field(default_factory=list)  # record item names the note's name matched
    how: str = ""  # how the items were found (code, lexicon, words, fuzzy…)
    query: str = ""  # the verification conditions, readable
    rows: list[dict[str, Any]] = field(default_factory=list)  # rows compared (the closest ones)
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """The check as JSON."""
        return {"status": self.status, "fields": self.fields, "items": self.items, "how": self.how,
                "query": self.query, "reason": self.reason, "rows": [_jsonable(r) for r in self.rows],
                "entity": self.entity.to_json()}


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in row.items()}


@dataclass
class NoteContext:
    """What a note's words are read against: its time and type, and the stay it belongs to."""

    note_time: datetime
    note_kind: str  # discharge, admission, progress, nursing, other
    admission: datetime | None = None
    discharge: datetime | None = None
    encounter: str | None = None
