"""The verification query: does a row of the matched items satisfy the entity's value, unit and time?

Conditions (each only when it applies):

- **time**: the row's time inside the entity's window (a listed medication or a condition: before the
  window ends: it was ordered or diagnosed by then);
- **value**: the row's value, expressed in the note's unit, equals the note's value at the note's precision
  (half a unit of the last written digit); ``>60`` / ``<0.01`` / ``30+`` compare; for a drug, the dose equals
  a strength of the product (``Simvastatin 10 MG`` → 10 mg; 75 mcg = 0.075 MG);
- **unit**: the note's unit is the record's or convertible to it;
- **frequency**: a dose frequency the note and the order both give (BID = 2 a day).

When no row satisfies them all, one condition at a time is dropped to pinpoint the column that disagrees
(dropping *unit* means comparing the numbers as written). Several candidates: a written unit whose raw number
matches wins; between value and time, time wins when the nearest row with the note's value is within a day
of the window, else value. Nothing even then: two fields, or ``existence`` when no item matched at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from fhirqa.consistency.match import Match
from fhirqa.consistency.model import Check, Entity
from fhirqa.consistency.timing import is_clock
from fhirqa.consistency.units import canon, compatible, convert

Row = dict[str, Any]
TIME_FIELDS = {"observation": "time", "medication": "time", "condition": "onset_time", "procedure": "start_time",
               "immunization": "time"}
NEAR = timedelta(days=1)
_STRENGTH = re.compile(r"(\d+(?:\.\d+)?)\s*(MG|MCG|G|UNT|ML|MEQ|%)(?:\s*/\s*(ML|ACTUAT|HR))?\b", re.I)
_PER_DAY = {"daily": 1, "qd": 1, "once daily": 1, "twice daily": 2, "bid": 2, "tid": 3, "qid": 4, "qhs": 1, "qam": 1,
            "qpm": 1, "nightly": 1, "weekly": 1 / 7}
_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400, "wk": 604800, "mo": 2592000, "a": 31536000}


def row_time(view: str, row: Row) -> datetime | None:
    """The time a row is about (onset for conditions, start for procedures)."""
    value = row.get(TIME_FIELDS[view])
    if value is None and view == "condition":
        value = row.get("recorded_time")
    return value if isinstance(value, datetime) else None


def strengths(row: Row) -> list[tuple[float, str]]:
    """Doses a medication row stands for: the product's strengths (and dose × strength when dosed in units)."""
    out = [(float(v), (u + (f"/{per}" if per else "")).lower()) for v, u, per in _STRENGTH.findall(row.get("medication_name") or "")]
    dose, unit = row.get("dose"), (row.get("dose_unit") or "").strip()
    if dose is not None and unit and canon(unit) in ("mg", "mcg", "g", "unit", "ml"):
        out.append((float(dose), unit))
    elif dose not in (None, 0, 1) and out:
        out += [(float(dose) * v, u) for v, u in out if "/" not in u]
    return out


def per_day(text: str) -> float | None:
    """Times a day a written frequency means (None for PRN or unknown)."""
    low = text.lower().replace(" ", "")
    if low in _PER_DAY:
        return _PER_DAY[low]
    m = re.fullmatch(r"q(\d+)h(?:rs?|ours?)?", low)
    if m:
        return 24 / int(m.group(1))
    m = re.fullmatch(r"q(\d+)d(?:ays?)?", low)
    return 1 / int(m.group(1)) if m else None


def row_per_day(row: Row) -> float | None:
    """Times a day an order's timing means."""
    freq, period, unit = row.get("frequency"), row.get("period"), row.get("period_unit")
    if not freq or not period or unit not in _SECONDS:
        return None
    return float(freq) * 86400 / (float(period) * _SECONDS[unit])


def _equal(note: float, record: float, ent: Entity) -> bool:
    if ent.comparator in (">", ">="):
        return record > note if ent.comparator == ">" else record >= note - 1e-9
    if ent.comparator in ("<", "<="):
        return record < note if ent.comparator == "<" else record <= note + 1e-9
    tolerance = 0.5 * 10 ** (-ent.decimals) + 1e-9 + 1e-6 * abs(note)
    return abs(record - note) <= tolerance


