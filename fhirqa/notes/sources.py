"""Clinical notes from every source, as one :class:`Note` shape.

- A fhirqa store: the canonical ``note`` view (DocumentReference inline text/plain and text/html, already
  decoded by the view; DiagnosticReport presentedForm or conclusion), plus inline PDF attachments read from
  ``map_document_reference`` (text extracted with pypdf when it is installed and the PDF has a text layer),
  plus ``url`` attachments that are local file paths (``file://`` or a plain path) inside an allowed folder.
  Remote URLs are never fetched: the notes path stays offline.
- OMOP CDM ``note`` and MIMIC-III ``noteevents`` (or MIMIC-IV-Note ``discharge``/``radiology``) tables,
  read through any DB-API connection (sqlite3, duckdb, psycopg…).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import io
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from fhirqa.store import Store

log = logging.getLogger(__name__)

_NOTE_SQL = """
SELECT ref, source, note_type, time, time_offset, content_type, text, url, title, author, encounter_ref
FROM note WHERE patient_id = ? ORDER BY time, ref, content_type, url
"""
_PDF_SQL = """
SELECT ref, coalesce(type_text, type_display, note_type_code) AS note_type,
       TRY_CAST(coalesce(date, context_period_start) AS TIMESTAMPTZ) AS time,
       data, title, coalesce(author_display, author_ref) AS author, encounter_ref
FROM map_document_reference
WHERE patient_id = ? AND data IS NOT NULL AND lower(content_type) LIKE 'application/pdf%'
ORDER BY time, ref
"""
MAX_FILE_BYTES = 20_000_000  # a note file larger than this is not a note


@dataclass(frozen=True)
class Note:
    """One note's text with what retrieval filters and cites on."""

    note_id: str  # unique in the patient's notes: ``ref``, or ``ref#2`` for a second attachment
    patient_id: str
    ref: str  # ``DocumentReference/…``, ``DiagnosticReport/…``, ``note/…`` (OMOP), ``noteevents/…`` (MIMIC)
    text: str
    time: datetime | None
    note_type: str | None = None
    author: str | None = None
    encounter_ref: str | None = None
    source: str = "DocumentReference"
    content_type: str | None = None
    time_offset: int | None = None  # minutes east of UTC ``time`` was written in (None: unknown, read as UTC)

    @property
    def date(self) -> str:
        """The note's day as ``YYYY-MM-DD`` (empty when undated)."""
        return self.time.date().isoformat() if self.time else ""

    @property
    def wall_clock(self) -> datetime | None:
        """The note's time on the clock it was written by (naive; UTC when the offset is unknown)."""
        if self.time is None:
            return None
        return (self.time.astimezone(UTC) + timedelta(minutes=self.time_offset or 0)).replace(tzinfo=None)

    @property
    def content_hash(self) -> str:
        """Changes whenever anything that ends up in the index changes."""
        key = "\x1f".join([self.ref, self.text, self.time.isoformat() if self.time else "", self.note_type or ""])
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def notes_for(store: Store, patient_id: str, *, file_roots: Iterable[str | Path] | None = None,
              con: Any = None) -> list[Note]:
    """Every note of ``patient_id`` in the store, oldest first, with text (notes without text are left out).

    ``file_roots``: folders a ``url`` attachment may be read from (default ``$FHIRQA_NOTE_FILES``, a
    path list, else the store folder's parent). ``con``: an open connection of ``store`` to reuse.
    """
    roots = _roots(store, file_roots)
    rows = store.query(_NOTE_SQL, [patient_id], limit=1_000_000, con=con).records()
    notes: list[Note] = []
    for row in rows:
        text = row["text"]
        if text and (row.get("content_type") or "").lower().startswith("text/html"):
            text = html.unescape(text)
        if not text and row.get("url"):
            text = read_local_attachment(row["url"], row.get("content_type"), roots)
        if text and text.strip():
            notes.append(_note(patient_id, row, _clean(text)))
    try:
        pdf_rows = store.query(_PDF_SQL, [patient_id], limit=1_000_000, con=con).records()
    except Exception as exc:  # noqa: BLE001 - a store without the mapped table has no PDFs
        log.debug("no inline PDF attachments read: %s", exc)
        pdf_rows = []
    for row in pdf_rows:
        text = pdf_text(_b64(row.pop("data")))
        if text:
            notes.append(_note(patient_id, {**row, "source": "DocumentReference",
                                            "content_type": "application/pdf"}, _clean(text)))
    return _unique_ids(sorted(notes, key=lambda n: (n.time or datetime.min.replace(tzinfo=UTC), n.ref)))


def _note(patient_id: str, row: dict[str, Any], text: str) -> Note:
    return Note(note_id=row["ref"], patient_id=patient_id, ref=row["ref"], text=text, time=_aware(row.get("time")),
                note_type=row.get("note_type") or row.get("title"), author=row.get("author"),
                encounter_ref=row.get("encounter_ref"), source=row.get("source") or row["ref"].split("/")[0],
                content_type=row.get("content_type"),
                time_offset=int(row["time_offset"]) if row.get("time_offset") is not None else None)


