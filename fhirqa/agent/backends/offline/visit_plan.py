"""Questions about one visit, or about visits since another: "what did they diagnose me with in the ER?", "what was
my diagnosis at my last emergency room visit?", "how many checkups have I had since my last ER visit?".

Definitions (docs/questions.md, "Patient and parent wording"):

- **The diagnoses of a visit** are the conditions recorded with that encounter (``Condition.encounter``, the
  condition view's ``encounter_ref``); when none is linked, the conditions whose onset falls on the visit's day.
  The visit is the latest of the class named (the first when "first" is said).
- **Visits of one kind since another** count the visits of the first kind that start strictly after the start of
  the latest visit of the second kind. A check-up is an encounter whose type says so
  (``lexicon/patient_voice.json`` ``checkup_types``); ER, hospital stays and the other classes are the encounter's
  class, read by the parser's class words.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
Plan = Generator[Call, dict[str, Any], None]

_DIAGNOSIS = re.compile(r"\bdiagnos\w*|\bwhat (?:was|is) wrong\b|\bsay (?:was|is) wrong\b|\bwhat did (?:they|the \w+) "
                        r"(?:find|say i had|say it was)\b")
_FIRST = re.compile(r"\b(?:first|earliest|1st)\b")


@dataclass
class VisitQuestion:
    """A question about the diagnoses of a visit ("dx"), or a count of visits since another ("since")."""

    kind: str  # "dx" | "since" | "new_since" | "when" | "field"
    visit_class: str | None  # the class of the visit asked about ("EMER"), or CHECKUP
    anchor_class: str | None = None  # "since": the class of the anchoring visit
    first: bool = False  # "when": the first such visit (else the latest)
    field: str = ""  # "field": the encounter view's field asked ("reason_name", "practitioner" …)


CHECKUP = "CHECKUP"  # check-ups are found by their type's words, not a class


def _text(question: str) -> str:
    return " ".join(re.sub(r"[?!;()]", " ", question.lower().replace("’", "'")).split())


def _visit_class(words: str) -> str | None:
    """The class the words name: check-ups by type (CHECKUP), else the parser's encounter class."""
    from fhirqa.agent.backends.offline.parser import _encounter_class
    from fhirqa.project import lexicon_file

    checkup = (lexicon_file("patient_voice.json").get("growth") or {}).get("checkup_words") or []
    if checkup and re.search(r"\b(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in checkup) + r")s?\b", words):
        return CHECKUP  # "check up", "well child visit", "physical": found by the visit's type
    code = _encounter_class(words)
    return CHECKUP if code == "WELLNESS" else code


