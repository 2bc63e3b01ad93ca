"""What the offline SQL writer reads in a question beyond the shared parser's reading (``data/sql_reading.json``).

Relational EHRs hold things a FHIR bundle rarely does: ICU stays inside hospital stays, diagnoses ranked within
one admission, administrations charted apart from the orders. The shared parser
(:mod:`fhirqa.agent.backends.offline.parser`) reads the question once for both paths; these functions adjust its
reading for the SQL path only, from word lists in a data file:

- "during the ICU stay" → a window anchored on the last ICU stay (``anchor="icu_stay"``), and the ICU words leave
  the item phrase ("temperature ICU stay" → "temperature"); with no item left, the question is about the ICU stays
  themselves ("how many ICU stays?", "was he in the ICU?", "when was his last ICU stay?");
- "diagnoses of the last admission", "primary dx last admit" → the coded diagnoses of one encounter;
- dose units after a drug ("total insulin (units)").
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.agent.backends.offline.backend import parse_fresh
from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.timephrases import Window

DATA = Path(__file__).parent / "data" / "sql_reading.json"
ICU_ANCHOR = "icu_stay"
ICU_CLASS = "ICU"  # the encounter class of an ICU-stay count ("how many ICU stays?")
STAY_ANCHORS = ("admission", "last_admission", ICU_ANCHOR)


@lru_cache(maxsize=1)
def words() -> dict[str, Any]:
    """The data file."""
    return dict(json.loads(DATA.read_text("utf-8")))


def _alternation(phrases: list[str]) -> str:
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))


@lru_cache(maxsize=1)
def _icu_pattern() -> re.Pattern[str]:
    icu = words()["icu_stay"]
    the_unit = icu["the_unit"]
    return re.compile(rf"\b(?:(?:{_alternation(icu['lead'])})\s+)?(?:(?:{_alternation(icu['determiners'])})\s+)?"
                      rf"(?:{_alternation(icu['units'])})(?:\s+(?:{_alternation(icu['stay_words'])}))?\b"
                      rf"|\b(?:{_alternation(the_unit['leads'])})\s+the\s+(?:{_alternation(the_unit['words'])})"
                      rf"(?:\s+(?:{_alternation(icu['stay_words'])}))?\b")


def tokens(text: str) -> list[str]:
    """Lower-case words (letters, digits, inner hyphens)."""
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower())


def _without(phrase: str, removed: set[str]) -> str:
    return " ".join(w for w in phrase.split() if w.lower() not in removed)


def read_question(question: str, now: datetime, names: tuple[str, ...] = ()) -> ParsedQuestion:
    """The shared parser's reading of ``question``, adjusted for relational EHRs (see the module docstring)."""
    pq = parse_fresh(question, now.isoformat(), " ".join(names))  # the FHIR path's reading (context lead-ins too)
    _icu_stay(pq)
    _arrival(pq)
    _placement(pq)
    _bare_procedure(pq)
    _discharge_diagnoses(pq)
    _any_started(pq)
    _stay_for(pq)
    return pq


def _arrival(pq: ParsedQuestion) -> None:
    """"when did he come in?", "adm date this admission?": the start of the hospital stay (``arrival``)."""
    if pq.intent != "time_of" or pq.encounter_class or not pq.entity:
        return
    spec = words()["arrival"]
    text = " ".join(tokens(pq.text))
    said = re.search(rf"\b(?:{_alternation(spec['phrases'])})\b", text)
    allowed = {w for p in spec["phrases"] + spec["abbreviations"] for w in tokens(p)}
    entity = tokens(pq.entity)
    if any(w not in allowed for w in entity) or not (said or set(entity) & set(spec["abbreviations"])):
        return
    pq.entity, pq.encounter_class = "", "IMP"
    pq.views = ["encounter"] + [v for v in pq.views if v != "encounter"]


PLACEMENT = "placement: when the device went in"  # a ParsedQuestion note read by offline_intents.time_of


def _placement(pq: ParsedQuestion) -> None:
    """"A-line insertion date?", "when was the PICC placed?": when a device went in: its first row (``placement``)."""
    if pq.intent not in ("time_of", "value", "time_since") or not pq.entity:
        return
    asks = words()["placement"]["asks"]
    entity = " ".join(tokens(pq.entity))
    said = re.search(rf"\b(?:{_alternation(asks)})\b", " ".join(tokens(pq.text)))
    if said is None:
        return
    left = re.sub(rf"\b(?:{_alternation(asks)})\b", " ", entity).split()
    if not left:
        return
    pq.entity = " ".join(left)
    pq.intent, pq.position = "time_of" if pq.intent == "value" else pq.intent, "first"
    pq.notes.append(PLACEMENT)


