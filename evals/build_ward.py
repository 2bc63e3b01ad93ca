"""Build evals/heldout-ward.jsonl: ward-style questions (clinician shorthand, lay words, typos, brands,
assorted date forms) about the Bulk-export Synthea patients (../shared/data/synthea-bulk-10) and some
Synthea R4 bundles (../shared/data/synthea-r4, the only ones with Observations).

Gold answers come from the raw JSON (orjson), following docs/questions.md; nothing is imported from fhirqa.
Deterministic: every random choice comes from random.Random seeded by a string.

    python evals/build_ward.py            # rewrite evals/heldout-ward.jsonl
    python evals/build_ward.py --check    # exit 1 when the committed file is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ward_gold import records, values  # noqa: E402
from ward_gold.core import load  # noqa: E402

OUT = Path(__file__).resolve().parent / "heldout-ward.jsonl"

# questions per category; value categories come from the R4 bundles (Bulk has no Observations)
VALUE_N = {"latest_value": 12, "first_value": 10, "value_in_window": 14, "min_max": 12, "average": 10,
           "count_measurements": 10, "change": 10, "trend": 10, "threshold": 12, "after_drug": 8}
RECORD_N = {"count_encounters": 16, "count_other": 16, "existence_positive": 14, "existence_negative": 16,
            "first_last_time": 14, "time_since": 12, "active_conditions": 12, "active_medications": 12,
            "daily_dose": 8, "age": 10, "demographics": 12}
RECORD_BULK_SHARE = {"daily_dose": 0.5, "active_medications": 0.6, "time_since": 0.7}
LOOKUP_N = 8
ORDER = ["latest_value", "first_value", "value_in_window", "min_max", "average", "count_measurements",
         "count_encounters", "count_other", "existence_positive", "existence_negative", "first_last_time",
         "time_since", "change", "trend", "threshold", "daily_dose", "after_drug", "active_conditions",
         "active_medications", "age", "demographics", "patient_lookup"]


def build() -> bytes:
    P = load()
    qs = values.gen_values(P, VALUE_N)
    for cat, n in RECORD_N.items():
        qs += records.take(P, cat, n, records.GEN[cat], src_weight=RECORD_BULK_SHARE.get(cat, 0.8))
    qs += records.gen_lookup(P, LOOKUP_N)
    qs.sort(key=lambda x: ORDER.index(x["category"]))
    lines = []
    count: dict[str, int] = {}
    for x in qs:
        count[x["category"]] = count.get(x["category"], 0) + 1
        x["id"] = f"{x['category']}-{count[x['category']]:03d}"
        lines.append(orjson.dumps(x))
    return b"\n".join(lines) + b"\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    data = build()
    if a.check:
        ok = a.out.exists() and a.out.read_bytes() == data
        print("up to date" if ok else "stale")
        return 0 if ok else 1
    a.out.write_bytes(data)
    n = data.count(b"\n")
    print(f"wrote {n} questions to {a.out.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
