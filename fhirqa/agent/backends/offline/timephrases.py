"""Time phrases in questions → explicit windows, resolved against ``now``.

"in the last 6 months", "past year", "since March 2018", "in 2017", "between 1/2/2016 and
2017-06-30", "before 2019-01-01", "on 3 May 2019", "yesterday", "this year"; calendar windows ("Q3 2025",
"YTD", "on Monday", "overnight"); and event-anchored windows ("HD#2", "POD1", "before her last admission",
"first Cr after discharge", "in the 48 h before discharge", "the day after the chest x-ray", "at her last
visit", "between her two admissions"), whose :class:`Anchor` the plan resolves from the record. The matched
text is returned so the parser can remove it before looking for the clinical entity. The words are data
(``lexicon/time_anchors.json``).
"""

from __future__ import annotations

import calendar
import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.tools.localtime import FLOATING, within
from fhirqa.agent.tools.localtime import day_end as _day_end
from fhirqa.agent.tools.localtime import day_start as _day_start

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "eighteen": 18, "twenty": 20,
    "thirty": 30, "few": 3, "couple of": 2, "couple": 2,
}
_UNIT = r"(days?|d|weeks?|wks?|w|months?|mos?|years?|yrs?|y|hours?|hrs?|h)"
# A unit ends its word: an abbreviated unit joined to more letters by "/", "&" or "-" is part of another word
# ("last d/c" is a discharge, "last H&P" a note, "past D-dimer" a lab), never the last day or hour.
_UNIT_END = r"\b(?![/&-]?\w)"
_AMOUNT = r"(\d+|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"

# A date in any of the formats people type; named groups are read by _to_date.
_YEAR = r"(?:\d{4}|'\d{2})"  # 2019, or '19 as people type it

DATE = (
    r"(?:(?P<iso>\d{4}-\d{1,2}-\d{1,2})(?:[t ]\d{1,2}:\d{2}(?::\d{2})?(?:z|[+-]\d{2}:?\d{2})?)?"
    r"|(?P<us>\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}-\d{1,2}-\d{4})"
    r"|(?P<mslash>\d{1,2})/(?P<mslash_y>\d{4})"
    rf"|(?P<mdy>{_MONTH})\.? (?P<mdy_d>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<mdy_y>{_YEAR})"
    rf"|(?P<dmy_d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<dmy>{_MONTH})\.?,? (?:of )?(?P<dmy_y>{_YEAR})"
    rf"|(?P<my>{_MONTH})\.?,? (?:of )?(?P<my_y>{_YEAR})"
    rf"|(?P<md>{_MONTH})\.? (?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?(?![\d,.:/]|\s*(?:mg|mcg|g|units?|ml|%|am|pm|h|hrs?)\b)"
    rf"|(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<dm>{_MONTH})\b\.?(?!,? (?:of )?(?:\d|'))"
    r"|(?P<ym>\d{4}-\d{1,2})(?!\d|-)"
    r"|(?:(?<=on )|(?<=of )|(?<=for )|(?<=since )|(?<=from )|(?<=before )|(?<=after )|(?<=until )|(?<=and )|(?<=to )|(?<=thru )|(?<=between )"
    # "the 10/7 DC summary", "the 11/12 ED visit": a year-less day naming a note or visit (not "the 1/2 tab")
    r"|(?<=the )(?=\d{1,2}/\d{1,2}\s+(?:h&p|dc\b|discharge|progress|ed\b|er\b|notes?\b|visit|summary|clinic|admission|"
    r"stay|encounter|history and physical)))"
    r"(?P<mdn>1[0-2]|0?[1-9])/(?P<mdn_d>3[01]|[12]\d|0?[1-9])(?![\d/.])"  # "on 6/23": month/day, no year
    r"|(?P<y>(?:19|20)\d{2}(?!\d|,\d)(?!\s*(?:mg|mcg|g|kg|units?|iu|ml|meq|mmol)\b)|'\d{2})"
    # "in March", "since May": a month named alone, after a preposition (so the verb "may" never is one)
    r"|(?:(?<=in )|(?<=during )|(?<=since )|(?<=from )|(?<=until )|(?<=through )|(?<=thru )|(?<=before )|(?<=after ))"
    rf"(?P<mo>{_MONTH})\b\.?(?!\s*\d)(?!,? (?:of )?')"
    r")"
)


@dataclass(frozen=True)
class Anchor:
    """An event of the record a window hangs on, and where the window lies from it.

    ``event``: ``stay`` (an inpatient stay; ``which`` = -1 the latest, -2 the one before it), ``surgery``
    (the latest operation), ``procedure`` (the latest one called ``name``), ``drug`` (the first order of
    ``name``), ``visit`` (the latest encounter of any class). ``relation``: ``during`` the event, ``before``
    or ``after`` its ``edge`` (start or end), ``day`` (the calendar day ``amount`` days from the edge's day),
    ``hours_before`` / ``hours_after`` (the ``amount`` hours up to / from the edge), ``between`` (the end of the stay before last to
    the start of the last), ``at`` (within the event), ``since`` (the event's start to now), ``within``
    (the window's own calendar span, kept only inside the event).
    """

    event: str
    relation: str
    which: int = -1
    name: str | None = None
    amount: int = 0
    edge: str = "start"


@dataclass(frozen=True)
class Window:
    """An inclusive time window; either end may be open. ``label`` says it the way the question did.

    Calendar bounds (a day, a month, a year, a weekday, overnight's 19:00 and 07:00) are floating: read on each
    record's own clock, so "on 6/12" is the record's local June 12 (``fhirqa.agent.tools.localtime``). Bounds
    taken from ``now`` or from an event's instant ("the last 48 h", "since admission") are instants.
    """

    start: datetime | None
    end: datetime | None
    label: str
    anchor: str | None = None  # "admission": the current stay; "event": resolved from ``event`` by the plan
    event: Anchor | None = None
    # the window rests on clock bounds the question only implied ("this morning" = 06:00-12:00): every answer
    # over it says them, so the clinician sees the assumption (plans.say_window)
    said: bool = False

    def contains(self, when: datetime) -> bool:
        """True when ``when`` falls inside the window (calendar bounds on ``when``'s own clock)."""
        return within(when, self.start, self.end)


@dataclass(frozen=True)
class DateSpan:
    """A date phrase as a span: a day, a month or a year."""

    start: datetime
    end: datetime  # inclusive end (last microsecond of the span)


_NOW_YEAR: list[int] = []  # the question's year while a phrase is parsed (see parse_date / find_window)
_NOW_DAY: list[date] = []  # the question's day, for a month and day written without a year


def _year(text: str | None) -> int:
    """A year as written: 2019, or '19 / 19 (the last century when this one's would be after the question's year)."""
    assert text is not None
    digits = text.lstrip("'")
    if len(digits) <= 2:
        two = int(digits)
        current = _NOW_YEAR[-1] if _NOW_YEAR else datetime.now(UTC).year
        return 2000 + two if 2000 + two <= current else 1900 + two
    return int(digits)


