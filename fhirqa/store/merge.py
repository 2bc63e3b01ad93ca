"""Decide which version of each resource survives an ingest.

Rules, in one place: a staged record replaces what is stored unless it is provably older
(both carry numeric ``meta.versionId`` and its version is lower, or both carry ``meta.lastUpdated``
and its instant is earlier); a deletion removes the resource; among records of one ingest the later
one wins by the same rule; and identical content changes nothing, so ingesting the same input twice
leaves the store untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

#: seq of the copy already in the store.
STORED = -1


@dataclass(frozen=True, slots=True)
class Candidate:
    """One copy of a resource: the stored one (seq -1) or a staged one."""

    seq: int
    version_id: str | None
    last_updated: str | None
    hash: str | None
    deleted: bool


@dataclass(frozen=True, slots=True)
class Outcome:
    """``keep`` the stored copy, ``replace`` it with staged ``seq``, or ``delete`` it."""

    action: str
    seq: int | None = None


KEEP = Outcome("keep")
DELETE = Outcome("delete")


def _instant(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def is_older(new: Candidate, current: Candidate) -> bool:
    """True when ``new`` is provably an older version than ``current``."""
    if new.version_id and current.version_id and new.version_id.isdigit() and current.version_id.isdigit():
        return int(new.version_id) < int(current.version_id)
    if new.last_updated and current.last_updated:
        a, b = _instant(new.last_updated), _instant(current.last_updated)
        if a is not None and b is not None:
            try:
                return a < b
            except TypeError:  # one naive, one aware: not comparable, so not provably older
                return False
    return False


def decide(stored: Candidate | None, staged: list[Candidate]) -> Outcome:
    """Outcome for one resource key, given its stored copy (if any) and its staged copies in arrival order."""
    current = stored
    for candidate in staged:
        if current is not None and is_older(candidate, current):
            continue
        current = candidate
    if current is None or current is stored:
        return KEEP
    if current.deleted:
        return DELETE if stored is not None else KEEP
    if stored is not None and current.hash == stored.hash:
        return KEEP
    return Outcome("replace", current.seq)
