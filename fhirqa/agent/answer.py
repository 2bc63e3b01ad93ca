"""The answer object: the same structure from the CLI (``--json``), the Python API and the server."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from datetime import date, datetime
from typing import Any, Literal

Status = Literal["answered", "no-data", "ambiguous", "refused", "error"]


@dataclass
class Evidence:
    """One value an answer rests on, traceable to the record."""

    ref: str  # "Observation/123", or "note:DocumentReference/9#chunk-2" for note text
    field: str  # canonical field, e.g. "observation.value"
    value: Any
    time: str | None = None  # ISO 8601
    label: str | None = None  # item name as the record spells it ("Hemoglobin A1c/Hemoglobin.total in Blood")
    unit: str | None = None
    path: str | None = None  # FHIR path the value came from, when known


@dataclass
class Answer:
    """A structured answer; ``answer`` values are JSON-native (numbers, ISO dates, booleans, strings)."""

    answer: list[Any]
    text: str
    status: Status = "answered"
    unit: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)
    backend: str = "offline"
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    latency_ms: float = 0.0
    candidates: list[str] = field(default_factory=list)  # with status "ambiguous": the items it could mean

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (dates as ISO strings)."""
        return _jsonable(self)


def _jsonable(value: Any) -> Any:
    # One pass that builds new containers (dataclasses.asdict deep-copies every leaf first; on the
    # server this conversion ran for every answer).
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return value
    return value