def _span(groups: dict[str, str | None]) -> DateSpan | None:
    try:
        if groups.get("iso"):
            y, m, d = (int(x) for x in groups["iso"].split("-"))  # type: ignore[union-attr]
            day = date(y, m, d)
            return DateSpan(_day_start(day), _day_end(day))
        if groups.get("us"):
            month_text, day_text, written = re.split(r"[/-]", groups["us"])  # type: ignore[arg-type]
            day = date(_year(written), int(month_text), int(day_text))  # 10/17/93 is 1993: two digits read like '93
            return DateSpan(_day_start(day), _day_end(day))
        if groups.get("mdy"):
            day = date(_year(groups["mdy_y"]), _MONTHS[groups["mdy"][:3]], int(groups["mdy_d"]))  # type: ignore[index,arg-type]
            return DateSpan(_day_start(day), _day_end(day))
        if groups.get("dmy"):
            day = date(_year(groups["dmy_y"]), _MONTHS[groups["dmy"][:3]], int(groups["dmy_d"]))  # type: ignore[index,arg-type]
            return DateSpan(_day_start(day), _day_end(day))
        if groups.get("md") or groups.get("dm") or groups.get("mdn"):
            # "Nov 29", "29th of November", "11/29": the latest such day up to the question's day
            named = groups.get("md") or groups.get("dm")
            month = _MONTHS[named[:3]] if named else int(groups["mdn"] or 0)
            number = int(groups.get("md_d") or groups.get("dm_d") or groups.get("mdn_d") or 0)
            today = _NOW_DAY[-1] if _NOW_DAY else datetime.now(UTC).date()
            day = date(today.year, month, number)
            if day > today:
                day = date(today.year - 1, month, number)
            return DateSpan(_day_start(day), _day_end(day))
        if groups.get("my") or groups.get("ym") or groups.get("mslash"):
            if groups.get("my"):
                y, m = _year(groups["my_y"]), _MONTHS[groups["my"][:3]]  # type: ignore[index]
            elif groups.get("mslash"):
                y, m = int(groups["mslash_y"]), int(groups["mslash"])  # type: ignore[arg-type]
            else:
                y, m = (int(x) for x in groups["ym"].split("-"))  # type: ignore[union-attr]
            last = calendar.monthrange(y, m)[1]
            return DateSpan(_day_start(date(y, m, 1)), _day_end(date(y, m, last)))
        if groups.get("mo"):
            # a month without a year: the latest such month up to the question's day (this one included)
            m = _MONTHS[groups["mo"][:3]]  # type: ignore[index]
            today = _NOW_DAY[-1] if _NOW_DAY else datetime.now(UTC).date()
            y = today.year if m <= today.month else today.year - 1
            return DateSpan(_day_start(date(y, m, 1)), _day_end(date(y, m, calendar.monthrange(y, m)[1])))
        if groups.get("y"):
            y = _year(groups["y"])
            return DateSpan(_day_start(date(y, 1, 1)), _day_end(date(y, 12, 31)))
    except (ValueError, KeyError):
        return None
    return None


def parse_date(text: str, now: datetime | None = None) -> DateSpan | None:
    """The span of a single date phrase ("March 4, 2019", "2019-03", "2018"), or None."""
    match = re.fullmatch(DATE, text.strip().lower())
    if not match:
        return None
    _NOW_YEAR.append((now or datetime.now(UTC)).year)
    _NOW_DAY.append((now or datetime.now(UTC)).date())
    try:
        return _span(match.groupdict())
    finally:
        _NOW_YEAR.pop()
        _NOW_DAY.pop()


def shift(moment: datetime, amount: int, unit: str) -> datetime:
    """``moment`` moved back by ``amount`` units (calendar arithmetic for months and years)."""
    unit = unit.rstrip("s")
    unit = {"d": "day", "w": "week", "wk": "week", "mo": "month", "y": "year", "yr": "year", "h": "hour"}.get(unit, unit)
    if unit in ("day", "d"):
        return moment - timedelta(days=amount)
    if unit in ("week", "wk"):
        return moment - timedelta(weeks=amount)
    if unit in ("hour", "hr"):
        return moment - timedelta(hours=amount)
    months = amount * 12 if unit in ("year", "yr") else amount
    year, month = divmod(moment.month - 1 - months, 12)
    year += moment.year
    month += 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def _unit_name(unit: str) -> str:
    """The unit as a word: "mos" → "month", "d" → "day"."""
    unit = unit.rstrip("s")
    return {"d": "day", "w": "week", "wk": "week", "mo": "month", "y": "year", "yr": "year", "h": "hour",
            "hr": "hour"}.get(unit, unit)


