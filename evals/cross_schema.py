"""Cross-schema agreement: the same questions over the FHIR views and over the same data exported to OMOP CDM.

    python evals/cross_schema.py --db /tmp/omop_src [--omop /tmp/omop.duckdb] [--questions evals/synthea-r4.jsonl]
        [--category X ...] [--limit N] [--json PATH] [--disagreements PATH]

Ingest first (``fhirqa ingest ../shared/data/synthea-r4 --db /tmp/omop_src``); the OMOP database is exported
from the store when ``--omop`` does not exist yet (``fhirqa export omop``). Every question is answered by
``fhirqa.ask`` (FHIR views) and by ``fhirqa.sql.ask_sql`` (OMOP tables). Two answers **agree** when each, scored
as the gold answer for the other (same status; numbers within the question's tolerance, dates, booleans,
strings and list elements by the evaluation's rules, ``fhirqa/evaluation/score.py``), is right. The report
prints agreement per category, and each path's accuracy against the gold answers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def agree(question: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when ``a`` and ``b`` are each right with the other taken as the gold answer."""
    from fhirqa.evaluation.score import score

    def as_gold(answer: dict[str, Any]) -> dict[str, Any]:
        return {**question, "expected": list(answer.get("answer") or []), "expected_status": answer.get("status", "answered")}

    if a.get("status") == b.get("status") and json.dumps(a.get("answer"), default=str) == json.dumps(b.get("answer"), default=str):
        return True  # the same values (even where both differ from the gold answer's type)
    return score(as_gold(a), b).correct and score(as_gold(b), a).correct


def run(db: Path, omop: Path, questions: Path, categories: Sequence[str] | None = None, limit: int | None = None,
        progress: bool = False) -> dict[str, Any]:
    """Ask every question both ways; agreement and accuracy per category, and every disagreement."""
    from fhirqa.agent.engine import ask
    from fhirqa.evaluation.run import load_questions
    from fhirqa.evaluation.score import score
    from fhirqa.sql import ask_sql, connect

    rows = [r for r in load_questions(questions) if not categories or r["category"] in categories][:limit]
    con = connect(omop)
    table: dict[str, list[int]] = {}
    disagreements = []
    started = time.perf_counter()
    for number, row in enumerate(rows, 1):
        args = {"patient_id": row["patient_id"], "now": row["now"]}
        fhir = ask(row["question"], db=db, **args).to_dict()
        sql = ask_sql(row["question"], connection=con, **args).to_dict()
        same = agree(row, fhir, sql)
        counts = table.setdefault(row["category"], [0, 0, 0, 0])
        counts[0] += int(same)
        counts[1] += 1
        counts[2] += int(score(row, fhir).correct)
        counts[3] += int(score(row, sql).correct)
        if not same:
            disagreements.append({"id": row["id"], "category": row["category"], "question": row["question"],
                                  "patient_id": row["patient_id"], "now": row["now"], "expected": row["expected"],
                                  "fhir": [fhir["status"], fhir["answer"]], "omop": [sql["status"], sql["answer"]],
                                  "omop_text": sql["text"][:300]})
        if progress and number % 50 == 0:
            print(f"  {number}/{len(rows)}", file=sys.stderr)
    total = [sum(c[i] for c in table.values()) for i in range(4)]
    return {"questions": str(questions), "omop": str(omop), "total": total[1], "agree": total[0],
            "agreement": round(total[0] / total[1], 4) if total[1] else 0.0,
            "fhir_accuracy": round(total[2] / total[1], 4) if total[1] else 0.0,
            "omop_accuracy": round(total[3] / total[1], 4) if total[1] else 0.0,
            "seconds": round(time.perf_counter() - started, 1),
            "by_category": {k: {"agree": v[0], "total": v[1], "fhir_correct": v[2], "omop_correct": v[3]}
                            for k, v in table.items()},
            "disagreements": disagreements}


def format_report(report: dict[str, Any]) -> str:
    """Agreement per category, overall, then every disagreement."""
    lines = [f"questions: {report['questions']}   OMOP: {report['omop']}", "",
             f"{'category':<22} {'agree':>5} {'total':>5} {'agreement':>9} {'FHIR ok':>7} {'OMOP ok':>7}"]
    for category, c in report["by_category"].items():
        lines.append(f"{category:<22} {c['agree']:>5} {c['total']:>5} {c['agree'] / c['total']:>9.1%} "
                     f"{c['fhir_correct']:>7} {c['omop_correct']:>7}")
    lines.append(f"{'overall':<22} {report['agree']:>5} {report['total']:>5} {report['agreement']:>9.1%} "
                 f"{report['fhir_accuracy']:>7.1%} {report['omop_accuracy']:>7.1%}")
    lines.append(f"time: {report['seconds']} s")
    lines.append("")
    lines.append(f"disagreements ({len(report['disagreements'])}):" if report["disagreements"] else "disagreements: none")
    for d in report["disagreements"]:
        lines.append(f"- {d['id']} [{d['category']}] {d['question']}")
        lines.append(f"    FHIR: {d['fhir']}   OMOP: {d['omop']}   expected: {d['expected']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description="Agreement of FHIR-view and OMOP answers to the same questions.")
    parser.add_argument("--db", required=True, type=Path, help="fhirqa store (ingested FHIR data)")
    parser.add_argument("--omop", type=Path, help="OMOP DuckDB file (exported from --db when missing)")
    parser.add_argument("--questions", type=Path, default=ROOT / "evals" / "synthea-r4.jsonl")
    parser.add_argument("--category", action="append", help="only this category (repeatable)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--json", type=Path, help="write the full report as JSON")
    parser.add_argument("--min-agreement", type=float, default=0.0, help="exit 1 below this agreement (0..1)")
    args = parser.parse_args(argv)
    omop = args.omop or args.db.with_name(args.db.name + "-omop.duckdb")
    if not omop.exists():
        from fhirqa.sql import export_omop

        print(export_omop(args.db, omop).summary(), file=sys.stderr)
    report = run(args.db, omop, args.questions, args.category, args.limit, progress=True)
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 0 if report["agreement"] >= args.min_agreement else 1


if __name__ == "__main__":
    sys.exit(main())
