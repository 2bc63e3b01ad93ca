"""A drug class or a way of giving a drug asked at the bedside: "abx?", "current antibiotics?", "what pressors is
she on", "any IV abx?", "heparin drip running?", "propofol gtt?".

A class named with only frame words around it asks which of its members (``lexicon/drugs.json`` classes) are in
progress now: those with a completed administration in the last ``recent_hours`` before now (or in the question's
own window), listed with their records, and the answer says the window. A route word narrows them ("IV abx"). A
class with no member on file is a No ("pressors?"); a class whose members are only ordered, never charted as given,
is left to the order-based plans (an outpatient record has no MAR to read "in progress" from).

An infusion word ("drip", "gtt", "infusion") with a drug asks whether the drug runs as a continuous infusion: an
administration in that window with a rate, or an infusion mark in its route or dosage text. Otherwise the answer
is No, with the route the record charts ("5,000 units SC"). Words in ``lexicon/drug_class_questions.json``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
# intents a bare class or infusion question is parsed as; a count, a date or a trend asks something else
_INTENTS = frozenset({"value", "exists", "list_items"})
_YES_NO = re.compile(r"^(?:is|are|was|were|does|do|did|has|have|any)\b")


@dataclass(frozen=True)
class DrugAsk:
    """What the question names: a class (``infusion`` False) or a drug given as an infusion, and a route."""

    name: str
    infusion: bool
    route: str | None
    one_drug: bool = False  # a drug named with a route: "Rocephin orally?" asks how it is given


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("drug_class_questions.json")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'\-/]*", text.lower())


def class_asked(pq: ParsedQuestion) -> DrugAsk | None:
    """The class or infusion the question asks about, or None."""
    from fhirqa.agent.lexicon import Lexicon

    spec = _spec()
    text = " ".join(pq.text.lower().split())
    if not pq.entity:
        return None
    excluded = any(re.search(p, text) for p in spec["not_when"])
    words = _words(pq.entity)
    infusion_words = {w for phrase in spec["infusion_words"] for w in phrase.split()}
    infusion = any(w in infusion_words for w in words)
    if pq.intent not in _INTENTS and not (infusion and pq.intent == "active_check"):
        return None
    spellings = sorted(((said, route) for route, said_all in spec["routes"].items() for said in said_all),
                       key=lambda pair: -len(pair[0]))
    # a route is read in the question's words ("going by mouth": the parser keeps only "mouth" of it)
    route = next((route for said, route in spellings if re.search(rf"(?<![a-z.]){re.escape(said)}(?![a-z])", text)), None)
    route_words = {w for said, _ in spellings for w in said.split()}
    frame = set(spec["frame_words"])
    rest = [w for w in words if w not in frame and w not in route_words and w not in infusion_words]
    if not rest:
        return None
    lexicon = Lexicon.load()
    phrase = " ".join(rest)
    drug = lexicon.drug_phrase(rest) if route and not infusion else None
    if drug and (_YES_NO.match(text) or len(words) <= 3):
        # "Rocephin orally?", "is acetaminophen being given by mouth?": how one drug goes, whatever else is said
        return DrugAsk(drug, False, route, one_drug=True)
    if excluded:
        return None
    if infusion:
        # the drug itself ("heparin drip"), as the lexicon knows it or as written (the record's name may be a brand)
        return DrugAsk(lexicon.drug_phrase(rest) or phrase, True, route)
    if lexicon.class_members(phrase):  # every word left names the class: "abx", "antibiotics", "pressors"
        return DrugAsk(phrase, False, route)
    return None


def _window(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], Any]:
    """The question's own window (the stay for "this admission"), else the last ``recent_hours`` before now."""
    from fhirqa.agent.backends.offline.plans import current_stay
    from fhirqa.agent.backends.offline.timephrases import Window

    assert pq.now is not None
    if pq.window is not None and pq.window.anchor == "admission":
        return (yield from current_stay(pq))
    if pq.window is not None and pq.window.anchor is None and pq.window.end is not None:
        return pq.window
    hours = int(_spec()["recent_hours"])
    return Window(pq.now - timedelta(hours=hours), pq.now, f"in the last {hours} hours")


