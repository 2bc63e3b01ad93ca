"""Compare one fhirqa answer with one gold question (rules in ``evals/README.md``).

Rules, each tested on its own in ``tests/evaluation/test_score.py``:

- **status**: the answer's ``status`` must equal the gold ``expected_status`` (a ``no-data`` gold needs a
  ``no-data`` answer; the answer's values are then ignored).
- **number**: ``|got − expected| <= tolerance × |expected| + ABS_EPSILON`` (tolerance is relative).
- **count**: exact integer equality (``3``, ``3.0`` and ``"3"`` are all 3).
- **date**: the gold is an ISO date; the answer may be a date or a datetime. A datetime matches when its UTC
  date or its local date (as written, before conversion) is within ``tolerance`` days of the gold date.
- **boolean**: exact; the strings yes/no/true/false are accepted.
- **string**: equal after normalisation (Unicode NFKC, zero-width characters removed, case-folded,
  punctuation → space, whitespace collapsed); a ``Type/id`` reference matches its id.
- **list**: a set comparison with the string rule per element, where an item name also matches when one
  name's words appear, in order, inside the other's (``Hydrochlorothiazide 25 MG`` ~
  ``hydrochlorothiazide 25 mg oral tablet``). Every expected element must be present; extra elements are
  allowed up to ``floor(LIST_EXTRA_FRACTION × len(expected))`` (so none for lists shorter than 10).
- Scalar types (everything but list) need exactly as many values as the gold (normally one).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

ABS_EPSILON = 1e-3
LIST_EXTRA_FRACTION = 0.1
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_REF = re.compile(r"^[A-Z][A-Za-z]+/([A-Za-z0-9\-.]{1,64})$")
_BOOL_WORDS = {"true": True, "yes": True, "false": False, "no": False}


@dataclass(frozen=True)
class ScoreResult:
    """Whether an answer is right, and why (or why not) in a few words."""

    correct: bool
    reason: str


def normalize_text(value: Any) -> str:
    """Case-, punctuation- and whitespace-insensitive form of a string."""
    text = unicodedata.normalize("NFKC", _ZERO_WIDTH.sub("", str(value))).casefold()
    return " ".join(_PUNCT.sub(" ", text).split())


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def number_matches(got: Any, expected: Any, tolerance: float) -> bool:
    """Relative tolerance plus a small absolute epsilon."""
    g, e = _as_number(got), _as_number(expected)
    if g is None or e is None:
        return False
    return abs(g - e) <= tolerance * abs(e) + ABS_EPSILON


def count_matches(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Exact integer equality."""
    g, e = _as_number(got), _as_number(expected)
    return g is not None and e is not None and g.is_integer() and g == e


def _dates_of(value: Any) -> list[date]:
    """The calendar dates a value can stand for: UTC date and local (as written) date of a datetime."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        return [value]
    elif isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                return [date.fromisoformat(text)]
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return []
    else:
        return []
    days = [moment.date()]
    if moment.tzinfo is not None:
        days.append(moment.astimezone(UTC).date())
    return days


def date_matches(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Equal within ``tolerance`` days, on the UTC or the local date of a datetime."""
    wanted = _dates_of(expected)
    if not wanted:
        return False
    return any(abs((d - wanted[0]).days) <= tolerance for d in _dates_of(got))


def bool_matches(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Exact; yes/no/true/false strings count as booleans."""
    if isinstance(got, str):
        got = _BOOL_WORDS.get(got.strip().casefold(), got)
    return isinstance(got, bool) and got is bool(expected)


def string_matches(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Equal after normalisation; ``Patient/abc`` matches ``abc``."""
    if got is None or isinstance(got, bool):
        return False
    return normalize_text(_strip_ref(str(got))) == normalize_text(_strip_ref(str(expected)))


def _strip_ref(text: str) -> str:
    """``Patient/abc`` → ``abc``; anything else unchanged."""
    m = _REF.match(text.strip())
    return m.group(1) if m else text


def name_matches(got: Any, expected: Any, tolerance: float = 0.0) -> bool:
    """Item names: the string rule, or one name's words appear contiguously inside the other's."""
    if string_matches(got, expected):
        return True
    if got is None or isinstance(got, bool | int | float):
        return False
    a, b = normalize_text(got).split(), normalize_text(expected).split()
    if not a or not b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return any(long_[i:i + len(short)] == short for i in range(len(long_) - len(short) + 1))


_SCALAR: dict[str, Callable[[Any, Any, float], bool]] = {
    "number": number_matches,
    "count": count_matches,
    "date": date_matches,
    "boolean": bool_matches,
    "string": string_matches,
}


def _element_rule(expected: Any) -> Callable[[Any, Any, float], bool]:
    """The rule for one list element, chosen by the gold element's JSON type."""
    if isinstance(expected, bool):
        return bool_matches
    if isinstance(expected, int | float):
        return number_matches
    if isinstance(expected, str) and len(_dates_of(expected)) and len(expected) == 10:
        return date_matches
    return name_matches


def _score_list(got: Sequence[Any], expected: Sequence[Any], tolerance: float) -> ScoreResult:
    missing = [e for e in expected if not any(_element_rule(e)(g, e, tolerance) for g in got)]
    extra = [g for g in got if not any(_element_rule(e)(g, e, tolerance) for e in expected)]
    allowed = math.floor(LIST_EXTRA_FRACTION * len(expected))
    if missing:
        return ScoreResult(False, f"missing {len(missing)} of {len(expected)}: {missing[:3]}")
    if len(extra) > allowed:
        return ScoreResult(False, f"{len(extra)} extra (allowed {allowed}): {extra[:3]}")
    return ScoreResult(True, "all expected present" + (f", {len(extra)} extra allowed" if extra else ""))


def _score_scalar(rule: Callable[[Any, Any, float], bool], got: Sequence[Any], expected: Sequence[Any],
                  tolerance: float) -> ScoreResult:
    if len(got) != len(expected):
        return ScoreResult(False, f"expected {len(expected)} value(s), got {len(got)}")
    pool = list(got)
    for e in expected:
        hit = next((i for i, g in enumerate(pool) if rule(g, e, tolerance)), None)
        if hit is None:
            return ScoreResult(False, f"{e!r} not matched by {list(got)!r}")
        pool.pop(hit)
    return ScoreResult(True, "match")


def score(gold: dict[str, Any], answer: dict[str, Any]) -> ScoreResult:
    """Score an answer dict (``Answer.to_dict()``) against one gold question."""
    want_status = gold.get("expected_status", "answered")
    got_status = answer.get("status", "answered")
    if got_status != want_status:
        return ScoreResult(False, f"status {got_status!r}, expected {want_status!r}")
    if want_status != "answered":
        return ScoreResult(True, f"status {want_status}")
    got = answer.get("answer")
    if got is None:
        got = []
    elif not isinstance(got, list | tuple):
        got = [got]
    expected = list(gold.get("expected") or [])
    tolerance = float(gold.get("tolerance") or 0.0)
    answer_type = gold.get("answer_type", "string")
    if answer_type == "list":
        return _score_list(list(got), expected, tolerance)
    rule = _SCALAR.get(answer_type)
    if rule is None:
        return ScoreResult(False, f"unknown answer_type {answer_type!r}")
    return _score_scalar(rule, list(got), expected, tolerance)
