"""Score fhirqa's note–table consistency checker on the labelled set.

    python -m evals.consistency.score --db /tmp/cc_r4 [--notes evals/consistency/notes.jsonl] [--limit N]
                                      [--failures 20] [--json report.json]

The store must hold the patients of ``../shared/data/synthea-r4`` (``fhirqa ingest ../shared/data/synthea-r4
--db /tmp/cc_r4``). A gold entity is aligned with the checker's entities by span (the value for a numeric entity,
the name otherwise). The positive class is *inconsistent*: a true positive is a gold-inconsistent entity the
checker flags; a false positive is a gold-consistent or unverifiable entity it flags, or a flag on text no gold
entity covers; a false negative is a gold-inconsistent entity it does not flag (checked as consistent, skipped or
not found). Per mismatch kind, the expected field is the kind itself, ``existence`` for a wrong drug; "field
recall" also requires the checker to name that field.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from fhirqa.consistency import PatientChecker
from fhirqa.consistency.model import Check
from fhirqa.store import Store

NOTES = Path(__file__).resolve().parent / "notes.jsonl"
EXPECTED_FIELD = {"value": "value", "unit": "unit", "time": "time", "existence": "existence", "wrong_drug": "existence"}
TYPES = ("lab", "vital", "medication", "condition", "procedure", "immunization")


def _overlap(a: list[int] | tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    return bool(a and b and a[0] < b[1] and b[0] < a[1])


def align(gold: dict[str, Any], checks: list[Check]) -> list[Check]:
    """The checker's entities that speak about one gold entity."""
    if gold.get("value_span"):
        hits = [c for c in checks if _overlap(gold["value_span"], c.entity.value_span)]
        if hits:
            return hits
        return [c for c in checks if c.entity.value_span is None and _overlap(gold["name_span"], c.entity.name_span)]
    return [c for c in checks if _overlap(gold["name_span"], c.entity.name_span)]


def predicted(checks: list[Check]) -> tuple[str, set[str]]:
    """(status, fields) the checker gave a gold entity: inconsistent wins, then consistent, unverifiable, missed."""
    statuses = {c.status for c in checks}
    for status in ("inconsistent", "consistent", "unverifiable"):
        if status in statuses:
            fields = {f for c in checks if c.status == "inconsistent" for f in c.fields}
            return status, fields
    return "missed", set()


def run(notes: list[dict[str, Any]], db: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float, int]:
    """Check every note; return per-gold results, spurious flags, seconds spent and entities checked."""
    results, spurious = [], []
    seconds, checked = 0.0, 0
    by_patient: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for note in notes:
        by_patient[note["patient_id"]].append(note)
    con = Store(db).connect()
    for pid, pnotes in by_patient.items():
        checker = PatientChecker(db, pid, connection=con)
        for note in pnotes:
            started = time.perf_counter()
            report = checker.check(note["text"], note["note_time"], note["note_type"], note["encounter"], note["note_id"])
            seconds += time.perf_counter() - started
            checked += len(report.checks)
            used: set[int] = set()
            for gold in note["entities"]:
                hits = align(gold, report.checks)
                used |= {id(c) for c in hits}
                status, fields = predicted(hits)
                results.append({"note": note["note_id"], "gold": gold, "status": status, "fields": sorted(fields),
                                "checks": [c.to_json() for c in hits], "text": note["text"]})
            for c in report.checks:
                if id(c) not in used and c.status == "inconsistent":
                    spurious.append({"note": note["note_id"], "check": c.to_json(),
                                     "text": note["text"][c.entity.span[0]:c.entity.span[1]]})
        checker.close()
    con.close()
    return results, spurious, seconds, checked


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall, F1 (1.0 when there is nothing to find or flag)."""
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def tables(results: list[dict[str, Any]], spurious: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure the scorer prints, as data."""
    out: dict[str, Any] = {}
    def group(key) -> dict[str, tuple[int, int, int, int]]:  # noqa: ANN001
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # tp fp fn n
        for r in results:
            g = r["gold"]
            k = key(g)
            if k is None:
                continue
            flagged = r["status"] == "inconsistent"
            if g["label"] == "inconsistent":
                counts[k][3] += 1
                counts[k][0 if flagged else 2] += 1
            elif flagged:
                counts[k][1] += 1
        for s in spurious:
            k = key({"type": s["check"]["entity"]["category"], "class": s["check"]["entity"]["cls"], "label": "none",
                     "time_kind": (s["check"]["entity"]["time"] or {}).get("kind", "default")})
            if k is not None:
                counts[k][1] += 1
        return {k: tuple(v) for k, v in counts.items()}  # type: ignore[misc]
    out["overall"] = group(lambda g: "all")
    out["by_type"] = group(lambda g: g["type"])
    out["by_class"] = group(lambda g: g["class"])
    out["by_time"] = group(lambda g: g.get("time_kind", "default"))
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # detected, field-correct, n, flagged-with-field
    for r in results:
        g = r["gold"]
        if g["label"] == "inconsistent":
            k = kinds[g["mismatch"]]
            k[2] += 1
            if r["status"] == "inconsistent":
                k[0] += 1
                k[1] += EXPECTED_FIELD[g["mismatch"]] in r["fields"]
    field_flags: Counter[str] = Counter()
    field_right: Counter[str] = Counter()
    for r in results:
        if r["status"] != "inconsistent":
            continue
        for f in r["fields"]:
            field_flags[f] += 1
            g = r["gold"]
            field_right[f] += g["label"] == "inconsistent" and EXPECTED_FIELD[g["mismatch"]] == f
    for s in spurious:
        for f in s["check"]["fields"]:
            field_flags[f] += 1
    out["by_kind"] = {k: tuple(v) for k, v in kinds.items()}
    out["field_precision"] = {f: (field_right[f], field_flags[f]) for f in field_flags}
    out["labels"] = {lab: dict(Counter(r["status"] for r in results if r["gold"]["label"] == lab))
                     for lab in ("consistent", "inconsistent", "unverifiable")}
    return out


