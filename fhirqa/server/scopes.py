"""SMART on FHIR scopes, v1 (``patient/*.read``) and v2 (``patient/Observation.rs``), as one model.

A scope names a context (``patient``, ``user``, ``system``), a resource type or ``*``, and a set of
permissions from ``cruds`` (create, read, update, delete, search). v1's ``read`` means ``rs``,
``write`` means ``cud`` and ``*`` means all five. v2 granular scopes with a query
(``patient/Observation.rs?category=laboratory``) grant nothing here: the server could not enforce
the filter on every route (an answer may rest on any observation), so honouring them would widen
access instead of narrowing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SCOPE = re.compile(r"^(patient|user|system)/(\*|[A-Z][A-Za-z]{1,63})\.([a-z*]+)$")
_V1 = {"read": frozenset("rs"), "write": frozenset("cud"), "*": frozenset("cruds")}
_V2_ORDER = "cruds"
Contexts = frozenset[str]
ALL_CONTEXTS: Contexts = frozenset({"patient", "user", "system"})


@dataclass(frozen=True)
class Scope:
    """One resource scope: who it speaks for, which resource type, which permissions."""

    context: str
    resource: str  # a resource type, or "*"
    permissions: frozenset[str]

    def covers(self, other: Scope) -> bool:
        """True if this scope grants everything ``other`` asks for."""
        return (self.context == other.context and self.resource in ("*", other.resource)
                and other.permissions <= self.permissions)


def parse_scope(text: str) -> Scope | None:
    """The resource scope ``text`` stands for, or None (``openid``, ``launch``, granular, malformed)."""
    match = _SCOPE.match(text)
    if match is None:
        return None
    context, resource, perms = match.groups()
    if perms in _V1:
        return Scope(context, resource, _V1[perms])
    # v2: letters from "cruds", each at most once and in that order (as the specification requires).
    positions = [_V2_ORDER.find(c) for c in perms]
    if -1 in positions or positions != sorted(set(positions)):
        return None
    return Scope(context, resource, frozenset(perms))


@dataclass(frozen=True)
class ScopeSet:
    """The scopes of one access token."""

    raw: tuple[str, ...]
    scopes: tuple[Scope, ...]

    @classmethod
    def parse(cls, value: str | Iterable[str] | None) -> ScopeSet:
        """From the ``scope`` claim (space-separated) or an ``scp`` list."""
        items = value.split() if isinstance(value, str) else [str(v) for v in value or ()]
        parsed = tuple(s for s in (parse_scope(item) for item in items) if s is not None)
        return cls(tuple(items), parsed)

    def allows(self, resource: str, permissions: str, contexts: Contexts = ALL_CONTEXTS) -> bool:
        """True if one scope in ``contexts`` grants ``permissions`` (e.g. ``"rs"``) on ``resource``."""
        wanted = frozenset(permissions)
        return any(s.context in contexts and s.resource in ("*", resource) and wanted <= s.permissions
                   for s in self.scopes)

    def allows_all(self, resources: Iterable[str], permissions: str, contexts: Contexts = ALL_CONTEXTS) -> bool:
        """True if every resource type in ``resources`` is granted ``permissions``."""
        return all(self.allows(r, permissions, contexts) for r in resources)

    def contexts(self) -> set[str]:
        """The contexts any scope speaks for."""
        return {s.context for s in self.scopes}

    def __str__(self) -> str:
        return " ".join(self.raw)


def grant(requested: str | None, allowed: str) -> str:
    """The scopes a client gets: each requested scope some allowed scope covers (all allowed if none asked).

    Non-resource scopes (``openid``, ``launch``) are granted only when the registration lists them.
    """
    allowed_items = allowed.split()
    if not requested or not requested.strip():
        return " ".join(allowed_items)
    allowed_scopes = [s for s in (parse_scope(a) for a in allowed_items) if s is not None]
    granted = []
    for item in requested.split():
        scope = parse_scope(item)
        if item in allowed_items or (scope is not None and any(a.covers(scope) for a in allowed_scopes)):
            granted.append(item)
    return " ".join(dict.fromkeys(granted))
