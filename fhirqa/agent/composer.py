"""The composer loop: ask the backend, run the tools it calls, feed results back, until final_answer.

One loop for every backend (smolagents-style): the offline backend and the LLM backends differ only
in how they choose the next tool call. Model mistakes (bad arguments, unknown tools, malformed JSON)
are fed back as tool errors so the model can recover; fhirqa's own bugs raise.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import orjson

from fhirqa.agent.backends.base import Backend, Message, ToolCall
from fhirqa.agent.catalog import load_catalog
from fhirqa.agent.tools import execute
from fhirqa.agent.tools.base import ToolContext

MAX_ROUNDS = 12


@dataclass
class CompositionResult:
    """What the loop produced: the final_answer arguments (or None), tokens and the transcript trace."""

    final: dict[str, Any] | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rounds: int = 0
    thoughts: list[str] = field(default_factory=list)
    stop_reason: str = ""


def _tool_message(call: ToolCall, result: dict[str, Any]) -> Message:
    return Message("tool", orjson.dumps(result, default=str).decode(), tool_call_id=call.id, name=call.name)


KEEP_FULL_RESULTS = 2  # the latest tool results keep their rows; older ones shrink to OLD_ROWS
LATEST_ROWS = 8  # values of a list a model sees at once, in order (counts and handles cover them all)
PREVIEW_ROWS = 6  # record rows of a preview a model sees at once: the first and the last half (time order)
OLD_ROWS = 2  # rows an older result keeps (the model has seen the rest)
_BULKY = ("preview", "rows", "values", "groups", "patients", "nearest_before", "nearest_after")
_ROW_LISTS = ("preview", "rows", "values")  # lists of record rows: empty columns dropped
_SHARED_LISTS = ("preview", "rows")  # lists whose shared column values are said once
_SINGLE_ROWS = ("row", "nearest_before", "nearest_after")
SHARED_KEY = "rows_share"  # the columns every listed row has with the same value, stated once


@functools.lru_cache(maxsize=1)
def _core_columns() -> frozenset[str]:
    """Columns kept even when empty: each view's name, time and value columns (an empty value says something)."""
    core: set[str] = set()
    for info in load_catalog().values():
        core.update(f for f in (info.name_field, info.time_field, info.value_field, info.unit_field,
                                info.text_value_field) if f)
    return frozenset(core)


def _trim_row(row: Any) -> Any:
    """A row without its empty columns (the view's name, time and value columns stay, even when empty)."""
    if not isinstance(row, dict):
        return row
    core = _core_columns()
    return {k: v for k, v in row.items() if v is not None or k in core}