def plan_drug_class(pq: ParsedQuestion, ask: DrugAsk) -> Generator[Call, dict[str, Any], bool]:
    """The members in progress or whether the drug runs as an infusion; False (to the other plans) when the
    members are on file only as orders."""
    from fhirqa.agent.backends.offline.plans import NOT_GIVEN, _iso, final

    found = yield ("get_resources", {"view": "medication", "item": ask.name})
    fuzzy = str(found.get("resolved_by", "")).startswith("fuzzy")
    what = f"{ask.route + ' ' if ask.route else ''}{ask.name}"
    if not found.get("count") or fuzzy or found.get("ambiguous"):
        if re.match(r"^(?:which|what)\b", " ".join(pq.text.lower().split())):  # "which statin is he on?": none
            yield final([], f"None: no {what} on file for this patient (none ordered or given).")
        else:
            yield final([False], f"No: no {what} on file for this patient (none ordered or given).")
        return True
    admin = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "administration", "field": "kind"})
    if ask.one_drug:
        yield from _given_by_route(found["handle"], admin, ask)
        return True
    if not admin.get("count"):
        return False  # orders only: whether one is current is the order's status, read by the other plans
    handle = admin["handle"]
    for status in NOT_GIVEN:  # a dose charted as not given was not given
        undone = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            given = yield ("filter_by_value", {"records": handle, "op": "!=", "value": status, "field": "status"})
            handle = given.get("handle") or handle
    if ask.route:
        routed = yield from _by_route(handle, ask.route)
        if not routed.get("count"):
            last = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
            yield final([False], f"No: no {ask.name} is charted as given {ask.route}; the last dose was "
                                 f"{_dose(last)} on {str(last.get('time'))[:10]}.")
            return True
        handle = routed["handle"]
    window = yield from _window(pq)
    if window is None:
        yield final([], f"The record has no inpatient stay to anchor '{pq.window.label if pq.window else ''}' to.",
                    status="no-data")
        return True
    recent = yield ("filter_by_date", {"records": handle, "start": _iso(window.start), "end": _iso(window.end)})
    if not recent.get("count"):
        last = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
        yield final([False], f"No: no {what} was given {window.label}; the last was {last.get('medication_name')} "
                             f"({_dose(last)}) on {str(last.get('time'))[:10]}.")
        return True
    if ask.infusion:
        yield from _infusion(recent["handle"], ask, window.label)
        return True
    names = yield ("extract_field_value", {"records": recent["handle"], "field": "medication_name", "distinct": True})
    listed = sorted({str(v.get("value")) for v in names.get("values", []) if v.get("value")})
    shown = "; ".join(listed)
    if _YES_NO.match(" ".join(pq.text.lower().split())):
        yield final([True], f"Yes: {shown} (given {window.label}, completed administrations).")
        return True
    yield final(listed, f"{shown}: {what} given {window.label} (completed administrations; a class member given "
                        f"in that window is taken as in progress).", list_from=recent["handle"], list_field="medication_name")
    return True


def _given_by_route(handle: str, admin: dict[str, Any], ask: DrugAsk) -> Generator[Call, dict[str, Any], None]:
    """Yes when the drug's latest dose charted (else its latest order) goes by the asked route, else No with the route
    it goes by."""
    from fhirqa.agent.backends.offline.plans import NOT_GIVEN, final

    source, what = (admin["handle"], "dose given") if admin.get("count") else (handle, "order")
    if admin.get("count"):
        for status in NOT_GIVEN:
            given = yield ("filter_by_value", {"records": source, "op": "!=", "value": status, "field": "status"})
            source = given.get("handle") or source
    row = (yield ("get_by_index", {"records": source, "index": -1})).get("row") or {}
    route = str(row.get("route") or "").lower()
    if not route:
        yield final([], f"The latest {ask.name} {what} ({row.get('medication_name')}, {str(row.get('time'))[:10]}) "
                        "charts no route.", status="no-data")
        return
    asked = ask.route or ""
    spellings = [asked.lower(), *(w.lower() for w in _spec()["routes"].get(asked, []))]
    matches = any(re.search(rf"(?<![a-z]){re.escape(said)}(?![a-z])", route) for said in spellings)
    said = f"its latest {what}, {row.get('medication_name')} on {str(row.get('time'))[:10]}, goes {row.get('route')}"
    yield final([matches], f"{'Yes' if matches else 'No'}: {said} ({_dose(row)}).")


def _by_route(handle: str, route: str) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The rows charted with ``route`` under any of its spellings ("IV", "intravenous", "IVPB")."""
    handles: list[str] = []
    for said in dict.fromkeys(w.lower() for w in [route, *_spec()["routes"][route]]):
        hit = yield ("filter_by_value", {"records": handle, "op": "contains", "value": said, "field": "route"})
        if hit.get("count") and hit.get("handle"):
            handles.append(hit["handle"])
    if len(handles) > 1:
        return (yield ("combine_evidence", {"handles": handles}))
    return {"handle": handles[0], "count": 1} if handles else {"count": 0}


def _dose(row: dict[str, Any]) -> str:
    """A row's dose as charted ("5,000 units SC"), its dosage text first."""
    if row.get("dosage_text"):
        return str(row["dosage_text"])
    parts = [str(row.get(k)) for k in ("dose", "dose_unit", "route") if row.get(k) is not None]
    return " ".join(parts) or "dose not stated"


def _infusion(handle: str, ask: DrugAsk, label: str) -> Generator[Call, dict[str, Any], None]:
    """Yes when an administration in ``handle`` runs at a rate or is charted as an infusion, else No with its route."""
    from fhirqa.agent.backends.offline.plans import final

    rated = yield ("filter_by_value", {"records": handle, "op": "exists", "field": "rate"})
    if rated.get("count"):
        row = (yield ("get_by_index", {"records": rated["handle"], "index": -1})).get("row") or {}
        yield final([True], f"Yes: {row.get('medication_name')} runs at {row.get('rate')} {row.get('rate_unit') or ''} "
                            f"({str(row.get('time'))[:16]}).".replace(" )", ")"))
        return
    for field in ("route", "dosage_text"):
        for mark in _spec()["infusion_marks"]:
            marked = yield ("filter_by_value", {"records": handle, "op": "contains", "value": mark, "field": field})
            if marked.get("count"):
                row = (yield ("get_by_index", {"records": marked["handle"], "index": -1})).get("row") or {}
                yield final([True], f"Yes: {row.get('medication_name')} is charted as an infusion ({_dose(row)}, "
                                    f"{str(row.get('time'))[:16]}).")
                return
    row = (yield ("get_by_index", {"records": handle, "index": -1})).get("row") or {}
    yield final([False], f"No: {ask.name} given {label} is not a continuous infusion (no rate; charted as "
                         f"{_dose(row)}, last on {str(row.get('time'))[:10]}).")
