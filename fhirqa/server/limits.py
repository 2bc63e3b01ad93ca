"""Request size limits and per-client rate limits.

The size limit is checked twice: against ``Content-Length`` before any byte is read, and while the
body streams (a chunked upload has no length), so an oversized body is refused, never buffered.
Rate limits are token buckets per client: ``rate_limit_per_minute`` sustained, ``rate_limit_burst``
at once; an empty bucket answers 429 with ``Retry-After``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fhirqa.server.errors import BodyTooLarge, dumps, outcome

#: Buckets untouched this long are forgotten, so the table cannot grow without bound.
_IDLE_S = 600.0


class BodyLimitMiddleware:
    """Refuses request bodies over a limit that depends on the path (uploads get a larger one)."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit or declared < 0:
                    await _too_large(send, limit if declared >= 0 else None)
                    return
        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counting_receive, send)


async def _too_large(send: Send, limit: int | None) -> None:
    text = "the Content-Length header is not a number" if limit is None else \
        f"the request body is larger than the {limit:,} bytes allowed here"
    body = dumps(outcome(text, "too-costly" if limit is not None else "invalid"))
    await send({"type": "http.response.start", "status": 413 if limit is not None else 400,
                "headers": [(b"content-type", b"application/fhir+json"),
                            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """Token buckets keyed by client; thread-safe."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(max(burst, 1))
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key → (tokens, last update)
        self._lock = threading.Lock()
        self._last_sweep = clock()

    def check(self, key: str, cost: float = 1.0) -> float | None:
        """Take ``cost`` tokens from ``key``'s bucket; None if allowed, else seconds until it would be."""
        now = self.clock()
        with self._lock:
            if now - self._last_sweep > _IDLE_S:
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < _IDLE_S}
                self._last_sweep = now
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= cost:
                self._buckets[key] = (tokens - cost, now)
                return None
            self._buckets[key] = (tokens, now)
            return (cost - tokens) / self.rate if self.rate > 0 else 60.0

    @staticmethod
    def retry_after(seconds: float) -> str:
        """The ``Retry-After`` header value (whole seconds, at least 1)."""
        return str(max(1, math.ceil(seconds)))
