"""The tool that ends a question: final_answer."""

from __future__ import annotations

from typing import Any, get_args

from fhirqa.agent.answer import Status
from fhirqa.agent.tools.base import ToolContext, ToolError
from fhirqa.agent.tools.common import cite, field_map, iso, row_view

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
                 unit: str | None = None, evidence: list[str] | None = None, list_from: str | None = None,
                 list_field: str | None = None) -> dict[str, Any]:
    """Record the answer (``ctx.answer``) and cite every row of the ``evidence`` handles.

    ``list_from`` makes a list answer complete: every distinct ``list_field`` value (default: the item
    name) of that record set is added to ``answer``, however many a tool result's preview showed.
    """
    if status not in STATUSES:
        raise ToolError(f"unknown status {status!r}; use one of: {', '.join(STATUSES)}")
    if not isinstance(answer, list) or not _json_value(answer):
        raise ToolError("answer must be a list of JSON values (numbers, strings, booleans, ISO dates), "
                        "e.g. [7.2] or ['2024-03-01']")
    if not text.strip():
        raise ToolError("text is empty; give a one-sentence answer a clinician can read")
    handles = list(evidence or [])
    sets = [ctx.records(h) for h in handles]  # unknown handles are reported before anything is recorded
    if list_from is not None:
        answer = answer + [v for v in _distinct(ctx, list_from, list_field) if v not in answer]
    elif list_field is not None:
        raise ToolError("list_field needs list_from: the handle whose values make the list")
    cited = 0
    for rs in sets:
        for row in rs.rows:
            cite(ctx, rs, row)
            cited += 1
    ctx.answer = {"answer": answer, "text": text.strip(), "status": status, "unit": unit, "evidence": handles}
    return {"ok": True, "status": status, "answer": answer, "cited_rows": cited}


def _distinct(ctx: ToolContext, handle: str, field: str | None) -> list[Any]:
    """Every distinct non-empty value of ``field`` (default: the item name) in set order, each row cited."""
    rs = ctx.records(handle)
    fields = field_map(rs, field, "name")
    values: list[Any] = []
    for row in rs.rows:
        column = fields[row_view(rs, row)]
        value = row.get(column)
        if value is None or value == "":
            continue
        cite(ctx, rs, row, column)
        value = iso(value)
        if value not in values:
            values.append(value)
    return values