def _bare_procedure(pq: ParsedQuestion) -> None:
    """"trialysis catheter last admit?": a procedure or device the lexicon names, with a window and no value asked, is
    a yes/no about the window (``bare_procedure``)."""
    if pq.intent != "value" or not pq.entity or pq.window is None or pq.lexicon_views[:1] != ["procedure"]:
        return
    single = words()["last_words"] + words()["first_words"]
    text = " ".join(tokens(pq.text))
    if re.search(rf"\b(?:{_alternation(single)})\b", _without_window(text, pq)):
        return
    pq.intent = "exists"


def _without_window(text: str, pq: ParsedQuestion) -> str:
    """The question without its window's words ("last admit" says which stay, not which row)."""
    label = " ".join(tokens(pq.window.label)) if pq.window else ""
    text = text.replace(label, " ") if label else text
    stay = words()["icu_stay"]["stay_words"] + ["hospitalization", "hospitalisation", "hospital stay"]
    return re.sub(rf"\b(?:last|latest|most recent|first)\s+(?:{_alternation(stay)})\b", " ", text)


def _discharge_diagnoses(pq: ParsedQuestion) -> None:
    """"discharge diagnoses (last stay)?": the diagnoses of the latest stay (its coded conditions), not the date of its
    discharge: a diagnosis word beside the discharge word names what is asked."""
    if pq.stay_event != "discharge" or pq.entity:
        return
    dx = words()["diagnoses"]["words"]
    if not re.search(rf"\b(?:{_alternation([w for w in dx if 'discharge' not in w])})\b", " ".join(tokens(pq.text))):
        return
    pq.stay_event, pq.intent, pq.encounter_class = None, "value", pq.encounter_class or "IMP"


def _stay_for(pq: ParsedQuestion) -> None:
    """"any transfusion during the admission for sepsis?": a stay window named by what the stay was for keeps the
    condition as the stay's (``Anchor.name``, dated by :func:`fhirqa.sql.frames.place_event`), and the condition's
    words leave the item phrase."""
    from dataclasses import replace

    window = pq.window
    if window is None or window.anchor != "event" or window.event is None or window.event.event != "stay" \
            or window.event.name:
        return
    spec = words()["stay_for"]
    text = " ".join(tokens(pq.text))
    match = re.search(rf"\b(?:{_alternation(spec['stay_words'])})\s+(?:{_alternation(spec['joiners'])})\s+"
                      rf"(?:(?:the|a|an|his|her|their)\s+)?([a-z][a-z0-9'\-]*(?:\s+[a-z][a-z0-9'\-]*){{0,{spec['max_words'] - 1}}})",
                      text)
    if match is None:
        return
    item = set(tokens(pq.entity))
    named: list[str] = []
    for word in match.group(1).split():  # the condition is the words the parser left in the item phrase
        if word not in item:
            break
        named.append(word)
    if not named:
        return
    name = " ".join(named)
    left = _without(pq.entity, set(named))
    pq.entity = left
    pq.window = replace(window, event=replace(window.event, name=name), label=f"{window.label} for {name}")


def _any_started(pq: ParsedQuestion) -> None:
    """"any new meds since admit?", "any new meds in the last 30 days?": a yes/no about starts in a window, with no
    item named, asks what was started there (the list, empty when nothing was), as "new meds since admission?" does."""
    from fhirqa.agent.backends.offline.parser import _says_started

    window = pq.window
    placed = window is not None and (window.start is not None or window.anchor in STAY_ANCHORS)
    if pq.intent != "exists" or pq.entity or not placed or not _says_started(pq.text.lower()):
        return
    kinds = ("medication", "condition", "procedure", "immunization")
    view = next((v for v in pq.hinted if v in kinds), "medication")
    pq.intent, pq.aggregate = "list_items", "started"
    pq.views = [view, *(v for v in pq.views if v != view)]


