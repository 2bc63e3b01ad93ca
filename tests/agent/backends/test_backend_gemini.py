"""The gemini backend on the real ``google-genai`` SDK, over a mock HTTP transport serving recorded payloads.

The transport goes in through ``HttpOptions(httpx_client=...)``, the SDK's own way to take a client,
so requests are built, sent and parsed by the same code as in production.
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("google.genai")

from google.genai import types  # noqa: E402

from fhirqa.agent.backends.base import BackendError, Message, ToolCall, get_backend  # noqa: E402
from fhirqa.agent.backends.gemini_backend import (  # noqa: E402
    SYNTHETIC_ID_PREFIX,
    GeminiBackend,
    to_gemini_declaration,
    to_gemini_schema,
)

from .mock_api import MockAPI, payload  # noqa: E402
from .scenario import FINAL_ANSWER, GEMINI_KEY, TOOLS, after_tool_calls, question  # noqa: E402

SIGNATURE = "CiQBVKhc7wXgQzF1b2d1c2ZlY3JldHNpZ25hdHVyZWZoaXJxYQ=="


def backend(api: MockAPI, **config: Any) -> tuple[GeminiBackend, list[float]]:
    """A backend on ``api`` whose retry waits are recorded instead of slept."""
    config.setdefault("api_key", GEMINI_KEY)
    config.setdefault("max_retries", 2)
    model = GeminiBackend(http_client=api.client(), env={}, **config)
    waited: list[float] = []
    model._sleep = waited.append
    return model, waited


def test_tool_call_turn_request_and_result(api: MockAPI) -> None:
    api.queue("gemini_tool_call")
    model, _ = backend(api)
    turn = model.complete(question(), TOOLS, role="composer")

    [sent] = api.sent
    assert sent.method == "POST"
    assert sent.url.host == "generativelanguage.googleapis.com"
    assert sent.url.path.endswith("/models/gemini-2.5-flash:generateContent")
    assert sent.headers["x-goog-api-key"] == GEMINI_KEY
    assert GEMINI_KEY not in str(sent.url)
    body = sent.body
    assert body["systemInstruction"]["parts"] == [{"text": question()[0].content}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": question()[1].content}]}]
    assert body["generationConfig"] == {"temperature": 0.0}
    declarations = body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == ["find_records", "final_answer", "today"]
    assert "parameters" not in declarations[2]  # Gemini rejects an OBJECT without properties
    find = declarations[0]["parameters"]
    assert find["type"] == "OBJECT" and find["required"] == ["view", "item"]
    assert find["properties"]["view"] == {
        "type": "STRING",
        "enum": ["observation", "medication", "condition", "encounter"],
        "description": "Canonical view to search.",
    }
    assert find["properties"]["limit"] == {"type": "INTEGER", "minimum": 1, "maximum": 100}
    assert find["properties"]["since"] == {
        "type": "STRING",
        "nullable": True,
        "description": "Earliest date. Format: date.",
    }
    sent_text = json.dumps(body)
    for keyword in ("additionalProperties", "$schema", "$defs", "$ref", "default", "minLength", "pattern"):
        assert keyword not in sent_text

    assert turn.text is None
    assert turn.tool_calls[0].name == "find_records"
    assert turn.tool_calls[0].arguments == {"view": "observation", "item": "hemoglobin a1c", "limit": 5}
    assert turn.tool_calls[1].arguments == {"view": "medication", "item": "metformin"}
    assert all(call.id.startswith(SYNTHETIC_ID_PREFIX) for call in turn.tool_calls)
    assert len({call.id for call in turn.tool_calls}) == 2
    assert (turn.prompt_tokens, turn.completion_tokens) == (1290, 24 + 88)  # thinking tokens are output


def test_tool_results_go_back_with_the_thought_signature(api: MockAPI) -> None:
    api.queue("gemini_tool_call", "gemini_final_text")
    model, _ = backend(api)
    first = model.complete(question(), TOOLS, role="composer")
    turn = model.complete(after_tool_calls(first.tool_calls), TOOLS, role="composer")

    contents = api.sent[1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = contents[1]["parts"]
    assert calls[0] == {
        "functionCall": {
            "name": "find_records",
            "args": {"view": "observation", "item": "hemoglobin a1c", "limit": 5},
        },
        "thoughtSignature": SIGNATURE,
    }
    assert calls[1] == {
        "functionCall": {"name": "find_records", "args": {"view": "medication", "item": "metformin"}}
    }
    responses = contents[2]["parts"]  # both results in one turn, answering the two calls in order
    assert [p["functionResponse"]["name"] for p in responses] == ["find_records", "find_records"]
    assert responses[0]["functionResponse"]["response"]["preview"][0]["value"] == 7.2
    assert responses[1]["functionResponse"]["response"]["handle"] == "r2"
    assert all("id" not in p["functionResponse"] for p in responses)  # made-up ids stay here

    assert turn.text.startswith("The most recent hemoglobin A1c was 7.2 %")
    assert turn.tool_calls == []
    assert (turn.prompt_tokens, turn.completion_tokens) == (1561, 29)
    assert model.usage == {"composer": {"prompt": 1290 + 1561, "completion": 112 + 29, "calls": 2}}


def test_server_ids_and_plain_results_round_trip(api: MockAPI) -> None:
    api.queue("gemini_final_text")
    model, _ = backend(api)
    call = ToolCall("fc-7d1e", "today", {})
    messages = [
        *question(),
        Message("assistant", "Checking the date.", tool_calls=[call]),
        Message("tool", "2025-07-08", tool_call_id="fc-7d1e"),
    ]
    model.complete(messages, TOOLS, role="specialist")

    model_turn, results = api.sent[0].body["contents"][1:]
    assert model_turn["parts"] == [
        {"text": "Checking the date."},
        {"functionCall": {"id": "fc-7d1e", "name": "today", "args": {}}},
    ]
    assert results["parts"] == [
        {"functionResponse": {"id": "fc-7d1e", "name": "today", "response": {"output": "2025-07-08"}}}
    ]


@pytest.mark.parametrize(
    ("reply", "delay"), [("gemini_429_retry_info", 7.0), ("gemini_429_retry_after", 3.0)]
)
def test_rate_limit_is_retried_after_the_servers_delay(api: MockAPI, reply: str, delay: float) -> None:
    api.queue(reply, "gemini_final_text")
    model, waited = backend(api)
    turn = model.complete(question(), TOOLS, role="composer")

    assert turn.text is not None
    assert waited == [delay]
    assert len(api.sent) == 2 and api.sent[0].body == api.sent[1].body


def test_a_delay_longer_than_allowed_fails_at_once(api: MockAPI) -> None:
    api.queue("gemini_429_retry_after_long")
    model, waited = backend(api)
    with pytest.raises(BackendError, match=r"rate limited \(HTTP 429\); the server asks to wait 3600s"):
        model.complete(question(), TOOLS, role="composer")
    assert waited == [] and len(api.sent) == 1


@pytest.mark.parametrize(
    ("reply", "status"), [("gemini_400_api_key_invalid", 400), ("gemini_403_permission_denied", 403)]
)
def test_authentication_failure_is_not_retried(api: MockAPI, reply: str, status: int) -> None:
    api.queue(reply)
    model, waited = backend(api)
    with pytest.raises(BackendError) as caught:
        model.complete(question(), TOOLS, role="composer")
    message = str(caught.value)
    assert "gemini" in message and f"authentication failed (HTTP {status})" in message
    assert "GEMINI_API_KEY" in message and GEMINI_KEY not in message
    assert waited == [] and len(api.sent) == 1


def test_server_errors_exhaust_the_retries(api: MockAPI) -> None:
    api.queue(*["gemini_503_overloaded"] * 3)
    model, waited = backend(api, retry_initial_delay=0.5)
    with pytest.raises(BackendError) as caught:
        model.complete(question(), TOOLS, role="composer")
    message = str(caught.value)
    assert "server error (HTTP 503) after 3 attempt(s)" in message and "overloaded" in message
    assert len(api.sent) == 3
    assert len(waited) == 2 and 0.375 <= waited[0] <= 0.5 and 0.75 <= waited[1] <= 1.0  # backoff, jittered


def test_timeouts_exhaust_the_retries(api: MockAPI) -> None:
    api.queue(httpx.ReadTimeout("timed out"), httpx.ReadTimeout("timed out"))
    model, waited = backend(api, max_retries=1, timeout=9)
    with pytest.raises(BackendError, match=r"request timed out \(9s\) after 2 attempt\(s\)"):
        model.complete(question(), TOOLS, role="composer")
    assert len(waited) == 1
    assert api.sent[0].headers["x-server-timeout"] == "9"


def test_a_rejected_request_is_not_retried(api: MockAPI) -> None:
    api.queue("gemini_400_bad_schema")
    model, waited = backend(api)
    with pytest.raises(BackendError, match=r"request refused \(HTTP 400\): .*only 'enum' and 'date-time'"):
        model.complete(question(), TOOLS, role="composer")
    assert waited == []


def test_a_blocked_prompt_is_an_error_naming_the_reason(api: MockAPI) -> None:
    api.queue("gemini_blocked_prompt")
    model, _ = backend(api)
    with pytest.raises(BackendError, match="PROHIBITED_CONTENT"):
        model.complete(question(), TOOLS, role="composer")


def test_an_empty_answer_is_no_text_and_a_warning(api: MockAPI, caplog: pytest.LogCaptureFixture) -> None:
    api.queue("gemini_malformed_function_call")
    model, _ = backend(api)
    turn = model.complete(question(), TOOLS, role="composer")
    assert (turn.text, turn.tool_calls, turn.prompt_tokens, turn.completion_tokens) == (None, [], 1290, 0)
    assert "finish reason MALFORMED_FUNCTION_CALL" in caplog.text


def test_configured_from_the_environment(api: MockAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("FHIRQA_GEMINI_MODEL", "gemini-2.5-pro")
    monkeypatch.setenv("FHIRQA_LLM_TEMPERATURE", "none")
    api.queue("gemini_final_text")
    model = get_backend("gemini", http_client=api.client())
    model.complete(question(), [], role="planner")

    [sent] = api.sent
    assert sent.url.path.endswith("/models/gemini-2.5-pro:generateContent")
    assert sent.headers["x-goog-api-key"] == GEMINI_KEY
    assert "tools" not in sent.body and "temperature" not in sent.body.get("generationConfig", {})


def test_no_key_is_a_clear_error() -> None:
    with pytest.raises(BackendError, match=r"set GEMINI_API_KEY \(or GOOGLE_API_KEY\)"):
        get_backend("gemini", env={})


def test_the_key_never_reaches_the_logs(api: MockAPI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    api.queue("gemini_429_retry_info", "gemini_tool_call", "gemini_400_api_key_invalid")
    model, _ = backend(api)
    model.complete(question(), TOOLS, role="composer")
    with pytest.raises(BackendError) as caught:
        model.complete(question(), TOOLS, role="composer")
    logging.getLogger("test").error("backend failed: %s (%r)", caught.value, model)

    assert any("retrying in 7.00s" in r.getMessage() for r in caplog.records)
    assert GEMINI_KEY not in caplog.text
    for record in caplog.records:
        assert GEMINI_KEY not in record.getMessage()
        assert GEMINI_KEY not in repr(record.args)
    assert GEMINI_KEY not in repr(model) and GEMINI_KEY not in str(model.settings)


# -- JSON Schema → Gemini Schema --------------------------------------------------------------------


def test_schemas_convert_to_what_the_sdk_and_api_accept() -> None:
    for spec in TOOLS:
        declaration = to_gemini_declaration(spec)
        types.FunctionDeclaration(**declaration)  # validates against the SDK's model

    final = to_gemini_schema(FINAL_ANSWER["parameters"])
    assert final["properties"]["answer"]["items"] == {
        "any_of": [{"type": "NUMBER"}, {"type": "STRING"}, {"type": "BOOLEAN"}]
    }
    evidence = final["properties"]["evidence"]
    assert evidence["max_items"] == 50
    assert evidence["items"]["type"] == "OBJECT" and evidence["items"]["required"] == ["ref", "value"]
    assert evidence["items"]["properties"]["time"] == {"type": "STRING", "format": "date-time"}
    assert evidence["items"]["properties"]["value"] == {
        "any_of": [{"type": "STRING"}, {"type": "NUMBER"}, {"type": "BOOLEAN"}],
        "description": "The value as recorded.",
    }
    assert final["properties"]["confidence"] == {"type": "INTEGER", "description": "One of: 1, 2, 3."}
    assert final["properties"]["status"]["enum"] == ["answered", "no-data", "ambiguous"]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, {"type": "STRING", "nullable": True}),
        (
            {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            {"any_of": [{"type": "STRING"}, {"type": "INTEGER"}]},
        ),
        ({"const": "observation"}, {"type": "STRING", "enum": ["observation"]}),
        (
            {"type": "array"},
            {
                "type": "ARRAY",
                "items": {"any_of": [{"type": "STRING"}, {"type": "NUMBER"}, {"type": "BOOLEAN"}]},
            },
        ),
        (
            {"allOf": [{"properties": {"a": {"type": "number"}}, "required": ["a"]}], "type": "object"},
            {"type": "OBJECT", "properties": {"a": {"type": "NUMBER"}}, "required": ["a"]},
        ),
        ({"type": "number", "format": "percent"}, {"type": "NUMBER", "description": "Format: percent."}),
    ],
)
def test_schema_keywords(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert to_gemini_schema(schema) == expected


def test_the_projects_tool_specs_convert() -> None:
    specs = sorted((Path(__file__).resolve().parents[3] / "tools").glob("*.json"))
    if not specs:
        pytest.skip("tools/*.json not written yet")
    for path in specs:
        spec = json.loads(path.read_text("utf-8"))
        types.FunctionDeclaration(**to_gemini_declaration(spec))
        assert "additionalProperties" not in json.dumps(to_gemini_declaration(spec)), path.name


def test_a_recursive_ref_is_refused() -> None:
    schema = {"$defs": {"node": {"$ref": "#/$defs/node"}}, "$ref": "#/$defs/node"}
    with pytest.raises(ValueError, match="nests too deeply"):
        to_gemini_schema(schema)


def test_recorded_signature_is_base64() -> None:
    part = payload("gemini_tool_call")["body"]["candidates"][0]["content"]["parts"][0]
    assert base64.b64decode(part["thoughtSignature"]) and part["thoughtSignature"] == SIGNATURE