def _share(rows: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    """Columns with one value in every row (never ``ref``), and the rows without them."""
    dicts = [r for r in rows if isinstance(r, dict)]
    if len(dicts) < 2 or len(dicts) != len(rows):
        return {}, rows
    first = dicts[0]
    shared = {k: v for k, v in first.items() if k != "ref" and all(k in r and r[k] == v for r in dicts[1:])}
    if not shared:
        return {}, rows
    return shared, [{k: v for k, v in r.items() if k not in shared} for r in dicts]


def _shown(rows: list[Any], keep: int, note: str, ends: bool) -> list[Any]:
    """At most ``keep`` entries of a long list and a marker for the rest: the first ones, or with ``ends``
    the first and the last half (a time-ordered preview shows both the earliest and the latest rows)."""
    if len(rows) <= keep:
        return rows
    head = (keep + 1) // 2 if ends else keep
    tail = keep - head
    left = len(rows) - keep
    return [*rows[:head], f"… {left} more ({note})", *(rows[-tail:] if tail else [])]


def compact_result(data: dict[str, Any], old: bool = False) -> dict[str, Any]:
    """One tool result as a model is sent it: the summary, ids and values it cites, without repetition.

    Handles, counts, values, refs and times stay; empty columns go, a column with the same value in
    every listed row is said once (``rows_share``), a picked row's evidence keeps only what the row does
    not already say, and a long list shows its first and last rows. ``old`` results (the model has seen
    them) keep OLD_ROWS rows; the full sets stay behind their handles for the next tools.
    """
    out = dict(data)
    for key in _SINGLE_ROWS:
        if isinstance(out.get(key), dict):
            out[key] = _trim_row(out[key])
    if isinstance(out.get("row"), dict) and isinstance(out.get("evidence"), dict):
        row, cited = out["row"], out["evidence"]
        # The cited value is the row's value in the cited field: said once, in the row.
        said = {**row, "value": row.get(cited.get("field"), row.get("value"))} if "field" in cited else row
        out["evidence"] = {k: v for k, v in cited.items() if k not in said or said[k] != v}
    note = "shown earlier" if old else "not shown; narrow the set with a filter to see them"
    ordered: dict[str, Any] = {}
    for key, value in out.items():
        if key in _BULKY and isinstance(value, list):
            if key in _ROW_LISTS:
                value = [_trim_row(r) for r in value]
            ends = key in _SHARED_LISTS
            value = _shown(value, OLD_ROWS if old else PREVIEW_ROWS if ends else LATEST_ROWS, note, ends)
            if key in _SHARED_LISTS:
                shared, slim = _share([r for r in value if not isinstance(r, str)])
                if shared:
                    rows = iter(slim)
                    value = [r if isinstance(r, str) else next(rows) for r in value]
                stated = {k: v for k, v in shared.items() if v is not None}  # empty in every row: simply absent
                if stated:
                    ordered[SHARED_KEY if key == "preview" else f"{key}_share"] = stated
        elif key in _BULKY and isinstance(value, dict) and old:
            value = "(shown earlier)"
        ordered[key] = value
    return ordered


def compact(messages: list[Message]) -> list[Message]:
    """The conversation as sent to a model: every tool result compacted, older ones to their summary.

    Handles, counts and values stay, so the model can still refer to every earlier result; the rows it
    has already seen are what would otherwise be re-sent on every turn.
    """
    tool_positions = [i for i, m in enumerate(messages) if m.role == "tool"]
    old = set(tool_positions[:-KEEP_FULL_RESULTS])
    out = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            data = orjson.loads(message.content)
            if isinstance(data, dict):
                message = Message("tool", orjson.dumps(compact_result(data, index in old), default=str).decode(),
                                  tool_call_id=message.tool_call_id, name=message.name)
        out.append(message)
    return out


def compose(
    backend: Backend,
    ctx: ToolContext,
    system: str,
    user: str,
    tools: list[dict[str, Any]],
    max_rounds: int | None = None,
) -> CompositionResult:
    """Run the plan → execute → check loop until the backend calls final_answer or rounds run out.

    A backend may set ``max_rounds`` (the offline one tries several spellings and views in turn).
    """
    max_rounds = max_rounds or int(getattr(backend, "max_rounds", None) or MAX_ROUNDS)
    messages = [Message("system", system), Message("user", user)]
    out = CompositionResult(final=None)
    for round_number in range(1, max_rounds + 1):
        out.rounds = round_number
        # A model is sent the compacted conversation (tokens); a deterministic planner that reads results
        # whole (``reads_full_results``) is sent them as the tools returned them, so a plan never decides
        # from the two rows an older result keeps ("what changed?" compared Body Height with CO2).
        sent = messages if getattr(backend, "reads_full_results", False) else compact(messages)
        turn = backend.complete(sent, tools, role="composer")
        out.prompt_tokens += turn.prompt_tokens
        out.completion_tokens += turn.completion_tokens
        if turn.text:
            out.thoughts.append(turn.text)
        if not turn.tool_calls:
            out.stop_reason = "the model answered without calling final_answer"
            if turn.text and ctx.answer is None:
                # Text without final_answer is not evidence-backed: keep it as an error, not an answer.
                out.final = {"answer": [], "text": turn.text, "status": "error"}
            return out
        messages.append(Message("assistant", turn.text or "", tool_calls=turn.tool_calls))
        for call in turn.tool_calls:
            if "__raw__" in call.arguments:
                result: dict[str, Any] = {"ok": False, "error": f"arguments are not valid JSON: {call.arguments['__raw__'][:200]}"}
            else:
                result = execute(ctx, call.name, call.arguments)
            messages.append(_tool_message(call, result))
            if ctx.answer is not None:
                out.final = ctx.answer
                out.stop_reason = "final_answer"
                return out
    out.stop_reason = f"no final_answer after {max_rounds} rounds"
    return out
