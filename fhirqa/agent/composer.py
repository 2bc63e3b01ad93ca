"""The composer loop: ask the backend, run the tools it calls, feed results back, until final_answer.

One loop for every backend (smolagents-style): the offline backend and the LLM backends differ only
in how they choose the next tool call. Model mistakes (bad arguments, unknown tools, malformed JSON)
are fed back as tool errors so the model can recover; fhirqa's own bugs raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from fhirqa.agent.backends.base import Backend, Message, ToolCall
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


KEEP_FULL_RESULTS = 2  # the latest tool results keep LATEST_ROWS rows; older ones shrink to their summary
LATEST_ROWS = 8  # rows of a preview a model sees at once (counts and handles always cover them all)
_BULKY = ("preview", "rows", "values", "groups", "patients", "nearest_before", "nearest_after")


def compact(messages: list[Message]) -> list[Message]:
    """The conversation as sent to a model: older tool results keep their summary, not their rows.

    Handles, counts and values stay, so the model can still refer to every earlier result; the rows it
    has already seen are what would otherwise be re-sent on every turn.
    """
    tool_positions = [i for i, m in enumerate(messages) if m.role == "tool"]
    old = set(tool_positions[:-KEEP_FULL_RESULTS])
    out = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            data = orjson.loads(message.content)
            keep = 2 if index in old else LATEST_ROWS
            changed = False
            for key in _BULKY:
                if isinstance(data.get(key), list) and len(data[key]) > keep:
                    left = len(data[key]) - keep
                    note = "shown earlier" if index in old else "not shown; narrow the set with a filter to see them"
                    data[key] = data[key][:keep] + [f"… {left} more ({note})"]
                    changed = True
                elif isinstance(data.get(key), dict) and index in old:
                    data[key] = "(shown earlier)"
                    changed = True
            if changed:
                message = Message("tool", orjson.dumps(data, default=str).decode(), tool_call_id=message.tool_call_id,
                                  name=message.name)
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
    max_rounds = max_rounds or getattr(backend, "max_rounds", MAX_ROUNDS)
    messages = [Message("system", system), Message("user", user)]
    out = CompositionResult(final=None)
    for round_number in range(1, max_rounds + 1):
        out.rounds = round_number
        turn = backend.complete(compact(messages), tools, role="composer")
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
