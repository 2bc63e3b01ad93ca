"""Electrolyte replacement as the ICU nurse asks about it: "how many times was K replaced?", "was mag repleted
today?", "how much KCl did he get?", "any potassium runs overnight?", "calcium given?", "phos repletion?".

Such a question names an electrolyte (or one of its salts) together with a word of giving, and it is about the
administrations of the electrolyte's products, never about the lab value: K means potassium chloride,
potassium phosphate, potassium bicarbonate… (``lexicon/electrolyte_repletion.json``). The answer counts the
doses given in the question's window, lists each with its MedicationAdministration, gives the total per salt
and unit (a total only adds doses of one unit: mEq are never added to mmol or mg), names the doses charted as
not given with their reason, and ends with the latest lab value of the electrolyte as context. When the
record charts no administration of the products, their orders answer, and the answer says so.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]

_SPARE_ROUNDS = 4  # rounds kept for the closing calls when administrations are read one by one
_SHOWN = 12  # administrations written out in the answer text; the rest are counted
_VALUED = ("amount", "time")  # answers that are a value: none charted is no-data, not a No


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("electrolyte_repletion.json")


@lru_cache(maxsize=1)
def _not_given_statuses() -> frozenset[str]:
    from fhirqa.project import lexicon_file

    words = lexicon_file("drugs.json").get("doses_not_given") or {}
    return frozenset([*words.get("statuses", []), "entered-in-error"])


def _pattern(words: list[str]) -> re.Pattern[str]:
    """Whole-word alternation of ``words`` (longest first; blanks match any run of blanks)."""
    return _compiled(tuple(words))


@lru_cache(maxsize=256)
def _compiled(words: tuple[str, ...]) -> re.Pattern[str]:
    # every question is tested against these words: each alternation is built once
    alt = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alt})(?![\w+]|-\w)")


@dataclass(frozen=True)
class Repletion:
    """What a replacement question asks: the electrolytes, the products meant, and the kind of answer."""

    electrolytes: tuple[str, ...]
    products: tuple[dict[str, Any], ...]
    mode: str  # "count", "amount", "time" or "yes_no"


def _electrolyte_named(text: str, entry: dict[str, Any]) -> bool:
    """Whether ``text`` names the electrolyte by one of its words, read in context (a unit, another item, a draw)."""
    lex = _lexicon()
    for match in _pattern(entry["words"]).finditer(text):
        before = text[:match.start()].split()
        after = text[match.end():].split()
        prev, nxt = (before[-1] if before else ""), (after[0] if after else "")
        if prev in lex.get("not_before", []) or prev in lex.get("lab_articles", []):
            continue  # "vitamin K", "breast ca"; "did we get a mag?" is a draw
        if nxt.strip("?.,!") in lex.get("not_after", []):
            continue  # "calcium channel blocker"
        if match.group(0) in lex.get("unit_words", []) and (
                re.search(r"(?:\d|\(|\bin|\bper)\s*$", text[:match.start()]) or re.match(r"\s*(?:of\b|/|\))", text[match.end():])):
            continue  # "2 mg of morphine", "total vanco given (mg)?": the unit
        return True
    return False


def repletion_question(pq: ParsedQuestion) -> Repletion | None:
    """The electrolytes and products a replacement question asks about, or None for other questions."""
    lex = _lexicon()
    text = re.sub(r"\s+", " ", pq.text.lower().replace("’", "'"))
    if not _pattern(lex["cues"]).search(text) or _pattern(lex["lab_words"]).search(text):
        return None
    electrolytes: list[str] = []
    products: list[dict[str, Any]] = []
    for entry in lex["electrolytes"]:
        named = [p for p in entry["products"] if _pattern(p["names"]).search(text)]
        if named:
            electrolytes.append(entry["name"])
            products.extend(p for p in named if p not in products)
        elif _electrolyte_named(text, entry):
            electrolytes.append(entry["name"])
    if not electrolytes and _pattern(lex["group_words"]).search(text):
        electrolytes = [e["name"] for e in lex["electrolytes"]]
    if not electrolytes:
        return None
    if pq.intent == "time_of" or _pattern(lex["time_words"]).search(text):
        mode = "time"
    elif _pattern(lex["count_words"]).search(text) or "#" in text:
        mode = "count"
    elif _pattern(lex["amount_words"]).search(text):
        mode = "amount"
    else:
        mode = "yes_no"
    if not products:  # the electrolyte itself: every product of it
        for entry in lex["electrolytes"]:
            if entry["name"] in electrolytes:
                products.extend(p for p in entry["products"] if p not in products)
    return Repletion(tuple(electrolytes), tuple(products), mode)


def _product_of(name: str | None, code: str | None, products: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
    """The product a medication name (or code) is, among ``products``; None for another drug."""
    low = str(name or "").lower()
    if any(re.search(rf"\b{re.escape(w)}\b", low) for w in _lexicon().get("not_with", [])):
        return None  # "dexamethasone sodium phosphate": another drug's salt
    for product in products:
        if _pattern(product["names"]).search(low):
            return product
    for product in products:
        if code and code in product.get("rxnorm", []):
            return product
    return None


def plan_repletion(pq: ParsedQuestion, asked: Repletion) -> Generator[Call, dict[str, Any], None]:
    """Answer a replacement question from the administrations of the electrolytes' products (orders otherwise)."""
    spent = [0]
    steps = _plan(pq, asked, spent)
    try:
        call = next(steps)
        while True:  # the calls are counted: the offline backend allows a bounded number of rounds
            spent[0] += 1
            call = steps.send((yield call))
    except StopIteration:
        return


