"""Entities checked per second by the offline note–table consistency pipeline.

    python bench/consistency_bench.py [--db /tmp/cc_r4] [--notes evals/consistency/notes.jsonl] [--repeat 3]

Without ``--db`` the Synthea R4 patients of the labelled set are ingested into a temporary store first.
Prints three figures over the labelled notes: **cold** (a fresh checker per patient: store connection, the
patient's rows read from Parquet, then every note), **warm** (the patient's record already read: what a
server checking many notes of one patient pays per note), and the warm time per stage (segment + extract,
timing, item search, verification).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fhirqa.consistency import PatientChecker  # noqa: E402
from fhirqa.consistency.model import NoteContext  # noqa: E402
from fhirqa.consistency.timing import attach  # noqa: E402
from fhirqa.consistency.verify import verify  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "synthea-r4"


def _store(db: str | None, patients: set[str]) -> str:
    if db:
        return db
    from fhirqa.sources import FileSource
    from fhirqa.store import ingest

    files = [p for p in sorted(DATA.glob("*.json")) if any(pid in p.read_text(encoding="utf-8")[:6000] for pid in patients)]
    folder = Path(tempfile.mkdtemp(prefix="cc-bench-")) / "db"
    ingest([FileSource(files)], folder)
    return str(folder)


def cold(db: str, by_patient: dict[str, list[dict[str, Any]]], shared: bool) -> tuple[int, float]:
    """A fresh checker per patient (on one shared store connection, or each with its own), every note once."""
    from fhirqa.store import Store

    entities, started = 0, time.perf_counter()
    con = Store(db).connect() if shared else None
    for pid, notes in by_patient.items():
        checker = PatientChecker(db, pid, connection=con)
        for n in notes:
            entities += len(checker.check(n["text"], n["note_time"], n["note_type"], n["encounter"]).checks)
        checker.close()
    if con is not None:
        con.close()
    return entities, time.perf_counter() - started


def warm(db: str, by_patient: dict[str, list[dict[str, Any]]], repeat: int) -> tuple[int, list[float], dict[str, float]]:
    """Checkers with the record already read; whole-note times per round and time per stage."""
    checkers = {pid: PatientChecker(db, pid) for pid in by_patient}
    for pid, notes in by_patient.items():  # read every view once
        for n in notes:
            checkers[pid].check(n["text"], n["note_time"], n["note_type"], n["encounter"])
    rounds, entities = [], 0
    for _ in range(repeat):
        entities, started = 0, time.perf_counter()
        for pid, notes in by_patient.items():
            for n in notes:
                entities += len(checkers[pid].check(n["text"], n["note_time"], n["note_type"], n["encounter"]).checks)
        rounds.append(time.perf_counter() - started)
    stages: dict[str, float] = defaultdict(float)
    for pid, notes in by_patient.items():
        c = checkers[pid]
        for n in notes:
            t0 = time.perf_counter()
            ents = c.entities(n["text"])
            t1 = time.perf_counter()
            when = datetime_of(n["note_time"])
            enc = c.encounter(n["encounter"], when, "other")
            ctx = NoteContext(when, "progress", enc.get("start_time") if enc else None, enc.get("end_time") if enc else None)
            attach(n["text"], ents, ctx)
            t2 = time.perf_counter()
            matches = [c.index.find(e) for e in ents]
            t3 = time.perf_counter()
            for e, m in zip(ents, matches, strict=True):
                verify(e, m, c.rows.rows(m.view) if m.names and m.view in ("observation", "medication", "condition",
                                                                             "procedure", "immunization") else [])
            t4 = time.perf_counter()
            stages["segment + extract"] += t1 - t0
            stages["timing"] += t2 - t1
            stages["item search"] += t3 - t2
            stages["verification"] += t4 - t3
    for c in checkers.values():
        c.close()
    return entities, rounds, stages


def datetime_of(text: str):  # noqa: ANN201
    """An ISO time as an aware datetime."""
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def main(argv: list[str] | None = None) -> int:
    """Run and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="store with the synthea-r4 patients (default: ingest them into a temp store)")
    parser.add_argument("--notes", type=Path, default=ROOT / "evals" / "consistency" / "notes.jsonl")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    notes = [json.loads(line) for line in args.notes.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_patient: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for n in notes:
        by_patient[n["patient_id"]].append(n)
    db = _store(args.db, set(by_patient))
    n_own, t_own = cold(db, by_patient, shared=False)
    n_cold, t_cold = cold(db, by_patient, shared=True)
    n_warm, rounds, stages = warm(db, by_patient, args.repeat)
    best = min(rounds)
    chars = sum(len(n["text"]) for n in notes)
    print(f"{len(notes)} notes ({chars / 1000:.0f} k characters), {len(by_patient)} patients, offline pipeline")
    print(f"  cold, a store connection per patient: {n_own} entities in {t_own:.2f} s = {n_own / t_own:,.0f} entities/s")
    print(f"  cold, one store connection, each patient's rows read from Parquet: {n_cold} entities in {t_cold:.2f} s "
          f"= {n_cold / t_cold:,.0f} entities/s")
    print(f"  warm (record already read), best of {args.repeat}: {n_warm} entities in {best:.2f} s "
          f"= {n_warm / best:,.0f} entities/s, {best / len(notes) * 1000:.1f} ms per note "
          f"(median round {statistics.median(rounds):.2f} s)")
    total = sum(stages.values())
    print("  warm time per stage: " + ", ".join(f"{k} {v / total:.0%}" for k, v in stages.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
