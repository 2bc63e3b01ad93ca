"""The openai backend on the real ``openai`` SDK, over a mock HTTP transport serving recorded payloads."""

from __future__ import annotations

import json
import logging
import time
import types
from typing import Any

import httpx
import pytest

pytest.importorskip("openai")

import openai._base_client  # noqa: E402 - after the importorskip

from fhirqa.agent.backends.base import BackendError, Message, ToolCall, get_backend  # noqa: E402
from fhirqa.agent.backends.openai_backend import (  # noqa: E402
    ARGUMENTS_ERROR_KEY,
    RAW_ARGUMENTS_KEY,
    OpenAIBackend,
    parse_arguments,
)

from .mock_api import MockAPI  # noqa: E402
from .scenario import OPENAI_KEY, TOOLS, after_tool_calls, question  # noqa: E402


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The SDK's retry waits, recorded instead of slept (tests stay fast; Retry-After is visible)."""
    waited: list[float] = []
    monkeypatch.setattr(
        openai._base_client, "time", types.SimpleNamespace(sleep=waited.append, time=time.time)
    )
    return waited


def backend(api: MockAPI, **config: Any) -> OpenAIBackend:
    config.setdefault("api_key", OPENAI_KEY)
    return OpenAIBackend(http_client=api.client(), max_retries=config.pop("max_retries", 2), **config)


def test_tool_call_turn_request_and_result(api: MockAPI) -> None:
    api.queue("openai_tool_call")
    turn = backend(api).complete(question(), TOOLS, role="composer")

    [sent] = api.sent
    assert sent.method == "POST"
    assert str(sent.url) == "https://api.openai.com/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.body["model"] == "gpt-4.1-mini"
    assert sent.body["temperature"] == 0
    assert sent.body["tool_choice"] == "auto"
    assert sent.body["tools"] == [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
        }
        for t in TOOLS
    ]
    assert sent.body["messages"] == [
        {"role": "system", "content": question()[0].content},
        {"role": "user", "content": question()[1].content},
    ]

    assert turn.text is None
    assert turn.tool_calls == [
        ToolCall(
            "call_Qm3bX0kR8sY2vN1aT5uW7zE4",
            "find_records",
            {"view": "observation", "item": "hemoglobin a1c", "limit": 5},
        ),
        ToolCall(
            "call_8HcVt1oPq2RsZ7yXw3Lk9JdF",
            "find_records",
            {"view": "medication", "item": "metformin", "since": None},
        ),
    ]
    assert (turn.prompt_tokens, turn.completion_tokens) == (1412, 58)


def test_tool_results_go_back_and_final_text_comes_out(api: MockAPI) -> None:
    api.queue("openai_tool_call", "openai_final_text")
    model = backend(api)
    first = model.complete(question(), TOOLS, role="composer")
    turn = model.complete(after_tool_calls(first.tool_calls), TOOLS, role="composer")

    messages = api.sent[1].body["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_Qm3bX0kR8sY2vN1aT5uW7zE4",
                "type": "function",
                "function": {"name": "find_records", "arguments": json.dumps(first.tool_calls[0].arguments)},
            },
            {
                "id": "call_8HcVt1oPq2RsZ7yXw3Lk9JdF",
                "type": "function",
                "function": {"name": "find_records", "arguments": json.dumps(first.tool_calls[1].arguments)},
            },
        ],
    }
    assert [m["role"] for m in messages[3:]] == ["tool", "tool"]
    assert messages[3]["tool_call_id"] == "call_Qm3bX0kR8sY2vN1aT5uW7zE4"
    assert json.loads(messages[3]["content"])["preview"][0]["value"] == 7.2
    assert messages[4]["tool_call_id"] == "call_8HcVt1oPq2RsZ7yXw3Lk9JdF"

    assert turn.text.startswith("The most recent hemoglobin A1c was 7.2 %")
    assert turn.tool_calls == []
    assert (turn.prompt_tokens, turn.completion_tokens) == (1693, 31)
    assert model.usage == {"composer": {"prompt": 1412 + 1693, "completion": 58 + 31, "calls": 2}}


def test_malformed_arguments_become_a_call_carrying_the_raw_text(api: MockAPI) -> None:
    api.queue("openai_malformed_arguments", "openai_final_text")
    model = backend(api)
    turn = model.complete(question(), TOOLS, role="composer")

    [call] = turn.tool_calls
    assert call.name == "find_records"
    assert call.arguments[RAW_ARGUMENTS_KEY] == '{"view": "observation", "item": "a1c"'
    assert "not valid JSON" in call.arguments[ARGUMENTS_ERROR_KEY]

    # The composer answers with the parse error; the call goes back exactly as the model wrote it.
    error = Message("tool", '{"ok": false, "error": "arguments are not valid JSON"}', tool_call_id=call.id)
    model.complete([*question(), Message("assistant", "", tool_calls=[call]), error], TOOLS, role="composer")
    sent_call = api.sent[1].body["messages"][2]["tool_calls"][0]
    assert sent_call["function"]["arguments"] == '{"view": "observation", "item": "a1c"'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        (None, {}),
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", {RAW_ARGUMENTS_KEY: "[1, 2]", ARGUMENTS_ERROR_KEY: "arguments must be a JSON object"}),
    ],
)
def test_parse_arguments(raw: str | None, expected: dict[str, Any]) -> None:
    assert parse_arguments(raw) == expected


