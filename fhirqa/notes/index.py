"""The notes index: note chunks with their embeddings in LanceDB, searched by vector and full text together.

One LanceDB database per store at ``<db>/notes.lance``, one table per embedding model (``chunks_<model>``;
``chunks_lexical`` when embeddings are off). A row is one chunk: ``patient_id``, ``note_id``, ``ref``,
``time``, ``date``, ``note_type``, ``section`` (``|``-delimited canonical names), ``text``, ``content_hash``
of its note, and ``vector`` (unit length, so cosine distance is 1 - dot product).

The index is built on demand, per patient, the first time that patient's notes are searched, and kept:
a later search re-reads only the patient's notes and their content hashes, and re-embeds only the notes
whose hash changed (removed notes lose their chunks). :meth:`NoteIndex.build` indexes many patients at
once (the benchmark, or after a large ingest). Searching reads the patient's chunks into memory once per
index state (:mod:`fhirqa.notes.memory`: exact cosine and BM25 over that patient's chunks, a fraction of a
millisecond against LanceDB's 6–8 ms per query) and fuses the vector and text rankings with reciprocal-rank
fusion; both rank only the chunks that pass the time/section filter.
"""

from __future__ import annotations

import fcntl
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fhirqa.agent.embeddings import Embedder, get_embedder
from fhirqa.errors import FhirqaError
from fhirqa.notes.chunking import MAX_TOKENS, OVERLAP_TOKENS, Chunk, chunk_note, section_name, sentences
from fhirqa.notes.sources import Note, notes_for
from fhirqa.store import Store

if TYPE_CHECKING:  # numpy comes with the notes extra; the base install imports this module without it
    from fhirqa.notes.memory import PatientChunks

Mode = Literal["hybrid", "vector", "text"]
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.)
MEMORY_CHUNKS = 100_000  # chunks kept in memory for searching, over all patients (~160 MB with MiniLM vectors)
_UNSET: Any = object()


@dataclass
class Hit:
    """One retrieved chunk: its text, where it comes from, and how well it matched."""

    text: str
    ref: str
    note_id: str
    chunk_id: str
    date: str
    time: datetime | None
    note_type: str | None
    section: str  # canonical section names, ", "-joined
    score: float
    patient_id: str = ""
    vector_score: float | None = None  # cosine similarity, when the vector search found it
    text_score: float | None = None  # BM25, when the full-text search found it

    def quote(self, query: str) -> str:
        """The chunk's sentence that best matches ``query``: query words in common (numbers count double);
        headers and bare dates are quoted only when nothing else is there."""
        words = _terms(query)
        best, best_score = "", (-1.0, -1.0)
        for sentence in sentences(self.text.split("\n", 1)[-1]):
            terms = _terms(sentence)
            prose = len(re.findall(r"[A-Za-z]{2,}", sentence)) >= 2 and not sentence.startswith("#") \
                and not sentence.endswith(":")
            score = (sum(2.0 if w[0].isdigit() else 1.0 for w in words & terms), 1.0 if prose else 0.0)
            if score > best_score:
                best, best_score = sentence, score
        return best


@dataclass
class SyncReport:
    """What one index update did."""

    patients: int = 0
    notes: int = 0  # notes seen
    embedded_notes: int = 0  # notes (re)chunked and embedded
    removed_notes: int = 0
    chunks: int = 0  # chunks written
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def _terms(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower()) if len(w) > 1 or w.isdigit()}


