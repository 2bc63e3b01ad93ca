"""``fhirqa conformance``, ``fhirqa eval`` and ``fhirqa synth``: checking the engine and making example data."""

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

    p = commands.add_parser(
        "eval",
        help="score question answering against a gold question set, per category",
        description="Answer every question of a JSONL gold set (evals/README.md) from the store and print "
        "accuracy per category, latency, and every failure.",
    )
    p.add_argument("--questions", default="evals/synthea-r4.jsonl", help="JSONL question set (default: %(default)s)")
    p.add_argument("--db", default=db_default, help="store folder holding the patients (default: %(default)s)")
    p.add_argument("--backend", default="offline", help="answering backend (default: %(default)s)")
    p.add_argument("--category", action="append", help="only this category (repeatable)")
    p.add_argument("--limit", type=int, help="at most N questions")
    p.add_argument("--failures", help="write failures to this JSONL file")
    p.add_argument("--json", help="write the full report as JSON")
    p.add_argument("--by-template", action="store_true", help="also print accuracy per question pattern")
    p.set_defaults(handler=run_eval)

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


def run_eval(args: argparse.Namespace) -> int:
    """Run the evaluation (fhirqa.evaluation.run) with the CLI's arguments."""
    from fhirqa.evaluation.run import main as eval_main

    if not Path(args.questions).is_file():
        raise FhirqaError(f"{args.questions}: no such question set")
    argv = ["--questions", args.questions, "--db", args.db, "--backend", args.backend]
    for category in args.category or []:
        argv += ["--category", category]
    for flag in ("limit", "failures", "json"):
        if getattr(args, flag) is not None:
            argv += [f"--{flag}", str(getattr(args, flag))]
    if args.by_template:
        argv.append("--by-template")
    return eval_main(argv)


def run_synth(args: argparse.Namespace) -> int:
    """Write synthetic patients."""
    from fhirqa.synth.cli import main as synth_main

    argv = ["--patients", str(args.patients), "--seed", str(args.seed), "--out", args.out, "--format", args.format]
    if args.now:
        argv += ["--now", args.now]
    return synth_main(argv)
