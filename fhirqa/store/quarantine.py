"""Rejected input, kept whole with the reason, so nothing is ever dropped silently."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class Rejection:
    """One record fhirqa did not store: where it came from, why, and its content."""

    origin: str
    reason: str
    content: Any = None  # the resource (dict) or the raw text that could not be parsed

    def to_json(self) -> bytes:
        """One NDJSON line."""
        return orjson.dumps(
            {"origin": self.origin, "reason": self.reason, "content": self.content},
            default=str,
        )


def write_quarantine(db: Path, rejections: list[Rejection]) -> Path | None:
    """Append ``rejections`` to a new quarantine file in ``db`` and return its path (None if there are none)."""
    if not rejections:
        return None
    folder = db / "quarantine"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"rejected-{stamp}.ndjson"
    with path.open("wb") as handle:
        for rejection in rejections:
            handle.write(rejection.to_json() + b"\n")
    return path
