"""``fhirqa views``, ``fhirqa show PATIENT`` and ``fhirqa sql``: reading the store."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fhirqa.agent.relational import database_for, relational_databases
from fhirqa.cli.output import render
from fhirqa.cli.summary import patient_summary
from fhirqa.errors import FhirqaError
from fhirqa.store import Store


def register(commands: Any, db_default: str) -> None:
    """Add the read sub-commands."""
    p = commands.add_parser("views", help="list the canonical views and their row counts")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.set_defaults(handler=run_views)

    p = commands.add_parser("show", help="a readable summary of one patient's record",
                            description="A readable summary of one patient's record: from the views, or for a patient "
                            "found only in an OMOP or MIMIC-III database loaded beside them (ingest --omop/--mimic), from it.")
    p.add_argument("patient", metavar="PATIENT", help="patient id (or Patient/id)")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--limit", type=int, default=8, help="rows per section (default: %(default)s)")
    p.set_defaults(handler=run_show)

    p = commands.add_parser(
        "sql",
        help="run one read-only SQL query over the views",
        description="Run one SELECT over the canonical views (observation, medication, …), the mapped tables "
        "(map_*), facts and resources. Read-only, time-limited and row-capped.",
    )
    p.add_argument("query", metavar="SQL")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.add_argument("--limit", type=int, default=1000, help="row cap (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before the query is stopped")
    p.set_defaults(handler=run_sql)


def run_views(args: argparse.Namespace) -> int:
    """Print view names and row counts."""
    store = Store(args.db)
    counts = store.counts()
    print(render(["view", "rows"], sorted(counts.items()), args.format))
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a patient's summary: from the views, or from an OMOP/MIMIC database loaded beside them."""
    patient = args.patient.removeprefix("Patient/")
    try:
        print(patient_summary(Store(args.db), patient, args.limit))
    except FhirqaError:
        databases = relational_databases(Path(args.db))
        if not databases:
            raise
        database = database_for(Path(args.db), patient)
        if database is None:
            names = ", ".join(d.name for d in databases)
            raise FhirqaError(f"no patient {patient!r} in {args.db}: neither in the views nor in {names}") from None
        from fhirqa.sql.browse import RelationalPatient

        print(RelationalPatient(database, patient).summary(args.limit))
    return 0


def run_sql(args: argparse.Namespace) -> int:
    """Run a query and print its rows (and a note when the row cap was hit)."""
    result = Store(args.db).query(args.query, limit=args.limit, timeout_s=args.timeout)
    print(render(result.columns, result.rows, args.format))
    for note in result.notes:
        print(f"note: {note}")
    return 0