def _rounds() -> int:
    from fhirqa.agent.backends.offline.backend import OfflineBackend

    return int(OfflineBackend.max_rounds)


def _plan(pq: ParsedQuestion, asked: Repletion, spent: list[int]) -> Generator[Call, dict[str, Any], None]:
    from fhirqa.agent.backends.offline.plans import final

    if _named_products(pq, asked):  # "how much KCl…": the salts named
        what = " and ".join(p["generic"] for p in asked.products)
    elif len(asked.electrolytes) > 2:  # "lytes replaced overnight?"
        what = "electrolyte"
    else:
        what = " and ".join(asked.electrolytes)
    meds = yield ("get_resources", {"view": "medication"})
    if not meds.get("count"):
        yield _none(pq, asked, f"The record has no medications, so no {what} replacement is charted.")
        return
    found = yield from _products(meds["handle"], asked)
    if found is None:
        yield _none(pq, asked, f"No {what} replacement is charted: the record holds no administration or order of "
                               f"{', '.join(p['generic'] for p in asked.products)}.")
        return
    admins = yield ("filter_by_value", {"records": found, "op": "==", "value": "administration", "field": "kind"})
    if not admins.get("count"):
        yield from _from_orders(pq, asked, found, what)
        return
    from fhirqa.agent.backends.offline.plans import _empty_window, windowed

    lab = yield from _latest_lab(asked)
    # the window's result is read last (a result's rows are cut once later tools have run)
    scoped = yield from windowed(pq, admins["handle"])
    if scoped.get("no_stay") or scoped.get("no_anchor"):  # the stay or event the window hangs on is missing
        yield _empty_window(pq, f"{what} replacement", scoped)
        return
    label = f" {pq.window.label}" if pq.window is not None else ""
    if scoped.get("count") is None:  # no window: every administration
        scoped = {"handle": admins["handle"], "count": admins["count"]}
    if not scoped.get("count"):
        before = scoped.get("nearest_before")
        last = f" The last one charted before that: {_line(before, asked.products)}." if isinstance(before, dict) else ""
        yield final([0] if asked.mode == "count" else [False] if asked.mode == "yes_no" else [],
                    f"{'No: n' if asked.mode == 'yes_no' else 'N'}o {what} replacement is charted{label}.{last}{lab}",
                    status=_status(asked))
        return
    handle, total = scoped.get("handle") or admins["handle"], int(scoped["count"])
    if total > _rounds() - spent[0] - _SPARE_ROUNDS:  # more doses than rounds left to read them one by one
        yield from _many(pq, asked, what, label, handle, total, lab)
        return
    rows = []
    for index in range(total):
        rows.append((yield ("get_by_index", {"records": handle, "index": index})).get("row") or {})
    yield _answer(pq, asked, what, label, rows, lab)


