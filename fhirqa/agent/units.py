"""Units on the question path: one name per unit, and conversions between them, as data.

The table is ``lexicon/abbreviations.json`` ``units``: spellings (``"lbs"``, ``"[lb_av]"``, ``"UNT"``) name one
unit, each unit has a size in its dimension's base unit (and an offset for temperatures), and ``molar_masses``
lets a result written as a mass concentration be compared with one written as a molar concentration of the
same analyte (glucose 7 mmol/L is 126 mg/dL; creatinine 100 µmol/L is 1.13 mg/dL; BUN is counted as urea's
nitrogen, 28.014 g/mol).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_MASS, _MOLAR, _EQUIVALENT = "mass concentration", "molar concentration", "equivalent concentration"


@dataclass(frozen=True)
class UnitTable:
    """The units the question path knows (see the module docstring)."""

    aliases: dict[str, str]
    dimensions: dict[str, dict[str, float]]
    offsets: dict[str, float]
    molar_masses: tuple[tuple[str, float, int], ...]  # (word of the analyte's name, g/mol, charge)

    def dimension(self, unit: str) -> str | None:
        """The dimension a unit key belongs to, or None."""
        return next((name for name, sizes in self.dimensions.items() if unit in sizes), None)


@lru_cache(maxsize=1)
def unit_table() -> UnitTable:
    """The table from the lexicon, read once."""
    from fhirqa.project import lexicon_file

    table = lexicon_file("abbreviations.json").get("units", {})
    masses = table.get("molar_masses", {})
    analytes = tuple((word.lower(), float(entry["g_per_mol"]), int(entry.get("charge", 0)))
                     for word, entry in masses.get("analytes", {}).items())
    return UnitTable({k.lower(): v for k, v in table.get("aliases", {}).items()}, table.get("dimensions", {}),
                     table.get("offsets", {}), analytes)


def unit_key(unit: str | None) -> str:
    """The one name of a unit as a question or a record spells it (``"[lb_av]"`` → ``"lb"``); "" for none."""
    key = (unit or "").strip().lower()
    return unit_table().aliases.get(key, key)


def analyte_of(name: str) -> tuple[float, int] | None:
    """(g/mol, charge) of the analyte an item's name is about ("Glucose [Mass/volume] in Blood" → glucose), or None.

    The longest word found wins, so "urea nitrogen" is not read as "urea" where both are listed.
    """
    low = name.lower()
    found = [(len(word), mass, charge) for word, mass, charge in unit_table().molar_masses
             if re.search(rf"(?<![a-z]){re.escape(word)}", low)]
    if not found:
        return None
    _, mass, charge = max(found)
    return mass, charge


def convert(value: float, unit: str | None, to: str | None, analyte: str = "") -> float | None:
    """``value`` in ``unit`` expressed in ``to``; None when they do not convert.

    Units of one dimension convert by the table; a mass and a molar (or equivalent) concentration convert only for
    an ``analyte`` (an item's name) whose molar mass the table holds. A value with no unit is taken as it is.
    """
    a, b = unit_key(unit), unit_key(to)
    if a == b or not a:
        return value
    table = unit_table()
    da, db = table.dimension(a), table.dimension(b)
    if da is None or db is None:
        return None
    base = (value + table.offsets.get(a, 0.0)) * table.dimensions[da][a]
    if da != db:
        across = _across(base, da, db, analyte)
        if across is None:
            return None
        base = across
    return base / table.dimensions[db][b] - table.offsets.get(b, 0.0)


def _across(base: float, source: str, target: str, analyte: str) -> float | None:
    """A base amount (g/L, mmol/L or mEq/L) of one concentration dimension in another's base, for ``analyte``."""
    known = analyte_of(analyte) if analyte else None
    if known is None or {source, target} - {_MASS, _MOLAR, _EQUIVALENT}:
        return None
    mass, charge = known
    if _EQUIVALENT in (source, target) and not charge:
        return None  # milliequivalents of an uncharged analyte mean nothing
    # to mmol/L first, then to the target's base
    if source == _MASS:
        mmol = base / mass * 1000  # g/L ÷ g/mol = mol/L
    elif source == _EQUIVALENT:
        mmol = base / abs(charge)
    else:
        mmol = base
    if target == _MASS:
        return mmol * mass / 1000
    if target == _EQUIVALENT:
        return mmol * abs(charge)
    return mmol


_DISPLAY = (("umol", "µmol"), ("mcmol", "µmol"), ("meq", "mEq"), ("/dl", "/dL"), ("/ml", "/mL"), ("/l", "/L"),
            ("degf", "°F"), ("degc", "°C"), ("iu", "IU"))


def display_unit(unit: str | None) -> str:
    """A unit as clinicians write it ("mmol/l" → "mmol/L", "umol/l" → "µmol/L", "meq/l" → "mEq/L")."""
    shown = (unit or "").strip()
    if shown != shown.lower():
        return shown  # written with capitals already: kept as written
    for low, written in _DISPLAY:
        shown = shown.replace(low, written)
    return shown