def _amount(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else _NUMBER_WORDS.get(text, 1)


_RELATIVE = re.compile(
    rf"\b(?:in|over|during|within|for|from)?\s*(?:the\s+)?(?:last|past|previous|prior|preceding)\s+(?:{_AMOUNT}\s*)?{_UNIT}{_UNIT_END}(?!/)"
)
_AGO = re.compile(rf"\b{_AMOUNT}\s+{_UNIT}{_UNIT_END}\s+ago\b")
_BETWEEN = re.compile(
    rf"(?:\b(?:between|from)\s+(?:the\s+)?)?(?<![\w/-])(?P<a>{DATE})\s*(?:and|to|until|till|through|thru|vs\.?|versus|-|->|→|–)\s*"
    rf"(?:the\s+)?(?P<b>{DATE.replace('?P<', '?P<b_')})"
)
_SINCE = re.compile(rf"\b(?:since|after|from|starting(?: in| on)?)\s+(?:the\s+)?(?P<a>{DATE})")
_BEFORE = re.compile(rf"\b(?:before|prior to|until|up to|by)\s+(?:the\s+)?(?P<a>{DATE})")
_ON = re.compile(rf"\b(?:on|in|during|for|of|at|as of)\s+(?:the\s+)?(?P<a>{DATE})")
_BARE_DATE = re.compile(rf"(?P<a>{DATE})")
# A year in any century (MIMIC shifts its dates to 2100-2200) where the words say it is one: "in 2157",
# "during 2157", "since 2157", "before 2157", "CY2157"; never a quantity ("in 1000 mg", "for 2000 units").
_ANY_YEAR = r"(?P<y>\d{4})(?!\d|[,.:/-]\d)(?!\s*(?:mg|mcg|g|kg|units?|u|iu|ml|cc|%|meq|mmol|lbs?|pounds|cm|hrs?|hours?|h)\b)"
_YEAR_IN = re.compile(rf"\b(?P<word>in|during|for|throughout|within|as of|since|after|from|before|prior to|until)\s+(?:the\s+)?(?:year\s+)?{_ANY_YEAR}")
_THIS = re.compile(r"\b(?:this|the current)\s+(year|yr|month|mo|mth|week|wk)\b")
# "during her last admission", "first K of her last admission", and in shorthand with no preposition at all
# ("lowest SpO2 last admit", "Cr at admit last admission"); "current" needs its preposition ("current admission"
# alone is this admission, read below)
_LAST_STAY_NOUN = r"(?:hospital admission|admission|admit|hospitali[sz]ation|hospital stay|inpatient stay|stay|hospital visit)"
_LAST_ADMISSION = re.compile(
    r"\b(?:during|in|on|over|throughout|for|of)\s+(?:the\s+|her\s+|his\s+|my\s+|their\s+)?(?:(?:patient|pt)(?:'s)?\s+)?"
    rf"(?:last|latest|most recent|recent|current)\s+{_LAST_STAY_NOUN}\b"
    r"|(?<![\w-])(?:(?:the|her|his|my|their)\s+)?(?:(?:patient|pt)(?:'s)?\s+)?(?:last|latest|most recent)\s+"
    rf"{_LAST_STAY_NOUN}\b"
)

# The stay the patient is in now (or the latest one): "this admission", "since admit", "since she came in",
# "during this stay", "on admission", "admission K+". Resolved by the plan against the encounter view.
_SUBJ = r"(?:she|he|they|the patient|the pt|pt|patient)"
_STAY = r"(?:admission|admit|hospitali[sz]ation|hospital stay|inpatient stay|stay|hospital course)"
_CURRENT_ADMISSION = re.compile(
    rf"\b(?:since|from|after|during|throughout|over|for|in|of)?\s*(?:this|the current|current|her current|his current)\s+{_STAY}\b"
    rf"|\b(?:since|from)\s+(?:(?:her|his|their|the)\s+)?(?:admission|admit|being admitted|{_SUBJ} (?:was |were )?(?:admitted|came in|arrived))\b"
    rf"|\b(?:since|from) (?:she|he|they) (?:came in|got here|arrived)\b"
)
# "on arrival" is "on admission" too: the first value of the stay (the H&P's "Vitals on arrival")
_ON_ADMISSION = re.compile(r"\b(?:on|at|upon)\s+(?:(?:her|his|their|the)\s+)?(?:admission|arrival)\b|^admission\s+(?!dates?\b|times?\b|days?\b|to\b|for\b|when\b)(?=[a-z])")


@dataclass(frozen=True)
class TimeMatch:
    """A window and the characters of the question it came from."""

    window: Window
    start: int
    end: int
    kind: str  # relative, between, since, before, on, this, today, yesterday, admission, current_admission, on_admission, ago


def _b_groups(groups: dict[str, str | None]) -> dict[str, str | None]:
    return {k[2:]: v for k, v in groups.items() if k.startswith("b_")}


def find_window(text: str, now: datetime) -> TimeMatch | None:
    """The first time phrase in lower-cased ``text`` as a window relative to ``now``."""
    text = re.sub(r"\bcy\s?(\d{4})\b", lambda m: f"in {m.group(1)}".ljust(len(m.group(0))), text)  # "CY2025": calendar year
    _NOW_YEAR.append(now.year)
    _NOW_DAY.append(now.date())
    try:
        return _find_window(text, now)
    finally:
        _NOW_YEAR.pop()
        _NOW_DAY.pop()


def _find_window(text: str, now: datetime) -> TimeMatch | None:
    if found := day_part_window(text, now):  # first: "last night shift" is a shift, not "last night"
        return found
    if found := _calendar_window(text, now):  # first: "overnight during his admission" is the night, in the stay
        return found
    if found := _event_window(text):
        return found
    if m := _LAST_ADMISSION.search(text):
        anchor = Anchor("stay", "during")
        return TimeMatch(Window(None, None, "during the last admission", anchor="event", event=anchor), *m.span(), "admission")
    if m := _BETWEEN.search(text):
        a, b = _span(m.groupdict()), _span(_b_groups(m.groupdict()))
        if a and b:
            return TimeMatch(Window(a.start, b.end, f"between {a.start.date()} and {b.end.date()}"), *m.span(), "between")
    if m := _RELATIVE.search(text):
        amount = _amount(m.group(1) or "1")
        start = shift(now, amount, m.group(2))
        unit = _unit_name(m.group(2))
        return TimeMatch(Window(start, now, f"in the last {amount} {unit}{'s' if amount != 1 else ''}"), *m.span(), "relative")
    if m := _AGO.search(text):
        amount = _amount(m.group(1))
        moment = shift(now, amount, m.group(2))
        day = moment.date()
        return TimeMatch(Window(_day_start(day), _day_end(day), f"{amount} {m.group(2)} ago"), *m.span(), "ago")
    if m := _THIS.search(text):
        unit = _unit_name(m.group(1)).replace("mth", "month")
        if unit == "year":
            start = _day_start(date(now.year, 1, 1))
        elif unit == "month":
            start = _day_start(date(now.year, now.month, 1))
        else:
            start = _day_start(now.date() - timedelta(days=now.weekday()))
        return TimeMatch(Window(start, now, f"this {unit}"), *m.span(), "this")
    if m := re.search(r"\btoday\b", text):
        return TimeMatch(Window(_day_start(now.date()), now, "today"), *m.span(), "today")
    if m := re.search(r"\byesterday\b", text):
        day = now.date() - timedelta(days=1)
        return TimeMatch(Window(_day_start(day), _day_end(day), "yesterday"), *m.span(), "yesterday")
    if m := _SINCE.search(text):
        a = _span(m.groupdict())
        if a:
            word = m.group(0).split()[0]
            start = a.end if word == "after" else a.start
            return TimeMatch(Window(start, now, f"since {a.start.date()}"), *m.span(), "since")
    if m := _BEFORE.search(text):
        a = _span(m.groupdict())
        if a:
            return TimeMatch(Window(None, a.start - timedelta(microseconds=1), f"before {a.start.date()}"), *m.span(), "before")
    if (m := _YEAR_IN.search(text)) and not _ON.search(text):
        y = int(m.group("y"))
        first, last = _day_start(date(y, 1, 1)), _day_end(date(y, 12, 31))
        word = m.group("word")
        if word in ("since", "after", "from"):
            return TimeMatch(Window(last if word == "after" else first, now, f"since {first.date()}"), *m.span(), "since")
        if word in ("before", "prior to", "until"):
            return TimeMatch(Window(None, first - timedelta(microseconds=1), f"before {first.date()}"), *m.span(), "before")
        return TimeMatch(Window(first, last, f"in {y}"), *m.span(), "on")
    if m := _ON.search(text) or _BARE_DATE.search(text):
        a = _span(m.groupdict())
        if a:
            label = f"on {a.start.date()}" if (a.end - a.start) < timedelta(days=2) else f"in {m.group('a')}"
            return TimeMatch(Window(a.start, a.end, label), *m.span(), "on")
    # the current stay comes last: a dated phrase ("glucose on admission on 7/18/2025") names its own day
    if m := _ON_ADMISSION.search(text):
        return TimeMatch(Window(None, None, "on admission", anchor="admission"), *m.span(), "on_admission")
    if m := _CURRENT_ADMISSION.search(text):
        return TimeMatch(Window(None, None, "this admission", anchor="admission"), *m.span(), "current_admission")
    return None


# --- event-anchored and calendar windows (words in lexicon/time_anchors.json) ----------------------------------


@lru_cache(maxsize=1)
def anchor_words() -> dict[str, Any]:
    """The words of anchored and calendar windows (``lexicon/time_anchors.json``)."""
    from fhirqa.project import lexicon_file

    return lexicon_file("time_anchors.json")


def _alt(words: Any) -> str:
    """A regex alternation of ``words``, longest first, each escaped (spaces match any blank run)."""
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)) + ")"