def test_rate_limit_is_retried_after_the_servers_delay(api: MockAPI, sleeps: list[float]) -> None:
    api.queue("openai_429_rate_limit", "openai_final_text")
    turn = backend(api).complete(question(), TOOLS, role="composer")

    assert turn.text is not None
    assert len(api.sent) == 2
    assert sleeps == [2.0]  # Retry-After: 2
    assert [s.headers["x-stainless-retry-count"] for s in api.sent] == ["0", "1"]
    assert api.sent[0].body == api.sent[1].body


def test_a_delay_longer_than_two_minutes_is_not_waited_for(api: MockAPI, sleeps: list[float]) -> None:
    api.queue("openai_429_retry_after_long")
    with pytest.raises(
        BackendError, match=r"rate limited \(HTTP 429\) after 1 attempt\(s\): .*requests per day"
    ):
        backend(api).complete(question(), TOOLS, role="composer")
    assert len(api.sent) == 1 and sleeps == []


def test_authentication_failure_is_not_retried_and_never_quotes_the_key(
    api: MockAPI, sleeps: list[float]
) -> None:
    api.queue("openai_401_invalid_key")
    with pytest.raises(BackendError) as caught:
        backend(api).complete(question(), TOOLS, role="composer")

    message = str(caught.value)
    assert "openai" in message and "HTTP 401" in message and "OPENAI_API_KEY" in message
    assert OPENAI_KEY not in message and "SECRET" not in message
    assert len(api.sent) == 1 and sleeps == []


def test_server_errors_exhaust_the_retries(api: MockAPI, sleeps: list[float]) -> None:
    api.queue(*["openai_500_server_error"] * 3)
    with pytest.raises(BackendError) as caught:
        backend(api, max_retries=2).complete(question(), TOOLS, role="planner")

    message = str(caught.value)
    assert "HTTP 500" in message and "after 3 attempt(s)" in message and "Sorry about that" in message
    assert len(api.sent) == 3 and len(sleeps) == 2


def test_timeouts_exhaust_the_retries(api: MockAPI, sleeps: list[float]) -> None:
    api.queue(*[httpx.ReadTimeout("timed out")] * 2)
    with pytest.raises(BackendError, match=r"timed out \(7s\) after 2 attempt\(s\)"):
        backend(api, max_retries=1, timeout=7).complete(question(), TOOLS, role="composer")
    assert len(api.sent) == 2


def test_compatible_server_with_base_url_and_no_key(api: MockAPI) -> None:
    api.queue("ollama_tool_call")
    model = OpenAIBackend(
        http_client=api.client(), base_url="http://localhost:11434/v1", model="qwen2.5:7b-instruct", env={}
    )
    turn = model.complete(question(), TOOLS, role="composer")

    [sent] = api.sent
    assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer not-needed"
    assert sent.body["model"] == "qwen2.5:7b-instruct"
    assert turn.tool_calls == [
        ToolCall("call_r4k2m9xq", "find_records", {"item": "hemoglobin a1c", "view": "observation"})
    ]
    assert turn.text is None  # "" from the server: no text
    assert (turn.prompt_tokens, turn.completion_tokens) == (988, 41)


def test_compatible_server_errors_say_what_to_check(api: MockAPI, sleeps: list[float]) -> None:
    api.queue("openai_404_model", httpx.ConnectError("connection refused"))
    model = OpenAIBackend(
        http_client=api.client(), base_url="http://localhost:11434/v1", model="llama3.1:8b", max_retries=0
    )
    with pytest.raises(
        BackendError, match=r"HTTP 404\) \(does the base URL end in /v1.*not found, try pulling"
    ):
        model.complete(question(), TOOLS, role="composer")
    with pytest.raises(BackendError, match=r"localhost:11434/v1.*cannot connect.*is the server running"):
        model.complete(question(), TOOLS, role="composer")


def test_per_role_models_and_no_temperature(api: MockAPI) -> None:
    api.queue("openai_final_text", "openai_final_text")
    model = backend(api, role_models={"planner": "gpt-4.1-nano"}, temperature=None)
    model.complete(question(), [], role="planner")
    model.complete(question(), [], role="composer")

    assert [s.body["model"] for s in api.sent] == ["gpt-4.1-nano", "gpt-4.1-mini"]
    assert all("temperature" not in s.body and "tools" not in s.body for s in api.sent)
    assert all("tool_choice" not in s.body for s in api.sent)
    assert set(model.usage) == {"planner", "composer"}


def test_registered_and_configured_from_the_environment(
    api: MockAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("FHIRQA_OPENAI_MODEL", "gpt-4.1")
    api.queue("openai_final_text")
    model = get_backend("openai", http_client=api.client())
    assert model.name == "openai"
    model.complete(question(), [], role="composer")
    assert api.sent[0].body["model"] == "gpt-4.1"


def test_no_key_and_no_server_is_a_clear_error() -> None:
    with pytest.raises(BackendError, match=r"set OPENAI_API_KEY, or pass --base-url URL"):
        get_backend("openai", env={})


def test_the_key_never_reaches_the_logs(
    api: MockAPI, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.queue("openai_429_rate_limit", "openai_tool_call", "openai_401_invalid_key")
    model = backend(api)
    model.complete(question(), TOOLS, role="composer")
    with pytest.raises(BackendError) as caught:
        model.complete(question(), TOOLS, role="composer")
    logging.getLogger("test").error("backend failed: %s (%r)", caught.value, model)

    assert any(r.name.startswith("openai") for r in caplog.records)  # the SDK did log at DEBUG
    assert any(r.name.startswith("fhirqa") for r in caplog.records)
    assert OPENAI_KEY not in caplog.text
    for record in caplog.records:
        assert OPENAI_KEY not in record.getMessage()
        assert OPENAI_KEY not in repr(record.args)
    assert OPENAI_KEY not in repr(model) and OPENAI_KEY not in str(model.settings)
