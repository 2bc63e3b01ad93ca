"""FHIRPath functions supported by the compiler, each built once into an invocation closure.

An invocation has the shape ``inv(input, focus, env) -> list``: ``input`` is the collection
the function is called on (left of the dot) and ``focus`` the expression's context, against
which ordinary arguments are evaluated. Criteria arguments (``where``, ``exists``, ``select``,
``all``, ``repeat``) are evaluated once per input item with that item as focus.

Functions outside this table are rejected at compile time, so an unsupported expression
fails when the ViewDefinition is compiled rather than silently producing nulls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .chain import CHOICE_BASES, extensions, where_equals
from .errors import FHIRPathError
from .operators import single, to_bool, union_of
from .parser import Binary, Member
from .values import boundary, matches_type, reference_key

if TYPE_CHECKING:
    from .chain import Env, Expr, Inv
    from .fhirpath import Compiler
    from .parser import Call

Factory = Callable[["Compiler", tuple, "str | None"], "Inv"]
_REGISTRY: dict[str, tuple[int, int, Factory]] = {}


def register(name: str, min_args: int = 0, max_args: int = 0) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = (min_args, max_args, factory)
        return factory

    return deco


def supported_functions() -> list[str]:
    """Names of all FHIRPath functions this compiler accepts (the fused ones included)."""
    return sorted(_REGISTRY)


def compile_call(compiler: Compiler, call: Call, hint: str | None) -> Inv:
    """Compile one function invocation; ``hint`` is the static type of its input, when known."""
    entry = _REGISTRY.get(call.name)
    if entry is None:
        raise FHIRPathError(f"unsupported FHIRPath function {call.name}()")
    lo, hi, factory = entry
    if not lo <= len(call.args) <= hi:
        expected = str(lo) if lo == hi else f"{lo} to {hi}"
        raise FHIRPathError(f"{call.name}() takes {expected} argument(s), got {len(call.args)}")
    return factory(compiler, call.args, hint)


def argument(compiler: Compiler, node: Any) -> Expr:
    """An ordinary argument, folded to a constant when possible."""
    const = compiler.constant(node)
    if const is not None:
        return lambda focus, env: const
    return compiler.compile(node)


def register_simple(name: str, fn: Callable[[list], list]) -> None:
    """Register a no-argument function that only looks at its input collection."""
    register(name)(lambda compiler, args, hint: lambda inp, focus, env: fn(inp))


def _each(coll: list, crit: Expr, env: Env) -> list[list]:
    """Evaluate a criteria argument per item, exposing ``$index``."""
    results = []
    saved = env.index
    for i, item in enumerate(coll):
        env.index = i
        results.append(crit([item], env))
    env.index = saved
    return results


def to_string(v: Any) -> str | None:
    """FHIRPath ``toString()`` of one item (None when it has no string form)."""
    if type(v) is str:
        return v
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) in (int, float):
        return repr(v)
    if type(v) is dict and "value" in v and ("unit" in v or "code" in v):
        return f"{v['value']} '{v.get('code', v.get('unit'))}'"
    return None


# --------------------------------------------------------------------------- existence & filtering

register_simple("empty", lambda inp: [not inp])
# first(), last() and ofType() are fused into navigation chains by the compiler; these
# entries only serve calls the chain cannot take (such as first() on a literal).
register_simple("first", lambda inp: inp[:1])
register_simple("last", lambda inp: inp[-1:])
register("ofType", 1, 1)(
    lambda compiler, args, hint: _as_fn(compiler, args, hint)
)
register_simple("count", lambda inp: [len(inp)])
register_simple("hasValue", lambda inp: [len(inp) == 1 and type(inp[0]) is not dict])
register_simple("allTrue", lambda inp: [all(v is True for v in inp)])
register_simple("anyTrue", lambda inp: [any(v is True for v in inp)])
register_simple("allFalse", lambda inp: [all(v is False for v in inp)])
register_simple("anyFalse", lambda inp: [any(v is False for v in inp)])
register_simple("tail", lambda inp: inp[1:])
register_simple("distinct", lambda inp: union_of(inp, []))
register_simple("isDistinct", lambda inp: [len(union_of(inp, [])) == len(inp)])
register_simple("single", lambda inp: [] if not inp else [single(inp, "input of single()")])
register_simple("trace", lambda inp: inp)


@register("exists", 0, 1)
def _exists(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    if not args:
        return lambda inp, focus, env: [bool(inp)]
    crit = compiler.compile(args[0])
    return lambda inp, focus, env: [any(to_bool(r, "exists() criteria") for r in _each(inp, crit, env))]


@register("all", 1, 1)
def _all(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    crit = compiler.compile(args[0])
    return lambda inp, focus, env: [all(to_bool(r, "all() criteria") for r in _each(inp, crit, env))]


def member_equals_literal(compiler: Compiler, node: Any) -> tuple[tuple[str, str | bool], ...] | None:
    """Recognize ``name = 'text'`` or ``name = true`` (either order), or an ``or`` of such tests, the usual
    shapes of a where() criterion; returns the (member, literal) pairs, any of which keeps an item."""
    if isinstance(node, Binary) and node.op == "or":
        left, right = member_equals_literal(compiler, node.left), member_equals_literal(compiler, node.right)
        return None if left is None or right is None else left + right
    if not isinstance(node, Binary) or node.op != "=":
        return None
    for member, other in ((node.left, node.right), (node.right, node.left)):
        const = compiler.constant(other)
        if not isinstance(member, Member) or member.name in CHOICE_BASES or not const or len(const) != 1:
            continue
        if type(const[0]) is bool:
            return ((member.name, const[0]),)
        # Strings that may be dates compare by precision rules, not plainly: keep those generic.
        if type(const[0]) is str and not const[0][:4].isdigit():
            return ((member.name, const[0]),)
    return None


@register("where", 1, 1)
def _where(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    pairs = member_equals_literal(compiler, args[0])
    if pairs is not None:

        def where_equals_(inp: list, focus: list, env: Env) -> list:
            return where_equals(inp, pairs)

        return where_equals_
    crit = compiler.compile(args[0])

    def where(inp: list, focus: list, env: Env) -> list:
        if not inp:
            return inp
        return [x for x, r in zip(inp, _each(inp, crit, env), strict=True) if to_bool(r, "where() criteria")]

    return where


@register("select", 1, 1)
def _select(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    proj = compiler.compile(args[0])
    return lambda inp, focus, env: [v for r in _each(inp, proj, env) for v in r]


@register("repeat", 1, 1)
def _repeat(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    proj = compiler.compile(args[0])

    def repeat(inp: list, focus: list, env: Env) -> list:
        out: list = []
        frontier = inp
        while frontier:
            found = [v for r in _each(frontier, proj, env) for v in r]
            frontier = [v for v in found if not any(v is seen for seen in out)]
            out.extend(frontier)
        return out

    return repeat


@register("skip", 1, 1)
def _skip(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    n = argument(compiler, args[0])
    return lambda inp, focus, env: inp[max(0, single(n(focus, env), "skip() count") or 0) :]


@register("take", 1, 1)
def _take(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    n = argument(compiler, args[0])
    return lambda inp, focus, env: inp[: max(0, single(n(focus, env), "take() count") or 0)]


@register("not")
def _not(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    def not_(inp: list, focus: list, env: Env) -> list:
        b = to_bool(inp, "input of not()")
        return [] if b is None else [not b]

    return not_


@register("iif", 2, 3)
def _iif(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    crit, then = compiler.compile(args[0]), compiler.compile(args[1])
    other = compiler.compile(args[2]) if len(args) == 3 else None

    def iif(inp: list, focus: list, env: Env) -> list:
        if to_bool(crit(inp, env), "iif() criterion"):
            return then(inp, env)
        return other(inp, env) if other is not None else []

    return iif


# --------------------------------------------------------------------------- types


@register("is", 1, 1)
def _is_fn(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    t = compiler.type_name(args[0])
    return lambda inp, focus, env: [] if not inp else [matches_type(single(inp, "input of is()"), t)]


@register("as", 1, 1)
def _as_fn(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    t = compiler.type_name(args[0])
    return lambda inp, focus, env: [x for x in inp if matches_type(x, t)]


# --------------------------------------------------------------------------- FHIR / SQL-on-FHIR specific


@register("extension", 1, 1)
def _extension(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    url_fn = argument(compiler, args[0])

    def extension(inp: list, focus: list, env: Env) -> list:
        return extensions(inp, single(url_fn(focus, env), "extension() url"))

    return extension


@register("getResourceKey")
def _resource_key(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    def key(inp: list, focus: list, env: Env) -> list:
        ids = [x["id"] for x in inp if type(x) is dict and "resourceType" in x and "id" in x]
        if not ids and inp is focus and env.resource:
            # Called at the root of a column inside forEach: the key of the row's resource.
            root = env.resource[0]
            return [root["id"]] if type(root) is dict and "id" in root else []
        return ids

    return key


@register("getReferenceKey", 0, 1)
def _reference_key(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    t = compiler.type_name(args[0]) if args else None

    def key(inp: list, focus: list, env: Env) -> list:
        out = []
        for item in inp:
            k = reference_key(item, t)
            if k is not None:
                out.append(k)
        return out

    return key


def _boundary_factory(high: bool) -> Factory:
    def factory(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
        precision = argument(compiler, args[0]) if args else None

        def bound(inp: list, focus: list, env: Env) -> list:
            p = single(precision(focus, env), "boundary precision") if precision else None
            out = [boundary(v, high, hint, p) for v in inp]
            return [v for v in out if v is not None]

        return bound

    return factory


register("lowBoundary", 0, 1)(_boundary_factory(False))
register("highBoundary", 0, 1)(_boundary_factory(True))
