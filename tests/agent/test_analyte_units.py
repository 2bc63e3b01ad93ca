"""Results asked about in another unit than the record's (session 18).

A limit or an answer written as a molar concentration ("glucose > 7 mmol/L", "Cr in umol/L") is converted for the
analyte the question or the record names, by its molar mass in the lexicon's unit table; a unit that does not
convert is said, never silently dropped: "creatinine above 100 umol/L?" once compared 100 with values in mg/dL.
Every gold below is computed here from the rows and the molar masses.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.units import analyte_of, convert, display_unit

from .test_tools_helpers import obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
GLUCOSE = [obs("g-1", "Glucose [Mass/volume] in Blood", 98.0, "2025-06-10T06:00:00", unit="mg/dL", code="2339-0"),
           obs("g-2", "Glucose [Mass/volume] in Blood", 131.0, "2025-06-19T06:00:00", unit="mg/dL", code="2339-0")]
CREATININE = [obs("cr-1", "Creatinine", 0.9, "2025-06-10T06:00:00", unit="mg/dL", code="2160-0"),
              obs("cr-2", "Creatinine", 1.4, "2025-06-19T06:00:00", unit="mg/dL", code="2160-0")]
POTASSIUM = [obs("k-1", "Potassium", 5.3, "2025-06-19T06:00:00", unit="mmol/L", code="2823-3")]
VIEWS: dict[str, list[dict[str, Any]]] = {"observation": GLUCOSE + CREATININE + POTASSIUM}
GLUCOSE_G_PER_MOL, CREATININE_G_PER_MOL = 180.16, 113.12


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def mmol_per_l(mg_per_dl: float, g_per_mol: float) -> float:
    return mg_per_dl * 10 / g_per_mol


@pytest.mark.parametrize(("limit", "expected"), [(7.0, True), (7.5, False)])
def test_a_glucose_limit_in_mmol_per_litre_is_compared_with_values_in_mg_per_decilitre(limit: float, expected: bool) -> None:
    highest = max(row["value"] for row in GLUCOSE)
    assert (mmol_per_l(highest, GLUCOSE_G_PER_MOL) > limit) is expected  # 131 mg/dL = 7.27 mmol/L
    got = ask(f"any glucose > {limit} mmol/L?")
    assert got["answer"] == [expected]
    assert "mmol/L = " in got["text"]


def test_a_creatinine_limit_in_micromoles_is_never_compared_as_milligrams() -> None:
    # 100 µmol/L = 1.13 mg/dL: the 1.4 is above it (once answered "No: none > 100" of values in mg/dL)
    assert ask("any creatinine above 100 umol/L?")["answer"] == [True]
    assert ask("creatinine ever over 150 µmol/l?")["answer"] == [False]  # 1.4 mg/dL = 123.8 µmol/L


def test_an_answer_asked_in_a_molar_unit_is_converted_for_its_analyte() -> None:
    got = ask("last creatinine in umol/L")
    expected = CREATININE[-1]["value"] * 10 / CREATININE_G_PER_MOL * 1000
    assert got["answer"][0] == pytest.approx(expected, rel=1e-6)
    assert got.get("unit") == "µmol/L"
    highest = ask("highest glucose in mmol/L?")
    assert highest["answer"][0] == pytest.approx(mmol_per_l(131.0, GLUCOSE_G_PER_MOL), rel=1e-6)


def test_milliequivalents_of_a_monovalent_ion_are_millimoles() -> None:
    assert ask("any K > 5.0 mEq/L?")["answer"] == [True]
    assert ask("any K > 5.5 meq/l?")["answer"] == [False]


def test_a_unit_that_cannot_describe_the_analyte_is_said_not_compared() -> None:
    got = ask("any potassium above 20 mg/dL?")  # potassium has a molar mass: 20 mg/dL = 5.12 mmol/L
    assert got["answer"] == [True]
    got = ask("any glucose above 7 meq/l?")  # glucose carries no charge: milliequivalents mean nothing
    assert got["status"] == "no-data" and "does not convert" in got["text"]


def test_conversions_follow_the_molar_masses_of_the_table() -> None:
    assert convert(126.0, "mg/dL", "mmol/L", "Glucose") == pytest.approx(126.0 * 10 / GLUCOSE_G_PER_MOL)
    assert convert(7.0, "mmol/L", "mg/dL", "glucose") == pytest.approx(7.0 * GLUCOSE_G_PER_MOL / 10)
    # BUN is urea's nitrogen: 20 mg/dL of BUN is 7.14 mmol/L of urea, whatever the record calls it
    assert convert(20.0, "mg/dL", "mmol/L", "BUN") == pytest.approx(20.0 * 10 / 28.014)
    assert convert(2.5, "mmol/L", "mEq/L", "Calcium") == pytest.approx(5.0)  # divalent
    assert convert(1.0, "mg/dL", "mmol/L") is None  # no analyte, no molar mass
    assert convert(1.0, "mg/dL", "mmol/L", "Hemoglobin A1c") is not None  # names hemoglobin; % never reaches here
    assert analyte_of("Urea nitrogen [Mass/volume] in Serum") == analyte_of("BUN")
    assert display_unit("umol/l") == "µmol/L" and display_unit("mg/dL") == "mg/dL"


def test_a_concentration_is_read_whole_and_a_dose_a_day_stays_a_dose() -> None:
    from fhirqa.agent.backends.offline.parser import parse

    def unit(question: str) -> str | None:
        comparison = parse(question, NOW).comparison
        assert comparison is not None
        return comparison.unit

    assert unit("any creatinine above 100 umol/L?") == "umol/l"
    assert unit("any K > 5.0 mEq/L?") == "meq/l"
    assert unit("did vanc exceed 2 g/day at any point?") == "g"  # the daily-total plan reads "/day"
