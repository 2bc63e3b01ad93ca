"""The planner: routes a question to the views that can answer it, reading only the question.

With the offline backend the parse decides; with an LLM the planner role sees the question, the
one-line view descriptions and the routing skill (a few hundred tokens), and answers with JSON.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from fhirqa.agent.backends.base import Backend, Message
from fhirqa.agent.catalog import load_catalog
from fhirqa.project import data_dir

MAIN_VIEWS = ["observation", "medication", "condition", "encounter", "procedure", "immunization", "allergy", "patient"]


@dataclass
class Routing:
    """Views to consult, in order, and what the planner said."""

    views: list[str]
    detail: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _catalog_lines(guidance: str = "") -> str:
    """Every view by name, and what it holds for each view the routing ``guidance`` does not map.

    The routing skill's map ("Labs, vitals, scores → `observation`") says what each view it names holds;
    a description beside it would say it twice. A view it does not name keeps the first sentence of its
    description (the rest is about its rows, which the composer's prompt carries for the routed views).
    """
    catalog = load_catalog()
    lines = [", ".join(catalog)]
    lines += [f"- {name}: {_first_sentence(info.description)}" for name, info in catalog.items()
              if f"`{name}`" not in guidance]
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one of "e.g." or "i.e.")."""
    return re.split(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=\.)\s", text.strip(), maxsplit=1)[0]


# The routing skill's sections a planner is sent, and their headings there: the view map and the mistakes.
ROUTING_SECTIONS = {"When to use": "Which view holds what", "Failure indicators": "Mistakes to avoid"}


def _routing_skill() -> str:
    """The routing skill's view map and failure indicators (its steps are about the composer's tools)."""
    try:
        from fhirqa.agent.skills import load_skills
    except ImportError:
        return ""
    for skill in load_skills():
        if getattr(skill, "name", "") in ("routing", "route", "view-routing"):
            sections = getattr(skill, "sections", {}) or {}
            kept = [f"{label}:\n{sections[title].strip()}" for title, label in ROUTING_SECTIONS.items()
                    if sections.get(title)]
            return "\n".join(kept) if kept else str(getattr(skill, "body", ""))
    return ""


def route(model: Backend, question: str, now: datetime, patient: str = "") -> Routing:
    """Ask the backend's planner role which views answer ``question``."""
    user = Message("user", f"Question: {question}\nPatient: {patient}\nNow: {now.isoformat()}")
    if model.name == "offline":
        turn = model.complete([user], [], role="planner")
        data = orjson.loads(turn.text or "{}")
        return Routing(list(data.get("views") or MAIN_VIEWS[:3]), {"parse": data.get("parse")})
    template = (Path(__file__).parent / "prompts" / "planner.md").read_text("utf-8")
    guidance = _routing_skill()
    system = Message("system", template.format(catalog=_catalog_lines(guidance), skill=guidance))
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


SECOND_SKILL_MARGIN = 0.8  # a further skill is sent only when it scores at least this share of the best one


def retrieve_skills(question: str, backend_name: str, k: int = 2) -> list[Any]:
    """The best skills for ``question``, at most ``k`` (LLM backends only: the offline one never reads them).

    The best one always; each further one only when retrieval scores it close to the best
    (SECOND_SKILL_MARGIN): a clear winner needs no second procedure in every prompt of the conversation.
    """
    if backend_name == "offline":
        return []
    try:
        from fhirqa.agent.skills import default_index
    except ImportError:
        return []
    scored = default_index().scored(question, k=k)
    if not scored:
        return []
    best = scored[0][1]
    return [skill for index, (skill, score) in enumerate(scored) if index == 0 or score >= SECOND_SKILL_MARGIN * best]


def skills_text(skills: list[Any]) -> str:
    """Skills as prompt text: each skill's steps (what a model follows; retrieval already used the rest)."""
    parts = []
    for skill in skills:
        body = str(getattr(skill, "body", ""))
        kept = [_section(body, "Steps")]
        parts.append(f"## {skill.name}\n" + "\n".join(k for k in kept if k))
    return "\n\n".join(parts) or "(none)"


def _section(body: str, title: str) -> str:
    match = re.search(rf"^## {title}\s*$(.*?)(?=^## |\Z)", body, re.MULTILINE | re.DOTALL)
    return f"{title}:{match.group(1).rstrip()}" if match else ""


def compact_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A spec as sent to an LLM: the first sentence of each description, enums and types kept.

    Derived from ``tools/*.json`` (the single source), so the full text stays the documentation.
    """

    params = spec.get("parameters", {})
    properties = {}
    for name, schema in params.get("properties", {}).items():
        slim = {k: v for k, v in schema.items() if k != "description"}
        if schema.get("description") and "enum" not in schema and name not in _SELF_EXPLANATORY:
            slim["description"] = _first_sentence(schema["description"])
        properties[name] = slim
    slim_params = {k: v for k, v in params.items()
                   if k not in ("properties", "additionalProperties") and not (k == "required" and not v)}
    return {"name": spec["name"], "description": _first_sentence(spec.get("description", "")),
            "parameters": {**slim_params, "properties": properties}}


# Parameter names whose meaning the system prompt and the tool description already carry
# (the composer prompt says what final_answer's answer, text and evidence hold).
_SELF_EXPLANATORY = frozenset({"records", "view", "item", "index", "mode", "op", "start", "end", "text", "answer",
                               "status", "unit", "a", "b", "field", "evidence"})


ALWAYS_OFFERED = ("get_resources", "filter_by_date", "get_by_index", "final_answer")


@dataclass(frozen=True)
class ToolCues:
    """Question words that call for a tool (``lexicon/tool_cues.json``), so its spec is offered."""

    always: tuple[str, ...]
    lookup: tuple[str, ...]
    by_view: dict[str, tuple[str, ...]]
    patterns: dict[str, re.Pattern[str]]

    def wanted(self, question: str, *, lookup: bool = False, views: tuple[str, ...] = ()) -> set[str]:
        """The tools this question's words call for, plus the always-offered ones, lookups' and its views'."""
        found = {name for name, pattern in self.patterns.items() if pattern.search(question)}
        found.update(self.always)
        found.update(self.lookup if lookup else ())
        for view in views:
            found.update(self.by_view.get(view, ()))
        return found


@functools.lru_cache(maxsize=1)
def tool_cues() -> ToolCues:
    """The cue table, compiled once: words at word boundaries, symbols anywhere, case-insensitive."""
    data = json.loads((data_dir("lexicon") / "tool_cues.json").read_text(encoding="utf-8"))

    def piece(cue: str) -> str:
        escaped = re.escape(cue)
        return rf"(?<!\w){escaped}(?!\w)" if cue[:1].isalnum() and cue[-1:].isalnum() else escaped

    patterns = {name: re.compile("|".join(piece(c) for c in cues), re.IGNORECASE)
                for name, cues in data["cues"].items() if cues}
    by_view = {view: tuple(names) for view, names in data.get("views", {}).items()}
    return ToolCues(tuple(data.get("always", ())), tuple(data.get("lookup", ())), by_view, patterns)


def tools_for(skills: list[Any], specs: list[dict[str, Any]], backend_name: str, question: str = "",
              *, lookup: bool = False, views: list[str] | tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The tool specs offered to the composer: for an LLM, the basics, those the sent procedures name,
    and those the question's words and routed ``views`` call for (``lookup``: the question names no patient).

    Every spec costs prompt tokens on every turn, so offering all eighteen tools to a question that
    needs four is the largest avoidable cost of an LLM answer. Only the steps of a skill go into the
    prompt (:func:`skills_text`), so the tools they name are offered with them; skill retrieval can miss
    ("# eGFR results ever" retrieves no counting skill), so cue words in the question add their tools
    (``lexicon/tool_cues.json``): a model without ``count_values`` counts rows by eye. The offline backend
    gets them all (it sends nothing).
    """
    if backend_name == "offline" or not skills:
        return specs
    text = skills_text(skills)
    wanted = tool_cues().wanted(question, lookup=lookup, views=tuple(views))
    wanted |= {spec["name"] for spec in specs if spec["name"] in ALWAYS_OFFERED or re.search(rf"\b{spec['name']}\b", text)}
    return [compact_spec(spec) for spec in specs if spec["name"] in wanted]
