"""Is a result rising or dropping now?

"is his creatinine rising?", "has his K gone up?", "hgb dropping?", "wbc trending down?" ask about now: for a patient
in a stay, the stay's first and last results (the 5 % trend rule); otherwise the latest against the one before. A
step word ("cr bumped?", "hgb dropped?") is always the latest against the one before. Never "Yes" because the test
exists, never the course since the first result on file. The gold of each test is computed from the rows below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .test_tools_helpers import obs, offline_answer, t

NOW = datetime(2025, 7, 19, 18, 0, tzinfo=UTC)
ADMITTED = "2025-07-15T14:00:00"
CREATININE = ("Creatinine [Mass/volume] in Serum or Plasma", "2160-0", "mg/dL")
HEMOGLOBIN = ("Hemoglobin [Mass/volume] in Blood", "718-7", "g/dL")
SERIES = {
    # 2022 baseline far below: since the first result on file creatinine "rose"; this stay it is falling
    CREATININE: [(0.9, "2022-11-09T09:00:00"), (1.9, "2025-07-15T16:00:00"), (1.1, "2025-07-18T05:00:00"),
                 (1.29, "2025-07-19T05:00:00")],
    HEMOGLOBIN: [(14.6, "2022-11-09T09:00:00"), (13.7, "2025-07-15T16:00:00"), (12.1, "2025-07-19T05:00:00")],
}
LABS = [obs(f"{item[1]}-{i}", item[0], value, when, unit=item[2], code=item[1])
        for item, values in SERIES.items() for i, (value, when) in enumerate(values)]
STAY = {"patient_id": "p1", "ref": "Encounter/s1", "class_code": "IMP", "class_name": "inpatient",
        "type_name": "Hospital admission", "status": "in-progress", "start_time": t(ADMITTED), "end_time": None,
        "reason_name": None}
IN_STAY: dict[str, list[dict[str, Any]]] = {"observation": LABS, "encounter": [STAY], "medication": []}
AT_HOME: dict[str, list[dict[str, Any]]] = {"observation": LABS, "encounter": [], "medication": []}


def ask(question: str, views: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return offline_answer(question, views, NOW)


def _stay_values(item: tuple[str, str, str]) -> list[float]:
    return [v for v, when in SERIES[item] if t(when) >= t(ADMITTED)]


def _moved(first: float, last: float) -> str:
    change = (last - first) / first
    return "up" if change > 0.05 else "down" if change < -0.05 else "flat"


def test_rising_or_dropping_in_a_stay_is_the_stays_course() -> None:
    cr = _stay_values(CREATININE)
    assert _moved(cr[0], cr[-1]) == "down"  # and since 2022 it is up: the stay decides
    for question in ("is his creatinine rising?", "has his creatinine gone up?", "cr climbing?"):
        got = ask(question, IN_STAY)
        assert got["answer"] == [False], question
        assert "Observation/2160-0-1" in got["cited"] and "Observation/2160-0-0" not in got["cited"], question
    hgb = _stay_values(HEMOGLOBIN)
    for question in ("is the hemoglobin dropping", "hgb dropping?", "hgb trending down?"):
        assert ask(question, IN_STAY)["answer"] == [_moved(hgb[0], hgb[-1]) == "down"] == [True], question


def test_a_step_word_compares_the_latest_result_with_the_one_before() -> None:
    before, last = SERIES[CREATININE][-2][0], SERIES[CREATININE][-1][0]
    got = ask("cr bumped?", IN_STAY)
    assert got["answer"] == [last > before] == [True]
    assert "Observation/2160-0-2" in got["cited"] and "Observation/2160-0-3" in got["cited"]


def test_out_of_hospital_now_is_the_latest_against_the_one_before() -> None:
    before, last = SERIES[HEMOGLOBIN][-2][0], SERIES[HEMOGLOBIN][-1][0]
    assert ask("is her hemoglobin dropping?", AT_HOME)["answer"] == [last < before] == [True]
    assert ask("is her hemoglobin going up?", AT_HOME)["answer"] == [last > before] == [False]


def test_a_direction_question_is_never_answered_by_the_test_existing() -> None:
    got = ask("has his potassium risen?", IN_STAY)
    assert got["status"] == "no-data" and got["answer"] == []


def test_a_choice_between_directions_or_stable_names_the_trend_not_a_yes_or_no() -> None:
    # "going up, down or staying stable?" asks which way: the trend's own word, never True/False
    got = ask("Is his creatinine going up, down or staying stable?", AT_HOME)
    assert got["answer"] in (["increasing"], ["decreasing"], ["stable"])
    assert ask("is the hemoglobin rising or stable?", AT_HOME)["answer"] in (["increasing"], ["decreasing"], ["stable"])
