"""The ``gemini`` backend: the Gemini API through ``google-genai``, with native function calling.

Neutral messages become ``Content``/``Part`` objects (system messages the ``system_instruction``,
tool calls ``function_call`` parts, tool results ``function_response`` parts); tool specs' JSON
Schema is reduced to the OpenAPI subset Gemini accepts. Automatic function calling is off: fhirqa's
composer runs the tools. The SDK is imported when a backend is built, never at module import.

Retries are this module's loop, not the SDK's (whose backoff ignores the server's advice): 408, 429
and 5xx answers, timeouts and connection errors are retried ``max_retries`` times, waiting what the
server asks (``Retry-After`` header or ``google.rpc.RetryInfo.retryDelay``) or else an exponential
backoff from ``retry_initial_delay``.

Gemini attaches *thought signatures* to function calls and wants them back with the call in the
next request; the neutral :class:`ToolCall` has no room for them, so the backend keeps them by call
id for the conversations it serves.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from fhirqa.agent.backends.base import BackendError, Message, ModelTurn, ToolCall, register
from fhirqa.agent.backends.settings import BackendSettings, gemini_settings, parse_retry_after

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_SIGNATURES = 4096  # thought signatures kept (by call id) for the next requests
SYNTHETIC_ID_PREFIX = "fhirqa-call-"  # ids made up here when Gemini sends none; never sent back
_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
_LIMITS = {"minItems": "min_items", "maxItems": "max_items", "minimum": "minimum", "maximum": "maximum"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@register("gemini")
class GeminiBackend:
    """A Gemini model behind the Gemini API (``generativelanguage.googleapis.com``)."""

    name = "gemini"

    def __init__(
        self, *, http_client: Any = None, settings: BackendSettings | None = None, **config: Any
    ) -> None:
        """Configure from ``settings``, or from keyword arguments and the environment.

        ``config`` is what :func:`~fhirqa.agent.backends.settings.gemini_settings` takes (``model``,
        ``api_key``, ``base_url``, ``timeout``, ``max_retries``, ``temperature``, ``role_models``,
        ``env``). ``http_client`` is an ``httpx.Client`` (or ``httpx2.Client``) handed to the SDK
        through ``HttpOptions(httpx_client=...)``; tests pass one with a mock transport.
        """
        settings = settings or gemini_settings(**config)
        self.settings = settings
        self.model = settings.model
        self.usage: dict[str, dict[str, int]] = {}  # role -> {"prompt": n, "completion": n, "calls": n}
        self._signatures: dict[str, bytes] = {}  # tool call id -> thought signature
        self._sleep: Callable[[float], None] = time.sleep
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise BackendError(
                "gemini backend: the 'google-genai' package is not installed; pip install 'fhirqa[llm]'"
            ) from None
        self._types = types
        self._errors = errors
        options: dict[str, Any] = {"timeout": int(settings.timeout * 1000)}  # milliseconds
        if settings.base_url:
            options["base_url"] = settings.base_url
        if http_client is not None:
            options["httpx_client"] = http_client
        self._client = genai.Client(
            vertexai=False, api_key=settings.api_key, http_options=types.HttpOptions(**options)
        )

    def __repr__(self) -> str:
        return f"GeminiBackend({self.settings!r})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        """One model turn over ``messages``, offering ``tools`` (specs from ``tools/*.json``)."""
        types = self._types
        model = self.settings.model_for(role)
        system, contents = self._contents(messages)
        config: dict[str, Any] = {
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)
        }
        if system:
            config["system_instruction"] = system
        if self.settings.temperature is not None:
            config["temperature"] = self.settings.temperature
        if tools:
            declarations = [types.FunctionDeclaration(**to_gemini_declaration(spec)) for spec in tools]
            config["tools"] = [types.Tool(function_declarations=declarations)]
        started = time.monotonic()
        response = self._generate(model, contents, types.GenerateContentConfig(**config))
        turn = self._turn(response, model)
        totals = self.usage.setdefault(role, {"prompt": 0, "completion": 0, "calls": 0})
        totals["prompt"] += turn.prompt_tokens
        totals["completion"] += turn.completion_tokens
        totals["calls"] += 1
        log.debug(
            "gemini %s role=%s model=%s tool_calls=%d prompt_tokens=%d completion_tokens=%d %.0fms",
            self.settings.endpoint,
            role,
            model,
            len(turn.tool_calls),
            turn.prompt_tokens,
            turn.completion_tokens,
            (time.monotonic() - started) * 1000,
        )
        return turn

    # -- requests and retries -------------------------------------------------------------------

    def _generate(self, model: str, contents: list[Any], config: Any) -> Any:
        where = f"gemini backend ({self.settings.endpoint}, model {model!r})"
        retries = self.settings.max_retries
        transport_errors = _transport_errors()
        for attempt in range(retries + 1):
            try:
                return self._client.models.generate_content(model=model, contents=contents, config=config)
            except self._errors.APIError as exc:
                status = int(exc.code or 0)
                if _is_auth_failure(exc):
                    raise BackendError(
                        f"{where}: authentication failed (HTTP {status}); check {self.settings.key_source}"
                    ) from None
                detail = self.settings.scrub(str(exc.message or exc.status or ""))[:300]
                if status not in RETRYABLE_STATUS:
                    raise BackendError(f"{where}: request refused (HTTP {status}): {detail}") from None
                kind = "rate limited" if status == 429 else "server error"
                failure = f"{kind} (HTTP {status})"
                asked = _server_delay(exc)
            except transport_errors as exc:
                timed_out = "Timeout" in type(exc).__name__
                failure = f"request timed out ({self.settings.timeout:g}s)" if timed_out else "cannot connect"
                detail, asked = type(exc).__name__, None
            if attempt == retries:
                raise BackendError(f"{where}: {failure} after {attempt + 1} attempt(s): {detail}")
            if asked is not None and asked > self.settings.retry_max_delay:
                raise BackendError(f"{where}: {failure}; the server asks to wait {asked:g}s: {detail}")
            delay = asked if asked is not None else self.settings.backoff(attempt)
            log.info("gemini: %s, retrying in %.2fs (retry %d of %d)", failure, delay, attempt + 1, retries)
            self._sleep(delay)
        raise AssertionError("unreachable")

    # -- conversion -------------------------------------------------------------------------------

    def _contents(self, messages: list[Message]) -> tuple[str, list[Any]]:
        """The system instruction and the ``Content`` list for neutral ``messages``."""
        types = self._types
        system: list[str] = []
        contents: list[Any] = []
        call_names: dict[str, str] = {}
        for message in messages:
            if message.role == "system":
                if message.content:
                    system.append(message.content)
            elif message.role == "user":
                if message.content:
                    contents.append(types.Content(role="user", parts=[types.Part(text=message.content)]))
            elif message.role == "assistant":
                parts = [types.Part(text=message.content)] if message.content else []
                for call in message.tool_calls:
                    call_names[call.id] = call.name
                    parts.append(
                        types.Part(
                            function_call=types.FunctionCall(
                                id=_wire_id(call.id), name=call.name, args=dict(call.arguments)
                            ),
                            thought_signature=self._signatures.get(call.id),
                        )
                    )
                if parts:
                    contents.append(types.Content(role="model", parts=parts))
            elif message.role == "tool":
                name = message.name or call_names.get(message.tool_call_id or "")
                if not name:
                    raise ValueError("a tool message needs the tool's name or the id of an earlier call")
                part = types.Part(
                    function_response=types.FunctionResponse(
                        id=_wire_id(message.tool_call_id),
                        name=name,
                        response=_response_object(message.content),
                    )
                )
                previous = contents[-1] if contents else None
                if previous is not None and previous.role == "user" and _all_responses(previous):
                    previous.parts.append(part)  # parallel calls: one turn holds all their results
                else:
                    contents.append(types.Content(role="user", parts=[part]))
            else:
                raise ValueError(f"unknown message role {message.role!r}")
        return "\n\n".join(system), contents

    def _turn(self, response: Any, model: str) -> ModelTurn:
        """A :class:`ModelTurn` from a ``GenerateContentResponse``."""
        usage = response.usage_metadata
        prompt_tokens = int(getattr(usage, "prompt_token_count", 0) or 0)
        completion_tokens = int(getattr(usage, "candidates_token_count", 0) or 0)
        completion_tokens += int(getattr(usage, "thoughts_token_count", 0) or 0)
        if not response.candidates:
            feedback = response.prompt_feedback
            reason = getattr(getattr(feedback, "block_reason", None), "value", None) or "no candidates"
            raise BackendError(
                f"gemini backend (model {model!r}): no answer; the prompt was blocked ({reason})"
            )
        candidate = response.candidates[0]
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in (candidate.content.parts if candidate.content else None) or []:
            if part.function_call is not None:
                call_id = part.function_call.id or f"{SYNTHETIC_ID_PREFIX}{uuid.uuid4().hex[:12]}"
                if part.thought_signature:
                    self._signatures[call_id] = part.thought_signature
                    if len(self._signatures) > MAX_SIGNATURES:  # a long-lived backend: drop the oldest
                        del self._signatures[next(iter(self._signatures))]
                calls.append(
                    ToolCall(
                        id=call_id,
                        name=part.function_call.name or "",
                        arguments=dict(part.function_call.args or {}),
                    )
                )
            elif part.text and not part.thought:
                texts.append(part.text)
        if not texts and not calls:
            reason = getattr(candidate.finish_reason, "value", candidate.finish_reason)
            log.warning("gemini: empty answer from %s (finish reason %s)", model, reason)
        return ModelTurn(
            text="".join(texts) or None,
            tool_calls=calls,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )


def to_gemini_declaration(spec: dict[str, Any]) -> dict[str, Any]:
    """A tool spec as ``FunctionDeclaration`` fields (parameters omitted when there are none)."""
    declaration: dict[str, Any] = {"name": spec["name"], "description": spec.get("description", "")}
    parameters = spec.get("parameters") or {}
    if parameters.get("properties"):
        declaration["parameters"] = to_gemini_schema(parameters)
    return declaration


def to_gemini_schema(
    schema: dict[str, Any], defs: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """JSON Schema reduced to Gemini's OpenAPI subset, as ``Schema`` fields (snake_case).

    Local ``$ref``s are inlined; ``oneOf`` becomes ``any_of``; ``null`` in a type list becomes
    ``nullable``; ``enum``/``const`` on non-strings and unsupported formats move into the
    description; ``additionalProperties``, ``default``, ``examples``, ``pattern``, length limits
    and other keywords Gemini rejects are dropped (the tools validate their arguments anyway).
    """
    if depth > 32:
        raise ValueError("tool parameter schema nests too deeply (recursive $ref?)")
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        if target is None:
            raise ValueError(f"tool parameter schema: cannot resolve $ref {ref!r}")
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return to_gemini_schema(merged, defs, depth + 1)
    for part in schema.get("allOf", []):  # shallow merge is enough for the specs fhirqa writes
        schema = {
            **part,
            **schema,
            "properties": {**part.get("properties", {}), **schema.get("properties", {})},
        }
        schema["required"] = [*part.get("required", []), *schema.get("required", [])]
    out: dict[str, Any] = {}
    notes: list[str] = []
    types_ = schema.get("type")
    type_list = types_ if isinstance(types_, list) else [types_] if types_ else []
    if "null" in type_list:
        out["nullable"] = True
    type_list = [t for t in type_list if t in _TYPES]
    alternatives = [s for s in schema.get("anyOf", schema.get("oneOf", [])) if isinstance(s, dict)]
    if any(s.get("type") == "null" for s in alternatives):
        out["nullable"] = True
        alternatives = [s for s in alternatives if s.get("type") != "null"]
    if len(type_list) > 1:
        alternatives = [{"type": t, **_typed_keywords(schema)} for t in type_list]
        type_list = []
    kind = type_list[0] if type_list else None
    if kind is None and not alternatives:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
        if kind is None and ("enum" in schema or "const" in schema):
            kind = "string"
    if alternatives:
        converted = [to_gemini_schema(s, defs, depth + 1) for s in alternatives]
        if len(converted) == 1:
            out.update(converted[0])
        else:
            out["any_of"] = converted
    elif kind is None:  # any value
        out["any_of"] = [{"type": "STRING"}, {"type": "NUMBER"}, {"type": "BOOLEAN"}]
    else:
        out["type"] = kind.upper()
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None:
        if kind == "string":
            out["enum"] = [str(v) for v in values]
        else:
            notes.append("One of: " + ", ".join(json.dumps(v) for v in values) + ".")
    fmt = schema.get("format")
    if fmt and kind:
        if fmt in _FORMATS.get(kind, ()):
            out["format"] = fmt
        else:
            notes.append(f"Format: {fmt}.")
    if kind == "object" and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        out["properties"] = {name: to_gemini_schema(sub, defs, depth + 1) for name, sub in properties.items()}
        required = [name for name in schema.get("required", []) if name in properties]
        if required:
            out["required"] = list(dict.fromkeys(required))
    if kind == "array":
        items = schema.get("items")
        out["items"] = to_gemini_schema(items if isinstance(items, dict) else {}, defs, depth + 1)
    for source, target in _LIMITS.items():
        if isinstance(schema.get(source), int | float) and kind in ("array", "number", "integer"):
            out[target] = schema[source]
    description = " ".join([schema["description"], *notes] if schema.get("description") else notes)
    if description:
        out["description"] = description
    return out


def _typed_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ("type", "description", "anyOf", "oneOf")}


def _wire_id(call_id: str | None) -> str | None:
    return None if not call_id or call_id.startswith(SYNTHETIC_ID_PREFIX) else call_id


def _response_object(content: str) -> dict[str, Any]:
    """A tool result as the object Gemini wants (JSON objects as they are, anything else as output)."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return {"output": content}
    return value if isinstance(value, dict) else {"output": value}


def _all_responses(content: Any) -> bool:
    return bool(content.parts) and all(part.function_response is not None for part in content.parts)


def _is_auth_failure(exc: Any) -> bool:
    """401/403, or the 400 the Gemini API answers for an invalid key (reason API_KEY_INVALID)."""
    if exc.code in (401, 403):
        return True
    return exc.code == 400 and ("API_KEY_INVALID" in json.dumps(exc.details, default=str))


def _server_delay(exc: Any) -> float | None:
    """Seconds the server asks to wait: ``Retry-After`` header, else ``RetryInfo.retryDelay``."""
    headers: Any = getattr(getattr(exc, "response", None), "headers", None)
    asked = parse_retry_after(headers.get("retry-after") if headers is not None else None)
    if asked is not None:
        return asked
    details = exc.details.get("error", exc.details) if isinstance(exc.details, dict) else {}
    for detail in details.get("details", []) if isinstance(details, dict) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Timeout and connection errors of httpx and (when installed) httpx2."""
    errors: list[type[BaseException]] = []
    for module_name in ("httpx", "httpx2"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        errors.append(module.TransportError)
    return tuple(errors)
