"""Score the notes path on a question set: answer accuracy (by category) and retrieval recall@k.

    python evals/notes/evaluate.py --questions evals/notes/sample-questions.jsonl --db /tmp/sample-db
    python evals/notes/evaluate.py --questions evals/notes/bulk10-questions.jsonl --db /tmp/notes_db

Each question goes through ``fhirqa.notes.ask_notes`` (structure-free, note-only retrieval + offline
extraction). A "not documented" question is right when nothing is extracted. Recall@k: the share of
questions with gold notes that have one of them among the first k retrieved chunks.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from fhirqa.notes import NoteIndex, ask_notes, retrieve

KS = (1, 5, 10)


def _dose(value: Any) -> tuple[float, str] | None:
    m = re.match(r"\s*([\d.,]+)\s*([a-zµ/]+)", str(value or "").lower())
    return (float(m[1].replace(",", "")), m[2].rstrip("s")) if m else None


def correct(item: dict[str, Any], finding: Any) -> bool:
    """Is the extracted finding the gold answer?"""
    gold = item["answer"]
    if gold is None:
        return finding is None
    if finding is None or finding.kind != item["kind"]:
        return False
    if item["kind"] == "finding":
        return (not finding.negated) == bool(gold)
    if item["kind"] == "dose":
        return _dose(finding.value) == _dose(gold)
    if isinstance(gold, str) or isinstance(finding.value, str):
        return str(finding.value) == str(gold)
    return abs(float(finding.value) - float(gold)) < 1e-6


def evaluate(questions: list[dict[str, Any]], index: NoteIndex, k: int = 5) -> dict[str, Any]:
    """Accuracy overall, per category and for note-only questions; recall@1/5/10; latency."""
    by_category: dict[str, list[bool]] = defaultdict(list)
    recall: dict[int, list[bool]] = {n: [] for n in KS}
    latencies, failures, only_notes = [], [], []
    for item in questions:
        index.ensure(item["patient_id"])
        started = time.perf_counter()
        finding, _ = ask_notes(index, item["patient_id"], item["question"], k=k)
        latencies.append((time.perf_counter() - started) * 1000)
        ok = correct(item, finding)
        by_category[item["category"]].append(ok)
        if item.get("only_in_notes"):
            only_notes.append(ok)
        if not ok:
            failures.append({"id": item["id"], "question": item["question"], "expected": item["answer"],
                             "got": None if finding is None else finding.value,
                             "sentence": None if finding is None else finding.sentence})
        if item.get("gold_refs"):
            refs = [h.ref for h in retrieve(index, item["patient_id"], item["question"], k=max(KS)).hits]
            for n in KS:
                recall[n].append(any(r in item["gold_refs"] for r in refs[:n]))
    every = [ok for oks in by_category.values() for ok in oks]
    return {
        "questions": len(every), "accuracy": sum(every) / max(1, len(every)),
        "by_category": {c: {"n": len(v), "accuracy": sum(v) / len(v)} for c, v in sorted(by_category.items())},
        "only_in_notes": {"n": len(only_notes), "accuracy": sum(only_notes) / max(1, len(only_notes))},
        "recall": {f"@{n}": sum(v) / max(1, len(v)) for n, v in recall.items()},
        "recall_n": len(recall[KS[0]]),
        "latency_ms": {"median": statistics.median(latencies) if latencies else 0.0,
                       "p95": sorted(latencies)[int(0.95 * (len(latencies) - 1))] if latencies else 0.0},
        "failures": failures,
    }


def format_report(report: dict[str, Any], name: str) -> str:
    """A readable summary."""
    lines = [f"{name}: {report['questions']} questions, accuracy {report['accuracy']:.1%}; "
             f"note-only answers {report['only_in_notes']['accuracy']:.1%} (n={report['only_in_notes']['n']}); "
             "retrieval recall " + ", ".join(f"{k} {v:.1%}" for k, v in report["recall"].items())
             + f" (n={report['recall_n']}); latency median {report['latency_ms']['median']:.0f} ms, "
               f"p95 {report['latency_ms']['p95']:.0f} ms"]
    for category, figures in report["by_category"].items():
        lines.append(f"  {category:<20} n={figures['n']:<4} accuracy {figures['accuracy']:.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", required=True)
    parser.add_argument("--db", required=True, help="a store holding the questions' patients")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--failures", action="store_true", help="print every failure")
    args = parser.parse_args(argv)
    questions = [json.loads(line) for line in Path(args.questions).read_text("utf-8").splitlines() if line.strip()]
    index = NoteIndex(args.db)
    index.build(sorted({q["patient_id"] for q in questions}))
    report = evaluate(questions, index, k=args.k)
    print(format_report(report, Path(args.questions).name))
    if args.failures:
        for failure in report["failures"]:
            print("  FAIL", json.dumps(failure))
    return 0


if __name__ == "__main__":
    sys.exit(main())
