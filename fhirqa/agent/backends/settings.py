"""Configuration of the LLM backends, from explicit arguments first and the environment second.

One :class:`BackendSettings` per backend instance holds the provider, model, API key, base URL,
timeout, retry budget and temperature. The key is kept out of every ``repr``, ``str`` and message:
:meth:`BackendSettings.__repr__` masks it, and :func:`redact_url` strips credentials from URLs
before they appear in errors or logs.

Environment variables (arguments override them):

=============================  ====================================================================
``OPENAI_API_KEY``             key for the ``openai`` backend
``FHIRQA_OPENAI_BASE_URL``     OpenAI-compatible server (vLLM, Ollama, llama.cpp); wins over
``OPENAI_BASE_URL``            the SDK's own variable
``FHIRQA_OPENAI_MODEL``        model name for the ``openai`` backend
``GEMINI_API_KEY``             key for the ``gemini`` backend (``GOOGLE_API_KEY`` is read when unset)
``FHIRQA_GEMINI_BASE_URL``     Gemini API endpoint override (a proxy or gateway)
``FHIRQA_GEMINI_MODEL``        model name for the ``gemini`` backend
``FHIRQA_LLM_TIMEOUT``         seconds per HTTP request (default 60)
``FHIRQA_LLM_MAX_RETRIES``     retries on 408/429/5xx/timeouts/connection errors (default 2)
``FHIRQA_LLM_TEMPERATURE``     sampling temperature (default 0; ``none`` sends no temperature)
=============================  ====================================================================
"""

from __future__ import annotations

import email.utils
import math
import os
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fhirqa.agent.backends.base import BackendError

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_TEMPERATURE: float | None = 0.0
# Sent as the key to an OpenAI-compatible server that needs none (the SDK insists on some key).
DUMMY_KEY = "not-needed"

_SECRET_PARAM = re.compile(r"key|token|secret|password|sig", re.IGNORECASE)
UNSET: Any = object()  # "not given": read the environment


@dataclass(frozen=True, repr=False)
class BackendSettings:
    """Everything a backend needs to reach its provider; ``repr`` never shows the key."""

    provider: str  # "openai" or "gemini"
    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None  # None: the provider's public endpoint
    timeout: float = DEFAULT_TIMEOUT  # seconds per HTTP request
    max_retries: int = DEFAULT_MAX_RETRIES  # retries after the first attempt
    temperature: float | None = DEFAULT_TEMPERATURE  # None: let the model use its default
    role_models: Mapping[str, str] = field(default_factory=dict)  # per-role model overrides
    retry_initial_delay: float = 1.0  # backoff base (gemini loop) when the server names no delay
    retry_max_delay: float = 60.0  # longest wait honoured; a longer Retry-After fails at once

    def model_for(self, role: str) -> str:
        """The model to use for an agent ``role`` (planner, specialist, composer)."""
        return self.role_models.get(role, self.model)

    @property
    def key_source(self) -> str:
        """Where the key is configured, for messages: never the key itself."""
        if self.provider == "openai":
            return "OPENAI_API_KEY"
        return "GEMINI_API_KEY (or GOOGLE_API_KEY)"

    @property
    def endpoint(self) -> str:
        """The base URL for messages, with any credentials removed."""
        if self.base_url:
            return redact_url(self.base_url)
        return (
            "https://api.openai.com/v1"
            if self.provider == "openai"
            else "https://generativelanguage.googleapis.com"
        )

    def __repr__(self) -> str:
        key = "None" if not self.api_key else "'***'"
        return (
            f"BackendSettings(provider={self.provider!r}, model={self.model!r}, api_key={key}, "
            f"base_url={self.endpoint if self.base_url else None!r}, timeout={self.timeout!r}, "
            f"max_retries={self.max_retries!r}, temperature={self.temperature!r}, "
            f"role_models={dict(self.role_models)!r})"
        )

    __str__ = __repr__

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry ``attempt + 1`` when the server names no delay (jittered)."""
        base = min(self.retry_initial_delay * 2**attempt, self.retry_max_delay)
        return base * (1 - 0.25 * random.random())  # noqa: S311 - jitter, not cryptography

    def scrub(self, text: str) -> str:
        """``text`` with the key replaced by ``***`` (for server messages quoted in errors)."""
        if self.api_key and self.api_key != DUMMY_KEY:
            text = text.replace(self.api_key, "***")
        return text


def redact_url(url: str) -> str:
    """``url`` without user:password and with credential-like query values replaced by ``***``."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe="/:,*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date); None when absent or bad."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


