"""The offline SQL writer's intents beyond single values: counts, existence, times, doses, lists, demographics.

Each function mirrors the FHIR plan of the same intent (:mod:`fhirqa.agent.backends.offline.plans`) with
the steps compiled to SQL by :class:`fhirqa.sql.offline_sql.Compiler`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from fhirqa.agent.tools.dates import completed_months
from fhirqa.sql.offline_sql import Compiler, Final, day, final, fmt
from fhirqa.sql.reading import ICU_CLASS, not_given_sql, says_first, without_dose_units
from fhirqa.sql.records import Spec

PREVIEW = 20  # names listed by a list answer (as the FHIR tools show)
_PERIOD_DAYS = {"s": 1 / 86400, "sec": 1 / 86400, "second": 1 / 86400, "min": 1 / 1440, "minute": 1 / 1440, "h": 1 / 24,
                "hr": 1 / 24, "hour": 1 / 24, "d": 1.0, "day": 1.0, "wk": 7.0, "week": 7.0, "mo": 30.0, "month": 30.0,
                "a": 365.0, "y": 365.0, "yr": 365.0, "year": 365.0}
_LATIN = {"qd": 1, "daily": 1, "once daily": 1, "once a day": 1, "bid": 2, "twice daily": 2, "twice a day": 2, "tid": 3,
          "three times daily": 3, "three times a day": 3, "qid": 4, "four times daily": 4, "four times a day": 4}


def elapsed(start: date, end: date, unit: str) -> int:
    """Whole calendar units from ``start`` to ``end`` (days, weeks, completed months or years)."""
    if end < start:
        return -elapsed(end, start, unit)
    if unit == "days":
        return (end - start).days
    if unit == "weeks":
        return (end - start).days // 7
    months = completed_months(start, end)
    return months if unit == "months" else months // 12


def daily_from_sig(sig: str | None, dose: float | None = None) -> float | None:
    """Doses per day from dosing instructions: "1 dose 2 times per 1 d", "every 6 h", "bid", "take 2 tid"."""
    if not sig:
        return None
    text = sig.lower().strip()
    amount = re.match(r"^\s*(?:take\s+)?(\d+(?:\.\d+)?)", text)
    base = float(amount.group(1)) if amount else (dose if dose is not None else 1.0)
    unit = r"(s|sec|seconds?|min|minutes?|h|hrs?|hours?|d|days?|wk|weeks?|mo|months?|a|y|yrs?|years?)\b"
    times = re.search(rf"(\d+(?:\.\d+)?)\s*(?:x|times?)\s*(?:per|every|a|an|/|each)\s*(\d+(?:\.\d+)?)?\s*{unit}", text)
    if times:
        return base * float(times.group(1)) / (float(times.group(2) or 1) * _PERIOD_DAYS[_unit_key(times.group(3))])
    every = re.search(rf"(?:every|q)\s*(\d+(?:\.\d+)?)?\s*{unit}", text)
    if every:
        return base / (float(every.group(1) or 1) * _PERIOD_DAYS[_unit_key(every.group(2))])
    for phrase, per_day in sorted(_LATIN.items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"\b{re.escape(phrase)}\b", text):
            return base * per_day
    return None


def _unit_key(unit: str) -> str:
    unit = unit.rstrip("s") if len(unit) > 2 else unit
    return {"second": "s", "sec": "s", "minute": "min", "hour": "h", "hr": "h", "day": "d", "week": "wk", "month": "mo",
            "year": "a", "yr": "a", "y": "a"}.get(unit, unit)


def count(c: Compiler) -> Final:
    """How many measurements / prescriptions / encounters (by class) / procedures."""
    pq, data = c.pq, c.data
    encounter_question = bool(pq.views) and pq.views[0] == "encounter"
    if encounter_question and pq.entity and c.find(["encounter"]) is None:
        pq.entity = ""
    if pq.encounter_class == ICU_CLASS:
        spec, label = Spec("icu_stay"), "ICU stays"
    elif pq.encounter_class or (not pq.entity and encounter_question):
        spec = Spec("encounter", cls=pq.encounter_class)
        what = {"IMP": "inpatient", "EMER": "emergency", "AMB": "ambulatory", "VR": "virtual", "HH": "home health",
                "WELLNESS": "wellness"}.get(pq.encounter_class or "", "")
        label = f"{what} encounters".strip()
    elif not pq.entity:
        view = pq.views[0] if pq.views else "observation"
        spec = Spec(view, kind="request" if view == "medication" else None)
        label = {"medication": "prescriptions", "condition": "conditions", "procedure": "procedures",
                 "immunization": "immunizations", "observation": "observations", "allergy": "allergies"}.get(view, view)
    else:
        # orders and administrations are often named apart (MIMIC PRESCRIPTIONS "Heparin", INPUTEVENTS_MV "Heparin
        # Sodium"): the phrase is first resolved among the names of the kind asked about
        found = c.find(["medication"], kind=pq.med_kind, among_kind=True) if pq.med_kind else None
        found = found or c.find(kind=pq.med_kind or "request")
        if found is None:
            return final([0], f"The record has no {pq.entity}; the count is 0.")
        if found.ambiguous:
            return c.ambiguous(found)
        spec = found.spec
        noun = "doses given" if pq.med_kind == "administration" else "prescriptions"
        label = f"{', '.join(found.items or [pq.entity])} " + (noun if spec.view == "medication" else "records")
    window = f" {pq.window.label}" if pq.window else ""
    # doses not given (a 'not-done' administration) are not doses given
    given = not_given_sql() if spec.view == "medication" and spec.kind == "administration" else ""
    rows = data.select(c.window(spec), order="r.time ASC, r.row_id ASC", extra=given)
    for row in rows:
        data.cite(row, "name")
    return final([len(rows)], f"{len(rows)} {label}{window}.")


def exists(c: Compiler) -> Final:
    """Yes/no: is the item in the record (within the window)? A question naming its kind searches that kind only."""
    pq, data = c.pq, c.data
    located = c.encounters()
    if located is not None and not located.count:
        return final([False], f"No: the record has no {c.class_label()} encounters.")
    # where the question's words and the lexicon point, and where the database's vocabulary files the name
    # ("hx of hydromorphone use" names a Drug concept: drug exposures are searched, not only conditions)
    pointed = [v for v in pq.views if v in pq.hinted or v in pq.lexicon_views]
    if pointed and pq.entity and not pq.lexicon_views:
        # only for phrases the lexicon does not place: "CKD" is a condition, not the eGFR concept "(CKD-EPI 2021)"
        placed = c.data.concept_views(pq.entity)
        pointed += [v for v in pq.views if v in placed and v not in pointed]
    if located is None and pq.med_kind and "medication" in (pointed or pq.views):
        # "heparin given on 6/2?": the administrations' own names first (MIMIC "Heparin Sodium" beside the order)
        located = c.find(["medication"], kind=pq.med_kind, among_kind=True)
    located = located or c.find(pointed or None)
    if located is None:
        searched = ", ".join(pointed or pq.views[:4])
        return final([False], f"No: nothing matching '{pq.entity}' in the record (searched {searched}).")
    if located.ambiguous:
        return c.ambiguous(located)
    row = data.at(c.window(located.spec), -1)
    if row is None:
        what = pq.entity or ("ICU stay" if pq.encounter_class == ICU_CLASS else f"{c.class_label()} encounter")
        return final([False], f"No {what} {pq.window.label if pq.window else ''}, although the record has it at other times.")
    data.cite(row, "name")
    return final([True], f"Yes: {row.get('name')}, most recently on {day(row.get('time'))}.")


def time_of(c: Compiler) -> Final:
    """Date of the first / last event. When the question asks when a device went in ("A-line insertion date?",
    :data:`fhirqa.sql.reading.PLACEMENT`), the first of its rows whose name says insertion, when the window holds
    any (else its first row)."""
    from fhirqa.sql.reading import PLACEMENT, words

    got = c.scoped(f"{c.entity_label()} records")
    if not isinstance(got, Spec):
        return got
    if PLACEMENT in c.pq.notes and got.names:
        marks = words()["placement"]["names"]
        inserted = tuple(n for n in got.names if any(m in n.lower() for m in marks))
        if inserted and c.data.count(got.narrowed(names=inserted)):
            got = got.narrowed(names=inserted)
    row = c.data.at(got, 0 if c.pq.position == "first" else -1)
    if row is None:
        return final([], f"No dated {c.pq.entity} records.", status="no-data")
    if got.view == "condition" and c.pq.position == "first":
        row = charted_in_stay(c, got, row)
    c.data.cite(row, "time")
    word = "first" if c.pq.position == "first" else "last"
    if got.view == "encounter" and c.pq.encounter_class and not c.pq.entity:  # a stay is named by its class, then its type
        return final([row["time"].isoformat()], f"The {word} {c.class_label()} encounter ({row.get('name')}) began on "
                     f"{day(row['time'])}.")
    return final([row["time"].isoformat()], f"The {word} {row.get('name')} was on {day(row['time'])}.")


def charted_in_stay(c: Compiler, spec: Spec, row: dict[str, Any]) -> dict[str, Any]:
    """The first row of a condition, dated as precisely as the record allows: a diagnosis coded for a hospital stay
    carries the stay's start as its time (MIMIC-III ``diagnoses_icd``, an OMOP condition at its visit's start) and says
    only "during that stay"; when the same condition is also charted with its own time later in that stay (a rhythm
    charted as atrial fibrillation on day 9), that row dates it. ``row`` itself otherwise."""
    from fhirqa.sql.connect import time_param

    stay_id = row.get("encounter_id")
    if stay_id is None or row.get("time") is None or "encounter" not in c.data.views:
        return row
    stays = c.data.select(Spec("encounter"), extra="r.encounter_id = :stay", params={"stay": stay_id}, limit=1)
    if not stays or stays[0].get("time") != row["time"]:
        return row  # not dated by its stay: the row's own time
    later = c.data.select(spec, order="r.time ASC, r.row_id ASC", limit=1,
                          extra="r.encounter_id = :stay AND r.time > :dated",
                          params={"stay": stay_id, "dated": time_param(c.data.con, row["time"])})
    return later[0] if later else row


def time_since(c: Compiler) -> Final:
    """Time from the last (or first) event until now, in completed units."""
    got = c.scoped(f"{c.entity_label()} records")
    if not isinstance(got, Spec):
        return got
    row = c.data.at(got, 0 if c.pq.position == "first" else -1)
    if row is None:
        return final([], f"No dated {c.pq.entity} records.", status="no-data")
    c.data.cite(row, "time")
    value = elapsed(row["time"].date(), c.data.now.date(), c.pq.time_unit)
    return final([value], f"{value} {c.pq.time_unit} since {row.get('name')} on {day(row['time'])}.", unit=c.pq.time_unit)


def daily_dose(c: Compiler) -> Final:
    """Daily total: per-day sums of administrations, else the latest dosed order's instructions."""
    pq, data = c.pq, c.data
    pq.entity = without_dose_units(pq.entity)
    found = None
    if pq.med_kind != "request":
        # what was given is charted apart from the order, often under another name (MIMIC INPUTEVENTS_MV "Insulin -
        # Regular" beside the PRESCRIPTIONS "Insulin"): the phrase is first resolved among the administrations' names
        found = c.find(["medication"], kind="administration", among_kind=True)
    found = found or c.find(["medication"])
    if found is None:
        if pq.comparison:
            return final([False], f"No: the record has no {pq.entity} at all.")
        return c.no_match(f"medication matching '{pq.entity}'")
    if found.ambiguous:
        return c.ambiguous(found)
    admin = found.spec.narrowed(kind="administration")
    if data.count(admin) and pq.med_kind != "request":
        return administered_per_day(c, admin)
    requests = found.spec.narrowed(kind="request")
    target = requests if data.count(requests) else found.spec
    rows = data.select(c.window(target), order="r.time DESC, r.row_id DESC", extra="r.time IS NOT NULL")
    if not rows:
        return final([], f"No {pq.entity} orders {pq.window.label if pq.window else ''}.", status="no-data")
    dosed = [(r, d) for r in rows if (d := _daily(r)) is not None]
    row, daily = dosed[0] if dosed else (rows[0], None)
    data.cite(row, "name")
    if daily is None:
        return final([], f"The latest {row.get('name')} order ({day(row.get('time'))}) has no dose and frequency to compute "
                     "a daily total from.", status="no-data")
    unit = row.get("dose_unit")
    if pq.comparison:
        limit = _convert(pq.comparison.value, pq.comparison.unit, unit)
        return final([_compare(daily, pq.comparison.op, pq.comparison.value if limit is None else limit)],
                     f"The ordered daily dose is {fmt(daily, unit)}.")
    return final([daily], f"{row.get('name')} ordered {day(row.get('time'))}: {row.get('sig') or ''} = {fmt(daily, unit)} per day.",
                 unit=unit)


