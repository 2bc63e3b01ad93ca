"""Compile the FHIRPath subset used by ViewDefinitions into plain Python closures.

An expression compiles once to an ``Expr``: ``expr(focus, env) -> list``, where ``focus`` is
the input collection (a list of JSON values) and ``env`` an :class:`Env` carrying the
per-row state (``%resource``, ``%rowIndex``, ``$index``). FHIRPath collections are Python
lists; items are the JSON values themselves, never wrapped, so the common case (navigating
a few member names) costs a handful of dict lookups.

Runs of member navigation, ``first()``, ``last()``, constant indexers and ``ofType()``
are fused into one *chain* walked by :func:`walk`. ``value.ofType(Quantity)`` becomes a
direct lookup of ``valueQuantity``, which is how FHIR JSON spells choice types.

Example::

    >>> fn = compile_fhirpath("name.where(use = 'official').family.first()")
    >>> fn.evaluate({"name": [{"use": "official", "family": "Smith"}]})
    ['Smith']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from . import functions_text, operators  # noqa: F401 -- functions_text registers functions on import
from .errors import FHIRPathError
from .functions import compile_call
from .parser import Binary, Call, ExtConst, Indexer, Invoke, Literal, Member, TypeOp, Unary, Var, parse
from .values import CHOICE_SUFFIXES, choice_key, matches_type, normalize_type_name, reference_key

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

# Chain step kinds (small ints compare fastest).
# FIRST and LAST must stay right after MEMBER: walk() tests `kind <= LAST`.
MEMBER, FIRST, LAST, CHOICE, REFKEY, INDEX, TYPE, OFTYPE = range(8)
_TRUE = [True]
_FALSE = [False]

_SPECIAL_CONSTANTS = {
    "ucum": "http://unitsofmeasure.org",
    "sct": "http://snomed.info/sct",
    "loinc": "http://loinc.org",
}


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
            else:
                coll = [x for x in coll if matches_type(x, a)]
            if len(coll) <= 1:
                if not coll:
                    return []
                cur, coll = coll[0], None
    return [cur] if coll is None else coll


def _fast_chain(steps: tuple) -> Expr | None:
    """A quicker equivalent of ``partial(walk, steps=steps)`` for the usual chain shape.

    Most column paths are member names with ``first()``/``[0]``/``ofType()`` in between,
    optionally ending in ``getReferenceKey()``, and most FHIR elements hold one item. While
    the walk stays on one item, ``first()`` and ``[0]`` are no-ops, so only the member
    lookups need to run; anything else (a repeating element, a missing choice element)
    hands the remaining steps to :func:`walk`. Returns None for other shapes.
    """
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


def _type_hint(steps: list[tuple]) -> str | None:
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


class Compiler:
    """Turns parsed FHIRPath into closures; holds the ViewDefinition constants."""

    def __init__(self, constants: Mapping[str, Any] | None = None) -> None:
        self.constants: Mapping[str, Any] = constants or {}

    # ------------------------------------------------------------------ helpers for functions
    def constant(self, node: Any) -> list | None:
        """The value of ``node`` if it is known at compile time (literal or %constant), else None."""
        if isinstance(node, Literal):
            return [] if node.kind == "empty" else [node.value]
        if isinstance(node, ExtConst) and node.name in self.constants:
            return _as_collection(self.constants[node.name])
        if isinstance(node, Unary) and node.op == "-":
            inner = self.constant(node.operand)
            if inner and len(inner) == 1 and type(inner[0]) in (int, float):
                return [-inner[0]]
        return None

    def type_name(self, node: Any) -> str:
        """Read a type specifier argument such as ``Quantity``, ``FHIR.Quantity`` or ``System.String``."""
        if isinstance(node, Member):
            return normalize_type_name(node.name)
        if isinstance(node, Invoke) and isinstance(node.left, Member) and isinstance(node.target, Member):
            return normalize_type_name(f"{node.left.name}.{node.target.name}")
        if isinstance(node, Literal) and node.kind == "string":
            return normalize_type_name(str(node.value))
        raise FHIRPathError("expected a type name argument")

    # ------------------------------------------------------------------ compilation
    def compile(self, node: Any) -> Expr:
        """Compile an AST node into ``expr(focus, env) -> list``."""
        if isinstance(node, Literal):
            value = [] if node.kind == "empty" else [node.value]
            return lambda focus, env: value
        if isinstance(node, ExtConst):
            return self._ext_const(node.name)
        if isinstance(node, Var):
            if node.name == "this":
                return lambda focus, env: focus
            if node.name == "index":
                return lambda focus, env: [] if env.index is None else [env.index]
            raise FHIRPathError("$total is only meaningful inside aggregate(), which is not supported")
        if isinstance(node, (Member, Call, Invoke, Indexer)) or (isinstance(node, TypeOp) and node.op == "as"):
            return self._path(node)
        if isinstance(node, TypeOp):
            return self._is(node)
        if isinstance(node, Unary):
            return operators.unary(node.op, self.compile(node.operand))
        if isinstance(node, Binary):
            return operators.binary(node.op, self.compile(node.left), self.compile(node.right))
        raise FHIRPathError(f"unsupported expression node {type(node).__name__}")

    def _ext_const(self, name: str) -> Expr:
        if name in self.constants:
            value = _as_collection(self.constants[name])
            return lambda focus, env: value
        if name in ("resource", "rootResource", "context"):
            return lambda focus, env: env.resource
        if name == "rowIndex":
            return lambda focus, env: [env.row_index]
        if name in _SPECIAL_CONSTANTS:
            special = [_SPECIAL_CONSTANTS[name]]
            return lambda focus, env: special
        raise FHIRPathError(f"undefined constant %{name}")

    def _is(self, node: TypeOp) -> Expr:
        plain = self.compile(node.left)
        typed = self._path(Invoke(node.left, Call("ofType", (Member(node.type_name),))))

        def is_type(focus: list, env: Env) -> list:
            if not plain(focus, env):
                return []
            return [bool(typed(focus, env))]

        return is_type

    @staticmethod
    def _flatten(node: Any) -> tuple[Any, list]:
        """Split ``a.b(c)[0].d`` into its head term (None = the focus) and invocation steps."""
        steps: list = []
        while True:
            if isinstance(node, Invoke):
                steps.append(node.target)
                node = node.left
            elif isinstance(node, Indexer):
                steps.append(node)
                node = node.left
            elif isinstance(node, TypeOp) and node.op == "as":
                steps.append(Call("ofType", (Member(node.type_name),)))
                node = node.left
            elif isinstance(node, (Member, Call)):
                steps.append(node)
                node = None
                break
            else:
                break
        steps.reverse()
        return node, steps

    def _chain_step(self, step: Any, pending: list[tuple], at_root: bool) -> bool:
        """Append ``step`` to the fused chain if it is a navigation step; report whether it was."""
        if isinstance(step, Member):
            if at_root and step.name[:1].isupper():
                pending.append((TYPE, step.name, None))  # `Patient.name`: a type filter on the context
            else:
                pending.append((MEMBER, step.name, step.name in CHOICE_BASES))
            return True
        if isinstance(step, Call):
            if step.name == "getReferenceKey" and len(step.args) <= 1:
                pending.append((REFKEY, self.type_name(step.args[0]) if step.args else None, None))
                return True
            if step.name in ("first", "last") and not step.args:
                pending.append((FIRST if step.name == "first" else LAST, None, None))
                return True
            if step.name == "ofType" and len(step.args) == 1:
                type_name = self.type_name(step.args[0])
                if pending and pending[-1][0] == MEMBER:
                    base = pending.pop()[1]
                    pending.append((CHOICE, choice_key(base, type_name), (base, type_name)))
                else:
                    pending.append((OFTYPE, type_name, None))
                return True
            return False
        if isinstance(step, Indexer):
            index = self.constant(step.index)
            if index is not None and len(index) == 1 and type(index[0]) is int:
                pending.append((INDEX, index[0], None))
                return True
        return False

    def _path(self, node: Any) -> Expr:
        head, steps = self._flatten(node)
        head_fn = self.compile(head) if head is not None else None
        invs: list[Inv] = []
        pending: list[tuple] = []
        hint: str | None = None
        only_chain = True
        for i, step in enumerate(steps):
            if self._chain_step(step, pending, at_root=head is None and i == 0):
                continue
            if pending:
                hint = _type_hint(pending)
                invs.append(_chain_inv(tuple(pending)))
                pending = []
            only_chain = False
            if isinstance(step, Call):
                invs.append(compile_call(self, step, hint))
            else:
                invs.append(self._dynamic_index(step))
            hint = None
        if pending:
            invs.append(_chain_inv(tuple(pending)))
        if head_fn is None and only_chain and steps:
            # The common case: one fused chain, called without any wrapper frame.
            chain_steps = tuple(pending)
            return _fast_chain(chain_steps) or partial(walk, steps=chain_steps)
        if head_fn is None and len(invs) == 2 and isinstance(steps[-1], Call) and not steps[-1].args:
            # `chain.exists()` / `chain.empty()`: test the chain result directly.
            chain, name = getattr(invs[0], "steps", None), steps[-1].name
            if chain is not None and name in ("exists", "empty"):
                want = name == "exists"
                return lambda focus, env: _TRUE if bool(walk(focus, env, chain)) is want else _FALSE
        return _sequence(head_fn, invs)

    def _dynamic_index(self, step: Indexer) -> Inv:
        index_fn = self.compile(step.index)

        def index(inp: list, focus: list, env: Env) -> list:
            idx = index_fn(focus, env)
            if not idx:
                return []
            if len(idx) > 1 or type(idx[0]) is not int:
                raise FHIRPathError("an indexer needs a single integer")
            n = idx[0]
            return inp[n : n + 1] if n >= 0 else []

        return index


def _as_collection(value: Any) -> list:
    """A constant as a FHIRPath collection: None is empty, a list (from an override) is itself."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _chain_inv(steps: tuple) -> Inv:
    def chain(inp: list, focus: list, env: Env) -> list:
        return walk(inp, env, steps)

    chain.steps = steps  # type: ignore[attr-defined]
    return chain