def render(t: dict[str, Any], seconds: float, checked: int, n_notes: int, n_patients: int) -> str:
    """The figures as text."""
    lines = [f"{n_notes} notes, {n_patients} patients; {checked} entities checked in {seconds:.2f} s "
             f"({checked / seconds if seconds else 0:.0f}/s)", ""]
    lines.append(f"{'inconsistency detection':<26}{'n':>6}{'TP':>6}{'FP':>6}{'FN':>6}{'P':>8}{'R':>8}{'F1':>8}")
    for title, key, order in (("overall", "overall", ("all",)), ("entity type", "by_type", TYPES),
                              ("entity class", "by_class", ("T1", "T2")),
                              ("time expression", "by_time", ("explicit", "narrative", "default"))):
        lines.append(f"-- {title}")
        for k in order:
            if k not in t[key]:
                continue
            tp, fp, fn, n = t[key][k]
            p, r, f1 = prf(tp, fp, fn)
            lines.append(f"  {k:<24}{n:>6}{tp:>6}{fp:>6}{fn:>6}{p:>8.1%}{r:>8.1%}{f1:>8.1%}")
    lines += ["", f"{'mismatch kind':<18}{'n':>6}{'detected':>10}{'recall':>8}{'field ok':>10}{'field R':>9}"
              f"{'flagged':>9}{'field P':>9}{'field F1':>10}"]
    for kind in ("value", "unit", "time", "existence", "wrong_drug"):
        if kind not in t["by_kind"]:
            continue
        det, right, n, _ = t["by_kind"][kind]
        fieldname = "existence" if kind == "wrong_drug" else kind
        ok, flagged = t["field_precision"].get(fieldname, (0, 0))
        fp = right / n if n else 0.0
        pp = ok / flagged if flagged else 1.0
        f1 = 2 * pp * fp / (pp + fp) if pp + fp else 0.0
        shared = " (shared)" if kind in ("existence", "wrong_drug") else ""
        lines.append(f"  {kind:<16}{n:>6}{det:>10}{det / n:>8.1%}{right:>10}{fp:>9.1%}{flagged:>9}{pp:>9.1%}{f1:>10.1%}{shared}")
    lines += ["", "checker's verdict by gold label:"]
    for label, counts in t["labels"].items():
        total = sum(counts.values())
        lines.append(f"  {label:<14}{total:>6}: " + ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in
                                                           sorted(counts.items(), key=lambda kv: -kv[1])))
    return "\n".join(lines)


def failures(results: list[dict[str, Any]], spurious: list[dict[str, Any]], limit: int) -> str:
    """Examples of misses and false flags."""
    lines = []
    misses = [r for r in results if r["gold"]["label"] == "inconsistent" and r["status"] != "inconsistent"]
    false = [r for r in results if r["gold"]["label"] != "inconsistent" and r["status"] == "inconsistent"]
    for title, rows in (("missed inconsistencies", misses), ("false flags", false)):
        lines.append(f"== {title}: {len(rows)}")
        for r in rows[:limit]:
            g = r["gold"]
            s, e = g["name_span"][0], (g.get("value_span") or g["name_span"])[1]
            snippet = r["text"][max(0, s - 30):e + 30].replace("\n", " | ")
            why = "; ".join(f"{c['status']} {c['fields']} {c['reason']} items={c['items'][:2]}" for c in r["checks"]) or "not extracted"
            lines.append(f"  {r['note']} [{g['type']} {g['label']} {g['mismatch']}] …{snippet}… → {r['status']}: {why}"
                         f" | truth: {g['truth']}")
    lines.append(f"== flags on text no gold entity covers: {len(spurious)}")
    for s in spurious[:limit]:
        c = s["check"]
        lines.append(f"  {s['note']} {s['text']!r} {c['fields']} {c['reason']} items={c['items'][:2]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Score and print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="store holding the synthea-r4 patients")
    parser.add_argument("--notes", type=Path, default=NOTES)
    parser.add_argument("--limit", type=int, default=0, help="only the first N notes")
    parser.add_argument("--failures", type=int, default=0, help="print up to N misses and false flags of each kind")
    parser.add_argument("--json", type=Path, help="write the figures as JSON")
    args = parser.parse_args(argv)
    notes = [json.loads(line) for line in args.notes.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.limit:
        notes = notes[: args.limit]
    results, spurious, seconds, checked = run(notes, args.db)
    t = tables(results, spurious)
    print(render(t, seconds, checked, len(notes), len({n["patient_id"] for n in notes})))
    if args.failures:
        print()
        print(failures(results, spurious, args.failures))
    if args.json:
        args.json.write_text(json.dumps({k: ({kk: list(vv) if isinstance(vv, tuple) else vv for kk, vv in v.items()}
                                             if isinstance(v, dict) else v) for k, v in t.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
