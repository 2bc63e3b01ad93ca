"""Tokenizer and Pratt parser for the FHIRPath subset used by SQL-on-FHIR ViewDefinitions.

The parser covers the full FHIRPath expression grammar (operators, literals, invocations,
indexers, ``is``/``as``); which *functions* are supported is decided later by the compiler.
Every failure is reported as :class:`FHIRPathSyntaxError` carrying the character position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import FHIRPathSyntaxError

# --------------------------------------------------------------------------- AST


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: ``kind`` is string, integer, decimal, boolean, date, dateTime, time, quantity or empty."""

    value: Any
    kind: str


@dataclass(frozen=True, slots=True)
class Member:
    """Navigation to a child element by name (``name`` or ``\\`name\\```)."""

    name: str


@dataclass(frozen=True, slots=True)
class Call:
    """A function invocation ``name(args...)``."""

    name: str
    args: tuple[Any, ...]
    pos: int = -1


@dataclass(frozen=True, slots=True)
class Var:
    """``$this``, ``$index`` or ``$total``."""

    name: str


@dataclass(frozen=True, slots=True)
class ExtConst:
    """An environment variable ``%name`` (ViewDefinition constants, ``%resource``, ``%rowIndex``...)."""

    name: str


@dataclass(frozen=True, slots=True)
class Invoke:
    """``left.target`` where target is a :class:`Member` or :class:`Call`."""

    left: Any
    target: Any


@dataclass(frozen=True, slots=True)
class Indexer:
    """``left[index]``."""

    left: Any
    index: Any


@dataclass(frozen=True, slots=True)
class Unary:
    """Unary ``+``/``-`` (polarity)."""

    op: str
    operand: Any


@dataclass(frozen=True, slots=True)
class Binary:
    """Any infix operator, including the keyword ones (``and``, ``div``, ``in``...)."""

    op: str
    left: Any
    right: Any


@dataclass(frozen=True, slots=True)
class TypeOp:
    """``left is Type`` / ``left as Type``; ``type_name`` keeps an optional namespace (``FHIR.Quantity``)."""

    op: str
    left: Any
    type_name: str


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ident, qident, string, number, date, const, var, op, eof
    value: str
    pos: int


