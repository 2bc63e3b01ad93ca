"""Build the two held-out question sets, with gold answers computed from the raw FHIR JSON (never fhirqa).

* ``heldout-shorthand.jsonl``: the 100 Synthea bundles of ``../shared/data/synthea-r4``, asked in words
  the first set does not use (shorthand, requests, narrative, lay words, misspellings, other date formats).
* ``heldout-sample.jsonl``: the five synthetic patients of ``examples/sample`` (other codes, brand names,
  medication administrations, inpatient stays), asked at 2026-06-30T12:00:00Z.

Usage::

    python evals/build_heldout.py                 # writes both sets
    python evals/build_heldout.py --check         # exit 1 when a committed set is stale
    python evals/build_heldout.py --only sample   # one set
    python evals/build_heldout.py --seed fresh-1 --out-dir /tmp/heldout   # a new draw nobody has seen

Same data in, same bytes out: every random choice comes from an RNG seeded by a string.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import build_heldout_events as ev  # noqa: E402
import build_heldout_mar as mar  # noqa: E402
import build_heldout_people as pe  # noqa: E402
import build_heldout_values as va  # noqa: E402
from build_heldout_core import Context, Population, Question, choose_now, seeded, select  # noqa: E402
from build_heldout_fhir import Record, load_folder  # noqa: E402
from build_heldout_vocab import ABSENT_SAMPLE, ABSENT_SYNTHEA, CONCEPTS, ITEMS  # noqa: E402

CATEGORIES = ("latest_value", "first_value", "value_in_window", "min_max", "average", "count_measurements",
              "count_encounters", "count_other", "existence_positive", "existence_negative", "first_last_time",
              "time_since", "change", "trend", "threshold", "daily_dose", "after_drug", "active_conditions",
              "active_medications", "age", "demographics", "patient_lookup", mar.CATEGORY)

Generator = Callable[[Context], list[Question]]
COMMON: dict[str, Generator] = {
    "latest_first": va.gen_latest_first, "in_window": va.gen_in_window, "min_max": va.gen_min_max,
    "average": va.gen_average, "count": va.gen_count, "change": va.gen_change, "trend": va.gen_trend,
    "threshold": va.gen_threshold, "after_drug": va.gen_after_drug, "empty": va.gen_empty_windows, "encounters": ev.gen_count_encounters,
    "count_other": ev.gen_count_other, "existence": ev.gen_existence, "first_last": ev.gen_first_last_time,
    "time_since": ev.gen_time_since, "daily_dose": ev.gen_daily_dose, "conditions": pe.gen_active_conditions,
    "medications": pe.gen_active_medications, "age": pe.gen_age, "demographics": pe.gen_demographics,
}


@dataclass(frozen=True)
class SetSpec:
    """One held-out set: where its data is, where it goes, how many questions of each category."""

    name: str
    data: Path
    out: Path
    seed: str
    targets: dict[str, int]
    absent: dict[str, tuple[str, ...]]
    fixed_now: datetime | None = None
    fixed_late: datetime | None = None


SHORTHAND = SetSpec("shorthand", HERE.parent.parent / "shared" / "data" / "synthea-r4", HERE / "heldout-shorthand.jsonl",
                    "fhirqa-heldout-shorthand-v1", {**{c: 12 for c in CATEGORIES if c != mar.CATEGORY},
                                                   "existence_negative": 14}, ABSENT_SYNTHEA)
SAMPLE = SetSpec("sample", HERE.parent / "examples" / "sample", HERE / "heldout-sample.jsonl", "fhirqa-heldout-sample-v1",
                 {**{c: 6 for c in CATEGORIES}, mar.CATEGORY: 14, "patient_lookup": 5, "latest_value": 8,
                  "active_conditions": 7, "active_medications": 7, "existence_negative": 9}, ABSENT_SAMPLE,
                 datetime(2026, 6, 30, 12, tzinfo=UTC), datetime(2029, 6, 30, 12, tzinfo=UTC))
SPECS = {s.name: s for s in (SHORTHAND, SAMPLE)}
CAPS = {"list-now-empty": 2, "list-empty": 2, "list-at-date-empty": 1}
# Patterns every set must hold (the brief's "active probs", "current meds").
FIRST = ("active_conditions/list-now", "active_medications/list", "latest_value/vital", "latest_value/lab")


def population(records: Sequence[Record]) -> Population:
    """Items and concepts at least one patient has."""
    items = {k for k, item in ITEMS.items() if any(r.series(item.codes) for r in records)}
    concepts = {k for k, c in CONCEPTS.items() if any(c.matches(f.name) for r in records for f in r.of(c.kind)
                                                      if f.verification not in ev.NOT_A_DIAGNOSIS)}
    return Population(items, concepts)


def candidates(spec: SetSpec, records: Sequence[Record]) -> dict[str, list[Question]]:
    """Every candidate question of every patient, by category."""
    pop = population(records)
    out: dict[str, list[Question]] = {c: [] for c in CATEGORIES}
    generators: dict[str, Generator] = dict(COMMON)
    generators["absent"] = lambda ctx: va.gen_absent_items(ctx, spec.absent)
    if spec.name == "sample":
        generators["mar"] = mar.gen_daily_totals
    for record in records:
        now, late = choose_now(record, seeded(spec.seed, "now", record.id))
        now, late = spec.fixed_now or now, spec.fixed_late or late
        for name, generator in generators.items():
            ctx = Context(record, now, late, pop, seeded(spec.seed, name, record.id), spec.name)
            for q in generator(ctx):
                out[q.category].append(q)
        ctx = Context(record, now, late, pop, seeded(spec.seed, "lookup", record.id), spec.name)
        out["patient_lookup"].extend(pe.gen_lookup(ctx, records))
    return out


def build(spec: SetSpec, data: Path | None = None) -> list[dict[str, Any]]:
    """One set as JSON-ready dicts, in category order."""
    records = load_folder(data or spec.data)
    if not records:
        raise SystemExit(f"no bundles in {data or spec.data}")
    pool = candidates(spec, records)
    usage: Counter[str | None] = Counter()
    rows: list[dict[str, Any]] = []
    for category in CATEGORIES:
        target = spec.targets.get(category, 0)
        chosen = select(pool[category], target, seeded(spec.seed, "select", category), usage, CAPS, FIRST)
        chosen.sort(key=lambda q: (q.template, q.patient_id or "", q.question))
        rows += [q.to_json(f"{category}-{n:03d}") for n, q in enumerate(chosen, 1)]
    return rows


def render(rows: Sequence[dict[str, Any]]) -> str:
    """JSON Lines, one question per line."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", choices=sorted(SPECS), help="build one set")
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    parser.add_argument("--seed", help="draw other questions (same styles and rules) with this seed")
    parser.add_argument("--out-dir", type=Path, help="write the sets here instead of evals/")
    args = parser.parse_args(argv)
    status = 0
    for spec in SPECS.values():
        if args.only and spec.name != args.only:
            continue
        if args.seed:
            spec = replace(spec, seed=f"{spec.seed}:{args.seed}")
        if args.out_dir:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            spec = replace(spec, out=args.out_dir / spec.out.name)
        rows = build(spec)
        text = render(rows)
        counts = Counter(r["category"] for r in rows)
        if args.check:
            same = spec.out.is_file() and spec.out.read_text(encoding="utf-8") == text
            print(f"{'up to date' if same else 'STALE'}: {spec.out.name} ({len(rows)} questions)")
            status |= 0 if same else 1
            continue
        spec.out.write_text(text, encoding="utf-8")
        print(f"wrote {len(rows)} questions to {spec.out.name}: " + ", ".join(f"{c}={n}" for c, n in counts.items()))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
