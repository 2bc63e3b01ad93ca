"""Patient lookup crosses patients, so it exists only where no single patient is in scope."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.tools import execute
from fhirqa.agent.tools.base import Resolution, ToolContext

PEOPLE = [
    {"patient_id": "p1", "name": "Estela Flórez", "given": "Estela", "family": "Flórez", "birth_date": "1977-08-11"},
    {"patient_id": "p2", "name": "Estela Florez", "given": "Estela", "family": "Florez", "birth_date": "1980-01-01"},
]


class NoRows:
    def rows(self, view):
        return []

    def items(self, view):
        return []


def context(patient_id=None, directory=lambda: PEOPLE):
    return ToolContext(patient_id, datetime(2024, 1, 1, tzinfo=UTC), NoRows(), lambda v, p, n: Resolution([]),
                       directory=directory)


def test_name_matching_ignores_accents_and_the_birth_date_disambiguates():
    found = execute(context(), "find_patient", {"name": "estela florez", "birth_date": "1977-08-11"})
    assert found["count"] == 1 and found["patients"][0]["patient_id"] == "p1"


def test_without_a_birth_date_every_match_is_listed():
    assert execute(context(), "find_patient", {"name": "Estela Florez"})["count"] == 2


def test_a_question_about_one_patient_cannot_search_the_others():
    result = execute(context("p1", directory=None), "find_patient", {"name": "Estela"})
    assert result["ok"] is False and "not available" in result["error"]
