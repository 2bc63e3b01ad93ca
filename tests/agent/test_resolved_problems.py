"""Whether a problem is over (session 18, found by the probe_voices2 case manager): "is her prediabetes resolved now",
"viral sinusitis cleared up?" once answered with the condition's name or a Yes that it exists. They are the active
check of the problem answered the other way round; each gold is computed from the rows' abatement and status.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from .test_tools_helpers import offline_answer, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


def condition(cid: str, name: str, onset: str, abated: str | None = None) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Condition/{cid}", "name": name, "code": None, "onset_time": t(onset),
            "abatement_time": t(abated) if abated else None, "recorded_time": None,
            "clinical_status": "resolved" if abated else "active", "verification_status": "confirmed",
            "category": "problem-list-item"}


CONDITIONS = [condition("pd", "Prediabetes", "2019-03-01T00:00:00"),
              condition("sin", "Viral sinusitis (disorder)", "2024-11-02T00:00:00", "2024-11-20T00:00:00")]


def resolved(name: str) -> bool:
    row = next(r for r in CONDITIONS if r["name"] == name)
    return row["abatement_time"] is not None and row["abatement_time"] <= NOW


@pytest.mark.parametrize(("question", "name"), [
    ("is her prediabetes resolved now", "Prediabetes"), ("prediabetes resolved?", "Prediabetes"),
    ("viral sinusitis cleared up?", "Viral sinusitis (disorder)"), ("has the sinusitis gone away?", "Viral sinusitis (disorder)"),
])
def test_resolved_is_the_active_check_the_other_way_round(question: str, name: str) -> None:
    got = offline_answer(question, {"condition": CONDITIONS}, NOW)
    assert got["answer"] == [resolved(name)], got["text"]
    assert next(r["ref"] for r in CONDITIONS if r["name"] == name) in got["cited"]


def test_a_clear_result_is_no_resolved_question() -> None:
    from fhirqa.agent.backends.offline.parser import parse

    assert not parse("is the chest x-ray clear?", NOW).asks_resolved
    assert not parse("has she gone to the ER?", NOW).asks_resolved
