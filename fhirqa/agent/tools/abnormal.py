"""The abnormal_results tool: which results of a kind were outside their normal range, over a window or on the latest
day that has any ("any abnormal labs?", "were her last labs normal?", "which labs were flagged this admission?"), or
which were past a critical (panic) limit ("any critical values?").

Each result is judged by the normality plan's own judgement (the result's interpretation flag, else the reference
range it carries, else the usual adult range of ``lexicon/reference_ranges.json``), the one the window_events tool
uses, so "abnormal" means the same thing in every answer. Results with nothing to judge them by are counted, not
guessed at. Every abnormal result listed is cited.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fhirqa.agent.tools.base import PREVIEW_ROWS, RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import as_time, cite
from fhirqa.agent.tools.localtime import in_offset, within
from fhirqa.agent.tools.localtime import iso as iso_time
from fhirqa.agent.tools.records import ENTERED_IN_ERROR

CATEGORIES = ("laboratory", "vital-signs", "all")


def _category_matches(row: dict[str, Any], category: str, skip: set[str]) -> bool:
    kind = str(row.get("category") or "").lower()
    if kind in skip:
        return False
    if category == "all":
        return True
    if category == "vital-signs":
        return kind == "vital-signs"
    return kind != "vital-signs"  # laboratory: a result that is not a vital sign (uncategorized ones included)


def _local_day(row: dict[str, Any], moment: datetime) -> Any:
    offset = row.get("time_offset")
    return in_offset(moment, offset if isinstance(offset, int) else None).date()


def abnormal_results(ctx: ToolContext, category: str = "laboratory", start: str | None = None, end: str | None = None,
                     last_amount: float | None = None, last_unit: str | None = None, latest_day: bool = False,
                     limit: int | None = None, critical: bool = False) -> dict[str, Any]:
    """The results of ``category`` in the window (or, with ``latest_day``, of the latest day holding any) judged
    outside their normal range (with ``critical``: past a critical limit), each with the basis of its judgement and
    cited; with the counts of what was judged."""
    from fhirqa.agent.backends.offline.normality_plan import NOT_CRITICAL, judge, judge_critical
    from fhirqa.agent.tools.events import patient_row, skipped_categories
    from fhirqa.agent.tools.filters import _window

    if category not in CATEGORIES:
        raise ToolError(f"category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    bounded = any(v is not None for v in (start, end, last_amount, last_unit))
    low, high = _window(ctx, start, end, last_amount, last_unit) if bounded else (None, None)
    now = as_time(ctx.now)
    skip = skipped_categories()
    rows: list[tuple[datetime, dict[str, Any]]] = []
    for row in ctx.data.rows("observation"):
        moment = as_time(row.get("time"))
        if moment is None or row.get("status") == ENTERED_IN_ERROR or (now is not None and moment > now):
            continue
        if (low is not None or high is not None) and not within(moment, low, high):
            continue
        if _category_matches(row, category, skip):
            rows.append((moment, row))
    day = None
    if latest_day and rows:
        last_moment, last_row = max(rows, key=lambda mr: mr[0])
        day = _local_day(last_row, last_moment)
        rows = [(m, r) for m, r in rows if _local_day(r, m) == day]
    rows.sort(key=lambda mr: (mr[0], str(mr[1].get("name") or "")))
    patient = patient_row(ctx)
    abnormal: list[dict[str, Any]] = []
    judged = unjudged = 0
    cap = max(1, min(100, limit or PREVIEW_ROWS))
    omitted = 0
    for moment, row in rows:
        if row.get("value") is None and not row.get("interpretation"):
            unjudged += 1  # a text result with no flag: nothing says whether it is normal
            continue
        try:
            verdict = judge_critical(row) if critical else judge(row, patient)
        except (TypeError, ValueError):  # a flag judge() does not read and no number: nothing to judge by
            unjudged += 1
            continue
        if verdict.side is None:
            unjudged += 1
            continue
        judged += 1
        if verdict.side in ("normal", NOT_CRITICAL):
            continue
        if len(abnormal) >= cap:
            omitted += 1
            continue
        cite(ctx, RecordSet("observation", [], ""), row, "value" if row.get("value") is not None else None)
        abnormal.append({"time": iso_time(moment), "name": row.get("name"), "value": row.get("value"),
                         "value_string": row.get("value_string"), "unit": row.get("unit"), "side": verdict.side,
                         "basis": verdict.basis, "ref": str(row.get("ref"))})
    return {"ok": True, "category": category, "critical": critical, "window": {"start": iso_time(low), "end": iso_time(high)},
            "latest_day": day.isoformat() if day is not None else None, "results": len(rows), "judged": judged,
            "unjudged": unjudged, "abnormal_count": len(abnormal) + omitted, "abnormal": abnormal, "omitted": omitted}
