"""FHIR resources from files: Bundles, NDJSON (Bulk Data output), single resources, folders, ``.gz``.

NDJSON is streamed line by line, so a multi-gigabyte export never has to fit in memory. A JSON
document (a Bundle or a single resource) is read whole: that is what the format allows.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from fhirqa.errors import SourceError
from fhirqa.normalize.bundle import iter_bundle
from fhirqa.normalize.references import rewrite_references
from fhirqa.sources.base import Origin, RawRecord

_NDJSON_SUFFIXES = (".ndjson", ".jsonl")
_JSON_SUFFIXES = (".json",)
_MAX_RAW_KEPT = 20_000  # characters of a bad line kept in quarantine: enough to see the problem


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def _logical_suffix(path: Path) -> str:
    """The format suffix, looking through ``.gz`` (``Observation.ndjson.gz`` → ``.ndjson``)."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return Path(name).suffix.lower()


def is_fhir_file(path: Path) -> bool:
    """True for the file names this source reads (``.json``, ``.ndjson``, ``.jsonl``, each optionally ``.gz``)."""
    return _logical_suffix(path) in _NDJSON_SUFFIXES + _JSON_SUFFIXES


def records_from_object(obj: Any, location: str, line: int | None = None) -> Iterator[RawRecord]:
    """Records from one parsed JSON value: a Bundle is unpacked, anything else is one record."""
    if isinstance(obj, dict) and obj.get("resourceType") == "Bundle" and "entry" in obj:
        yield from iter_bundle(obj, location, line)
    elif isinstance(obj, dict):
        dangling: list[str] = []
        rewrite_references(obj, {}, dangling)
        record = RawRecord(Origin(location, line), resource=obj)
        if dangling:
            record.warnings.append("unresolved bundle-local reference(s): " + ", ".join(dangling[:5]))
        yield record
    else:
        yield RawRecord(
            Origin(location, line),
            problem=f"expected a JSON object, found {type(obj).__name__}",
            raw=orjson.dumps(obj).decode()[:_MAX_RAW_KEPT],
        )


def iter_ndjson(stream: IO[bytes], location: str) -> Iterator[RawRecord]:
    """Records from an NDJSON byte stream, one per non-blank line, numbered from 1."""
    for number, line in enumerate(stream, start=1):
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            yield RawRecord(
                Origin(location, number),
                problem=f"malformed JSON: {exc}",
                raw=line.decode("utf-8", "replace")[:_MAX_RAW_KEPT].rstrip("\n"),
            )
            continue
        yield from records_from_object(obj, location, number)


def _looks_like_html(data: bytes) -> bool:
    head = data[:200].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def iter_json_document(data: bytes, location: str) -> Iterator[RawRecord]:
    """Records from a whole JSON document; falls back to NDJSON when the text is one object per line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if data.lstrip().startswith(b"{") and data.count(b"\n") > 0:
            first_line = data.lstrip().split(b"\n", 1)[0]
            try:
                orjson.loads(first_line)
            except orjson.JSONDecodeError:
                pass
            else:
                yield from iter_ndjson(io.BytesIO(data), location)
                return
        reason = "an HTML page, not FHIR JSON" if _looks_like_html(data) else f"malformed JSON: {exc}"
        yield RawRecord(Origin(location), problem=reason, raw=data[:_MAX_RAW_KEPT].decode("utf-8", "replace"))
        return
    yield from records_from_object(obj, location)


class FileSource:
    """Resources from files and folders (recursively); see the module docstring for formats."""

    def __init__(self, paths: Iterable[str | Path]) -> None:
        self.paths = [Path(p) for p in paths]
        self.skipped: list[str] = []  # files in folders that are not FHIR data (README, licences)
        self.description = ", ".join(str(p) for p in self.paths)

    def files(self) -> Iterator[Path]:
        """Every file to read, folders expanded in sorted order so runs are reproducible."""
        for path in self.paths:
            if path.is_dir():
                for child in sorted(p for p in path.rglob("*") if p.is_file()):
                    if is_fhir_file(child):
                        yield child
                    else:
                        self.skipped.append(str(child))
            elif path.is_file():
                yield path
            else:
                raise SourceError(f"{path}: no such file or folder")

    def records(self) -> Iterator[RawRecord]:
        """Stream records from every file."""
        for path in self.files():
            location = str(path)
            try:
                with _open(path) as stream:
                    if _logical_suffix(path) in _NDJSON_SUFFIXES:
                        yield from iter_ndjson(stream, location)
                    else:
                        yield from iter_json_document(stream.read(), location)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                yield RawRecord(Origin(location), problem=f"cannot read file: {exc}")