def _named_products(pq: ParsedQuestion, asked: Repletion) -> bool:
    """Whether the question named the products themselves ("how much KCl…") rather than the electrolyte."""
    text = pq.text.lower()
    return any(_pattern(p["names"]).search(text) for p in asked.products)


def _many(pq: ParsedQuestion, asked: Repletion, what: str, label: str, handle: str, total: int,
          lab: str) -> Generator[Call, dict[str, Any], None]:
    """More doses in the window than can be read one by one: the doses given counted by their status, the total by
    the aggregate tool (one unit only, else none), and the last dose named."""
    from fhirqa.agent.backends.offline.plans import final

    parts: list[dict[str, Any]] = []
    for status in ("completed", "in-progress"):  # given; not-done, on-hold, stopped were not
        part = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if part.get("count"):
            parts.append(part)
    if not parts:
        yield final([0] if asked.mode == "count" else [False] if asked.mode == "yes_no" else [],
                    f"{'No: n' if asked.mode == 'yes_no' else 'N'}one of the {total} {what} administrations charted"
                    f"{label} is marked given.{lab}", status=_status(asked))
        return
    both = parts[0] if len(parts) == 1 else (yield ("combine_evidence", {"handles": [p["handle"] for p in parts]}))
    given, count = both["handle"], int(both.get("count") or 0)
    row = (yield ("get_by_index", {"records": given, "index": 0 if pq.position == "first" else -1})).get("row") or {}
    word = "first" if pq.position == "first" else "last"
    head = (f"{what.capitalize()} replacement{label}: {count} doses given (of {total} administrations charted; too "
            f"many to list here); the {word}: {_line(row, asked.products)}.")
    if asked.mode == "amount":
        summed = yield ("aggregate", {"records": given, "op": "sum", "field": "dose"})
        if summed.get("unit") and not summed.get("warning") and summed.get("value") is not None:
            yield final([summed["value"]], f"{_fmt(summed['value'])} {summed['unit']} in all. {head}{lab}",
                        unit=summed["unit"])
        else:
            units = ", ".join(summed.get("units") or [])
            yield final([], f"{head} The doses are in several units ({units}), which are not added.{lab}",
                        status="no-data")
        return
    if asked.mode == "time":
        yield final([row.get("time")], f"{head}{lab}")
        return
    yield final([count] if asked.mode == "count" else [True], f"{'' if asked.mode == 'count' else 'Yes: '}{head}{lab}")


def _products(meds: str, asked: Repletion) -> Generator[Call, dict[str, Any], str | None]:
    """A handle on the medication rows of the products asked (found by the electrolytes' stems and the products'
    codes, kept by whole name), or None."""
    products = asked.products
    stems = list(dict.fromkeys(s for e in _lexicon()["electrolytes"] if e["name"] in asked.electrolytes
                               for s in e.get("stems", [])))
    codes = list(dict.fromkeys(c for p in products for c in p.get("rxnorm", [])))
    candidates: list[dict[str, Any]] = []
    for stem in stems:
        hit = yield ("filter_by_value", {"records": meds, "op": "contains", "value": stem, "field": "medication_name"})
        if hit.get("count"):
            candidates.append(hit)
    coded: set[str] = set()  # names of rows found by code: the code says what they are
    for code in codes:
        hit = yield ("filter_by_value", {"records": meds, "op": "==", "value": code, "field": "medication_code"})
        if hit.get("count"):
            candidates.append(hit)
            coded.update(str(n) for n in hit.get("items") or [])
    if not candidates:
        return None
    pool = candidates[0]
    if len(candidates) > 1:
        pool = yield ("combine_evidence", {"handles": [c["handle"] for c in candidates]})
    handle = pool["handle"]
    # the set's item names (a summary keeps them on every later turn, row lists are cut): each is vetted whole
    listed = [str(n) for n in pool.get("items") or []]
    kept = [n for n in listed if n in coded or _product_of(n, None, products) is not None]
    if len(kept) == len(listed) and not pool.get("items_omitted"):
        return handle
    handles: list[str] = []
    for name in kept:
        same = yield ("filter_by_value", {"records": handle, "op": "==", "value": name, "field": "medication_name"})
        if same.get("count"):
            handles.append(same["handle"])
    if not handles:
        return None
    return handles[0] if len(handles) == 1 else (yield ("combine_evidence", {"handles": handles}))["handle"]


