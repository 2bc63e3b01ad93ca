"""Notes benchmark: index build time, query latency and recall@5: fhirqa's search beside LanceDB's and numpy's.

    python bench/notes_bench.py [--db /tmp/notes_db] [--threads 2] [--repeat 3] [--keep-index]

1. Ingests ``../shared/data/synthea-bulk-10`` (1,215 notes of 13 patients) into ``--db`` unless it is there.
2. Builds the notes index from scratch with the packaged MiniLM and prints the time per 1,000 notes (read,
   chunk, embed, write), then rebuilds with nothing changed (the incremental check alone).
3. Runs the labelled retrieval queries of ``evals/notes/bulk10-retrieval.jsonl`` (relevance labelled by
   rules over the raw note text, not by the index) with: fhirqa's search (the patient's chunks in memory:
   hybrid = cosine + BM25 fused by RRF, vector only, text only), the same hybrid run as LanceDB queries
   (its vector search and its BM25 index, what a user of LanceDB would write), and a brute-force cosine
   search in numpy over the same stored embeddings. Prints median and p95 query latency and recall@5 /
   hit@5 of each.
4. Answers ``evals/notes/bulk10-questions.jsonl`` (gold from the note text): accuracy and recall@k.

A retrieved chunk counts as relevant when its note is labelled relevant and the chunk holds the key phrase;
recall@5 = relevant notes found in the top 5 / min(5, relevant notes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BULK = ROOT.parent / "shared" / "data" / "synthea-bulk-10"
QUERIES = ROOT / "evals" / "notes" / "bulk10-retrieval.jsonl"
QUESTIONS = ROOT / "evals" / "notes" / "bulk10-questions.jsonl"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def ensure_store(db: Path) -> Any:
    from fhirqa.sources import FileSource
    from fhirqa.store import Store, ingest

    store = Store(db)
    if not store.exists() or store.query("SELECT count(*) FROM note").rows[0][0] < 1215:
        started = time.perf_counter()
        ingest([FileSource([str(BULK)])], db)
        print(f"ingested {BULK} into {db} in {time.perf_counter() - started:.1f} s")
    return store


class BruteForce:
    """Every chunk vector in one numpy matrix; a query is one matrix-vector product over the patient's rows."""

    def __init__(self, rows: list[dict[str, Any]], embedder: Any) -> None:
        import numpy as np

        self.rows = rows
        self.embedder = embedder
        self.matrix = np.asarray([r["vector"] for r in rows], dtype=np.float32)
        self.by_patient: dict[str, Any] = {}
        for i, row in enumerate(rows):
            self.by_patient.setdefault(row["patient_id"], []).append(i)
        self.by_patient = {p: np.asarray(ix) for p, ix in self.by_patient.items()}

    def search(self, patient_id: str, query: str, k: int = 5) -> list[dict[str, Any]]:
        import numpy as np

        vector = self.embedder.encode([query])[0]
        ix = self.by_patient.get(patient_id)
        if ix is None:
            return []
        scores = self.matrix[ix] @ vector
        top = np.argsort(-scores)[:k]
        return [self.rows[ix[i]] for i in top]


def lancedb_hybrid(index: Any, patient_id: str, query: str, k: int = 5) -> list[Any]:
    """The hybrid search as LanceDB queries: its exact vector search and its BM25 index, fused by fhirqa's RRF."""
    import re

    from fhirqa.notes.index import _fuse

    table = index.table()
    where = "patient_id = '" + patient_id.replace("'", "''") + "'"
    vector = index.embedder.encode([query])[0]
    vector_rows = (table.search(vector, vector_column_name="vector").distance_type("cosine")
                   .where(where, prefilter=True).limit(20).to_list())
    words = " ".join(re.findall(r"[A-Za-z0-9]+(?:\.[0-9]+)?", query))
    text_rows = (table.search(words, query_type="fts", fts_columns="text").where(where, prefilter=True)
                 .limit(20).to_list()) if words else []
    return _fuse(vector_rows, text_rows, k)


def judge(item: dict[str, Any], hits: list[tuple[str, str]], k: int = 5) -> tuple[float, bool]:
    """(recall@k, hit@k) of (note_id, text) hits for one labelled query."""
    relevant = set(item["relevant"])
    found = {note for note, text in hits[:k] if note in relevant and item["phrase"] in text.lower()}
    return len(found) / min(k, len(relevant)), bool(found)


