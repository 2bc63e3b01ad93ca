"""Command line: ``python -m fhirqa.synth --patients N --seed S --out DIR [--format bundle|ndjson]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .patient import DEFAULT_NOW
from .writer import write_sample


def build_parser() -> argparse.ArgumentParser:
    """Argument parser (also reused by the project-level ``fhirqa synth`` command)."""
    p = argparse.ArgumentParser(
        prog="fhirqa synth", description="Generate realistic synthetic FHIR R4 patients."
    )
    p.add_argument("--patients", "-n", type=int, default=5, help="number of patients (default 5)")
    p.add_argument("--seed", "-s", type=int, default=7, help="random seed (default 7)")
    p.add_argument("--out", "-o", type=Path, required=True, help="output directory")
    p.add_argument(
        "--format",
        "-f",
        choices=["bundle", "ndjson"],
        default="bundle",
        help="bundle: one transaction Bundle per patient; ndjson: Bulk Data files per resource type",
    )
    p.add_argument(
        "--now", default=DEFAULT_NOW, help=f"end of the record window, ISO-8601 (default {DEFAULT_NOW})"
    )
    p.add_argument("--pretty", action="store_true", help="indent bundle JSON (default: one entry per line)")
    p.add_argument("--max-lines", type=int, default=100_000, help="NDJSON lines per file before splitting")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the generator; returns a process exit code."""
    args = build_parser().parse_args(argv)
    if args.patients < 0:
        print("--patients must be >= 0", file=sys.stderr)
        return 2
    started = time.perf_counter()
    counts = write_sample(
        args.out, args.patients, args.seed, args.format, args.now, args.max_lines, args.pretty
    )
    elapsed = time.perf_counter() - started
    if not args.quiet:
        total = sum(counts.values())
        print(
            f"wrote {args.patients} patients ({total} resources) to {args.out} as {args.format} in {elapsed:.2f}s"
        )
        for rtype, c in sorted(counts.items()):
            print(f"  {rtype:<26} {c:>8}")
    return 0
