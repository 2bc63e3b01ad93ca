"""Evaluation: score fhirqa's answers against gold question sets (``evals/``).

- :func:`fhirqa.evaluation.score.score` compares one answer dict with one gold question.
- :func:`fhirqa.evaluation.run.run_eval` asks every question of a JSONL set and returns an
  :class:`~fhirqa.evaluation.run.EvalReport` (accuracy per category, latency, failures).

Names are imported lazily so that ``python -m fhirqa.evaluation.run`` does not import ``run`` twice.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "EvalReport": "run", "QuestionResult": "run", "load_questions": "run", "run_eval": "run",
    "ScoreResult": "score", "score": "score",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
