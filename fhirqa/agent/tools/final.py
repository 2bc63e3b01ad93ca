"""The tool that ends a question: final_answer."""

from __future__ import annotations

from typing import Any, get_args

from fhirqa.agent.answer import Status
from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.common import cite

STATUSES: tuple[str, ...] = get_args(Status)


def _json_value(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


def final_answer(ctx: ToolContext, answer: list[Any], text: str, status: str = "answered",
                 unit: str | None = None, evidence: list[str] | None = None) -> dict[str, Any]:
    """Record the answer (``ctx.answer``) and cite every row of the ``evidence`` handles."""
    if status not in STATUSES:
        raise ToolError(f"unknown status {status!r}; use one of: {', '.join(STATUSES)}")
    if not isinstance(answer, list) or not _json_value(answer):
        raise ToolError("answer must be a list of JSON values (numbers, strings, booleans, ISO dates), "
                        "e.g. [7.2] or ['2024-03-01']")
    if not text.strip():
        raise ToolError("text is empty; give a one-sentence answer a clinician can read")
    handles = list(evidence or [])
    sets = [ctx.records(h) for h in handles]  # unknown handles are reported before anything is recorded
    cited = 0
    for rs in sets:
        for row in rs.rows:
            cite(ctx, rs, row)
            cited += 1
    ctx.answer = {"answer": answer, "text": text.strip(), "status": status, "unit": unit, "evidence": handles}
    return {"ok": True, "status": status, "answer": answer, "cited_rows": cited}