def note_unit(ent: Entity, record_unit: str) -> str:
    """The unit the note means: as written, else the record's (a temperature above 50 is °F)."""
    if ent.unit:
        return ent.unit
    if canon(record_unit) == "c" and ent.value is not None and ent.value > 50:
        return "F"
    return record_unit


class Conditions:
    """The value, unit, time and frequency predicates of one entity over rows of one view."""

    def __init__(self, ent: Entity, view: str) -> None:
        self.ent, self.view = ent, view
        self.preds: dict[str, Callable[[Row], bool]] = {}
        if ent.time is not None:
            self.preds["time"] = self.time_ok
        if ent.cls == "T1" and ent.value is not None and view in ("observation", "medication"):
            self.preds["value"] = self.value_ok
            if ent.unit and ent.unit != "/10":
                self.preds["unit"] = self.unit_ok
        if view == "medication" and ent.frequency and per_day(ent.frequency) is not None:
            self.preds["frequency"] = self.frequency_ok

    def time_ok(self, row: Row) -> bool:
        """The row's time against the window (by the end of it for lists and diagnoses)."""
        moment, window = row_time(self.view, row), self.ent.time
        if moment is None or window is None:
            return False
        if self.view == "condition" or (self.view == "medication" and self.ent.context == "listed"):
            return moment <= window.end
        if self.view == "procedure" and isinstance(row.get("end_time"), datetime) and not is_clock(window):
            # a day, a stay or "3 days ago": any part of a procedure that lasts (a 19-day therapy regime) counts;
            # a clock time names when it was done, its start (below), not any minute of it
            return moment <= window.end and row["end_time"] >= window.start
        return window.contains(moment)

    def _pairs(self, row: Row) -> list[tuple[float, str]]:
        if self.view == "medication":
            return strengths(row)
        value = row.get("value")
        return [(float(value), str(row.get("unit") or ""))] if value is not None else []

    def value_ok(self, row: Row, raw: bool = False) -> bool:
        """The note's value equals the row's (converted to the note's unit unless ``raw``)."""
        ent = self.ent
        for value, unit in self._pairs(row):
            if raw:
                if _equal(ent.value, value, ent):  # type: ignore[arg-type]
                    return True
                continue
            target = note_unit(ent, unit) if self.view == "observation" else (ent.unit or unit)
            converted = convert(value, unit, target, str(row.get("name") or "")) if unit else value
            if converted is not None and _equal(ent.value, converted, ent):  # type: ignore[arg-type]
                return True
        return False

    def unit_ok(self, row: Row) -> bool:
        """The note's unit is the record's or convertible to it."""
        analyte = str(row.get("name") or "")
        return any(not unit or compatible(self.ent.unit, unit, analyte) for _, unit in self._pairs(row))

    def frequency_ok(self, row: Row) -> bool:
        """The written frequency matches the order's (when the order has one)."""
        want, have = per_day(self.ent.frequency), row_per_day(row)
        return have is None or want is None or abs(want - have) < 1e-6

    def holds(self, row: Row, without: str = "") -> bool:
        """All predicates but ``without``; dropping the unit compares raw numbers."""
        for name, pred in self.preds.items():
            if name == without:
                continue
            if name == "value" and without == "unit":
                if not self.value_ok(row, raw=True):
                    return False
            elif not pred(row):
                return False
        return True


def _distance(view: str, rows: list[Row], ent: Entity) -> timedelta:
    window = ent.time
    best = timedelta.max
    for row in rows:
        moment = row_time(view, row)
        if moment is None or window is None:
            continue
        gap = window.start - moment if moment < window.start else (moment - window.end if moment > window.end else timedelta(0))
        best = min(best, gap)
    return best


