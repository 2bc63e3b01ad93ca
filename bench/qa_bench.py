"""Question-answering benchmark: latency of the offline backend, and the prompt size each LLM role would send.

    python bench/qa_bench.py --db DIR [--questions evals/synthea-r4.jsonl] [--repeat 5]

1. Latency on the largest patient (most rows): ~25 questions built from that patient's own items
   (latest, first, average, max, count, trend, threshold, existence, age), each asked once to warm
   up, then --repeat times; prints median and p95. Beside it, the same "latest value" lookups done the
   way one would without fhirqa: FHIRPath (fhirpathpy) over the patient's raw bundle.
2. The whole evaluation set: total time and per-question median.
3. Prompt tokens per role for the LLM backends, measured on the evaluation questions by running the
   composer loop with a recording backend that follows the offline plan (so the conversation an LLM
   would see, tool results included; the offline backend's own text, its parse, is not counted unless
   --offline-text: a model writes its own). Tokens are estimated as characters / 4. Beside them, how many
   questions' plans call a tool the composer was not offered (a real model could not have made that
   call: a tool selection too narrow for the route), and the composer turns per question.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from fhirqa.agent.backends.base import Message, ModelTurn
from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "synthea-r4"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


class RecordingBackend:
    """Follows the offline plan but counts the characters an LLM backend would be sent, per role."""

    name = "recording"
    max_rounds = 60

    def __init__(self, offline_text: bool = False) -> None:
        self.inner = OfflineBackend()
        self.offline_text = offline_text
        self.chars: dict[str, int] = {}
        self.turns = 0
        self.not_offered: set[str] = set()  # tools the plan called that the composer was not offered

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        sent = sum(len(m.content) + sum(len(json.dumps(c.arguments)) + len(c.name) for c in m.tool_calls) for m in messages)
        sent += len(json.dumps(tools)) if tools else 0
        self.chars[role] = self.chars.get(role, 0) + sent
        turn = self.inner.complete(messages, tools, role="planner" if role == "planner" else role)
        if role == "composer":
            self.turns += 1
            offered = {t["name"] for t in tools}
            self.not_offered.update(c.name for c in turn.tool_calls if c.name not in offered)
            if turn.tool_calls and not self.offline_text:
                # The offline backend writes its parse beside its first call; a model writes its own text (often
                # none). Not counted unless asked: it is the offline backend's, not a cost of fhirqa's prompts.
                turn = ModelTurn(None, turn.tool_calls, turn.prompt_tokens, turn.completion_tokens)
        return turn


def largest_patient(store: Store) -> str:
    return store.query("SELECT patient_id FROM observation GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").rows[0][0]


def patient_questions(store: Store, pid: str) -> tuple[list[str], list[tuple[str, str]]]:
    labs = store.query(
        "SELECT name, code, count(*) n FROM observation WHERE patient_id = ? AND value IS NOT NULL "
        "GROUP BY ALL ORDER BY n DESC LIMIT 5", [pid]).rows
    meds = store.query("SELECT medication_name FROM medication WHERE patient_id = ? GROUP BY 1 LIMIT 2", [pid]).rows
    conds = store.query("SELECT name FROM condition WHERE patient_id = ? GROUP BY 1 LIMIT 2", [pid]).rows
    questions = []
    for name, _, _ in labs:
        questions += [f"What was the last {name}?", f"What was the first {name}?", f"Average {name} in the last 2 years?",
                      f"Highest {name} ever?", f"How many {name} results?", f"{name} trend over the last 3 years?"]
    questions += [f"Has the patient ever been prescribed {m}?" for (m,) in meds]
    questions += [f"Has the patient been diagnosed with {c}?" for (c,) in conds]
    questions += ["How old is the patient?", "How many emergency visits?", "What medications is the patient currently taking?"]
    return questions, [(name, code) for name, code, _ in labs]


def fhirpath_latest(bundle: dict[str, Any], code: str) -> Any:
    from fhirpathpy import evaluate

    found = evaluate(bundle, f"Bundle.entry.resource.where(resourceType='Observation' and code.coding.code='{code}')")
    found.sort(key=lambda r: r.get("effectiveDateTime", ""))
    return found[-1]["valueQuantity"]["value"] if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="/tmp/fhirqa-bench-qa-db")
    parser.add_argument("--questions", default=str(ROOT / "evals" / "synthea-r4.jsonl"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--token-sample", type=int, default=200, help="evaluation questions used for token sizes")
    parser.add_argument("--tokens-only", action="store_true", help="only part 3 (prompt tokens per role)")
    parser.add_argument("--offline-text", action="store_true",
                        help="count the offline backend's own text (its parse) as if a model had written it")
    args = parser.parse_args(argv)

    store = Store(args.db)
    if not store.exists():
        print(f"ingesting {SHARED} into {args.db} …")
        ingest([FileSource([SHARED])], args.db)
    gold = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    if not args.tokens_only:
        latency(store, args, gold)
    tokens(args, gold)
    return 0


def latency(store: Store, args: argparse.Namespace, gold: list[dict[str, Any]]) -> None:
    """Parts 1 and 2: offline latency on the largest patient and over the evaluation set."""
    now = "2100-01-01T00:00:00Z"  # after every record: the whole history is visible
    pid = largest_patient(store)
    questions, labs = patient_questions(store, pid)
    rows = store.query("SELECT count(*) FROM observation WHERE patient_id = ?", [pid]).rows[0][0]
    print(f"largest patient: {pid} ({rows} observation rows), {len(questions)} questions × {args.repeat}")
    for q in questions:
        ask(q, patient_id=pid, now=now, db=args.db)  # warm: lexicon, connection, caches
    times = []
    for _ in range(args.repeat):
        for q in questions:
            times.append(ask(q, patient_id=pid, now=now, db=args.db).latency_ms)
    print(f"  fhirqa offline      median {statistics.median(times):7.1f} ms   p95 {p95(times):7.1f} ms")

    bundle_path = next((p for p in sorted(SHARED.glob("*.json")) if pid in p.read_text(encoding="utf-8")), None)
    if bundle_path is not None:
        bundle = json.loads(bundle_path.read_text())
        baseline = []
        for _ in range(args.repeat):
            for _, code in labs:
                started = time.perf_counter()
                fhirpath_latest(bundle, code)
                baseline.append((time.perf_counter() - started) * 1000)
        latest = [ask(f"What was the last {name}?", patient_id=pid, now=now, db=args.db).latency_ms for name, _ in labs]
        print(f"  'latest value': fhirqa median {statistics.median(latest):.1f} ms vs fhirpathpy over the parsed bundle "
              f"median {statistics.median(baseline):.1f} ms (JSON already parsed; {statistics.median(baseline) / statistics.median(latest):.1f}x)")

    started = time.perf_counter()
    each = [ask(g["question"], patient_id=g["patient_id"], now=g["now"], db=args.db).latency_ms for g in gold]
    total = time.perf_counter() - started
    print(f"evaluation set: {len(gold)} questions in {total:.1f} s (median {statistics.median(each):.1f} ms, p95 {p95(each):.1f} ms)")


def tokens(args: argparse.Namespace, gold: list[dict[str, Any]]) -> None:
    """Part 3: prompt tokens per role, composer turns, and plans that call a tool not offered."""
    per_role: dict[str, list[int]] = {}
    turns: list[int] = []
    not_offered: dict[str, int] = {}
    for g in gold[: args.token_sample]:
        recorder = RecordingBackend(offline_text=args.offline_text)
        ask(g["question"], patient_id=g["patient_id"], now=g["now"], db=args.db, backend=recorder)
        for role, chars in recorder.chars.items():
            per_role.setdefault(role, []).append(chars // 4)
        turns.append(recorder.turns)
        for name in recorder.not_offered:
            not_offered[name] = not_offered.get(name, 0) + 1
    print(f"prompt tokens an LLM backend would be sent (≈ chars/4, {min(len(gold), args.token_sample)} questions):")
    for role, tokens in sorted(per_role.items()):
        print(f"  {role:<11} median {statistics.median(tokens):7.0f}   p95 {p95(tokens):7.0f}   max {max(tokens):7.0f}")
    totals = [sum(v) for v in zip(*per_role.values(), strict=False)]
    print(f"  {'all roles':<11} median {statistics.median(totals):7.0f}   p95 {p95(totals):7.0f}   "
          "(specialists are deterministic: 0 tokens)")
    print(f"  composer turns median {statistics.median(turns):.0f}, p95 {p95(turns):.0f}")
    missing = ", ".join(f"{name} ({n})" for name, n in sorted(not_offered.items(), key=lambda x: -x[1]))
    print(f"  questions whose plan calls a tool not offered: {missing or 'none'}")


if __name__ == "__main__":
    raise SystemExit(main())
