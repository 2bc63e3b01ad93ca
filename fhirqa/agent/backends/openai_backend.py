"""The ``openai`` backend: OpenAI Chat Completions with native function calling.

The same backend serves any OpenAI-compatible server (vLLM, Ollama, llama.cpp's ``llama-server``,
LM Studio, …) when given a base URL. The ``openai`` SDK is imported when a backend is built, never
when this module is imported, so fhirqa works without it.

Retries are the SDK's own: 408, 409, 429 and 5xx answers, timeouts and connection errors are retried
``max_retries`` times with exponential backoff, honouring ``Retry-After`` / ``retry-after-ms`` up to
a minute. What is left after that becomes a :class:`BackendError` naming the provider, the endpoint
and the HTTP status, never the key.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

from fhirqa.agent.backends.base import BackendError, Message, ModelTurn, ToolCall, register
from fhirqa.agent.backends.settings import BackendSettings, openai_settings

log = logging.getLogger(__name__)

# A tool call whose arguments are not a JSON object becomes a ToolCall whose arguments hold the raw
# text under RAW_ARGUMENTS_KEY and the parse error under ARGUMENTS_ERROR_KEY, so the composer can
# report the error back to the model instead of the run failing.
RAW_ARGUMENTS_KEY = "__raw__"
ARGUMENTS_ERROR_KEY = "__error__"


@register("openai")
class OpenAIBackend:
    """A model behind the OpenAI Chat Completions API (or a compatible server at ``base_url``)."""

    name = "openai"

    def __init__(
        self, *, http_client: Any = None, settings: BackendSettings | None = None, **config: Any
    ) -> None:
        """Configure from ``settings``, or from keyword arguments and the environment.

        ``config`` is what :func:`~fhirqa.agent.backends.settings.openai_settings` takes (``model``,
        ``api_key``, ``base_url``, ``timeout``, ``max_retries``, ``temperature``, ``role_models``,
        ``env``); ``temperature=None`` sends no temperature (some reasoning models accept only their
        default). ``http_client`` is an ``httpx.Client`` (or ``httpx2.Client``) to send requests
        through; tests pass one with a mock transport.
        """
        settings = settings or openai_settings(**config)
        self.settings = settings
        self.model = settings.model
        self.usage: dict[str, dict[str, int]] = {}  # role -> {"prompt": n, "completion": n, "calls": n}
        try:
            import openai
        except ImportError:
            raise BackendError(
                "openai backend: the 'openai' package is not installed; pip install 'fhirqa[llm]'"
            ) from None
        self._openai = openai
        self._client = openai.OpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http_client,
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.settings!r})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        """One model turn over ``messages``, offering ``tools`` (specs from ``tools/*.json``)."""
        model = self.settings.model_for(role)
        request: dict[str, Any] = {"model": model, "messages": to_openai_messages(messages)}
        if self.settings.temperature is not None:
            request["temperature"] = self.settings.temperature
        if tools:
            request["tools"] = to_openai_tools(tools)
            request["tool_choice"] = "auto"
        started = time.monotonic()
        try:
            completion = self._client.chat.completions.create(**request)
        except self._openai.OpenAIError as exc:
            raise self._error(exc, model) from None
        turn = from_openai_completion(completion)
        self._account(role, turn)
        log.debug(
            "openai %s role=%s model=%s tool_calls=%d prompt_tokens=%d completion_tokens=%d %.0fms",
            self.settings.endpoint,
            role,
            model,
            len(turn.tool_calls),
            turn.prompt_tokens,
            turn.completion_tokens,
            (time.monotonic() - started) * 1000,
        )
        return turn

    def _account(self, role: str, turn: ModelTurn) -> None:
        totals = self.usage.setdefault(role, {"prompt": 0, "completion": 0, "calls": 0})
        totals["prompt"] += turn.prompt_tokens
        totals["completion"] += turn.completion_tokens
        totals["calls"] += 1

    def _error(self, exc: Exception, model: str) -> BackendError:
        """A :class:`BackendError` for an SDK exception: provider, endpoint, status; never the key."""
        openai = self._openai
        where = f"openai backend ({self.settings.endpoint}, model {model!r})"
        tries = f"after {_attempts(exc, self.settings.max_retries)} attempt(s)"
        if isinstance(exc, openai.APITimeoutError):
            return BackendError(f"{where}: request timed out ({self.settings.timeout:g}s) {tries}")
        if isinstance(exc, openai.APIConnectionError):
            hint = "; is the server running?" if self.settings.base_url else ""
            return BackendError(f"{where}: cannot connect {tries}{hint}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status in (401, 403):
                # The server's message may quote part of the key: not repeated here.
                return BackendError(
                    f"{where}: authentication failed (HTTP {status}); check {self.settings.key_source}"
                )
            detail = self.settings.scrub(_server_message(exc))
            if status == 429 or status >= 500 or status in (408, 409):
                kind = "rate limited" if status == 429 else "server error"
                return BackendError(f"{where}: {kind} (HTTP {status}) {tries}: {detail}")
            hint = ""
            if status == 404 and self.settings.base_url:
                hint = " (does the base URL end in /v1, and does the server serve this model?)"
            return BackendError(f"{where}: request refused (HTTP {status}){hint}: {detail}")
        return BackendError(f"{where}: {type(exc).__name__}: {self.settings.scrub(str(exc))}")


def to_openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool specs (``{"name", "description", "parameters"}``) as Chat Completions ``tools``."""
    out = []
    for spec in tools:
        function: dict[str, Any] = {"name": spec["name"], "description": spec.get("description", "")}
        function["parameters"] = spec.get("parameters") or {"type": "object", "properties": {}}
        out.append({"type": "function", "function": function})
    return out


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages in the Chat Completions format."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "user"):
            out.append({"role": message.role, "content": message.content})
        elif message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _arguments_text(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            elif entry["content"] is None:
                entry["content"] = ""
            out.append(entry)
        elif message.role == "tool":
            if not message.tool_call_id:
                raise ValueError("a tool message needs the tool_call_id of the call it answers")
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
        else:
            raise ValueError(f"unknown message role {message.role!r}")
    return out


def from_openai_completion(completion: Any) -> ModelTurn:
    """A :class:`ModelTurn` from a ``ChatCompletion`` (first choice; usage when reported)."""
    usage = getattr(completion, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    if not completion.choices:
        return ModelTurn(text=None, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    message = completion.choices[0].message
    calls = []
    for index, raw_call in enumerate(message.tool_calls or []):
        function = getattr(raw_call, "function", None)
        if function is None:  # a custom (non-function) tool call: not something fhirqa offers
            continue
        call_id = raw_call.id or f"call_{index}_{uuid.uuid4().hex[:8]}"
        calls.append(ToolCall(id=call_id, name=function.name, arguments=parse_arguments(function.arguments)))
    text = message.content
    if not text and getattr(message, "refusal", None):
        text = message.refusal
    return ModelTurn(
        text=text or None,
        tool_calls=calls,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Decode a tool call's JSON arguments; a bad text is kept under ``__raw__``, never raised."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {RAW_ARGUMENTS_KEY: raw, ARGUMENTS_ERROR_KEY: f"arguments are not valid JSON: {exc}"}
    if not isinstance(value, dict):
        return {RAW_ARGUMENTS_KEY: raw, ARGUMENTS_ERROR_KEY: "arguments must be a JSON object"}
    return value


def _arguments_text(arguments: dict[str, Any]) -> str:
    # A malformed call goes back to the model as the model wrote it.
    if RAW_ARGUMENTS_KEY in arguments and isinstance(arguments[RAW_ARGUMENTS_KEY], str):
        return arguments[RAW_ARGUMENTS_KEY]
    return json.dumps(arguments, ensure_ascii=False, default=str)


def _attempts(exc: Any, max_retries: int) -> int:
    """How many requests were sent: the SDK numbers its retries in ``x-stainless-retry-count``."""
    try:
        request = exc.request
        return int(request.headers["x-stainless-retry-count"]) + 1
    except (AttributeError, KeyError, RuntimeError, TypeError, ValueError):
        return max_retries + 1


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    text = str(message or getattr(exc, "message", "") or exc)
    return text if len(text) <= 300 else text[:300] + "…"
