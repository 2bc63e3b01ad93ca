"""Tools that fetch and reshape record sets: get_resources, sort_records, get_by_index,
extract_field_value, combine_evidence."""

from __future__ import annotations

import difflib
from typing import Any

from fhirqa.agent.tools.base import PREVIEW_ROWS, RecordSet, ToolContext, ToolError
from fhirqa.agent.tools.common import (
    MIXED,
    VIEW_KEY,
    cite,
    field_map,
    full_row,
    info,
    iso,
    label,
    new_set,
    row_time,
    row_view,
    shown_fields,
    sorted_rows,
    summary,
    views_of,
)

KINDS = ("request", "dispense", "administration", "statement")
ENTERED_IN_ERROR = "entered-in-error"


def _category_matches(value: Any, wanted: str) -> bool:
    # Allergy categories are comma-joined ("food, medication"); vital signs are sometimes "vital-sign".
    if value is None:
        return False
    wanted = wanted.strip().lower()
    parts = {p.strip().lower() for p in str(value).split(",")}
    return wanted in parts or (wanted.rstrip("s") in {p.rstrip("s") for p in parts})


def get_resources(ctx: ToolContext, view: str, item: str | None = None, codes: list[str] | None = None,
                  kind: str | None = None, category: str | None = None,
                  fields: list[str] | None = None, numeric: bool = False, as_needed: bool = False) -> dict[str, Any]:
    """The patient's rows of ``view``, optionally narrowed to an item, codes, a medication kind, a category,
    (``numeric``) to rows with a number in the view's value field, or (``as_needed``) to medication rows given or
    ordered as needed (PRN: :func:`fhirqa.agent.tools.events.as_needed`)."""
    meta = info(view)
    if fields:
        shown_fields(RecordSet(view, [], ""), fields)  # a bad field is reported before any work
    rows = list(ctx.data.rows(view))
    steps = [view]
    resolution = None
    if item is not None:
        items = ctx.data.items(view)
        resolution = ctx.resolve(view, item, items)
        if resolution.ambiguous:
            return {"ok": True, "ambiguous": True, "count": 0, "item": item,
                    "candidates": (resolution.candidates or resolution.matched)[:PREVIEW_ROWS],
                    "note": "the item phrase matches several different things; ask again with one of the "
                            "candidates as item, or answer with status 'ambiguous'"}
        matched = set(resolution.matched)
        rows = [r for r in rows if r.get(meta.name_field) in matched]
        steps.append(f"~ {item!r}")
    before_filters = rows
    if codes:
        if meta.code_field is None:
            raise ToolError(f"view {view} has no code field; use item= instead")
        wanted = {str(c).strip() for c in codes}
        rows = [r for r in rows if str(r.get(meta.code_field)) in wanted]
        steps.append(f"code in {sorted(wanted)}")
    if kind is not None:
        if meta.kind_field is None:
            raise ToolError(f"kind= applies to the medication view only, not {view}")
        rows = [r for r in rows if r.get(meta.kind_field) == kind]
        steps.append(f"kind = {kind}")
    if numeric:
        if meta.value_field is None:
            raise ToolError(f"view {view} has no numeric value field; drop numeric=")
        value_field = meta.value_field
        rows = [r for r in rows if isinstance(r.get(value_field), int | float) and not isinstance(r.get(value_field), bool)]
        steps.append(f"{value_field} is a number")
    if category is not None:
        if meta.category_field is None:
            raise ToolError(f"view {view} has no category field; drop category=")
        rows = [r for r in rows if _category_matches(r.get(meta.category_field), category)]
        steps.append(f"{meta.category_field} = {category}")
    prn_on_file = None
    if as_needed:
        from fhirqa.agent.tools.events import as_needed as prn
        from fhirqa.agent.tools.events import orders_by_ref, prn_marked

        if view != "medication":
            raise ToolError(f"as_needed applies to the medication view only, not {view}")
        every = list(ctx.data.rows(view))
        orders = orders_by_ref(every)
        rows = [r for r in rows if prn(r, orders) is not None]
        prn_on_file = prn_marked(every)
        steps.append("as needed (PRN)")
    # Rows retracted at the source are not facts about the patient; drop them but say so.
    kept = [r for r in rows if r.get("status") != ENTERED_IN_ERROR]
    retracted = len(rows) - len(kept)
    order = field_map(RecordSet(view, [], ""), None, "time") if meta.time_field else None
    rs_rows = sorted_rows(RecordSet(view, kept, ""), order) if order else kept
    handle, rs = new_set(ctx, view, rs_rows, " ".join(steps))
    out = summary(handle, rs, fields=fields)
    if resolution is not None:
        out["resolved_by"] = resolution.how
    if retracted:
        out["excluded_entered_in_error"] = retracted
    if prn_on_file is not None:
        # 0: the record never writes PRN (no asNeeded, no 'PRN'/'as needed' sig), so none found says nothing
        out["prn_marked"] = prn_on_file
    if not kept:
        out.update(_nothing_found(ctx, view, item, resolution, before_filters))
    return out


