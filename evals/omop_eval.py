"""Run fhirqa's SQL path on ``evals/heldout-omop.jsonl`` (the blind OMOP set).

    python evals/omop_eval.py [--questions evals/heldout-omop.jsonl] [--cache /tmp/omop-eval]
                              [--failures /tmp/fail.jsonl] [--category trend] [--database synthea27nj]

Each database is loaded once with ``fhirqa omop load`` into a DuckDB file under ``--cache``; every question is
answered with ``fhirqa.sql.ask_sql(..., backend="offline")`` and scored with
``fhirqa.evaluation.score.score``. Prints accuracy per category and database, then every failure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "omop"
SOURCES = {
    "synthea27nj": DATA / "synthea27nj" / "Synthea27Nj_5.4.zip",
    "mimic-iv-demo": DATA / "mimic-iv-demo-omop-5.3",
}


def load(name: str, cache: Path) -> Path:
    out = cache / f"{name}.duckdb"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "fhirqa.cli", "omop", "load", str(SOURCES[name]), "--out", str(out)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # noqa: S603 (our interpreter, our paths)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=ROOT / "evals" / "heldout-omop.jsonl")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "fhirqa-omop-eval")
    ap.add_argument("--failures", type=Path)
    ap.add_argument("--category", action="append")
    ap.add_argument("--database", action="append")
    args = ap.parse_args(argv)

    from fhirqa.evaluation.score import score
    from fhirqa.sql import ask_sql

    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.category:
        rows = [r for r in rows if r["category"] in args.category]
    if args.database:
        rows = [r for r in rows if r["database"] in args.database]
    dbs = {name: load(name, args.cache) for name in sorted({r["database"] for r in rows})}

    tally = defaultdict(lambda: [0, 0])
    failures = []
    t0 = time.perf_counter()
    for r in rows:
        try:
            ans = ask_sql(r["question"], patient_id=r["patient_id"], now=r["now"], connection=str(dbs[r["database"]]),
                          backend="offline").to_dict()
            res = score(r, ans)
            ok, reason = res.correct, res.reason
        except Exception as exc:  # an engine crash is a failure, not the end of the run
            ans, ok, reason = {"status": "error", "answer": None}, False, f"{type(exc).__name__}: {exc}"
        for key in ((r["database"], r["category"]), (r["database"], "ALL"), ("ALL", r["category"]), ("ALL", "ALL")):
            tally[key][0] += ok
            tally[key][1] += 1
        if not ok:
            failures.append({
                "id": r["id"], "database": r["database"], "category": r["category"], "template": r["template"],
                "patient_id": r["patient_id"], "now": r["now"], "question": r["question"],
                "expected": r["expected"], "expected_status": r["expected_status"],
                "got": ans.get("answer"), "got_status": ans.get("status"), "text": ans.get("text"), "reason": reason,
            })
    elapsed = time.perf_counter() - t0

    cats = sorted({c for _, c in tally if c != "ALL"})
    names = sorted({d for d, _ in tally if d != "ALL"})
    head = f"{'category':22}" + "".join(f"{n:>18}" for n in names + ["ALL"])
    print(head)
    for c in cats + ["ALL"]:
        line = f"{c:22}"
        for n in names + ["ALL"]:
            ok, tot = tally.get((n, c), (0, 0))
            line += f"{f'{ok}/{tot} ({100 * ok / tot:.0f}%)' if tot else '-':>18}"
        print(line)
    print(f"\n{len(rows)} questions in {elapsed:.1f}s; {len(failures)} failures\n")
    for f in failures:
        print(f"{f['id']} [{f['database']}] {f['question']!r} (pt {f['patient_id']}, now {f['now'][:10]})\n"
              f"    expected {f['expected']} {f['expected_status']}; got {f['got']} {f['got_status']} — {f['reason']}")
    if args.failures:
        args.failures.write_text("".join(json.dumps(f, ensure_ascii=False, default=str) + "\n" for f in failures),
                                 encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
