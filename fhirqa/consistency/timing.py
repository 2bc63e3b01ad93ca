"""When a note says something happened: explicit times and dates, narrative phrases, or the note's window.

Expressions found: clock times (``0529``, ``05:29``, ``5:29pm``, ``at 5pm``), dates (``3/1/2015``, ``03/01/15``,
``Mar 1, 2015``, ``2015-03-01``, ``(3/1)``, ``March 2015``, ``(2010)``), and narrative phrases (``today``,
``yesterday``, ``overnight``, ``HD #3``, ``on admission``, ``at discharge``, ``3 days/weeks/months ago``,
``last week``). Each denotes a window (docs/consistency.md lists them). An entity takes, in order: an
expression right after it in the same clause; an expression earlier on its line that no other entity took;
one in a block heading above it (``Labs drawn today:``); else the note's default window, by note kind:
discharge summary → the whole stay; admission note → admission −24 h … note +12 h; other notes → the
note's day ±1 day. ``TimeRef.kind`` keeps which it was: explicit, narrative or default.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from fhirqa.consistency.model import Entity, NoteContext, TimeRef

DAY = timedelta(days=1)
CLOCK_SLACK = timedelta(minutes=20)  # a time written to the minute
HOUR_SLACK = timedelta(minutes=40)  # a time written to the hour ("at 5pm")
CLOCK_WINDOW = 2 * HOUR_SLACK  # the widest window a clock time denotes


def is_clock(window: TimeRef | tuple[datetime, datetime]) -> bool:
    """True when a window was given by a clock time (to the minute or the hour), not a day or longer: a
    procedure's time is then held to its start (±20 / ±40 min), not to any minute of a long procedure."""
    start, end = (window.start, window.end) if isinstance(window, TimeRef) else window
    return end - start <= CLOCK_WINDOW


