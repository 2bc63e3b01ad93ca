"""``fhirqa ingest``: files, folders and FHIR server URLs into a store."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from typing import Any

import orjson

from fhirqa.cli.output import render
from fhirqa.errors import FhirqaError
from fhirqa.sources.base import Source
from fhirqa.sources.files import FileSource
from fhirqa.store import IngestReport, ingest


def register(commands: Any, db_default: str) -> None:
    """Add the ``ingest`` sub-command."""
    p = commands.add_parser(
        "ingest",
        help="read FHIR files, folders or a FHIR server into the store",
        description="Read FHIR R4 Bundles, NDJSON, single resources, folders (recursively, .gz too) or a FHIR "
        "server base URL into the store. Bad records are reported and quarantined; good ones are kept.",
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="file, folder, or FHIR base URL (http[s]://…)")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s, or $FHIRQA_DB)")
    p.add_argument("--patient", help="with a URL: pull one patient via Patient/{id}/$everything")
    p.add_argument("--since", help="with a URL: only resources updated since this instant (ISO 8601)")
    p.add_argument("--bulk", action="store_true", help="with a URL: use Bulk Data $export")
    p.add_argument("--types", help="with a URL: comma-separated resource types to pull")
    p.add_argument("--token", help="bearer token for the server (or $FHIRQA_TOKEN)")
    p.add_argument("--smart-client-id", help="SMART Backend Services client id")
    p.add_argument("--smart-key", help="PEM private key file for SMART Backend Services")
    p.add_argument("--omop", action="store_true",
                   help="the sources are OMOP CDM CSV folders/zips: load them into DB/omop.duckdb; `fhirqa ask --db DB` "
                   "answers its persons (by person_id or person_source_value) when the FHIR views do not hold them")
    p.add_argument("--mimic", action="store_true",
                   help="the sources are MIMIC-III CSV folders/zips: load them into DB/mimic.duckdb (answered like --omop)")
    p.add_argument("--strict", action="store_true", help="abort (store nothing) at the first bad record")
    p.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="processes that read files side by side (default: as many as the cores when the files "
                   "add up to 256 MB or more; 1: one process). The store is the same either way.")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=run)


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"--workers takes a whole number of processes (1 or more), not {text!r}")
    return count


def _sources(args: argparse.Namespace) -> list[Source]:
    files = [s for s in args.sources if not s.startswith(("http://", "https://"))]
    urls = [s for s in args.sources if s.startswith(("http://", "https://"))]
    sources: list[Source] = [FileSource(files)] if files else []
    if urls:
        from fhirqa.sources.rest import open_server_source  # imported late: httpx only when needed

        for url in urls:
            sources.append(
                open_server_source(
                    url,
                    patient=args.patient,
                    since=args.since,
                    bulk=args.bulk,
                    types=args.types.split(",") if args.types else None,
                    token=args.token or os.environ.get("FHIRQA_TOKEN"),
                    smart_client_id=args.smart_client_id,
                    smart_key_path=args.smart_key,
                )
            )
    elif args.patient or args.since or args.bulk:
        raise FhirqaError("--patient, --since and --bulk apply to a FHIR server URL source")
    return sources


def _run_relational(args: argparse.Namespace) -> int:
    """OMOP / MIMIC sources go to a DuckDB database beside the store, for `fhirqa ask` and `fhirqa omop ask`."""
    from pathlib import Path

    from fhirqa.sql.load import ingest_mimic, ingest_omop

    kind = "mimic" if args.mimic else "omop"
    out = Path(args.db) / f"{kind}.duckdb"
    out.parent.mkdir(parents=True, exist_ok=True)
    for source in args.sources:
        report = (ingest_mimic if args.mimic else ingest_omop)(source, out)
        print(report.summary())
    print(f"→ {out} (ask with: fhirqa omop ask QUESTION --database {out} --patient ID)")
    return 0


def run(args: argparse.Namespace) -> int:
    """Ingest and print a summary; exit 1 when records were rejected, 0 otherwise."""
    if args.omop or args.mimic:
        return _run_relational(args)
    progress = None
    bar = None
    if sys.stderr.isatty() and not args.json:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), transient=True)
        task = bar.add_task("reading…", total=None)
        bar.start()

        def progress(count: int) -> None:
            bar.update(task, description=f"read {count:,} records")

    try:
        report = ingest(_sources(args), args.db, strict=args.strict, progress=progress, workers=args.workers)
    finally:
        if bar is not None:
            bar.stop()
    if args.json:
        print(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        print(summary(report, args.db))
    return 1 if report.rejected else 0


def _how(report: IngestReport) -> str:
    """", 4 processes", ", Python walks": what a reader of the rate should know about how it was reached."""
    parts = [f"{report.workers} processes"] if report.workers > 1 else []
    if not report.native:
        parts.append("Python walks")  # no C extension built, or FHIRQA_PURE_PYTHON
    return "".join(f", {p}" for p in parts)


def summary(report: IngestReport, db: str) -> str:
    """A readable ingest summary: counts per type, rejections with reasons, time."""
    lines = []
    types = sorted(set(report.read) | set(report.written))
    rows = [(t, report.read.get(t, 0), report.written.get(t, 0), report.removed.get(t, 0)) for t in types]
    if rows:
        lines.append(render(["resource type", "read", "stored (new/changed)", "replaced/deleted"], rows))
    rate = report.total_read / report.seconds if report.seconds else 0
    state = f"generation {report.generation}" if report.changed else "store unchanged (nothing new)"
    lines.append(
        f"{report.total_read:,} resources read, {len(report.rejected):,} rejected, "
        f"{report.deletions:,} deletions, in {report.seconds:.1f} s ({rate:,.0f}/s{_how(report)}) → {db}: {state}"
    )
    if report.rejected:
        reasons = Counter(r.reason.split(":")[0] for r in report.rejected)
        lines.append("rejected: " + "; ".join(f"{n} × {reason}" for reason, n in reasons.most_common(5)))
        for rejection in report.rejected[:10]:
            lines.append(f"  {rejection.origin}: {rejection.reason}")
        if len(report.rejected) > 10:
            lines.append(f"  … and {len(report.rejected) - 10} more")
        lines.append(f"quarantined in {report.quarantine}")
    if report.warnings:
        lines.append(f"{len(report.warnings):,} warnings, e.g. {report.warnings[0]}")
    for note in report.notes:
        lines.append(f"note: {note}")
    if report.skipped_files:
        lines.append(f"skipped {len(report.skipped_files)} non-FHIR file(s): {', '.join(report.skipped_files[:3])}")
    return "\n".join(lines)
