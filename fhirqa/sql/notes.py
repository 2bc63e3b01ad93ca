"""A relational patient's notes (OMOP ``note``, MIMIC-III ``noteevents``) on the question path.

The FHIR path answers note questions with the offline plans (``offline/plans.py``: a value a dated note
states, a visit's note read by section, a mention or its negation, the notes as a fallback when the tables
hold nothing) over the ``find_in_notes`` tool. A patient of an OMOP or MIMIC database gets the same plans:
:func:`answer_from_notes` drives them with a tool context whose only data are the patient's notes, read from
the database (fixed SQL, the patient's key bound) and indexed like a store's (chunks, MiniLM, BM25). A plan
that reaches for the tables first hands the question back to the SQL writer (``None``); "does the note's K match
the labs?" runs the note–table consistency check over the notes and the database's rows read as the views.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Generator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.errors import FhirqaError
from fhirqa.notes.index import NoteIndex, SyncReport
from fhirqa.notes.sources import Note, mimic_notes, omop_notes
from fhirqa.sql.connect import Connection
from fhirqa.sql.person import Person
from fhirqa.sql.schema import Schema

#: The tools a note plan may call here; any other (the tables) hands the question back to SQL. The consistency
#: check reads the notes against the tables through the views' columns (fhirqa.sql.patient_rows).
NOTE_TOOLS = frozenset({"find_in_notes", "search_notes", "check_note_consistency", "list_notes"})
_INDEXES: dict[str, RelationalNoteIndex] = {}
_INDEXES_LOCK = threading.Lock()


def note_table(schema: Schema) -> str | None:
    """The schema's note table, when the database has one."""
    table = {"mimic-iii": "noteevents", "omop": "note"}.get(schema.kind)
    return table if table and table in schema.tables else None


def relational_notes(con: Connection, schema: Schema, person: Person) -> list[Note]:
    """The person's notes as the database holds them, filed under the id the question used."""
    table = note_table(schema)
    if table is None:
        return []
    style = "format" if con.dialect == "postgres" else "qmark"
    with con.lock:
        if schema.kind == "mimic-iii":
            carers = "caregivers" if "caregivers" in schema.tables else None  # their roles, when loaded
            notes = mimic_notes(con.raw, person.key, table=table, paramstyle=style, caregivers=carers)
        else:
            notes = omop_notes(con.raw, person.key, table=table, paramstyle=style)
    return [replace(n, patient_id=person.patient_id) for n in notes]


class RelationalNoteIndex(NoteIndex):
    """A note index over one relational database: patients' notes read from it on first use, per process."""

    def __init__(self, con: Connection, schema: Schema, folder: Path, **options: Any) -> None:
        super().__init__(folder, path=folder / "notes.lance", **options)
        self.con, self.schema = con, schema
        self._people: dict[str, Person] = {}
        self._read: dict[str, list[Note]] = {}
        self._indexed: set[str] = set()

    def add_person(self, person: Person) -> None:
        """Make ``person`` searchable (their notes are read on first use, indexed on the first search)."""
        self._people[person.patient_id] = person

    def ensure(self, patient_id: str) -> SyncReport | None:
        """Index the person's notes once per process (the database is read-only to fhirqa).

        Only a search needs the index: embedding loads the model and every chunk, seconds on a first question
        that reading a note by kind or section ("date of the last d/c summary?") never needs.
        """
        if patient_id in self._indexed:
            return None
        report = self.index_notes(self.notes(patient_id), patient_ids=[patient_id])
        self._indexed.add(patient_id)
        return report

    def notes(self, patient_id: str) -> list[Note]:
        """The person's whole notes, oldest first, read from the database once per process (not indexed)."""
        found = self._read.get(patient_id)
        if found is None:
            person = self._people.get(patient_id)
            if person is None:
                raise FhirqaError(f"no notes are known for {patient_id!r} in this database")
            found = self._read[patient_id] = relational_notes(self.con, self.schema, person)
        return found


def index_for(con: Connection, schema: Schema, person: Person, cache: Path) -> RelationalNoteIndex | None:
    """The database's note index (one per database and process, kept under ``cache``), or None without notes."""
    if note_table(schema) is None:
        return None
    key = f"{con.target}|{con.path.stat().st_mtime_ns if con.path and con.path.exists() else ''}"
    with _INDEXES_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            folder = cache / "notes" / hashlib.sha256(key.encode()).hexdigest()[:16]
            folder.mkdir(parents=True, exist_ok=True)
            index = _INDEXES[key] = RelationalNoteIndex(con, schema, folder)
        index.con = con  # the live connection (a closed one is reopened by the engine under the same key)
    index.add_person(person)
    return index


