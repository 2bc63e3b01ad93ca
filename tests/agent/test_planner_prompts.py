"""What the planner and composer prompts carry for an LLM: the parts that change what a model does, once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent import planner
from fhirqa.agent.backends.base import Message, ModelTurn
from fhirqa.agent.catalog import load_catalog
from fhirqa.agent.skills import load_skills
from fhirqa.agent.tools import tool_specs


class Recorder:
    """An LLM stand-in that records the planner request and routes to observation."""

    name = "recorder"

    def __init__(self) -> None:
        self.sent: list[Message] = []

    def complete(self, messages: list[Message], tools: list[dict[str, Any]], *, role: str) -> ModelTurn:
        self.sent = messages
        return ModelTurn('{"views": ["observation"]}')


def test_the_planner_sees_the_view_map_not_the_composer_steps():
    model = Recorder()
    routing = planner.route(model, "What was her last A1c?", datetime(2026, 6, 30, tzinfo=UTC), "p1 (Ana Diaz)")
    assert routing.views == ["observation"]
    system = model.sent[0].content
    routing_skill = next(s for s in load_skills() if s.name == "routing")
    assert routing_skill.sections["When to use"] in system
    assert routing_skill.sections["Failure indicators"] in system
    assert routing_skill.sections["Steps"] not in system
    # Every view is named; the map says what each holds, so no description repeats it.
    assert all(view in system for view in load_catalog())
    assert "Measurements and findings" not in system


def test_a_view_the_routing_map_does_not_name_keeps_its_description():
    lines = planner._catalog_lines("Labs, vitals → `observation`.")
    assert "- observation:" not in lines
    # What a view holds, not how its rows are laid out (that is the composer's prompt).
    assert "- medication: Medication events: one row per order" in lines and "share request_ref" not in lines


def test_spec_descriptions_are_whole_sentences():
    for spec in tool_specs():
        slim = planner.compact_spec(spec)
        texts = [slim["description"]] + [p.get("description", "") for p in slim["parameters"]["properties"].values()]
        for text in texts:
            assert not text.rstrip().endswith(("(e.g.", "e.g.", "(i.e.")), (spec["name"], text)
            assert text.count("(") == text.count(")"), (spec["name"], text)


@dataclass
class FakeSkill:
    name: str
    body: str


class FakeIndex:
    def __init__(self, scored: list[tuple[FakeSkill, float]]) -> None:
        self._scored = scored

    def scored(self, question: str, k: int = 3) -> list[tuple[FakeSkill, float]]:
        return self._scored[:k]


def steps(*tools: str) -> str:
    return "## Steps\n" + "\n".join(f"1. `{t}(records)`" for t in tools) + "\n\n## Failure indicators\n- `sort_records` misuse\n"


@pytest.mark.parametrize(("second_score", "expected"), [(0.9, ["counting", "temporal"]), (0.5, ["counting"])])
def test_a_second_skill_is_sent_only_when_retrieval_cannot_tell_them_apart(monkeypatch, second_score, expected):
    index = FakeIndex([(FakeSkill("counting", steps("count_values")), 1.0),
                       (FakeSkill("temporal", steps("filter_by_date")), second_score)])
    monkeypatch.setattr("fhirqa.agent.skills.default_index", lambda: index)
    assert [s.name for s in planner.retrieve_skills("how many visits", "openai")] == expected
    assert planner.retrieve_skills("how many visits", "offline") == []


def test_the_tools_offered_are_the_basics_and_those_the_sent_steps_name():
    skill = FakeSkill("counting", steps("count_values"))
    offered = [t["name"] for t in planner.tools_for([skill], tool_specs(), "openai")]
    assert set(offered) == {*planner.ALWAYS_OFFERED, *planner.tool_cues().always, "count_values"}
    # sort_records appears only under Failure indicators, which is not sent: not offered.
    assert "sort_records" not in offered
    assert len(planner.tools_for([skill], tool_specs(), "offline")) == len(tool_specs())


def offered_for(question: str, **kwargs) -> set[str]:
    skill = FakeSkill("latest", steps("get_by_index"))
    return {t["name"] for t in planner.tools_for([skill], tool_specs(), "openai", question, **kwargs)}


@pytest.mark.parametrize(("question", "tool"), [
    ("# eGFR results ever", "count_values"),
    ("how many clinic appointments since May?", "count_values"),
    ("avg O2 sat last week", "aggregate"),
    ("Tmax this admit", "find_extreme"),
    ("hi K?", "find_extreme"),
    ("K>5 ever?", "filter_by_value"),
    ("any creatinine above 1.5 in 2023", "filter_by_value"),
    ("how long since her last visit", "calculate_time_offset"),
])
def test_a_question_whose_words_call_for_a_tool_is_offered_it_though_no_skill_names_it(question, tool):
    assert tool in offered_for(question)
    assert tool not in offered_for("What was her last potassium?")


def test_notes_are_always_searchable_and_a_lookup_is_offered_find_patient():
    assert "find_in_notes" in offered_for("What was her last potassium?")
    assert "find_patient" in offered_for("Who is Maria Lopez born 1970-01-02?", lookup=True)
    assert "find_patient" not in offered_for("Who is Maria Lopez born 1970-01-02?")


def test_a_routed_view_brings_its_tools():
    assert "filter_by_value" in offered_for("Insulin daily dose?", views=("medication",))
    assert "filter_by_value" not in offered_for("Insulin daily dose?", views=("observation",))


def test_the_offered_tools_are_fewer_than_all_for_a_plain_question():
    assert len(offered_for("What was her last potassium?")) < len(tool_specs()) // 2


def test_every_tool_the_cue_table_names_exists():
    names = {spec["name"] for spec in tool_specs()}
    cues = planner.tool_cues()
    named = {*cues.patterns, *cues.always, *cues.lookup, *(t for ts in cues.by_view.values() for t in ts)}
    assert named <= names, named - names