_POSS = r"(?:(?:her|his|their|the|my|pt's|patient's)\s+)?(?:(?:patient|pt)(?:'s)?\s+)?"  # "the patient last stay": a name read out


@lru_cache(maxsize=1)
def _event_patterns() -> list[tuple[str, re.Pattern[str]]]:
    w = anchor_words()
    stay, stays, dc = _alt(w["stay_nouns"]), _alt(w["stay_nouns_plural"]), _alt(w["discharge_nouns"])
    latest, before, after = _alt(w["latest_words"]), _alt(w["before_words"]), _alt(w["after_words"])
    during, visit = _alt(w["during_words"]), _alt(w["visit_nouns"])
    # a stay: "her last admission", "the first hospitalization", "the admission before last" (which: see _which)
    sel = rf"(?:(?P<sel>{latest}|{_alt(w['first_words'])})\s+)?"
    prev = rf"(?:\s+(?P<prev>{_alt(w['previous_stay_words'])}))?"
    last_stay = rf"{_POSS}{sel}{stay}{prev}"
    offset = _alt(w["offset_words"])
    amount = rf"(?P<k>\d{{1,2}}|{_alt(w['amount_words'])})"
    subject = r"(?:she|he|they|the patient|the pt|pt|patient)"
    return [
        # "HD#2", "hospital day 2", "on HD 3 of her last admission", "hosp day 2 last admit"
        # (never "HD 3 times a week": hemodialysis)
        ("hospital_day", re.compile(rf"\b(?:on\s+)?{_alt(w['hospital_day_words'])}\s*#?\s*(?P<n>\d{{1,2}})\b"
                                    rf"(?!\s*{_alt(w['hemodialysis_cues'])})"
                                    rf"(?:\s+(?:of\s+)?(?:{during}\s+)?{last_stay}\b)?")),
        # "day 2 of her last hospitalization", "the second hospital day", "the 3rd day of the stay"
        ("hospital_day", re.compile(rf"\b(?:on\s+)?(?:the\s+)?(?:day\s+(?P<n>\d{{1,2}})|(?P<ord>{_alt(w['ordinals'])})\s+"
                                    rf"(?:hospital\s+day|day))\s+(?:of|in)\s+{last_stay}\b"
                                    rf"|\b(?:on\s+)?(?:the\s+)?(?P<ord2>{_alt(w['ordinals'])})\s+hospital\s+day\b")),
        # "POD1", "post-op day 2", "on postoperative day 1"
        ("postop_day", re.compile(rf"\b(?:on\s+)?{_alt(w['postop_day_words'])}\s*#?\s*(?P<n>\d{{1,2}})\b")),
        # "in the 48 h before discharge", "the last 24 hours prior to his last discharge"
        ("hours_before", re.compile(rf"\b(?:(?:in|during|over|within)\s+)?(?:the\s+)?(?:(?:last|final)\s+)?(?P<n>\d{{1,3}})\s*-?\s*"
                                    rf"(?P<u>h|hr|hrs|hours?|d|days?)\s+{before}\s+{_POSS}(?:{latest}\s+)?{dc}\b")),
        # "the last 48 hours of her stay": the same window, said from the stay's end
        ("hours_before", re.compile(rf"\b(?:(?:in|during|over|within)\s+)?(?:the\s+)?(?:last|final)\s+(?P<n>\d{{1,3}})\s*-?\s*"
                                    rf"(?P<u>h|hr|hrs|hours?|d|days?)\s+of\s+{last_stay}\b")),
        # "in the first 24 h of admission", "within 48 hours after admission", "the 12 h after surgery"
        ("hours_after", re.compile(rf"\b(?:(?:in|during|over|within)\s+)?(?:the\s+)?(?:first\s+)?(?P<n>\d{{1,3}})\s*-?\s*"
                                   rf"(?P<u>h|hr|hrs|hours?|d|days?)\s+(?:of|after|following|post)\s+{_POSS}(?:{latest}\s+)?"
                                   rf"(?P<what>{stay}|{_alt(['surgery', 'operation'])})\b")),
        # "the admission before last", "her penultimate stay"
        ("previous_stay", re.compile(rf"\b(?:{during}\s+)?{_POSS}{stay}\s+{_alt(w['previous_stay_words'])}\b"
                                     rf"|\b(?:{during}\s+)?{_POSS}{_alt(w['previous_stay_adjectives'])}\s+{stay}\b")),
        # "between her two admissions", "between his last 2 hospitalizations"
        ("between_stays", re.compile(rf"\bbetween\s+{_POSS}(?:{latest}\s+)?(?:two|2)\s+{stays}\b")),
        # "the day before the appendectomy", "the day after his chest x-ray, 2 views", "the day after discharge"
        ("day_offset", re.compile(rf"(?<![\w/-])(?:on\s+)?(?:(?P<the>the)\s+|{amount}\s+(?=days))?(?:{_alt(w['day_nouns'])}|days)\s+(?P<off>{offset})\s+{_POSS}"
                                  rf"(?P<name>[a-z0-9][a-z0-9 ,&/+\-]*?)\s*(?=[?.!;]|$)")),
        # "before her last admission", "prior to the most recent admit"
        ("before_stay", re.compile(rf"\b{before}\s+{last_stay}\b")),
        # "after discharge", "post discharge", "since his last discharge"
        ("after_discharge", re.compile(rf"\b{after}\s+{_POSS}{sel}{dc}\b|\b{after}\s+{subject}\s+{_alt(w['discharged_verbs'])}\b"
                                       rf"|\bpost-{dc}\b")),
        # "first K after the chest x-ray", "how many K since the colonoscopy", "Hb before the cholecystectomy":
        # a procedure the procedure lexicon names (its terms and aliases), or an operation word
        ("around_procedure", re.compile(rf"\b(?P<rel>{after}|{before})\s+{_POSS}(?:{latest}\s+)?"
                                        rf"(?P<name>{_alt(_procedure_names())}|{_alt(['surgery', 'operation'])})\b")),
        # "Cr at discharge", "upon discharge": the last value of the stay
        ("at_discharge", re.compile(rf"\b{_alt(w['at_discharge_words'])}\b")),
        # "during his admission", "throughout her last hospitalization"
        ("during_stay", re.compile(rf"\b(?:during|throughout|over)\s+{last_stay}\b"
                                   rf"|\b(?:in|on|for)\s+{_POSS}(?P<sel2>{latest}|{_alt(w['first_words'])})\s+{stay}\b")),
        # "at her last visit", "@ last visit", "since the most recent appointment"
        ("at_visit", re.compile(rf"(?:\b(?:at|during|in|on)|@)\s*{_POSS}{latest}\s+{visit}\b")),
        ("since_visit", re.compile(rf"\bsince\s+{_POSS}{latest}\s+{visit}\b")),
        # "after surgery", "since the operation"
        ("after_surgery", re.compile(rf"\b(?:{after})\s+{_POSS}(?:{latest}\s+)?{_alt(['surgery', 'operation', 'op'])}\b")),
    ]