def visit_question(pq: ParsedQuestion) -> VisitQuestion | None:
    """What ``pq`` asks about visits, or None when it is another question."""
    text = _text(pq.text)
    since = re.search(r"\bhow many (?P<what>[\w' -]+?) \bsince (?:my|his|her|their|the) (?:last|latest|most "
                      r"recent) (?P<anchor>[\w' -]+?)(?: visit| trip)?(?:\s*$|,)", text) or re.search(
        r"\bsince (?:i|he|she|they) (?:was|were|went) (?:in|to|at) (?:the|an?) (?P<anchor>[\w' -]+?) (?:last|most recently)\b"
        r",? how many (?P<what>[\w' -]+?)$", text)
    if since:
        # "how many times have I been to the ER since my last checkup?": the visits counted are named anywhere
        # before "since"; "doctor visits" of no class are every visit
        what, anchor = _visit_class(since.group("what")), _visit_class(since.group("anchor"))
        if what is None and not re.search(r"\b(?:visits?|appointments?|encounters?)\b", since.group("what")):
            return None
        if anchor and what != anchor:
            return VisitQuestion("since", what, anchor)
        return None
    new = re.search(r"\b(?:new|newly)\b.*?\b(?:diagnos\w*|dx(?:'?d|s|es)?|problems?|conditions?)\b.*?\bsince (?:my|his|her|their|"
                    r"the|pt'?s?) (?:last|latest|most recent|previous) (?P<anchor>[\w' -]+?)(?: visit| exam)?\s*$", text)
    if new and _visit_class(new.group("anchor")) is not None:
        # "any new diagnoses since her last physical?": conditions with an onset after that visit began
        return VisitQuestion("new_since", None, _visit_class(new.group("anchor")))
    when = re.match(r"^(?:when|what (?:day|date))\s+(?:was|were|is|did i have|did (?:he|she|they) have)\s+(?:my|his|her|their|the)\s+"
                    r"(?:(?P<first>first|earliest)|last|latest|most recent|previous)\s+(?P<what>[\w' -]+?)\s*$", text)
    if when and _visit_class(when.group("what")) == CHECKUP:
        return VisitQuestion("when", CHECKUP, first=when.group("first") is not None)  # "when was my last check up"
    fields = _fields_spec()
    named = _visit_class(text)
    # "who saw her at the last visit?" is any visit's (the coded facts of the last visit); this frame reads stays
    stays_only = named is not None or not re.search(r"\b(?:visits?|seen|appointments?|encounters?)\b", text)
    window = pq.window
    # a window that is the stay itself ("this admission", "the first admission") names the visit; a day or a year
    # ("the 2019 admission", "the visit on 3/2") is left to the plans that place it
    of_stay = window is None or window.anchor == "admission" or (
        window.anchor == "event" and window.event is not None and window.event.event == "stay")
    if stays_only and of_stay and not any(re.search(p, text) for p in fields.get("not", [])):
        for field, spec in fields.get("fields", {}).items():
            if any(re.search(p, text) for p in spec["asks"]):
                return VisitQuestion("field", named, first=_FIRST.search(text) is not None, field=field)
    if _DIAGNOSIS.search(text) and not re.search(r"\bwhen\b|\bhow (?:many|long|old)\b|\bever\b", text):
        visit = _visit_class(text)
        if visit is not None:
            return VisitQuestion("dx", visit)
    return None


def _fields_spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return dict(lexicon_file("encounters.json").get("visit_fields") or {})