def _icu_stay(pq: ParsedQuestion) -> None:
    """ICU-stay words: a window on the last ICU stay, or (nothing else counted) a count of ICU stays."""
    match = _icu_pattern().search(pq.text.lower())
    if match is None:
        return
    pq.entity = _without(pq.entity, set(tokens(match.group(0))))
    if "unit" in tokens(match.group(0)):
        pq.unit_asked = False  # "in the unit", "intensive care unit": a place, not a unit of measure asked for
    subject = words()["icu_stay"]["subject"]
    if pq.entity and not set(tokens(pq.entity)) - set(subject["verbs"]):
        pq.entity = ""  # "when was he transferred to the ICU?": how he got there names no item
    if _asks_length(pq, subject["length"]):
        pq.entity, pq.intent, pq.stay_event, pq.encounter_class = "", "stay_length", "length", ICU_CLASS
        pq.time_unit = pq.time_unit if pq.time_unit in ("days", "hours", "weeks") else "days"
        return
    if not pq.entity and pq.intent in ("count", "exists", "time_of", "time_since", "value", "list_items", "active_check"):
        _icu_subject(pq)
        return
    if pq.window is None or pq.window.anchor:
        pq.window = Window(None, None, "during the ICU stay", anchor=ICU_ANCHOR)
    if pq.entity and pq.encounter_class == "IMP":
        pq.encounter_class = None  # "stay" named the ICU stay (the window), not an admission to count or read
        pq.views = [v for v in pq.views if v != "encounter"] + ["encounter"]


def _asks_length(pq: ParsedQuestion, length_words: list[str]) -> bool:
    """Whether an ICU question asks the stay's length ("how long was he in the ICU?", "ICU LOS?"): a length phrase of
    ``stay_events`` and nothing but length words left in the item phrase."""
    from fhirqa.agent.backends.offline.parser import _stay_patterns

    left = set(tokens(pq.entity))
    if left - set(length_words):
        return False
    text = " ".join(pq.text.lower().split())
    return pq.stay_event == "length" or bool(left & {"los", "length", "duration"}) or any(
        event == "length" and pattern.search(text) for event, pattern in _stay_patterns())


def _icu_subject(pq: ParsedQuestion) -> None:
    """The ICU stays themselves are asked about (``icu_stay.subject``): counted, dated, named ("which ICU …?"), open
    now ("is she in the unit now?": ``active_check``) or had at all ("ICU during the last stay?": ``exists``)."""
    subject = words()["icu_stay"]["subject"]
    text = " ".join(tokens(pq.text))
    says = lambda key: re.search(rf"\b(?:{_alternation(subject[key])})\b", text) is not None  # noqa: E731
    present = re.match(rf"^(?:{_alternation(subject['present_openings'])})\b", text) is not None
    placed = pq.window is not None and (pq.window.anchor or pq.window.start is not None)  # "is she in the ICU this stay?"
    if pq.intent == "active_check" or (pq.intent in ("value", "exists", "list_items") and (says("now") or (present and not placed))):
        pq.intent = "active_check"
    elif pq.intent in ("value", "list_items") and not says("which"):
        pq.intent = "exists"
    pq.encounter_class = ICU_CLASS
    pq.views = ["encounter"] + [v for v in pq.views if v != "encounter"]


def diagnosis_question(pq: ParsedQuestion) -> tuple[bool, bool] | None:
    """``(principal only, first encounter)`` when the question asks for the diagnoses of one encounter ("diagnoses
    of the last admission", "primary dx last admit"), else None. The item phrase must hold nothing but these words."""
    # a condition's, a procedure's or a drug's window ("labs before the CAD dx") is no encounter: its diagnosis word
    # names the event
    window = pq.window
    stay = window is not None and window.anchor is not None and (
        window.anchor != "event" or (window.event is not None and window.event.event in ("stay", "visit")))
    if pq.intent not in ("value", "list_items") or not (pq.encounter_class or stay):
        return None
    dx = words()["diagnoses"]
    text = " ".join(tokens(pq.text))
    if not re.search(rf"\b(?:{_alternation(dx['words'])})\b", text):
        return None
    allowed = {w for group in ("words", "principal", "fillers") for p in dx[group] for w in tokens(p)}
    if any(w not in allowed for w in tokens(pq.entity)):
        return None
    principal = bool(re.search(rf"\b(?:{_alternation(dx['principal'])})\b", text))
    return principal, says_first(pq)


def says_first(pq: ParsedQuestion) -> bool:
    """Whether the question picks the first of several (admissions, stays) rather than the latest."""
    return any(w in words()["first_words"] for w in tokens(pq.text))


def without_dose_units(phrase: str) -> str:
    """A drug phrase without the dose units written after it ("insulin units" → "insulin"); unchanged when nothing
    else is left."""
    kept = _without(phrase, set(words()["dose_units"]))
    return kept or phrase


def not_given_sql() -> str:
    """SQL condition on canonical rows: the administration was given (its status is none of ``not_given``)."""
    listed = ", ".join("'" + status.replace("'", "''") + "'" for status in words()["not_given"]["statuses"])
    return f"coalesce(lower(r.status), '') NOT IN ({listed})"
