"""Entity extraction with an LLM backend: a prompted extraction, then a self-correction pass.

1. **Extraction**: the model reads the note and returns JSON entities (type, name, value, unit, time, the
   exact quote, and whether the statement is negated, family history, a plan or patient-reported).
2. **Self-correction**: the model sees its own list next to the note and must drop every value, unit or
   time the note does not literally say.
3. **Literal check** (deterministic, always): a value, unit or time that does not occur in the note at the
   entity's place is removed anyway; an entity whose name is not in the note is dropped. Models invent
   units and times; this pass is what makes them safe to verify.

Any :class:`~fhirqa.agent.backends.base.Backend` works (``complete(messages, tools, role=…)``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fhirqa.agent.backends.base import Message
from fhirqa.consistency.model import VIEWS, Entity, Section
from fhirqa.consistency.segment import EXCLUDED, section_at, segment

EXTRACT_PROMPT = """You extract checkable statements from a clinical note, to be compared with the patient's
structured record. Return only JSON: {"entities": [...]}, one object per statement with:
  "type": lab | vital | medication | condition | procedure | immunization
  "name": the item as written (e.g. "K", "Lasix", "CXR")
  "value": the number as written, or "" (blood pressure 120/80 gives two entities, systolic and diastolic)
  "unit": the unit as written, or ""
  "component": "systolic" / "diastolic" for a blood pressure, else ""
  "time": the time expression as written that this statement refers to ("0800", "HD #2", "yesterday"), or ""
  "quote": the exact text of the statement, copied from the note
  "negated", "family", "plan", "reported": true when the statement is negated, about a relative, a plan or
  order for the future, or reported by the patient / another facility (not measured here).
Copy text exactly; never convert units or compute values."""

CORRECT_PROMPT = """Here is a clinical note and a list of statements extracted from it. Check every statement
against the note. Remove any value, unit or time that the note does not literally contain at that place, and
remove statements that the note does not make. Fix "negated", "family", "plan" and "reported". Return only
the corrected JSON in the same format: {"entities": [...]}"""


def _json(text: str | None) -> list[dict[str, Any]]:
    """The entity list in a model's reply (tolerates prose or code fences around the JSON)."""
    if not text:
        return []
    match = re.search(r"\{.*\}|\[.*\]", text, re.S)
    if not match:
        return []
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    items = data.get("entities", []) if isinstance(data, dict) else data
    return [i for i in items if isinstance(i, dict)]


def ask(backend: Any, system: str, user: str, role: str) -> list[dict[str, Any]]:
    """One model call; the parsed entity list."""
    turn = backend.complete([Message("system", system), Message("user", user)], [], role=role)
    return _json(turn.text)


def _find(text: str, needle: str, start: int = 0) -> int:
    if not needle:
        return -1
    at = text.find(needle, start)
    return at if at != -1 else text.lower().find(needle.lower(), start)


def literal(text: str, item: dict[str, Any], used: set[tuple[int, int]]) -> Entity | None:
    """An entity from one model item, keeping only what the note literally says."""
    category = str(item.get("type", "")).lower()
    name = str(item.get("name", "")).strip()
    if category not in VIEWS or not name:
        return None
    quote = str(item.get("quote", "")).strip()
    q_at = _find(text, quote) if quote else -1
    anchor = q_at if q_at != -1 else 0
    n_at = _find(text, name, anchor)
    if n_at == -1 or (q_at != -1 and n_at > q_at + len(quote)):
        n_at = _find(text, name)
    if n_at == -1:
        return None  # the note does not name it
    end = n_at + len(name)
    region_end = max(end, q_at + len(quote)) if q_at != -1 else min(len(text), end + 40)
    value_text = str(item.get("value", "")).strip()
    value, value_span = None, None
    if value_text:
        v_at = text.find(value_text, end, region_end + len(value_text))
        number = re.fullmatch(r"[<>]?=?\s*(\d+(?:\.\d+)?)", value_text)
        if v_at != -1 and number:
            value, value_span = float(number.group(1)), (v_at, v_at + len(value_text))
            while value_span in used and v_at != -1:  # a second value of the same name (diastolic)
                v_at = text.find(value_text, v_at + 1, region_end + len(value_text))
                value_span = (v_at, v_at + len(value_text)) if v_at != -1 else None
            if value_span is None:
                value = None
    unit = str(item.get("unit", "")).strip()
    if unit and (value_span is None or text.lower().find(unit.lower(), value_span[1], value_span[1] + len(unit) + 3) == -1):
        unit = ""  # a unit the note does not write after the value
    span_end = max(end, value_span[1] if value_span else end)
    if unit and value_span:
        span_end = text.lower().find(unit.lower(), value_span[1]) + len(unit)
    ent = Entity("T1" if value is not None else "T2", category, text[n_at:end], (n_at, span_end), (n_at, end),
                 value=value, value_text=value_text if value is not None else "", value_span=value_span,
                 decimals=len(value_text.split(".")[1]) if value is not None and "." in value_text else 0,
                 comparator=value_text[0] if value is not None and value_text[0] in "<>" else "", unit=unit,
                 component=str(item.get("component", "") or ""), source="llm")
    if value_span:
        used.add(value_span)
    for flag, why in (("negated", "negated"), ("family", "family history"), ("plan", "plan"),
                      ("reported", "home or outside reading")):
        if item.get(flag) is True:
            ent.skip = why
            break
    return ent


def extract_llm(text: str, backend: Any, sections: list[Section] | None = None) -> list[Entity]:
    """Entities by the model, self-corrected, then literally checked against the note."""
    sections = sections or segment(text)
    first = ask(backend, EXTRACT_PROMPT, text, "consistency-extract")
    corrected = ask(backend, CORRECT_PROMPT, f"NOTE:\n{text}\n\nSTATEMENTS:\n{json.dumps({'entities': first})}",
                    "consistency-correct") if first else []
    out: list[Entity] = []
    used: set[tuple[int, int]] = set()
    for item in corrected or first:
        ent = literal(text, item, used)
        if ent is None:
            continue
        section = section_at(sections, ent.span[0])
        ent.section = section.kind
        if not ent.skip and section.kind in EXCLUDED and section.kind != "plan":
            ent.skip = EXCLUDED[section.kind]
        if ent.category == "medication" and section.kind in ("meds", "discharge_meds"):
            ent.context = "listed"
        elif ent.category == "medication":
            ent.context = "given"
        out.append(ent)
    return sorted(out, key=lambda e: (e.span[0], e.value_span or (0, 0)))