def run_retrieval(index: Any, brute: BruteForce, queries: list[dict[str, Any]], repeat: int) -> None:
    methods = {
        "fhirqa hybrid (vector+BM25)": lambda q: [(h.note_id, h.text) for h in
                                                  index.search(q["patient_id"], q["query"], k=5, sync=False)],
        "fhirqa vector only": lambda q: [(h.note_id, h.text) for h in
                                         index.search(q["patient_id"], q["query"], k=5, mode="vector", sync=False)],
        "fhirqa full text only": lambda q: [(h.note_id, h.text) for h in
                                            index.search(q["patient_id"], q["query"], k=5, mode="text", sync=False)],
        "LanceDB queries, hybrid": lambda q: [(h.note_id, h.text) for h in
                                              lancedb_hybrid(index, q["patient_id"], q["query"])],
        "numpy brute-force cosine": lambda q: [(r["note_id"], r["text"]) for r in
                                               brute.search(q["patient_id"], q["query"], k=5)],
    }
    started = time.perf_counter()
    for q in queries:  # embeds every query once (the embedder caches it): latency below is the search itself
        index.embedder.encode([q["query"]])
    embed_ms = (time.perf_counter() - started) * 1000 / max(1, len(queries))
    print(f"\nretrieval: {len(queries)} labelled queries over 13 patients; query embedding {embed_ms:.1f} ms "
          "each (MiniLM, once per query, common to all methods; excluded below)")
    print(f"{'method':<30} {'median ms':>10} {'p95 ms':>8} {'recall@5':>9} {'hit@5':>7}")
    for name, method in methods.items():
        method(queries[0])  # warm
        latencies, recalls, hits = [], [], []
        for _ in range(repeat):
            for q in queries:
                t = time.perf_counter()
                method(q)
                latencies.append((time.perf_counter() - t) * 1000)
        for q in queries:
            recall, hit = judge(q, method(q))
            recalls.append(recall)
            hits.append(hit)
        print(f"{name:<30} {statistics.median(latencies):>10.2f} {p95(latencies):>8.2f} "
              f"{statistics.mean(recalls):>9.1%} {statistics.mean(hits):>7.1%}")
    _by_kind(methods, queries)


def _by_kind(methods: dict[str, Any], queries: list[dict[str, Any]]) -> None:
    kinds = sorted({q["kind"] for q in queries})
    print("recall@5 by query kind: " + ", ".join(kinds))
    for name, method in methods.items():
        cells = []
        for kind in kinds:
            subset = [q for q in queries if q["kind"] == kind]
            cells.append(f"{kind} {statistics.mean(judge(q, method(q))[0] for q in subset):.0%} (n={len(subset)})")
        print(f"  {name:<30} " + "; ".join(cells))


def run_questions(index: Any) -> None:
    spec = importlib.util.spec_from_file_location("notes_evaluate", ROOT / "evals" / "notes" / "evaluate.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    report = module.evaluate(load_jsonl(QUESTIONS), index)
    print("\n" + module.format_report(report, QUESTIONS.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="/tmp/notes_db", help="store folder (created from synthea-bulk-10)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads for embedding")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the queries")
    parser.add_argument("--keep-index", action="store_true", help="reuse an existing index (skip the build timing)")
    args = parser.parse_args(argv)
    if not BULK.is_dir():
        print(f"{BULK} is absent: nothing to benchmark", file=sys.stderr)
        return 1
    os.environ["FHIRQA_EMBEDDINGS_THREADS"] = str(args.threads)
    from fhirqa.agent.embeddings import get_embedder
    from fhirqa.notes import NoteIndex

    store = ensure_store(Path(args.db))
    started = time.perf_counter()
    embedder = get_embedder()
    if embedder is None:
        print("sentence embeddings are unavailable (FHIRQA_EMBEDDINGS off, or the model is not installed)")
        return 1
    print(f"model {embedder.name} loaded in {time.perf_counter() - started:.1f} s; torch threads {args.threads}")
    index = NoteIndex(store, embedder=embedder)
    if not args.keep_index:
        shutil.rmtree(index.path, ignore_errors=True)
        index = NoteIndex(store, embedder=embedder)
        report = index.build()
        per_k = 1000 / max(1, report.notes)
        parts = ", ".join(f"{k.removesuffix('_s')} {v * per_k:.1f} s" for k, v in report.timings.items())
        print(f"index build: {report.notes:,} notes of {report.patients} patients → {report.chunks:,} chunks in "
              f"{report.seconds:.1f} s = {report.seconds * per_k:.1f} s per 1,000 notes ({parts})")
        again = NoteIndex(store, embedder=embedder).build()
        print(f"rebuild with nothing changed: {again.seconds:.2f} s ({again.embedded_notes} notes re-embedded)")
    rows = index.chunk_rows(with_vectors=True)
    print(f"index holds {len({(r['patient_id'], r['note_id']) for r in rows}):,} notes, {len(rows):,} chunks; "
          f"{sum(p.stat().st_size for p in index.path.rglob('*') if p.is_file()) / 1e6:.1f} MB on disk")
    run_retrieval(index, BruteForce(rows, embedder), load_jsonl(QUERIES), args.repeat)
    run_questions(index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
