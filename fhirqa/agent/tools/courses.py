"""The medication_courses tool: a drug's courses of therapy, as "day 5 of vanc" and "how long was she on zosyn?" count them.

A course is a run of administrations of one drug (its generic: brands and strengths together) with no gap longer
than ``gap_hours`` between doses (default 48 h: a once-daily drug given on consecutive days is one course; two
admissions months apart are two). A drug never charted as given is read from its orders instead: each order from
its start to its end (or, for an active order without an end, to now). A course is ``ongoing`` when its last dose
is within ``gap_hours`` of now, or its order is active. Its day count is calendar days, the first dose's day being
day 1 (the ward's "day N of antibiotics"). Every course's first and last dose or order is cited.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fhirqa.agent.tools.base import RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import as_time, cite
from fhirqa.agent.tools.localtime import iso as iso_time
from fhirqa.agent.tools.localtime import wall

NOT_GIVEN = frozenset({"not-done", "entered-in-error", "stopped", "on-hold"})
NOT_AN_ORDER = frozenset({"entered-in-error", "cancelled"})
RENEWAL_DAYS = 400  # an order without an end date is presumed to last until its renewal, if it comes within this


def medication_courses(ctx: ToolContext, item: str, gap_hours: float = 48) -> dict[str, Any]:
    """The courses of therapy of ``item`` (a drug or product), oldest first."""
    if gap_hours <= 0:
        raise ToolError("gap_hours must be positive")
    now = as_time(ctx.now)
    assert now is not None
    rows = [r for r in ctx.data.rows("medication") if r.get("medication_name")]
    names = sorted({str(r["medication_name"]) for r in rows})
    resolution = ctx.resolve("medication", item, names)
    if resolution.ambiguous or not resolution.matched:
        return {"ok": True, "item": item, "found": False, "courses": [],
                "candidates": (resolution.candidates or resolution.matched)[:10]}
    wanted = set(resolution.matched)
    rows = [r for r in rows if r["medication_name"] in wanted]
    records = RecordSet("medication", rows, f"medication ~ {item!r}")
    gap = timedelta(hours=gap_hours)
    # A held or missed dose is no dose, but it is charted while the drug is ordered: it keeps its course going.
    charted = sorted(((t, r) for r in rows if r.get("kind") == "administration"
                      and str(r.get("status") or "") != "entered-in-error"
                      and (t := as_time(r.get("time"))) is not None and t <= now), key=lambda p: p[0])
    courses: list[dict[str, Any]] = []
    if any(str(r.get("status") or "") not in NOT_GIVEN for _, r in charted):
        runs: list[list[tuple[datetime, dict[str, Any]]]] = [[]]
        for moment, row in charted:
            if runs[-1] and moment - runs[-1][-1][0] > gap:
                runs.append([])
            runs[-1].append((moment, row))
        courses = [c for run in runs if (c := _course(ctx, records, run, now, gap)) is not None]
    else:
        courses = _order_courses(ctx, records, rows, now, gap)
    return {"ok": True, "item": item, "found": True, "gap_hours": gap_hours, "courses": courses,
            "matched": sorted(wanted)}


def _order_courses(ctx: ToolContext, records: RecordSet, rows: list[dict[str, Any]], now: datetime,
                   gap: timedelta) -> list[dict[str, Any]]:
    """Courses read from orders: an order runs from its start to its end (an active one without an end: to now; any
    other without an end: until its renewal, up to RENEWAL_DAYS), and an order starting within ``gap`` of the
    previous one's end continues its course (yearly renewals of a chronic drug are one course)."""
    orders = sorted(((t, r) for r in rows if r.get("kind") in ("request", "statement")
                     and str(r.get("status") or "") not in NOT_AN_ORDER
                     and (t := as_time(r.get("time"))) is not None and t <= now), key=lambda p: p[0])
    courses: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for index, (start, row) in enumerate(orders):
        active = str(row.get("status") or "") == "active"
        end = as_time(row.get("end_time"))
        if end is None:
            following = orders[index + 1][0] if index + 1 < len(orders) else None
            end = now if active else (following if following is not None and following - start
                                      <= timedelta(days=RENEWAL_DAYS) else start)
        end = min(end, now)
        if current is not None and start - current["_end"] <= gap:
            current.update(_end=max(current["_end"], end), _last=row, ongoing=current["ongoing"] or (active and end >= now))
            continue
        current = {"_start": start, "_end": end, "_first": row, "_last": row, "ongoing": active and end >= now}
        courses.append(current)
    out = []
    for course in courses:
        cite(ctx, records, course["_first"], "medication_name")
        cite(ctx, records, course["_last"], "medication_name")
        out.append({"name": str(course["_last"]["medication_name"]), "start": iso_time(course["_start"]),
                    "end": iso_time(course["_end"]), "days": _days(course["_start"], course["_end"]), "doses": None,
                    "ongoing": course["ongoing"], "from": "orders", "first_ref": str(course["_first"].get("ref")),
                    "last_ref": str(course["_last"].get("ref"))})
    return out


def _course(ctx: ToolContext, records: RecordSet, run: list[tuple[datetime, dict[str, Any]]], now: datetime,
            gap: timedelta) -> dict[str, Any] | None:
    """One run of charted administrations as a course of the doses given in it (None when none was given)."""
    given = [(t, r) for t, r in run if str(r.get("status") or "") not in NOT_GIVEN]
    if not given:
        return None
    (start, first), (end, last) = given[0], given[-1]
    cite(ctx, records, first, "medication_name")
    cite(ctx, records, last, "medication_name")
    return {"name": str(last["medication_name"]), "start": iso_time(start), "end": iso_time(end),
            "days": _days(start, end), "doses": len(given), "ongoing": now - run[-1][0] <= gap, "from": "administrations",
            "first_ref": str(first.get("ref")), "last_ref": str(last.get("ref"))}


def _days(start: datetime, end: datetime) -> int:
    """Calendar days from the first day to the last, both counted (day 1 is the first dose's day), on the record's
    own clock (the ward's days)."""
    return (wall(end).date() - wall(start).date()).days + 1
