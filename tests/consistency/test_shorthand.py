"""Clinician shorthand: charge signs, truncated words, qualifiers, British spellings, ambiguous acronyms.

The table behind these is data (``fhirqa/consistency/data/shorthand.json``), not code: a new abbreviation is a
new line there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fhirqa.consistency.extract import extract
from fhirqa.consistency.vocab import AMBIGUOUS, IONS, SHORTHAND, base_gazetteer

DATA = Path(__file__).resolve().parents[2] / "fhirqa" / "consistency" / "data" / "shorthand.json"


def _hits(text: str) -> list[tuple[str, str, str]]:
    return [(h.written, h.category, h.search) for h in base_gazetteer().scan(text)]


def _values(text: str) -> list[tuple[str, str, float]]:
    return [(e.name, e.category, e.value) for e in extract(text, base_gazetteer()) if not e.skip and e.value is not None]


def test_the_shorthand_table_is_data_not_code():
    data = json.loads(DATA.read_text(encoding="utf-8"))
    assert {"aliases", "case_sensitive", "ions", "word_forms", "qualifiers", "spelling", "ambiguous"} <= set(data)
    assert SHORTHAND["wgt"] == tuple(data["aliases"]["wgt"])
    assert IONS["Na"] == "sodium" and "RA" in AMBIGUOUS


@pytest.mark.parametrize(("written", "analyte"), [
    ("Na+", "sodium"), ("K+", "potassium"), ("Ca++", "calcium"), ("Ca2+", "calcium"), ("Mg2+", "magnesium"),
    ("Cl-", "chloride"), ("HCO3-", "carbon dioxide"), ("NA+", "sodium"), ("Ca(2+)", "calcium"),
])
def test_charge_sign_symbols_name_their_analyte(written, analyte):
    assert _hits(f"{written} 4.1") == [(written, "lab", analyte)]
    assert _values(f"Labs: {written} 4.1") == [(written, "lab", 4.1)]


def test_a_hyphen_inside_a_word_is_not_a_charge():
    assert [h[1] for h in _hits("K-Dur 20 mEq")] == ["medication"]
    assert _hits("pre-op, Co-op") == []


def test_a_mixed_case_symbol_in_capitals_counts_only_before_a_value():
    assert _values("NA 136 mmol/L") == [("NA", "lab", 136)]
    assert _hits("NA") == []  # "not applicable"


@pytest.mark.parametrize(("written", "category", "search"), [
    ("wgt", "vital", "body weight"), ("hgt", "vital", "body height"), ("pot", "lab", "potassium"),
    ("creat", "lab", "creatinine"), ("Cre", "lab", "creatinine"), ("thrombocytes", "lab", "platelets"),
    ("IIV4", "immunization", "influenza"), ("RZV", "immunization", "zoster"),
])
def test_truncated_and_vowel_dropped_abbreviations_are_known(written, category, search):
    assert _hits(f"{written} 12") == [(written, category, search)]


@pytest.mark.parametrize(("written", "search"), [
    ("LDL calc", "ldl"), ("calculated LDL", "ldl"), ("GFR est", "gfr"), ("creatinine (serum)", "creatinine"),
    ("glucose, serum", "glucose"), ("cholesterol, total", "total cholesterol"), ("WBC ct", "wbc"),
])
def test_qualifiers_and_inverted_names_keep_their_item(written, search):
    (hit,) = _hits(f"{written} 90")
    assert hit[0] == written and hit[1] == "lab" and hit[2] == search


def test_british_spellings_read_as_american():
    assert _hits("haemoglobin 14")[0][2] == "hemoglobin"
    assert _hits("hyperlipidaemia") == [("hyperlipidaemia", "condition", "hyperlipidemia")]


@pytest.mark.parametrize("text", ["SpO2 94% on RA", "sats 97% RA", "saturating well on RA at rest"])
def test_ra_after_an_oxygen_reading_is_room_air_not_arthritis(text):
    assert all(h[0] != "RA" for h in _hits(text))


def test_ra_in_a_diagnosis_list_is_still_rheumatoid_arthritis():
    assert ("RA", "condition", "") in _hits("PMH: RA, HTN")


@pytest.mark.parametrize("text", ["PE: unremarkable", "MS intact", "altered MS overnight", "CA 125 elevated"])
def test_ambiguous_acronyms_read_by_their_surroundings(text):
    assert not [h for h in _hits(text) if h[0] in ("PE", "MS", "CA")]


def test_ca_before_a_value_is_calcium():
    assert _hits("CA 9.1") == [("CA", "lab", "calcium")]
    assert ("PE", "condition", "") in _hits("Hospital course: PE on CTA, started heparin")


@pytest.mark.parametrize("text", ["GLU resulted at 82", "HGB returned at 15.2 g/dL", "GFR est noted at 80",
                                  "her HGB this time was 11.8", "K reported as 4.1"])
def test_reporting_verbs_between_name_and_value_are_filler(text):
    assert len(_values(text)) == 1


def test_feet_and_inches_after_any_spelling_of_height():
    (ent,) = [e for e in extract("Vitals: hgt 5'10\"", base_gazetteer()) if e.value is not None]
    assert (ent.value, ent.unit) == (70, "in")


@pytest.mark.parametrize("text", ["Recommend Shingrix next season.", "Flu vaccine recommended.",
                                  "Advised to get PCV20 next year."])
def test_recommendations_are_not_checked(text):
    assert all(e.skip for e in extract(text, base_gazetteer()))


def test_a_spelled_out_panel_name_reads_a_slash_panel_by_position():
    found = _values("Basic metabolic panel: 138/4.9/101/27/20/0.5/124")
    assert [v for _, _, v in found] == [138, 4.9, 101, 27, 20, 0.5, 124]


def test_a_value_on_recheck_is_a_result_not_a_plan():
    assert _values("LDL calc on recheck 138") == [("LDL calc", "lab", 138)]
    assert all(e.skip for e in extract("Will recheck LDL 138", base_gazetteer()))