def _latest_lab(asked: Repletion) -> Generator[Call, dict[str, Any], str]:
    """" Latest <electrolyte>: value on time (ref)." for the first electrolyte asked ("" when not one clear result)."""
    entry = next(e for e in _lexicon()["electrolytes"] if e["name"] == asked.electrolytes[0])
    if len(asked.electrolytes) > 1 or not entry.get("lab"):
        return ""
    found = yield ("get_resources", {"view": "observation", "item": entry["lab"]})
    if not found.get("count") or found.get("ambiguous"):
        return ""
    row = (yield ("get_by_index", {"records": found["handle"], "index": -1})).get("row") or {}
    if row.get("value") is None:
        return ""
    unit = f" {row['unit']}" if row.get("unit") else ""
    return f" Latest {entry['name']} result: {_fmt(row['value'])}{unit} on {_when(row.get('time'))} ({row.get('ref')})."


def _from_orders(pq: ParsedQuestion, asked: Repletion, found: str, what: str) -> Generator[Call, dict[str, Any], None]:
    """No administration of the products is charted: their orders say what was ordered, and the answer says so."""
    from fhirqa.agent.backends.offline.plans import final, windowed

    orders = yield ("filter_by_value", {"records": found, "op": "==", "value": "request", "field": "kind"})
    if not orders.get("count"):
        yield _none(pq, asked, f"No {what} replacement is charted (no administration or order).")
        return
    scoped = yield from windowed(pq, orders["handle"])
    label = f" {pq.window.label}" if pq.window is not None else ""
    if scoped.get("count") is None:  # no window: every order
        scoped = {"handle": orders["handle"], "count": orders["count"]}
    if not scoped.get("count"):
        yield _none(pq, asked, f"No {what} replacement is charted{label}: no administration, and no order in that window.")
        return
    handle, total = scoped.get("handle") or orders["handle"], int(scoped["count"])
    rows = []
    for index in range(min(total, _SHOWN)):
        rows.append((yield ("get_by_index", {"records": handle, "index": index})).get("row") or {})
    listed = "; ".join(_line(r, asked.products, order=True) for r in rows) + (f"; and {total - len(rows)} more"
                                                                               if total > len(rows) else "")
    # as for any drug ("heparin given?"): with no administration charted, the orders are what the record says
    yield final([total] if asked.mode == "count" else [True] if asked.mode == "yes_no" else [],
                f"{'Yes, by its orders' if asked.mode == 'yes_no' else 'From the orders'}: no administration of {what} "
                f"products is charted, so the orders stand for the doses (an order does not say a dose was given): "
                f"{total} order{'s' if total != 1 else ''}{label}: {listed}.", status=_status(asked))


