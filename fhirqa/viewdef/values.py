"""Value semantics for the FHIRPath subset: types, equality, ordering, arithmetic, keys, boundaries.

Values are plain JSON-decoded Python objects (``dict``, ``str``, ``int``, ``float``, ``bool``),
so type information that FHIR JSON does not carry (``date`` vs ``dateTime`` strings, ``code``
vs ``string``) is inferred from the value's shape where it matters.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from .errors import FHIRPathError

# Capitalized FHIR data type names: the legal suffixes of a choice element (``value[x]``).
# Used to tell ``valueQuantity`` (a choice of ``value``) from ``durationMax`` (a sibling).
CHOICE_SUFFIXES = frozenset(
    """Base64Binary Boolean Canonical Code Date DateTime Decimal Id Instant Integer Integer64 Markdown Oid
    PositiveInt String Time UnsignedInt Uri Url Uuid Address Age Annotation Attachment CodeableConcept
    CodeableReference Coding ContactPoint Count Distance Duration HumanName Identifier Money Period
    Quantity Range Ratio RatioRange Reference SampledData Signature Timing ContactDetail Contributor
    DataRequirement Expression ParameterDefinition RelatedArtifact TriggerDefinition UsageContext
    Availability ExtendedContactDetail Dosage Meta""".split()
)

_STRINGY = frozenset(
    "string code id uri url canonical oid uuid markdown base64Binary xhtml date dateTime instant time".split()
)
_INTEGERS = frozenset(("integer", "positiveInt", "unsignedInt", "integer64"))
_SYSTEM_TYPES = {
    "String": "string", "Integer": "integer", "Decimal": "decimal", "Boolean": "boolean",
    "Date": "date", "DateTime": "dateTime", "Time": "time", "Quantity": "Quantity",
}
_DATE_RE = re.compile(
    r"^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2}(?:\.\d+)?))?)?"
    r"(Z|[+-]\d{2}:\d{2})?)?)?)?$"
)
_TIME_RE = re.compile(r"^(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?$")


def normalize_type_name(name: str) -> str:
    """Strip a ``FHIR.``/``System.`` namespace and map System types to their FHIR spelling."""
    if name.startswith("FHIR."):
        return name[5:]
    if name.startswith("System."):
        return _SYSTEM_TYPES.get(name[7:], name[7:])
    return name


def choice_key(base: str, type_name: str) -> str:
    """The JSON property holding choice element ``base`` with type ``type_name`` (value + Quantity)."""
    return base + type_name[:1].upper() + type_name[1:]


def matches_type(value: Any, type_name: str) -> bool:
    """Best-effort runtime type test for ``ofType``/``is`` on an untyped JSON value."""
    t = normalize_type_name(type_name)
    if type(value) is bool:
        return t == "boolean"
    if type(value) is int:
        return t in _INTEGERS or t == "decimal"
    if type(value) is float:
        return t == "decimal"
    if type(value) is str:
        if t in ("date", "dateTime", "instant"):
            m = _DATE_RE.match(value)
            return m is not None and (t == "date") == (m.group(4) is None)
        if t == "time":
            return bool(_TIME_RE.match(value))
        return t in _STRINGY
    if type(value) is dict:
        rtype = value.get("resourceType")
        if rtype is not None:
            return t in (rtype, "Resource", "DomainResource")
        # Without a model we cannot tell Coding from Quantity; any complex type matches a complex value.
        return t[:1].isupper() and t not in ("Resource", "DomainResource")
    return False


# --------------------------------------------------------------------------- dates


def _parse_datetime(text: str) -> tuple[tuple[Any, ...], bool] | None:
    """Split an ISO date/dateTime into comparable parts normalized to UTC when a zone is given.

    Returns (parts, has_zone); parts is a tuple whose length is the precision.
    """
    m = _DATE_RE.match(text)
    if not m:
        return None
    year, month, day, hour, minute, second, zone = m.groups()
    parts: list[Any] = [int(year)]
    for piece in (month, day, hour, minute):
        if piece is None:
            break
        parts.append(int(piece))
    if second is not None and len(parts) == 5:
        parts.append(Decimal(second))
    if zone and len(parts) >= 5:
        offset = 0 if zone == "Z" else (int(zone[1:3]) * 60 + int(zone[4:6])) * (1 if zone[0] == "+" else -1)
        try:
            moment = datetime(parts[0], parts[1], parts[2], parts[3], parts[4]) - timedelta(minutes=offset)
        except ValueError:
            return None
        parts[:5] = [moment.year, moment.month, moment.day, moment.hour, moment.minute]
    return tuple(parts), zone is not None


def _looks_temporal(a: str, b: str) -> bool:
    # Cheap guard before the regex: both strings start like a year.
    return len(a) >= 4 and len(b) >= 4 and a[:4].isdigit() and b[:4].isdigit()


def compare_temporal(a: str, b: str) -> int | None:
    """Three-way compare two ISO dates/dateTimes; None when precision makes the answer unknown."""
    pa, pb = _parse_datetime(a), _parse_datetime(b)
    if pa is None or pb is None:
        raise ValueError("not a date")
    xa, xb = pa[0], pb[0]
    for u, v in zip(xa, xb, strict=False):
        if u != v:
            return -1 if u < v else 1
    return 0 if len(xa) == len(xb) else None


# --------------------------------------------------------------------------- equality & order


def equals(a: Any, b: Any) -> bool | None:
    """FHIRPath ``=`` on two single items; None means "unknown" (dates of different precision)."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta is str and tb is str:
        if a == b:
            return True
        if _looks_temporal(a, b):
            try:
                c = compare_temporal(a, b)
            except ValueError:
                return False
            return None if c is None else c == 0
        return False
    if ta is str or tb is str:
        return False
    return bool(a == b)


