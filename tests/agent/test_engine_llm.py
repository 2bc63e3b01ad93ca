"""The whole question path with an LLM backend: the real OpenAI SDK over HTTP, a scripted model behind it.

Only the model is simulated (a handler that answers like the Chat Completions API, deciding each turn
from the tool results the SDK sent it); the engine, composer, tools, store and SDK are the production code.
"""

from __future__ import annotations

import json

import httpx
import pytest

from fhirqa.agent.engine import ask
from fhirqa.store import Store

pytest.importorskip("openai")
NOW = "2026-06-30T12:00:00Z"


def completion(message: dict, prompt_tokens: int, finish: str) -> dict:
    return {"id": "chatcmpl-9x", "object": "chat.completion", "created": 1767225600, "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "refusal": None, **message}, "logprobs": None,
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 24, "total_tokens": prompt_tokens + 24}}


def tool_call(call_id: str, name: str, arguments: dict) -> dict:
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": json.dumps(arguments)}}]}


class ScriptedModel:
    """Answers "what was the last potassium?" the way a tool-calling model does, reading results it is sent."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if not body.get("tools"):  # the planner: routing only
            return httpx.Response(200, json=completion({"content": '{"views": ["observation"]}'}, 310, "stop"))
        tool_results = [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]
        if not tool_results:
            message = tool_call("call_a", "get_resources", {"view": "observation", "item": "potassium"})
        elif len(tool_results) == 1:
            message = tool_call("call_b", "get_by_index", {"records": tool_results[0]["handle"], "index": -1})
        else:
            row = tool_results[-1]["row"]
            message = tool_call("call_c", "final_answer", {
                "answer": [row["value"]], "unit": row["unit"], "status": "answered",
                "text": f"Last potassium {row['value']} {row['unit']} on {row['time'][:10]}.",
                "evidence": [tool_results[-1]["handle"]]})
        return httpx.Response(200, json=completion(message, 1200 + 300 * len(tool_results), "tool_calls"))


def test_an_llm_answer_goes_through_the_same_tools_and_carries_evidence(sample_db, caplog):
    caplog.set_level("DEBUG")
    model = ScriptedModel()
    pid = Store(sample_db).query("SELECT patient_id FROM patient WHERE name = 'Linda Taylor'").rows[0][0]
    http = httpx.Client(transport=httpx.MockTransport(model))
    from fhirqa.agent.backends.openai_backend import OpenAIBackend

    backend = OpenAIBackend(http_client=http, api_key="sk-test-secret-0000", model="gpt-4.1-mini", max_retries=0)
    answer = ask("What was her last potassium?", patient_id=pid, now=NOW, db=sample_db, backend=backend)

    (value, ref), = Store(sample_db).query(
        "SELECT value, ref FROM observation WHERE patient_id = ? AND name ILIKE 'potassium%' AND time <= ? "
        "ORDER BY time DESC LIMIT 1", [pid, NOW]).rows
    assert answer.status == "answered" and answer.answer == [value] and answer.backend == "openai"
    assert ref in {e.ref for e in answer.evidence}
    assert answer.tokens["prompt"] == 310 + 1200 + 1500 + 1800
    assert [c["tool"] for c in answer.trace["tool_calls"]] == ["get_resources", "get_by_index", "final_answer"]
    composer_request = model.requests[1]
    offered = {t["function"]["name"] for t in composer_request["tools"]}
    assert {"get_resources", "get_by_index", "final_answer"} <= offered
    assert "Now: 2026-06-30" in composer_request["messages"][1]["content"]
    assert "sk-test-secret-0000" not in caplog.text


def test_a_model_that_skips_final_answer_gets_an_error_not_an_unsupported_answer(sample_db):
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        content = '{"views": ["observation"]}' if not body.get("tools") else "Her potassium is probably fine."
        return httpx.Response(200, json=completion({"content": content}, 500, "stop"))

    from fhirqa.agent.backends.openai_backend import OpenAIBackend

    backend = OpenAIBackend(http_client=httpx.Client(transport=httpx.MockTransport(handler)), api_key="sk-x",
                            model="gpt-4.1-mini", max_retries=0)
    pid = Store(sample_db).query("SELECT patient_id FROM patient LIMIT 1").rows[0][0]
    answer = ask("last potassium?", patient_id=pid, now=NOW, db=sample_db, backend=backend)
    assert answer.status == "error" and answer.evidence == []