def _answer(pq: ParsedQuestion, asked: Repletion, what: str, label: str, rows: list[dict[str, Any]],
            lab: str) -> Call:
    """The final answer over the window's administrations, read row by row."""
    from fhirqa.agent.backends.offline.plans import final

    skipped = _not_given_statuses()
    given = [r for r in rows if str(r.get("status") or "").lower() not in skipped]
    missed = [r for r in rows if str(r.get("status") or "").lower() in skipped and r.get("status") != "entered-in-error"]
    totals: dict[tuple[str, str], list[Any]] = {}
    for row in given:
        product = _product_of(row.get("medication_name"), row.get("medication_code"), asked.products)
        if row.get("dose") is None:
            continue
        unit = str(row.get("dose_unit") or "")
        key = ((product or {}).get("generic") or str(row.get("medication_name")), unit.lower())
        totals.setdefault(key, [0.0, unit])[0] += float(row["dose"])
    summed = "; ".join(f"{_fmt(v)} {u} {g}".replace("  ", " ") for (g, _), (v, u) in totals.items())
    undosed = sum(1 for r in given if r.get("dose") is None)
    units = {u for (_, u) in totals}
    total_note = f" Total given: {summed}" if summed else ""
    if total_note and len(totals) > 1:
        total_note += " (each salt and unit added apart: amounts in different salts or units are not added)"
    if undosed:
        total_note += f"; {undosed} dose(s) without an amount are not in the total"
    total_note += "." if total_note else ""
    shown = "; ".join(_line(r, asked.products) for r in given[:_SHOWN])
    more = f"; and {len(given) - _SHOWN} more" if len(given) > _SHOWN else ""
    held = ""
    if missed:
        held = " Not given: " + "; ".join(_line(r, asked.products) for r in missed[:_SHOWN]) + "."
    doses = f"{len(given)} dose{'s' if len(given) != 1 else ''}"
    body = f"{what.capitalize()} replacement{label}: {doses} given" + (f": {shown}{more}." if given else ".")
    text = f"{body}{total_note}{held}{lab}"
    if asked.mode == "count":
        return final([len(given)], text)
    if asked.mode == "time":
        if not given:
            return final([], f"No dose given. {text}", status="no-data")
        row = given[0] if pq.position == "first" else given[-1]
        word = "first" if pq.position == "first" else "last"
        return final([row.get("time")], f"The {word} {what} replacement given: {_line(row, asked.products)}. {text}")
    if asked.mode == "amount":
        if not given:
            return final([0], text)
        if len(units) == 1 and not undosed:
            value = sum(v for v, _ in totals.values())
            unit = next(iter(totals.values()))[1]
            if len(totals) > 1:
                text = f"{_fmt(value)} {unit} in all. {text}"
            return final([value], text, unit=unit or None)
        return final([f"{_fmt(v)} {u} {g}".strip() for (g, _), (v, u) in totals.items()], text)
    return final([bool(given)], f"{'Yes' if given else 'No'}: {text}")


def _status(asked: Repletion) -> str:
    """The status of an answer that found no dose: a count or a yes/no is answered (0, No), a value is not."""
    return "no-data" if asked.mode in _VALUED else "answered"


def _none(pq: ParsedQuestion, asked: Repletion, text: str) -> Call:
    """The answer when nothing of the products is charted: 0, No, or no-data for an amount."""
    from fhirqa.agent.backends.offline.plans import final

    if asked.mode in _VALUED:
        return final([], text, status="no-data")
    return final([0] if asked.mode == "count" else [False], text if asked.mode == "count" else f"No: {text[0].lower()}{text[1:]}")


def _line(row: dict[str, Any], products: tuple[dict[str, Any], ...], order: bool = False) -> str:
    """One administration (or order) as charted: time, product, dose, route, status when not given, its reference."""
    dose = f" {_fmt(row['dose'])} {row.get('dose_unit') or ''}".rstrip() if row.get("dose") is not None else ""
    route = f" {row['route']}" if row.get("route") else ""
    status = str(row.get("status") or "")
    why = ""
    if order:
        why = f", order {status}" if status else ""
    elif status.lower() in _not_given_statuses():
        reason = row.get("status_reason")
        why = f", {status}{': ' + str(reason) if reason else ', no reason recorded'}"
    return f"{_when(row.get('time'))} {row.get('medication_name')}{dose}{route}{why} ({row.get('ref')})"


def _when(value: Any) -> str:
    """A row's time as the record's clock writes it, to the minute."""
    return str(value or "?")[:16].replace("T", " ")


def _fmt(value: Any) -> str:
    """A number as a nurse writes it (90, not 90.0)."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
