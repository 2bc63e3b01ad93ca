"""Fused navigation chains: the hot path of every compiled FHIRPath expression.

A *chain* is a run of steps that only navigate: member access, ``first()``/``last()``,
constant indexers, ``ofType()`` and ``getReferenceKey()``. The compiler turns such runs
into a tuple of ``(kind, a, b)`` steps executed by :func:`walk` (any input) or by the
closure from :func:`fast_chain` (the usual one-item case). Items are the JSON values
themselves, so navigation is dict lookups; ``value.ofType(Quantity)`` is a lookup of
``valueQuantity``, which is how FHIR JSON spells choice types.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .values import CHOICE_SUFFIXES, matches_type, reference_key

_compiled: ModuleType | None
try:
    import fhirqa.viewdef._chain as _compiled
except ImportError:  # no compiler at install time: the Python closure below does the work
    _compiled = None
#: The C chains (``_chain.c``), or None: the Python closure runs (also with ``FHIRQA_PURE_PYTHON=1``).
NATIVE: ModuleType | None = None if os.environ.get("FHIRQA_PURE_PYTHON") else _compiled

Expr = Callable[[list, "Env"], list]
Inv = Callable[[list, list, "Env"], list]


class Env:
    """Mutable evaluation state shared by all closures of one view evaluation."""

    __slots__ = ("index", "resource", "row_index")

    def __init__(self, resource: list | None = None, row_index: int = 0) -> None:
        self.resource: list = resource if resource is not None else []
        self.row_index = row_index
        self.index: int | None = None


# Well-known choice element names. Only these fall back to scanning for ``base`` + FHIR type
# when the plain key is absent, so a missing optional element costs one dict lookup.
CHOICE_BASES = frozenset(
    """value effective onset abatement deceased multipleBirth occurrence performed timing medication
    serviced location asNeeded dose rate reported item product subject born age died answer initial
    defaultValue fixed pattern minValue maxValue allowed used bounds collected time scheduled
    probability when started outcome content identified event created diagnosis procedure detail
    offset definition topic due""".split()
)

# Chain step kinds (small ints compare fastest; _chain.c numbers them the same way).
# FIRST and LAST must stay right after MEMBER: walk() tests `kind <= LAST`.
# WHERE_EQ is ``where(member = 'text' or …)`` (a = the (member, literal) pairs) and EXT ``extension('url')``: fused into chains because the
# canonical maps use them on most resources (``code.coding.where(system = …).first().code``, US Core
# extensions) and, as separate functions, they cost three Python frames per cell.
# WHERE_CHAIN is ``where(<chain>.exists())`` or ``where(<chain>.empty())`` (a = the chain's steps, b = True for
# exists): ``presentedForm.where(data.exists())``, ``category.where(coding.where(code = …).empty())``.
MEMBER, FIRST, LAST, CHOICE, REFKEY, INDEX, TYPE, OFTYPE, WHERE_EQ, EXT, WHERE_CHAIN = range(11)



def _scan_choice(d: dict, base: str) -> Any:
    n = len(base)
    for k, v in d.items():
        if len(k) > n and k.startswith(base) and k[n:] in CHOICE_SUFFIXES:
            return v
    return None


def _member_all(coll: list, key: str, scan: bool) -> list:
    out: list = []
    for item in coll:
        if type(item) is dict:
            v = item.get(key)
            if v is None and scan:
                v = _scan_choice(item, key)
            if v is None:
                continue
            if type(v) is list:
                out.extend(v)
            else:
                out.append(v)
    if None in out:  # primitive arrays with extensions may hold JSON nulls
        out = [x for x in out if x is not None]
    return out


def _choice_all(coll: list, key: str, base: str, type_name: str) -> list:
    out: list = []
    for item in coll:
        if type(item) is dict:
            v = item.get(key)
            if v is None:
                v = item.get(base)
                if v is None:
                    continue
                v = [x for x in (v if type(v) is list else [v]) if matches_type(x, type_name)]
            if type(v) is list:
                out.extend(x for x in v if x is not None)
            else:
                out.append(v)
    return out


def where_equals(coll: list, pairs: tuple) -> list:
    """``where(key = literal or …)`` over ``coll``, ``pairs`` being the (key, literal) tests: the items the
    generic criterion keeps. A list-valued element only matches as a singleton, a missing element makes a
    test empty (not kept), and a boolean literal only equals the same JSON boolean (FHIRPath ``=``: ``1`` is not
    ``true``)."""
    out = []
    for x in coll:
        if type(x) is dict:
            for key, want in pairs:
                v = x.get(key)
                if type(want) is bool:
                    hit = v is want or (type(v) is list and len(v) == 1 and v[0] is want)
                else:
                    hit = v == want or (type(v) is list and len(v) == 1 and v[0] == want)
                if hit:
                    out.append(x)
                    break
    return out


def extensions(coll: list, url: Any) -> list:
    """``extension(url)`` over ``coll``: the extensions of its items that carry ``url``."""
    out = []
    for item in coll:
        if type(item) is dict:
            for ext in item.get("extension") or ():
                if type(ext) is dict and ext.get("url") == url:
                    out.append(ext)
    return out


def walk(inp: list, env: Env | None, steps: tuple) -> list:
    """Run a fused chain of navigation steps over ``inp``.

    While exactly one item is in flight the walk works on that item directly (``cur``)
    instead of building lists; it switches to list mode (``coll``) only when an element
    repeats, and back when a step leaves a single item. Branches are ordered by how
    often they occur in real views (member access first).
    """
    coll: list | None
    if len(inp) == 1:
        cur, coll = inp[0], None
    else:
        cur, coll = None, inp
    for kind, a, b in steps:
        if coll is None:
            if kind == MEMBER:
                if type(cur) is not dict:
                    return []
                v = cur.get(a)
                if v is None and (not b or (v := _scan_choice(cur, a)) is None):
                    return []
                if type(v) is list:
                    n = len(v)
                    if n == 1:
                        cur = v[0]
                        if cur is None:
                            return []
                    elif n == 0:
                        return []
                    else:
                        coll = v if None not in v else [x for x in v if x is not None]
                else:
                    cur = v
            elif kind <= LAST:
                continue  # first()/last() of a single item is that item
            elif kind == CHOICE:
                if type(cur) is not dict:
                    return []
                v = cur.get(a)
                if v is None:
                    if b[0] not in cur:
                        return []
                    coll = _choice_all([cur], a, b[0], b[1])
                    if len(coll) <= 1:
                        if not coll:
                            return []
                        cur, coll = coll[0], None
                elif type(v) is list:
                    coll = [x for x in v if x is not None]
                    if len(coll) <= 1:
                        if not coll:
                            return []
                        cur, coll = coll[0], None
                else:
                    cur = v
            elif kind == REFKEY:
                cur = reference_key(cur, a)
                if cur is None:
                    return []
            elif kind == INDEX:
                if a != 0:
                    return []
            elif kind == TYPE:
                if type(cur) is not dict or cur.get("resourceType") != a:
                    return []
            elif kind == WHERE_EQ:
                if not where_equals([cur], a):
                    return []
            elif kind == WHERE_CHAIN:
                if bool(walk([cur], env, a)) is not b:
                    return []
            elif kind == EXT:
                coll = extensions([cur], a)
                if len(coll) <= 1:
                    if not coll:
                        return []
                    cur, coll = coll[0], None
            elif not matches_type(cur, a):  # OFTYPE
                return []
        else:
            if kind == MEMBER:
                coll = _member_all(coll, a, b)
            elif kind == FIRST:
                coll = coll[:1]
            elif kind == LAST:
                coll = coll[-1:]
            elif kind == CHOICE:
                coll = _choice_all(coll, a, b[0], b[1])
            elif kind == REFKEY:
                coll = [k for k in (reference_key(x, a) for x in coll) if k is not None]
            elif kind == INDEX:
                coll = coll[a : a + 1] if a >= 0 else []
            elif kind == TYPE:
                coll = [x for x in coll if type(x) is dict and x.get("resourceType") == a]
            elif kind == WHERE_EQ:
                coll = where_equals(coll, a)
            elif kind == EXT:
                coll = extensions(coll, a)
            elif kind == WHERE_CHAIN:
                coll = [x for x in coll if bool(walk([x], env, a)) is b]
            else:
                coll = [x for x in coll if matches_type(x, a)]
            if len(coll) <= 1:
                if not coll:
                    return []
                cur, coll = coll[0], None
    return [cur] if coll is None else coll


def fast_chain(steps: tuple) -> Expr | None:
    """A quicker equivalent of ``partial(walk, steps=steps)`` for the usual chain shape.

    Most column paths are member names with ``first()``/``[0]``/``ofType()`` in between,
    optionally ending in ``getReferenceKey()``, and most FHIR elements hold one item. While
    the walk stays on one item, ``first()`` and ``[0]`` are no-ops, so only the member
    lookups need to run; anything else (a repeating element, a missing choice element)
    hands the remaining steps to :func:`walk`. Returns None for other shapes.

    With the optional C extension every non-empty chain runs as a ``_chain.Chain``: a C twin of :func:`walk`
    itself (tested equal), so ``where(member = 'text')`` and ``extension(url)`` steps stay in C too.
    """
    if NATIVE is not None and steps:
        # The C walk takes every step kind (handing rare ones back to walk()), so it serves every chain.
        return NATIVE.Chain(steps, walk, reference_key, CHOICE_SUFFIXES)
    members: list[tuple[str, bool, tuple, int]] = []
    refkey: tuple[str | None] | None = None
    for i, (kind, a, b) in enumerate(steps):
        if kind == MEMBER or kind == CHOICE:
            # A fallback (choice scan, or the base element of ofType) is left to walk().
            members.append((a, kind == CHOICE or bool(b), steps[i + 1 :], i))
        elif kind == FIRST or kind == LAST or (kind == INDEX and a == 0):
            continue
        elif kind == REFKEY and i == len(steps) - 1:
            refkey = (a,)
        else:
            return None
    if not members:
        return None
    members_t = tuple(members)

    def chain(inp: list, env: Env) -> list:
        if len(inp) != 1:
            return walk(inp, env, steps)
        cur = inp[0]
        for key, fallback, rest, i in members_t:
            if type(cur) is not dict:
                return []
            v = cur.get(key)
            if v is None:
                return walk([cur], env, steps[i:]) if fallback else []
            if type(v) is list:
                if len(v) != 1 or v[0] is None:
                    if None in v:
                        v = [x for x in v if x is not None]
                    return walk(v, env, rest) if v else []
                cur = v[0]
            else:
                cur = v
        if refkey is not None:
            cur = reference_key(cur, refkey[0])
            if cur is None:
                return []
        return [cur]

    return chain


def type_hint(steps: list[tuple]) -> str | None:
    """Static FHIR type of a chain's result when its last step names it (for boundary functions)."""
    if not steps:
        return None
    kind, a, b = steps[-1]
    if kind == CHOICE:
        return str(b[1])
    if kind == OFTYPE:
        return str(a)
    if kind == MEMBER:
        for suffix, hint in (("DateTime", "dateTime"), ("Instant", "instant"), ("Date", "date"), ("Time", "time")):
            if a.endswith(suffix):
                return hint
    return None
