"""Stage input files in several processes: the per-record work (parse, check, flatten, map) is independent.

Files are dealt into shards of about equal size; each worker process stages its shard into the same
staging folder under its own batch tag, then the one generation build merges everything, exactly as
after a sequential read. Records keep the order a sequential read would give them (``seq`` = file
number in the high 32 bits, record number in the file in the low ones), so the merge rules pick the
same winners. Workers are started with ``spawn`` (never ``fork``: the server runs ingests on threads).
"""

from __future__ import annotations

import heapq
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fhirqa.sources.base import Source
from fhirqa.sources.files import FileSource
from fhirqa.store.quarantine import Rejection

#: Below this much input a second process costs more (start-up, imports, a merge of more files) than it saves.
MIN_PARALLEL_BYTES = 256 << 20
MAX_WORKERS = 8
_RECORD_BITS = 32  # seq = file number << 32 | record number in the file


@dataclass
class ShardResult:
    """What one worker staged and found."""

    read: Counter[str] = field(default_factory=Counter)
    records: int = 0
    deletions: int = 0
    unchanged: int = 0
    # each with the seq of the record it is about, so the parent can put every worker's findings in input order
    rejected: list[tuple[int, Rejection]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    mapping_problems: list[tuple[int, tuple[str, str]]] = field(default_factory=list)


def cores() -> int:
    """Cores this process may run on (affinity and cgroups), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def plan_files(sources: list[Source]) -> tuple[list[Path], list[str]] | None:
    """Every file of file-only ``sources`` in the order a sequential read takes them, and the skipped ones.

    None when a source is not a set of files (a FHIR server is read by one process).
    """
    if not sources or not all(type(s) is FileSource for s in sources):
        return None
    files: list[Path] = []
    skipped: list[str] = []
    for source in sources:
        assert isinstance(source, FileSource)
        files.extend(source.files())
        skipped.extend(source.skipped)
        source.skipped.clear()  # a sequential read after all lists them again
    return files, skipped


def choose_workers(requested: int | None, files: list[Path]) -> int:
    """How many processes to stage ``files`` with: ``requested``, or (None) what the input and cores justify."""
    if requested is not None:
        return max(1, min(requested, len(files), MAX_WORKERS * 4))
    if len(files) < 2 or cores() < 2:
        return 1
    size = sum(_size(p) for p in files)
    if size < MIN_PARALLEL_BYTES:
        return 1
    return min(cores(), len(files), MAX_WORKERS)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def deal(files: list[Path], shards: int) -> list[list[tuple[int, str]]]:
    """Deal (file number, path) into ``shards`` groups of about equal bytes, largest files first."""
    heap = [(0, i) for i in range(shards)]
    groups: list[list[tuple[int, str]]] = [[] for _ in range(shards)]
    for number, path in sorted(enumerate(files), key=lambda item: -_size(item[1])):
        load, shard = heapq.heappop(heap)
        groups[shard].append((number, str(path)))
        heapq.heappush(heap, (load + max(1, _size(path)), shard))
    for group in groups:
        group.sort()  # each worker reads its files in input order
    return [g for g in groups if g]


# Shared with the workers at start-up: records read so far (for progress) and a stop flag (--strict).
_SHARED: tuple[Any, Any] | None = None


def _init_worker(counter: Any, stop: Any) -> None:
    global _SHARED
    _SHARED = (counter, stop)


def _stage_shard(files: list[tuple[int, str]], staging: str, tag: str, batch_size: int, stored: list[str],
                 strict: bool) -> ShardResult:
    """Worker: stage ``files`` into ``staging`` with batch tag ``tag``; what it read and rejected."""
    from fhirqa.store.ingest import IngestReport, stage_record  # late: this module is imported by ingest
    from fhirqa.store.mappings import load_mappings
    from fhirqa.store.staging import HashIndex, Stager

    assert _SHARED is not None
    counter, stop = _SHARED
    index = HashIndex.of_files(Path(p) for p in stored) if stored else None
    stager = Stager(Path(staging), load_mappings(), batch_size, stored=index, tag=tag)
    report = IngestReport()
    result = ShardResult()
    records = 0
    for number, path in files:
        for position, record in enumerate(FileSource([path]).records()):
            seq = (number << _RECORD_BITS) | position
            marks = len(report.rejected), len(report.warnings), len(stager.mapping_problems)
            stage_record(record, stager, report, seq, strict)
            result.rejected.extend((seq, r) for r in report.rejected[marks[0]:])
            result.warnings.extend((seq, w) for w in report.warnings[marks[1]:])
            result.mapping_problems.extend((seq, m) for m in stager.mapping_problems[marks[2]:])
            records += 1
            if records % 1000 == 0:
                with counter.get_lock():
                    counter.value += 1000
                if stop.value:
                    return ShardResult()  # another worker aborted (--strict): nothing of this one counts
    stager.flush()
    with counter.get_lock():
        counter.value += records % 1000
    result.read, result.records, result.deletions, result.unchanged = (
        report.read, records, report.deletions, stager.unchanged
    )
    return result


def stage_in_parallel(
    groups: list[list[tuple[int, str]]], staging: Path, batch_size: int, stored: Iterable[Path], strict: bool,
    progress: Callable[[int], None] | None,
) -> list[ShardResult]:
    """Stage each group in its own process; the results in group order. Re-raises a worker's error."""
    context = multiprocessing.get_context("spawn")
    counter = context.Value("q", 0)
    stop = context.Value("b", 0)
    stored_paths = [str(p) for p in stored]
    with ProcessPoolExecutor(len(groups), mp_context=context, initializer=_init_worker,
                             initargs=(counter, stop)) as pool:
        futures = [
            pool.submit(_stage_shard, group, str(staging), f"w{i:03d}", batch_size, stored_paths, strict)
            for i, group in enumerate(groups)
        ]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_EXCEPTION)
            if progress is not None:
                progress(int(counter.value))
            failed = [f for f in done if f.exception() is not None]
            if failed:
                stop.value = 1  # the others stop at their next thousand records
                for future in pending:
                    future.cancel()
                raise failed[0].exception()  # type: ignore[misc]
            time.sleep(0)
        return [f.result() for f in futures]