def _daily(row: dict[str, Any]) -> float | None:
    """Doses per day of one order: its instructions, else quantity over days of supply."""
    daily = daily_from_sig(row.get("sig"), row.get("dose"))
    if daily is None and row.get("quantity") and row.get("days_supply") and float(row["days_supply"]) > 0:
        daily = float(row["quantity"]) / float(row["days_supply"])
    return None if daily is None else round(daily, 10)


def administered_per_day(c: Compiler, admin: Spec) -> Final:
    """What was given per day: over a limit on any day, the peak day, one day's total, or the latest day's."""
    pq, data = c.pq, c.data
    rows = data.select(c.window(admin), extra=f"r.dose IS NOT NULL AND r.time IS NOT NULL AND {not_given_sql()}",
                       order="r.time ASC, r.row_id ASC")
    if not rows:
        return final([], f"No {pq.entity} administrations {pq.window.label if pq.window else ''}.", status="no-data")
    days: dict[str, float] = {}
    for row in rows:
        data.cite(row)
        days[day(row["time"])] = days.get(day(row["time"]), 0.0) + float(row["dose"])
    units = list(dict.fromkeys(r.get("dose_unit") for r in rows if r.get("dose_unit")))
    unit = units[0] if len(units) == 1 else None
    if pq.unit and unit and not pq.comparison:
        # "in grams": the totals in the unit asked for, when the charted unit converts to it
        factor = _convert(1.0, unit, pq.unit)
        if factor is not None:
            days = {k: round(v * factor, 10) for k, v in days.items()}
            unit = pq.unit
    w = pq.window
    if w is not None and w.start is not None and w.end is not None and (w.end - w.start).total_seconds() <= 86_400 \
            and not pq.comparison:
        total = sum(days.values())
        return final([total], f"Total {pq.entity} given {w.label}: {fmt(total, unit)} over {len(rows)} administrations.", unit=unit)
    peak_day = max(days, key=lambda k: days[k])
    if pq.comparison:
        limit = _convert(pq.comparison.value, pq.comparison.unit, unit)
        if limit is None:
            return final([], f"Cannot compare {pq.comparison.unit} with {unit}.", status="error")
        over = _compare(days[peak_day], pq.comparison.op, limit)
        return final([over], f"{'Yes' if over else 'No'}: the highest daily total was {fmt(days[peak_day], unit)} on {peak_day}.")
    if pq.aggregate in ("max", "min"):
        chosen = peak_day if pq.aggregate == "max" else min(days, key=lambda k: days[k])
        word = "highest" if pq.aggregate == "max" else "lowest"
        return final([days[chosen]], f"The {word} daily total of {pq.entity} was {fmt(days[chosen], unit)} on {chosen}.", unit=unit)
    last = day(rows[-1]["time"])
    return final([days[last]], f"Total {pq.entity} given on {last}: {fmt(days[last], unit)}.", unit=unit)