def _offset_named(name: str, off: int) -> Anchor:
    """"the day after <name>": a stay's admission or discharge, an operation, else a procedure by name."""
    w = anchor_words()
    name = re.sub(r"^(?:(?:her|his|their|the)\s+)?(?:(?:" + "|".join(map(re.escape, w["latest_words"])) + r")\s+)?", "", name.strip())
    name = re.sub(r"\s+(?:was|were)\s+(?:done|performed)$", "", name)
    started = re.fullmatch(rf"{_alt(w['drug_start_words'])}\s+(?P<d>.+)|(?P<e>.+?)\s+(?:was|were)\s+{_alt(w['started_words'])}", name)
    if started:  # "the day before starting heparin", "the day after vanc was started": the drug's first order
        return Anchor("drug", "day", name=(started.group("d") or started.group("e")).strip(), amount=off)
    if re.fullmatch(_alt(w["discharge_nouns"]), name):
        return Anchor("stay", "day", amount=off, edge="end")
    if re.fullmatch(_alt(w["stay_nouns"]), name):
        return Anchor("stay", "day", amount=off, edge="start")
    if re.fullmatch(_alt(w["surgery_nouns"]), name):
        return Anchor("surgery", "day", amount=off)
    return Anchor("procedure", "day", name=name, amount=off)


_ELAPSED = re.compile(r"\b(?:time|how long|long|days?|weeks?|months?|years?|hours?|wks?|mos?|yrs?|hrs?)\b[^.?!]*$")


@lru_cache(maxsize=1)
def _procedure_names() -> tuple[str, ...]:
    """Procedure terms and aliases of ``lexicon/procedures.json`` (lower case, three letters or more)."""
    from fhirqa.project import data_dir

    entries = json.loads((data_dir("lexicon") / "procedures.json").read_text(encoding="utf-8")).get("entries", [])
    names = {n.lower() for e in entries for n in [e.get("term", ""), *e.get("aliases", [])] if len(n) > 2}
    return tuple(sorted(names))


def _which(m: re.Match[str]) -> int:
    """Which stay a match names: 0 the first ("her first admission"), -2 "the admission before last", else -1."""
    groups = m.groupdict()
    if groups.get("prev"):
        return -2
    sel = (groups.get("sel") or groups.get("sel2") or "").strip()
    return 0 if sel and re.fullmatch(_alt(anchor_words()["first_words"]), sel) else -1


def _number(text: str) -> int:
    """A small count as written: "2", "two", "2nd", "second"."""
    w = anchor_words()
    return int(text) if text.isdigit() else int({**w["ordinals"], **w["amount_words"]}.get(text, 1))


def _event_window(text: str) -> TimeMatch | None:
    """The first event-anchored phrase of ``text`` (by kind, in the order of :func:`_event_patterns`)."""
    for kind, pattern in _event_patterns():
        m = pattern.search(text)
        if not m:
            continue
        phrase = m.group(0).strip()
        if phrase.startswith("since") and _ELAPSED.search(text[: m.start()]):
            continue  # "time since discharge", "days since her last visit": the event itself is asked about
        if kind == "hospital_day":
            n = _number(m.groupdict().get("n") or m.groupdict().get("ord") or m.groupdict().get("ord2") or "0")
            if n < 1:
                continue
            anchor = Anchor("stay", "day", which=_which(m), amount=n - 1, edge="start")
        elif kind == "postop_day":
            anchor = Anchor("surgery", "day", amount=int(m.group("n")))
        elif kind == "hours_before":
            hours = int(m.group("n")) * (24 if m.group("u").startswith("d") else 1)
            anchor = Anchor("stay", "hours_before", which=_which(m), amount=hours, edge="end")
        elif kind == "hours_after":
            hours = int(m.group("n")) * (24 if m.group("u").startswith("d") else 1)
            surgery = re.fullmatch(_alt(["surgery", "operation"]), m.group("what")) is not None
            anchor = Anchor("surgery" if surgery else "stay", "hours_after", amount=hours)
        elif kind == "previous_stay":
            anchor = Anchor("stay", "during", which=-2)
        elif kind == "between_stays":
            anchor = Anchor("stay", "between")
        elif kind == "day_offset":
            if m.group("off") == "of" and not m.group("the"):
                continue  # "doses/day of prednisone", "day of week": a rate or a name, not "the day of <event>"
            days = _number(m.group("k")) if m.group("k") else 1  # "2 days after discharge"
            anchor = _offset_named(m.group("name"), days * int(anchor_words()["offset_words"][re.sub(r"\s+", " ", m.group("off"))]))
        elif kind == "before_stay":
            anchor = Anchor("stay", "before", which=_which(m), edge="start")
        elif kind == "after_discharge":
            anchor = Anchor("stay", "after", which=_which(m), edge="end")
        elif kind == "around_procedure":
            rel = re.sub(r"\s+", " ", m.group("rel"))
            relation = "since" if rel == "since" else "before" if rel in anchor_words()["before_words"] else "after"
            name = m.group("name")
            surgery = re.fullmatch(_alt(["surgery", "operation"]), name) is not None
            anchor = Anchor("surgery" if surgery else "procedure", relation, name=None if surgery else name)
        elif kind == "at_discharge":
            if (d := _BARE_DATE.search(text)) is not None and _span(d.groupdict()) is not None:
                continue  # "Cr at discharge per the 10/7 summary": the written day names the discharge
            anchor = Anchor("stay", "during", edge="end")  # the stay's window; its latest value is the one at discharge
        elif kind == "during_stay":
            anchor = Anchor("stay", "during", which=_which(m))
        elif kind == "at_visit":
            anchor = Anchor("visit", "at")
        elif kind == "since_visit":
            anchor = Anchor("visit", "since")
        else:  # after_surgery
            anchor = Anchor("surgery", "after", edge="start")
        return TimeMatch(Window(None, None, phrase, anchor="event", event=anchor), *m.span(), "event")
    return None