def equivalent(a: Any, b: Any) -> bool:
    """FHIRPath ``~``: like ``=`` but case/whitespace-insensitive for strings and never unknown."""
    if type(a) is str and type(b) is str:
        return " ".join(a.lower().split()) == " ".join(b.lower().split())
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(equivalent(a[k], b[k]) for k in a)
    return bool(equals(a, b))


def _is_number(v: Any) -> bool:
    return (type(v) is int or type(v) is float) and type(v) is not bool


def compare(a: Any, b: Any) -> int | None:
    """Three-way ordering for ``<``, ``<=``, ``>``, ``>=``; None when unknown."""
    if _is_number(a) and _is_number(b):
        return (a > b) - (a < b)
    if type(a) is str and type(b) is str:
        if _looks_temporal(a, b):
            try:
                return compare_temporal(a, b)
            except ValueError:
                pass
        return (a > b) - (a < b)
    if type(a) is dict and type(b) is dict and "value" in a and "value" in b:
        if a.get("code", a.get("unit")) != b.get("code", b.get("unit")):
            return None
        return compare(a["value"], b["value"])
    raise FHIRPathError(f"cannot compare {type(a).__name__} with {type(b).__name__}")


# --------------------------------------------------------------------------- arithmetic


def _exact(op: str, a: int | float, b: int | float) -> int | float | None:
    """Arithmetic on decimals via ``Decimal`` so 0.1 + 0.2 gives 0.3, not 0.30000000000000004."""
    if type(a) is int and type(b) is int and op != "/":
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
    da, db = Decimal(repr(a)), Decimal(repr(b))
    if op in ("/", "div", "mod") and db == 0:
        return None
    try:
        if op == "+":
            r = da + db
        elif op == "-":
            r = da - db
        elif op == "*":
            r = da * db
        elif op == "/":
            r = da / db
        elif op == "div":
            r = (da / db).to_integral_value(rounding="ROUND_DOWN")
            return int(r)
        else:  # mod: sign follows the dividend, like FHIRPath (and unlike Python's %)
            r = da - db * (da / db).to_integral_value(rounding="ROUND_DOWN")
            if type(a) is int and type(b) is int:
                return int(r)
    except InvalidOperation:
        return None
    return float(r)


