"""Several questions in one, as a clinician writes a checklist: "pre-op check: any anticoagulants, last K and Cr,
allergies?", "K? Mg? any abx?", "last A1c; on a statin?".

Where a question is cut into parts is data (``lexicon/question_checklist.json``). Each part is parsed and answered by
the ordinary planner as if it were asked alone, so every value is read, judged and cited exactly as it would be; the
answer joins the parts' answers in order, each line led by its part, and says which parts the record cannot answer.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("question_checklist.json")


def checklist_parts(pq: ParsedQuestion) -> list[str] | None:
    """The parts of a question that is several questions in one (see the module docstring), or None."""
    if pq.intent == "lookup":  # "Find pt: Hayes, Marsha, DOB Jul 30 '80" is one patient, described in parts
        return None
    spec = _spec()
    text = " ".join(pq.text.replace("’", "'").split()).strip()
    body = text.rstrip("?.! ")
    marks = "".join(re.escape(s) for s in spec["separators"])
    cut = f"[{marks}]|" + "|".join(spec["joiners"])
    parts = [p.strip() for p in re.split(cut, body, flags=re.IGNORECASE)]
    labelled = re.match(spec["label"], body, re.IGNORECASE)
    subject = ""
    if labelled and len(labelled.group("label").split()) <= int(spec["label_max_words"]):
        parts = [p.strip() for piece in re.split(cut, labelled.group("rest"), flags=re.IGNORECASE)
                 for p in piece.split(",")]
        from fhirqa.agent.lexicon import Lexicon

        if Lexicon.load().expand(labelled.group("label")):  # "vanc: last dose, last trough?": each part is of vanc
            subject = labelled.group("label").strip()
    from fhirqa.agent.backends.offline.backend import names_something
    from fhirqa.agent.backends.offline.parser import parse

    now = pq.now or datetime.now(UTC)
    lead = re.compile(r"^(?:" + "|".join(map(re.escape, spec["lead_filler"])) + r")\s+", re.IGNORECASE)
    parts = [lead.sub("", p).strip() for p in parts]
    merged: list[str] = []
    for part in (p for p in parts if p):
        if merged and part.startswith("("):  # "febrile in the ED? (H&P 10/13/2025)": a qualifier of the part before
            merged[-1] = f"{merged[-1]} {part}"
        elif merged and re.fullmatch(r"(?:in|as)\s+[\w/%°.\[\]]+\??", part, flags=re.IGNORECASE):
            # "vitamin B12: how long on it, in yrs?": a unit only, the part before asked in it
            merged[-1] = f"{merged[-1]}, {part}"
        elif merged and not names_something(parse(f"{subject} {part}".strip() + "?", now)):
            # "triglycerides in the past year? most recent one", "sodium, in mmol/L": it asks on about the part before
            merged[-1] = f"{merged[-1]}, {part}"
        else:
            merged.append(part)
    parts = [f"{subject} {p}" for p in merged] if subject else merged
    if not int(spec["min_parts"]) <= len(parts) <= int(spec["max_parts"]):
        return None
    joined_by_words = re.search("|".join(spec["joiners"]), body, re.IGNORECASE) is not None
    if not labelled and ";" not in body and not joined_by_words:
        # Question marks alone cut only parts that each name a different thing the lexicon knows: "any low BG?
        # lowest accucheck 24h" restates one question, "K? Cr? any NSAIDs?" asks three.
        keys = [_subject_key(parse(part + "?", now)) for part in parts]
        if None in keys or len(set(keys)) < len(keys):
            return None
    if any(len(re.findall(r"[^\W\d_]", p)) < int(spec["min_part_chars"]) for p in parts):
        return None
    return parts


def _subject_key(pq: ParsedQuestion) -> str | None:
    """What a part asks about, as the lexicon reads it (its first reading), or its kind of list; None when the part
    names something the lexicon does not know."""
    from fhirqa.agent.lexicon import Lexicon

    if pq.entity:
        readings = Lexicon.load().expand(pq.entity)
        return readings[0].term if readings else None
    kind = pq.list_kind or pq.category or pq.demographic or pq.encounter_class or pq.stay_event
    return f"{pq.intent}:{kind}" if kind or pq.intent in ("active_list", "age_at") else None


def plan_checklist(pq: ParsedQuestion, parts: list[str]) -> Generator[Call, dict[str, Any], None]:
    """Each part answered by the planner; the lines joined in order, every part's rows cited."""
    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.plans import final, plan
    from fhirqa.agent.backends.offline.summary_plan import _run

    if pq.now is None:
        yield final([], "A question in parts needs the question's time.", status="error")
        return
    finals = []
    for part in parts:
        got = yield from _run(plan(parse(part + "?", pq.now)))
        if got is not None and got.get("list_from"):
            # a list the final answer completes from a record set ("allergies?"): its values, here, for the joined answer
            listed = yield ("extract_field_value", {"records": got["list_from"], "field": got.get("list_field") or "name",
                                                    "distinct": True})
            values = [v.get("value") if isinstance(v, dict) else v for v in listed.get("values") or []]
            got = {**got, "answer": [*(got.get("answer") or []), *(v for v in values if v not in (got.get("answer") or []))]}
        finals.append(got)
    yield ("final_answer", joined(parts, finals))


def joined(parts: list[str], finals: list[dict[str, Any] | None]) -> dict[str, Any]:
    """The final answer of a checklist from its parts' own (a part with none says "no answer"): the answers of the
    parts that have one, in order, and one line per part led by it; no-data when no part has an answer."""
    lines: list[str] = []
    answers: list[Any] = []
    answered = 0
    for part, got in zip(parts, finals, strict=True):
        text = str((got or {}).get("text") or "").strip() or "no answer."
        if got is not None and got.get("status") not in ("no-data", "error"):
            answered += 1
            answers.extend(got.get("answer") or [])
        lines.append(f"{part[0].upper()}{part[1:]}: {text}")
    if not answered:
        return {"answer": [], "text": " ".join(lines), "status": "no-data"}
    return {"answer": answers, "text": " ".join(lines), "status": "answered"}