def _calendar_window(text: str, now: datetime) -> TimeMatch | None:
    """Quarters ("Q3 2025"), year to date, weekday names ("on Monday") and "overnight", resolved against ``now``."""
    w = anchor_words()
    quarter = re.search(rf"\b(?:(?:in|during|for|over)\s+)?(?:the\s+)?(?P<q>{_alt(w['quarter_words'])})\s*(?:of\s+)?(?P<y>\d{{4}})\b", text)
    if quarter:
        q, y = w["quarter_words"][re.sub(r"\s+", " ", quarter.group("q"))], int(quarter.group("y"))
        first = date(y, 3 * q - 2, 1)
        last = date(y, 3 * q, calendar.monthrange(y, 3 * q)[1])
        return TimeMatch(Window(_day_start(first), _day_end(last), f"in Q{q} {y}"), *quarter.span(), "quarter")
    if m := re.search(rf"\b(?:(?:so far\s+)?(?:in\s+|for\s+)?(?:the\s+)?){_alt(w['ytd_words'])}\b", text):
        return TimeMatch(Window(_day_start(date(now.year, 1, 1)), now, "year to date"), *m.span(), "ytd")
    recent = w.get("recent_words") or {}
    if recent.get("words") and (m := re.search(rf"\b{_alt(recent['words'])}\b", text)):
        # "lately": a vague span, read as the past N months (the window is said in the answer)
        months = int(recent.get("months", 6))
        return TimeMatch(Window(shift(now, months, "months"), now, f"lately (the past {months} months)"), *m.span(), "relative")
    dated = (m := _BARE_DATE.search(text)) is not None and _span(m.groupdict()) is not None
    if dated:  # "febrile overnight per the 1/6 progress note": the written date names the day, not now
        return None
    days = w["weekdays"]
    if m := re.search(rf"\b(?:(?:on|last|this past)\s+)?(?P<d>{_alt(days)})(?:'s)?\b", text):
        back = (now.weekday() - int(days[m.group("d")])) % 7 or 7  # the latest such day before today
        day = now.date() - timedelta(days=back)
        return TimeMatch(Window(_day_start(day), _day_end(day), f"on {m.group('d').title()} {day}"), *m.span(), "weekday")
    if m := re.search(rf"(?<![\w/]){_alt(w['overnight_words'])}(?![\w/])", text):
        hours = w["night_hours"]
        today = now.date() if now.hour >= int(hours["end"]) else now.date() - timedelta(days=1)
        # the night on the record's own clock (19:00 to 07:00 local), whatever offset each value was written in
        start = datetime.combine(today - timedelta(days=1), time(int(hours["start"])), tzinfo=FLOATING)
        end = datetime.combine(today, time(int(hours["end"])), tzinfo=FLOATING)
        window = Window(start, end, f"overnight ({start.date()} {hours['start']}:00 to {end.date()} {hours['end']}:00)", said=True)
        stay = re.match(rf"\s+(?:during|in|on|throughout)\s+{_POSS}(?:{_alt(w['latest_words'])}\s+)?{_alt(w['stay_nouns'])}\b",
                        text[m.end():])
        if stay:  # "overnight during his admission": the night's window, kept only inside that stay
            window = Window(start, end, window.label, anchor="event", event=Anchor("stay", "within"), said=True)
            return TimeMatch(window, m.start(), m.end() + stay.end(), "overnight")
        return TimeMatch(window, *m.span(), "overnight")
    return None


# --- parts of the day and shifts (words and clock bounds in lexicon/day_parts.json) ----------------------------


@lru_cache(maxsize=1)
def day_part_words() -> dict[str, Any]:
    """Parts of the day, shifts and clock phrases with their clock bounds (``lexicon/day_parts.json``)."""
    from fhirqa.project import lexicon_file

    return lexicon_file("day_parts.json")


def _minutes(clock: str) -> int:
    """Minutes after midnight of an ``HH:MM`` clock time ("24:00" is 1440, the midnight that ends the day)."""
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


@dataclass(frozen=True)
class _Span:
    """A recurring span of the clock: ``start`` and ``end`` in minutes after midnight (end ≤ start: the next day)."""

    start: int
    end: int

    def on(self, day: date) -> tuple[datetime, datetime]:
        """The span begun on ``day``, as floating bounds (the end exclusive)."""
        first = datetime.combine(day, time.min, tzinfo=FLOATING) + timedelta(minutes=self.start)
        length = (self.end - self.start) % 1440 or 1440
        return first, first + timedelta(minutes=length)


def _latest(spans: list[_Span], now: datetime, ended: bool = False) -> tuple[datetime, datetime]:
    """The latest occurrence of any of ``spans`` begun before ``now`` (``ended``: over by now), on now's clock."""
    clock = now.replace(tzinfo=None)
    found = [(a, b) for span in spans for back in range(3) for a, b in [span.on(now.date() - timedelta(days=back))]
             if (b.replace(tzinfo=None) <= clock if ended else a.replace(tzinfo=None) < clock)]
    return max(found)


def _clock_label(start: datetime, end: datetime) -> str:
    """"2025-06-20 06:00–12:00", "2025-06-19 18:00–24:00", "2025-06-19 19:00 to 2025-06-20 07:00"."""
    if end.date() == start.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M}"
    if end == datetime.combine(start.date() + timedelta(days=1), time.min, tzinfo=FLOATING):
        return f"{start:%Y-%m-%d %H:%M}–24:00"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"


def _part_window(name: str, start: datetime, end: datetime, now: datetime, which: str = "") -> Window:
    """The window of a part of the day begun at ``start`` (floating, ``end`` exclusive), cut at ``now``.

    A part still under way ends at now (an instant); a part that is over ends just before its end clock, so
    a value at 12:00 is the afternoon's, not the morning's.
    """
    ongoing = now.replace(tzinfo=None) < end.replace(tzinfo=None)
    label = f"{name} ({which + ', ' if which else ''}{_clock_label(start, end)}{', up to now' if ongoing else ''})"
    return Window(start, now if ongoing else end - timedelta(microseconds=1), label, said=True)


def _spans(entries: list[dict[str, Any]]) -> dict[str, _Span]:
    """The lexicon's named spans ("day shift": 07:00–19:00) by name."""
    return {e["name"]: _Span(_minutes(e["start"]), _minutes(e["end"])) for e in entries}


# what follows a number that is not a clock time: a quantity, a duration, a date ("since 7 days", "since 7/1")
_NOT_A_CLOCK = (r"(?![\d/.:,-]?\d|\s*(?:%|mg|mcg|g|kg|units?|u|iu|ml|cc|meq|mmol|l|days?|d|weeks?|wks?|w|months?|mos?|"
                r"years?|yrs?|y|hours?|hrs?|h|minutes?|mins?|x|times|doses?|tabs?|puffs?|percent|ago|/)\b)")


