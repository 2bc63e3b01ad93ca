"""Build the labelled note–table consistency set from the raw Synthea R4 bundles.

    python -m evals.consistency.generate [--data ../shared/data/synthea-r4] [--out evals/consistency/notes.jsonl]
                                         [--patients 60] [--seed 6] [--rate 0.3]
    python -m evals.consistency.generate --variant heldout --skip 60 --patients 40 --seed 7   # notes-heldout.jsonl
    python -m evals.consistency.generate --variant fresh --skip 60 --patients 40 --seed 8     # notes-fresh.jsonl

For each patient with clinic visits that measured labs and vitals: a clinic progress note (latest visit), a
nursing note (the visit before), a results follow-up note written the next day (most patients), and for up to
two emergency or inpatient encounters an admission H&P and a discharge summary. Each note is JSON with its
text, type, time, encounter and every labelled entity (spans, label, mismatch kind, what the record holds).
Same inputs and seed, same bytes out. Imports nothing from fhirqa.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from evals.consistency.acute import admission, discharge
from evals.consistency.entities import Writer
from evals.consistency.record import Encounter, Record, load_bundle
from evals.consistency.styles import acute_parts, followup, nursing, progress, visit_obs

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "synthea-r4"
OUT = Path(__file__).resolve().parent / "notes.jsonl"
NOTE_TYPES = {"progress": "Progress note", "nursing": "Nursing note", "followup": "Progress note",
              "admission": "History and physical note", "discharge": "Discharge summary"}


def lab_visits(record: Record) -> list[Encounter]:
    """Clinic visits that measured at least eight items a note would quote, oldest first."""
    return [e for e in record.encounters if e.cls == "AMB" and len(visit_obs(record, e)) >= 8]


def acute_visits(record: Record) -> list[Encounter]:
    """Emergency and inpatient encounters with something to write about, oldest first."""
    out = []
    for enc in record.encounters:
        if enc.cls in ("EMER", "IMP"):
            conds, procs, meds = acute_parts(record, enc)
            if len(conds) + len(procs) + len(meds) >= 2:
                out.append(enc)
    return out


def plan_notes(record: Record, rng: random.Random) -> list[tuple[str, Encounter, Any, Encounter | None]]:
    """(style, encounter, note time, prior clinic visit) for every note of the patient."""
    visits = lab_visits(record)
    notes: list[tuple[str, Encounter, Any, Encounter | None]] = []
    if visits:
        last = visits[-1]
        notes.append(("progress", last, last.end, None))
        second = visits[-2] if len(visits) > 1 else last
        notes.append(("nursing", second, second.end + timedelta(minutes=10), None))
        if rng.random() < 0.7:
            next_day = datetime.combine(last.start.date() + timedelta(days=1), time(rng.randrange(9, 17)), UTC)
            notes.append(("followup", last, next_day + timedelta(minutes=rng.randrange(60)), None))
    for enc in acute_visits(record)[-2:]:
        prior = next((v for v in reversed(visits) if v.start < enc.start), None)
        notes.append(("admission", enc, enc.start + timedelta(minutes=rng.randrange(40, 100)), prior))
        notes.append(("discharge", enc, enc.end, prior))
    return notes


def write_note(record: Record, style: str, enc: Encounter, note_time: Any, prior: Encounter | None,
               rng: random.Random, rate: float) -> Writer:
    """One note of one style."""
    w = Writer(rng, record, enc, "progress" if style == "followup" else style, note_time, rate)
    if style == "progress":
        progress(w, visit_obs(record, enc))
    elif style == "nursing":
        nursing(w, visit_obs(record, enc))
    elif style == "followup":
        followup(w, visit_obs(record, enc))
    elif style == "admission":
        admission(w, prior)
    else:
        discharge(w, prior)
    return w


def build(data: Path, patients: int, seed: int, rate: float, skip: int = 0) -> list[dict[str, Any]]:
    """Every note of ``patients`` patients (by file name, after the first ``skip``) that have clinic lab visits."""
    out: list[dict[str, Any]] = []
    taken = seen = 0
    for path in sorted(data.glob("*.json")):
        record = load_bundle(path)
        if not lab_visits(record):
            continue
        seen += 1
        if seen <= skip:
            continue
        rng = random.Random(f"{seed}:{record.patient_id}")  # noqa: S311 - reproducible text, not security
        for i, (style, enc, note_time, prior) in enumerate(plan_notes(record, rng)):
            w = write_note(record, style, enc, note_time, prior, rng, rate)
            text = w.note.text
            for g in w.note.golds:  # every span must point at what it claims
                assert text[g.name_span[0]:g.name_span[1]] == g.name, (g, text)  # noqa: S101
            out.append({
                "note_id": f"{record.patient_id[:8]}-{i}", "patient_id": record.patient_id, "style": style,
                "note_type": NOTE_TYPES[style], "note_time": note_time.isoformat(), "encounter": f"Encounter/{enc.id}",
                "text": text, "entities": [g.to_json() for g in w.note.golds],
            })
        taken += 1
        if taken >= patients:
            break
    return out


def summary(notes: list[dict[str, Any]]) -> str:
    """Counts by label, entity type, mismatch kind and note style."""
    ents = [e for n in notes for e in n["entities"]]
    labelled = [e for e in ents if e["label"] != "unverifiable"]
    lines = [
        f"{len(notes)} notes, {len({n['patient_id'] for n in notes})} patients, {len(labelled)} labelled entities "
        f"(+{len(ents) - len(labelled)} unverifiable statements)",
        "labels: " + ", ".join(f"{k} {v}" for k, v in Counter(e["label"] for e in ents).most_common()),
        "types: " + ", ".join(f"{k} {v}" for k, v in Counter(e["type"] for e in labelled).most_common()),
        "mismatch: " + ", ".join(f"{k} {v}" for k, v in Counter(e["mismatch"] for e in labelled if e["mismatch"]).most_common()),
        "styles: " + ", ".join(f"{k} {v}" for k, v in Counter(n["style"] for n in notes).most_common()),
        "time expressions: " + ", ".join(f"{k} {v}" for k, v in Counter(e["time_kind"] for e in labelled).most_common()),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the labelled set and print what it holds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--patients", type=int, default=60)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--rate", type=float, default=0.3, help="share of entities given an inconsistency")
    parser.add_argument("--variant", choices=["dev", "heldout", "fresh"], default="dev",
                        help="heldout / fresh: other wordings (variant.py, fresh.py), run with --skip for other patients")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N eligible patients")
    args = parser.parse_args(argv)
    if args.variant != "dev":
        from evals.consistency import fresh, variant

        (variant if args.variant == "heldout" else fresh).apply()
        if args.out == OUT:
            args.out = OUT.with_name(f"notes-{args.variant}.jsonl")
    notes = build(args.data, args.patients, args.seed, args.rate, args.skip)
    args.out.write_text("".join(json.dumps(n, ensure_ascii=False) + "\n" for n in notes), encoding="utf-8")
    print(summary(notes))
    print(f"→ {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