def _convert(value: float, unit: str | None, to: str | None, analyte: str = "") -> float | None:
    from fhirqa.agent.units import convert

    return convert(value, unit, to, analyte)


def _compare(a: float, op: str, b: float) -> bool:
    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b, "==": a == b}.get(op, False)


def after_drug(c: Compiler) -> Final:
    """First / last value of an item after a drug was first started."""
    pq, data = c.pq, c.data
    drug = c.find(["medication"], entity=pq.drug)
    if drug is None:
        return c.no_match(f"medication matching '{pq.drug}'")
    if drug.ambiguous:
        return c.ambiguous(drug)
    start = data.at(drug.spec, 0)
    if start is None:
        return final([], f"No dated {pq.drug} orders.", status="no-data")
    data.cite(start, "time")
    found = c.find([v for v in pq.views if v != "medication"] or ["observation"])
    if found is None:
        return c.no_match(f"{pq.entity} results")
    if found.ambiguous:
        return c.ambiguous(found)
    row = data.at(found.spec.narrowed(after=start["time"]), 0 if pq.position == "first" else -1)
    if row is None:
        return final([], f"No {pq.entity} after {start.get('name')} was started on {day(start['time'])}.", status="no-data")
    value, unit = c.value_of(row)
    word = "first" if pq.position == "first" else "most recent"
    return final([value], f"The {word} {row.get('name')} after {start.get('name')} started on {day(start['time'])} was "
                 f"{fmt(value, unit)} on {day(row.get('time'))}.", unit=unit)


