"""Which results of a kind were abnormal, no single item named ("any abnormal labs?", "were her last labs normal?"),
over hand-made rows of two days of labs (no store needed). The gold of each test is computed from the rows.

1. with no window asked, the results read are those of the latest day that has any, said in the answer; each
   abnormal one is listed with the basis of its judgement and cited; normal ones, questionnaire scores and earlier
   days are not;
2. "normal?" is yes only when none judged is abnormal; "abnormal?" lists them (or yes/no when asked as one);
3. a window asked is read whole; a result with nothing to judge it by is counted, never called abnormal;
4. one named item stays the normality plan's; no results at all is no-data.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.abnormal_plan import abnormal_asked
from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
LABS = [
    obs("k-1", "Potassium", 5.9, "2025-06-20T04:00:00", unit="mmol/L", code="2823-3", ref_low=3.5, ref_high=5.1),
    obs("na-1", "Sodium", 139.0, "2025-06-20T04:00:00", unit="mmol/L", code="2951-2", ref_low=135, ref_high=145),
    obs("hgb-1", "Hemoglobin", 7.1, "2025-06-20T04:00:00", unit="g/dL", code="718-7", interpretation="L"),
    obs("odd-1", "Novel marker", 42.0, "2025-06-20T04:00:00", unit="U", code="99999-9"),  # no flag, range or usual one
    obs("cr-0", "Creatinine", 1.9, "2025-06-19T10:00:00", unit="mg/dL", code="2160-0", interpretation="H"),  # day before
    obs("phq", "PHQ-2 total score", 5.0, "2025-06-20T03:00:00", unit="{score}", code="55758-7", category="survey"),
]
PATIENT = [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1960-01-01", "gender": "female"}]


def ask(question: str, labs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return offline_answer(question, {"observation": LABS if labs is None else labs, "patient": PATIENT}, NOW)


def _abnormal_on_latest_day() -> set[str]:
    latest = max(r["time"].date() for r in LABS if r["category"] == "laboratory")
    outside = {"k-1"} | {r["ref"].split("/")[1] for r in LABS if r.get("interpretation") in ("L", "H")}
    return {f"Observation/{oid}" for oid in outside if any(
        r["ref"] == f"Observation/{oid}" and r["time"].date() == latest for r in LABS)}


def test_the_last_labs_are_the_latest_day_each_abnormal_one_listed_and_cited() -> None:
    expected = _abnormal_on_latest_day()
    assert expected == {"Observation/k-1", "Observation/hgb-1"}
    got = ask("any abnormal labs?")
    assert got["answer"] == [True] and expected <= got["cited"]
    assert "2025-06-20 (the latest day with lab results)" in got["text"]
    assert "2 of the 3 lab results" in got["text"]  # K, Na, Hgb judged; the novel marker has nothing to judge by
    assert "1 had no flag or range" in got["text"]
    for ref in ("Observation/cr-0", "Observation/na-1", "Observation/phq", "Observation/odd-1"):
        assert ref not in got["text"]
    assert "the record's reference range" in got["text"] and "flagged L" in got["text"]


def test_normal_asked_is_yes_only_when_nothing_judged_is_abnormal() -> None:
    assert ask("were her last labs normal?")["answer"] == [False]
    normal_only = [r for r in LABS if r["ref"] in ("Observation/na-1", "Observation/cr-0")]
    normal_only = [{**r, "interpretation": None} for r in normal_only]
    got = ask("were her last labs normal?", normal_only)
    assert got["answer"] == [True] and "all 1 lab results" in got["text"]  # the latest day holds the sodium only
    assert ask("any abnormal labs?", normal_only)["answer"] == [False]


def test_a_list_is_asked_and_a_window_is_read_whole() -> None:
    listed = ask("which labs were abnormal?")
    assert listed["answer"] == ["Hemoglobin", "Potassium"]  # the items, in time order (then name); values in the text
    assert " high " in listed["text"] and " low " in listed["text"]
    since = ask("any abnormal labs in the last 2 days?")
    assert "Observation/cr-0" in since["cited"] and "3 of the 4 lab results" in since["text"]


def test_one_named_item_is_not_this_question_and_no_results_is_no_data() -> None:
    now = NOW
    assert abnormal_asked(parse("is her K normal?", now)) is None
    assert abnormal_asked(parse("any abnormal labs?", now)) == ("abnormal", "laboratory")
    assert abnormal_asked(parse("abnormal vitals today?", now)) == ("abnormal", "vital-signs")
    got = ask("any abnormal labs?", [r for r in LABS if r["category"] == "survey"])
    assert got["status"] == "no-data"


CRITICAL_LIMITS = {"2823-3": (2.8, 6.2), "718-7": (7.0, 20.0)}  # typical K and Hb panic limits (reference_ranges.json)


def _critical(rows: list[dict[str, Any]]) -> set[str]:
    latest = max(r["time"].date() for r in rows if r["category"] == "laboratory")
    hits = set()
    for r in rows:
        low, high = CRITICAL_LIMITS.get(r["code"], (None, None))
        if r["time"].date() == latest and low is not None and not low <= r["value"] <= high:
            hits.add(r["name"])
        if r["time"].date() == latest and r.get("interpretation") in ("LL", "HH", "AA"):
            hits.add(r["name"])
    return hits


def test_critical_values_are_results_past_a_critical_limit_not_every_abnormal_one() -> None:
    # K 5.9 is high but below the usual critical limit 6.2; Hb 7.1 is low but above 7.0: abnormal, not critical
    assert _critical(LABS) == set()
    got = ask("any critical values?")
    assert got["answer"] == [False]
    assert "past a critical limit" in got["text"] and "AllergyIntolerance" not in got["text"]
    critical = [*LABS[:1], obs("k-2", "Potassium", 6.6, "2025-06-20T09:00:00", unit="mmol/L", code="2823-3"), *LABS[1:]]
    assert _critical(critical) == {"Potassium"}
    got = ask("any critical labs?", critical)
    assert got["answer"] == [True] and "Observation/k-2" in got["cited"] and "Observation/k-1" not in got["cited"]
    assert "critically high" in got["text"] and "each laboratory sets its own" in got["text"]


def test_a_critical_flag_in_the_record_needs_no_limit() -> None:
    flagged = [obs("trop", "Troponin I", 2.4, "2025-06-20T05:00:00", unit="ng/mL", code="10839-9", interpretation="HH"),
               *LABS]
    assert _critical(flagged) == {"Troponin I"}
    got = ask("which labs were critical?", flagged)
    assert got["answer"] == ["Troponin I"] and "flagged HH in the record" in got["text"]


def test_critical_limits_are_compared_in_their_own_unit() -> None:
    # glucose 25 mmol/L = 450.4 mg/dL: past the usual 450 mg/dL limit once converted by glucose's molar mass
    sugar = [obs("glu", "Glucose", 25.0, "2025-06-20T06:00:00", unit="mmol/L", code="2345-7")]
    assert 25.0 * 180.16 / 10 > 450
    got = ask("any critical values?", sugar)
    assert got["answer"] == [True] and "mmol/L" in got["text"]


def test_any_abnormal_of_a_named_group_judges_its_latest_values() -> None:
    got = ask("any abnormal lytes?")  # sodium and potassium of the latest draw; K 5.9 above its range
    assert got["answer"] == [True] and "Observation/k-1" in got["cited"]
