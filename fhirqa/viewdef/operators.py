"""FHIRPath operators compiled to closures over their already-compiled operands.

Each builder takes operand closures ``(focus, env) -> list`` and returns one of the same
shape. Empty-collection propagation and three-valued logic follow the FHIRPath spec.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import FHIRPathError
from .values import arithmetic, compare, equals, equivalent

if TYPE_CHECKING:
    from .chain import Env

Expr = Callable[[list, "Env"], list]

_TRUE = [True]
_FALSE = [False]
_EMPTY: list = []


def to_bool(coll: list, what: str = "operand") -> bool | None:
    """FHIRPath singleton evaluation for a boolean context: [] -> None, [x] -> bool or True."""
    if not coll:
        return None
    if len(coll) > 1:
        raise FHIRPathError(f"{what} must be a single boolean, got a collection of {len(coll)} items")
    v = coll[0]
    return v if type(v) is bool else True


def single(coll: list, what: str = "operand") -> Any:
    """The only item of ``coll`` (None when empty); more than one item is an error."""
    if not coll:
        return None
    if len(coll) > 1:
        raise FHIRPathError(f"{what} must be a single value, got a collection of {len(coll)} items")
    return coll[0]


def _wrap(value: bool | None) -> list:
    if value is None:
        return _EMPTY
    return _TRUE if value else _FALSE


def union_of(left: list, right: list) -> list:
    """``|``: both collections merged, duplicates (by FHIRPath equality) removed."""
    out: list = []
    for item in (*left, *right):
        if not any(equals(item, seen) is True for seen in out):
            out.append(item)
    return out


def _equality(left: Expr, right: Expr, negate: bool) -> Expr:
    def eq(focus: list, env: Env) -> list:
        a = left(focus, env)
        if not a:
            return _EMPTY
        b = right(focus, env)
        if not b:
            return _EMPTY
        if len(a) != len(b):
            return _wrap(negate)
        result: bool | None = True
        for x, y in zip(a, b, strict=True):
            r = equals(x, y)
            if r is False:
                result = False
                break
            if r is None:
                result = None
        if result is None:
            return _EMPTY
        return _wrap(result != negate)

    return eq


def _equivalence(left: Expr, right: Expr, negate: bool) -> Expr:
    def equiv(focus: list, env: Env) -> list:
        a, b = left(focus, env), right(focus, env)
        if len(a) != len(b):
            result = False
        else:
            # Equivalence ignores order: every item must find an equivalent partner.
            result = all(any(equivalent(x, y) for y in b) for x in a)
        return _wrap(result != negate)

    return equiv


def _ordering(op: str, left: Expr, right: Expr) -> Expr:
    test: Callable[[int], bool] = {
        "<": lambda c: c < 0,
        "<=": lambda c: c <= 0,
        ">": lambda c: c > 0,
        ">=": lambda c: c >= 0,
    }[op]

    def ordered(focus: list, env: Env) -> list:
        a = single(left(focus, env), f"left operand of {op}")
        if a is None:
            return _EMPTY
        b = single(right(focus, env), f"right operand of {op}")
        if b is None:
            return _EMPTY
        c = compare(a, b)
        return _EMPTY if c is None else _wrap(test(c))

    return ordered


def _logic(op: str, left: Expr, right: Expr) -> Expr:
    if op == "and":

        def and_(focus: list, env: Env) -> list:
            a = to_bool(left(focus, env), "left operand of and")
            if a is False:
                return _FALSE
            b = to_bool(right(focus, env), "right operand of and")
            if b is False:
                return _FALSE
            return _TRUE if a and b else _EMPTY

        return and_
    if op == "or":

        def or_(focus: list, env: Env) -> list:
            a = to_bool(left(focus, env), "left operand of or")
            if a is True:
                return _TRUE
            b = to_bool(right(focus, env), "right operand of or")
            if b is True:
                return _TRUE
            return _FALSE if a is False and b is False else _EMPTY

        return or_
    if op == "xor":

        def xor(focus: list, env: Env) -> list:
            a = to_bool(left(focus, env), "left operand of xor")
            b = to_bool(right(focus, env), "right operand of xor")
            return _EMPTY if a is None or b is None else _wrap(a != b)

        return xor

    def implies(focus: list, env: Env) -> list:
        a = to_bool(left(focus, env), "left operand of implies")
        if a is False:
            return _TRUE
        b = to_bool(right(focus, env), "right operand of implies")
        if b is True:
            return _TRUE
        return _FALSE if a is True and b is False else _EMPTY

    return implies


def _math(op: str, left: Expr, right: Expr) -> Expr:
    def math(focus: list, env: Env) -> list:
        a = single(left(focus, env), f"left operand of {op}")
        b = single(right(focus, env), f"right operand of {op}")
        if a is None or b is None:
            return _EMPTY
        r = arithmetic(op, a, b)
        return _EMPTY if r is None else [r]

    return math


def _concat(left: Expr, right: Expr) -> Expr:
    def concat(focus: list, env: Env) -> list:
        a = single(left(focus, env), "left operand of &")
        b = single(right(focus, env), "right operand of &")
        # `&` treats an empty operand as the empty string (unlike `+`, which propagates empty).
        return [("" if a is None else str(a)) + ("" if b is None else str(b))]

    return concat


def _membership(op: str, left: Expr, right: Expr) -> Expr:
    def member(focus: list, env: Env) -> list:
        item_coll, coll = (left(focus, env), right(focus, env))
        if op == "contains":
            item_coll, coll = coll, item_coll
        item = single(item_coll, f"operand of {op}")
        if item is None:
            return _EMPTY
        return _wrap(any(equals(item, x) is True for x in coll))

    return member


def binary(op: str, left: Expr, right: Expr) -> Expr:
    """Build the closure for infix operator ``op``."""
    if op in ("=", "!="):
        return _equality(left, right, negate=op == "!=")
    if op in ("~", "!~"):
        return _equivalence(left, right, negate=op == "!~")
    if op in ("<", "<=", ">", ">="):
        return _ordering(op, left, right)
    if op in ("and", "or", "xor", "implies"):
        return _logic(op, left, right)
    if op in ("+", "-", "*", "/", "div", "mod"):
        return _math(op, left, right)
    if op == "&":
        return _concat(left, right)
    if op in ("in", "contains"):
        return _membership(op, left, right)
    if op == "|":
        return lambda focus, env: union_of(left(focus, env), right(focus, env))
    raise FHIRPathError(f"unsupported operator {op!r}")


def unary(op: str, operand: Expr) -> Expr:
    """Build the closure for prefix ``+``/``-``."""

    def polarity(focus: list, env: Env) -> list:
        v = single(operand(focus, env), f"operand of unary {op}")
        if v is None:
            return _EMPTY
        if type(v) not in (int, float):
            raise FHIRPathError(f"unary {op} needs a number")
        return [-v if op == "-" else v]

    return polarity
