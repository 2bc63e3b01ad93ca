"""Date/time helpers. All clinical times are timezone-aware in the patient's local offset."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

DAY = timedelta(days=1)


def parse_now(now: str) -> datetime:
    """Parse an ISO-8601 instant such as ``2026-06-30T12:00:00Z`` (naive means UTC)."""
    dt = datetime.fromisoformat(now.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def local_tz(hours: int) -> timezone:
    """Fixed-offset timezone; a fixed offset keeps output independent of tz databases."""
    return timezone(timedelta(hours=hours))


def iso(dt: datetime) -> str:
    """FHIR dateTime/instant string with seconds and offset."""
    return dt.replace(microsecond=0).isoformat()


def iso_date(d: date | datetime) -> str:
    """FHIR date string."""
    return (d.date() if isinstance(d, datetime) else d).isoformat()


def at(day: datetime, hour: int, minute: int = 0) -> datetime:
    """Same calendar day as ``day`` at the given wall-clock time."""
    return day.replace(hour=hour, minute=minute, second=0, microsecond=0)


def days_between(a: datetime, b: datetime) -> float:
    """Fractional days from ``a`` to ``b``."""
    return (b - a).total_seconds() / 86400.0


def hm(dt: datetime) -> str:
    """Clinician-style time of day, e.g. ``06:12``."""
    return dt.strftime("%H:%M")


def md(dt: datetime) -> str:
    """Short date as clinicians write it, e.g. ``3/14/2025``."""
    return f"{dt.month}/{dt.day}/{dt.year}"


def age_on(birth: date, when: datetime) -> int:
    """Age in whole years on a date."""
    d = when.date()
    return d.year - birth.year - ((d.month, d.day) < (birth.month, birth.day))
