"""A run of values, listed: "list her weights since 2018", "all her A1c values", "show me every BP reading",
"weight history", "last 3 creatinines".

The clinician wants the numbers themselves with their days, not the latest one. Each analyte is listed on its own
(a panel's parts, systolic and diastolic, side by side as "120/80" when they come from the same readings), the most
recent values first cut to a bounded number (``shown`` in ``lexicon/value_series.json``; the answer says how many
there were), then put back in time order. Only results (the observation view) are listed here; any other kind of
record falls through to the plan the question would otherwise get.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class _Spec:
    series: re.Pattern[str]
    series_not: re.Pattern[str]
    count_words: dict[str, int]
    limit: re.Pattern[str]
    shown: int
    latest_two: re.Pattern[str]
    counted: re.Pattern[str]
    only_part: re.Pattern[str]


@lru_cache(maxsize=1)
def _spec() -> _Spec:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("value_series.json")
    words = dict(spec["count_words"])
    number = "|".join([r"\d{1,2}", *(re.escape(w) for w in sorted(words, key=len, reverse=True))])
    return _Spec(
        series=re.compile("|".join(f"(?:{p})" for p in spec["series"])),
        series_not=re.compile("|".join(f"(?:{p})" for p in spec["series_not"])),
        count_words=words,
        limit=re.compile(rf"\b(?:last|latest|past|previous|prior|recent|most recent|first)\s+({number})\s+"
                         rf"(?!(?:{spec['not_units']})\b)"),
        shown=int(spec["shown"]),
        latest_two=re.compile("|".join(f"(?:{p})" for p in spec.get("latest_two", [])) or "(?!)"),
        counted=re.compile("|".join(f"(?:{p})" for p in spec.get("counted", [])) or "(?!)"),
        only_part=re.compile(spec.get("only_part") or "(?!)"),
    )


@dataclass(frozen=True)
class Series:
    """How a listed series is asked: ``limit`` values at most (0: as many as fit), the earliest ones if ``first``."""

    limit: int = 0
    first: bool = False
    words: str = ""  # the words that asked for the run ("and the one before"), no part of the item


def series_asked(pq: ParsedQuestion) -> Series | None:
    """The listing asked for when the question wants a result's values rather than one of them; None otherwise."""
    if pq.intent not in ("value", "exists") or pq.comparison is not None or not pq.entity:
        return None
    spec = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    said = spec.latest_two.search(text) or spec.counted.search(text)
    if said is not None and pq.intent == "value":
        # "last GFR and the one before", "two most recent LDL results", "BP at the last 3 visits": a run, though
        # 'last' alone would ask for one value
        rest = re.sub(r"\b(?:most recent|latest|last|current|previous|prior)\b", " ", text[:said.start()] + " " + text[said.end():])
        if not spec.series_not.search(rest):
            number = next((g for g in said.groups() if g), None) if said.re is spec.counted else None
            limit = 2 if number is None else (int(number) if number.isdigit() else spec.count_words.get(number, 0))
            return Series(limit=max(0, limit), words=said.group(0))
    if not spec.series.search(text) or spec.series_not.search(text):
        return None
    found = spec.limit.search(text)
    if found is None:
        return Series()
    word = found.group(1)
    limit = int(word) if word.isdigit() else spec.count_words.get(word, 0)
    return Series(limit=max(0, limit), first=found.group(0).startswith("first"))


def _without_count_words(entity: str) -> str:
    """The item without the number words a limit left in it ("three potassiums" → "potassiums")."""
    words = _spec().count_words
    kept = [w for w in entity.split() if w not in words and w not in ("couple", "of")]
    return " ".join(kept) or entity


