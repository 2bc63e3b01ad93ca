"""Whether a result is normal, high or low: the result's own flag first, then the reference range it carries, then
the usual adult range (lexicon/reference_ranges.json, by sex where it differs, never for a child); the answer names
the range it used. "Is her BP high?" judges systolic and diastolic; "is high BP on her list?" is not this question."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.normality_plan import judge, normality_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2024, 12, 1, 12, 0, tzinfo=UTC)


def bp(oid: str, day: str, systolic: float, diastolic: float) -> list[dict[str, Any]]:
    return [obs(oid, name, value, f"{day}T10:00:00", unit="mm[Hg]", code=code, category="vital-signs",
                is_component=True, parent_name="Blood pressure panel")
            for name, code, value in (("Systolic blood pressure", "8480-6", systolic),
                                      ("Diastolic blood pressure", "8462-4", diastolic))]


OBSERVATIONS = [
    obs("k1", "Potassium", 5.9, "2024-10-01T08:00:00", unit="mmol/L", code="2823-3"),
    obs("k2", "Potassium", 4.2, "2024-11-20T08:00:00", unit="mmol/L", code="2823-3"),
    obs("a1", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.9, "2024-11-02T09:00:00", code="4548-4"),
    obs("h1", "Hemoglobin", 12.4, "2024-11-20T08:00:00", unit="g/dL", code="718-7"),
    obs("n1", "Sodium", 131.0, "2024-11-20T08:00:00", unit="mmol/L", code="2951-2", ref_low=133.0, ref_high=146.0),
    obs("t1", "Troponin I", 0.5, "2024-11-20T08:00:00", unit="ng/mL", code="10839-9", interpretation="H"),
    obs("x1", "Some research marker", 3.0, "2024-11-20T08:00:00", unit="U", code="99999-9"),
    *bp("bp1", "2024-06-01", 128.0, 76.0),
    *bp("bp2", "2024-11-25", 142.0, 91.0),
]


def patient(gender: str, birth: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": "Patient/p1", "birth_date": birth, "gender": gender}


def ask(question: str, gender: str = "female", birth: str = "1960-04-02") -> dict[str, Any]:
    return offline_answer(question, {"observation": OBSERVATIONS, "patient": [patient(gender, birth)]}, NOW)


@pytest.mark.parametrize(("question", "word"), [
    ("is her K normal?", "normal"), ("was the last potassium high?", "high"), ("Hgb low?", "low"),
    ("is his creatinine elevated?", "high"), ("is her creatinine raised?", "high"), ("are her sodium levels abnormal?", "abnormal"), ("K ok?", "normal"),
    ("is the A1c within normal limits?", "normal"),
])
def test_the_word_asked(question: str, word: str) -> None:
    assert normality_asked(parse(question, NOW)) == word


@pytest.mark.parametrize("question", ["does she have high blood pressure?", "is high BP on her problem list?",
                                      "highest K this year?", "is K above 5?", "was she ever hypokalemic?",
                                      "is she on normal saline?",
                                      "did my cholesterol go down since last time?", "is her K up?"])
def test_other_questions_are_not_about_normality(question: str) -> None:
    assert normality_asked(parse(question, NOW)) is None


def test_the_latest_value_is_judged_by_the_usual_range_when_the_record_gives_none() -> None:
    got = ask("is her K normal?")
    assert got["answer"] == [True]  # 4.2 today; the 5.9 in October is not the latest
    assert "3.5–5 mmol/L" in got["text"] and "labs differ" in got["text"]


def test_a_window_picks_the_value_judged() -> None:
    assert ask("was her potassium high in October 2024?")["answer"] == [True]


def test_the_record_s_own_range_comes_before_the_usual_one() -> None:
    got = ask("is the sodium low?")
    assert got["answer"] == [True] and "the record's reference range 133–146" in got["text"]


def test_an_interpretation_flag_comes_first() -> None:
    got = ask("was the troponin high?")
    assert got["answer"] == [True] and "flagged H" in got["text"]


def test_a_range_that_differs_by_sex_uses_the_patient_s() -> None:
    assert ask("is her hemoglobin low?", gender="female")["answer"] == [False]  # 12.4 within 12.0–15.5
    assert ask("is his hemoglobin low?", gender="male")["answer"] == [True]  # below 13.5


def test_a_one_sided_range() -> None:
    got = ask("is her A1c high?")
    assert got["answer"] == [True] and "prediabetes" in got["text"]


def test_a_panel_is_judged_part_by_part() -> None:
    got = ask("is her BP high?")
    assert got["answer"] == [True]  # 142/91 on 2024-11-25
    assert "Systolic" in got["text"] and "Diastolic" in got["text"] and "ACC/AHA" in got["text"]
    assert ask("was her BP normal in June 2024?")["answer"] == [False]  # 128 systolic: elevated, not normal


def test_an_adult_range_is_not_applied_to_a_child() -> None:
    got = ask("is her BP normal?", birth="2015-01-01")
    assert got["status"] == "no-data" and "does not apply at 9 years" in got["text"]


def test_a_result_with_no_range_anywhere_is_not_judged() -> None:
    got = ask("is the research marker normal?")
    assert got["status"] == "no-data" and "no usual range" in got["text"]


def test_judge_converts_units_before_comparing() -> None:
    row = obs("g1", "Glucose", 5.0, "2024-11-20T08:00:00", unit="mmol/L", code="2345-7")
    verdict = judge(row, patient("female", "1960-04-02"))
    assert verdict.side == "normal" and "mg/dL" in verdict.basis  # 5.0 mmol/L ≈ 90 mg/dL


def test_control_is_judged_against_the_usual_goal_not_the_normal_range() -> None:
    got = ask("is her A1c controlled?")
    assert got["answer"] == [False] and "below 7 %" in got["text"]  # 7.9 %
    assert ask("is her BP controlled?")["answer"] == [False]  # 142/91 above 130/80
    assert ask("is her BP uncontrolled?")["answer"] == [True]
    assert ask("is her potassium controlled?")["status"] == "no-data"  # no treatment goal for K