def answer_from_notes(plan: Generator[Any, dict[str, Any], Any], person: Person, moment: datetime,
                      index: RelationalNoteIndex) -> tuple[dict[str, Any], list[Evidence]] | None:
    """Drive an offline note plan to its final answer over the person's notes; None when it wants the tables.

    ``plan`` is a generator of ``(tool, arguments)`` calls, as the offline backend's plans are. The tool
    context's record is the person's rows read as the views (:class:`~fhirqa.sql.patient_rows.RelationalPatientRows`,
    as of ``moment``, read only when a tool asks), so ``check_note_consistency`` compares the notes with the
    database's measurements, orders, diagnoses and procedures exactly as it does a store's.
    """
    import functools

    from fhirqa.agent.resolver import ConceptResolver, codes_by_item, components_by_panel
    from fhirqa.agent.tools.base import ToolContext
    from fhirqa.agent.tools.registry import execute
    from fhirqa.sql.patient_rows import RelationalPatientRows

    rows = RelationalPatientRows(index.con, index.schema, person, moment)
    resolver = ConceptResolver(codes_of=functools.cache(lambda view: codes_by_item(rows, view)),
                               children_of=functools.cache(lambda view: components_by_panel(rows, view)))
    ctx = ToolContext(patient_id=person.patient_id, now=moment, data=rows, resolve=resolver, notes=index)
    try:
        call = next(plan)
        while True:
            if call is None:
                return None
            name, arguments = call
            if name == "final_answer":
                return dict(arguments), list(ctx.evidence.values())
            if name not in NOTE_TOOLS:
                return None
            call = plan.send(execute(ctx, name, arguments))
    except StopIteration:
        return None


def allergies_in_notes(pq: Any, person: Person, moment: datetime,
                       index: RelationalNoteIndex) -> tuple[dict[str, Any], list[Evidence]] | None:
    """An allergy question ("NKDA?", "allergic to penicillin?", "allergies?") answered by the latest note, dated by
    ``moment``, whose Allergies section says something (MIMIC-III keeps no structured allergy list; a discharge
    summary's "Allergies: No Known Allergies to Drugs" is what the record says). None when no note has one."""
    from fhirqa.notes.reader import mentions, names_for, read
    from fhirqa.sql.allergies import asked_category, list_split
    from fhirqa.sql.offline_sql import final

    notes = [n for n in index.notes(person.patient_id) if n.time is not None and n.time <= moment]
    reading = read("any allergies?", notes)  # does the latest Allergies section list any (not the question's words)
    if reading is None or reading.kind != "yes_no" or reading.note is None:
        return None
    note, quote = reading.note, " ".join(str(reading.quote or "").split())
    listed = bool(reading.value and reading.value[0])
    where = f"the {note.note_type or 'note'} of {note.date}"
    evidence = [Evidence(ref=note.ref, field="note.text", value=quote, time=note.time.isoformat() if note.time else None,
                         label=note.note_type)]
    category, substance = asked_category(pq)
    said = f"per {where} (the record keeps no structured allergy list): \"{quote}\""
    if not listed:
        what = f"allergy to {substance}" if substance else f"{category} allergies" if category else "allergies"
        if pq.aggregate == "absent":
            return final([True], f"Yes: no known allergies, {said}."), evidence
        if pq.list_kind == "allergy" and pq.aggregate != "count" and not substance and not category:
            return final([], f"No known allergies, {said}."), evidence
        if pq.aggregate == "count":
            return final([0], f"0: no known allergies, {said}."), evidence
        return final([False], f"No: no known {what}, {said}."), evidence
    allergens = [a.strip(" .") for a in list_split().split(quote) if a.strip(" .")]
    if substance:
        from fhirqa.agent.backends.offline.parser import _lexicon

        lexicon = _lexicon()
        names = names_for(substance.lower()) + (lexicon.other_names(substance) if lexicon is not None else [])
        hit = next((a for a in allergens if any(mentions(n, a) for n in names)), None)
        if hit:
            return final([True], f"Yes: \"{hit}\" is on the allergy list, {said}."), evidence
        return final([False], f"No: {substance} is not on the allergy list, {said}."), evidence
    if pq.aggregate == "absent":
        return final([False], f"No: allergies are documented, {said}."), evidence
    if pq.aggregate == "count":
        return final([len(allergens)], f"{len(allergens)} allergies, {said}."), evidence
    if pq.list_kind == "allergy":
        return final(allergens, f"Allergies: {'; '.join(allergens)}, {said}."), evidence
    return final([True], f"Yes: allergies are documented, {said}."), evidence