def _unique_ids(notes: list[Note]) -> list[Note]:
    """A resource with several text attachments gives ``ref``, ``ref#2``, ``ref#3``…"""
    seen: dict[str, int] = {}
    out = []
    for note in notes:
        n = seen[note.ref] = seen.get(note.ref, 0) + 1
        out.append(note if n == 1 else replace(note, note_id=f"{note.ref}#{n}"))
    return out


def _roots(store: Store, file_roots: Iterable[str | Path] | None) -> list[Path]:
    if file_roots is None:
        env = os.environ.get("FHIRQA_NOTE_FILES")
        file_roots = env.split(os.pathsep) if env else [store.db.resolve().parent]
    return [Path(r).resolve() for r in file_roots if str(r)]


def read_local_attachment(url: str, content_type: str | None, roots: list[Path]) -> str | None:
    """The text of a ``url`` attachment that is a local file inside one of ``roots``; ``None`` otherwise.

    Remote URLs (http, https, …) are not fetched. PDFs go through :func:`pdf_text`, HTML loses its tags.
    """
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme in ("", None) or (len(parsed.scheme) == 1 and url[1:3] in (":\\", ":/")):
        path = Path(url)
    else:
        return None
    try:
        path = path.resolve()
        if not any(path.is_relative_to(root) for root in roots) or not path.is_file():
            return None
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    kind = (content_type or "").lower()
    if kind.startswith("application/pdf") or path.suffix.lower() == ".pdf" or data[:5] == b"%PDF-":
        return pdf_text(data)
    text = data.decode("utf-8", errors="replace")
    if kind.startswith("text/html") or path.suffix.lower() in (".html", ".htm"):
        text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    return text


def pdf_text(data: bytes | None) -> str | None:
    """Text of a PDF's pages (pypdf); ``None`` when pypdf is missing or the PDF has no text layer."""
    if not data:
        return None
    try:
        from pypdf import PdfReader
    except ImportError:
        log.info("pypdf is not installed: PDF notes are skipped")
        return None
    try:
        reader = PdfReader(io.BytesIO(data))
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # noqa: BLE001 - a broken PDF is a note we cannot read, not a crash
        log.info("unreadable PDF attachment: %s", exc)
        return None
    return text if text.strip() else None


def _b64(data: str | None) -> bytes | None:
    if not data:
        return None
    try:
        return base64.b64decode(re.sub(r"\s", "", data), validate=True)
    except (binascii.Error, ValueError):
        return None


def _clean(text: str) -> str:
    """Normalised line ends and no runs of blank lines or trailing spaces; the words are untouched."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\xa0", " ")
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _aware(value: Any) -> datetime | None:
    """A datetime in UTC from a datetime, a date or an ISO string; ``None`` when there is none."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _dict_rows(cursor: Any) -> Iterator[dict[str, Any]]:
    columns = [d[0].lower() for d in cursor.description or []]
    for row in cursor.fetchall():
        yield dict(zip(columns, row, strict=True))


def _run(con: Any, sql: str, params: list[Any], paramstyle: str) -> Any:
    if paramstyle == "format":
        sql = sql.replace("?", "%s")
    cursor = con.cursor()
    cursor.execute(sql, params)
    return cursor


def omop_notes(con: Any, person_id: str | int | None = None, *, paramstyle: str = "qmark",
               table: str = "note") -> list[Note]:
    """Notes from an OMOP CDM ``note`` table (5.3/5.4) over a DB-API connection.

    ``note_type`` is the note class's concept name when a ``concept`` table is there, else the note title.
    ``paramstyle`` is the driver's: ``qmark`` (sqlite3, duckdb) or ``format`` (psycopg, pymysql).
    """
    if not re.fullmatch(r"[A-Za-z_][\w.]*", table):
        raise ValueError(f"not a table name: {table!r}")
    where, params = ("WHERE person_id = ?", [int(person_id)]) if person_id is not None else ("", [])
    rows = list(_dict_rows(_run(con, f"SELECT * FROM {table} {where}", params, paramstyle)))
    names = _concept_names(con, {r.get("note_class_concept_id") for r in rows} | {r.get("note_type_concept_id")
                                                                                  for r in rows}, paramstyle)
    notes = []
    for r in rows:
        text = r.get("note_text")
        if not text or not str(text).strip():
            continue
        concept = names.get(r.get("note_class_concept_id")) or names.get(r.get("note_type_concept_id"))
        visit = r.get("visit_occurrence_id")
        notes.append(Note(
            note_id=f"note/{r['note_id']}", patient_id=str(r["person_id"]), ref=f"note/{r['note_id']}",
            text=_clean(str(text)), time=_aware(r.get("note_datetime") or r.get("note_date")),
            note_type=r.get("note_title") or concept or r.get("note_source_value"),
            author=f"provider/{r['provider_id']}" if r.get("provider_id") is not None else None,
            encounter_ref=f"visit_occurrence/{visit}" if visit is not None else None, source="omop.note"))
    return sorted(notes, key=lambda n: (n.patient_id, n.time or datetime.min.replace(tzinfo=UTC), n.ref))