def _sequence(head_fn: Expr | None, invs: list[Inv]) -> Expr:
    """Compose a head term and invocations: ``inv_n(...inv_1(head(focus)))``."""
    if head_fn is None and len(invs) == 1:
        only = invs[0]
        return lambda focus, env: only(focus, focus, env)
    if head_fn is None and len(invs) == 2:
        one, two = invs
        return lambda focus, env: two(one(focus, focus, env), focus, env)
    invs_t = tuple(invs)

    def run(focus: list, env: Env) -> list:
        coll = focus if head_fn is None else head_fn(focus, env)
        for inv in invs_t:
            coll = inv(coll, focus, env)
        return coll

    return run


class CompiledPath:
    """A compiled FHIRPath expression; ``evaluate`` runs it against one resource or element."""

    __slots__ = ("expr", "source")

    def __init__(self, source: str, expr: Expr) -> None:
        self.source = source
        self.expr = expr

    def evaluate(self, item: Any, env: Env | None = None) -> list:
        """Evaluate with ``item`` as focus (and as ``%resource`` unless ``env`` says otherwise)."""
        focus = [item]
        return self.expr(focus, env if env is not None else Env(focus))

    def __repr__(self) -> str:
        return f"CompiledPath({self.source!r})"


def compile_fhirpath(source: str, constants: Mapping[str, Any] | None = None) -> CompiledPath:
    """Parse and compile ``source``; raises :class:`~fhirqa.viewdef.errors.ViewDefinitionError` subclasses."""
    return CompiledPath(source, Compiler(constants).compile(parse(source)))
