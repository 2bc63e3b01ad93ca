"""``fhirqa upgrade``: bring a store up to this fhirqa (views and canonical maps) without re-ingesting."""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from fhirqa.errors import FhirqaError
from fhirqa.store import Store, ingest


def register(commands: Any, db_default: str) -> None:
    """Add the ``upgrade`` sub-command."""
    p = commands.add_parser(
        "upgrade",
        help="rebuild what this fhirqa changed (views, canonical maps) in a store, without re-ingesting",
        description="Bring a store written by an older fhirqa up to this one: canonical maps that are new or "
        "changed are re-run over the stored resources and views whose SQL changed are rebuilt, in one atomic "
        "generation. Any ingest does the same first; this runs it without new input.",
    )
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s, or $FHIRQA_DB)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Upgrade the store and say what was rebuilt (or that it was current)."""
    if not Store(args.db).exists():
        raise FhirqaError(f"{args.db}: no fhirqa store here (nothing to upgrade)")
    before = Store(args.db).manifest.generation
    report = ingest([], args.db)
    if args.json:
        print(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode())
    elif report.generation == before:
        print(f"{args.db}: already current (generation {before}); nothing to rebuild")
    else:
        print(f"{args.db}: generation {report.generation}")
        for note in report.notes:
            print(f"  {note}")
        if report.warnings:
            print(f"  {len(report.warnings):,} warnings, e.g. {report.warnings[0]}")
    return 0
