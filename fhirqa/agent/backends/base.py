"""The one interface every model backend implements (offline, gemini, openai and compatible servers).

Messages use one neutral, OpenAI-like shape; each backend converts to its provider's format inside
its own module, so the composer's loop is identical for every backend. Adding a provider is one
new module that registers itself in :data:`BACKENDS`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fhirqa.errors import FhirqaError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    """A model's request to run one tool."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Message:
    """One message of a conversation in the neutral format."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)  # assistant messages
    tool_call_id: str | None = None  # tool messages: which call this answers
    name: str | None = None  # tool messages: the tool's name


@dataclass
class ModelTurn:
    """What a backend returned for one request: text and/or tool calls, and the tokens it cost."""

    text: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class BackendError(FhirqaError):
    """A backend cannot serve requests (no key, server unreachable, refused after retries)."""


class Backend(Protocol):
    """A model that answers a conversation, optionally calling tools."""

    name: str

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        """One model turn. ``tools`` are specs from ``tools/*.json``; ``role`` names the agent role
        (``planner``, ``specialist``, ``composer``) for accounting and per-role settings."""
        ...


BackendFactory = Callable[..., Backend]
BACKENDS: dict[str, BackendFactory] = {}


def register(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Class decorator: make a backend available by ``name``."""

    def decorate(factory: BackendFactory) -> BackendFactory:
        BACKENDS[name] = factory
        return factory

    return decorate


def get_backend(name: str, **config: Any) -> Backend:
    """The backend called ``name``; an unknown name gets the closest known one suggested."""
    _load_builtin()
    try:
        factory = BACKENDS[name]
    except KeyError:
        close = difflib.get_close_matches(name, BACKENDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise FhirqaError(f"unknown backend {name!r}{hint}; available: {', '.join(sorted(BACKENDS))}") from None
    return factory(**config)


def _load_builtin() -> None:
    # Imported on first use so that `fhirqa ask` with the offline backend never imports an SDK.
    import importlib

    for module in ("offline", "openai_backend", "gemini_backend"):
        try:
            importlib.import_module(f"fhirqa.agent.backends.{module}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("fhirqa."):
                continue
            raise
