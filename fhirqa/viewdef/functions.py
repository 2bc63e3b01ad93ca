"""FHIRPath functions supported by the compiler, each built once into an invocation closure.

An invocation has the shape ``inv(input, focus, env) -> list``: ``input`` is the collection
the function is called on (left of the dot) and ``focus`` the expression's context, against
which ordinary arguments are evaluated. Criteria arguments (``where``, ``exists``, ``select``,
``all``, ``repeat``) are evaluated once per input item with that item as focus.

Functions outside this table are rejected at compile time, so an unsupported expression
fails when the ViewDefinition is compiled rather than silently producing nulls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .errors import FHIRPathError
from .operators import single, to_bool, union_of
from .values import boundary, equals, matches_type, reference_key

if TYPE_CHECKING:
    from .fhirpath import Compiler, Env, Expr, Inv
    from .parser import Call

Factory = Callable[["Compiler", tuple, "str | None"], "Inv"]
_REGISTRY: dict[str, tuple[int, int, Factory]] = {}


def _register(name: str, min_args: int = 0, max_args: int = 0) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = (min_args, max_args, factory)
        return factory

    return deco


def supported_functions() -> list[str]:
    """Names of all FHIRPath functions this compiler accepts (the fused ones included)."""
    return sorted({*_REGISTRY, "first", "last", "ofType"})


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


def _arg(compiler: Compiler, node: Any) -> Expr:
    """An ordinary argument, folded to a constant when possible."""
    const = compiler.constant(node)
    if const is not None:
        return lambda focus, env: const
    return compiler.compile(node)


def _simple(name: str, fn: Callable[[list], list]) -> None:
    """Register a no-argument function that only looks at its input collection."""
    _register(name)(lambda compiler, args, hint: lambda inp, focus, env: fn(inp))


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

_simple("empty", lambda inp: [not inp])
_simple("count", lambda inp: [len(inp)])
_simple("hasValue", lambda inp: [len(inp) == 1 and type(inp[0]) is not dict])
_simple("allTrue", lambda inp: [all(v is True for v in inp)])
_simple("anyTrue", lambda inp: [any(v is True for v in inp)])
_simple("allFalse", lambda inp: [all(v is False for v in inp)])
_simple("anyFalse", lambda inp: [any(v is False for v in inp)])
_simple("tail", lambda inp: inp[1:])
_simple("distinct", lambda inp: union_of(inp, []))
_simple("isDistinct", lambda inp: [len(union_of(inp, [])) == len(inp)])
_simple("single", lambda inp: [] if not inp else [single(inp, "input of single()")])
_simple("trace", lambda inp: inp)


@_register("exists", 0, 1)
def _exists(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    if not args:
        return lambda inp, focus, env: [bool(inp)]
    crit = compiler.compile(args[0])
    return lambda inp, focus, env: [any(to_bool(r, "exists() criteria") for r in _each(inp, crit, env))]


@_register("all", 1, 1)
def _all(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    crit = compiler.compile(args[0])
    return lambda inp, focus, env: [all(to_bool(r, "all() criteria") for r in _each(inp, crit, env))]


def _member_equals_literal(compiler: Compiler, node: Any) -> tuple[str, str] | None:
    """Recognize ``name = 'text'`` (either order), the usual shape of a where() criterion."""
    from .fhirpath import CHOICE_BASES
    from .parser import Binary, Member

    if not isinstance(node, Binary) or node.op != "=":
        return None
    for member, other in ((node.left, node.right), (node.right, node.left)):
        const = compiler.constant(other)
        if isinstance(member, Member) and member.name not in CHOICE_BASES and const and type(const[0]) is str:
            text = const[0]
            # Strings that may be dates compare by precision rules, not plainly: keep those generic.
            if not text[:4].isdigit():
                return member.name, text
    return None


@_register("where", 1, 1)
def _where(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    simple = _member_equals_literal(compiler, args[0])
    if simple is not None:
        key, text = simple

        def where_equals(inp: list, focus: list, env: Env) -> list:
            # Same result as the generic path: a list-valued element only matches as a
            # singleton, and a missing element makes the criterion empty (not kept).
            out = []
            for x in inp:
                if type(x) is dict:
                    v = x.get(key)
                    if v == text or (type(v) is list and len(v) == 1 and v[0] == text):
                        out.append(x)
            return out

        return where_equals
    crit = compiler.compile(args[0])

    def where(inp: list, focus: list, env: Env) -> list:
        if not inp:
            return inp
        return [x for x, r in zip(inp, _each(inp, crit, env), strict=True) if to_bool(r, "where() criteria")]

    return where


@_register("select", 1, 1)
def _select(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    proj = compiler.compile(args[0])
    return lambda inp, focus, env: [v for r in _each(inp, proj, env) for v in r]


@_register("repeat", 1, 1)
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


@_register("skip", 1, 1)
def _skip(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    n = _arg(compiler, args[0])
    return lambda inp, focus, env: inp[max(0, single(n(focus, env), "skip() count") or 0) :]


@_register("take", 1, 1)
def _take(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    n = _arg(compiler, args[0])
    return lambda inp, focus, env: inp[: max(0, single(n(focus, env), "take() count") or 0)]


@_register("not")
def _not(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    def not_(inp: list, focus: list, env: Env) -> list:
        b = to_bool(inp, "input of not()")
        return [] if b is None else [not b]

    return not_


@_register("iif", 2, 3)
def _iif(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    crit, then = compiler.compile(args[0]), compiler.compile(args[1])
    other = compiler.compile(args[2]) if len(args) == 3 else None

    def iif(inp: list, focus: list, env: Env) -> list:
        if to_bool(crit(inp, env), "iif() criterion"):
            return then(inp, env)
        return other(inp, env) if other is not None else []

    return iif


# --------------------------------------------------------------------------- types


@_register("is", 1, 1)
def _is_fn(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    t = compiler.type_name(args[0])
    return lambda inp, focus, env: [] if not inp else [matches_type(single(inp, "input of is()"), t)]


@_register("as", 1, 1)
def _as_fn(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    t = compiler.type_name(args[0])
    return lambda inp, focus, env: [x for x in inp if matches_type(x, t)]


# --------------------------------------------------------------------------- FHIR / SQL-on-FHIR specific


@_register("extension", 1, 1)
def _extension(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    url_fn = _arg(compiler, args[0])

    def extension(inp: list, focus: list, env: Env) -> list:
        url = single(url_fn(focus, env), "extension() url")
        out = []
        for item in inp:
            if type(item) is dict:
                for ext in item.get("extension") or ():
                    if type(ext) is dict and ext.get("url") == url:
                        out.append(ext)
        return out

    return extension


@_register("getResourceKey")
def _resource_key(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    def key(inp: list, focus: list, env: Env) -> list:
        ids = [x["id"] for x in inp if type(x) is dict and "resourceType" in x and "id" in x]
        if not ids and inp is focus and env.resource:
            # Called at the root of a column inside forEach: the key of the row's resource.
            root = env.resource[0]
            return [root["id"]] if type(root) is dict and "id" in root else []
        return ids

    return key


@_register("getReferenceKey", 0, 1)
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
        precision = _arg(compiler, args[0]) if args else None

        def bound(inp: list, focus: list, env: Env) -> list:
            p = single(precision(focus, env), "boundary precision") if precision else None
            out = [boundary(v, high, hint, p) for v in inp]
            return [v for v in out if v is not None]

        return bound

    return factory


_register("lowBoundary", 0, 1)(_boundary_factory(False))
_register("highBoundary", 0, 1)(_boundary_factory(True))


# --------------------------------------------------------------------------- strings


def _string_input(inp: list, name: str) -> str | None:
    v = single(inp, f"input of {name}()")
    if v is None:
        return None
    s = to_string(v)
    if s is None:
        raise FHIRPathError(f"{name}() needs a string input")
    return s


def _string_fn(name: str, n_args: int, fn: Callable[..., Any]) -> None:
    """Register a string function: empty input or empty argument -> empty result."""

    def factory(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
        arg_fns = [_arg(compiler, a) for a in args]

        def call(inp: list, focus: list, env: Env) -> list:
            s = _string_input(inp, name)
            if s is None:
                return []
            values = []
            for a in arg_fns:
                v = single(a(focus, env), f"argument of {name}()")
                if v is None:
                    return []
                values.append(v)
            r = fn(s, *values)
            if r is None:
                return []
            return r if type(r) is list else [r]

        return call

    _register(name, n_args, n_args)(factory)


def _substring(s: str, start: int, length: int | None = None) -> str | None:
    if start < 0 or start >= len(s):
        return None
    return s[start:] if length is None else s[start : start + max(0, length)]


_string_fn("startsWith", 1, lambda s, p: s.startswith(p))
_string_fn("endsWith", 1, lambda s, p: s.endswith(p))
_string_fn("contains", 1, lambda s, p: p in s)
_string_fn("indexOf", 1, lambda s, p: s.find(p))
_string_fn("matches", 1, lambda s, p: re.search(p, s, flags=re.DOTALL) is not None)
_string_fn("replace", 2, lambda s, a, b: s.replace(a, b))
_string_fn("replaceMatches", 2, lambda s, a, b: re.sub(a, b, s))
_string_fn("lower", 0, str.lower)
_string_fn("upper", 0, str.upper)
_string_fn("trim", 0, str.strip)
_string_fn("length", 0, len)
_string_fn("toChars", 0, list)
_string_fn("split", 1, lambda s, sep: s.split(sep))
_register("substring", 1, 2)(
    lambda compiler, args, hint: _substring_factory(compiler, args)
)


def _substring_factory(compiler: Compiler, args: tuple) -> Inv:
    start, length = _arg(compiler, args[0]), (_arg(compiler, args[1]) if len(args) > 1 else None)

    def substring(inp: list, focus: list, env: Env) -> list:
        s = _string_input(inp, "substring")
        st = single(start(focus, env), "substring() start")
        if s is None or st is None:
            return []
        ln = single(length(focus, env), "substring() length") if length else None
        r = _substring(s, st, ln)
        return [] if r is None else [r]

    return substring


@_register("join", 0, 1)
def _join(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    sep_fn = _arg(compiler, args[0]) if args else (lambda focus, env: [""])

    def join(inp: list, focus: list, env: Env) -> list:
        sep = single(sep_fn(focus, env), "join() separator") or ""
        if type(sep) is not str:
            raise FHIRPathError("join() separator must be a string")
        return [sep.join(s for s in map(to_string, inp) if s is not None)]

    return join


# --------------------------------------------------------------------------- conversions & math


def _to_integer(v: Any) -> int | None:
    if type(v) is int:
        return v
    if type(v) is bool:
        return int(v)
    if type(v) is str and re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    return None


def _to_decimal(v: Any) -> float | None:
    if type(v) in (int, float):
        return float(v)
    if type(v) is str and re.fullmatch(r"[+-]?\d+(\.\d+)?", v):
        return float(v)
    return None


def _to_boolean(v: Any) -> bool | None:
    if type(v) is bool:
        return v
    text = str(v).lower()
    if text in ("true", "t", "yes", "y", "1", "1.0"):
        return True
    if text in ("false", "f", "no", "n", "0", "0.0"):
        return False
    return None


def _converter(name: str, fn: Callable[[Any], Any]) -> None:
    def convert(inp: list) -> list:
        v = single(inp, f"input of {name}()")
        r = None if v is None else fn(v)
        return [] if r is None else [r]

    _simple(name, convert)


_converter("toString", to_string)
_converter("toInteger", _to_integer)
_converter("toDecimal", _to_decimal)
_converter("toBoolean", _to_boolean)


def _number_fn(name: str, fn: Callable[[Any], Any]) -> None:
    def apply(inp: list) -> list:
        v = single(inp, f"input of {name}()")
        if v is None:
            return []
        if type(v) not in (int, float):
            raise FHIRPathError(f"{name}() needs a number")
        return [fn(v)]

    _simple(name, apply)


_number_fn("abs", abs)
_number_fn("ceiling", math.ceil)
_number_fn("floor", math.floor)
_number_fn("truncate", math.trunc)


@_register("round", 0, 1)
def _round(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    digits = _arg(compiler, args[0]) if args else (lambda focus, env: [0])

    def round_(inp: list, focus: list, env: Env) -> list:
        v = single(inp, "input of round()")
        if v is None:
            return []
        return [float(round(v, single(digits(focus, env), "round() precision") or 0))]

    return round_


# --------------------------------------------------------------------------- collections


def _collection_fn(name: str, fn: Callable[[list, list], list]) -> None:
    def factory(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
        other = _arg(compiler, args[0])
        return lambda inp, focus, env: fn(inp, other(focus, env))

    _register(name, 1, 1)(factory)


_collection_fn("union", union_of)
_collection_fn("combine", lambda a, b: [*a, *b])
_collection_fn("intersect", lambda a, b: union_of([x for x in a if any(equals(x, y) is True for y in b)], []))
_collection_fn("exclude", lambda a, b: [x for x in a if not any(equals(x, y) is True for y in b)])


def _children(inp: list) -> list:
    out: list = []
    for item in inp:
        if type(item) is dict:
            for k, v in item.items():
                if k != "resourceType":
                    out.extend(v if type(v) is list else [v])
    return out


def _descendants(inp: list) -> list:
    out: list = []
    frontier = _children(inp)
    while frontier:
        out.extend(frontier)
        frontier = _children(frontier)
    return out


_simple("children", _children)
_simple("descendants", _descendants)
_simple("now", lambda inp: [datetime.now().astimezone().isoformat(timespec="milliseconds")])
_simple("today", lambda inp: [datetime.now().date().isoformat()])
_simple("timeOfDay", lambda inp: [datetime.now().time().isoformat(timespec="milliseconds")])
