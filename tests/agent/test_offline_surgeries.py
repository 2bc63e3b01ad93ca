"""Operations as a class: "any surgeries?", "PSH?", "what surgeries has she had?", "last operation?". The lexicon
defines the class by the parts of its members' names (-ectomy, resection, bypass, transplant …) and leaves out what
is about an operation without being one (a referral to a surgeon, a pre-transplant evaluation)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.resolver import ConceptResolver

from .test_tools_helpers import offline_answer, t

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SURGERIES = {"Vasectomy": "1964-07-04", "Rectal polypectomy": "1965-07-03", "Partial resection of colon": "1966-09-09"}
OTHERS = {"Colonoscopy": "1965-07-03", "Referral to transplant surgeon (procedure)": "1990-01-02",
          "Pretransplant evaluation of kidney recipient (procedure)": "1990-02-03", "Suture open wound": "1965-12-19"}


def procedure(pid: str, name: str, day: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Procedure/{pid}", "name": name, "code": None, "code_system": None,
            "status": "completed", "start_time": t(f"{day}T10:00:00"), "end_time": None, "reason_name": None}


VIEWS = {"procedure": [procedure(f"x{i}", name, day) for i, (name, day) in enumerate({**SURGERIES, **OTHERS}.items())],
         "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1940-01-01", "gender": "male"}]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_the_class_holds_operations_and_not_what_is_about_one() -> None:
    got = ConceptResolver()._resolve("procedure", "surgeries", [*SURGERIES, *OTHERS], False)
    assert sorted(got.matched) == sorted(SURGERIES)


def test_any_surgeries_is_yes_when_the_record_holds_one() -> None:
    assert ask("any surgeries?")["answer"] == [True]


@pytest.mark.parametrize("question", ["what surgeries has he had?", "PSH?", "past surgical history"])
def test_the_surgical_history_lists_every_operation(question: str) -> None:
    assert sorted(ask(question)["answer"]) == sorted(SURGERIES)


def test_the_last_operation_is_the_latest_one() -> None:
    got = ask("when was his last operation?")
    assert got["answer"][0].startswith("1966-09-09")