def arithmetic(op: str, a: Any, b: Any) -> Any:
    """Apply ``+ - * / div mod`` to two single items (``+`` also concatenates strings)."""
    if _is_number(a) and _is_number(b):
        return _exact(op, a, b)
    if op == "+" and type(a) is str and type(b) is str:
        return a + b
    raise FHIRPathError(f"operator {op!r} is not defined for {type(a).__name__} and {type(b).__name__}")


# --------------------------------------------------------------------------- keys


def reference_key(ref: Any, type_name: str | None = None) -> str | None:
    """Id part of a Reference: ``Patient/123`` -> ``123``; None if absent or of another type.

    Absolute URLs (``http://x/fhir/Patient/123``) and ``_history`` suffixes are understood.
    ``urn:uuid:`` references (transaction bundles) carry no type, so the Reference's ``type``
    element is checked when present and the key is returned otherwise.
    """
    if type(ref) is not dict:
        return None
    text = ref.get("reference")
    if type(text) is not str or not text or text.startswith("#") or "?" in text:
        return None
    for prefix in ("urn:uuid:", "urn:oid:"):
        if text.startswith(prefix):
            declared = ref.get("type")
            if type_name and declared and declared != type_name:
                return None
            return text[len(prefix) :] or None
    parts = text.split("/")
    if "_history" in parts:
        parts = parts[: parts.index("_history")]
    if len(parts) < 2 or not parts[-1] or not parts[-2][:1].isupper():
        return None
    if type_name and parts[-2] != type_name:
        return None
    return parts[-1]


# --------------------------------------------------------------------------- boundaries


def _decimal_boundary(value: int | float, high: bool, precision: int | None) -> float:
    d = Decimal(repr(value)) if type(value) is float else Decimal(value)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    half = Decimal(5).scaleb(exponent - 1)
    bound = d + half if high else d - half
    if precision is not None:
        bound = bound.quantize(Decimal(1).scaleb(-precision))
    return float(bound)


def _pad_time(hh: str, mm: str | None, ss: str | None, frac: str | None, high: bool) -> str:
    mm = mm or ("59" if high else "00")
    ss = ss or ("59" if high else "00")
    # Missing digits are the extreme of their range: 12:34 -> 12:34:00.000 / 12:34:59.999.
    frac = (frac or "")[:3].ljust(3, "9" if high else "0")
    return f"{hh}:{mm}:{ss}.{frac}"


def boundary(value: Any, high: bool, hint: str | None = None, precision: int | None = None) -> Any:
    """``lowBoundary()``/``highBoundary()`` for decimals, dates, dateTimes and times (None if n/a).

    ``hint`` is the statically known FHIR type (from ``ofType``) when the JSON string alone
    cannot tell a ``date`` from a date-precision ``dateTime``.
    """
    if _is_number(value):
        return _decimal_boundary(value, high, precision)
    if type(value) is not str:
        return None
    m = _TIME_RE.match(value)
    if m and hint in (None, "time"):
        hh, mm, ss, frac = m.groups()
        return _pad_time(hh, mm, ss, frac, high)
    m = _DATE_RE.match(value)
    if not m:
        return None
    year, month, day, hour, minute, second, zone = m.groups()
    month = month or ("12" if high else "01")
    if day is None:
        day = str(calendar.monthrange(int(year), int(month))[1]) if high else "01"
    date = f"{year}-{month}-{day}"
    if hint not in ("dateTime", "instant") and hour is None:
        return date
    sec, frac = (second.split(".") + [None])[:2] if second else (None, None)
    hh = hour or ("23" if high else "00")
    zone = zone or ("-12:00" if high else "+14:00")
    return f"{date}T{_pad_time(hh, minute, sec, frac, high)}{zone}"