def _clock_re(tag: str, part_nouns: dict[str, str]) -> str:
    """A clock time as written ("7", "7:30", "07:30", "0700", "1900h", "7am", "7 p.m.", "7a", "noon", "8 this
    morning", "11 last night"); its groups end in ``tag`` (two clock times in one phrase: "from 7 to 11")."""
    clock = day_part_words()["since_clock"]
    nouns, meridiem = _alt(clock["clock_nouns"]), _alt([*clock["am"], *clock["pm"]])
    t = tag
    return (rf"(?:(?P<h4{t}>0\d)(?P<m4{t}>[0-5]\d)(?:\s*{nouns}\b)?"
            rf"|(?P<h4h{t}>[01]\d|2[0-3])(?P<m4h{t}>[0-5]\d)\s*{nouns}\b"
            rf"|(?P<named{t}>{_alt(clock['named_times'])})\b"
            rf"|(?P<h{t}>[01]?\d|2[0-3])(?::(?P<m{t}>[0-5]\d))?(?:\s*(?P<ap{t}>{meridiem})(?!\w)|(?P<ap1{t}>[ap])\b"
            rf"|\s*{nouns}\b)?"
            rf"(?:\s+(?:(?:this|in the)\s+(?P<part{t}>{_alt(part_nouns)})(?!\w)|(?P<night{t}>{_alt(clock['night_words'])})\b))?)")


@lru_cache(maxsize=1)
def _day_part_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """(kind, pattern) for each way a question names a part of the day or a shift, most specific first."""
    w = day_part_words()
    shifts, shift_words = w["shifts"], w["shift_words"]
    shift_nouns = {noun: s["name"] for s in shifts for noun in s["nouns"]}
    part_nouns = {noun: p["name"] for p in w["parts"] for noun in p.get("nouns", [])}
    part_phrases = {phrase: p["name"] for p in w["parts"] for phrase in p.get("phrases", [])}
    clock = w["since_clock"]
    edge = r"(?<![\w/.:-])"
    return [
        # "from 7 to 11", "between 2 and 4 pm", "from 0700 to 1100": the latest such span begun by now
        ("clock_range", re.compile(rf"{edge}(?:from|between)\s+{_clock_re('a', part_nouns)}\s*(?:to|and|until|till|through|-|–)\s*"
                                   rf"{_clock_re('b', part_nouns)}{_NOT_A_CLOCK}")),
        # "since 7", "since 07:30", "since 7am", "since 7p", "since 1900h", "since noon", "since 8 this morning"
        ("clock", re.compile(rf"{edge}{_alt(clock['lead'])}\s+{_clock_re('a', part_nouns)}{_NOT_A_CLOCK}"
                             r"(?!\s*(?:to|and|until|till|through|-|–)\s*\d)")),
        # "since yesterday", "since yesterday evening": from then to now
        ("since_yesterday", re.compile(rf"{edge}(?:since|from)\s+{_alt(w['yesterday_words']['words'])}"
                                       rf"(?:\s+(?:in\s+the\s+)?(?P<named>{_alt(part_nouns)}))?(?![\w'])")),
        ("midnight", re.compile(rf"{edge}{_alt(w['since_midnight']['words'])}\b")),
        ("previous_shift", re.compile(rf"{edge}(?:{_alt(shift_words['previous'])}"
                                      rf"|{_alt(shift_words['previous_lead'])}\s+(?P<named>{_alt(shift_nouns)}))\b")),
        ("current_shift", re.compile(rf"{edge}(?:(?:during|over|in|for|on|throughout)\s+)?{_alt(shift_words['current'])}\b")),
        ("shift", re.compile(rf"{edge}(?:{_alt(shift_words['lead'])}\s+)*(?P<named>{_alt(shift_nouns)})(?:'s)?(?![\w-])")),
        ("part_phrase", re.compile(rf"{edge}(?P<named>{_alt(part_phrases)})\b")),
        ("yesterday_part", re.compile(rf"{edge}(?:{_alt(w['yesterday_words']['words'])}\s+(?:in\s+the\s+)?(?P<named>{_alt(part_nouns)})"
                                      rf"|(?:in\s+the\s+)?(?P<named2>{_alt(part_nouns)})\s+(?:of\s+)?yesterday)(?:'s)?(?![\w])")),
        ("this_part", re.compile(rf"{edge}{_alt(w['this_words']['words'])}\s+(?P<named>{_alt(part_nouns)})(?:'s)?(?![\w])")),
        ("draw_part", re.compile(rf"{edge}(?P<named>{_alt(part_nouns)})(?=\s+{_alt(w['draw_nouns']['words'])}\b)")),
        ("few_hours", re.compile(rf"\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+"
                                 rf"(?P<few>{_alt(w['few_hours']['words'])})\s+{_alt(w['few_hours']['unit_words'])}\b")),
    ]


def _spoken(text: str) -> str:
    """A matched phrase with its blanks made single (the lexicon's keys are written so)."""
    return re.sub(r"\s+", " ", text.strip())


def day_part_window(text: str, now: datetime) -> TimeMatch | None:
    """A part of the day or a shift named in lower-cased ``text``, as a window on the record's clock up to ``now``.

    "this morning" (00:00–12:00), "this afternoon", "this evening", "tonight", "yesterday morning", "AM labs",
    "this shift" (the shift containing now), "last shift", "on night shift", "since midnight", "earlier today",
    "since 7" / "since 07:30" / "since 2pm", "the last few hours". Bounds are in ``lexicon/day_parts.json``;
    every window is the latest such span begun by now and ends at or before now. None when ``text`` names no
    such phrase, or writes a date (the date names the day: "this morning per the 6/12 note" is not today).
    """
    found = [(m, kind) for kind, pattern in _day_part_patterns() if (m := pattern.search(text))
             and (kind != "clock_range" or _written_as_clock(m))]
    if not found:
        return None
    m, kind = min(found, key=lambda f: (f[0].start(), -f[0].end()))  # the first phrase, the longest there
    outside = text[: m.start()] + " " + text[m.end():]  # "since 1900h" is a clock time, not the year 1900
    if (d := _BARE_DATE.search(outside)) is not None and _span(d.groupdict()) is not None:
        return None
    if kind == "draw_part" and _find_window(outside, now) is not None:
        return None  # "morning glucose over the past week": the week is the window, "morning" says which values
    window = _day_part(kind, m, now)
    return TimeMatch(window, *m.span(), "relative" if kind == "few_hours" else "day_part") if window else None