def _names(c: Compiler, spec: Spec, extra: str = "", params: dict[str, Any] | None = None) -> list[str]:
    named = c.data.distinct_names(spec, extra, params)
    for _, row in named[:PREVIEW]:
        c.data.cite(row, "name")
    return [name for name, _ in named[:PREVIEW]]


def _active(c: Compiler, view: str, at: datetime | None) -> tuple[str, dict[str, Any]]:
    """SQL condition (and parameters) for "active at ``at``" (None: now, by status for medications)."""
    from fhirqa.sql.connect import time_param

    moment = time_param(c.data.con, at or c.data.now)
    if view == "medication" and at is None:
        return "r.status IS NULL AND (r.end_time IS NULL OR r.end_time > :at)", {"at": moment}
    if view == "medication":
        return "r.time IS NOT NULL AND r.time <= :at AND (r.end_time IS NULL OR r.end_time >= :at)", {"at": moment}
    onset = "r.time IS NOT NULL AND " if view == "condition" else ""
    sql = f"{onset}(r.time IS NULL OR r.time <= :at) AND (r.end_time IS NULL OR r.end_time >= :at)"
    if view == "condition" and at is None:
        # clinically closed conditions are not current (an MI charted 'inactive' without an end date is over)
        sql += " AND (r.status IS NULL OR lower(r.status) NOT IN ('inactive', 'resolved', 'remission'))"
    return sql, {"at": moment}