_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m} | {"sept": 9}
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# a month without a year after it: whole names or their abbreviations only ("decreased 2" is no date), "May"
# capitalised (not the verb)
_MONTH_ONLY = (r"(?:(?i:january|february|march|april|june|july|august|september|october|november|december|"
               r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?|(?-i:May))(?![a-z])")
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "several": 3, "few": 3, "couple of": 2}

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(p, re.I)) for kind, p in (
    ("iso", r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:[T ](?P<h>\d{1,2}):(?P<mi>\d{2})(?::\d{2})?)?\b"),
    ("us", r"(?<![\d/.])(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4}|\d{2})(?![\d/])(?:,?\s+(?P<h>\d{1,2}):?(?P<mi>\d{2})\b)?"),
    ("usdash", r"(?<![\d-])(?P<m>\d{1,2})-(?P<d>\d{1,2})-(?P<y>\d{4})(?![\d-])"),
    ("mdy", rf"\b(?P<mon>{_MONTH})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})\b"),
    ("dmy", rf"\b(?P<d>\d{{1,2}})\s+(?P<mon>{_MONTH})\s+(?P<y>\d{{4}})\b"),
    ("md", r"(?:(?<=\bon )|(?<=\())(?P<m>\d{1,2})/(?P<d>\d{1,2})(?=\)|[\s,.;]|$)"),
    ("my", rf"\b(?P<mon>{_MONTH})\s+(?P<y>\d{{4}})\b"),
    # a day and month without a year ("on September 27", "on 14 Aug"): the last such day up to the note's
    ("md", rf"\b(?P<mon>{_MONTH_ONLY})[ \t]+(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\b(?!,?[ \t]*\d|[/:.]\d)"),
    ("md", rf"(?<![\d/.:])\b(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?[ \t]+(?P<mon>{_MONTH_ONLY})(?![ \t]*,?[ \t]*\d)"),
    ("year", r"(?:(?<=\bin )|(?<=\()|(?<=\bdx )|(?<=\bsince ))(?P<y>(?:19|20)\d{2})\b"),
    ("clock", r"(?<![\d/:.])(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?:\s*(?P<ap>[ap])\.?m\.?)?(?![\d/]|:\d)"),
    # a 24-h time leading a line or a list bullet, followed by ':' or '-' ("- 1951: wt 85.7 kg", "0704 - BP …")
    ("hhmm", r"(?m)(?:(?<=^[-*•] )|(?<=^[-*•])|(?<=^[ \t][-*•] ))(?P<h>[01]\d|2[0-3])(?P<mi>[0-5]\d)"
             r"(?=[ \t]*[:-](?:[ \t]|$))"),
    ("hhmm", r"(?:(?<=\bat )|(?<=@ )|(?<=@)|(?<=\()|(?<=^)|(?<=\n))(?P<h>[01]\d|2[0-3])(?P<mi>[0-5]\d)"
             r"(?:\s?(?:h|hrs?|hours)\b)?(?=[\s).,;]|$)(?!\s*(?:mg|mcg|g|ml|units?)\b)"),
    ("hour", r"\b(?:at|@|around|about)\s+(?P<h>1[0-2]|0?[1-9])\s*(?P<ap>[ap])\.?m\.?\b"),
    ("hd", r"\b(?:HD|hospital day|hosp day)\s*#?\s*(?P<n>\d{1,2})\b|\bday\s*#?\s*(?P<n2>\d{1,2}) of (?:the |this )?"
           r"(?:admission|hospitali[sz]ation|stay)\b"),
    ("today", r"\b(?:today|this (?:morning|am|afternoon|evening|pm)|tonight|this visit|earlier today)\b|\btoday's\b|"
              r"\bthis [ap]\.m\.(?!\w)"),
    ("yesterday", r"\b(?:yesterday|last night|the day (?:prior|before))\b"),
    ("overnight", r"\bovernight\b"),
    ("admission", r"\b(?:on|at|upon|since)\s+(?:admission|arrival|presentation)\b|\badmi(?:ssion|tting)\s+labs\b"),
    ("discharge", r"\b(?:on|at|upon)\s+discharge\b|\bday of discharge\b|\bdischarge labs\b"),
    ("ago", r"\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|few|couple of)"
            r"\s+(?P<u>day|week|wk|month|mo|year|yr)s?\s+(?:ago|back|prior|earlier|before)\b"),
    ("last", r"\blast\s+(?P<u>week|month|year)\b"),
    # a phrase that points back to the time named before it ("At that visit her BP was …"): resolved in find_times
    ("anaphor", r"\b(?:at|on|during|from|by) (?:that|the same) (?:visit|day|date|time|appointment|encounter|review)\b|"
                r"\bat the time\b|\b(?:that|the same) (?:day|visit|morning|afternoon|evening)\b|\bback then\b"),
))


@dataclass(frozen=True)
class TimeExpr:
    """A time expression found in the note, with the window it denotes."""

    start: int
    end: int
    text: str
    kind: str  # explicit or narrative
    window: tuple[datetime, datetime]


def _day(d: date, tz) -> tuple[datetime, datetime]:  # noqa: ANN001
    start = datetime.combine(d, time.min, tzinfo=tz)
    return start, start + DAY - timedelta(microseconds=1)


def _year(text: str) -> int:
    y = int(text)
    return y + (2000 if y < 50 else 1900) if y < 100 else y


