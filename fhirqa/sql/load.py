"""Load OMOP CDM or MIMIC-III CSV files (a folder, a ``.zip`` or a URL to one) into a DuckDB file.

Table names are the file names in lower case (``MEASUREMENT.csv`` → ``measurement``, ``LABEVENTS.csv.gz``
→ ``labevents``); column names are lower-cased too. OMOP columns get the CDM's types from their names
(``*_id`` BIGINT, ``*_date`` DATE, ``*_datetime`` TIMESTAMP, values DOUBLE; codes stay text, so
``concept_code`` keeps its leading zeros); other tables get DuckDB's detected types. The file is written
next to nothing it reads: a new file per load, replaced atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError

DATA = Path(__file__).parent / "data"
_CSV = re.compile(r"^(?P<name>[A-Za-z0-9_]+)\.csv(?:\.gz)?$", re.IGNORECASE)
_DOUBLE_COLUMNS = {"value_as_number", "range_low", "range_high", "quantity", "amount_value", "numerator_value",
                   "denominator_value", "total_charge", "total_cost", "total_paid", "dose_value", "paid_by_payer",
                   "paid_patient_copay", "paid_by_patient", "episode_number", "box_size"}
_INT_COLUMNS = {"year_of_birth", "month_of_birth", "day_of_birth", "refills", "days_supply", "min_levels_of_separation",
                "max_levels_of_separation", "drug_exposure_count", "condition_occurrence_count", "gap_days"}


class LoadError(FhirqaError):
    """CSV files could not be loaded (nothing found, unreadable file, download failed)."""


@dataclass
class LoadReport:
    """What a load wrote: the DuckDB file, its tables and row counts, and the files skipped."""

    path: Path
    kind: str
    tables: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line per table, then the skipped files."""
        lines = [f"{self.path} ({self.kind}): {len(self.tables)} tables, {sum(self.tables.values()):,} rows"]
        lines += [f"  {name:<28} {rows:>10,}" for name, rows in sorted(self.tables.items())]
        lines += [f"  skipped: {name}" for name in self.skipped]
        return "\n".join(lines)


@lru_cache(maxsize=1)
def omop_spec() -> dict[str, Any]:
    """The built-in OMOP CDM description (``fhirqa/sql/data/omop_cdm.json``)."""
    return dict(json.loads((DATA / "omop_cdm.json").read_text("utf-8")))


def text_columns(kind: str) -> frozenset[str]:
    """Columns of a MIMIC load kept as text (``text_columns`` of ``fhirqa/sql/data/mimic_iii.json``): codes lose
    their meaning as numbers, and one typed as a number cannot meet the same code typed as text."""
    if kind != "mimic":
        return frozenset()
    return frozenset(_mimic_text_columns())


@lru_cache(maxsize=1)
def _mimic_text_columns() -> tuple[str, ...]:
    return tuple(json.loads((DATA / "mimic_iii.json").read_text("utf-8"))["text_columns"]["columns"])


def omop_type(column: str) -> str:
    """The CDM type of an OMOP column, from the CDM's naming conventions."""
    name = column.lower()
    if name in omop_spec()["varchar_ids"] or name.endswith(("_source_value", "_value_as_string")):
        return "VARCHAR"
    if name in _DOUBLE_COLUMNS:
        return "DOUBLE"
    if name in _INT_COLUMNS:
        return "INTEGER"
    if name.endswith("_datetime"):
        return "TIMESTAMP"
    if name.endswith("_date") or name == "verbatim_end_date":
        return "DATE"
    if name.endswith("_id") or name.endswith("_concept_id"):
        return "BIGINT"
    return "VARCHAR"


def _fetch(url: str, folder: Path) -> Path:
    import httpx

    target = folder / (Path(url.split("?")[0]).name or "download.zip")
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as response:
            response.raise_for_status()
            with target.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
    except httpx.HTTPError as exc:
        raise LoadError(f"{url}: download failed: {exc}") from exc
    return target


def _csv_files(source: Path, scratch: Path) -> tuple[dict[str, Path], list[str]]:
    """``{table: csv path}`` of a folder or zip (zips are extracted into ``scratch``), and the skipped names."""
    if source.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(source) as archive:
                members = [m for m in archive.namelist() if not m.startswith("__MACOSX/") and not m.endswith("/")]
                for member in members:
                    if _CSV.match(Path(member).name) and not Path(member).name.startswith("._"):
                        archive.extract(member, scratch)
        except zipfile.BadZipFile as exc:
            raise LoadError(f"{source}: not a readable zip ({exc})") from exc
        source = scratch
    if not source.is_dir():
        raise LoadError(f"{source}: no such folder")
    found: dict[str, Path] = {}
    skipped: list[str] = []
    for path in sorted(source.rglob("*")):
        if not path.is_file() or "__MACOSX" in path.parts or path.name.startswith("._"):
            continue
        match = _CSV.match(path.name)
        if not match:
            skipped.append(path.name)
            continue
        found.setdefault(match.group("name").lower(), path)
    if not found:
        raise LoadError(f"{source}: no CSV files")
    return found, skipped


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def guess_kind(tables: list[str]) -> str:
    """``omop``, ``mimic`` or ``unknown`` from table names alone."""
    names = set(tables)
    if {"person", "concept"} <= names or {"person", "visit_occurrence"} <= names:
        return "omop"
    if {"patients", "admissions"} <= names or {"labevents", "d_labitems"} <= names:
        return "mimic"
    return "unknown"


