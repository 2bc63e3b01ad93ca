"""A drug's regimen: "vanc dosing?", "heparin schedule", "sig for metformin", "how often is he getting heparin?", "is he
on vanc q12 or q8?", "current vanc order".

The regimen is what the drug's latest order as of the question's time states: its dose, route and how often
(``frequency`` per ``period``, else the order's timing code), "as needed" with its reason, and the order's own
dosage text, quoted. An active order wins over a later one that was completed or stopped; an order that is not
active says so. A drug charted only as administrations (no order on file) has no stated regimen: the answer says so
and lists the last doses given, with the hours between them, so the clinician sees the pattern without fhirqa
inventing a schedule. Words in ``lexicon/medication_regimen.json``; the latest single dose ("last vanc dose") and
the daily total stay with their own plans.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.dose_tally_plan import drug_named
from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
#: doses listed when no order states the regimen
_DOSES_SHOWN = 4


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("medication_regimen.json")


def regimen_asked(pq: ParsedQuestion) -> str | None:
    """The drug whose regimen the question asks for, or None."""
    spec = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    if pq.intent == "active_list" and pq.list_kind == "medication":
        return None  # "BP regimen?": read as the class that treats it, whose active members are the answer
    if not any(re.search(p, text) for p in spec["asks"]) or any(re.search(p, text) for p in spec["not"]):
        return None
    filler = [*spec["filler"], *re.findall(r"\bq\s?\d+\s?h?\b", text)]
    return drug_named(pq, filler, medication_cued=True) or None


def frequency_words(row: dict[str, Any]) -> str | None:
    """How often an order says to give the drug ("every 8 hours", "twice a day"), or None when it does not say."""
    spec = _spec()
    times, period, unit = row.get("frequency"), row.get("period"), row.get("period_unit")
    if times and period and unit:
        times, period = int(times), float(period)
        shown = f"{period:g}"
        said = spec["frequencies"].get(f"{times}/{shown} {unit}")
        if said:
            return str(said)
        words = spec["period_words"].get(unit, unit)
        if times == 1:
            return f"every {shown} {words}"
        return f"{times} times every {shown} {words}" if period != 1 else f"{times} times a {words.rstrip('s')}"
    code = row.get("timing_code")
    return str(code) if code else None


def sig(row: dict[str, Any]) -> str | None:
    """An order's dose, route and frequency in one phrase ("1250 mg IV every 8 hours"), or None when it states none."""
    from fhirqa.agent.backends.offline.plans import _with_unit

    parts = []
    if row.get("dose") is not None:
        parts.append(_with_unit(row["dose"], row.get("dose_unit")))
    if row.get("route"):
        parts.append(str(row["route"]))
    often = frequency_words(row)
    if often:
        parts.append(often)
    if row.get("as_needed"):
        reason = row.get("as_needed_reason")
        parts.append(f"as needed for {reason}" if reason else "as needed")
    return " ".join(parts) if (row.get("dose") is not None or often) else None


def plan_regimen(pq: ParsedQuestion, drug: str) -> Generator[Call, dict[str, Any], bool]:
    """The regimen of ``drug`` from its latest order; False (nothing yielded) when the record has no such drug."""
    from fhirqa.agent.backends.offline.plans import _ambiguous, _day, _iso, _row, final, find_records

    located = yield from find_records(pq, views=["medication"], entity=drug)
    if located is None:
        return False
    _, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, drug)
        return True
    orders = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "request", "field": "kind"})
    if orders.get("count") and pq.now is not None:  # an order written after the question's time is not yet known
        known = yield ("filter_by_date", {"records": orders["handle"], "end": _iso(pq.now)})
        orders = known if known.get("count") else {"count": 0}
    if orders.get("count"):
        active = yield ("filter_by_value", {"records": orders["handle"], "op": "==", "value": "active", "field": "status"})
        pick = active if active.get("count") else orders
        row = _row((yield ("get_by_index", {"records": pick["handle"], "index": -1})))
        name = row.get("medication_name") or drug
        stated = sig(row)
        status = row.get("status")
        state = "" if status in (None, "active") else f"; its status in the record: {status}"
        quoted = f', "{row["dosage_text"]}"' if row.get("dosage_text") else ""
        if stated is None and not row.get("dosage_text"):
            yield final([], f"The latest {name} order ({_day(row.get('time'))}{state}) states no dose or schedule.",
                        status="no-data")
            return True
        yield final([stated or row["dosage_text"]], f"{name}: {stated or row['dosage_text']} (order of "
                    f"{_day(row.get('time'))}{quoted}{state}).")
        return True
    return (yield from _from_doses(pq, found["handle"], drug))


def _from_doses(pq: ParsedQuestion, handle: str, drug: str) -> Generator[Call, dict[str, Any], bool]:
    """No order on file: say so, with the last doses given and the hours between them."""
    from fhirqa.agent.backends.offline.plans import NOT_GIVEN, _day, _instant, _iso, _row, _with_unit, final

    given = yield ("filter_by_value", {"records": handle, "op": "==", "value": "administration", "field": "kind"})
    if not given.get("count"):
        return False
    handle, count = given["handle"], int(given["count"])
    for status in NOT_GIVEN:
        kept = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
        if kept.get("count"):
            handle, count = kept["handle"], int(kept["count"])
    if pq.now is not None:
        before = yield ("filter_by_date", {"records": handle, "end": _iso(pq.now)})
        if not before.get("count"):
            return False
        handle, count = before["handle"], int(before["count"])
    rows = []
    for index in range(-min(count, _DOSES_SHOWN), 0):
        rows.append(_row((yield ("get_by_index", {"records": handle, "index": index}))))
    times: list[datetime] = [t for r in rows if (t := _instant(r.get("time"))) is not None]
    gaps = [round((b - a).total_seconds() / 3600, 1) for a, b in zip(times, times[1:], strict=False)]
    doses = "; ".join(f"{_with_unit(r.get('dose'), r.get('dose_unit')) if r.get('dose') is not None else 'a dose'} "
                      f"{r.get('time') or _day(None)}" for r in rows)
    between = f" ({', '.join(f'{g:g}' for g in gaps)} h apart)" if gaps else ""
    name = rows[-1].get("medication_name") or drug if rows else drug
    yield final([], f"No {name} order on file states a regimen. The last doses given: {doses}{between}.",
                status="no-data")
    return True
