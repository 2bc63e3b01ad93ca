"""What every atomic tool shares: the context it runs in, record-set handles, errors, the registry.

A tool is a plain function ``fn(ctx, **arguments) -> dict`` whose spec (name, description, JSON-schema
parameters) lives in ``tools/<name>.json``: the one source for LLM function-calling schemas and docs;
a test keeps the function signatures and the specs in step. Tools are deterministic and pure over
the patient's rows; every number in an answer comes out of one of them.

Record sets are referred to by handle (``"r1"``, ``"r2"``…) so a model never has to copy rows around;
results show a bounded preview and say how many rows were left out, never truncating silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from fhirqa.agent.answer import Evidence

PREVIEW_ROWS = 20  # rows shown to a model per result; the rest are counted in "omitted"


class ToolError(Exception):
    """A caller's mistake (unknown handle, bad field, bad argument): reported back so it can recover."""


@dataclass
class RecordSet:
    """Rows of one canonical view for the patient, as a tool produced them."""

    view: str
    rows: list[dict[str, Any]]
    description: str  # how the set was obtained, for the trace ("observation ~ 'a1c' → 2 items")
    items: list[str] = field(default_factory=list)  # item names the set was resolved to


@dataclass
class Resolution:
    """What an item phrase ("A1c", "lasix") resolved to among the patient's own item names."""

    matched: list[str]  # item names as the record spells them
    candidates: list[str] = field(default_factory=list)  # nearest names when nothing (or too much) matched
    ambiguous: bool = False
    how: str = ""  # "code", "exact", "lexicon", "fuzzy", …


class PatientRows(Protocol):
    """Access to one patient's rows of each canonical view."""

    def rows(self, view: str) -> list[dict[str, Any]]:
        """All rows of ``view`` for the patient (times as aware datetimes)."""
        ...

    def items(self, view: str) -> list[str]:
        """Distinct item names in ``view`` (observation names, medication names, …)."""
        ...


def names_by_frequency(rows: list[dict[str, Any]], field: str) -> list[str]:
    """Distinct values of ``field`` in ``rows``, most frequent first (ties by name): what ``items`` returns."""
    counts: dict[str, int] = {}
    for row in rows:
        name = row.get(field)
        if name is not None:
            counts[str(name)] = counts.get(str(name), 0) + 1
    return sorted(counts, key=lambda n: (-counts[n], n))


Resolver = Callable[[str, str, list[str]], Resolution]  # (view, phrase, item names) → Resolution


@dataclass
class ToolContext:
    """Everything a tool call may read or add to, for one question."""

    patient_id: str | None
    now: datetime
    data: PatientRows
    resolve: Resolver
    handles: dict[str, RecordSet] = field(default_factory=dict)
    evidence: dict[tuple[str, str], Evidence] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    answer: dict[str, Any] | None = None  # set by final_answer
    # All patients' demographics, for find_patient; None whenever the question is about one patient.
    directory: Callable[[], list[dict[str, Any]]] | None = None
    # The patient's notes for search_notes: an object with search(patient_id, query, k=, since=, until=, section=)
    # (fhirqa.notes.NoteIndex); None means no notes.
    notes: Any | None = None

    def add(self, records: RecordSet) -> str:
        """Store a record set and return its new handle."""
        handle = f"r{len(self.handles) + 1}"
        self.handles[handle] = records
        return handle

    def records(self, handle: str) -> RecordSet:
        """The record set behind ``handle``; a ToolError listing the known handles otherwise."""
        try:
            return self.handles[handle]
        except KeyError:
            known = ", ".join(self.handles) or "none yet (call get_resources first)"
            raise ToolError(f"unknown record handle {handle!r}; known handles: {known}") from None

    def cite(self, evidence: Evidence) -> None:
        """Remember a value an answer may rest on (deduplicated by reference and field)."""
        self.evidence.setdefault((evidence.ref, evidence.field), evidence)


ToolFunction = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """A tool: its spec from ``tools/<name>.json`` and its implementation."""

    name: str
    spec: dict[str, Any]
    function: ToolFunction
