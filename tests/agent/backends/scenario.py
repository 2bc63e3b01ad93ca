"""The scenario every backend test plays: keys, tool specs in the ``tools/*.json`` shape, a conversation."""

from __future__ import annotations

from typing import Any

from fhirqa.agent.backends.base import Message, ToolCall

OPENAI_KEY = "sk-proj-fhirqaTESTkey0123456789abcdefSECRET"
GEMINI_KEY = "AIzaSyFhirqaTestKey0123456789SECRETxyz"

FIND_RECORDS: dict[str, Any] = {
    "name": "find_records",
    "description": "Find the patient's records of one view whose item matches a phrase.",
    "parameters": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "view": {
                "type": "string",
                "enum": ["observation", "medication", "condition", "encounter"],
                "description": "Canonical view to search.",
            },
            "item": {
                "type": "string",
                "description": "What to look for, as the user said it.",
                "minLength": 1,
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "since": {"type": ["string", "null"], "format": "date", "description": "Earliest date."},
        },
        "required": ["view", "item"],
        "additionalProperties": False,
    },
}

FINAL_ANSWER: dict[str, Any] = {
    "name": "final_answer",
    "description": "Give the answer, with the evidence it rests on.",
    "parameters": {
        "type": "object",
        "$defs": {
            "evidence": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string", "pattern": "^[A-Za-z]+/.+$"},
                    "value": {"description": "The value as recorded."},
                    "time": {"type": "string", "format": "date-time"},
                },
                "required": ["ref", "value"],
                "additionalProperties": False,
            }
        },
        "properties": {
            "answer": {"type": "array", "items": {"type": ["number", "string", "boolean"]}},
            "text": {"type": "string"},
            "status": {"type": "string", "enum": ["answered", "no-data", "ambiguous"], "default": "answered"},
            "evidence": {"type": "array", "items": {"$ref": "#/$defs/evidence"}, "maxItems": 50},
            "confidence": {"type": "integer", "enum": [1, 2, 3]},
        },
        "required": ["answer", "text"],
    },
}

TODAY: dict[str, Any] = {
    "name": "today",
    "description": "Today's date.",
    "parameters": {"type": "object", "properties": {}},
}

TOOLS = [FIND_RECORDS, FINAL_ANSWER, TODAY]


def question() -> list[Message]:
    """The opening of a conversation."""
    return [
        Message("system", "You answer questions about one patient's record. Use the tools."),
        Message("user", "What was her last A1c, and is she still on metformin?"),
    ]


def after_tool_calls(calls: list[ToolCall]) -> list[Message]:
    """The conversation after the model's tool calls and the tools' results (with patient values)."""
    results = [
        '{"ok": true, "handle": "r1", "count": 2, "preview": [{"name": "Hemoglobin A1c", "value": 7.2, '
        '"unit": "%", "time": "2024-03-05T09:12:00Z"}]}',
        '{"ok": true, "handle": "r2", "count": 1, "preview": [{"name": "metformin 500 MG", "status": "active"}]}',
    ]
    return [
        *question(),
        Message("assistant", "", tool_calls=calls),
        *[
            Message("tool", result, tool_call_id=call.id, name=call.name)
            for call, result in zip(calls, results, strict=True)
        ],
    ]
