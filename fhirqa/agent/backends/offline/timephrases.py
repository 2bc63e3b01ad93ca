"""Time phrases in questions → explicit windows, resolved against ``now``.

"in the last 6 months", "past year", "since March 2018", "in 2017", "between 1/2/2016 and
2017-06-30", "before 2019-01-01", "on 3 May 2019", "yesterday", "this year". The matched text is
returned so the parser can remove it before looking for the clinical entity.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

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
    r"|(?P<y>(?:19|20)\d{2}(?!\d|,\d)(?!\s*(?:mg|mcg|g|kg|units?|iu|ml|meq|mmol)\b)|'\d{2}))"
)


@dataclass(frozen=True)
class Window:
    """An inclusive time window; either end may be open. ``label`` says it the way the question did."""

    start: datetime | None
    end: datetime | None
    label: str
    anchor: str | None = None  # "last_admission": scope to the most recent inpatient encounter

    def contains(self, when: datetime) -> bool:
        """True when ``when`` falls inside the window."""
        return (self.start is None or when >= self.start) and (self.end is None or when <= self.end)


@dataclass(frozen=True)
class DateSpan:
    """A date phrase as a span: a day, a month or a year."""

    start: datetime
    end: datetime  # inclusive end (last microsecond of the span)


def _day_start(d: date) -> datetime:
    return datetime.combine(d, time.min, tzinfo=UTC)


def _day_end(d: date) -> datetime:
    return datetime.combine(d, time.max, tzinfo=UTC)


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
            m, d, written = re.split(r"[/-]", groups["us"])  # type: ignore[arg-type]
            day = date(_year(written), int(m), int(d))  # 10/17/93 is 1993: two digits read like '93
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
                y, m = _year(groups["my_y"]), _MONTHS[groups["my"][:3]]  # type: ignore[index,arg-type]
            elif groups.get("mslash"):
                y, m = int(groups["mslash_y"]), int(groups["mslash"])  # type: ignore[arg-type]
            else:
                y, m = (int(x) for x in groups["ym"].split("-"))  # type: ignore[union-attr]
            last = calendar.monthrange(y, m)[1]
            return DateSpan(_day_start(date(y, m, 1)), _day_end(date(y, m, last)))
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
    rf"\b(?:in|over|during|within|for|from)?\s*(?:the\s+)?(?:last|past|previous|prior|preceding)\s+(?:{_AMOUNT}\s*)?{_UNIT}\b"
)
_AGO = re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+ago\b")
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
_LAST_ADMISSION = re.compile(
    r"\b(?:during|in|on|over|throughout|for)\s+(?:the\s+|her\s+|his\s+|my\s+|their\s+)?(?:last|latest|most recent|recent|current)\s+"
    r"(?:admission|hospitali[sz]ation|hospital stay|inpatient stay|stay|hospital visit)\b"
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
    if m := _LAST_ADMISSION.search(text):
        return TimeMatch(Window(None, None, "during the last admission", anchor="last_admission"), *m.span(), "admission")
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
