"""Ingest: stream records from sources, check them, stage them, commit one new generation."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fhirqa.errors import IngestAborted
from fhirqa.normalize.compartment import patient_of
from fhirqa.normalize.validate import InvalidResource, check_header
from fhirqa.project import data_dir
from fhirqa.sources.base import RawRecord, Source
from fhirqa.store.generation import build_generation
from fhirqa.store.layout import collect_garbage, read_manifest, write_manifest, writer_lock
from fhirqa.store.mappings import load_mappings
from fhirqa.store.quarantine import Rejection, write_quarantine
from fhirqa.store.staging import HashIndex, Stager

#: Called with the running count of records read, for progress bars.
Progress = Callable[[int], None]


@dataclass
class IngestReport:
    """What an ingest read, stored, rejected and warned about."""

    read: Counter[str] = field(default_factory=Counter)  # resources read per type
    written: dict[str, int] = field(default_factory=dict)  # new or changed resources stored per type
    removed: dict[str, int] = field(default_factory=dict)  # resources deleted or replaced per type
    deletions: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a source wants said that is not bad data
    quarantine: Path | None = None
    generation: int = 0
    changed: bool = False
    seconds: float = 0.0

    @property
    def total_read(self) -> int:
        """Resources read, all types."""
        return sum(self.read.values())

    def as_dict(self) -> dict:
        """A JSON-ready summary."""
        return {
            "read": dict(self.read),
            "written": self.written,
            "removed": self.removed,
            "deletions": self.deletions,
            "rejected": len(self.rejected),
            "rejections": [{"origin": r.origin, "reason": r.reason} for r in self.rejected[:100]],
            "warnings": self.warnings[:100],
            "warning_count": len(self.warnings),
            "skipped_files": self.skipped_files,
            "notes": self.notes,
            "quarantine": str(self.quarantine) if self.quarantine else None,
            "generation": self.generation,
            "changed": self.changed,
            "seconds": round(self.seconds, 3),
        }


def _reject(report: IngestReport, record: RawRecord, reason: str, strict: bool) -> None:
    content = record.resource if record.resource is not None else record.raw
    report.rejected.append(Rejection(str(record.origin), reason, content))
    if strict:
        raise IngestAborted(f"{record.origin}: {reason} (--strict: nothing was stored)")


def ingest(
    sources: Iterable[Source],
    db: str | Path,
    *,
    strict: bool = False,
    progress: Progress | None = None,
    batch_size: int = 20_000,
) -> IngestReport:
    """Read every source into the store at ``db`` as one atomic, idempotent commit.

    Good records are kept, bad ones are reported and quarantined (``strict`` aborts instead and
    stores nothing). A crash at any point leaves the previous state of the store readable.
    """
    db = Path(db)
    started = time.perf_counter()
    report = IngestReport()
    mappings = load_mappings()
    views_dir = data_dir("views")
    with writer_lock(db):
        current = read_manifest(db)
        collect_garbage(db, current)
        staging = db / "tmp" / uuid.uuid4().hex
        stored = current.files("resources")
        index = HashIndex.of_files(db / rel for rel in stored.values()) if stored else None
        stager = Stager(staging, mappings, batch_size, stored=index)
        seq = 0
        try:
            for source in sources:
                for record in source.records():
                    _stage_record(record, stager, report, seq, strict)
                    seq += 1
                    if progress is not None and seq % 1000 == 0:
                        progress(seq)
                report.skipped_files.extend(getattr(source, "skipped", []))
                report.notes.extend(getattr(source, "notes", []))
            stager.flush()
            for ref, reason in stager.mapping_problems:
                report.warnings.append(f"{ref}: not in the canonical views: {reason}")
            manifest, changes = build_generation(db, current, staging, mappings, views_dir)
            if changes.any:
                write_manifest(db, manifest)
            report.written, report.removed = changes.written, changes.removed
            report.generation, report.changed = manifest.generation, changes.any
            collect_garbage(db, manifest)
        finally:
            report.quarantine = write_quarantine(db, report.rejected)
    if progress is not None:
        progress(seq)
    report.seconds = time.perf_counter() - started
    return report


def _stage_record(record: RawRecord, stager: Stager, report: IngestReport, seq: int, strict: bool) -> None:
    if record.problem is not None or record.resource is None:
        _reject(report, record, record.problem or "empty record", strict)
        return
    resource = record.resource
    if record.deleted:
        stager.add(resource, None, str(record.origin), seq, deleted=True)
        report.deletions += 1
        return
    try:
        rtype, _ = check_header(resource)
        stager.add(resource, patient_of(resource), str(record.origin), seq, deleted=False)
    except InvalidResource as exc:  # the stager checks the body in the walk that emits the facts
        _reject(report, record, str(exc), strict)
        return
    for warning in record.warnings:
        report.warnings.append(f"{record.origin}: {warning}")
    report.read[rtype] += 1
