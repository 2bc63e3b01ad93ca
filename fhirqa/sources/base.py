"""The one protocol every source of FHIR resources implements.

A source yields :class:`RawRecord` items: either a resource (a parsed JSON object) or a problem
(text that could not become a resource), each with the :class:`Origin` that says where it came from.
Sources never raise for one bad record; they raise :class:`~fhirqa.errors.SourceError` only when the
whole source is unusable (a missing file, a server that refuses us).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a record came from: a file or URL, and a line (NDJSON) or entry index (Bundle)."""

    location: str
    line: int | None = None
    entry: int | None = None

    def __str__(self) -> str:
        where = self.location
        if self.line is not None:
            where += f":{self.line}"
        if self.entry is not None:
            where += f" entry[{self.entry}]"
        return where


@dataclass(slots=True)
class RawRecord:
    """One resource read from a source, or one piece of input that could not become a resource.

    Exactly one of ``resource`` and ``problem`` is set. ``deleted`` marks a deletion (a Bulk Data
    ``deleted`` entry or a transaction ``DELETE``): ``resource`` then holds only ``resourceType`` and ``id``.
    ``raw`` keeps the offending text of a problem so it can be quarantined without loss.
    """

    origin: Origin
    resource: dict[str, Any] | None = None
    problem: str | None = None
    raw: str | None = None
    deleted: bool = False
    warnings: list[str] = field(default_factory=list)


@runtime_checkable
class Source(Protocol):
    """Anything that yields FHIR resources: files, a FHIR REST server, a Bulk Data export."""

    #: A short human-readable description used in progress and summaries.
    description: str

    def records(self) -> Iterator[RawRecord]:
        """Yield every record of the source, streaming (never the whole input in memory)."""
        ...
