"""Medication changes, read as a reconciliation reads the orders (the ``medication_changes`` tool and its plan):

- a drug is its generic: a brand and its generic of one strength are one drug and one regimen ("Zestril 10 MG" after
  "Lisinopril 10 MG" is a renewal, not a change), another strength is a dose change;
- a drug is started when its first order falls in the window; stopped when its last order is stopped or cancelled
  and none is active (a statin renewed later was not stopped, whatever its old orders say); finished when a course
  completed; whether a stop fell in a window is decided from every order up to now;
- "was X stopped?", "when was X d/c'd?" and "did they increase the X dose?" are about that drug; a drug still
  ordered is a No that names its active order;
- "any med changes?" with no period reads the last 90 days and says so; "has he stopped smoking?" is no
  medication question.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools.base import ToolContext
from fhirqa.agent.tools.registry import execute

from .test_tools_helpers import FakeRows, med, obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


def order(mid: str, name: str, when: str, status: str, end: str | None = None, **extra: Any) -> dict[str, Any]:
    row = med(mid, name, "request", when, status=status, **extra)
    if end is not None:
        row["end_time"] = med("x", name, "request", end)["time"]
    return row


MEDICATIONS = [
    order("s1", "Simvastatin 10 MG Oral Tablet", "2019-03-01T00:00:00", "stopped"),
    order("s2", "Simvastatin 10 MG Oral Tablet", "2020-03-01T00:00:00", "stopped"),
    order("s3", "Zocor (simvastatin) 40 MG Oral Tablet", "2025-03-01T00:00:00", "active"),  # a dose change in 2025
    order("l1", "Lisinopril 10 MG Oral Tablet", "2023-01-05T00:00:00", "completed"),
    order("l2", "Zestril (lisinopril) 10 MG Oral Tablet", "2024-01-05T00:00:00", "active"),  # a renewal by brand
    order("n1", "Naproxen 500 MG Oral Tablet", "2024-11-02T00:00:00", "stopped"),  # stopped, no stop date
    order("c1", "Cephalexin 500 MG Oral Capsule", "2025-04-01T00:00:00", "completed", end="2025-04-11T00:00:00"),
    order("w1", "Warfarin Sodium 5 MG Oral Tablet", "2025-05-10T00:00:00", "active"),  # started in 2025
    order("e1", "Metformin 500 MG Oral Tablet", "2022-02-02T00:00:00", "entered-in-error"),  # never an order
    med("d1", "Warfarin Sodium 5 MG Oral Tablet", "dispense", "2025-05-11T00:00:00"),  # a fill, not a change
]
VIEWS = {
    "medication": MEDICATIONS,
    "observation": [obs("t1", "Tobacco smoking status", None, "2024-01-01T00:00:00", unit="", code="72166-2",
                        category="social-history", value_string="Former smoker")],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "male"}],
}


def context(views: dict[str, list[dict[str, Any]]] | None = None) -> ToolContext:
    return ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_the_tool_reads_starts_dose_changes_stops_and_finished_courses() -> None:
    ctx = context()
    got = execute(ctx, "medication_changes", {"start": "2025-01-01"})
    assert [e["name"] for e in got["started"]] == ["Cephalexin 500 MG Oral Capsule", "Warfarin Sodium 5 MG Oral Tablet"]
    assert [(e["from"], e["order"]) for e in got["dose_changed"]] == [
        ("Simvastatin 10 MG Oral Tablet", "Zocor (simvastatin) 40 MG Oral Tablet")]
    assert got["stopped"] == []  # naproxen's last order is from 2024
    assert [(e["name"], e["time"][:10]) for e in got["finished"]] == [("Cephalexin 500 MG Oral Capsule", "2025-04-11")]
    cited = {ref for ref, _ in ctx.evidence}
    assert {"MedicationRequest/s3", "MedicationRequest/s2", "MedicationRequest/w1", "MedicationRequest/c1"} <= cited
    whole = execute(context(), "medication_changes", {})
    assert [e["name"] for e in whole["stopped"]] == ["Naproxen 500 MG Oral Tablet"]
    assert not whole["stopped"][0]["stop_date_recorded"]
    assert "metformin" not in {e["drug"] for group in ("started", "stopped", "finished") for e in whole[group]}


def test_a_brand_renewal_of_the_same_strength_is_no_dose_change() -> None:
    got = execute(context(), "medication_changes", {"start": "2024-01-01", "end": "2024-12-31"})
    assert got["dose_changed"] == [] and got["started"] == [{**got["started"][0]}]  # naproxen only
    assert [e["name"] for e in got["started"]] == ["Naproxen 500 MG Oral Tablet"]
    assert [e["name"] for e in got["stopped"]] == ["Naproxen 500 MG Oral Tablet"]


@pytest.mark.parametrize("question", ["any med changes this year?", "medication changes since January?",
                                      "what changes to his meds in 2025?", "any changes in her medications this year?"])
def test_med_changes_in_a_window_list_every_kind_of_change(question: str) -> None:
    got = ask(question)
    assert sorted(got["answer"]) == ["Cephalexin 500 MG Oral Capsule", "Warfarin Sodium 5 MG Oral Tablet",
                                     "Zocor (simvastatin) 40 MG Oral Tablet"]
    assert "Simvastatin 10 MG Oral Tablet → Zocor (simvastatin) 40 MG Oral Tablet" in got["text"]


def test_med_changes_without_a_period_read_the_last_90_days_and_say_so() -> None:
    got = ask("any med changes?")  # the cephalexin course started and finished in them
    assert sorted(got["answer"]) == ["Cephalexin 500 MG Oral Capsule", "Warfarin Sodium 5 MG Oral Tablet"]
    assert "last 90 days" in got["text"]


@pytest.mark.parametrize("question", ["which meds were discontinued?", "what medications were stopped?",
                                      "any meds d/c'd?"])
def test_discontinued_medications_are_the_drugs_whose_last_order_stopped(question: str) -> None:
    got = ask(question)
    assert got["answer"] == ["Naproxen 500 MG Oral Tablet"]
    assert "Cephalexin" in got["text"]  # a completed course is named apart, not as stopped


def test_was_a_drug_stopped_is_about_that_drug() -> None:
    assert ask("was naproxen stopped?")["answer"] == [True]
    still = ask("was simvastatin discontinued?")
    assert still["answer"] == [False] and "still ordered" in still["text"] and "2025-03-01" in still["text"]
    assert ask("when was the Keflex stopped?")["answer"][0].startswith("2025-04-11")
    assert ask("was he taken off metoprolol?")["status"] == "no-data"  # never ordered


def test_a_dose_increase_is_read_from_the_strengths() -> None:
    assert ask("did they increase his simvastatin dose?")["answer"] == [True]
    assert ask("was the simvastatin dose decreased?")["answer"] == [False]
    assert ask("did they increase the lisinopril dose?")["answer"] == [False]  # a brand renewal, same 10 mg


def test_a_change_word_without_a_medication_is_no_medication_question() -> None:
    got = ask("has he stopped smoking?")
    assert "order" not in got["text"]


def test_a_change_of_values_that_are_not_numbers_is_said_not_computed() -> None:
    got = ask("how did his smoking status change?")
    assert got["status"] != "error"