def plan_visit(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    """Answer a visit question with tool calls (the visit and every condition or visit counted are cited)."""
    if asked.kind == "dx":
        yield from _diagnoses(pq, asked)
    elif asked.kind == "field":
        yield from _field(pq, asked)
    elif asked.kind == "when":
        yield from _visit_date(pq, asked)
    elif asked.kind == "new_since":
        yield from _new_since(pq, asked)
    else:
        yield from _since(pq, asked)


def _visits(pq: ParsedQuestion, visit_class: str | None) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The encounters of a class (check-ups by type) before now: the result with ``handle`` and ``count``."""
    from fhirqa.agent.backends.offline.growth_plan import checkup_visits
    from fhirqa.agent.backends.offline.plans import _iso

    if visit_class == CHECKUP:
        found = yield from checkup_visits()
    else:
        found = yield ("get_resources", {"view": "encounter"})
        if found.get("count") and visit_class:
            found = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": visit_class,
                                               "field": "class_code"})
    if found.get("count") and pq.now is not None:
        found = yield ("filter_by_date", {"records": found["handle"], "end": _iso(pq.now), "field": "start_time"})
    return dict(found)


def _label(visit_class: str | None) -> str:
    return {"EMER": "emergency room", "IMP": "hospital", "AMB": "outpatient", "VR": "virtual", "HH": "home health",
            CHECKUP: "check-up"}.get(visit_class or "", "")  # no class: every visit ("a visit")


def _diagnoses(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    from fhirqa.agent.backends.offline.plans import _day, _row, final

    visits = yield from _visits(pq, asked.visit_class)
    what = _label(asked.visit_class)
    if not visits.get("count"):
        yield final([], f"The record has no {what} visit.", status="no-data")
        return
    first = _FIRST.search(_text(pq.text)) is not None
    visit = _row((yield ("get_by_index", {"records": visits["handle"], "index": 0 if first else -1,
                                          "order_by": "start_time"})))
    day = _day(visit.get("start_time"))
    conditions = yield ("get_resources", {"view": "condition"})
    if not conditions.get("count"):
        yield final([], f"No diagnosis is recorded for the {what} visit of {day}.", status="no-data")
        return
    linked = yield ("filter_by_value", {"records": conditions["handle"], "op": "==", "value": visit.get("ref"),
                                        "field": "encounter_ref"})
    how = "recorded with that visit"
    if not linked.get("count"):
        linked = yield ("filter_by_date", {"records": conditions["handle"], "start": day, "end": day, "field": "onset_time"})
        how = "with an onset that day"
    if not linked.get("count"):
        yield final([], f"No diagnosis is recorded for the {what} visit of {day}.", status="no-data")
        return
    which = "first" if first else "last"
    names = yield ("extract_field_value", {"records": linked["handle"], "field": "name"})
    listed = list(dict.fromkeys(v["value"] if isinstance(v, dict) else v for v in names.get("values", [])))
    yield final(listed, f"At your {which} {what} visit ({day}, {visit.get('type_name') or what}) the diagnoses "
                f"{how}: {'; '.join(str(n) for n in listed)}.")


def _field(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    """What the visit's record says in the field asked (why, who, where); a missing reason falls back to the
    diagnoses recorded with the visit (each cited)."""
    from fhirqa.agent.backends.offline.plans import STAY_CLASSES, _day, _instant, _row, final

    classes = [asked.visit_class] if asked.visit_class else [*STAY_CLASSES]
    picked: list[dict[str, Any]] = []
    for code in classes:
        visits = yield from _visits(pq, code)
        if visits.get("count"):
            index = 0 if asked.first else -1
            picked.append(_row((yield ("get_by_index", {"records": visits["handle"], "index": index,
                                                         "order_by": "start_time"}))))
    dated = [(when, v) for v in picked if (when := _instant(v.get("start_time"))) is not None]
    what = _label(asked.visit_class) or "hospital or emergency"
    if not dated:
        yield final([], f"The record has no {what} visit.", status="no-data")
        return
    visit = (min if asked.first else max)(dated, key=lambda d: d[0])[1]
    day, kind = _day(visit.get("start_time")), visit.get("type_name") or what
    said = _fields_spec()["fields"][asked.field]["what"]
    ends = _instant(visit.get("end_time"))
    if asked.field == "discharge_disposition" and pq.now is not None and (ends is None or ends > pq.now):
        yield final([], f"Not discharged yet: the {kind} of {day} is still going on.", status="no-data")
        return
    if visit.get(asked.field):
        yield final([visit[asked.field]], f"{visit[asked.field]}: {said} the {kind} of {day}.")
        return
    if asked.field != "reason_name":
        yield final([], f"The {kind} of {day} records no {said.split(' ', 2)[1]}.", status="no-data")
        return
    conditions = yield ("get_resources", {"view": "condition"})
    linked = {"count": 0}
    if conditions.get("count"):
        linked = yield ("filter_by_value", {"records": conditions["handle"], "op": "==", "value": visit.get("ref"),
                                            "field": "encounter_ref"})
    if not linked.get("count"):
        yield final([], f"The {kind} of {day} records no reason and no diagnosis linked to it.", status="no-data")
        return
    names = yield ("extract_field_value", {"records": linked["handle"], "field": "name"})
    listed = list(dict.fromkeys(v["value"] if isinstance(v, dict) else v for v in names.get("values", [])))
    yield final(listed, f"The {kind} of {day} records no reason of its own; the diagnoses recorded with it: "
                f"{'; '.join(str(n) for n in listed)}.")


def _since(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    from fhirqa.agent.backends.offline.plans import _day, _iso, _row, final

    anchors = yield from _visits(pq, asked.anchor_class)
    anchor_label, what = _label(asked.anchor_class), _label(asked.visit_class)
    if not anchors.get("count"):
        yield final([], f"The record has no {anchor_label} visit to count from.", status="no-data")
        return
    anchor = _row((yield ("get_by_index", {"records": anchors["handle"], "index": -1, "order_by": "start_time"})))
    start = datetime.fromisoformat(str(anchor.get("start_time"))) + timedelta(seconds=1)  # strictly after it
    visits = yield from _visits(pq, asked.visit_class)
    count = 0
    if visits.get("count"):
        after = yield ("filter_by_date", {"records": visits["handle"], "start": _iso(start), "field": "start_time"})
        count = int(after.get("count") or 0)
    noun = " ".join(filter(None, [what, "visit" if count == 1 else "visits"]))
    yield final([count], f"{count} {noun} since your last {anchor_label} visit "
                f"({_day(anchor.get('start_time'))}).")


def _new_since(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    """Conditions with an onset after the start of the latest visit of the anchor's kind, up to now; a visit begun
    within ``current_hours`` of now is the visit in progress, and the one before it is the anchor."""
    from fhirqa.agent.backends.offline.plans import _day, _iso, _row, final
    from fhirqa.project import lexicon_file

    anchors = yield from _visits(pq, asked.anchor_class)
    anchor_label = _label(asked.anchor_class)
    if not anchors.get("count"):
        yield final([], f"The record has no {anchor_label} visit to count from.", status="no-data")
        return
    anchor = _row((yield ("get_by_index", {"records": anchors["handle"], "index": -1, "order_by": "start_time"})))
    hours = float((lexicon_file("patient_voice.json").get("new_since_visit") or {}).get("current_hours") or 0)
    began = datetime.fromisoformat(str(anchor.get("start_time")))
    if pq.now is not None and hours and pq.now - began < timedelta(hours=hours):
        # the visit in progress (or just over) is not "the last" one: the one before it is
        if int(anchors["count"]) < 2:
            yield final([], f"The only {anchor_label} visit is the current one ({_day(began.isoformat())}).", status="no-data")
            return
        anchor = _row((yield ("get_by_index", {"records": anchors["handle"], "index": -2, "order_by": "start_time"})))
    start = datetime.fromisoformat(str(anchor.get("start_time"))) + timedelta(seconds=1)  # strictly after it began
    day = _day(anchor.get("start_time"))
    conditions = yield ("get_resources", {"view": "condition"})
    after = {}
    if conditions.get("count"):
        after = yield ("filter_by_date", {"records": conditions["handle"], "start": _iso(start),
                                          **({"end": _iso(pq.now)} if pq.now is not None else {}), "field": "onset_time"})
    if not after.get("count"):
        yield final([], f"No new diagnosis since the last {anchor_label} visit ({day}).")
        return
    names = yield ("extract_field_value", {"records": after["handle"], "field": "name"})
    listed = list(dict.fromkeys(v["value"] if isinstance(v, dict) else v for v in names.get("values", [])))
    yield final(listed, f"New since the last {anchor_label} visit ({day}, {anchor.get('type_name') or anchor_label}): "
                f"{'; '.join(str(n) for n in listed)}.")


def _visit_date(pq: ParsedQuestion, asked: VisitQuestion) -> Plan:
    """The day of the latest (first) visit of the kind asked."""
    from fhirqa.agent.backends.offline.plans import _day, _row, final

    visits = yield from _visits(pq, asked.visit_class)
    what = _label(asked.visit_class)
    if not visits.get("count"):
        yield final([], f"The record has no {what} visit.", status="no-data")
        return
    visit = _row((yield ("get_by_index", {"records": visits["handle"], "index": 0 if asked.first else -1,
                                          "order_by": "start_time"})))
    which = "first" if asked.first else "last"
    yield final([visit.get("start_time")], f"Your {which} {what} visit was on {_day(visit.get('start_time'))} "
                f"({visit.get('type_name') or what}).")
