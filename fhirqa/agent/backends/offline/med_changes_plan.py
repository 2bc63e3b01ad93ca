"""Medication changes, as a reconciliation asks them: "any med changes in the last 6 months?", "which meds were
discontinued?", "was metformin stopped?", "when was the Eliquis d/c'd?", "did they increase her lisinopril dose?".

The ``medication_changes`` tool reads the orders; this plan only decides what is asked (the words are in
``lexicon/medication_changes.json``) and says the result. A question is one about changes when it uses a change
word and names medications ("meds", "rx") or a drug the lexicon knows, so "has he stopped smoking?" is not.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_UP = re.compile(r"\b(?:increase[sd]?|uptitrat\w*|up-titrat\w*|bumped up|raised|go(?:ne)? up|went up)\b")
_DOWN = re.compile(r"\b(?:decrease[sd]?|reduc\w*|lowered|weaned|tapered|cut|go(?:ne)? down|went down)\b")
_STRENGTH = re.compile(r"(\d+(?:[.,]\d+)?)\s*(mg|mcg|g|unt|units?|meq|ml)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("medication_changes.json")


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {what: re.compile("|".join(f"(?:{p})" for p in patterns)) for what, patterns in _spec()["asks"].items()}


def changes_asked(pq: ParsedQuestion) -> tuple[str, str | None] | None:
    """(what is asked: ``any``/``stopped``/``dose``, the drug named or None) for a question about medication
    changes; None for any other question."""
    text = " ".join(pq.text.lower().replace("’", "'").split())
    patterns = _patterns()
    what = next((w for w in ("any", "dose", "stopped") if patterns[w].search(text)), None)
    if what is None:
        return None
    drug = _drug_named(pq, patterns)
    if drug is None and not re.search(_spec()["med_words"], text):
        return None  # "has he stopped smoking?": a change word, but no medication
    if what == "stopped" and drug is None and pq.intent in ("count",):
        return None
    return what, drug


def _drug_named(pq: ParsedQuestion, patterns: dict[str, re.Pattern[str]]) -> str | None:
    """The drug (or drug class) the question names, as its words stand, when the lexicon knows it."""
    from fhirqa.agent.lexicon import Lexicon

    entity = (pq.entity or "").lower()
    for pattern in patterns.values():
        entity = pattern.sub(" ", entity)
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9\-/]*", entity)
             if w not in {"dose", "doses", "her", "his", "the", "their", "my", "med", "meds", "medication",
                          "medications", "was", "were", "when", "did", "they", "any", "of", "on", "off"}]
    return Lexicon.load().drug_phrase(words, max_words=len(words))


def plan_medication_changes(pq: ParsedQuestion, what: str, drug: str | None) -> Generator[Call, dict[str, Any], None]:
    """Ask ``medication_changes`` over the question's window and answer what was asked."""
    from fhirqa.agent.backends.offline.plans import _iso, final

    args: dict[str, Any] = {}
    window, said = pq.window, ""
    if window is None and what == "any" and drug is None and pq.now is not None:
        days = int(_spec().get("default_window_days", 90))
        args["start"] = _iso(pq.now - timedelta(days=days))
        said = f" in the last {days} days (no period was asked; give one for another)"
    elif window is not None:
        if window.start is not None:
            args["start"] = _iso(window.start)
        if window.end is not None:
            args["end"] = _iso(window.end)
        said = f" {window.label}"
    if drug:
        args["item"] = drug
    found = yield ("medication_changes", args)
    if not found.get("ok", True):
        yield final([], f"The medication changes could not be read: {found.get('error')}", status="error")
        return
    if drug and not found.get("found"):
        others = found.get("candidates") or []
        hint = f" (did you mean {', '.join(others[:3])}?)" if others and found.get("note", "").startswith("the drug") else ""
        yield final([], f"The record has no order of {drug}{hint}.", status="no-data")
        return
    if drug:
        yield _about_drug(pq, what, drug, found, said)
        return
    if what == "stopped":
        entries = found.get("stopped") or []
        if not entries:
            yield final([], f"No medication was stopped{said}: no drug's last order is stopped or cancelled."
                            f"{_finished_too(found)}")
            return
        yield final(_names(entries), f"Stopped{said}: {_listed(entries)}.{_finished_too(found)}")
        return
    groups = [("Started", found.get("started") or []), ("Dose changed", found.get("dose_changed") or []),
              ("Stopped", found.get("stopped") or []), ("Finished (course completed)", found.get("finished") or [])]
    if what == "dose":
        groups = groups[1:2]
    if not any(entries for _, entries in groups):
        if what == "dose":
            yield final([], f"No dose change{said}: of the {_orders(found)}, none changed a drug's strength, dose "
                            f"or frequency then.")
        else:
            yield final([], f"No medication change{said}: of the {_orders(found)}, none started, changed, stopped "
                            f"or finished a drug then.")
        return
    parts = [f"{title}: {_listed(entries)}" for title, entries in groups if entries]
    names = [n for _, entries in groups for n in _names(entries)]
    yield final(list(dict.fromkeys(names)), f"Medication changes{said}. " + "; ".join(parts) + ".")


