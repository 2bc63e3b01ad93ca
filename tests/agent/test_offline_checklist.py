"""Several questions in one ("pre-op check: any anticoagulants, last K and Cr, allergies?"), over hand-made rows.

1. each part is answered as it would be asked alone, in order, every value cited;
2. a part the record cannot answer says so, and the others still answer; none answered is no-data;
3. one question with a comma or a date in it is not cut ("on 3/22, what was her K?", "K, Na and Cr?").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.checklist_plan import checklist_parts
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
VIEWS: dict[str, list[dict[str, Any]]] = {
    "observation": [
        obs("k-1", "Potassium", 4.1, "2025-06-19T06:00:00", unit="mmol/L", code="2823-3"),
        obs("k-2", "Potassium", 5.2, "2025-06-20T06:00:00", unit="mmol/L", code="2823-3"),
        obs("cr-1", "Creatinine", 1.4, "2025-06-20T06:00:00", unit="mg/dL", code="2160-0"),
    ],
    "medication": [med("rq-apix", "Apixaban 5 MG Oral Tablet", "request", "2025-06-01T09:00:00", dose=5, status="active")],
    "allergy": [{"patient_id": "p1", "ref": "AllergyIntolerance/a1", "name": "Penicillin V", "category": "medication",
                 "clinical_status": "active", "criticality": "high", "recorded_time": None, "reaction": "Hives"}],
}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    return offline_answer(question, views or VIEWS, NOW)


def _latest(name: str) -> dict[str, Any]:
    return max((r for r in VIEWS["observation"] if r["name"] == name), key=lambda r: r["time"])


def test_each_part_is_answered_as_if_asked_alone_in_order() -> None:
    got = ask("pre-op check: any anticoagulants, last K and Cr, allergies?")
    k, cr = _latest("Potassium"), _latest("Creatinine")
    assert got["answer"][:3] == [True, k["value"], cr["value"]]
    text = got["text"]
    order = [text.index(p) for p in ("Any anticoagulants:", "Last K and Cr:", "Allergies:")]
    assert order == sorted(order)
    assert "Penicillin V" in text and "Apixaban" in text
    assert {k["ref"], cr["ref"], "MedicationRequest/rq-apix", "AllergyIntolerance/a1"} <= got["cited"]
    assert ask("K? Cr?")["answer"] == [k["value"], cr["value"]]


def test_a_part_without_an_answer_says_so_and_the_others_stand() -> None:
    got = ask("last K; last troponin?")
    assert got["status"] == "answered" and got["answer"] == [_latest("Potassium")["value"]]
    assert "Last troponin:" in got["text"]
    assert ask("last troponin? last BNP?")["status"] == "no-data"


def test_one_question_with_a_comma_or_a_date_is_not_cut() -> None:
    for question in ("on 3/22, what was her K?", "K, Na and Cr?", "what was her last K?", "is she on apixaban?",
                     "Find pt: Hayes, Marsha, DOB Jul 30 '80", "febrile in the ED? (H&P 10/13/2025)",
                     "triglycerides in the past year? most recent one", "x-cover q: most recent sodium, in mmol/L?",
                     "any low BG? lowest accucheck 24h", "last K? how many times was K replaced?"):
        assert checklist_parts(parse(question, NOW)) is None, question
    assert checklist_parts(parse("dispo: last K, any abx", NOW)) == ["last K", "any abx"]
    # a label that names an item is the subject of every part
    assert checklist_parts(parse("K: last value, trend?", NOW)) == ["K last value", "K trend"]
