"""The window_events tool: what happened to the patient in a window, as a clinician means "o/n events".

An event is a record that changes the picture, read over one window (``lexicon/window_events.json``):

- a **result judged outside its normal range**, by the normality plan's own judgement (the result's interpretation
  flag, else the reference range it carries, else the usual adult range of ``lexicon/reference_ranges.json``);
- a **clinical state crossed** by a vital sign (febrile, hypotensive, hypoxic, tachycardic…: the thresholds of
  ``lexicon/clinical_states.json``), one event per state with its extreme value and how many values crossed;
- a **dose given as needed** (PRN: :func:`as_needed`) or a **dose charted not given**, with the reason it charts;
- an **order started, changed in dose, stopped or finished** (the ``medication_changes`` reconciliation over the window);
- a **procedure**, an **encounter begun or ended** (an admission, an ED visit, a discharge) and a **note written**.

Every event listed is cited. The counts of what the window holds (results, doses, orders, notes…) come back too,
so a caller can tell "nothing abnormal" from "nothing charted at all".
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.tools.base import PREVIEW_ROWS, RecordSet, ToolContext
from fhirqa.agent.tools.common import as_time, cite
from fhirqa.agent.tools.localtime import iso as iso_time
from fhirqa.agent.tools.localtime import within
from fhirqa.agent.tools.records import ENTERED_IN_ERROR
from fhirqa.project import lexicon_file


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    return lexicon_file("window_events.json")


@lru_cache(maxsize=1)
def _as_needed_spec() -> tuple[re.Pattern[str], frozenset[str]]:
    spec = lexicon_file("medication_activity.json")["as_needed"]
    not_given = lexicon_file("drugs.json").get("doses_not_given", {}).get("statuses", [])
    return re.compile("|".join(spec["marks"]), re.IGNORECASE), frozenset([*not_given, ENTERED_IN_ERROR])


def not_given_statuses() -> frozenset[str]:
    """Administration statuses that mean the dose was not given (``doses_not_given`` of ``lexicon/drugs.json``)."""
    return _as_needed_spec()[1]


def _marked(row: dict[str, Any]) -> str | None:
    """How one medication row says it is taken as needed, or None when it does not."""
    flag = row.get("as_needed")
    if flag is True or str(flag).lower() == "true":
        return "marked as needed"
    if row.get("as_needed_reason"):
        return f"as needed for {row['as_needed_reason']}"
    text = row.get("dosage_text")
    if text and _as_needed_spec()[0].search(str(text)):
        return f"sig: {text}"
    return None


def as_needed(row: dict[str, Any], orders: dict[str, dict[str, Any]]) -> str | None:
    """Why a medication row is a PRN (as needed) dose or order, or None.

    The row's own asNeeded or dosage text decides first; an administration that says nothing is PRN when the order
    it names (``request_ref``, looked up in ``orders`` by reference) is.
    """
    own = _marked(row)
    if own is not None or row.get("as_needed") is False:
        return own
    order = orders.get(str(row.get("request_ref") or ""))
    found = _marked(order) if order is not None else None
    return f"order {found}" if found else None


def orders_by_ref(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The medication rows by reference (the orders an administration's ``request_ref`` names)."""
    return {str(r["ref"]): r for r in rows if r.get("ref")}


def prn_marked(rows: list[dict[str, Any]]) -> int:
    """How many of the patient's medication rows the record marks as needed at all (0: it never writes PRN)."""
    return sum(1 for r in rows if _marked(r) is not None)


def patient_row(ctx: ToolContext) -> dict[str, Any]:
    """The patient's own row (birth date and sex, which a result's usual range can depend on); {} when none."""
    rows = ctx.data.rows("patient")
    return dict(rows[0]) if rows else {}


def skipped_categories() -> set[str]:
    """Result categories never judged (questionnaire scores, social history: ``skip_categories``), lower-cased."""
    return {c.lower() for c in _spec()["skip_categories"]}


def _when(row: dict[str, Any], field: str) -> datetime | None:
    return as_time(row.get(field))


def _event(ctx: ToolContext, view: str, row: dict[str, Any], kind: str, what: str, moment: datetime,
           field: str | None = None) -> dict[str, Any]:
    cite(ctx, RecordSet(view, [], ""), row, field)
    return {"time": iso_time(moment), "kind": kind, "what": what, "ref": str(row.get("ref"))}


def _fmt(value: Any, unit: Any = None) -> str:
    from fhirqa.agent.backends.offline.plans import _with_unit

    return _with_unit(value, str(unit) if unit else None)