def active_list(c: Compiler) -> Final:
    """Conditions, medications or allergies active at a time (default: now); "# active meds?" counts them."""
    pq = c.pq
    view = {"medication": "medication", "allergy": "allergy"}.get(pq.list_kind or "", "condition")
    when = f"on {pq.at_time.date()}" if pq.at_time else "currently"
    spec = Spec(view, kind="request" if view == "medication" else None)
    extra, params = _active(c, view, pq.at_time)
    if pq.aggregate == "count":  # distinct names on the list (a renewed order is one drug), 0 when none
        named = c.data.distinct_names(spec, extra, params)
        for _, row in named:
            c.data.cite(row, "name")
        shown = "; ".join(name for name, _ in named[:PREVIEW])
        return final([len(named)], f"{len(named)} active {pq.list_kind or view}(s) {when}" + (f": {shown}." if named else "."))
    names = _names(c, spec, extra, params)
    if not names:
        return final([], f"No active {pq.list_kind or view}s {when}.")
    return final(names, f"Active {pq.list_kind or view}s {when}: {'; '.join(names)}.")


def active_check(c: Compiler) -> Final:
    """Yes/no: is this condition or medication active now (or at the asked date)? With an encounter class and no
    item ("is she in the ICU right now?"): is a stay of that class open at that time."""
    pq, data = c.pq, c.data
    if pq.encounter_class and not pq.entity:
        return _in_stay_now(c)
    view = {"medication": "medication", "allergy": "allergy"}.get(pq.list_kind or "", "condition")
    found = c.find([view], kind="request")
    if found is None:
        return final([False], f"No: the record has no {pq.entity} at all.")
    if found.ambiguous:
        return c.ambiguous(found)
    at = None if view == "medication" else pq.at_time
    extra, params = _active(c, view, at)
    if view != "medication":
        extra = extra.replace("r.time IS NOT NULL AND ", "")
    rows = data.select(found.spec, extra=extra, params=params, order="r.time DESC, r.row_id DESC", limit=1)
    if rows:
        data.cite(rows[0], "name")
        return final([True], f"Yes: {rows[0].get('name')} is active (since {day(rows[0].get('time'))}).")
    row = data.at(found.spec, -1) or {}
    if row:
        data.cite(row, "name")
    ended = row.get("end_time")
    return final([False], f"No: {row.get('name') or pq.entity} is not active (last recorded {day(row.get('time'))}"
                 f"{', ended ' + day(ended) if ended else ''}).")


