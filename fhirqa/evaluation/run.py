"""Run a question set through fhirqa and report accuracy per category.

    python -m fhirqa.evaluation.run --questions evals/synthea-r4.jsonl --db DIR \\
        [--backend offline] [--category X ...] [--limit N] [--failures PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .score import ScoreResult, score

REQUIRED_KEYS = ("id", "patient_id", "question", "now", "category", "answer_type", "expected", "expected_status")

AskFn = Callable[..., Any]


@dataclass
class QuestionResult:
    """One question, what fhirqa said, and the verdict."""

    id: str
    category: str
    template: str
    question: str
    patient_id: str | None
    expected: list[Any]
    expected_status: str
    got: list[Any]
    got_status: str
    correct: bool
    reason: str
    latency_ms: float
    text: str = ""


@dataclass
class EvalReport:
    """All results of one run, with summaries."""

    questions_path: str
    backend: str
    results: list[QuestionResult] = field(default_factory=list)

    def by_category(self) -> dict[str, tuple[int, int]]:
        """category → (correct, total), categories in first-seen order."""
        table: dict[str, list[int]] = {}
        for r in self.results:
            row = table.setdefault(r.category, [0, 0])
            row[0] += int(r.correct)
            row[1] += 1
        return {k: (v[0], v[1]) for k, v in table.items()}

    @property
    def correct(self) -> int:
        """Number of correct answers."""
        return sum(r.correct for r in self.results)

    @property
    def accuracy(self) -> float:
        """Overall accuracy in [0, 1] (0 for an empty run)."""
        return self.correct / len(self.results) if self.results else 0.0

    def latency(self) -> dict[str, float]:
        """Median and 95th percentile (nearest rank) of per-question latency, in milliseconds."""
        values = sorted(r.latency_ms for r in self.results)
        if not values:
            return {"median_ms": 0.0, "p95_ms": 0.0}
        p95 = values[max(0, math.ceil(0.95 * len(values)) - 1)]
        return {"median_ms": round(statistics.median(values), 1), "p95_ms": round(p95, 1)}

    def failures(self) -> list[QuestionResult]:
        """The wrong answers, in question order."""
        return [r for r in self.results if not r.correct]

    def format_text(self) -> str:
        """Accuracy per category and overall, latency, then every failure."""
        lines = [f"questions: {self.questions_path}   backend: {self.backend}", "",
                 f"{'category':<22} {'correct':>7} {'total':>5} {'accuracy':>8}"]
        for category, (ok, total) in self.by_category().items():
            lines.append(f"{category:<22} {ok:>7} {total:>5} {ok / total:>8.1%}")
        lines.append(f"{'overall':<22} {self.correct:>7} {len(self.results):>5} {self.accuracy:>8.1%}")
        lat = self.latency()
        lines.append(f"latency: median {lat['median_ms']:.1f} ms, p95 {lat['p95_ms']:.1f} ms")
        fails = self.failures()
        lines.append("")
        lines.append(f"failures ({len(fails)}):" if fails else "failures: none")
        for r in fails:
            got = r.got if r.got_status == "answered" else f"{r.got_status} {r.got}"
            lines.append(f"- {r.id} [{r.category}] {r.question}")
            lines.append(f"    expected: {r.expected if r.expected_status == 'answered' else r.expected_status}"
                         f"   got: {got}   reason: {r.reason}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Summary and every result, JSON-ready."""
        return {
            "questions": self.questions_path,
            "backend": self.backend,
            "total": len(self.results),
            "correct": self.correct,
            "accuracy": round(self.accuracy, 4),
            "by_category": {k: {"correct": ok, "total": n, "accuracy": round(ok / n, 4)}
                            for k, (ok, n) in self.by_category().items()},
            "latency": self.latency(),
            "results": [asdict(r) for r in self.results],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL question set; every line must carry the required keys."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [k for k in REQUIRED_KEYS if k not in row]
        if missing:
            raise ValueError(f"{path}:{number}: missing {', '.join(missing)}")
        rows.append(row)
    return rows


def _filter(rows: Iterable[dict[str, Any]], categories: Sequence[str] | None, limit: int | None) -> list[dict]:
    chosen = [r for r in rows if not categories or r["category"] in categories]
    return chosen[:limit] if limit is not None else chosen


def _default_ask() -> AskFn:
    from fhirqa.agent.engine import ask  # imported here: the engine is optional for scoring

    return ask


def _answer_dict(answer: Any) -> dict[str, Any]:
    if isinstance(answer, dict):
        return answer
    to_dict = getattr(answer, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    raise TypeError(f"ask() returned {type(answer).__name__}, not an Answer")


def run_eval(questions_path: str | Path, db: str | Path, backend: str = "offline", limit: int | None = None,
             categories: Sequence[str] | None = None, ask: AskFn | None = None,
             progress: Callable[[QuestionResult], None] | None = None) -> EvalReport:
    """Ask every (selected) question, score each answer; an exception counts as a wrong ``error`` answer."""
    rows = _filter(load_questions(questions_path), categories, limit)
    ask_fn = ask or _default_ask()
    report = EvalReport(str(questions_path), backend)
    for row in rows:
        start = time.perf_counter()
        try:
            answer = _answer_dict(ask_fn(question=row["question"], patient_id=row["patient_id"], now=row["now"],
                                         db=db, backend=backend))
            verdict = score(row, answer)
        except Exception as exc:  # noqa: BLE001 - one bad question must not stop the run
            answer = {"answer": [], "status": "error", "text": f"{type(exc).__name__}: {exc}"}
            verdict = ScoreResult(False, f"exception {type(exc).__name__}: {exc}")
        elapsed = (time.perf_counter() - start) * 1000
        got = answer.get("answer")
        result = QuestionResult(
            id=row["id"], category=row["category"], template=row.get("template", ""), question=row["question"],
            patient_id=row["patient_id"], expected=row["expected"], expected_status=row["expected_status"],
            got=list(got) if isinstance(got, list | tuple) else ([] if got is None else [got]),
            got_status=str(answer.get("status", "answered")), correct=verdict.correct, reason=verdict.reason,
            latency_ms=round(elapsed, 2), text=str(answer.get("text") or "")[:500])
        report.results.append(result)
        if progress:
            progress(result)
    return report


def write_failures(report: EvalReport, path: str | Path) -> None:
    """Every failure as one JSON line."""
    with open(path, "w", encoding="utf-8") as out:
        for r in report.failures():
            out.write(json.dumps(asdict(r), ensure_ascii=False) + "\n")


def _by_template(report: EvalReport) -> dict[str, tuple[int, int]]:
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in report.results:
        key = r.template.rsplit("/", 1)[0] if r.template else r.category
        table[key][0] += int(r.correct)
        table[key][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(table.items())}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fhirqa.evaluation.run``; exit status 0 when the run completed."""
    parser = argparse.ArgumentParser(prog="fhirqa eval", description="Score fhirqa against a gold question set.")
    parser.add_argument("--questions", required=True, type=Path, help="JSONL question set")
    parser.add_argument("--db", required=True, type=Path, help="fhirqa store folder holding the patients")
    parser.add_argument("--backend", default="offline", help="answering backend (default: offline)")
    parser.add_argument("--category", action="append", help="only this category (repeatable)")
    parser.add_argument("--limit", type=int, help="at most N questions")
    parser.add_argument("--failures", type=Path, help="write failures to this JSONL file")
    parser.add_argument("--json", type=Path, help="write the full report (summary + results) as JSON")
    parser.add_argument("--by-template", action="store_true", help="also print accuracy per question pattern")
    args = parser.parse_args(argv)
    report = run_eval(args.questions, args.db, backend=args.backend, limit=args.limit, categories=args.category)
    print(report.format_text())
    if args.by_template:
        print("\nby pattern:")
        for key, (ok, total) in _by_template(report).items():
            print(f"  {key:<40} {ok:>4}/{total:<4} {ok / total:.0%}")
    if args.failures:
        write_failures(report, args.failures)
    if args.json:
        args.json.write_text(report.to_json(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