def load_csv(source: str | Path, out: Path, kind: str = "auto") -> LoadReport:
    """Load the CSV files of ``source`` (folder, zip or http(s) URL) into a new DuckDB file ``out``."""
    import duckdb

    with tempfile.TemporaryDirectory(prefix="fhirqa-load-") as tmp:
        scratch = Path(tmp)
        text = str(source)
        path = _fetch(text, scratch) if re.match(r"^https?://", text) else Path(text).expanduser()
        files, skipped = _csv_files(path, scratch / "extracted")
        kind = guess_kind(list(files)) if kind == "auto" else kind
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        partial.unlink(missing_ok=True)
        report = LoadReport(out, kind, skipped=skipped)
        con = duckdb.connect(str(partial))
        try:
            for table, csv in files.items():
                report.tables[table] = _load_table(con, table, csv, kind)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(partial, out)
    return report


def _load_table(con: Any, table: str, csv: Path, kind: str) -> int:
    """One CSV into one table; OMOP columns typed by the CDM, others by DuckDB's detection (MIMIC codes as text)."""
    import duckdb

    raw = f"read_csv({_quote(str(csv))}, header = true, all_varchar = true, sample_size = -1)"
    columns = [d[0] for d in con.execute(f"SELECT * FROM {raw} LIMIT 0").description]
    if kind == "omop":
        parts = []
        for column in columns:
            typed = omop_type(column)
            value = f"NULLIF(TRIM({_ident(column)}), '')" if typed != "VARCHAR" else _ident(column)
            if typed == "DATE":
                expr = f"coalesce(TRY_CAST({value} AS DATE), TRY_CAST(TRY_STRPTIME({value}, '%Y%m%d') AS DATE))"
            else:
                expr = f"TRY_CAST({value} AS {typed})"
            parts.append(f"{expr} AS {_ident(column.lower())}")
        select = f"SELECT {', '.join(parts)} FROM {raw}" if parts else f"SELECT * FROM {raw}"
    else:
        try:
            con.execute(f"SELECT * FROM read_csv({_quote(str(csv))}, header = true) LIMIT 1")
            detected = f"read_csv({_quote(str(csv))}, header = true)"
        except duckdb.Error:
            detected = raw
        described = [d[0] for d in con.execute(f"SELECT * FROM {detected} LIMIT 0").description]
        text = text_columns(kind)
        if detected != raw and text & {c.lower() for c in described}:
            # codes stay text whatever the detection saw (all-digit ICD-9 procedure codes would become BIGINT)
            overrides = ", ".join(f"{_quote(c)}: 'VARCHAR'" for c in described if c.lower() in text)
            detected = detected[:-1] + f", types = {{{overrides}}})"
        select = "SELECT " + ", ".join(f"{_ident(c)} AS {_ident(c.lower())}" for c in described) + f" FROM {detected}"
    try:
        con.execute(f"CREATE OR REPLACE TABLE {_ident(table)} AS {select}")
    except duckdb.Error as exc:
        raise LoadError(f"{csv.name}: {str(exc).splitlines()[0]}") from exc
    return int(con.execute(f"SELECT count(*) FROM {_ident(table)}").fetchone()[0])


def default_cache_dir() -> Path:
    """Where loaded CSV sources are kept (``$FHIRQA_SQL_CACHE``, else ``~/.cache/fhirqa/sql``)."""
    override = os.environ.get("FHIRQA_SQL_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "fhirqa" / "sql"


def _fingerprint(source: Path) -> str:
    digest = hashlib.sha256(str(source.resolve()).encode())
    paths = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    for path in paths:
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def cached_load(source: Path, *, cache_dir: Path | None = None, kind: str = "auto") -> Path:
    """The DuckDB file for a CSV folder or zip, loading it once (re-loaded when the files change)."""
    folder = cache_dir or default_cache_dir()
    out = folder / f"{source.stem}-{_fingerprint(source)}.duckdb"
    if not out.exists():
        load_csv(source, out, kind=kind)
    return out


def ingest_omop(source: str | Path, out: str | Path) -> LoadReport:
    """``fhirqa ingest --omop DIR|ZIP|URL``: load OMOP CDM CSV files into the DuckDB file ``out``."""
    report = load_csv(source, Path(out), kind="omop")
    return report


def ingest_mimic(source: str | Path, out: str | Path) -> LoadReport:
    """``fhirqa ingest --mimic DIR|ZIP|URL``: load MIMIC-III CSV files (``LABEVENTS.csv.gz`` …) into ``out``."""
    return load_csv(source, Path(out), kind="mimic")