def _in_stay_now(c: Compiler) -> Final:
    """Whether the patient is in an encounter of the question's class (an ICU stay: ``icu_stay``) at the asked time
    (default: now): one begun by then and not ended before it; the stay (or the latest one) is cited."""
    from fhirqa.sql.connect import time_param

    pq, data = c.pq, c.data
    at = pq.at_time or data.now
    spec = Spec("icu_stay") if pq.encounter_class == ICU_CLASS else Spec("encounter", cls=pq.encounter_class)
    what = "an ICU stay" if pq.encounter_class == ICU_CLASS else f"a {c.class_label()} encounter"
    when = f"on {at.date()}" if pq.at_time else "now"
    rows = data.select(spec, order="r.time DESC, r.row_id DESC", limit=1, params={"at": time_param(data.con, at)},
                       extra="r.time IS NOT NULL AND r.time <= :at AND (r.end_time IS NULL OR r.end_time >= :at)")
    if rows:
        data.cite(rows[0], "time")
        return final([True], f"Yes: in {what} {when} ({rows[0].get('name')}, since {day(rows[0]['time'])}).")
    last = data.at(spec, -1)
    if last is None:
        return final([False], f"No: the record has no {c.class_label()} stays.")
    data.cite(last, "time")
    ended = f" to {day(last['end_time'])}" if last.get("end_time") else ""
    return final([False], f"No: not in {what} {when}; the last was {last.get('name')} from {day(last['time'])}{ended}.")


def list_items(c: Compiler) -> Final:
    """Distinct item names of a view (within the window); "what was started" lists the first orders only."""
    if c.pq.aggregate == "started":
        return started(c)
    view = c.pq.views[0] if c.pq.views else "condition"
    names = _names(c, c.window(Spec(view)))
    if not names:
        return final([], f"The record has no {view} entries.", status="no-data")
    return final(names, f"{len(names)} distinct: {'; '.join(names)}.")