def _results(ctx: ToolContext, rows: list[tuple[datetime, dict[str, Any]]]
             ) -> tuple[list[tuple[datetime, dict[str, Any], dict[str, Any]]], int]:
    """Results of the window judged outside their normal range: (time, row, event) and how many were judged."""
    # the normality plan's own judgement (flag, the record's range, the usual range), not a second copy of it
    from fhirqa.agent.backends.offline.normality_plan import judge

    patient = patient_row(ctx)
    skip = skipped_categories()
    out: list[tuple[datetime, dict[str, Any], dict[str, Any]]] = []
    judged = 0
    for moment, row in rows:
        if str(row.get("category") or "").lower() in skip:
            continue
        if row.get("value") is None and not row.get("interpretation"):
            continue  # a text result with no flag: nothing says it is abnormal
        verdict = judge(row, patient)
        judged += 1
        if verdict.side in (None, "normal"):
            continue
        shown = _fmt(row.get("value"), row.get("unit")) if row.get("value") is not None else str(row.get("value_string") or "")
        out.append((moment, row, {"side": verdict.side, "what": f"{row.get('name')} {shown} {verdict.side} "
                                                               f"({verdict.basis})"}))
    return out, judged


def _states(ctx: ToolContext, rows: list[tuple[datetime, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each clinical state crossed by the window's vital signs: its extreme value (cited) and how many crossed."""
    from fhirqa.agent.units import convert as _convert

    states = [s for s in lexicon_file("clinical_states.json")["states"] if not s.get("invert")]
    names = ctx.data.items("observation")
    events: list[dict[str, Any]] = []
    seen: set[tuple[str, str, float]] = set()
    tests = {">": lambda v, t: v > t, ">=": lambda v, t: v >= t, "<": lambda v, t: v < t, "<=": lambda v, t: v <= t}
    for state in states:
        key = (state["item"], state["op"], float(state["value"]))
        if key in seen:
            continue
        seen.add(key)
        resolution = ctx.resolve("observation", state["item"], names)
        if resolution.ambiguous or not resolution.matched or str(resolution.how).startswith("fuzzy"):
            continue
        matched = set(resolution.matched)
        hits: list[tuple[float, datetime, dict[str, Any]]] = []
        for moment, row in rows:
            if row.get("name") not in matched or not isinstance(row.get("value"), int | float):
                continue
            value = float(row["value"])
            if state.get("unit"):
                converted = _convert(value, row.get("unit"), state["unit"]) if row.get("unit") else None
                if converted is None:
                    continue
                value = converted
            if tests[state["op"]](value, float(state["value"])):
                hits.append((value, moment, row))
        if not hits:
            continue
        pick = max if state["op"].startswith(">") else min
        value, moment, row = pick(hits, key=lambda h: h[0])
        word = state["adjectives"][0] if state.get("adjectives") else state["nouns"][0]
        extreme = "highest" if state["op"].startswith(">") else "lowest"
        what = (f"{word}: {len(hits)} {state['item']} value{'s' if len(hits) > 1 else ''} {state['op']} "
                f"{float(state['value']):g}{' ' + state['unit'] if state.get('unit') else ''}, {extreme} "
                f"{_fmt(row.get('value'), row.get('unit'))}")
        events.append({"moment": moment, "row": row, "what": what, "state": word, "crossed": len(hits)})
    return events


def window_events(ctx: ToolContext, start: str | None = None, end: str | None = None,
                  last_amount: float | None = None, last_unit: str | None = None,
                  limit: int | None = None) -> dict[str, Any]:
    """The events of a window (see the module docstring), in time order, at most ``limit`` listed and cited, with the
    counts of every kind of record the window holds."""
    from fhirqa.agent.tools.filters import _window
    from fhirqa.agent.tools.med_changes import medication_changes

    low, high = _window(ctx, start, end, last_amount, last_unit)
    now = as_time(ctx.now)
    high = now if high is None else high

    def inside(row: dict[str, Any], field: str) -> datetime | None:
        moment = _when(row, field)
        if moment is None or row.get("status") == ENTERED_IN_ERROR or not within(moment, low, high):
            return None
        if now is not None and moment > now:
            return None
        return moment

    found: list[tuple[datetime, str, dict[str, Any], str, str, str | None]] = []  # (time, view, row, kind, what, field)
    counts: dict[str, int] = {}
    # results and vital signs
    observations = [(m, r) for r in ctx.data.rows("observation") if (m := inside(r, "time")) is not None]
    vital_categories = {c.lower() for c in _spec()["state_categories"]}
    vitals = [(m, r) for m, r in observations if str(r.get("category") or "").lower() in vital_categories]
    others = [(m, r) for m, r in observations if str(r.get("category") or "").lower() not in vital_categories]
    counts["results"], counts["vital_signs"] = len(others), len(vitals)
    abnormal, counts["results_judged"] = _results(ctx, others)
    counts["abnormal_results"] = len(abnormal)
    for moment, row, event in abnormal:
        found.append((moment, "observation", row, "abnormal result", event["what"], "value"))
    states = _states(ctx, vitals)
    counts["states_crossed"] = len(states)
    for state in states:
        found.append((state["moment"], "observation", state["row"], "state", state["what"], "value"))
    # doses
    medications = ctx.data.rows("medication")
    orders = orders_by_ref(medications)
    statuses = not_given_statuses()
    doses = [(m, r) for r in medications if r.get("kind") == "administration" and (m := inside(r, "time")) is not None]
    given = [(m, r) for m, r in doses if str(r.get("status") or "") not in statuses]
    counts["doses_given"] = len(given)
    counts["prn_doses"] = 0
    for moment, row in given:
        why = as_needed(row, orders)
        if why is not None:
            counts["prn_doses"] += 1
            dose = row.get("dosage_text") or _fmt(row.get("dose"), row.get("dose_unit"))
            found.append((moment, "medication", row, "PRN dose", f"{row.get('medication_name')} {dose} given PRN ({why})",
                          "medication_name"))
    held = [(m, r) for m, r in doses if str(r.get("status") or "") in statuses and r.get("status") != ENTERED_IN_ERROR]
    counts["doses_not_given"] = len(held)
    for moment, row in held:
        reason = f": {row['status_reason']}" if row.get("status_reason") else " (no reason charted)"
        found.append((moment, "medication", row, "dose not given",
                      f"{row.get('medication_name')} not given ({row.get('status')}){reason}", "status"))
    counts["prn_marked_in_record"] = prn_marked(medications)
    # orders: the reconciliation's reading (a renewal is no start), cited by that tool
    changes = medication_changes(ctx, start=iso_time(low) if low is not None else None, end=iso_time(high))
    counts["orders"] = sum(1 for r in medications if r.get("kind") in ("request", "statement")
                           and inside(r, "time") is not None)
    order_events = 0
    for key, word in (("started", "started"), ("dose_changed", "dose changed"), ("stopped", "stopped"),
                      ("finished", "finished")):
        for entry in changes.get(key, []):
            when = as_time(entry.get("time"))
            if when is None:
                continue
            extra = f" (from {entry['from']})" if entry.get("from") else ""
            order_events += 1
            found.append((when, "", {"ref": entry.get("ref")}, f"order {word}",
                          f"{entry.get('name')} {word}: {entry.get('order')}{extra}", None))
    counts["order_changes"] = order_events
    # procedures, encounters, notes
    procedures = [(m, r) for r in ctx.data.rows("procedure") if (m := inside(r, "start_time")) is not None]
    counts["procedures"] = len(procedures)
    for moment, row in procedures:
        found.append((moment, "procedure", row, "procedure", f"{row.get('name')} ({row.get('status') or 'status not given'})",
                      "name"))
    counts["encounters"] = 0
    for row in ctx.data.rows("encounter"):
        kind = row.get("class_name") or row.get("class_code") or "encounter"
        for edge, word in (("start_time", "began"), ("end_time", "ended")):
            at = inside(row, edge)
            if at is not None:
                counts["encounters"] += 1
                what = f"{row.get('type_name') or 'encounter'} ({kind}) {word}"
                if word == "ended" and row.get("discharge_disposition"):
                    what += f", discharged to {row['discharge_disposition']}"
                found.append((at, "encounter", row, f"encounter {word}", what, "type_name"))
    notes = [(m, r) for r in ctx.data.rows("note") if (m := inside(r, "time")) is not None]
    counts["notes"] = len(notes)
    for moment, row in notes:
        author = f" by {row['author']}" if row.get("author") else ""
        found.append((moment, "note", row, "note", f"{row.get('note_type') or 'note'} written{author}", "note_type"))
    found.sort(key=lambda f: (f[0], f[3], f[4]))
    cap = max(1, min(100, limit or PREVIEW_ROWS))
    listed = []
    for moment, view, row, kind, what, cited in found[:cap]:
        if view:
            listed.append(_event(ctx, view, row, kind, what, moment, cited))
        else:  # an order change, cited by medication_changes
            listed.append({"time": iso_time(moment), "kind": kind, "what": what, "ref": str(row.get("ref"))})
    return {"ok": True, "window": {"start": iso_time(low), "end": iso_time(high)}, "count": len(found),
            "events": listed, "omitted": max(0, len(found) - cap), "counts": counts,
            "records_in_window": sum(counts[k] for k in ("results", "vital_signs", "doses_given", "doses_not_given",
                                                         "orders", "procedures", "encounters", "notes"))}
