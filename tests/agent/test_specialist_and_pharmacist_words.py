"""Words of specialists and pharmacists (session 18, from the probe_voices2 failures), over hand-made rows; each gold
is computed from the rows.

1. "worst eGFR" is the lowest, "worst creatinine" the highest, "best A1c" the lowest (``worst_best``);
2. "when did she go on Glucophage" asks the start (the first order), not the latest one;
3. "last time she was in the emergency dept?" is the latest visit whichever name it carries (a class and a type);
4. "which statin is he on?" with none is an empty answer, not a No;
5. "how many ED visits and why?" is the count, and each visit's day and reason.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from .test_tools_helpers import med, obs, offline_answer, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
EGFR = [obs(f"g{i}", "eGFR CKD-EPI", v, d, unit="mL/min/{1.73_m2}", code="33914-3")
        for i, (v, d) in enumerate([(88.0, "2024-01-05T08:00:00"), (61.0, "2024-09-05T08:00:00"), (74.0, "2025-03-05T08:00:00")])]
CR = [obs(f"c{i}", "Creatinine", v, d, unit="mg/dL", code="2160-0")
      for i, (v, d) in enumerate([(0.9, "2024-01-05T08:00:00"), (1.4, "2024-09-05T08:00:00"), (1.1, "2025-03-05T08:00:00")])]
A1C = [obs(f"a{i}", "Hemoglobin A1c", v, d, unit="%", code="4548-4")
       for i, (v, d) in enumerate([(7.9, "2023-01-05T08:00:00"), (6.4, "2024-01-05T08:00:00"), (6.9, "2025-01-05T08:00:00")])]
METFORMIN = [med(f"m{i}", "Glucophage (metformin) 500 MG Oral Tablet", "request", d, dose=500, status=s)
             for i, (d, s) in enumerate([("2023-02-01T09:00:00", "stopped"), ("2024-02-01T09:00:00", "stopped"),
                                        ("2025-02-01T09:00:00", "active")])]


def encounter(eid: str, code: str, start: str, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished", "start_time": t(start), "end_time": t(start), "reason_name": None}


VISITS = [encounter("e1", "EMER", "2016-07-15T06:00:00", "Emergency Encounter"),
          encounter("e2", "EMER", "2019-07-06T06:00:00", "Emergency room admission (procedure)"),
          encounter("e3", "AMB", "2024-02-01T09:00:00", "General examination of patient (procedure)")]
VIEWS: dict[str, list[dict[str, Any]]] = {"observation": EGFR + CR + A1C, "medication": METFORMIN, "encounter": VISITS}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize(("question", "rows", "pick"), [
    ("worst eGFR she's had", EGFR, min), ("worst creatinine?", CR, max), ("best A1c ever", A1C, min),
    ("best eGFR?", EGFR, max), ("worst (highest) eGFR?", EGFR, max),  # an extreme written out wins
])
def test_worst_and_best_follow_the_direction_that_is_bad_for_the_item(question, rows, pick) -> None:
    expected = pick(rows, key=lambda r: r["value"])
    got = ask(question)
    assert got["answer"] == [expected["value"]], got["text"]
    assert expected["ref"] in got["cited"]


def test_going_on_a_drug_is_its_start() -> None:
    first = min(METFORMIN, key=lambda r: r["time"])
    got = ask("when did she go on Glucophage")
    assert str(got["answer"][0])[:10] == first["time"].date().isoformat()


def test_the_last_emergency_visit_is_one_whatever_its_name() -> None:
    latest = max((v for v in VISITS if v["class_code"] == "EMER"), key=lambda v: v["start_time"])
    got = ask("last time she was in the emergency dept?")
    assert len(got["answer"]) == 1 and str(got["answer"][0])[:10] == latest["start_time"].date().isoformat()


def test_which_member_of_an_absent_class_is_none() -> None:
    got = ask("which statin is he on?")
    assert got["answer"] == [] and got["status"] == "answered" and got["text"].startswith("None")
    assert ask("is he on a statin?")["answer"] == [False]


def test_how_many_visits_and_why_gives_each_visits_reason() -> None:
    visits = [{**v, "reason_name": reason} for v, reason in zip(VISITS, ["Syncope", "Atypical chest pain", None], strict=True)]
    emergency = [v for v in visits if v["class_code"] == "EMER"]
    got = offline_answer("how many ED visits and why?", {**VIEWS, "encounter": visits}, NOW)
    assert got["answer"] == [len(emergency)]
    for visit in emergency:
        assert f"{visit['start_time'].date().isoformat()} {visit['reason_name']}" in got["text"]
