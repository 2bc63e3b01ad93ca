"""The LLM skills tell a model how to ask for one kind of note (``find_in_notes(note_kind=…)``), as the offline plans do.

A question naming a kind of note or report ("last d/c summary", "# of echos", "CXRs this admission") is answered
from the notes of that kind only; a skill that sends the model to the notes for such questions must say so.
"""

from __future__ import annotations

import json
from pathlib import Path

from fhirqa.agent.skills import load_skills

ROOT = Path(__file__).resolve().parents[2]


def _skills() -> dict[str, str]:
    return {s.name: " ".join(s.body.split()) for s in load_skills(ROOT / "skills")}


def test_the_tool_schema_offers_note_kind():
    schema = json.loads((ROOT / "tools" / "find_in_notes.json").read_text(encoding="utf-8"))
    assert "note_kind" in json.dumps(schema)


def test_note_evidence_counting_and_encounter_scoping_name_note_kind():
    skills = _skills()
    for name in ("note-evidence", "counting", "encounter-scoping"):
        assert "note_kind" in skills[name], f"{name} does not say how to read one kind of note"


def test_a_count_of_studies_counts_their_reports_when_no_procedure_row_records_them():
    counting = _skills()["counting"]
    assert "CXR" in counting and "reports" in counting


def test_the_allergy_skill_says_where_allergies_are_when_the_record_has_no_allergy_view():
    allergies = _skills()["allergies-and-immunizations"]
    assert "Allergies:" in allergies and "no structured allergy list" in allergies