def describe(ent: Entity, match: Match) -> str:
    """The verification query, readable."""
    parts = [f"{match.view} WHERE item IN ({', '.join(repr(n) for n in match.names[:4])}"
             + (", …" if len(match.names) > 4 else "") + ")"]
    if ent.time is not None:
        op = "≤ " + ent.time.end.isoformat(timespec="minutes") if (
            match.view == "condition" or (match.view == "medication" and ent.context == "listed")
        ) else f"BETWEEN {ent.time.start.isoformat(timespec='minutes')} AND {ent.time.end.isoformat(timespec='minutes')}"
        parts.append(f"time {op}")
    if ent.cls == "T1" and ent.value is not None:
        tolerance = 0.5 * 10 ** (-ent.decimals)
        cmp = ent.comparator or "≈"
        parts.append(f"value {cmp} {ent.value_text}" + ("" if ent.comparator else f" ±{tolerance:g}")
                     + (f" {ent.unit}" if ent.unit else ""))
    if ent.frequency:
        parts.append(f"frequency = {ent.frequency}")
    return " AND ".join(parts)


def _brief(view: str, row: Row) -> Row:
    keys = {"observation": ("ref", "name", "value", "unit", "time"),
            "medication": ("ref", "kind", "medication_name", "dose", "dose_unit", "frequency", "period", "period_unit", "time"),
            "condition": ("ref", "name", "onset_time", "abatement_time"), "procedure": ("ref", "name", "start_time", "end_time"),
            "immunization": ("ref", "name", "time")}[view]
    return {k: row.get(k) for k in keys if row.get(k) is not None}


def _nearest(view: str, rows: list[Row], ent: Entity, limit: int = 3) -> list[Row]:
    if ent.time is None:
        return rows[:limit]
    mid = ent.time.start + (ent.time.end - ent.time.start) / 2
    return sorted(rows, key=lambda r: abs((row_time(view, r) or mid) - mid))[:limit]


def verify(ent: Entity, match: Match, rows: list[Row]) -> Check:
    """Check one entity against the rows of its matched items."""
    view = match.view
    check = Check(ent, "inconsistent", items=list(match.names), how=match.how, query=describe(ent, match))
    if ent.skip:
        check.status, check.reason = "unverifiable", f"not checked: {ent.skip}"
        return check
    if view == "allergy":
        check.status, check.reason = "unverifiable", "named as an allergen (in the allergy list), not a drug given"
        return check
    name_field = "medication_name" if view == "medication" else "name"
    wanted = set(match.names)
    cand = [r for r in rows if r.get(name_field) in wanted]
    if not cand:
        check.fields = ["existence"]
        near = f"; nearest items: {', '.join(match.candidates[:3])}" if match.candidates else ""
        check.reason = match.reason or f"no {view} item matches {ent.search or ent.name!r}{near}"
        return check
    conds = Conditions(ent, view)
    full = [r for r in cand if conds.holds(r)]
    if full:
        check.status, check.reason = "consistent", f"{len(full)} matching row(s)"
        check.rows = [_brief(view, r) for r in _nearest(view, full, ent)]
        return check
    singles = {name: [r for r in cand if conds.holds(r, without=name)] for name in conds.preds}
    singles = {k: v for k, v in singles.items() if v}
    field = _choose(view, singles, ent)
    if field:
        check.fields = [field]
        check.rows = [_brief(view, r) for r in _nearest(view, singles[field], ent)]
    else:
        pairs = [(a, b) for a in conds.preds for b in conds.preds if a < b]
        for a, b in pairs:
            hit = [r for r in cand if all(p(r) for n, p in conds.preds.items() if n not in (a, b))]
            if hit:
                check.fields = sorted({a, b})
                check.rows = [_brief(view, r) for r in _nearest(view, hit, ent)]
                break
        else:
            check.fields = [f for f in ("value", "time") if f in conds.preds] or ["existence"]
            check.rows = [_brief(view, r) for r in _nearest(view, cand, ent)]
    check.reason = f"{', '.join(check.fields)} disagree{'s' if len(check.fields) == 1 else ''} with the record"
    return check


def _choose(view: str, singles: dict[str, list[Row]], ent: Entity) -> str | None:
    if not singles:
        return None
    if len(singles) == 1:
        return next(iter(singles))
    if "unit" in singles:
        return "unit"
    if "time" in singles and "value" in singles:
        return "time" if _distance(view, singles["time"], ent) <= NEAR else "value"
    return next(iter(singles))
