"""Local calendar days: a record's times keep the offset they were written in, and day bounds follow it.

A clinician's "on 6/12", "hospital day 2" or "overnight" means the calendar day and clock of the record, as
written: ``2025-06-12T22:10:00-05:00`` is June 12 (it is June 13 in UTC). So

- a row's time is an aware datetime **in the offset it was written in** (``patient_rows`` applies the views'
  ``<time>_offset`` columns); comparing two such times compares instants, and ``.date()`` is the local day;
- a **floating** bound is a wall-clock time without an offset ("June 12, 00:00"), read on each record's own
  clock: a time is inside ``[June 12 00:00, June 12 23:59:59]`` when its local day is June 12, whatever its
  offset. Floating bounds carry the :data:`FLOATING` tzinfo (offset 0, so arithmetic and comparisons with
  instants behave as the UTC reading did before offsets were kept); as ISO text they are written without an
  offset, and an ISO datetime or date written without one is read back as floating.

A time written without an offset (or a date) has no local clock to read: it is taken as UTC, as before.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache

FLOATING = timezone(timedelta(0), "floating")  # a bound on each record's own clock (see the module docstring)


def is_floating(moment: datetime | None) -> bool:
    """True for a floating bound (a wall-clock time read on each record's own clock)."""
    return moment is not None and isinstance(moment.tzinfo, timezone) and moment.tzinfo.tzname(None) == "floating"


def floating(day: date, clock: time = time.min) -> datetime:
    """The floating bound at ``clock`` on ``day`` ("June 12, 00:00" on every record's clock)."""
    return datetime.combine(day, clock.replace(tzinfo=None), tzinfo=FLOATING)


def day_start(day: date) -> datetime:
    """The first instant of ``day`` on each record's clock."""
    return floating(day, time.min)


def day_end(day: date) -> datetime:
    """The last instant of ``day`` on each record's clock (inclusive end)."""
    return floating(day, time.max)


@lru_cache(maxsize=256)
def offset_zone(minutes: int) -> tzinfo:
    """The fixed-offset zone ``minutes`` east of UTC (UTC itself for 0, so UTC rows print as before)."""
    return UTC if minutes == 0 else timezone(timedelta(minutes=minutes))


def in_offset(moment: datetime, minutes: int | None) -> datetime:
    """``moment`` (an instant) shown in the offset it was written in; unchanged when there was none."""
    if minutes is None:
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(offset_zone(int(minutes)))


def wall(moment: datetime) -> datetime:
    """The naive wall-clock reading of ``moment`` in its own offset."""
    return moment.replace(tzinfo=None)


def at_or_after(moment: datetime, bound: datetime) -> bool:
    """``moment`` ≥ ``bound``: on ``moment``'s own clock for a floating bound, as instants otherwise."""
    return wall(moment) >= wall(bound) if is_floating(bound) else moment >= bound


def at_or_before(moment: datetime, bound: datetime) -> bool:
    """``moment`` ≤ ``bound``: on ``moment``'s own clock for a floating bound, as instants otherwise."""
    return wall(moment) <= wall(bound) if is_floating(bound) else moment <= bound


def within(moment: datetime, low: datetime | None, high: datetime | None) -> bool:
    """Whether ``moment`` lies in the inclusive window [low, high] (either end open)."""
    return (low is None or at_or_after(moment, low)) and (high is None or at_or_before(moment, high))


def utc_day(moment: datetime) -> date:
    """The UTC calendar day of an instant (a floating time: its own date).

    Elapsed times ("how many days since the first dose") count days between two instants, and both ends must
    be read on one clock: UTC, so that an elapsed count does not depend on the offsets the ends were written in.
    """
    return moment.date() if is_floating(moment) or moment.tzinfo is None else moment.astimezone(UTC).date()


def pinned(bound: datetime | None, zone: tzinfo | None) -> datetime | None:
    """A floating bound fixed to ``zone``'s clock (an instant); instants and None are returned unchanged."""
    if bound is None or not is_floating(bound):
        return bound
    return wall(bound).replace(tzinfo=zone or UTC)


def iso(moment: datetime | None) -> str | None:
    """ISO text of a bound: floating bounds without an offset (so they are read back as floating)."""
    if moment is None:
        return None
    return wall(moment).isoformat() if is_floating(moment) else moment.isoformat()


def record_zone(times: list[datetime]) -> tzinfo | None:
    """The zone of a record: the offset of its latest time that was written with a non-UTC offset, else None."""
    written = [t for t in times if t.tzinfo is not None and t.utcoffset() not in (None, timedelta(0))]
    return max(written).tzinfo if written else None


def local_now(now: datetime, zone: tzinfo | None) -> datetime:
    """The question's ``now`` on the record's clock.

    A ``now`` written with an offset other than UTC is the asker's own clock and is kept. A ``now`` in UTC (as
    a server clock or an evaluation line gives it) or without an offset is shown in the record's zone, so
    "today", "yesterday", "on Monday" and "overnight" are the record's local days. The instant never changes.
    """
    aware = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    if zone is None or aware.utcoffset() not in (None, timedelta(0)) or is_floating(aware):
        return aware
    return aware.astimezone(zone)
