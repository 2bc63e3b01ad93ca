"""FHIRPath string, conversion, math and collection functions.

Registered into the table of :mod:`fhirqa.viewdef.functions` on import (``fhirpath.py``
imports this module), kept apart so each module stays small.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .errors import FHIRPathError
from .functions import argument, register, register_simple, to_string
from .operators import single, union_of
from .values import equals

if TYPE_CHECKING:
    from .chain import Env, Inv
    from .fhirpath import Compiler


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
        arg_fns = [argument(compiler, a) for a in args]

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

    register(name, n_args, n_args)(factory)


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
register("substring", 1, 2)(
    lambda compiler, args, hint: _substring_factory(compiler, args)
)


def _substring_factory(compiler: Compiler, args: tuple) -> Inv:
    start, length = argument(compiler, args[0]), (argument(compiler, args[1]) if len(args) > 1 else None)

    def substring(inp: list, focus: list, env: Env) -> list:
        s = _string_input(inp, "substring")
        st = single(start(focus, env), "substring() start")
        if s is None or st is None:
            return []
        ln = single(length(focus, env), "substring() length") if length else None
        r = _substring(s, st, ln)
        return [] if r is None else [r]

    return substring


@register("join", 0, 1)
def _join(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    sep_fn = argument(compiler, args[0]) if args else (lambda focus, env: [""])

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

    register_simple(name, convert)


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

    register_simple(name, apply)


_number_fn("abs", abs)
_number_fn("ceiling", math.ceil)
_number_fn("floor", math.floor)
_number_fn("truncate", math.trunc)


@register("round", 0, 1)
def _round(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
    digits = argument(compiler, args[0]) if args else (lambda focus, env: [0])

    def round_(inp: list, focus: list, env: Env) -> list:
        v = single(inp, "input of round()")
        if v is None:
            return []
        return [float(round(v, single(digits(focus, env), "round() precision") or 0))]

    return round_


# --------------------------------------------------------------------------- collections


def _collection_fn(name: str, fn: Callable[[list, list], list]) -> None:
    def factory(compiler: Compiler, args: tuple, hint: str | None) -> Inv:
        other = argument(compiler, args[0])
        return lambda inp, focus, env: fn(inp, other(focus, env))

    register(name, 1, 1)(factory)


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


register_simple("children", _children)
register_simple("descendants", _descendants)
register_simple("now", lambda inp: [datetime.now().astimezone().isoformat(timespec="milliseconds")])
register_simple("today", lambda inp: [datetime.now().date().isoformat()])
register_simple("timeOfDay", lambda inp: [datetime.now().time().isoformat(timespec="milliseconds")])
