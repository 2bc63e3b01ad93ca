"""``fhirqa ask``: one question, or a batch file of them, answered from the store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from fhirqa.cli.output import render
from fhirqa.errors import FhirqaError


def register(commands: Any, db_default: str) -> None:
    """Add the ``ask`` sub-command."""
    p = commands.add_parser(
        "ask",
        help="answer a question about one patient, with evidence",
        description="Answer a clinician's question about one patient from the store. Prints the answer and the "
        "rows it rests on; --json prints the answer object. --batch answers a JSONL file of questions.",
    )
    p.add_argument("question", nargs="?", metavar="QUESTION")
    p.add_argument("--patient", help="patient id (omit only for patient lookup questions)")
    p.add_argument("--now", help="the instant the question is asked at (ISO 8601; default: now)")
    p.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    p.add_argument("--backend", default="offline", help="offline (default), openai or gemini")
    p.add_argument("--model", help="model name for an LLM backend")
    p.add_argument("--base-url", help="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp)")
    p.add_argument("--json", action="store_true", help="print the answer object as JSON")
    p.add_argument("--batch", help="JSONL file with id, patient_id, question and optional now per line")
    p.add_argument("--out", help="with --batch: write answers here as JSONL (default: stdout)")
    p.set_defaults(handler=run)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if args.model:
        config["model"] = args.model
    if args.base_url:
        config["base_url"] = args.base_url
    return config


def run(args: argparse.Namespace) -> int:
    """Answer one question or a batch."""
    from fhirqa.agent.engine import ask

    if args.batch:
        return _run_batch(args)
    if not args.question:
        raise FhirqaError("give a QUESTION, or --batch FILE")
    answer = ask(args.question, patient_id=args.patient, now=args.now, db=args.db, backend=args.backend,
                 backend_config=_config(args))
    if args.json:
        print(orjson.dumps(answer.to_dict(), option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"{answer.text}")
    print(f"answer: {answer.answer}{(' ' + answer.unit) if answer.unit else ''}   status: {answer.status}   "
          f"{answer.latency_ms:.0f} ms, backend {answer.backend}")
    if answer.evidence:
        rows = [(e.time, e.label, e.value, e.unit, e.ref) for e in answer.evidence[:25]]
        print(render(["time", "item", "value", "unit", "source"], rows, title="Evidence"))
        if len(answer.evidence) > 25:
            print(f"… {len(answer.evidence) - 25} more evidence rows (use --json for all)")
    return 0 if answer.status in ("answered", "no-data") else 1


def _run_batch(args: argparse.Namespace) -> int:
    from fhirqa.agent.engine import ask

    path = Path(args.batch)
    if not path.is_file():
        raise FhirqaError(f"{path}: no such file")
    out = open(args.out, "wb") if args.out else sys.stdout.buffer  # noqa: SIM115 - closed below
    failures = 0
    try:
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = orjson.loads(line)
                question = item["question"]
            except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
                raise FhirqaError(f"{path}:{number}: expected a JSON object with 'question' ({exc})") from exc
            answer = ask(question, patient_id=item.get("patient_id"), now=item.get("now"), db=args.db,
                         backend=args.backend, backend_config=_config(args))
            failures += answer.status == "error"
            out.write(orjson.dumps({"id": item.get("id", number), **answer.to_dict()}) + b"\n")
    finally:
        if args.out:
            out.close()
    return 1 if failures else 0
