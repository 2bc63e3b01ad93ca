"""Note–table consistency: check what a clinical note says against the patient's structured record.

A pipeline of small stages, each usable alone: ``segment`` (sections) → ``extract`` (entities; rules and
lexicons offline, or an LLM backend with a self-correction pass, ``llm``) → ``timing`` (explicit, narrative or
default windows) → ``match`` (note names → record items) → ``verify`` (value / unit / time conditions, relaxed
one at a time to pinpoint the disagreeing column) → ``report`` (JSON and a table).

    from fhirqa.consistency import check_note, check_patient
    report = check_note(".fhirqa/db", "p1", "K 5.4 this morning. Lasix 40 mg IV given.", "2024-03-01T14:00:00Z",
                        note_type="progress")
    print(report.to_table())
    for report in check_patient(".fhirqa/db", "p1"):          # every note of the patient in the note view
        print(report.counts())
"""

from __future__ import annotations

import time as _time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from fhirqa.agent.patient_rows import StorePatientRows
from fhirqa.consistency.extract import extract
from fhirqa.consistency.match import ItemIndex, Match
from fhirqa.consistency.model import Check, Entity, NoteContext
from fhirqa.consistency.report import NoteReport
from fhirqa.consistency.segment import segment
from fhirqa.consistency.timing import attach
from fhirqa.consistency.verify import verify
from fhirqa.consistency.vocab import Gazetteer, base_gazetteer, record_terms
from fhirqa.errors import FhirqaError
from fhirqa.store import Store

__all__ = ["NoteReport", "PatientChecker", "check_note", "check_patient", "note_kind"]

_VIEWS = ("observation", "medication", "condition", "procedure", "immunization")


def note_kind(note_type: str) -> str:
    """discharge, admission, nursing, progress or other, from a note type ("Discharge summary", "H&P", …)."""
    low = (note_type or "").lower()
    if "discharge" in low:
        return "discharge"
    if any(w in low for w in ("history and physical", "h&p", "admission", "emergency", "ed note", "ed provider")):
        return "admission"
    if "nurs" in low:
        return "nursing"
    if "progress" in low or "follow" in low or "result" in low:
        return "progress"
    return "other"


