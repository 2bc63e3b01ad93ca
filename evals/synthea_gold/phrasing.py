"""How questions are worded: voices, date formats and window phrases (all chosen by a seeded RNG)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime

from . import timeutil as tu
from .record import PatientRecord

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


@dataclass(frozen=True)
class Voice:
    """Who is speaking about whom: grammatical forms for one perspective."""

    poss: str  # her / his / my / the patient's / Maria's
    subj: str  # she / he / I / the patient / Maria
    obj: str  # her / him / me / the patient / Maria
    has: str  # has / have
    is_: str  # is / am
    does: str  # does / do
    own: str  # the possessive that refers back to the subject: her / his / my
    was: str = "was"


def voices(record: PatientRecord) -> list[tuple[Voice, int]]:
    """The perspectives available for a patient, with weights."""
    female = record.gender == "female"
    own = "her" if female else "his"
    pron = Voice(own, "she" if female else "he", "her" if female else "him", "has", "is", "does", own)
    patient = Voice("the patient's", "the patient", "the patient", "has", "is", "does", own)
    me = Voice("my", "I", "me", "have", "am", "do", "my")
    name = Voice(f"{record.given}'s", record.given, record.given, "has", "is", "does", own)
    return [(pron, 5), (patient, 3), (me, 2), (name, 2)]


def pick_voice(rng: random.Random, record: PatientRecord) -> Voice:
    """One voice, weighted towards pronouns."""
    options = voices(record)
    return rng.choices([v for v, _ in options], weights=[w for _, w in options])[0]


def fill(template: str, voice: Voice | None = None, **values: str) -> str:
    """Fill a template and capitalise its first letter (leaving abbreviations such as "K" alone)."""
    fields = dict(values)
    if voice is not None:
        fields.update(poss=voice.poss, subj=voice.subj, obj=voice.obj, has=voice.has, is_=voice.is_,
                      does=voice.does, was=voice.was, own=voice.own)
    text = template.format(**fields)
    return text[0].upper() + text[1:] if text and text[0].islower() else text


def fmt_date(day: date, rng: random.Random) -> str:
    """A date the way people write it: ISO, "March 4, 2019", "3/4/2019" (US order) or "Mar 4, 2019"."""
    style = rng.randrange(4)
    if style == 0:
        return day.isoformat()
    if style == 1:
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if style == 2:
        return f"{day.month}/{day.day}/{day.year}"
    return f"{MONTHS[day.month - 1][:3]} {day.day}, {day.year}"


@dataclass(frozen=True)
class WindowPhrase:
    """A window and the words that name it."""

    window: tu.Window
    text: str  # "in the last 6 months", "in 2017", "since January 2018", "between … and …"
    kind: str  # last | year | since | between


def _last_text(amount: int, unit: str, rng: random.Random) -> str:
    singular = unit[:-1]
    noun = f"{amount} {unit}" if amount != 1 else singular
    if amount == 1:
        return rng.choice([f"in the past {singular}", f"over the last {singular}", f"in the last {singular}"])
    if unit == "years" and rng.random() < 0.3:
        return f"over the past {amount} yrs"
    return rng.choice([f"in the last {noun}", f"over the past {noun}", f"in the past {noun}",
                       f"during the last {noun}"])


def last_window(now: datetime, amount: int, unit: str, rng: random.Random) -> WindowPhrase:
    """"last N units" relative to now."""
    return WindowPhrase(tu.last(now, amount, unit), _last_text(amount, unit, rng), "last")


def year_window(year: int, rng: random.Random) -> WindowPhrase:
    """"in 2017"."""
    return WindowPhrase(tu.in_year(year), rng.choice([f"in {year}", f"during {year}", f"in calendar year {year}"]),
                        "year")


def since_window(day: date, now: datetime, rng: random.Random) -> WindowPhrase:
    """"since X": the first of a month is said as "since March 2016", other days as a date."""
    if day.day == 1 and rng.random() < 0.7:
        text = f"since {MONTHS[day.month - 1]} {day.year}"
    else:
        text = f"since {fmt_date(day, rng)}"
    return WindowPhrase(tu.since(day, now), text, "since")


def between_window(first: date, second: date, rng: random.Random) -> WindowPhrase:
    """"between A and B" (both days included)."""
    a, b = fmt_date(first, rng), fmt_date(second, rng)
    text = rng.choice([f"between {a} and {b}", f"from {a} to {b}", f"between {a} and {b}"])
    return WindowPhrase(tu.between(first, second), text, "between")


def fmt_number(value: float, decimals: int) -> str:
    """A threshold as a clinician writes it (``5.0``, ``140``, ``18.5``)."""
    if decimals == 0 and float(value).is_integer():
        return str(int(value))
    return f"{value:.{max(decimals, 1)}f}"
