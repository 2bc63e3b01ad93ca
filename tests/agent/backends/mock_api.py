"""A scripted HTTP server for the backend tests: real SDK clients, an ``httpx.MockTransport`` underneath.

Each queued reply is a recorded payload (``payloads/<name>.json``: status, headers, body in the
provider's real response format) or an exception to raise (a timeout, a refused connection). Every
request the SDK sends is kept, decoded, for assertions.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

PAYLOADS = Path(__file__).parent / "payloads"


def payload(name: str) -> dict[str, Any]:
    """A recorded payload by file stem."""
    return json.loads((PAYLOADS / f"{name}.json").read_text("utf-8"))


@dataclass
class Sent:
    """One request the SDK sent."""

    method: str
    url: httpx.URL
    headers: httpx.Headers
    body: Any  # decoded JSON


@dataclass
class MockAPI:
    """Serves queued replies in order and records what was sent."""

    replies: deque[str | BaseException] = field(default_factory=deque)
    sent: list[Sent] = field(default_factory=list)

    def queue(self, *replies: str | BaseException) -> MockAPI:
        """Queue payload names (or exceptions to raise) to answer the next requests with."""
        self.replies.extend(replies)
        return self

    def client(self) -> httpx.Client:
        """An ``httpx.Client`` whose transport is this mock (what the backends receive)."""
        return httpx.Client(transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.sent.append(Sent(request.method, request.url, request.headers, body))
        if not self.replies:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        recorded = payload(reply)
        text = json.dumps(recorded["body"])
        if "${API_KEY}" in text:  # a server quoting the key it was sent back (worst case)
            key = request.headers.get("x-goog-api-key") or request.headers["authorization"].removeprefix(
                "Bearer "
            )
            text = text.replace("${API_KEY}", key)
        return httpx.Response(recorded["status"], headers=recorded["headers"], content=text.encode())