def _when(value: datetime | str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class PatientChecker:
    """Checks notes of one patient; the record is read once (per view) and reused across notes."""

    def __init__(self, store: Store | str | Path | None, patient_id: str, backend: Any = None,
                 connection: duckdb.DuckDBPyConnection | None = None, rows: Any = None) -> None:
        """``rows``: a question's own view of the record (``PatientRows``, e.g. as of its ``now``) to read
        instead of the store's; it is only read, never changed."""
        self.store = store if isinstance(store, Store) or store is None else Store(store)
        self.patient_id = patient_id.removeprefix("Patient/")
        # one connection (``Store.connect()``) can serve many patients; it is then the caller's to close
        self._own_rows = rows is None
        if rows is not None:
            self.rows = rows
        else:
            assert self.store is not None, "a store or rows to read"
            self.rows = StorePatientRows(connection if connection is not None else self.store, self.patient_id)
        self.index = ItemIndex(self.rows)
        self.backend = backend
        self._gazetteer: Gazetteer | None = None

    @property
    def gazetteer(self) -> Gazetteer:
        """The lexicon's names plus the patient's own item names."""
        if self._gazetteer is None:
            names: dict[str, list[str]] = {"medication": self.index.names("medication"),
                                           "condition": self.index.names("condition"),
                                           "procedure": self.index.names("procedure"),
                                           "immunization": self.index.names("immunization")}
            vitals = {r["name"] for r in self.rows.rows("observation") if r.get("category") == "vital-signs"}
            names["vital"] = sorted(vitals)
            names["lab"] = [n for n in self.index.names("observation") if n not in vitals]
            self._gazetteer = base_gazetteer().extended(record_terms(names))
        return self._gazetteer

    def encounter(self, ref: str | dict[str, Any] | None, note_time: datetime, kind: str) -> dict[str, Any] | None:
        """The encounter a note belongs to: the one named, else a stay holding (or, for a discharge, ending at) it."""
        if isinstance(ref, dict):
            return ref
        rows = self.rows.rows("encounter")
        if ref:
            # a bare id is an Encounter's; a typed ref is taken as written (a relational stay: admissions/12)
            wanted = ref if "/" in ref else f"Encounter/{ref}"
            return next((r for r in rows if r.get("ref") == wanted), None)
        slack = timedelta(days=1) if kind == "discharge" else timedelta(0)
        holding = [r for r in rows if r.get("start_time") and r["start_time"] - slack <= note_time
                   <= (r.get("end_time") or r["start_time"]) + slack]
        holding.sort(key=lambda r: (r.get("class_code") not in ("IMP", "EMER", "ACUTE", "OBSENC"), -r["start_time"].timestamp()))
        return holding[0] if holding else None

    def entities(self, text: str) -> list[Entity]:
        """The note's entities: rules offline, or the LLM path when a backend was given."""
        sections = segment(text)
        if self.backend is not None:
            from fhirqa.consistency.llm import extract_llm

            return extract_llm(text, self.backend, sections)
        return extract(text, self.gazetteer, sections)

    def check(self, text: str, note_time: datetime | str, note_type: str = "progress",
              encounter: str | dict[str, Any] | None = None, note_ref: str | None = None) -> NoteReport:
        """Check one note's text."""
        started = _time.perf_counter()
        moment = _when(note_time)
        kind = note_kind(note_type)
        enc = self.encounter(encounter, moment, kind)
        ctx = NoteContext(moment, kind, enc.get("start_time") if enc else None,
                          enc.get("end_time") if enc else None, enc.get("ref") if enc else None)
        entities = self.entities(text)
        attach(text, entities, ctx)
        for ent in entities:
            if ent.prior and not ent.skip and (ent.time is None or ent.time.kind == "default"):
                ent.skip = "prior value without a date"  # the note's own day is not when an earlier result was
        checks: list[Check] = []
        for ent in entities:
            if ent.skip:
                checks.append(verify(ent, Match(ent.view), []))
                continue
            match = self.index.find(ent)
            checks.append(verify(ent, match, self.rows.rows(match.view) if match.names else []))
        report = NoteReport(self.patient_id, moment, note_type, note_ref, ctx.encounter, text, checks)
        report.elapsed_ms = (_time.perf_counter() - started) * 1000
        return report

    def notes(self, note_ref: str | None = None) -> list[dict[str, Any]]:
        """The patient's notes with text, from the ``note`` view (time with the note's own UTC offset)."""
        rows = [dict(r) for r in self.rows.rows("note") if r.get("text")]  # copies: the rows may be shared
        if note_ref:
            wanted = {note_ref, f"DocumentReference/{note_ref}", f"DiagnosticReport/{note_ref}"}
            rows = [r for r in rows if r.get("ref") in wanted]
            if not rows:
                raise FhirqaError(f"no note {note_ref!r} with text for patient {self.patient_id}")
        offsets = self._offsets()
        for row in rows:
            raw = offsets.get(row["ref"])
            if raw and row.get("time") is not None:
                try:
                    row["time"] = datetime.fromisoformat(raw.replace("Z", "+00:00"))
                except ValueError:
                    pass
        return sorted(rows, key=lambda r: r.get("time") or datetime.min.replace(tzinfo=UTC))

    def _offsets(self) -> dict[str, str]:
        """Raw DocumentReference dates, so a note's day is read in its own time zone."""
        rows = getattr(self.rows, "inner", self.rows)  # an as-of view wraps the store's rows
        connect = getattr(rows, "_connection", None)
        if connect is None:
            return {}
        try:
            result = Store(Path(".")).query("SELECT ref, date FROM map_document_reference WHERE patient_id = ?",
                                            [self.patient_id], con=connect(), limit=1_000_000)
        except Exception:  # noqa: BLE001 - no documents: UTC days are used
            return {}
        return {ref: date for ref, date in result.rows if date}

    def close(self) -> None:
        """Release the store connection (rows given by the caller stay the caller's)."""
        if self._own_rows:
            self.rows.close()


def check_note(store: Store | str | Path | None, patient_id: str, note_text: str, note_time: datetime | str,
               note_type: str = "progress", encounter: str | dict[str, Any] | None = None, *,
               backend: Any = None, note_ref: str | None = None, rows: Any = None) -> NoteReport:
    """Check one note's text against the patient's record (``note_type``: discharge summary, H&P, progress…).

    ``rows``: the patient's record as a ``PatientRows`` to read instead of the store's (e.g. a patient of an
    OMOP/MIMIC database, :class:`fhirqa.sql.patient_rows.RelationalPatientRows`)."""
    checker = PatientChecker(store, patient_id, backend, rows=rows)
    try:
        return checker.check(note_text, note_time, note_type, encounter, note_ref)
    finally:
        checker.close()


def check_patient(store: Store | str | Path | None, patient_id: str, note_ref: str | None = None, *,
                  backend: Any = None, rows: Any = None) -> list[NoteReport]:
    """Check every note of the patient in the ``note`` view (or only ``note_ref``); ``rows`` as for :func:`check_note`."""
    checker = PatientChecker(store, patient_id, backend, rows=rows)
    try:
        return [checker.check(row["text"], row["time"], row.get("note_type") or "other", row.get("encounter_ref"),
                              row.get("ref")) for row in checker.notes(note_ref)]
    finally:
        checker.close()
