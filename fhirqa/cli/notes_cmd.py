"""``fhirqa notes PATIENT``: a patient's clinical notes, listed or searched (``--search``)."""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from fhirqa.cli.output import render
from fhirqa.errors import FhirqaError


def register(commands: Any, db_default: str) -> None:
    """Add the ``notes`` sub-command."""
    p = commands.add_parser(
        "notes",
        help="list or search one patient's clinical notes",
        description="List a patient's notes (DocumentReference and DiagnosticReport text), or search them with "
        "--search: hybrid vector + full-text retrieval over sentence-aware chunks, indexed on first use in "
        "DB/notes.lance and updated when notes change. --build indexes every patient's notes at once.",
    )
    p.add_argument("patient", nargs="?", metavar="PATIENT", help="patient id (or Patient/id)")
    p.add_argument("--search", metavar="TEXT", help="search the notes for TEXT instead of listing them")
    p.add_argument("-k", type=int, default=5, help="with --search: passages to show (default: %(default)s)")
    p.add_argument("--since", help="with --search: earliest note date (ISO)")
    p.add_argument("--until", help="with --search: latest note date (ISO; a bare date includes the day)")
    p.add_argument("--section", help="with --search: only this section (e.g. 'assessment and plan', 'labs')")
    p.add_argument("--mode", choices=["hybrid", "vector", "text"], default="hybrid",
                   help="with --search: ranking (default: %(default)s)")
    p.add_argument("--show", metavar="REF", help="print the full text of one note (its ref)")
    p.add_argument("--build", action="store_true", help="index the notes of every patient (or of PATIENT) now")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """List, show, search or build."""
    from fhirqa.notes import NoteIndex, notes_for
    from fhirqa.store import Store

    store = Store(args.db)
    patient = args.patient.removeprefix("Patient/") if args.patient else None
    if args.build:
        report = NoteIndex(store).build([patient] if patient else None, progress=lambda m: print(m, flush=True))
        print(f"{report.patients:,} patient(s), {report.notes:,} notes: {report.embedded_notes:,} (re)indexed as "
              f"{report.chunks:,} chunks, {report.removed_notes:,} removed, in {report.seconds:.1f} s "
              f"→ {store.db / 'notes.lance'}")
        return 0
    if patient is None:
        raise FhirqaError("give a PATIENT (or --build to index every patient's notes)")
    if args.search:
        hits = NoteIndex(store).search(patient, args.search, k=args.k, since=args.since, until=args.until,
                                       section=args.section, mode=args.mode)
        if args.json:
            print(orjson.dumps([{**h.__dict__, "quote": h.quote(args.search)} for h in hits],
                               default=str, option=orjson.OPT_INDENT_2).decode())
            return 0
        if not hits:
            print("no matching passage")
        for rank, hit in enumerate(hits, 1):
            print(f"#{rank}  {hit.date}  {hit.note_type or ''}  [{hit.section}]  {hit.ref}  score {hit.score:.4f}")
            print(f"    » {hit.quote(args.search)}")
        return 0
    notes = notes_for(store, patient)
    if args.show:
        chosen = [n for n in notes if args.show in (n.ref, n.note_id)]
        if not chosen:
            raise FhirqaError(f"no note {args.show!r} for patient {patient}")
        for note in chosen:
            print(f"{note.ref}  {note.time.isoformat() if note.time else ''}  {note.note_type or ''}  "
                  f"{note.author or ''}\n\n{note.text}\n")
        return 0
    rows = [(n.date, n.note_type, n.author, n.ref, len(n.text), n.text.replace("\n", " ")[:60]) for n in notes]
    if args.json:
        print(orjson.dumps([{**n.__dict__} for n in notes], default=str, option=orjson.OPT_INDENT_2).decode())
    else:
        print(render(["date", "type", "author", "ref", "chars", "begins"], rows))
        print(f"{len(notes)} note(s)")
    return 0
