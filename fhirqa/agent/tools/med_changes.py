"""The medication_changes tool: what was started, stopped, finished or changed in dose, as a medication
reconciliation reads the orders.

Orders are the patient's MedicationRequest and MedicationStatement rows (dispenses and administrations are
fills and doses of an order, not changes of it); ``entered-in-error`` rows are not orders. A drug is its
generic when the lexicon knows the product (``Zocor 20 MG`` and ``Simvastatin 10 MG`` are one drug), else its
name as written. For each drug, ordered by time:

- **started**: its first order falls in the window (a renewal is not a start);
- **dose changed**: an order in the window whose product, dose or frequency differs from the drug's order before it;
- **stopped**: its latest order is ``stopped``/``cancelled`` (the words in ``lexicon/medication_changes.json``) and no
  order of it is active; dated by the order's end when recorded, else by the order itself (then the text says
  the stop date is not recorded);
- **finished**: the same for ``completed`` orders: a course that ran out (an antibiotic course), not a decision to stop.

Every order named in a result is cited as evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.tools.base import RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import as_time, cite, end_of, parse_when
from fhirqa.agent.tools.dates import UNITS, shift
from fhirqa.agent.tools.localtime import iso as iso_time
from fhirqa.agent.tools.localtime import within
from fhirqa.project import lexicon_file

ORDER_KINDS = ("request", "statement")
#: A strength in a product name ("Lisinopril 10 MG Oral Tablet", "Vancomycin 1,000 mg IVPB", "2.5 MG/ML").
_STRENGTH = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(mg|mcg|ug|g|unt|units?|meq|mmol|ml|%)(?![a-z])", re.IGNORECASE)


@lru_cache(maxsize=1)
def _statuses() -> dict[str, frozenset[str]]:
    spec = lexicon_file("medication_changes.json")["statuses"]
    return {group: frozenset(values) for group, values in spec.items()}


@dataclass
class _Order:
    row: dict[str, Any]
    time: datetime
    end: datetime | None

    @property
    def name(self) -> str:
        return str(self.row.get("medication_name"))

    @property
    def regimen(self) -> tuple[Any, ...]:
        """What a dose change changes: the strength (written in the product's name, so a brand and its generic
        of one strength are one regimen), the dose and how often; the dosage text only when no dose is coded."""
        r = self.row
        strength = tuple(sorted((float(n.replace(",", "")), u.lower()) for n, u in _STRENGTH.findall(self.name)))
        coded = (r.get("dose"), r.get("dose_unit"), r.get("frequency"), r.get("period"), r.get("period_unit"))
        return strength, coded, None if any(v is not None for v in coded) else r.get("dosage_text")

    def describe(self) -> str:
        r = self.row
        dose = r.get("dosage_text") or (f"{r['dose']:g} {r.get('dose_unit') or ''}".strip()
                                        if isinstance(r.get("dose"), int | float) else "")
        return f"{self.name}{', ' + str(dose) if dose else ''}"


def _drug_key(name: str) -> str:
    from fhirqa.agent.lexicon import Lexicon

    return Lexicon.load().drug_generic(name) or name.strip().lower()


def _window(ctx: ToolContext, start: str | None, end: str | None, last_amount: float | None,
            last_unit: str | None) -> tuple[datetime | None, datetime | None]:
    now = as_time(ctx.now)
    if last_amount is not None or last_unit is not None:
        if start is not None or end is not None:
            raise ToolError("give either start/end or last_amount/last_unit, not both")
        if last_amount is None or last_unit not in UNITS or last_amount <= 0:
            raise ToolError(f"last_amount (positive) and last_unit ({', '.join(UNITS)}) go together")
        assert now is not None
        return shift(now, -last_amount, last_unit), now
    low = parse_when(start, "start")[0] if start is not None else None
    high = end_of(*parse_when(end, "end")) if end is not None else now
    return low, high


def medication_changes(ctx: ToolContext, start: str | None = None, end: str | None = None,
                       last_amount: float | None = None, last_unit: str | None = None,
                       item: str | None = None) -> dict[str, Any]:
    """Medications started, stopped, finished and changed in dose in a window (default: the whole record to now)."""
    low, high = _window(ctx, start, end, last_amount, last_unit)
    statuses = _statuses()
    rows = [r for r in ctx.data.rows("medication")
            if r.get("kind") in ORDER_KINDS and r.get("medication_name")
            and str(r.get("status") or "") not in statuses["not_an_order"]]
    if item is not None:
        names = sorted({str(r["medication_name"]) for r in rows})
        resolution = ctx.resolve("medication", item, names)
        if resolution.ambiguous or not resolution.matched:
            return {"ok": True, "item": item, "found": False, "orders": 0,
                    "candidates": (resolution.candidates or resolution.matched)[:10],
                    "note": "no order of this drug in the record" if not resolution.matched else
                            "the drug phrase matches several drugs; ask again with one of the candidates"}
        wanted = set(resolution.matched)
        rows = [r for r in rows if r["medication_name"] in wanted]
    by_drug: dict[str, list[_Order]] = {}
    now = as_time(ctx.now)
    for row in rows:
        # Every order up to now, not only to the window's end: whether a drug was stopped then is known from
        # what came after (a statin renewed the next year was not stopped, whatever its old order's status).
        moment = as_time(row.get("time"))
        if moment is None or (now is not None and not within(moment, None, now)):
            continue
        by_drug.setdefault(_drug_key(str(row["medication_name"])), []).append(
            _Order(row, moment, as_time(row.get("end_time"))))
    records = RecordSet("medication", [o.row for orders in by_drug.values() for o in orders], "medication orders")
    started: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    stopped: list[dict[str, Any]] = []
    finished: list[dict[str, Any]] = []
    active: list[dict[str, Any]] = []  # the drug's latest active order, when one drug is asked about
    for drug, orders in sorted(by_drug.items()):
        orders.sort(key=lambda o: o.time)
        if within(orders[0].time, low, high):
            started.append(_entry(ctx, records, orders[0], drug))
        for before, after in zip(orders, orders[1:], strict=False):
            if before.regimen != after.regimen and within(after.time, low, high):
                entry = _entry(ctx, records, after, drug)
                entry["from"], entry["previous_ref"] = before.describe(), str(before.row.get("ref"))
                cite(ctx, records, before.row, "medication_name")
                changed.append(entry)
        last = orders[-1]
        status = str(last.row.get("status") or "")
        still = [o for o in orders if str(o.row.get("status") or "") in statuses["active"]]
        if still:  # still ordered: neither stopped nor finished
            if item is not None:
                active.append(_entry(ctx, records, still[-1], drug))
            continue
        group = stopped if status in statuses["stopped"] else finished if status in statuses["finished"] else None
        moment = last.end or last.time
        if group is not None and within(moment, low, high):
            entry = _entry(ctx, records, last, drug, moment)
            entry["status"], entry["stop_date_recorded"] = status, last.end is not None
            cite(ctx, records, last.row, "status")
            group.append(entry)
    return {"ok": True, "window": {"start": iso_time(low), "end": iso_time(high)},
            "orders": len(records.rows), "started": started, "dose_changed": changed, "stopped": stopped,
            "finished": finished,
            **({"item": item, "found": bool(records.rows), "active": active} if item is not None else {})}


def _entry(ctx: ToolContext, records: RecordSet, order: _Order, drug: str,
           moment: datetime | None = None) -> dict[str, Any]:
    cite(ctx, records, order.row, "medication_name")
    return {"drug": drug, "name": order.name, "order": order.describe(), "time": iso_time(moment or order.time),
            "ref": str(order.row.get("ref"))}