def _quote_sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _instant(value: str | date | datetime | None, end: bool = False) -> datetime | None:
    """An aware UTC datetime; a bare date means the start of the day, or its end when ``end``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            value = date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
        except ValueError as exc:
            raise FhirqaError(f"{value!r} is not an ISO 8601 date or instant") from exc
    if not isinstance(value, datetime):
        value = datetime.combine(value, dtime.max if end else dtime.min)
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


class NoteIndex:
    """Chunks of a store's notes in LanceDB; see the module docstring."""

    def __init__(self, store: Store | str | Path, *, embedder: Embedder | None = _UNSET, path: str | Path | None = None,
                 max_tokens: int = MAX_TOKENS, overlap: int = OVERLAP_TOKENS) -> None:
        self.store = store if isinstance(store, Store) else Store(store)
        self.path = Path(path) if path else self.store.db / "notes.lance"
        self.max_tokens = max_tokens
        self.overlap = overlap
        self._embedder = embedder
        self._db: Any = None
        self._table: Any = None
        self._synced: dict[str, int] = {}  # patient → store generation last synced in this process
        self._lock = threading.RLock()
        # Patients' chunks in memory for searching (see fhirqa.notes.memory), least recently used first.
        self._memory: OrderedDict[str, PatientChunks] = OrderedDict()
        self._memory_lock = threading.Lock()
        self._whole_notes: OrderedDict[tuple[str, int], list[Note]] = OrderedDict()  # (patient, generation) → notes

    # -- setup -----------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The sentence embedder (the shared MiniLM unless one was given); ``None``: full-text search only."""
        if self._embedder is _UNSET:
            self._embedder = get_embedder()
        return self._embedder

    @property
    def table_name(self) -> str:
        """``chunks_<model>``, or ``chunks_lexical`` without embeddings."""
        model = self.embedder.name if self.embedder else "lexical"
        return "chunks_" + re.sub(r"[^A-Za-z0-9]+", "_", model).strip("_").lower()

    def _schema(self) -> Any:
        import pyarrow as pa

        fields = [("chunk_id", pa.string()), ("patient_id", pa.string()), ("note_id", pa.string()),
                  ("ref", pa.string()), ("chunk_index", pa.int32()), ("time", pa.timestamp("us", tz="UTC")),
                  ("date", pa.string()), ("note_type", pa.string()), ("section", pa.string()),
                  ("encounter_ref", pa.string()), ("author", pa.string()), ("text", pa.string()),
                  ("content_hash", pa.string())]
        if self.embedder:
            fields.append(("vector", pa.list_(pa.float32(), self.embedder.dimension)))
        return pa.schema(fields)

    def table(self) -> Any:
        """The LanceDB table, created empty on first use."""
        with self._lock:
            if self._table is None:
                try:
                    import lancedb
                except ImportError as exc:
                    raise FhirqaError("the notes index needs LanceDB: pip install lancedb") from exc
                self.path.mkdir(parents=True, exist_ok=True)
                # Always read the latest version: another process (or NoteIndex) may have written since.
                self._db = lancedb.connect(str(self.path), read_consistency_interval=timedelta(0))
                names = set(self._db.list_tables().tables)
                if self.table_name in names:
                    self._table = self._db.open_table(self.table_name)
                    if self._table.schema != self._schema():  # another model under the same name, or an old layout
                        self._db.drop_table(self.table_name)
                        self._table = None
                if self._table is None:
                    self._table = self._db.create_table(self.table_name, schema=self._schema(), exist_ok=True)
            return self._table

    @contextmanager
    def _writing(self) -> Any:
        """One writer at a time across processes (LanceDB deletes and adds would otherwise conflict)."""
        self.path.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path / ".writer.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- building ----------------------------------------------------------------------------------------
    def ensure(self, patient_id: str) -> SyncReport | None:
        """Bring ``patient_id``'s chunks up to date with the store (once per store generation per process)."""
        generation = self.store.manifest.generation
        if self._synced.get(patient_id) == generation:
            return None
        report = self.build([patient_id])
        self._synced[patient_id] = generation
        return report

    def build(self, patient_ids: Iterable[str] | None = None,
              progress: Callable[[str], None] | None = None) -> SyncReport:
        """Index the notes of ``patient_ids`` (default: every patient with notes), re-embedding only changes."""
        started = time.perf_counter()
        con = self.store.connect()
        try:
            if patient_ids is None:
                patient_ids = [r[0] for r in self.store.query(
                    "SELECT DISTINCT patient_id FROM note WHERE patient_id IS NOT NULL ORDER BY 1",
                    limit=10_000_000, con=con).rows]
            wanted = list(dict.fromkeys(patient_ids))
            t = time.perf_counter()
            notes = [n for pid in wanted for n in notes_for(self.store, pid, con=con)]
            read_s = time.perf_counter() - t
        finally:
            con.close()
        report = self.index_notes(notes, patient_ids=wanted, progress=progress)
        report.timings["read_notes_s"] = read_s
        report.seconds = time.perf_counter() - started
        return report

    def index_notes(self, notes: Iterable[Note], patient_ids: Iterable[str] | None = None,
                    progress: Callable[[str], None] | None = None) -> SyncReport:
        """Make ``notes`` the indexed notes of their patients (and of ``patient_ids``): changed notes are
        re-embedded, notes no longer given are removed. For notes from OMOP or MIMIC tables (then search with
        ``sync=False``), or any chosen subset of a store's notes.
        """
        started = time.perf_counter()
        notes = list(notes)
        wanted = list(dict.fromkeys([*(patient_ids or []), *(n.patient_id for n in notes)]))
        report = SyncReport(patients=len(wanted), notes=len(notes))
        generation = self.store.manifest.generation if self.store.exists() else 0
        with self._writing():
            self._sync(wanted, notes, report, progress)
        with self._memory_lock:
            for pid in wanted:
                self._synced[pid] = generation
                self._memory.pop(pid, None)
        report.seconds = time.perf_counter() - started
        return report

    def _existing(self, patient_ids: list[str]) -> dict[str, str]:
        """note_id → content_hash of what the table holds for these patients."""
        table = self.table()
        if not table.count_rows():
            return {}
        out: dict[str, str] = {}
        for start in range(0, len(patient_ids), 500):
            batch = ", ".join(_quote_sql(p) for p in patient_ids[start:start + 500])
            rows = (table.search().where(f"patient_id IN ({batch})").select(["patient_id", "note_id", "content_hash"])
                    .limit(None).to_arrow().to_pylist())
            out.update({f"{r['patient_id']}\x1f{r['note_id']}": r["content_hash"] for r in rows})
        return out

    def _sync(self, patient_ids: list[str], notes: list[Note], report: SyncReport,
              progress: Callable[[str], None] | None) -> None:
        table = self.table()
        existing = self._existing(patient_ids)
        current = {f"{n.patient_id}\x1f{n.note_id}": n for n in notes}
        stale = [key for key, digest in existing.items() if key not in current or current[key].content_hash != digest]
        changed = [n for key, n in current.items() if existing.get(key) != n.content_hash]
        if stale:
            for start in range(0, len(stale), 200):
                clauses = " OR ".join(f"(patient_id = {_quote_sql(k.split(chr(31))[0])} AND note_id = "
                                      f"{_quote_sql(k.split(chr(31))[1])})" for k in stale[start:start + 200])
                table.delete(clauses)
            report.removed_notes = sum(1 for k in stale if k not in current)
        report.embedded_notes = len(changed)
        if not changed:
            return
        t = time.perf_counter()
        pairs = [(note, chunk) for note in changed for chunk in chunk_note(note, self.max_tokens, self.overlap)]
        report.timings["chunk_s"] = time.perf_counter() - t
        if progress:
            progress(f"embedding {len(pairs):,} chunks of {len(changed):,} notes")
        t = time.perf_counter()
        vectors = self.embedder.encode([c.text for _, c in pairs]) if self.embedder and pairs else None
        report.timings["embed_s"] = time.perf_counter() - t
        t = time.perf_counter()
        rows = [self._row(note, chunk, None if vectors is None else vectors[i]) for i, (note, chunk) in enumerate(pairs)]
        for start in range(0, len(rows), 5000):
            table.add(rows[start:start + 5000])
        report.chunks = len(rows)
        self._refresh_text_index(table, len(rows))
        report.timings["write_s"] = time.perf_counter() - t

    @staticmethod
    def _row(note: Note, chunk: Chunk, vector: Any) -> dict[str, Any]:
        row = {"chunk_id": chunk.chunk_id, "patient_id": note.patient_id, "note_id": note.note_id, "ref": note.ref,
               "chunk_index": chunk.index, "time": note.time, "date": note.date, "note_type": note.note_type,
               "section": "|" + "|".join(chunk.sections) + "|", "encounter_ref": note.encounter_ref,
               "author": note.author, "text": chunk.text, "content_hash": note.content_hash}
        if vector is not None:
            row["vector"] = vector.tolist()
        return row

    @staticmethod
    def _refresh_text_index(table: Any, added: int) -> None:
        """(Re)build the BM25 index when there is none or many rows are unindexed; fewer are scanned directly."""
        from lancedb.index import FTS

        indices = [i for i in table.list_indices() if i.index_type == "FTS"]
        if indices:
            unindexed = table.index_stats(indices[0].name).num_unindexed_rows
            if unindexed < 2000:
                return
            table.optimize(cleanup_older_than=timedelta(hours=1))
        else:
            table.create_index("text", config=FTS(), replace=True)

    # -- reading -----------------------------------------------------------------------------------------
    def chunk_rows(self, patient_id: str | None = None, with_vectors: bool = False) -> list[dict[str, Any]]:
        """The stored rows (all patients, or one), e.g. for a brute-force comparison."""
        table = self.table()
        query = table.search()
        if patient_id is not None:
            query = query.where(f"patient_id = {_quote_sql(patient_id)}")
        columns = [f.name for f in self._schema() if with_vectors or f.name != "vector"]
        return query.select(columns).limit(None).to_arrow().to_pylist()

    def notes(self, patient_id: str) -> list[Note]:
        """The patient's whole notes, oldest first (for reading one visit's note by section); cached per generation."""
        generation = self.store.manifest.generation
        key = (patient_id, generation)
        with self._lock:
            cache = self._whole_notes
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        found = notes_for(self.store, patient_id)
        with self._lock:
            cache[key] = found
            while len(cache) > 16:
                cache.popitem(last=False)
        return found

    def coverage(self, patient_id: str) -> dict[str, Any]:
        """How many indexed notes the patient has and the dates they span (for "nothing found" answers)."""
        self.ensure(patient_id)
        rows = (self.table().search().where(f"patient_id = {_quote_sql(patient_id)}").select(["note_id", "date"])
                .limit(None).to_arrow().to_pylist())
        dates = sorted(r["date"] for r in rows if r["date"])
        return {"count": len({r["note_id"] for r in rows}), "first": dates[0] if dates else None,
                "last": dates[-1] if dates else None}

    def search(self, patient_id: str, query: str, k: int = 5, since: str | date | datetime | None = None,
               until: str | date | datetime | None = None, section: str | None = None,
               mode: Mode = "hybrid", sync: bool = True) -> list[Hit]:
        """The ``k`` chunks of the patient's notes that best match ``query``, within the time window and section.

        ``since``/``until`` are inclusive (a bare date ``until`` means through that day); notes without a time
        are left out when a window is given. ``section`` matches canonical section names by substring
        (``"medications"`` matches ``discharge medications``). ``mode``: ``hybrid`` (default), ``vector`` or
        ``text``; without embeddings every mode is ``text``.
        """
        if sync:
            self.ensure(patient_id)
        chunks = self._chunks(patient_id)
        keep = chunks.mask(_instant(since), _instant(until, end=True), _section_filter(section))
        depth = max(k * 4, 20)
        vector_rows: list[dict[str, Any]] = []
        text_rows: list[dict[str, Any]] = []
        if mode in ("hybrid", "vector") and self.embedder is not None and chunks.vectors is not None:
            vector_rows = chunks.by_vector(self.embedder.encode([query])[0], keep, depth)
        if mode in ("hybrid", "text") or self.embedder is None or chunks.vectors is None:
            text_rows = chunks.by_text(query, keep, depth)
        return _fuse(vector_rows, text_rows, k)

    def _chunks(self, patient_id: str) -> PatientChunks:
        """The patient's chunks in memory, loaded from the table on first use after (re)indexing."""
        with self._memory_lock:
            cached = self._memory.get(patient_id)
            if cached is not None:
                self._memory.move_to_end(patient_id)
                return cached
        import numpy as np

        from fhirqa.notes.memory import PatientChunks

        rows = self.chunk_rows(patient_id, with_vectors=True)
        rows.sort(key=lambda r: (r["note_id"], r.get("chunk_index") or 0, r["chunk_id"]))
        vectors = None
        if rows and rows[0].get("vector") is not None:
            vectors = np.asarray([r.pop("vector") for r in rows], dtype=np.float32)
        for row in rows:
            row.pop("vector", None)
            moment = row.get("time")
            if isinstance(moment, datetime):
                row["time"] = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        chunks = PatientChunks(rows, vectors)
        with self._memory_lock:
            self._memory[patient_id] = chunks
            held = sum(len(c) for c in self._memory.values())
            while len(self._memory) > 1 and held > MEMORY_CHUNKS:
                _, evicted = self._memory.popitem(last=False)
                held -= len(evicted)
        return chunks


