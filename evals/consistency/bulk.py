"""Run the checker over every note in a store (no labels) and summarise what it flags.

    fhirqa ingest ../shared/data/synthea-bulk-10 --db /tmp/cc_bulk
    python -m evals.consistency.bulk --db /tmp/cc_bulk [--examples 3] [--json flags.json]

Prints notes and entities checked, verdicts, and the flags grouped by field and item with a few examples
(the note's words, the window it was read against and the closest record rows).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from fhirqa.consistency import PatientChecker
from fhirqa.store import Store


def run(db: str) -> tuple[list[dict[str, Any]], Counter[str], int, int, float]:
    """Every flag (as dicts), verdict counts, notes, entities and seconds."""
    store = Store(db)
    patients = [r[0] for r in store.query("SELECT DISTINCT patient_id FROM note WHERE text IS NOT NULL ORDER BY 1").rows]
    flags: list[dict[str, Any]] = []
    verdicts: Counter[str] = Counter()
    notes = entities = 0
    started = time.perf_counter()
    con = store.connect()
    for pid in patients:
        checker = PatientChecker(store, pid, connection=con)
        for row in checker.notes():
            report = checker.check(row["text"], row["time"], row.get("note_type") or "other", row.get("encounter_ref"),
                                   row.get("ref"))
            notes += 1
            entities += len(report.checks)
            verdicts.update(c.status for c in report.checks)
            for c in report.inconsistent:
                s, e = c.entity.span
                flags.append({"patient": pid, "note": report.note_ref, "note_type": report.note_type,
                              "note_time": report.note_time.isoformat(), "text": report.text[s:e],
                              "context": report.text[max(0, s - 100):e + 40].replace("\n", " | "),
                              "category": c.entity.category, "fields": c.fields, "reason": c.reason,
                              "window": c.entity.time.to_json() if c.entity.time else None,
                              "rows": [{k: str(v) for k, v in r.items()} for r in c.rows[:2]]})
        checker.close()
    con.close()
    return flags, verdicts, notes, entities, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--examples", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    flags, verdicts, notes, entities, seconds = run(args.db)
    print(f"{notes} notes, {entities} entities in {seconds:.1f} s: "
          + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in flags:
        groups[(f["category"], ",".join(f["fields"]), f["text"].lower()[:60])].append(f)
    print(f"{len(flags)} flagged, in {len({f['note'] for f in flags})} notes of "
          f"{len({f['patient'] for f in flags})} patients")
    for (category, fields, text), items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(items):>4}  {category:<12} {fields:<10} {text}")
        for f in items[: args.examples]:
            window = f["window"] or {}
            print(f"          {f['note_type']} {f['note_time'][:16]}, window {window.get('start', '')[:16]} … "
                  f"{window.get('end', '')[:16]} ({window.get('kind', '')}); record: "
                  + "; ".join(f"{r.get('name') or r.get('medication_name')} @ {r.get('start_time') or r.get('time', '')}"[:90]
                              for r in f["rows"]))
    if args.json:
        args.json.write_text(json.dumps(flags, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
