"""The offline backend behaves like a model that calls tools, but decides by parsing, not sampling.

Each turn it re-reads the conversation: the question (and ``now``) from the user message, the tool
results so far from the tool messages, replays its plan over those results, and returns the next
tool call. Same input, same calls, same answer: it is deterministic and needs no network or key.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

from fhirqa.agent.backends.base import Message, ModelTurn, ToolCall, register
from fhirqa.agent.backends.offline.focus import focus
from fhirqa.agent.backends.offline.parser import ParsedQuestion, parse
from fhirqa.agent.backends.offline.plans import plan

_QUESTION = re.compile(r"^Question:\s*(?P<q>.+?)\s*$", re.MULTILINE)
_NOW = re.compile(r"^Now:\s*(?P<now>\S+)\s*$", re.MULTILINE)
_PATIENT_NAME = re.compile(r"^Patient:\s*\S+\s*\((?P<names>[^)]*)\)\s*$", re.MULTILINE)


@lru_cache(maxsize=256)
def parse_cached(question: str, now_iso: str, names: str) -> ParsedQuestion:
    """Parse once per question, instant and patient name (plans get a fresh copy to annotate).

    A question that opens with context ("Renewing her Lasix today - what was her last K?") is parsed as
    its request (:func:`focus`), unless the request alone names nothing the plans can look up.
    """
    now, own_names = datetime.fromisoformat(now_iso), tuple(names.split())
    whole = parse(question, now, names=own_names)
    asked = focus(question)
    if asked is None or whole.intent == "lookup":  # "I'm Dannie Schmitt, born …. What's my patient ID?"
        return whole
    parsed = parse(asked, now, names=own_names)
    return parsed if names_something(parsed) else whole


def parse_fresh(question: str, now_iso: str, names: str) -> ParsedQuestion:
    """The cached parse as a fresh copy: plans and the SQL reading annotate what they are given."""
    cached = parse_cached(question, now_iso, names)
    return ParsedQuestion(**{**cached.__dict__, "notes": [], "views": list(cached.views), "hinted": list(cached.hinted)})


def names_something(pq: ParsedQuestion) -> bool:
    """The parse has something to look up: an item, or a question about the patient or the record as a whole."""
    if pq.intent == "lookup":
        return bool(pq.lookup_name or pq.lookup_birth)  # "what is the patient id?" needs the clause naming them
    return bool(pq.entity or pq.demographic or pq.list_kind or pq.encounter_class or pq.stay_event or pq.category
                or pq.intent in ("active_list", "age_at"))


def read_user_message(messages: list[Message]) -> tuple[str, str, str]:
    """The question, ``now`` (ISO) and the patient's names from the composer's user message."""
    user = next(m for m in messages if m.role == "user")
    question = _QUESTION.search(user.content)
    now = _NOW.search(user.content)
    names = _PATIENT_NAME.search(user.content)
    return (question.group("q") if question else user.content.strip(),
            now.group("now") if now else datetime.now(UTC).isoformat(),
            names.group("names") if names else "")


#: Tools a plan may call on the chance they help; their refusal (no notes here) is an answer, not a failure.
OPTIONAL_TOOLS = frozenset({"find_in_notes", "search_notes"})


def unit_answer(final: dict[str, Any]) -> dict[str, Any]:
    """The final answer of a question about a value's unit ("K units?", "in what units is Hgb reported"): the unit is
    the answer and the value it was read from stays in the text (with its evidence). An answer without a unit (no
    value, or a unitless score) is left as it is, its text saying no unit is recorded."""
    unit = final.get("unit")
    if final.get("status", "answered") != "answered" or not final.get("answer"):
        return final
    if not unit:
        return {**final, "text": f"No unit is recorded for it. {final.get('text', '')}".strip()}
    return {**final, "answer": [unit], "text": f"In {unit}. {final.get('text', '')}".strip()}


def _last_call_name(messages: list[Message]) -> str | None:
    tools = [m for m in messages if m.role == "tool"]
    return tools[-1].name if tools else None


@register("offline")
class OfflineBackend:
    """Deterministic tool-calling policy over a parsed question."""

    name = "offline"
    max_rounds = 60  # deterministic and finite: the bound only guards against a plan bug
    reads_full_results = True  # no tokens to save: plans decide from every row a tool returned

    def __init__(self, **config: Any) -> None:
        self.config = config

    def parsed(self, messages: list[Message]) -> ParsedQuestion:
        """The parse of the conversation's question (fresh copy: plans record notes on it)."""
        return parse_fresh(*read_user_message(messages))

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        """The next tool call of the plan, given the results so far."""
        pq = self.parsed(messages)
        if role == "planner":
            # The views the question points at, else the first one the plan will try: a narrow route keeps
            # the composer's prompt small for LLM backends that reuse this routing.
            routed = [v for v in pq.views if v in pq.hinted][:2] or pq.views[:1]
            return ModelTurn(text=orjson.dumps({"views": routed, "parse": pq.to_trace()}).decode())
        results = [orjson.loads(m.content) for m in messages if m.role == "tool"]
        last_call = _last_call_name(messages)
        if results and results[-1].get("ok") is False and last_call not in OPTIONAL_TOOLS:
            # A deterministic plan that trips over a tool error is a gap in the plan: say so, do not guess.
            error = results[-1].get("error", "tool error")
            call_args = {"answer": [], "status": "error", "text": f"The offline planner could not finish: {error}"}
            return ModelTurn(text=None, tool_calls=[ToolCall(f"call_{len(results) + 1}", "final_answer", call_args)])
        steps = plan(pq)
        call = next(steps)
        for result in results:
            try:
                call = steps.send(result)
            except StopIteration:
                return ModelTurn(text="plan finished")
        name, arguments = call
        if name == "final_answer" and pq.unit_asked:
            arguments = unit_answer(arguments)
        text = orjson.dumps({"parse": pq.to_trace()}).decode() if not results else None
        return ModelTurn(text=text, tool_calls=[ToolCall(id=f"call_{len(results) + 1}", name=name, arguments=arguments)])
