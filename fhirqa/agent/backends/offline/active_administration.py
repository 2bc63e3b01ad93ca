"""Is the patient on a drug now, read from its orders and its administrations: "is she on heparin?", "still on
vanc?", "on DVT ppx?".

An ICU order is often marked completed or stopped while doses were given until yesterday, and an order can
stay active while nothing has been given for days. A dose given within ``recent_administration_hours`` of now
(``lexicon/medication_activity.json``) therefore counts as on the drug whatever its order says, and an active
order whose last charted dose is older says so. The answer states the window, the last administration and the
order's status, each cited. A drug the record charts no administration of is answered from its orders, as before.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def recent_hours() -> float:
    """Hours before now within which a dose given means the patient is on the drug."""
    from fhirqa.project import lexicon_file

    return float(lexicon_file("medication_activity.json")["recent_administration_hours"])


def last_given(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], dict[str, Any] | None]:
    """The latest administration of the question's drug that was given (not held or refused), or None when the
    record charts no given dose of it."""
    from fhirqa.agent.backends.offline.plans import find_records

    kind, pq.med_kind = pq.med_kind, "administration"  # given_doses drops the doses charted as not given
    try:
        located = yield from find_records(pq, views=["medication"], kind="administration")
    finally:
        pq.med_kind = kind
    if located is None or located[1].get("ambiguous") or not located[1].get("count"):
        return None
    return (yield ("get_by_index", {"records": located[1]["handle"], "index": -1})).get("row") or None


def _hours_before(now: datetime | None, when: Any) -> float | None:
    from fhirqa.agent.backends.offline.plans import _instant

    moment = _instant(when)
    if now is None or moment is None or moment.tzinfo is None or now.tzinfo is None:
        return None
    return (now - moment).total_seconds() / 3600


def _ago(hours: float) -> str:
    return f"{hours:.0f} h ago" if hours < 48 else f"{hours / 24:.1f} days ago"


def active_by_administration(pq: ParsedQuestion, order: dict[str, Any] | None,
                             latest_order: dict[str, Any]) -> Generator[Call, dict[str, Any], Call | None]:
    """The final call for "is she on X?" once the drug's administrations are read, or None when the record
    charts no given dose of it (the orders answer alone). ``order`` is the latest active order's row (None when
    no order is active); ``latest_order`` the latest order of the drug whatever its status."""
    from fhirqa.agent.backends.offline.plans import _day, final

    dose = yield from last_given(pq)
    if dose is None:
        return None
    window = recent_hours()
    hours = _hours_before(pq.now, dose.get("time"))
    name = dose.get("medication_name") or pq.entity
    when = str(dose.get("time") or "?")[:16].replace("T", " ")
    given = f"last given {when} ({dose.get('ref')})"
    recent = hours is not None and 0 <= hours <= window
    if order is not None:
        if order.get("medication_name") and order.get("medication_name") != name:  # a class: another member's dose
            given = f"last dose given {when}: {name} ({dose.get('ref')})"
        since = f"order active since {_day(order.get('time'))} ({order.get('ref')})"
        if recent or hours is None:
            return final([True], f"Yes: {order.get('medication_name') or name} is active: {since}; {given}.")
        return final([True], f"Yes by its order: {order.get('medication_name') or name} is ordered ({since}), but no "
                             f"dose is charted in the {window:g} h before now: {given}, {_ago(hours)}.")
    status = latest_order.get("status")
    state = f"order status {status} ({latest_order.get('ref')})" if status and latest_order.get("ref") else "no active order"
    if recent:
        return final([True], f"Yes: {name} was given until {when} (last administration, {_ago(hours or 0)}, within "
                             f"the {window:g} h before now; {dose.get('ref')}), {state}.")
    return final([False], f"No: {name} is not active ({state}); {given}"
                          f"{', ' + _ago(hours) if hours is not None else ''}, more than {window:g} h before now.")