def started(c: Compiler) -> Final:
    """Items first recorded in the window ("meds started in the last 90 days?", "new meds since admission?"): the
    names ordered in the window that no earlier order has (a renewal of an earlier order is no start, and is named
    apart), as the FHIR path's plan_started reads them."""
    pq, data = c.pq, c.data
    view = pq.views[0] if pq.views else "medication"
    spec = Spec(view, kind="request" if view == "medication" else None)
    what = "medications" if view == "medication" else f"{view} entries"
    label = pq.window.label if pq.window else "in that window"
    window = c.window(spec)
    if window.start is not None:
        # an order dated by its day only (MIMIC PRESCRIPTIONS STARTDATE, at midnight) belongs to that whole day: the
        # admission day's orders are this admission's, though the stay began at 06:07
        window = window.narrowed(start=datetime.combine(window.start.date(), datetime.min.time(), window.start.tzinfo))
    inside = [(name, row) for name, row in data.distinct_names(window)
              if pq.window is None or pq.window.start is None or _on_or_after(row.get("time"), pq.window.start)]
    if not inside:
        return final([], f"Nothing was started {label} (no {what} in that window).")
    earlier: set[str] = set()
    if window.start is not None:
        from fhirqa.sql.connect import time_param

        before = data.distinct_names(spec, "r.time < :start", {"start": time_param(data.con, window.start)})
        earlier = {name for name, _ in before}
    new = [(name, row) for name, row in inside if name not in earlier]
    renewed = [name for name, _ in inside if name in earlier]
    for _, row in inside[:PREVIEW]:  # the starts and the renewals alike rest on their first order in the window
        data.cite(row, "time")
    also = f" ({len(renewed)} renewed, ordered before too: {'; '.join(renewed)})" if renewed else ""
    if not new:
        return final([], f"Nothing new was started {label}{also}.")
    shown = [f"{name} ({day(row.get('time'))})" for name, row in new]
    return final([name for name, _ in new], f"Started {label}: {'; '.join(shown)}{also}.")


def _on_or_after(moment: Any, start: datetime) -> bool:
    """``moment`` is at or after ``start``, a time dated by its day only (midnight) counting as that whole day."""
    if moment is None:
        return False
    if isinstance(moment, datetime) and moment.time() == datetime.min.time():
        return moment.date() >= start.date()
    return bool(moment >= start)


def age(c: Compiler) -> Final:
    """Completed years from birth to now (or to death)."""
    person = c.person  # type: ignore[attr-defined]
    if person is None or person.birth_date is None:
        return final([], "The record has no birth date.", status="no-data")
    if c.pq.encounter_class and c.pq.encounter_class != ICU_CLASS:
        return _age_at_encounter(c, person)
    end = person.deceased_time.date() if person.deceased_time else c.data.now.date()
    years = elapsed(person.birth_date, end, "years")
    died = f" at death on {day(person.deceased_time)}" if person.deceased_time else ""
    return final([years], f"The patient is {years} years old{died} (born {person.birth_date}).", unit="years")


def _age_at_encounter(c: Compiler, person: Any) -> Final:
    """"How old was he when admitted (last admission)?": completed years at the start of the latest encounter of
    the class the question names (the first one when it says "first")."""
    first = says_first(c.pq)
    row = c.data.at(Spec("encounter", cls=c.pq.encounter_class), 0 if first else -1)
    if row is None:
        return final([], f"The record has no {c.class_label()} encounters.", status="no-data")
    c.data.cite(row, "time")
    years = elapsed(person.birth_date, row["time"].date(), "years")
    return final([years], f"{years} years old at the {'first' if first else 'latest'} {c.class_label()} encounter on "
                 f"{day(row['time'])} (born {person.birth_date}).", unit="years")


