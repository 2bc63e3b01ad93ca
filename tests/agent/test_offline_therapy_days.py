"""Days of therapy: a course is a run of doses with no gap over 48 h (orders, chained by their renewals, when no
dose is charted); "day N" counts the first dose's day as day 1; a course that is over is said to be over, so a
course from an earlier stay is never counted up to today; a drug class joins its members ("abx day #")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.therapy_days_plan import therapy_asked
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools.base import ToolContext
from fhirqa.agent.tools.registry import execute

from .test_tools_helpers import FakeRows, med, offline_answer

NOW = datetime(2025, 6, 20, 8, 0, tzinfo=UTC)
VANC = "Vancomycin 1,000 mg IVPB"


def dose(mid: str, name: str, when: str, status: str = "completed") -> dict[str, Any]:
    return med(mid, name, "administration", when, status=status)


MEDICATIONS = [
    dose("v0", VANC, "2024-11-02T08:00:00"),  # an earlier stay's course
    dose("v1", VANC, "2025-06-16T20:00:00"),  # day 1 of the current course
    dose("v2", VANC, "2025-06-17T08:00:00"),
    dose("v3", VANC, "2025-06-18T08:00:00", status="not-done"),  # held: not a dose
    dose("v4", VANC, "2025-06-19T20:00:00"),
    dose("z1", "Zosyn (piperacillin-tazobactam) 4.5 g IV", "2025-03-01T08:00:00"),
    dose("z2", "Zosyn (piperacillin-tazobactam) 4.5 g IV", "2025-03-02T20:00:00"),
    dose("z3", "Zosyn (piperacillin-tazobactam) 4.5 g IV", "2025-03-04T08:00:00"),  # the same course's last dose
    med("s1", "Simvastatin 20 MG Oral Tablet", "request", "2023-01-10T00:00:00", status="stopped"),
    med("s2", "Simvastatin 20 MG Oral Tablet", "request", "2024-01-09T00:00:00", status="active"),
]
VIEWS = {"medication": MEDICATIONS,
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "female"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_courses_are_runs_of_doses_without_a_long_gap() -> None:
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(VIEWS), resolve=ConceptResolver())
    got = execute(ctx, "medication_courses", {"item": "vancomycin"})
    assert [(c["start"][:10], c["end"][:10], c["doses"], c["ongoing"]) for c in got["courses"]] == [
        ("2024-11-02", "2024-11-02", 1, False), ("2025-06-16", "2025-06-19", 3, True)]


@pytest.mark.parametrize("question", ["how many days has she been on vanc?", "what day of vancomycin is she on?",
                                      "vanc day #?"])
def test_an_ongoing_course_gives_its_day(question: str) -> None:
    got = ask(question)
    assert got["answer"] == [4] and got["text"].startswith("Day 4")  # June 16 is day 1


def test_a_finished_course_gives_its_length_and_says_it_is_over() -> None:
    got = ask("how long was she on zosyn?")
    assert got["answer"] == [4] and got["text"].startswith("Not given now")


def test_renewed_orders_are_one_course() -> None:
    got = ask("how long has she been on simvastatin?")
    assert got["text"].startswith("Day") and "2023-01-10" in got["text"]


def test_no_drug_no_days_question() -> None:
    assert therapy_asked(parse("how many days has she been in the hospital?", NOW)) is None
    assert ask("how many days has she been on cefepime?")["status"] == "no-data"