def _day_part(kind: str, m: re.Match[str], now: datetime) -> Window | None:
    """The window of one matched day-part phrase (see :func:`day_part_window`)."""
    w = day_part_words()
    parts = {p["name"]: p for p in w["parts"]}
    part_of = {_spoken(noun): p["name"] for p in w["parts"] for noun in [*p.get("nouns", []), *p.get("phrases", [])]}
    shifts = _spans(w["shifts"])
    shift_of = {_spoken(noun): s["name"] for s in w["shifts"] for noun in s["nouns"]}
    shift_label = {s["name"]: s["label"] for s in w["shifts"]}
    if kind == "few_hours":
        hours = int(w["few_hours"]["words"][_spoken(m.group("few"))])
        return Window(now - timedelta(hours=hours), now, f"in the last {_spoken(m.group('few'))} hours (the last {hours} h)",
                      said=True)
    if kind == "midnight":
        said = _spoken(m.group(0))
        since = "" if said.startswith(("since", "after")) else "since "
        return Window(_day_start(now.date()), now, f"{said} ({since}{now.date()} 00:00, up to now)", said=True)
    if kind == "clock":
        return _since_clock(m, now)
    if kind == "clock_range":
        return _clock_range(m, now)
    if kind in ("previous_shift", "current_shift", "shift"):
        named = m.groupdict().get("named")
        pool = [shifts[shift_of[_spoken(named)]]] if named else list(shifts.values())
        start, end = _latest(pool, now, ended=kind == "previous_shift")
        if named:
            name = shift_label[shift_of[_spoken(named)]]
            name = f"the previous {name.removeprefix('the ')}" if kind == "previous_shift" else name
        else:
            which = next(n for n, s in shifts.items() if s.on(start.date())[0] == start)
            return _part_window(_spoken(m.group(0)), start, end, now, shift_label[which])  # "this shift (the day shift, …)"
        return _part_window(name, start, end, now)
    if kind == "since_yesterday" and not m.group("named"):
        start = _day_start(now.date() - timedelta(days=1))
        return Window(start, now, f"since yesterday ({start:%Y-%m-%d} 00:00, up to now)", said=True)
    named = _spoken(m.group("named") or m.groupdict().get("named2") or "")
    part = parts[part_of[named]]
    span = _Span(_minutes(part["start"]), _minutes(part["end"]))
    if kind == "since_yesterday" or _spoken(m.group(0)).startswith(("since", "from", "after")):
        # "since yesterday evening", "since this morning": from the part's start up to now
        start = span.on(now.date() - timedelta(days=1))[0] if kind == "since_yesterday" else _latest([span], now)[0]
        if start.replace(tzinfo=None) >= now.replace(tzinfo=None):
            return None
        return Window(start, now, f"{_spoken(m.group(0))} ({start:%Y-%m-%d %H:%M}, up to now)", said=True)
    if kind == "yesterday_part":
        start, end = span.on(now.date() - timedelta(days=1))
        if start.replace(tzinfo=None) >= now.replace(tzinfo=None):
            return None
        return _part_window(f"yesterday {part['name']}", start, end, now)
    start, end = _latest([span], now)
    return _part_window(part["label"], start, end, now)


def _written_as_clock(m: re.Match[str]) -> bool:
    """Whether either end of a range is written as a clock time ("7:30", "0700", "7pm", "noon", "8 this morning"):
    "from 7 to 11" could be a clock span, but "K between 3 and 5" is a range of values."""
    g = m.groupdict()
    return any(g.get(f"{key}{t}") for t in "ab" for key in ("m", "h4", "h4h", "named", "ap", "ap1", "part", "night")) \
        or re.search(_alt(day_part_words()["since_clock"]["clock_nouns"]), m.group(0)) is not None


def _clock_minutes(g: dict[str, str | None], t: str) -> list[int]:
    """The minutes after midnight a written clock time may mean (both 07:00 and 19:00 for a bare "7")."""
    clock = day_part_words()["since_clock"]
    if g.get(f"h4{t}") or g.get(f"h4h{t}"):  # "0700", "1900h": a 24-hour time
        return [int(g[f"h4{t}"] or g[f"h4h{t}"] or 0) * 60 + int(g[f"m4{t}"] or g[f"m4h{t}"] or 0)]
    if named := g.get(f"named{t}"):
        return [_minutes(clock["named_times"][_spoken(named)])]
    text = g[f"h{t}"] or "0"
    hours, minutes = int(text), int(g.get(f"m{t}") or 0)
    ap = _spoken(g.get(f"ap{t}") or "") or clock["attached"].get(g.get(f"ap1{t}") or "", "")
    if g.get(f"part{t}"):  # "since 8 this morning", "since 4 this afternoon": the part's half of the day
        part = next(p for p in day_part_words()["parts"] if _spoken(g[f"part{t}"] or "") in p.get("nouns", []))
        ap = ap or ("am" if _minutes(part["start"]) < 720 else "pm")
    elif g.get(f"night{t}"):  # "since 11 last night" is 23:00, "since 2 overnight" 02:00, "12 last night" midnight
        ap = ap or ("pm" if 6 <= hours <= 11 else "am")
    if ap:
        if not 1 <= hours <= 12:
            return []
        return [(hours % 12 + (12 if ap in clock["pm"] else 0)) * 60 + minutes]
    if (len(text) == 2 and text.startswith("0")) or hours > 12 or hours == 0:  # "07:30", "19:00": 24-hour
        return [hours * 60 + minutes]
    return [(hours % 12) * 60 + minutes, (hours % 12 + 12) * 60 + minutes]  # "since 7": 07:00 or 19:00


def _since_clock(m: re.Match[str], now: datetime) -> Window | None:
    """"since 7", "since 07:30", "since 2pm": from the latest such clock time before now (see the lexicon's note)."""
    candidates = _clock_minutes(m.groupdict(), "a")
    if not candidates:
        return None
    start, _ = _latest([_Span(c, c + 1) for c in candidates], now)
    return Window(start, now, f"since {start:%H:%M} ({start:%Y-%m-%d %H:%M}, up to now)", said=True)


def _clock_range(m: re.Match[str], now: datetime) -> Window | None:
    """"from 7 to 11": from the latest such start before now to the first such end after it, cut at now."""
    firsts, lasts = _clock_minutes(m.groupdict(), "a"), _clock_minutes(m.groupdict(), "b")
    if not firsts or not lasts:
        return None
    start, _ = _latest([_Span(c, c + 1) for c in firsts], now)
    midnight = datetime.combine(start.date(), time.min, tzinfo=FLOATING)
    end = min(e for c in lasts for day in (0, 1) if (e := midnight + timedelta(days=day, minutes=c)) > start)
    ongoing = now.replace(tzinfo=None) < end.replace(tzinfo=None)
    label = f"from {start:%H:%M} to {end:%H:%M} ({_clock_label(start, end)}{', up to now' if ongoing else ''})"
    return Window(start, now if ongoing else end, label, said=True)
