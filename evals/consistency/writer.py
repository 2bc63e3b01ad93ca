"""Note text with tracked spans: every labelled entity knows where its name and value sit in the note."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

KG_PER_LB = 0.45359237
CM_PER_IN = 2.54


@dataclass
class Gold:
    """One labelled entity of a note."""

    type: str  # lab, vital, medication, condition, procedure, immunization
    cls: str  # T1 (numeric value) or T2 (existence)
    name: str
    name_span: tuple[int, int]
    label: str  # consistent, inconsistent, unverifiable
    mismatch: str | None = None  # value, unit, time, existence, wrong_drug
    value: str = ""
    value_span: tuple[int, int] | None = None
    unit: str = ""
    time_text: str = ""
    time_kind: str = "default"  # explicit, narrative, default
    code: str = ""
    truth: str = ""  # what the record holds, readable
    why: str = ""  # for unverifiable statements: why they cannot be checked

    def to_json(self) -> dict[str, Any]:
        """The entity as stored in the labelled set."""
        out: dict[str, Any] = {
            "type": self.type, "class": self.cls, "name": self.name, "name_span": list(self.name_span),
            "label": self.label, "mismatch": self.mismatch,
        }
        if self.value_span is not None:
            out |= {"value": self.value, "value_span": list(self.value_span), "unit": self.unit}
        out |= {"time_text": self.time_text, "time_kind": self.time_kind, "code": self.code, "truth": self.truth}
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class Note:
    """A note being written: text so far and the entities placed in it."""

    parts: list[str] = field(default_factory=list)
    size: int = 0
    golds: list[Gold] = field(default_factory=list)

    def put(self, text: str) -> tuple[int, int]:
        """Append text; return its span."""
        start = self.size
        self.parts.append(text)
        self.size += len(text)
        return start, self.size

    def rollback(self, size: int) -> None:
        """Drop text written after ``size`` (only plain text: entities placed there are kept out of it)."""
        while self.size > size and self.parts:
            last = self.parts.pop()
            self.size -= len(last)
            if self.size < size:
                self.parts.append(last[: size - self.size])
                self.size = size

    def line(self, text: str = "") -> None:
        """Append a line of plain text."""
        self.put(text + "\n")

    def mention(self, pieces: list[tuple[str, str | None]]) -> dict[str, tuple[int, int]]:
        """Append pieces of text; pieces tagged ``name``/``value``/``unit`` get their spans returned."""
        spans: dict[str, tuple[int, int]] = {}
        for text, role in pieces:
            span = self.put(text)
            if role:
                spans[role] = span
        return spans

    @property
    def text(self) -> str:
        """The note so far."""
        return "".join(self.parts)


def fmt(value: float, decimals: int) -> str:
    """A value written at a clinician's precision (never "-0")."""
    text = f"{value:.{decimals}f}"
    return "0" if text in ("-0", "-0.0") else text


def to_note_unit(value: float, record_unit: str, note_unit: str) -> float | None:
    """The record's value expressed in the unit a note writes; None when that unit is not the record's."""
    ru, nu = record_unit.lower(), note_unit.lower().strip()
    if nu in ("", ru) or (ru, nu) in _SAME:
        return value
    if ru == "kg" and nu in ("lb", "lbs"):
        return value / KG_PER_LB
    if ru == "cm" and nu == "in":
        return value / CM_PER_IN
    if ru == "cel" and nu == "f":
        return value * 9 / 5 + 32
    return None


_SAME = {("mmol/l", "meq/l"), ("10*3/ul", "k/ul"), ("10*3/ul", "x10^3/ul"), ("10*6/ul", "m/ul"),
         ("cel", "c"), ("mm[hg]", "mmhg"), ("mg/dl", "mg/dl"), ("{score}", "/10"), ("ml/min/{1.73_m2}", "ml/min/1.73m2"),
         ("ml/min", "ml/min/1.73m2")}


def clock(moment: datetime, style: int) -> str:
    """A time of day the way notes write it: 0529, 05:29, 5:29am."""
    if style == 0:
        return moment.strftime("%H%M")
    if style == 1:
        return moment.strftime("%H:%M")
    hour = moment.hour % 12 or 12
    if style == 3:
        return moment.strftime("%H%Mh")
    if style == 4:
        return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"
    if style == 5:
        return moment.strftime("%H%M hrs")
    return f"{hour}:{moment.minute:02d}{'am' if moment.hour < 12 else 'pm'}"


def date_text(moment: datetime, style: int) -> str:
    """A date the way notes write it: 3/1/2015, 03/01/15, Mar 1, 2015, 2015-03-01, 3/1."""
    if style == 0:
        return f"{moment.month}/{moment.day}/{moment.year}"
    if style == 1:
        return moment.strftime("%m/%d/%y")
    if style == 2:
        return f"{moment.strftime('%b')} {moment.day}, {moment.year}"
    if style == 3:
        return moment.strftime("%Y-%m-%d")
    if style == 5:
        return f"{moment.month}-{moment.day}-{moment.year}"
    if style == 6:
        return f"{moment.day} {moment.strftime('%b')} {moment.year}"
    if style == 7:
        return moment.strftime("%m/%d/%Y")
    return f"{moment.month}/{moment.day}"


def feet_inches(cm: float) -> tuple[str, float]:
    """Height as 5'4" and the value in inches it stands for."""
    inches = round(cm / CM_PER_IN)
    return f"{inches // 12}'{inches % 12}\"", float(inches)
