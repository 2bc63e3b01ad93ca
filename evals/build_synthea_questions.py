"""Build the Synthea question set with gold answers computed from the raw FHIR JSON (never from fhirqa).

Usage::

    python evals/build_synthea_questions.py                     # writes evals/synthea-r4.jsonl
    python evals/build_synthea_questions.py --check             # exit 1 if the committed file is stale
    python evals/build_synthea_questions.py --data DIR --out PATH --per-category 30

Same data in, same bytes out: every random choice comes from an RNG seeded by a string.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from synthea_gold import gen_events, gen_people, gen_values  # noqa: E402
from synthea_gold.candidate import Candidate, Context, Population, choose_now, seeded  # noqa: E402
from synthea_gold.record import PatientRecord, load_all  # noqa: E402
from synthea_gold.select import CATEGORIES, select  # noqa: E402
from synthea_gold.vocab import CONCEPTS, ITEMS, item_values  # noqa: E402

DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "synthea-r4"
DEFAULT_OUT = HERE / "synthea-r4.jsonl"
SEED = "fhirqa-synthea-r4-v1"

GENERATORS: dict[str, Callable[[Context], list[Candidate]]] = {
    "latest_first": gen_values.gen_latest_first,
    "value_in_window": gen_values.gen_value_in_window,
    "min_max": gen_values.gen_min_max,
    "average": gen_values.gen_average,
    "count_measurements": gen_values.gen_count_measurements,
    "change_trend": gen_values.gen_change_trend,
    "threshold": gen_values.gen_threshold,
    "after_drug": gen_values.gen_after_drug,
    "count_encounters": gen_events.gen_count_encounters,
    "count_other": gen_events.gen_count_other,
    "existence": gen_events.gen_existence,
    "first_last_time": gen_events.gen_first_last_time,
    "time_since": gen_events.gen_time_since,
    "active_conditions": gen_events.gen_active_conditions,
    "active_medications": gen_events.gen_active_medications,
    "daily_dose": gen_events.gen_daily_dose,
    "age": gen_people.gen_age,
    "demographics": gen_people.gen_demographics,
    "patient_lookup": gen_people.gen_patient_lookup,
}

# Per-category caps on one pattern, so no single pattern dominates a category.
GROUP_CAPS = {"latest-empty": 6, "rx-all": 8, "imm-all": 6, "list=empty": 2, "list": 15}


def population(records: Sequence[PatientRecord]) -> Population:
    """Items and concepts that at least one patient has."""
    items = {k for k, item in ITEMS.items() if any(item_values(r, item) for r in records)}
    concepts = {k for k, c in CONCEPTS.items()
                if any(c.matches(e.name) for r in records for e in r.of_kind(c.kind))}
    return Population(items, concepts)


def candidates(records: Sequence[PatientRecord]) -> dict[str, list[Candidate]]:
    """Every candidate question of every patient, by category."""
    pop = population(records)
    by_category: dict[str, list[Candidate]] = {c: [] for c in CATEGORIES}
    for record in records:
        now, late = choose_now(record, seeded(SEED, "now", record.id))
        for name, generator in GENERATORS.items():
            ctx = Context(record, now, late, pop, seeded(SEED, name, record.id))
            for cand in generator(ctx):
                by_category[cand.category].append(cand)
    return by_category


def build(data: Path, per_category: int = 30) -> list[dict[str, Any]]:
    """The question set as JSON-ready dicts, in category order."""
    records = load_all(data)
    if not records:
        raise SystemExit(f"no bundles in {data}")
    by_category = candidates(records)
    usage: Counter[str | None] = Counter()
    rows: list[dict[str, Any]] = []
    for category in CATEGORIES:
        rng = seeded(SEED, "select", category)
        chosen = select(by_category[category], per_category, rng, usage, GROUP_CAPS)
        chosen.sort(key=lambda c: (c.template, c.patient_id or "", c.question))
        for n, cand in enumerate(chosen, 1):
            rows.append(cand.to_json(f"{category}-{n:03d}"))
    return rows


def render(rows: Sequence[dict[str, Any]]) -> str:
    """JSON Lines, one question per line, keys in a fixed order."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of Synthea R4 bundles")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSONL to write")
    parser.add_argument("--per-category", type=int, default=30, help="questions per category (at most)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    rows = build(args.data, args.per_category)
    text = render(rows)
    counts = Counter(r["category"] for r in rows)
    patients = {r["patient_id"] for r in rows if r["patient_id"]}
    summary = ", ".join(f"{c}={counts[c]}" for c in CATEGORIES)
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{'up to date' if same else 'STALE'}: {args.out} ({len(rows)} questions)")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} questions over {len(patients)} patients to {args.out}\n{summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
