"""The LLM extraction path with a scripted backend: extraction, self-correction, literal check."""

from __future__ import annotations

import json

from fhirqa.agent.backends.base import ModelTurn
from fhirqa.consistency import PatientChecker
from fhirqa.consistency.llm import extract_llm

NOTE = "Vitals: BP 120/80. Labs: K 5.4, Cr 1.2. Lasix 40 mg IV given at 0800. Pt denies CHF.\nFHx: mother with CKD."
FIRST = [
    {"type": "lab", "name": "K", "value": "5.4", "unit": "mmol/L", "quote": "K 5.4"},  # invented unit
    {"type": "lab", "name": "Cr", "value": "1.9", "quote": "Cr 1.2"},  # invented value
    {"type": "vital", "name": "BP", "value": "120", "component": "systolic", "quote": "BP 120/80"},
    {"type": "vital", "name": "BP", "value": "80", "component": "diastolic", "quote": "BP 120/80"},
    {"type": "medication", "name": "Lasix", "value": "40", "unit": "mg", "quote": "Lasix 40 mg IV given"},
    {"type": "condition", "name": "CHF", "negated": True, "quote": "denies CHF"},
    {"type": "condition", "name": "CKD", "quote": "mother with CKD"},
    {"type": "procedure", "name": "EKG", "quote": "EKG done"},  # not in the note at all
]


class Scripted:
    """Returns the extraction, then echoes it as the corrected list (a lazy model)."""

    name = "scripted"

    def __init__(self) -> None:
        self.roles: list[str] = []

    def complete(self, messages, tools, *, role):
        self.roles.append(role)
        if role == "consistency-extract":
            return ModelTurn("```json\n" + json.dumps({"entities": FIRST}) + "\n```")
        return ModelTurn("Corrected: " + messages[1].content.split("STATEMENTS:\n")[1])


def test_extraction_then_self_correction_then_literal_check():
    backend = Scripted()
    ents = extract_llm(NOTE, backend)
    assert backend.roles == ["consistency-extract", "consistency-correct"]
    got = [(e.name, e.value, e.unit, e.component, e.skip) for e in ents]
    assert got == [("BP", 120, "", "systolic", ""), ("BP", 80, "", "diastolic", ""), ("K", 5.4, "", "", ""),
                   ("Cr", None, "", "", ""), ("Lasix", 40, "mg", "", ""), ("CHF", None, "", "", "negated"),
                   ("CKD", None, "", "", "family history")]
    assert all(e.source == "llm" for e in ents)


def test_llm_path_through_the_checker(store):
    checker = PatientChecker(store, "p1", backend=Scripted())
    report = checker.check("Labs: K 5.4, Cr 1.1 on 3/1/2024.", "2024-03-02T10:00:00Z", "Progress note")
    assert [(c.entity.name, c.status) for c in report.checks] == [("K", "consistent"), ("Cr", "consistent")]
    checker.close()


def test_unparseable_replies_give_no_entities():
    class Mute:
        name = "mute"

        def complete(self, messages, tools, *, role):
            return ModelTurn("I cannot help with that.")

    assert extract_llm(NOTE, Mute()) == []