def _about_drug(pq: ParsedQuestion, what: str, drug: str, found: dict[str, Any], said: str) -> Call:
    """Yes/no (or when) for one drug: was it stopped, was its dose changed (raised or lowered when asked)."""
    from fhirqa.agent.backends.offline.plans import final

    text = pq.text.lower()
    if what == "dose":
        changes = found.get("dose_changed") or []
        direction = "up" if _UP.search(text) else "down" if _DOWN.search(text) else None
        if direction:
            changes = [c for c in changes if _direction(c) in (direction, None)]
        if not changes:
            kind = {"up": "increased", "down": "decreased"}.get(direction or "", "changed")
            return final([False], f"No: {drug} was not {kind}{said} in its orders ({_orders(found)}).")
        shown = "; ".join(f"{c['from']} → {c['order']} on {c['time'][:10]}" for c in changes)
        return final([changes[-1]["time"]] if pq.intent == "time_of" else [True], f"Yes: {shown}.")
    stopped = (found.get("stopped") or []) + (found.get("finished") or [])
    if not stopped:
        active = found.get("active") or []
        if active:
            latest = active[-1]
            return final([False], f"No: {latest['name']} is still ordered (active order of {latest['time'][:10]}).")
        return final([False], f"No: {drug} was not stopped{said} ({_orders(found)}).")
    entry = stopped[-1]
    when = entry["time"][:10]
    how = "completed (the course ran out)" if entry.get("status") == "completed" else entry.get("status", "stopped")
    dated = f"on {when}" if entry.get("stop_date_recorded") else f"after its last order of {when} (no stop date recorded)"
    if pq.intent == "time_of":
        return final([entry["time"]], f"{entry['name']} was {how} {dated}.")
    return final([True], f"Yes: {entry['name']} was {how} {dated}.")


def _direction(change: dict[str, Any]) -> str | None:
    """"up"/"down" when both orders write one strength in one unit, else None (cannot tell)."""
    before, after = _STRENGTH.search(change.get("from") or ""), _STRENGTH.search(change.get("order") or "")
    if not before or not after or before.group(2).lower() != after.group(2).lower():
        return None
    a, b = float(before.group(1).replace(",", ".")), float(after.group(1).replace(",", "."))
    return "up" if b > a else "down" if b < a else None


def _names(entries: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(e["name"]) for e in entries))


def _listed(entries: list[dict[str, Any]]) -> str:
    out = []
    for e in entries:
        if "from" in e:
            out.append(f"{e['from']} → {e['order']} ({e['time'][:10]})")
        elif "status" in e and not e.get("stop_date_recorded"):
            out.append(f"{e['name']} (last ordered {e['time'][:10]}, now {e['status']})")
        else:
            out.append(f"{e['name']} ({e['time'][:10]})")
    return "; ".join(out)


def _finished_too(found: dict[str, Any]) -> str:
    finished = found.get("finished") or []
    return f" Courses completed (not stopped): {_listed(finished)}." if finished else ""


def _orders(found: dict[str, Any]) -> str:
    count = found.get("orders", 0)
    return f"{count} order{'s' if count != 1 else ''} on file"