def _section_filter(section: str | None) -> str | None:
    """The canonical section name a ``section`` argument filters by (substring of a chunk's sections)."""
    if not section:
        return None
    return re.sub(r"[^a-z0-9 /&-]", "", section_name(section)) or None


def _fuse(vector_rows: list[dict[str, Any]], text_rows: list[dict[str, Any]], k: int) -> list[Hit]:
    """Reciprocal-rank fusion of the two rankings (a ranking alone keeps its own order)."""
    scores: dict[str, float] = {}
    rows: dict[str, dict[str, Any]] = {}
    vec_score: dict[str, float] = {}
    txt_score: dict[str, float] = {}
    for rank, row in enumerate(vector_rows):
        key = f"{row['patient_id']}\x1f{row['chunk_id']}"
        rows[key] = row
        scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
        vec_score[key] = 1.0 - float(row.get("_distance", 1.0))
    for rank, row in enumerate(text_rows):
        key = f"{row['patient_id']}\x1f{row['chunk_id']}"
        rows.setdefault(key, row)
        scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
        txt_score[key] = float(row.get("_score", 0.0))
    ranked = sorted(scores, key=lambda key: (-scores[key], rows[key]["chunk_id"]))[:k]
    hits = []
    for key in ranked:
        row = rows[key]
        moment = row.get("time")
        hits.append(Hit(
            text=row["text"], ref=row["ref"], note_id=row["note_id"], chunk_id=row["chunk_id"], date=row["date"] or "",
            time=moment.astimezone(UTC) if isinstance(moment, datetime) else None, note_type=row.get("note_type"),
            section=", ".join(s for s in (row.get("section") or "").split("|") if s), score=round(scores[key], 6),
            patient_id=row["patient_id"], vector_score=vec_score.get(key), text_score=txt_score.get(key)))
    return hits
