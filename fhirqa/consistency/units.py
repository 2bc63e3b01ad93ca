"""Units as notes write them and as records store them: one spelling each, and conversions between them.

``canon("mEq/L") == canon("mmol/L")``, ``convert(198.7, "lb", "kg") ≈ 90.1``, ``convert(99.9, "F", "Cel") ≈ 37.7``,
``convert(5.5, "mmol/L", "mg/dL", "glucose") ≈ 99``. An incompatible pair converts to None.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ALIASES = {
    "mm[hg]": "mmhg", "mmhg": "mmhg", "cel": "c", "°c": "c", "degc": "c", "c": "c", "°f": "f", "degf": "f", "f": "f",
    "lbs": "lb", "lb": "lb", "pounds": "lb", "pound": "lb", "#": "lb", "kg": "kg", "kgs": "kg", "g": "g", "gm": "g",
    "gram": "g", "grams": "g", "mg": "mg", "mcg": "mcg", "ug": "mcg", "µg": "mcg", "microgram": "mcg",
    "unt": "unit", "units": "unit", "unit": "unit", "u": "unit", "iu": "unit", "ml": "ml", "l": "l", "cm": "cm",
    "m": "m", "mm": "mm", "in": "in", "inch": "in", "inches": "in", '"': "in", "ft": "ft", "%": "%", "percent": "%",
    "meq/l": "mmol/l", "mmol/l": "mmol/l", "umol/l": "umol/l", "µmol/l": "umol/l", "mg/dl": "mg/dl", "g/dl": "g/dl",
    "g/l": "g/l", "mg/l": "mg/l", "ng/ml": "ng/ml", "ng/dl": "ng/dl", "pg/ml": "pg/ml", "mcg/ml": "mcg/ml",
    "ug/ml": "mcg/ml", "mg/ml": "mg/ml", "unt/ml": "unit/ml", "units/ml": "unit/ml", "u/ml": "unit/ml",
    "u/l": "u/l", "iu/l": "u/l", "units/l": "u/l", "fl": "fl", "pg": "pg", "/min": "/min", "bpm": "/min",
    "beats/min": "/min", "breaths/min": "/min", "kg/m2": "kg/m2", "kg/m^2": "kg/m2", "mg/g": "mg/g",
    "ml/min/{1.73_m2}": "ml/min/1.73m2", "ml/min/1.73m2": "ml/min/1.73m2", "ml/min/1.73 m2": "ml/min/1.73m2",
    "ml/min": "ml/min/1.73m2", "/10": "score", "{score}": "score", "(score)": "score", "score": "score",
    "10*3/ul": "k/ul", "10^3/ul": "k/ul", "x10^3/ul": "k/ul", "x10*3/ul": "k/ul", "k/ul": "k/ul", "k/mcl": "k/ul",
    "thou/ul": "k/ul", "10^9/l": "k/ul", "x10^9/l": "k/ul", "10*6/ul": "m/ul", "10^6/ul": "m/ul", "x10^6/ul": "m/ul",
    "m/ul": "m/ul", "m/mcl": "m/ul", "10^12/l": "m/ul", "/ul": "/ul", "mg/actuat": "mg/actuat", "s": "s",
    "sec": "s", "seconds": "s", "mm/hr": "mm/h", "mm/h": "mm/h", "miu/l": "miu/l", "m[iu]/l": "miu/l",
    "uiu/ml": "miu/l", "ku/l": "ku/l", "cmh2o": "cmh2o", "{inr}": "", "ratio": "",
}

# dimension and factor to a base unit of that dimension
_LINEAR: dict[str, tuple[str, float]] = {
    "kg": ("mass", 1e6), "g": ("mass", 1e3), "mg": ("mass", 1.0), "mcg": ("mass", 1e-3), "lb": ("mass", 453592.37),
    "cm": ("length", 1.0), "m": ("length", 100.0), "mm": ("length", 0.1), "in": ("length", 2.54), "ft": ("length", 30.48),
    "g/dl": ("mass/vol", 1e4), "g/l": ("mass/vol", 1e3), "mg/dl": ("mass/vol", 10.0), "mg/l": ("mass/vol", 1.0),
    "mcg/ml": ("mass/vol", 1.0), "ng/ml": ("mass/vol", 1e-3), "ng/dl": ("mass/vol", 1e-5), "pg/ml": ("mass/vol", 1e-6),
    "mg/ml": ("mass/vol", 1e3), "mmol/l": ("molar", 1e3), "umol/l": ("molar", 1.0), "ml": ("volume", 1.0),
    "l": ("volume", 1e3), "k/ul": ("count", 1e3), "m/ul": ("count", 1e6), "/ul": ("count", 1.0),
}
@lru_cache(maxsize=1024)
def canon(unit: str) -> str:
    """One spelling per unit (``mEq/L`` and ``mmol/L`` are the same; ``"mm[Hg]"`` → ``"mmhg"``)."""
    key = re.sub(r"\s+", "", unit.strip().lower()).replace("µ", "u").replace("mcl", "ul")
    key = key.rstrip(".")
    return _ALIASES.get(key, key)


def known(unit: str) -> bool:
    """True when the unit is one this module knows."""
    key = canon(unit)
    return key in _ALIASES.values() or key in _LINEAR


def _molar_mass(analyte: str) -> float | None:
    # one table of molar masses for the whole product: the lexicon's (``fhirqa.agent.units``)
    from fhirqa.agent.units import analyte_of

    known = analyte_of(analyte)
    return known[0] if known else None


def convert(value: float, from_unit: str, to_unit: str, analyte: str = "") -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; None when the units are not convertible."""
    a, b = canon(from_unit), canon(to_unit)
    if a == b or not a or not b:
        return value if a == b else None
    if {a, b} == {"c", "f"}:
        return (value - 32) * 5 / 9 if a == "f" else value * 9 / 5 + 32
    if a in _LINEAR and b in _LINEAR:
        (da, fa), (db, fb) = _LINEAR[a], _LINEAR[b]
        if da == db:
            return value * fa / fb
        mass = _molar_mass(analyte)
        if mass and {da, db} == {"mass/vol", "molar"}:
            # mass/vol base is mg/L; molar base is µmol/L; mg/L = µmol/L × g/mol / 1000
            base = value * fa  # in the base unit of ``a``
            other = base * 1000 / mass if da == "mass/vol" else base * mass / 1000
            return other / fb
    return None


def compatible(a: str, b: str, analyte: str = "") -> bool:
    """True when a value in ``a`` can be expressed in ``b``."""
    return convert(1.0, a, b, analyte) is not None
