"""Compile the FHIRPath subset used by ViewDefinitions into plain Python closures.

An expression compiles once to an ``Expr``: ``expr(focus, env) -> list``, where ``focus`` is
the input collection (a list of JSON values) and ``env`` an :class:`Env` carrying the
per-row state (``%resource``, ``%rowIndex``, ``$index``). FHIRPath collections are Python
lists; items are the JSON values themselves, never wrapped, so the common case (navigating
a few member names) costs a handful of dict lookups.

Runs of member navigation, ``first()``, ``last()``, constant indexers, ``ofType()`` and
``getReferenceKey()`` are fused into one *chain* (see :mod:`fhirqa.viewdef.chain`);
operators live in :mod:`~fhirqa.viewdef.operators`, functions in
:mod:`~fhirqa.viewdef.functions` and :mod:`~fhirqa.viewdef.functions_text`.

Example::

    >>> fn = compile_fhirpath("name.where(use = 'official').family.first()")
    >>> fn.evaluate({"name": [{"use": "official", "family": "Smith"}]})
    ['Smith']
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from . import chain as _chain_module
from . import functions_text, operators  # noqa: F401 -- functions_text registers functions on import
from .chain import (
    CHOICE,
    CHOICE_BASES,
    EXT,
    FIRST,
    INDEX,
    LAST,
    MEMBER,
    OFTYPE,
    REFKEY,
    TYPE,
    WHERE_CHAIN,
    WHERE_EQ,
    Env,
    Expr,
    Inv,
    fast_chain,
    type_hint,
    walk,
)
from .errors import FHIRPathError
from .functions import compile_call, member_equals_literal
from .parser import Binary, Call, ExtConst, Indexer, Invoke, Literal, Member, TypeOp, Unary, Var, parse
from .values import choice_key, normalize_type_name

_SPECIAL_CONSTANTS = {
    "ucum": "http://unitsofmeasure.org",
    "sct": "http://snomed.info/sct",
    "loinc": "http://loinc.org",
}

_TRUE = [True]
_FALSE = [False]


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
            if step.name == "where" and len(step.args) == 1:
                pairs = member_equals_literal(self, step.args[0])
                if pairs is not None:
                    pending.append((WHERE_EQ, pairs, None))
                    return True
                test = self._chain_test(step.args[0])
                if test is not None:
                    pending.append((WHERE_CHAIN, test[0], test[1]))
                    return True
                return False
            if step.name == "extension" and len(step.args) == 1:
                url = self.constant(step.args[0])
                if url is not None and len(url) == 1 and type(url[0]) is str:
                    pending.append((EXT, url[0], None))
                    return True
                return False
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

    def _chain_test(self, node: Any) -> tuple[tuple, bool] | None:
        """``<navigation>.exists()`` / ``.empty()`` as (the navigation's chain steps, True for exists), else None.

        The criterion of ``where()`` that the canonical maps use besides ``member = 'text'``; fused, it runs in
        the C chain instead of one Python frame per item and per call (the same result: the criterion is
        compiled to the same chain and tested for emptiness)."""
        head, steps = self._flatten(node)
        if head is not None or len(steps) < 2:
            return None
        last = steps[-1]
        if not isinstance(last, Call) or last.name not in ("exists", "empty") or last.args:
            return None
        sub: list[tuple] = []
        for i, step in enumerate(steps[:-1]):
            if not self._chain_step(step, sub, at_root=i == 0):
                return None
        return tuple(sub), last.name == "exists"

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
                hint = type_hint(pending)
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
            return fast_chain(chain_steps) or partial(walk, steps=chain_steps)
        if head_fn is None and len(invs) == 2 and isinstance(steps[-1], Call) and not steps[-1].args:
            # `chain.exists()` / `chain.empty()`: test the chain result directly.
            chain, name = getattr(invs[0], "steps", None), steps[-1].name
            if chain is not None and name in ("exists", "empty"):
                want = name == "exists"
                test = fast_chain(chain) or partial(walk, steps=chain)
                return lambda focus, env: _TRUE if bool(test(focus, env)) is want else _FALSE
        native = _chain_module.NATIVE
        last = steps[-1] if steps else None
        if (native is not None and head_fn is None and len(invs) == 2 and type(invs[0]) is native.Chain
                and isinstance(last, Call) and last.name == "join" and len(last.args) <= 1):
            # `chain.join(sep)` (dosage texts, result references, given names): joined in C when every item is
            # a string; anything else goes to the Python join below.
            sep = self.constant(last.args[0]) if last.args else [""]
            if sep is not None and len(sep) == 1 and type(sep[0]) is str:
                return native.join(invs[0], sep[0], _sequence(head_fn, invs))
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
    fast = fast_chain(steps)  # the one-item shortcut (in C when built), else the general walk
    native = _chain_module.NATIVE
    if native is not None and type(fast) is native.Chain:
        return fast  # type: ignore[return-value]  # a C chain also takes (input, focus, env): no Python frame

    if fast is not None:

        def chain(inp: list, focus: list, env: Env) -> list:
            return fast(inp, env)

    else:

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
