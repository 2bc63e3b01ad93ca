"""The on-disk layout of a store and its manifest, the single pointer that makes commits atomic.

```
DB/
  manifest.json          which Parquet files hold each table (replaced atomically)
  gen/000007/…           files written by generation 7 (later generations reuse untouched ones)
  quarantine/*.ndjson    records that were rejected, with the reason
  tmp/                   staging of an ingest in progress (removed at the next ingest)
  .lock                  held by the one writer
```
A reader opens ``manifest.json`` and sees one consistent generation; a writer prepares a whole
generation, then swaps the manifest with ``os.replace``. Every table (``resources/<Type>``,
``facts/<Type>``, ``map/<table>``, ``view/<name>``) is a list of parts, each sorted by patient, so an
ingest that adds resources adds parts and leaves the stored ones as they are. A crash before the swap leaves the previous
generation readable; the leftovers are removed by the next writer.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import orjson

from fhirqa.errors import StoreError

MANIFEST = "manifest.json"
FORMAT_VERSION = 2
#: Formats this fhirqa reads (1: every table one file, written before tables had parts).
READABLE_FORMATS = (1, 2)

#: A table's files: one path (views, and every table of a format-1 store) or a list of parts.
Files = str | list[str]


def part_list(files: Files | None) -> list[str]:
    """The parts of a table entry, as a list (none for a missing entry)."""
    if files is None:
        return []
    return [files] if isinstance(files, str) else list(files)


@dataclass
class Manifest:
    """Tables of one generation: logical name (``resources/Observation``, ``view/observation``) → file(s)."""

    generation: int = 0
    created: str = ""
    tables: dict[str, Files] = field(default_factory=dict)
    #: Digest of the canonical map each mapped table was made with (``map_observation`` → digest); a map
    #: whose digest differs (fhirqa upgraded, a map edited or added) is re-run over the stored resources.
    maps: dict[str, str] = field(default_factory=dict)

    def files(self, prefix: str) -> dict[str, list[str]]:
        """Parts of the tables whose logical name starts with ``prefix/``, keyed by the rest of the name."""
        start = prefix + "/"
        return {k[len(start) :]: part_list(v) for k, v in self.tables.items() if k.startswith(start)}

    def parts(self, key: str) -> list[str]:
        """The files of table ``key`` (relative to the store), none when it is absent."""
        return part_list(self.tables.get(key))

    def all_files(self) -> list[str]:
        """Every file the generation references."""
        return [rel for value in self.tables.values() for rel in part_list(value)]

    def to_json(self) -> bytes:
        """The manifest as JSON bytes."""
        return orjson.dumps(
            {"format": FORMAT_VERSION, "generation": self.generation, "created": self.created, "tables": self.tables,
             "maps": self.maps},
            option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
        )


def read_manifest(db: Path) -> Manifest:
    """The current manifest of ``db`` (an empty one for a new store)."""
    path = db / MANIFEST
    if not path.exists():
        return Manifest()
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"{path}: corrupt manifest ({exc})") from exc
    if data.get("format") not in READABLE_FORMATS:
        raise StoreError(
            f"{path}: store format {data.get('format')!r}, this fhirqa reads formats {list(READABLE_FORMATS)}"
        )
    return Manifest(int(data["generation"]), str(data.get("created", "")), dict(data["tables"]),
                    dict(data.get("maps") or {}))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_generation(db: Path, manifest: Manifest) -> None:
    """Flush the files this generation wrote, and their folders, to disk before the manifest names them.

    Without it a power cut after the manifest swap could leave the manifest pointing at files whose
    bytes never reached the disk (filesystems order a rename's metadata, not other files' data).
    """
    folder = generation_dir(db, manifest.generation)
    written = [db / rel for rel in manifest.all_files() if (db / rel).is_relative_to(folder)]
    for path in written:
        _fsync(path)
    for directory in sorted({p.parent for p in written} | {folder, folder.parent}, key=lambda p: -len(p.parts)):
        if directory.exists():
            _fsync(directory)


def write_manifest(db: Path, manifest: Manifest) -> None:
    """Atomically replace the manifest: the generation's files synced, then write, fsync, rename, fsync the folder."""
    sync_generation(db, manifest)
    manifest.created = datetime.now(UTC).isoformat(timespec="seconds")
    tmp = db / (MANIFEST + ".tmp")
    with tmp.open("wb") as handle:
        handle.write(manifest.to_json())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, db / MANIFEST)
    _fsync(db)


def generation_dir(db: Path, generation: int) -> Path:
    """Folder of the files a generation writes."""
    return db / "gen" / f"{generation:06d}"


@contextmanager
def writer_lock(db: Path) -> Iterator[None]:
    """Hold the store's single-writer lock; fail at once with a clear message if another ingest runs."""
    db.mkdir(parents=True, exist_ok=True)
    handle = (db / ".lock").open("a+")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise StoreError(f"{db}: another fhirqa process is writing to this store") from exc
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def collect_garbage(db: Path, manifest: Manifest) -> None:
    """Remove generation files the manifest no longer references and any staging left by a crash.

    Only a writer holding the lock calls this, after its own commit or before its own staging.
    """
    shutil.rmtree(db / "tmp", ignore_errors=True)
    # Compared as paths relative to the store, as the manifest writes them (no resolve(): a syscall per
    # file, and a store has many parts).
    live = {os.path.normpath(rel) for rel in manifest.all_files()}
    gen_root = db / "gen"
    if not gen_root.exists():
        return
    for gen in gen_root.iterdir():
        files = [(path, os.path.relpath(path, db)) for path in gen.rglob("*") if path.is_file()]
        if not any(rel in live for _, rel in files):
            shutil.rmtree(gen, ignore_errors=True)
            continue
        for path, rel in files:
            if rel not in live:
                path.unlink(missing_ok=True)