def _nothing_found(ctx: ToolContext, view: str, item: str | None, resolution: Any,
                   before_filters: list[dict[str, Any]]) -> dict[str, Any]:
    """What to tell a caller who got no rows, so the next step can recover."""
    meta = info(view)
    out: dict[str, Any] = {}
    if item is not None and not resolution.matched:
        candidates = list(resolution.candidates)
        if not candidates:  # a resolver without suggestions: fall back to plain string similarity
            candidates = difflib.get_close_matches(item, ctx.data.items(view), n=5, cutoff=0.3)
        out["candidates"] = candidates[:PREVIEW_ROWS]
        out["note"] = f"no {view} item of this patient matches {item!r}"
    else:
        out["candidates"] = []
        available: dict[str, list[str]] = {}
        for field in (meta.kind_field, meta.category_field):
            if field:
                values = sorted({str(r[field]) for r in before_filters if r.get(field) is not None})
                if values:
                    available[field] = values
        if available:
            out["available"] = available
        out["note"] = f"no {view} rows match these filters"
    return out


def sort_records(ctx: ToolContext, records: str, field: str | None = None,
                 descending: bool = False) -> dict[str, Any]:
    """A new set with the rows ordered by ``field`` (default: time); rows without a value go last."""
    rs = ctx.records(records)
    fields = field_map(rs, field, "time")
    rows = sorted_rows(rs, fields, descending)
    by = field or "time"
    handle, new = new_set(ctx, rs.view, rows, f"{records} sorted by {by}{' desc' if descending else ''}",
                          list(rs.items))
    return summary(handle, new)


def get_by_index(ctx: ToolContext, records: str, index: int, order_by: str | None = None) -> dict[str, Any]:
    """The row at ``index`` after sorting ascending by ``order_by`` (default time): 0 first, -1 last."""
    rs = ctx.records(records)
    fields = field_map(rs, order_by, "time")
    ordered = [r for r in sorted_rows(rs, fields) if r.get(fields[row_view(rs, r)]) is not None]
    unordered = len(rs.rows) - len(ordered)
    if not ordered:
        return {"ok": True, "count": 0, "row": None, "unordered": unordered,
                "note": f"{records} has no rows with a value to order by"}
    if not -len(ordered) <= index < len(ordered):
        raise ToolError(f"index {index} is out of range for {len(ordered)} rows; use 0..{len(ordered) - 1} "
                        f"or -1..-{len(ordered)}")
    row = ordered[index]
    handle, one = new_set(ctx, rs.view, [row], f"{records}[{index}] by {order_by or 'time'}")
    out = {"ok": True, "handle": handle, "index": index, "of": len(ordered),
           "row": full_row(one, row), "evidence": cite(ctx, rs, row)}
    if unordered:
        out["unordered"] = unordered
    return out


def extract_field_value(ctx: ToolContext, records: str, field: str, distinct: bool = False) -> dict[str, Any]:
    """The values of ``field`` across the set (with ref, time and item name), bounded and cited.

    With ``distinct`` each different value is listed once (its first row, in set order) with the
    number of rows holding it.
    """
    rs = ctx.records(records)
    fields = field_map(rs, field, "value")
    present = [row for row in rs.rows if row.get(fields[row_view(rs, row)]) is not None]
    missing = len(rs.rows) - len(present)
    if distinct:
        firsts: dict[Any, dict[str, Any]] = {}
        tally: dict[Any, int] = {}
        for row in present:
            key = _hashable(row[fields[row_view(rs, row)]])
            firsts.setdefault(key, row)
            tally[key] = tally.get(key, 0) + 1
        chosen = list(firsts.values())
    else:
        chosen = present
    shown = []
    for row in chosen[:PREVIEW_ROWS]:
        view = row_view(rs, row)
        citation = cite(ctx, rs, row, fields[view])
        moment = row_time(view, row)
        entry = {"ref": row.get("ref"), "time": moment.isoformat() if moment else None,
                 "name": label(view, row), "value": iso(row.get(fields[view])), "unit": citation["unit"]}
        if distinct:
            entry["rows"] = tally[_hashable(row[fields[view]])]
        shown.append(entry)
    out: dict[str, Any] = {"ok": True, "field": field, "count": len(chosen), "values": shown,
                           "omitted": max(0, len(chosen) - PREVIEW_ROWS)}
    if distinct:
        out["rows"] = len(present)
    if missing:
        out["missing"] = missing
    return out


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def combine_evidence(ctx: ToolContext, handles: list[str]) -> dict[str, Any]:
    """A new set holding the union of the given sets (duplicates by ref and item name dropped)."""
    if not handles:
        raise ToolError("handles is empty; pass the handles of the record sets to combine, e.g. ['r1', 'r2']")
    sets = [(h, ctx.records(h)) for h in handles]
    views = {row_view(rs, row) for _, rs in sets for row in rs.rows} or {rs.view for _, rs in sets}
    view = views.pop() if len(views) == 1 else MIXED
    seen: set[tuple[str, str | None]] = set()
    rows: list[dict[str, Any]] = []
    for _, rs in sets:
        for row in rs.rows:
            row_v = row_view(rs, row)
            key = (str(row.get("ref")), label(row_v, row))
            if key in seen:
                continue
            seen.add(key)
            rows.append({**row, VIEW_KEY: row_v} if view == MIXED else row)
    # Chronological, undated rows last: the order a reader of the evidence expects.
    merged = RecordSet(view, rows, "")
    rows = sorted_rows(merged, {v: info(v).time_field or "ref" for v in views_of(merged)})
    handle, new = new_set(ctx, view, rows, f"union of {', '.join(handles)}")
    return summary(handle, new)