def openai_settings(
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    temperature: object = UNSET,
    role_models: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> BackendSettings:
    """Settings of the ``openai`` backend (OpenAI or any OpenAI-compatible server).

    A base URL without a key is allowed (local servers rarely check keys; a dummy key is sent).
    Neither raises :class:`BackendError` saying what to set.
    """
    env = os.environ if env is None else env
    base_url = base_url or _env(env, "FHIRQA_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    api_key = api_key or _env(env, "OPENAI_API_KEY")
    if not api_key and not base_url:
        raise BackendError(
            "openai backend: no API key or server configured; set OPENAI_API_KEY, or pass "
            "--base-url URL (or set FHIRQA_OPENAI_BASE_URL) for an OpenAI-compatible server "
            "such as vLLM, Ollama or llama.cpp"
        )
    model = model or _env(env, "FHIRQA_OPENAI_MODEL")
    if not model:
        if base_url:
            raise BackendError(
                f"openai backend: no model named for the server at {redact_url(base_url)}; pass --model "
                "(the name the server serves, e.g. 'qwen2.5:7b-instruct' for Ollama) or set FHIRQA_OPENAI_MODEL"
            )
        model = DEFAULT_OPENAI_MODEL
    return BackendSettings(
        provider="openai",
        model=model,
        api_key=api_key or DUMMY_KEY,
        base_url=base_url,
        **_common(env, timeout, max_retries, temperature, role_models),
    )


def gemini_settings(
    *,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    temperature: object = UNSET,
    role_models: Mapping[str, str] | None = None,
    retry_initial_delay: float = 1.0,
    retry_max_delay: float = 60.0,
    env: Mapping[str, str] | None = None,
) -> BackendSettings:
    """Settings of the ``gemini`` backend (the Gemini API with an API key).

    ``retry_initial_delay`` is the first backoff when the server names no delay (doubling each
    retry); a server asking for more than ``retry_max_delay`` seconds fails at once.
    """
    env = os.environ if env is None else env
    api_key = api_key or _env(env, "GEMINI_API_KEY", "GOOGLE_API_KEY")
    if not api_key:
        raise BackendError(
            "gemini backend: no API key configured; set GEMINI_API_KEY (or GOOGLE_API_KEY), "
            "or use --backend openai --base-url URL for a local OpenAI-compatible server"
        )
    return BackendSettings(
        provider="gemini",
        model=model or _env(env, "FHIRQA_GEMINI_MODEL") or DEFAULT_GEMINI_MODEL,
        api_key=api_key,
        base_url=base_url or _env(env, "FHIRQA_GEMINI_BASE_URL"),
        retry_initial_delay=retry_initial_delay,
        retry_max_delay=retry_max_delay,
        **_common(env, timeout, max_retries, temperature, role_models),
    )


class _Common(TypedDict):
    timeout: float
    max_retries: int
    temperature: float | None
    role_models: dict[str, str]


def _common(
    env: Mapping[str, str],
    timeout: float | None,
    max_retries: int | None,
    temperature: object,
    role_models: Mapping[str, str] | None,
) -> _Common:
    if timeout is None:
        timeout = _number(env, "FHIRQA_LLM_TIMEOUT", DEFAULT_TIMEOUT)
    if not (isinstance(timeout, int | float) and timeout > 0 and math.isfinite(timeout)):
        raise BackendError(f"LLM timeout must be a positive number of seconds, not {timeout!r}")
    if max_retries is None:
        max_retries = int(_number(env, "FHIRQA_LLM_MAX_RETRIES", DEFAULT_MAX_RETRIES))
    if not isinstance(max_retries, int) or max_retries < 0:
        raise BackendError(f"LLM max retries must be a whole number >= 0, not {max_retries!r}")
    if temperature is UNSET:
        raw = _env(env, "FHIRQA_LLM_TEMPERATURE")
        if raw is None:
            temperature = DEFAULT_TEMPERATURE
        elif raw.strip().lower() in ("none", "default"):
            temperature = None
        else:
            temperature = _number(env, "FHIRQA_LLM_TEMPERATURE", 0.0)
    if temperature is not None and not isinstance(temperature, int | float):
        raise BackendError(f"LLM temperature must be a number or None, not {temperature!r}")
    return _Common(
        timeout=float(timeout),
        max_retries=max_retries,
        temperature=None if temperature is None else float(temperature),
        role_models=dict(role_models or {}),
    )


def _env(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = _env(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BackendError(f"{name}={raw!r} is not a number") from None
    if name.endswith("RETRIES") and not value.is_integer():
        raise BackendError(f"{name}={raw!r} is not a whole number")
    return value
