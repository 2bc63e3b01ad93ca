"""Ingest: stream records from sources, check them, stage them, commit one new generation."""

from __future__ import annotations

import gc
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from fhirqa.errors import IngestAborted
from fhirqa.normalize import native
from fhirqa.normalize.compartment import patient_of
from fhirqa.normalize.validate import InvalidResource, check_header
from fhirqa.project import data_dir
from fhirqa.sources.base import RawRecord, Source
from fhirqa.store import parallel
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
    unchanged: int = 0  # resources byte-identical to their stored copy (not re-flattened nor re-mapped)
    rejected: list[Rejection] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a source wants said that is not bad data
    quarantine: Path | None = None
    generation: int = 0
    changed: bool = False
    seconds: float = 0.0
    workers: int = 1  # processes that read the input
    native: bool = False  # the C walks did the per-resource work (fhirqa.normalize.native)

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
            "unchanged": self.unchanged,
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
            "workers": self.workers,
            "native": self.native,
        }


def _reject(report: IngestReport, record: RawRecord, reason: str, strict: bool) -> None:
    content: Any = record.resource if record.resource is not None else record.raw
    if isinstance(content, dict):
        try:
            orjson.dumps(content, default=str)
        except TypeError:  # e.g. an integer beyond 64 bits: keep it whole as text the quarantine can write
            content = json.dumps(content, default=str)
    report.rejected.append(Rejection(str(record.origin), reason, content))
    if strict:
        raise IngestAborted(f"{record.origin}: {reason} (--strict: nothing was stored)")


def ingest(
    sources: Iterable[Source],
    db: str | Path,
    *,
    strict: bool = False,
    progress: Progress | None = None,
    batch_size: int = 100_000,
    workers: int | None = 1,
) -> IngestReport:
    """Read every source into the store at ``db`` as one atomic, idempotent commit.

    Good records are kept, bad ones are reported and quarantined (``strict`` aborts instead and
    stores nothing). A crash at any point leaves the previous state of the store readable.
    ``workers``: processes that read files side by side (file sources only; ``None`` = as many as the
    cores and the input size justify); the store that results is the same as with one.
    """
    db = Path(db)
    started = time.perf_counter()
    with _bulk_gc():
        return _ingest(list(sources), db, strict=strict, progress=progress, batch_size=batch_size, started=started,
                       workers=workers)


@contextmanager
def _bulk_gc() -> Iterator[None]:
    """Collect cycles less often while millions of short-lived containers stream through.

    Parsed JSON holds no reference cycles (reference counting frees it); the collector's passes over
    it, and over every object already alive (frozen here), were ~5–10% of the ingest time.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 50_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _ingest(
    sources: list[Source], db: Path, *, strict: bool, progress: Progress | None, batch_size: int, started: float,
    workers: int | None = 1,
) -> IngestReport:
    report = IngestReport()
    mappings = load_mappings()
    views_dir = data_dir("views")
    with writer_lock(db):
        current = read_manifest(db)
        collect_garbage(db, current)
        staging = db / "tmp" / uuid.uuid4().hex
        stored = [db / rel for parts in current.files("resources").values() for rel in parts]
        plan = parallel.plan_files(sources) if workers != 1 else None
        groups = parallel.deal(plan[0], parallel.choose_workers(workers, plan[0])) if plan else []
        seq = 0
        try:
            report.workers = max(1, len(groups))
            report.native = native.WALK is not None
            if len(groups) > 1:
                assert plan is not None
                report.skipped_files.extend(plan[1])
                shards = parallel.stage_in_parallel(
                    groups, staging, batch_size, stored, strict, progress
                )
                problems = _merge_shards(report, shards)
                seq = sum(shard.records for shard in shards)
            else:
                index = HashIndex.of_files(stored) if stored else None
                stager = Stager(staging, mappings, batch_size, stored=index)
                for source in sources:
                    for record in source.records():
                        stage_record(record, stager, report, seq, strict)
                        seq += 1
                        if progress is not None and seq % 1000 == 0:
                            progress(seq)
                    report.skipped_files.extend(getattr(source, "skipped", []))
                    report.notes.extend(getattr(source, "notes", []))
                stager.flush()
                report.unchanged = stager.unchanged
                problems = stager.mapping_problems
            for ref, reason in problems:
                report.warnings.append(f"{ref}: not in the canonical views: {reason}")
            manifest, changes = build_generation(db, current, staging, mappings, views_dir)
            if manifest.generation != current.generation:  # new content, or views rebuilt after an upgrade
                write_manifest(db, manifest)
            for table, count in changes.remapped.items():
                report.notes.append(
                    f"{table}: made again from {count:,} stored resources (its canonical map is new or changed)"
                )
            for ref, reason in changes.mapping_problems:
                report.warnings.append(f"{ref}: not in the canonical views: {reason}")
            if manifest.generation != current.generation and not changes.any and not changes.remapped:
                report.notes.append("views rebuilt: their SQL changed since the store was built")
            report.written, report.removed = changes.written, changes.removed
            report.generation, report.changed = manifest.generation, changes.any
            collect_garbage(db, manifest)
        finally:
            report.quarantine = write_quarantine(db, report.rejected)
    if progress is not None:
        progress(seq)
    report.seconds = time.perf_counter() - started
    return report


def _merge_shards(report: IngestReport, shards: list[parallel.ShardResult]) -> list[tuple[str, str]]:
    """Fold the workers' findings into ``report`` (in input order); their mapping problems."""
    for shard in shards:
        report.read.update(shard.read)
        report.deletions += shard.deletions
        report.unchanged += shard.unchanged
    first = itemgetter(0)  # the seq: a stable sort keeps each record's own findings in their order
    report.rejected.extend(r for _, r in sorted((x for s in shards for x in s.rejected), key=first))
    report.warnings.extend(w for _, w in sorted((x for s in shards for x in s.warnings), key=first))
    return [m for _, m in sorted((x for s in shards for x in s.mapping_problems), key=first)]


def stage_record(record: RawRecord, stager: Stager, report: IngestReport, seq: int, strict: bool) -> None:
    """Check one record and stage it (or its deletion), or reject it into ``report`` (``strict``: raise)."""
    if record.problem is not None or record.resource is None:
        _reject(report, record, record.problem or "empty record", strict)
        return
    resource = record.resource
    if record.deleted:
        try:
            check_header(resource)
        except InvalidResource as exc:
            _reject(report, record, f"deletion of {exc}", strict)
            return
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
