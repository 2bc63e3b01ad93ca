"""A drug's regimen is what its latest order states: dose, route and how often.

"vanc dosing?", "heparin schedule", "sig for metformin", "how often is he getting heparin?", "q12 or q8?" and "current
vanc order" read the latest order as of the question's time (an active one first), never the drug level and never
the last single dose; a drug with administrations and no order says no order states a regimen and shows the last
doses with the hours between them. The gold of each test is computed from the rows below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.regimen_plan import frequency_words

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2025, 7, 19, 18, 0, tzinfo=UTC)
VANCO = "Vancomycin 1,000 mg IVPB"
HEPARIN = "Heparin 5,000 units/mL injection"
METFORMIN = "Metformin 500 MG Oral Tablet"
ZOSYN = "Zosyn 4.5 g IV"

ORDERS = [
    med("van-o1", VANCO, "request", "2025-07-15T23:00:00", dose=1000, route="IV", frequency=1, period=12, period_unit="h",
        status="stopped", dosage_text="Vancomycin 1,000 mg IV every 12 hours (pharmacy to dose by trough)"),
    med("van-o2", VANCO, "request", "2025-07-17T21:00:00", dose=1250, route="IV", frequency=1, period=8, period_unit="h",
        status="active", dosage_text="vancomycin 1,250 mg IV q8h"),
    # written after the question's time: not yet known
    med("van-o3", VANCO, "request", "2025-07-20T09:00:00", dose=1500, route="IV", frequency=1, period=12, period_unit="h",
        status="active"),
    med("hep-o", HEPARIN, "request", "2025-07-15T23:00:00", dose=5000, unit="units", route="SC", frequency=1, period=8,
        period_unit="h", status="active"),
    med("met-o", METFORMIN, "request", "2024-02-01T09:00:00", dose=500, route="oral", frequency=2, period=1,
        period_unit="d", status="active"),
]
DOSES = [med(f"zos-{i}", ZOSYN, "administration", when, dose=4.5, unit="g")
         for i, when in enumerate(["2025-07-18T06:00:00", "2025-07-18T14:00:00", "2025-07-18T22:00:00",
                                   "2025-07-19T06:00:00", "2025-07-19T14:00:00"])]
TROUGH = obs("vt", "Vancomycin [Mass/volume] in Serum or Plasma --trough", 9.7, "2025-07-17T05:00:00", unit="ug/mL")
VIEWS: dict[str, list[dict[str, Any]]] = {"medication": [*ORDERS, *DOSES], "observation": [TROUGH], "encounter": []}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_the_regimen_is_the_latest_active_order_known_at_the_time() -> None:
    current = ORDERS[1]  # the stopped q12 order came before; the 07-20 order did not exist yet
    expected = f"{current['dose']:g} mg IV every {current['period']:g} hours"
    for question in ("what's his vanc dosing", "vanc schedule?", "vanc regimen", "current vanc order",
                     "is he getting vanc q12 or q8", "what is the vanc order"):
        got = ask(question)
        assert got["answer"] == [expected] == ["1250 mg IV every 8 hours"], question
        assert "MedicationRequest/van-o2" in got["cited"], question
    assert "vancomycin 1,250 mg IV q8h" in ask("vanc regimen")["text"]  # the order's own words are quoted


def test_how_often_and_frequency_read_the_order_never_a_count_of_prescriptions() -> None:
    assert ask("how often is he getting heparin")["answer"] == ["5000 units SC every 8 hours"]
    assert ask("heparin frequency")["answer"] == ["5000 units SC every 8 hours"]
    assert ask("how often does she take metformin")["answer"] == ["500 mg oral twice a day"]
    assert ask("sig for metformin")["answer"] == ["500 mg oral twice a day"]


def test_a_drug_level_and_the_last_dose_keep_their_own_readings() -> None:
    assert ask("vanc level")["answer"] == [TROUGH["value"]]
    assert ask("last vanc dose")["answer"] != ["1250 mg IV every 8 hours"]


def test_doses_without_an_order_are_shown_with_the_hours_between_them_not_a_made_up_schedule() -> None:
    got = ask("zosyn schedule?")
    assert got["status"] == "no-data" and "No Zosyn 4.5 g IV order on file" in got["text"]
    last = [r["time"] for r in DOSES][-4:]
    gaps = ", ".join(f"{(b - a).total_seconds() / 3600:g}" for a, b in zip(last, last[1:], strict=False))
    assert f"({gaps} h apart)" in got["text"] and gaps == "8, 8, 8"
    assert "MedicationAdministration/zos-4" in got["cited"]


def test_frequency_words_follow_ucum_periods() -> None:
    def row(times: int, period: float, unit: str) -> dict[str, Any]:
        return {"frequency": times, "period": period, "period_unit": unit}

    assert frequency_words(row(1, 6, "h")) == "every 6 hours"
    assert frequency_words(row(3, 1, "d")) == "three times a day"
    assert frequency_words(row(1, 2, "d")) == "every 2 days"
    assert frequency_words(row(1, 1, "wk")) == "once a week"
    assert frequency_words({"timing_code": "BID"}) == "BID"
    assert frequency_words({}) is None


def test_how_much_is_she_getting_in_the_present_is_the_regimen() -> None:
    assert ask("how much heparin is she getting?")["answer"] == ["5000 units SC every 8 hours"]
    assert ask("how much metformin is she on")["answer"] == ["500 mg oral twice a day"]
