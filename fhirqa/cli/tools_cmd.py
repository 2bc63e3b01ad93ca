"""``fhirqa conformance`` and ``fhirqa synth``: checking the engine and making example data."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError


def register(commands: Any, db_default: str) -> None:
    """Add the tool sub-commands."""
    p = commands.add_parser(
        "conformance", help="run the SQL-on-FHIR v2 conformance suite against fhirqa's ViewDefinition runner"
    )
    p.add_argument("tests", nargs="?", default="../shared/data/sql-on-fhir-v2/tests", help="suite folder")
    p.set_defaults(handler=run_conformance)

    p = commands.add_parser("synth", help="generate realistic synthetic FHIR R4 patients (seeded)")
    p.add_argument("--patients", type=int, default=5)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--format", choices=["bundle", "ndjson"], default="bundle")
    p.add_argument("--now", help="reference instant the records end at (ISO 8601)")
    p.set_defaults(handler=run_synth)


def run_conformance(args: argparse.Namespace) -> int:
    """Print the conformance report; exit 1 if a shareable case fails."""
    from fhirqa.viewdef.conformance import run_suite

    folder = Path(args.tests)
    if not folder.is_dir():
        raise FhirqaError(f"{folder}: no such folder (pass the path of sql-on-fhir-v2/tests)")
    report = run_suite(folder)
    print(report.format_text())
    return 0 if report.shareable_passed == report.shareable_total else 1


def run_synth(args: argparse.Namespace) -> int:
    """Write synthetic patients."""
    from fhirqa.synth.cli import main as synth_main

    argv = ["--patients", str(args.patients), "--seed", str(args.seed), "--out", args.out, "--format", args.format]
    if args.now:
        argv += ["--now", args.now]
    return synth_main(argv)
