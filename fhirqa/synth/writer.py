"""Write generated patients as per-patient Bundle files or Bulk-Data style NDJSON."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import IO, Any

import orjson

from .patient import DEFAULT_NOW, generate_patients

URN = re.compile(rb'"urn:uuid:([0-9a-f-]{36})"')


def _ascii(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]+", "", folded) or "X"


def bundle_filename(index: int, bundle: dict[str, Any]) -> str:
    """``0003_Maria_Hernandez.json``: index first so files sort in generation order."""
    patient = bundle["entry"][0]["resource"]
    name = patient["name"][0]
    return f"{index:04d}_{_ascii(name['given'][0])}_{_ascii(name['family'])}.json"


def dump_bundle(bundle: dict[str, Any], pretty: bool = False) -> bytes:
    """Serialize a Bundle: one entry per line (compact, diff-friendly) or fully indented."""
    if pretty:
        return orjson.dumps(bundle, option=orjson.OPT_INDENT_2) + b"\n"
    head = orjson.dumps({k: v for k, v in bundle.items() if k != "entry"})[:-1]
    entries = b",\n".join(orjson.dumps(e) for e in bundle["entry"])
    return head + b',"entry":[\n' + entries + b"\n]}\n"


def to_ndjson_lines(bundle: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """(resourceType, id, line) for every resource, with ``urn:uuid:X`` rewritten to ``Type/X``."""
    types = {e["resource"]["id"]: e["resource"]["resourceType"] for e in bundle["entry"]}

    def sub(m: re.Match[bytes]) -> bytes:
        rid = m.group(1).decode()
        return f'"{types[rid]}/{rid}"'.encode()

    out = []
    for e in bundle["entry"]:
        r = e["resource"]
        out.append((r["resourceType"], r["id"], URN.sub(sub, orjson.dumps(r))))
    return out


class _NdjsonSink:
    """Per-type NDJSON files, split into ``Type.000.ndjson``, ``Type.001.ndjson`` ... by line count."""

    def __init__(self, out_dir: Path, max_lines: int):
        self.out_dir = out_dir
        self.max_lines = max_lines
        self.files: dict[str, IO[bytes]] = {}
        self.lines: Counter[str] = Counter()
        self.seen: set[str] = set()

    def write(self, rtype: str, rid: str, line: bytes) -> bool:
        if rid in self.seen:  # shared practitioners/organizations appear in many bundles
            return False
        self.seen.add(rid)
        n = self.lines[rtype]
        if n % self.max_lines == 0:
            if rtype in self.files:
                self.files[rtype].close()
            self.files[rtype] = (self.out_dir / f"{rtype}.{n // self.max_lines:03d}.ndjson").open("wb")
        self.files[rtype].write(line + b"\n")
        self.lines[rtype] += 1
        return True

    def close(self) -> None:
        for fh in self.files.values():
            fh.close()


def write_sample(
    out_dir: Path,
    n: int,
    seed: int = 7,
    fmt: str = "bundle",
    now: str = DEFAULT_NOW,
    max_lines: int = 100_000,
    pretty: bool = False,
) -> Counter[str]:
    """Generate ``n`` patients into ``out_dir`` and return resource counts per type.

    ``fmt="bundle"``: one transaction Bundle file per patient (one entry per line, or
    fully indented with ``pretty``).
    ``fmt="ndjson"``: one file set per resource type with plain ``Type/id`` references.
    """
    if fmt not in ("bundle", "ndjson"):
        raise ValueError(f"unknown format {fmt!r} (expected 'bundle' or 'ndjson')")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    if fmt == "bundle":
        for i, bundle in enumerate(generate_patients(n, seed, now)):
            counts.update(e["resource"]["resourceType"] for e in bundle["entry"])
            (out_dir / bundle_filename(i, bundle)).write_bytes(dump_bundle(bundle, pretty))
        return counts
    sink = _NdjsonSink(out_dir, max_lines)
    try:
        for bundle in generate_patients(n, seed, now):
            for rtype, rid, line in to_ndjson_lines(bundle):
                if sink.write(rtype, rid, line):
                    counts[rtype] += 1
    finally:
        sink.close()
    return counts