def plan_series(pq: ParsedQuestion, asked: Series) -> Generator[Call, dict[str, Any], bool]:
    """List the item's values in the window; False (nothing answered) when the item is not a result.

    One read of the whole set, newest first (or oldest, for "the first 3"): the rows a tool result shows at once
    are the ones listed, and the count says how many there are.
    """
    from fhirqa.agent.backends.offline.plans import _empty_window, _entity_label, find_records, windowed

    if asked.words:
        said = set(re.findall(r"[a-z0-9]+", asked.words))
        pq.entity = " ".join(w for w in pq.entity.split() if w.lower() not in said) or pq.entity
    pq.entity = _without_count_words(pq.entity)
    found = None
    part = _spec().only_part.search(" ".join(pq.text.lower().split()))
    if part is not None:
        # "BP at the last 3 visits - just the systolics": that part alone, when the record has results of it
        found = yield from find_records(pq, views=["observation"], entity=part.group("part"))
        if found is not None and found[1].get("count") and not found[1].get("ambiguous"):
            pq.entity = part.group("part")
        else:
            found = None
    if found is None:
        found = yield from find_records(pq, views=["observation"])
    if found is None or not found[1].get("count") or found[1].get("ambiguous"):
        return False  # not a result: the question's other plans answer it
    handle = found[1]["handle"]
    filtered = yield from windowed(pq, handle)
    if filtered.get("count") == 0:
        yield _empty_window(pq, f"{_entity_label(pq)} results", filtered)
        return True
    handle = filtered.get("handle") or handle
    ordered = yield ("sort_records", {"records": handle, "descending": not asked.first})
    listed = ordered.get("handle") or handle
    values = yield ("extract_field_value", {"records": listed, "field": "value"})
    if not values.get("count"):
        values = yield ("extract_field_value", {"records": listed, "field": "value_string"})
    rows = _rows(values)
    if not rows:
        return False
    yield _series_final(pq, asked, rows, int(values.get("count") or len(rows)))
    return True


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The listed rows of an ``extract_field_value`` result, with the columns every row shares put back."""
    share = result.get("values_share")
    shared: dict[str, Any] = share if isinstance(share, dict) else {}
    return [{**shared, **v} for v in result.get("values") or [] if isinstance(v, dict)]


def _series_final(pq: ParsedQuestion, asked: Series, rows: list[dict[str, Any]], total: int) -> Call:
    from fhirqa.agent.backends.offline.plans import _analytes, _day, _fmt, final

    window = f" {pq.window.label}" if pq.window is not None else ""
    groups = _analytes(list(dict.fromkeys(str(r.get("name") or pq.entity) for r in rows)))
    members = {name: key for key, names in groups.items() for name in names}
    runs: dict[str, list[dict[str, Any]]] = {key: [] for key in groups}
    for row in rows:
        runs[members[str(row.get("name") or pq.entity)]].append(row)
    cap = asked.limit or min(len(rows), _spec().shown)  # the SQL path's tools show more rows than a model sees
    paired = _paired(list(runs.values()), cap, asked.first)
    if paired is not None:
        names, unit, readings = paired
        shown = [f"{_fmt(a)}/{_fmt(b)}{(' ' + unit) if unit else ''} ({_day(t)})" for a, b, t in readings]
        head = _head(asked, "/".join(names), total // 2, len(readings), window, "readings")
        return final([f"{_fmt(a)}/{_fmt(b)}" for a, b, _ in readings], f"{head}: {', '.join(shown)}.", unit=unit)
    answers: list[Any] = []
    texts: list[str] = []
    units: set[str | None] = set()
    several = len(runs) > 1
    for run in runs.values():
        picked = run[:cap] if asked.first else run[:cap][::-1]  # they arrive from the asked end; shown in time order
        unit = picked[-1].get("unit")
        units.add(unit)
        answers += [r.get("value") for r in picked]
        shown = [f"{_fmt(r.get('value'))}{(' ' + unit) if unit and not isinstance(r.get('value'), str) else ''} "
                 f"({_day(r.get('time'))})" for r in picked]
        name = str(picked[-1].get("name") or pq.entity)
        texts.append(f"{_head(asked, name, len(run) if several else total, len(picked), window, 'values')}: "
                     f"{', '.join(shown)}.")
    if several and total > len(rows):
        texts.append(f"({total} values in all; the most recent {len(rows)} are listed.)")
    return final(answers, " ".join(texts), unit=units.pop() if len(units) == 1 else None)


def _head(asked: Series, name: str, total: int, shown: int, window: str, noun: str) -> str:
    """"Body Weight since 2018: 6 values" / "…: 40 values, the 8 most recent shown" / "the last 3 Creatinine values"."""
    if asked.limit:
        which = "first" if asked.first else "last"
        return f"The {which} {shown} {name} {noun}{window}" + (f" (of {total})" if total > shown else "")
    more = f", the {shown} {'earliest' if asked.first else 'most recent'} shown" if total > shown else ""
    return f"{name}{window}: {total} {noun if total != 1 else noun[:-1]}{more}"


def _paired(runs: list[list[dict[str, Any]]], cap: int, earliest: bool) -> tuple[list[str], str | None, list[tuple[Any, Any, Any]]] | None:
    """Two analytes read together (systolic and diastolic of one reading) as "a/b" pairs; None when they are not."""
    if len(runs) != 2:
        return None
    first, second = runs
    partners = _partners(first, second)
    units = {v.get("unit") for v in first} | {v.get("unit") for v in second}
    if len(partners) < max(1, min(len(first), len(second)) - 1) or len(units) != 1 \
            or any(isinstance(v.get("value"), str) for v in first + second):
        return None  # a list cut at an odd row may leave one half of the oldest reading: that one is dropped
    readings = [(v.get("value"), partners[i].get("value"), v.get("time")) for i, v in enumerate(first) if i in partners]
    readings = readings[:cap]
    if not earliest:  # they arrive newest first
        readings.reverse()
    names = [str(first[0].get("name")), str(second[0].get("name"))]
    return names, units.pop(), readings


def _partners(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """For each row of ``first`` (by position), the row of ``second`` of the same reading: the components of one
    Observation (one ``ref``), else, where each part is a row of its own (MIMIC-III charts NBP systolic and diastolic
    as two CHARTEVENTS rows, OMOP as two measurements; a server may send two Observations), the row charted at the same
    instant, of the same device when several are (most name words shared: "Arterial Blood Pressure systolic" goes with
    "Arterial Blood Pressure diastolic"). A row of ``second`` pairs once."""
    by_ref = {v.get("ref"): v for v in second if v.get("ref") is not None}
    by_ref_pairs = {i: by_ref[v.get("ref")] for i, v in enumerate(first) if v.get("ref") in by_ref}
    if by_ref_pairs:
        return by_ref_pairs
    by_time: dict[Any, list[dict[str, Any]]] = {}
    for row in second:
        if row.get("time") is not None:
            by_time.setdefault(row["time"], []).append(row)

    def shared(a: dict[str, Any], b: dict[str, Any]) -> int:
        return len(set(str(a.get("name")).lower().split()) & set(str(b.get("name")).lower().split()))

    out: dict[int, dict[str, Any]] = {}
    for i, row in enumerate(first):
        candidates = by_time.get(row.get("time"), [])
        if candidates:
            best = max(candidates, key=lambda c: shared(row, c))
            candidates.remove(best)
            out[i] = best
    return out