_DATE_RE = re.compile(
    r"@(?:T\d{2}(?::\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    r"|\d{4}(?:-\d{2}(?:-\d{2})?)?"
    r"(?:T(?:\d{2}(?::\d{2}(?::\d{2}(?:\.\d+)?)?)?)?(?:Z|[+-]\d{2}:\d{2})?)?)"
)
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPS = ("<=", ">=", "!=", "!~", ".", "[", "]", "(", ")", ",", "+", "-", "*", "/", "&", "|", "=", "~", "<", ">", "{", "}")
_ESCAPES = {"'": "'", '"': '"', "`": "`", "\\": "\\", "/": "/", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _read_quoted(text: str, start: int, quote: str) -> tuple[str, int]:
    """Read a quoted string/identifier starting at the opening quote; return (value, next index)."""
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\":
            if i + 1 >= n:
                break
            esc = text[i + 1]
            if esc == "u":
                digits = text[i + 2 : i + 6]
                if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise FHIRPathSyntaxError("invalid \\u escape", text, i)
                out.append(chr(int(digits, 16)))
                i += 6
                continue
            if esc not in _ESCAPES:
                raise FHIRPathSyntaxError(f"invalid escape \\{esc}", text, i)
            out.append(_ESCAPES[esc])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise FHIRPathSyntaxError("unterminated quoted text", text, start)


def tokenize(text: str) -> list[Token]:
    """Split a FHIRPath expression into tokens (comments and whitespace dropped)."""
    tokens: list[Token] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise FHIRPathSyntaxError("unterminated comment", text, i)
            i = end + 2
        elif ch == "'":
            value, j = _read_quoted(text, i, "'")
            tokens.append(Token("string", value, i))
            i = j
        elif ch == "`":
            value, j = _read_quoted(text, i, "`")
            tokens.append(Token("qident", value, i))
            i = j
        elif ch == "@":
            m = _DATE_RE.match(text, i)
            if not m or m.end() == i + 1:
                raise FHIRPathSyntaxError("invalid date/time literal", text, i)
            tokens.append(Token("date", m.group()[1:], i))
            i = m.end()
        elif ch == "%":
            if i + 1 < n and text[i + 1] in "'`":
                value, j = _read_quoted(text, i + 1, text[i + 1])
            else:
                m = _IDENT_RE.match(text, i + 1)
                if not m:
                    raise FHIRPathSyntaxError("expected a name after '%'", text, i)
                value, j = m.group(), m.end()
            tokens.append(Token("const", value, i))
            i = j
        elif ch == "$":
            m = _IDENT_RE.match(text, i + 1)
            if not m or m.group() not in ("this", "index", "total"):
                raise FHIRPathSyntaxError("expected $this, $index or $total", text, i)
            tokens.append(Token("var", m.group(), i))
            i = m.end()
        elif "0" <= ch <= "9":  # not str.isdigit(): that accepts '²' and other non-ASCII digits
            m = _NUMBER_RE.match(text, i)
            assert m is not None  # an ASCII digit always matches
            tokens.append(Token("number", m.group(), i))
            i = m.end()
        elif ch.isalpha() or ch == "_":
            m = _IDENT_RE.match(text, i)
            if m is None:  # non-ASCII letter: not part of the FHIRPath identifier grammar
                raise FHIRPathSyntaxError(f"unexpected character {ch!r}", text, i)
            tokens.append(Token("ident", m.group(), i))
            i = m.end()
        else:
            for op in _OPS:
                if text.startswith(op, i):
                    tokens.append(Token("op", op, i))
                    i += len(op)
                    break
            else:
                raise FHIRPathSyntaxError(f"unexpected character {ch!r}", text, i)
    tokens.append(Token("eof", "", n))
    return tokens


# --------------------------------------------------------------------------- parser

# Left binding powers, lowest first, following the FHIRPath operator precedence table.
_INFIX: dict[str, int] = {
    "implies": 10,
    "or": 20, "xor": 20,
    "and": 30,
    "in": 40, "contains": 40,
    "=": 50, "~": 50, "!=": 50, "!~": 50,
    "<": 60, "<=": 60, ">": 60, ">=": 60,
    "|": 70,
    "is": 80, "as": 80,
    "+": 90, "-": 90, "&": 90,
    "*": 100, "/": 100, "div": 100, "mod": 100,
    ".": 120, "[": 120,
}
_UNARY_BP = 110
_KEYWORD_OPS = frozenset(k for k in _INFIX if k.isalpha())
_CALENDAR_UNITS = frozenset(
    "year years month months week weeks day days hour hours minute minutes second seconds millisecond milliseconds".split()
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    # -- helpers
    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def error(self, message: str, tok: Token | None = None) -> FHIRPathSyntaxError:
        tok = tok or self.peek()
        return FHIRPathSyntaxError(message, self.text, tok.pos)

    def expect_op(self, op: str) -> Token:
        tok = self.advance()
        if tok.kind != "op" or tok.value != op:
            shown = tok.value or "end of expression"
            raise self.error(f"expected {op!r} but found {shown!r}", tok)
        return tok

    def infix_of(self, tok: Token) -> str | None:
        if tok.kind == "op" and tok.value in _INFIX:
            return tok.value
        if tok.kind == "ident" and tok.value in _KEYWORD_OPS:
            return tok.value
        return None

    # -- grammar
    def parse(self) -> Any:
        if self.peek().kind == "eof":
            raise self.error("empty expression")
        node = self.expression(0)
        if self.peek().kind != "eof":
            raise self.error(f"unexpected {self.peek().value!r}")
        return node

    def expression(self, rbp: int) -> Any:
        left = self.prefix()
        while True:
            op = self.infix_of(self.peek())
            if op is None or _INFIX[op] <= rbp:
                return left
            left = self.infix(op, left)

    def prefix(self) -> Any:
        tok = self.advance()
        kind, value = tok.kind, tok.value
        if kind == "op":
            if value == "(":
                node = self.expression(0)
                self.expect_op(")")
                return node
            if value in "+-":
                return Unary(value, self.expression(_UNARY_BP))
            if value == "{":
                self.expect_op("}")
                return Literal(None, "empty")
            raise self.error(f"unexpected {value!r}", tok)
        if kind == "string":
            return Literal(value, "string")
        if kind == "number":
            return self.number(tok)
        if kind == "date":
            return _date_literal(value)
        if kind == "const":
            return ExtConst(value)
        if kind == "var":
            return Var(value)
        if kind == "ident" and value in ("true", "false"):
            return Literal(value == "true", "boolean")
        if kind in ("ident", "qident"):
            if kind == "ident" and value in _KEYWORD_OPS and not self._is_call_next():
                raise self.error(f"operator {value!r} has no left operand", tok)
            return self.invocation(tok)
        raise self.error("unexpected end of expression" if kind == "eof" else f"unexpected {value!r}", tok)

    def _is_call_next(self) -> bool:
        nxt = self.peek()
        return nxt.kind == "op" and nxt.value == "("

    def number(self, tok: Token) -> Literal:
        nxt = self.peek()
        if nxt.kind == "string" or (nxt.kind == "ident" and nxt.value in _CALENDAR_UNITS):
            self.advance()
            amount: int | float = float(tok.value) if "." in tok.value else int(tok.value)
            return Literal({"value": amount, "unit": nxt.value, "code": nxt.value}, "quantity")
        if "." in tok.value:
            return Literal(float(tok.value), "decimal")
        return Literal(int(tok.value), "integer")

    def invocation(self, tok: Token) -> Member | Call:
        if tok.kind == "ident" and self._is_call_next():
            self.advance()
            args: list[Any] = []
            if not (self.peek().kind == "op" and self.peek().value == ")"):
                args.append(self.expression(0))
                while self.peek().kind == "op" and self.peek().value == ",":
                    self.advance()
                    args.append(self.expression(0))
            self.expect_op(")")
            return Call(tok.value, tuple(args), tok.pos)
        return Member(tok.value)

    def type_specifier(self) -> str:
        tok = self.advance()
        if tok.kind not in ("ident", "qident"):
            raise self.error("expected a type name", tok)
        name = tok.value
        if self.peek().kind == "op" and self.peek().value == "." and self.tokens[self.i + 1].kind in ("ident", "qident"):
            self.advance()
            name += "." + self.advance().value
        return name

    def infix(self, op: str, left: Any) -> Any:
        tok = self.advance()
        if op == ".":
            target = self.advance()
            if target.kind not in ("ident", "qident"):
                raise self.error("expected a name after '.'", target)
            return Invoke(left, self.invocation(target))
        if op == "[":
            index = self.expression(0)
            self.expect_op("]")
            return Indexer(left, index)
        if op in ("is", "as"):
            return TypeOp(op, left, self.type_specifier())
        if self.peek().kind == "eof":
            raise self.error(f"operator {tok.value!r} has no right operand", tok)
        return Binary(op, left, self.expression(_INFIX[op]))


def _date_literal(text: str) -> Literal:
    if text.startswith("T"):
        return Literal(text[1:], "time")
    if "T" in text:
        return Literal(text.rstrip("T"), "dateTime")
    return Literal(text, "date")


def parse(expression: str) -> Any:
    """Parse a FHIRPath expression into an AST; raises :class:`FHIRPathSyntaxError`."""
    if not isinstance(expression, str):
        raise FHIRPathSyntaxError(f"expression must be a string, not {type(expression).__name__}")
    try:
        return _Parser(expression).parse()
    except RecursionError:
        # Pathologically nested input; report it like any other syntax problem.
        raise FHIRPathSyntaxError("expression is nested too deeply", expression) from None