def _resolve(kind: str, m: re.Match[str], ctx: NoteContext) -> tuple[str, tuple[datetime, datetime]] | None:
    """The window of one match (None when it is not a valid time)."""
    tz = ctx.note_time.tzinfo or UTC
    note_day = ctx.note_time.astimezone(tz).date()
    g = m.groupdict()
    try:
        if kind in ("iso", "us", "usdash", "mdy", "dmy", "md"):
            month = int(g["m"]) if g.get("m") else _MONTHS[g["mon"].lower().rstrip(".")[:3]]
            year = _year(g["y"]) if g.get("y") else note_day.year
            day = date(year, month, int(g["d"]))
            if kind == "md" and day > note_day + DAY:
                day = date(year - 1, month, int(g["d"]))
            if g.get("h") and g.get("mi"):
                moment = datetime.combine(day, time(int(g["h"]), int(g["mi"])), tzinfo=tz)
                return "explicit", (moment - CLOCK_SLACK, moment + CLOCK_SLACK)
            return "explicit", _day(day, tz)
        if kind == "my":
            month, year = _MONTHS[g["mon"].lower().rstrip(".")[:3]], int(g["y"])
            last = calendar.monthrange(year, month)[1]
            return "explicit", (_day(date(year, month, 1), tz)[0], _day(date(year, month, last), tz)[1])
        if kind == "year":
            year = int(g["y"])
            return "explicit", (_day(date(year, 1, 1), tz)[0], _day(date(year, 12, 31), tz)[1])
        if kind in ("clock", "hhmm", "hour"):
            hour, minute = int(g["h"]), int(g.get("mi") or 0)
            if g.get("ap"):
                hour = hour % 12 + (12 if g["ap"].lower() == "p" else 0)
            moment = datetime.combine(note_day, time(hour, minute), tzinfo=tz)
            if moment > ctx.note_time + timedelta(hours=2):  # a clock time later than the note: the day before
                moment -= DAY
            slack = HOUR_SLACK if kind == "hour" else CLOCK_SLACK
            return "explicit", (moment - slack, moment + slack)
        if kind == "hd":
            admitted = (ctx.admission or ctx.note_time).astimezone(tz).date()
            return "narrative", _day(admitted + (int(g["n"] or g["n2"]) - 1) * DAY, tz)
        if kind == "today":
            return "narrative", _day(note_day, tz)
        if kind == "yesterday":
            return "narrative", _day(note_day - DAY, tz)
        if kind == "overnight":
            start = _day(note_day - DAY, tz)[0] + timedelta(hours=18)
            return "narrative", (start, start + timedelta(hours=16))
        if kind == "admission":
            admitted = ctx.admission or ctx.note_time
            return "narrative", (admitted - timedelta(hours=12), admitted + DAY)
        if kind == "discharge":
            left = ctx.discharge or ctx.note_time
            return "narrative", (left - DAY, left + timedelta(hours=12))
        if kind in ("ago", "last"):
            n = 1 if kind == "last" else (int(g["n"]) if g["n"].isdigit() else _NUM[g["n"].lower()])
            unit = g["u"].lower()[0]
            unit_days, slack_days = {"d": (1.0, 1), "w": (7.0, 4), "m": (30.4, 20), "y": (365.25, 183)}[unit]
            center = ctx.note_time - timedelta(days=n * unit_days)
            start, end = _day(center.astimezone(tz).date(), tz)
            return "narrative", (start - timedelta(days=slack_days), end + timedelta(days=slack_days))
    except (ValueError, KeyError):
        return None
    return None


def find_times(text: str, ctx: NoteContext, taken: list[tuple[int, int]] | None = None) -> list[TimeExpr]:
    """Every time expression in ``text``, not overlapping each other nor the ``taken`` spans (values)."""
    found: list[TimeExpr] = []
    used = list(taken or [])
    anaphors: list[re.Match[str]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in used):
                continue
            if kind == "anaphor":
                anaphors.append(m)
                used.append((m.start(), m.end()))
                continue
            resolved = _resolve(kind, m, ctx)
            if resolved is None:
                continue
            found.append(TimeExpr(m.start(), m.end(), m.group(0), resolved[0], resolved[1]))
            used.append((m.start(), m.end()))
    return sorted(found + _anaphors(anaphors, found), key=lambda t: t.start)


def _anaphors(matches: list[re.Match[str]], found: list[TimeExpr]) -> list[TimeExpr]:
    """"that visit", "that day", "at the time": the window of the last time expression written before it (the
    date named in an earlier sentence carries over); none before it: nothing (the note's window applies)."""
    out: list[TimeExpr] = []
    for m in sorted(matches, key=lambda x: x.start()):
        before = [t for t in found + out if t.end <= m.start()]
        if before:
            last = max(before, key=lambda t: t.start)
            out.append(TimeExpr(m.start(), m.end(), m.group(0), last.kind, last.window))
    return out


