"""``fhirqa check PATIENT``: check a patient's notes against the structured record (note–table consistency)."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError


def register(commands: Any, db_default: str) -> None:
    """Add the ``check`` sub-command."""
    p = commands.add_parser(
        "check",
        help="check a patient's notes against the structured record",
        description="Check what a patient's clinical notes say (values, units, times, drugs, diagnoses, "
        "procedures) against the canonical views. Every entity is consistent, inconsistent (with the "
        "field that disagrees: value, unit, time, existence) or unverifiable (negated, family history, "
        "plan…). Notes come from the note view; --text checks a note given as a file instead. A patient of an "
        "OMOP or MIMIC-III database loaded beside the views (ingest --omop/--mimic) is checked the same way: "
        "notes from note/noteevents, the record from the database's tables (refs as table/row id).",
    )
    p.add_argument("patient", metavar="PATIENT", help="patient id (or Patient/id)")
    p.add_argument("--note", help="only this note (DocumentReference id or ref; note/ID or noteevents/ID for OMOP/MIMIC)")
    p.add_argument("--text", help="check the note in this text file instead of the stored notes")
    p.add_argument("--time", help="with --text: when the note was written (ISO 8601; default: now)")
    p.add_argument("--type", default="Progress note", help="with --text: note type (default: %(default)s)")
    p.add_argument("--encounter", help="with --text: the encounter (Encounter/id) the note belongs to")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument("--show", choices=["all", "checked", "inconsistent"], default="checked",
                   help="table rows to show (default: %(default)s: consistent and inconsistent)")
    p.add_argument("--backend", default="offline", help="offline rules (default), or an LLM backend for extraction")
    p.add_argument("--model", help="model name for an LLM backend")
    p.set_defaults(handler=run)


def _backend(args: argparse.Namespace) -> Any:
    if args.backend == "offline":
        return None
    from fhirqa.agent.backends.base import get_backend

    return get_backend(args.backend, **({"model": args.model} if args.model else {}))


def run(args: argparse.Namespace) -> int:
    """Check and print; exit 1 when something is inconsistent."""
    from fhirqa.consistency import check_note, check_patient
    from fhirqa.sql.patient_rows import record_beside

    patient = args.patient.removeprefix("Patient/")
    backend = _backend(args)
    rows = record_beside(args.db, patient)  # a patient only an OMOP/MIMIC database beside the views holds
    store = None if rows is not None else args.db
    if args.text:
        path = Path(args.text)
        if not path.is_file():
            raise FhirqaError(f"{path}: no such file")
        when = args.time or datetime.now(UTC).isoformat()
        reports = [check_note(store, patient, path.read_text(encoding="utf-8"), when, args.type, args.encounter,
                              backend=backend, note_ref=str(path), rows=rows)]
    else:
        reports = check_patient(store, patient, args.note, backend=backend, rows=rows)
        if not reports:
            where = f"{args.db} ({rows.source})" if rows is not None else args.db
            raise FhirqaError(f"patient {patient} has no notes with text in {where}")
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], ensure_ascii=False, indent=1, default=str))
    else:
        for report in reports:
            print(report.to_table(args.show))
            print()
        flagged = sum(len(r.inconsistent) for r in reports)
        checked = sum(r.counts()["consistent"] + r.counts()["inconsistent"] for r in reports)
        print(f"{len(reports)} note(s), {checked} entities checked, {flagged} inconsistent")
    return 1 if any(r.inconsistent for r in reports) else 0
