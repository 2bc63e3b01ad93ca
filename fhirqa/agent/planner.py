"""The planner: routes a question to the views that can answer it, reading only the question.

With the offline backend the parse decides; with an LLM the planner role sees the question, the
one-line view descriptions and the routing skill (a few hundred tokens), and answers with JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from fhirqa.agent.backends.base import Backend, Message
from fhirqa.agent.catalog import load_catalog

MAIN_VIEWS = ["observation", "medication", "condition", "encounter", "procedure", "immunization", "allergy", "patient"]


@dataclass
class Routing:
    """Views to consult, in order, and what the planner said."""

    views: list[str]
    detail: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _catalog_lines() -> str:
    return "\n".join(f"- {name}: {info.description}" for name, info in load_catalog().items())


def _routing_skill() -> str:
    try:
        from fhirqa.agent.skills import load_skills
    except ImportError:
        return ""
    for skill in load_skills():
        if getattr(skill, "name", "") in ("routing", "route", "view-routing"):
            return str(getattr(skill, "body", ""))
    return ""


def route(model: Backend, question: str, now: datetime, patient: str = "") -> Routing:
    """Ask the backend's planner role which views answer ``question``."""
    user = Message("user", f"Question: {question}\nPatient: {patient}\nNow: {now.isoformat()}")
    if model.name == "offline":
        turn = model.complete([user], [], role="planner")
        data = orjson.loads(turn.text or "{}")
        return Routing(list(data.get("views") or MAIN_VIEWS[:3]), {"parse": data.get("parse")})
    template = (Path(__file__).parent / "prompts" / "planner.md").read_text("utf-8")
    system = Message("system", template.format(catalog=_catalog_lines(), skill=_routing_skill()))
    turn = model.complete([system, user], [], role="planner")
    views = _parse_views(turn.text or "")
    return Routing(views or MAIN_VIEWS[:3], {"planner_reply": (turn.text or "")[:500]},
                   turn.prompt_tokens, turn.completion_tokens)


def _parse_views(text: str) -> list[str]:
    known = set(load_catalog())
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            views = orjson.loads(match.group(0)).get("views", [])
            return [v for v in views if v in known][:3]
        except (orjson.JSONDecodeError, AttributeError):
            pass
    return [v for v in known if re.search(rf"\b{v}\b", text)][:3]


def skills_text(question: str, backend_name: str, k: int = 3) -> str:
    """The top-k skills for ``question`` as prompt text (LLM backends only: the offline one never reads it)."""
    if backend_name == "offline":
        return ""
    try:
        from fhirqa.agent.skills import SkillIndex, load_skills
    except ImportError:
        return ""
    index = SkillIndex(load_skills())
    return "\n\n".join(f"## {s.name}\n{s.body}" for s in index.search(question, k=k))