def default_window(ctx: NoteContext) -> TimeRef:
    """The note's window for entities that carry no time expression."""
    tz = ctx.note_time.tzinfo or UTC
    if ctx.note_kind == "discharge":
        admitted = ctx.admission or ctx.note_time - 3 * DAY
        left = ctx.discharge or ctx.note_time
        return TimeRef(admitted - timedelta(hours=12), max(left, ctx.note_time) + timedelta(hours=12), "default")
    if ctx.note_kind == "admission":
        admitted = ctx.admission or ctx.note_time
        return TimeRef(admitted - DAY, ctx.note_time + timedelta(hours=12), "default")
    start, end = _day(ctx.note_time.astimezone(tz).date(), tz)
    return TimeRef(start - DAY, end + DAY, "default")


_CLAUSE_END = re.compile(r"[.;](?=\s|$)|\n")


def attach(text: str, entities: list[Entity], ctx: NoteContext, exprs: list[TimeExpr] | None = None) -> None:
    """Give every entity its ``time`` (see the module docstring for the order of precedence)."""
    if exprs is None:
        exprs = find_times(text, ctx, [e.value_span for e in entities if e.value_span])
    default = default_window(ctx)
    ordered = sorted(entities, key=lambda e: e.span[0])
    starts = sorted({e.span[0] for e in ordered})
    owned: dict[int, TimeExpr] = {}  # entity index → its own (following) expression
    taken: set[int] = set()  # expressions owned by an entity
    for i, ent in enumerate(ordered):
        nxt = next((s for s in starts if s > ent.span[0]), len(text))
        limit = min(_next_boundary(text, ent.span[1]), nxt)
        for j, expr in enumerate(exprs):
            inside = ent.span[0] < expr.start < ent.span[1]
            if inside or (ent.span[1] <= expr.start < limit and not _aside(text, ent.span[1], expr.start)):
                owned[i] = expr
                taken.add(j)
                break
    for i, ent in enumerate(ordered):
        found = owned.get(i) or _prefix(text, ent, exprs, taken) or _block_heading(text, ent, exprs, taken)
        if found is None:
            ent.time = TimeRef(default.start, default.end, "default")
        else:
            ent.time = TimeRef(found.window[0], found.window[1], found.kind, found.text, (found.start, found.end))


def _aside(text: str, after: int, at: int) -> bool:
    """True when ``at`` lies in a parenthesis opened after the entity that states a value of its own.

    "A1c 7.0 (prior 7.3 on 8/2/2021)": the date is the prior value's, not 7.0's; "K 4.1 (drawn 3/1)" keeps
    its date.
    """
    between = text[after:at]
    opened = between.rfind("(")
    return opened != -1 and ")" not in between[opened:] and bool(re.search(r"\d", between[opened + 1:]))


def _next_boundary(text: str, offset: int) -> int:
    m = _CLAUSE_END.search(text, offset)
    return m.start() if m else len(text)


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _prefix(text: str, ent: Entity, exprs: list[TimeExpr], taken: set[int]) -> TimeExpr | None:
    """The last unowned expression earlier on the entity's line that governs it: in its own clause, in the
    line's heading ("Labs (3/1/2015): …"), or opening the line ("0704 VS: …")."""
    start = _line_start(text, ent.span[0])
    colon = text.find(":", start, ent.span[0])
    clause = start
    for m in _CLAUSE_END.finditer(text, start, ent.span[0]):
        clause = m.end()
    best = None
    for j, expr in enumerate(exprs):
        if j in taken or not (start <= expr.start and expr.end <= ent.span[0]):
            continue
        opening = not text[start:expr.start].strip(" \t-*•")  # "0704 VS: …", "- 20:51: BP …"
        heading = colon != -1 and expr.end <= colon
        if expr.start >= clause or opening or heading:
            best = expr
    return best


def _block_heading(text: str, ent: Entity, exprs: list[TimeExpr], taken: set[int]) -> TimeExpr | None:
    """An expression in a heading line (ending with ':') above the entity, within the same block."""
    line_start = _line_start(text, ent.span[0])
    while line_start > 0:
        prev_end = line_start - 1
        prev_start = _line_start(text, prev_end)
        line = text[prev_start:prev_end].strip()
        if not line:
            return None
        if line.endswith(":"):
            for j, expr in enumerate(exprs):
                if prev_start <= expr.start < prev_end and j not in taken:
                    return expr
        line_start = prev_start
    return None