def _concept_names(con: Any, ids: set[Any], paramstyle: str) -> dict[Any, str]:
    ids = {i for i in ids if isinstance(i, int) and i > 0}
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    try:
        cursor = _run(con, f"SELECT concept_id, concept_name FROM concept WHERE concept_id IN ({marks})",
                      sorted(ids), paramstyle)
        return {row[0]: row[1] for row in cursor.fetchall()}
    except Exception:  # noqa: BLE001 - no vocabulary loaded: titles only
        return {}


def mimic_notes(con: Any, subject_id: str | int | None = None, *, table: str = "noteevents",
                paramstyle: str = "qmark", caregivers: str | None = None) -> list[Note]:
    """Notes from MIMIC-III ``noteevents`` (or MIMIC-IV-Note ``discharge``/``radiology``) over DB-API.

    Rows flagged ``iserror`` are left out. ``note_type`` is ``category`` (III) or ``note_type`` (IV), with
    the ``description`` when there is one; the admission (``hadm_id``) is the encounter. The author is the
    caregiver (``caregiver/<cgid>``); with ``caregivers`` (the name of MIMIC-III's CAREGIVERS table, when the
    database has it) their role is said too ("caregiver 16010 (RN)"): MIMIC keeps no caregiver names.
    """
    if not re.fullmatch(r"[A-Za-z_][\w.]*", table) or (caregivers and not re.fullmatch(r"[A-Za-z_][\w.]*", caregivers)):
        raise ValueError(f"not a table name: {table!r} / {caregivers!r}")
    where, params = ("WHERE subject_id = ?", [int(subject_id)]) if subject_id is not None else ("", [])
    rows = list(_dict_rows(_run(con, f"SELECT * FROM {table} {where}", params, paramstyle)))
    roles = _caregiver_roles(con, caregivers, {r.get("cgid") for r in rows}, paramstyle) if caregivers else {}
    notes = []
    for r in rows:
        if str(r.get("iserror") or "").strip() in ("1", "1.0", "True", "true"):
            continue
        text = r.get("text")
        if not text or not str(text).strip():
            continue
        key = r.get("note_id") or r.get("row_id")
        # MIMIC-III pads some categories ("Physician "): stripped, so a title reads "Physician: Progress Note".
        kind = str(r.get("category") or r.get("note_type") or "").strip() or None
        description = str(r.get("description") or "").strip() or None
        hadm = r.get("hadm_id")
        notes.append(Note(
            note_id=f"{table}/{key}", patient_id=str(r["subject_id"]), ref=f"{table}/{key}", text=_clean(str(text)),
            time=_aware(r.get("charttime") or r.get("chartdate")),
            note_type=f"{kind}: {description}" if kind and description and description != kind else kind,
            author=_caregiver(r.get("cgid"), roles),
            encounter_ref=f"admission/{int(hadm)}" if hadm is not None else None, source=f"mimic.{table}"))
    return sorted(notes, key=lambda n: (n.patient_id, n.time or datetime.min.replace(tzinfo=UTC), n.ref))


def _caregiver(cgid: Any, roles: dict[str, str]) -> str | None:
    """``caregiver/16010``, or ``caregiver 16010 (RN)`` when CAREGIVERS gives the role."""
    if cgid is None or str(cgid).strip() == "":
        return None
    key = str(int(float(cgid))) if re.fullmatch(r"\d+(?:\.0+)?", str(cgid).strip()) else str(cgid).strip()
    role = roles.get(key)
    return f"caregiver {key} ({role})" if role else f"caregiver/{key}"


def _caregiver_roles(con: Any, table: str | None, ids: set[Any], paramstyle: str) -> dict[str, str]:
    """``{cgid: role}`` from MIMIC-III CAREGIVERS (its ``label``, else ``description``) for the caregivers named."""
    keys = sorted({str(int(float(i))) for i in ids if i is not None and re.fullmatch(r"\d+(?:\.0+)?", str(i).strip())})
    if not table or not keys:
        return {}
    marks = ", ".join("?" for _ in keys)
    cursor = _run(con, f"SELECT * FROM {table} WHERE CAST(cgid AS VARCHAR) IN ({marks})", keys, paramstyle)
    out = {}
    for row in _dict_rows(cursor):
        role = str(row.get("label") or row.get("description") or "").strip()
        if role and row.get("cgid") is not None:
            out[str(int(float(row["cgid"])))] = role
    return out