def encounter_diagnoses(c: Compiler, principal: bool, first: bool) -> Final:
    """The coded diagnoses of one encounter (the latest of the question's class, the first when it says "first"),
    in the record's order (MIMIC ``SEQ_NUM``); ``principal``: the one ranked first (MIMIC ``SEQ_NUM`` 1, OMOP a
    primary condition concept)."""
    from fhirqa.agent.backends.offline.plans import STAY_CLASSES

    data = c.data
    classes = [c.pq.encounter_class] if c.pq.encounter_class else list(STAY_CLASSES)
    keys = {f"c{i}": cls for i, cls in enumerate(classes)}
    listed = ", ".join(":" + k for k in keys)
    stays = data.select(Spec("encounter"), order=f"r.time {'ASC' if first else 'DESC'}, r.row_id {'ASC' if first else 'DESC'}",
                        limit=1, extra=f"r.time IS NOT NULL AND r.encounter_id IS NOT NULL AND (r.class_code IN ({listed}) "
                        f"OR r.alt_class IN ({listed}))", params=keys)
    if not stays:
        return final([], f"The record has no {c.class_label()} encounters.", status="no-data")
    stay = stays[0]
    data.cite(stay, "time")
    when = f"the {'first' if first else 'latest'} {c.class_label()} encounter ({day(stay['time'])})"
    rows = data.select(Spec("condition"), order="r.rank IS NULL, r.rank ASC, r.row_id ASC", extra="r.encounter_id = :stay",
                       params={"stay": stay["encounter_id"]})
    # a stay whose rows include diagnoses recorded as such (billing, discharge: category 'encounter-diagnosis') beside
    # others (rhythms charted during it) has those as its diagnoses
    coded = [r for r in rows if r.get("category") == "encounter-diagnosis"]
    rows = coded or rows
    if principal:
        rows = [r for r in rows if r.get("rank") is not None and float(r["rank"]) == 1]
        if not rows:
            return final([], f"No diagnosis of {when} is marked as the principal one.", status="no-data")
    if not rows:
        return final([], f"No diagnoses are coded for {when}.", status="no-data")
    names: list[str] = []
    for row in rows:
        data.cite(row, "name")
        if row.get("name") is not None and str(row["name"]) not in names:
            names.append(str(row["name"]))
    if principal:
        return final(names[:1], f"The principal diagnosis of {when}: {names[0]}.")
    return final(names, f"{len(names)} diagnoses of {when}: {'; '.join(names)}.")


def age_at(c: Compiler) -> Final:
    """Age (completed years) at the first (or last) time of an event."""
    c.pq.entity = " ".join(w for w in c.pq.entity.split() if w not in ("age", "old", "years"))
    got = c.scoped(f"{c.entity_label()} records")
    if not isinstance(got, Spec):
        return got
    person = c.person  # type: ignore[attr-defined]
    row = c.data.at(got, 0 if c.pq.position == "first" else -1)
    if row is None or person is None or person.birth_date is None:
        return final([], "The record has no birth date or no dated event.", status="no-data")
    c.data.cite(row, "time")
    years = elapsed(person.birth_date, row["time"].date(), "years")
    return final([years], f"{years} years old at {row.get('name')} on {day(row['time'])} (born {person.birth_date}).",
                 unit="years")


def demographic(c: Compiler) -> Final:
    """Birth date, gender, name or death."""
    person = c.person  # type: ignore[attr-defined]
    kind = c.pq.demographic or "name"
    if person is None:
        return final([], "The record has no demographics for this patient.", status="no-data")
    if kind == "is_alive":
        return final([not person.deceased], f"No: died on {day(person.deceased_time)}." if person.deceased else
                     "Yes: no death is recorded.")
    if kind == "is_deceased":
        return final([person.deceased], f"Yes: died on {day(person.deceased_time)}." if person.deceased else "No death is recorded.")
    if kind == "deceased":  # the date of death: none recorded is no date (a living patient), as on the FHIR path
        if not person.deceased:
            return final([], "No death is recorded.", status="no-data")
        when = person.deceased_time.isoformat() if person.deceased_time else True
        return final([when], f"Died on {day(person.deceased_time)}.")
    value = {"birth_date": person.birth_date.isoformat() if person.birth_date else None, "gender": person.gender,
             "name": person.name}.get(kind)
    if value is None:
        return final([], f"The record has no {kind.replace('_', ' ')}.", status="no-data")
    return final([value], f"{kind.replace('_', ' ').capitalize()}: {value}.")


def value(c: Compiler) -> Final:
    """Latest / first value."""
    return c.value()


INTENTS: dict[str, Callable[[Compiler], Final]] = {
    "value": value, "aggregate": Compiler.aggregate, "count": count, "exists": exists,
    "threshold": Compiler.threshold, "time_of": time_of, "time_since": time_since, "change": Compiler.change,
    "trend": Compiler.trend, "daily_dose": daily_dose, "after_drug": after_drug, "active_list": active_list,
    "list_items": list_items, "age": age, "demographic": demographic, "age_at": age_at, "active_check": active_check,
}
