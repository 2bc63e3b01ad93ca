"""Results named by a group, answered by a coded value, or asked about one column of an allergy.

- A group word beside a test restricts it to that group (lexicon/item_groups.json): "UA protein" is never the serum
  protein, "urinalysis" alone is every urine result, "soy IgE" is the soybean IgE, "IgE panel" every IgE result.
- A property word picks one of two results of one analyte ("UA glucose (presence, +/-)": the coded one).
- A result written as text or a code answers a value question ("latest HIV status": "not HIV positive").
- "current smoker?" and "ever a smoker?" are judged by the charted value (lexicon/coded_states.json), not by the
  presence of a smoking-status observation.
- "ever reported pain above 5/10?" is a threshold on the charted score, not a note search.
- An allergy's criticality, category, recorded date and reaction are columns of the named allergy; no reaction
  recorded is no-data; "drug allergies" are those of category medication.
- "hep A" is not "Hep B"; "PCV13" is the conjugate vaccine only; "mould" and "mold" are one word.
"""

from __future__ import annotations

from typing import Any

from fhirqa.agent.resolver import ConceptResolver

from .test_offline_ward_questions import ask
from .test_tools_helpers import obs, t

URINE = ["Glucose [Presence] in Urine by Test strip", "Glucose [Mass/volume] in Urine by Test strip",
         "Protein [Presence] in Urine by Test strip", "Hemoglobin [Presence] in Urine by Test strip",
         "Leukocyte esterase [Presence] in Urine by Test strip"]
SERUM = ["Glucose", "Protein [Mass/volume] in Serum or Plasma", "Hemoglobin [Mass/volume] in Blood"]


def resolve(phrase: str, names: list[str]) -> list[str]:
    return ConceptResolver()("observation", phrase, names).matched


def test_a_specimen_word_keeps_the_test_in_that_specimen():
    assert resolve("UA protein", SERUM) == []  # never had a urinalysis: not the serum protein
    assert resolve("UA protein", SERUM + URINE) == ["Protein [Presence] in Urine by Test strip"]
    assert resolve("UA blood", SERUM + URINE) == ["Hemoglobin [Presence] in Urine by Test strip"]
    assert resolve("urine LE", SERUM + URINE) == ["Leukocyte esterase [Presence] in Urine by Test strip"]
    assert resolve("glucose", SERUM + URINE) == ["Glucose"]


def test_the_specimen_alone_means_every_result_of_it():
    assert sorted(resolve("urinalysis", SERUM + URINE)) == sorted(URINE)


def test_a_property_word_picks_the_coded_result():
    assert resolve("UA glucose presence", SERUM + URINE) == ["Glucose [Presence] in Urine by Test strip"]


def test_a_test_kind_word_and_its_aliases():
    ige = ["Soybean IgE Ab in Serum", "Wheat IgE Ab in Serum", "Peanut IgE Ab in Serum"]
    assert resolve("soy ige", ige + SERUM) == ["Soybean IgE Ab in Serum"]
    assert sorted(resolve("allergen ige panel", ige + SERUM)) == sorted(ige)
    assert resolve("milk ige", ige) == []


def test_letters_after_a_name_and_british_spellings():
    resolver = ConceptResolver()
    assert resolver("immunization", "hep a vaccine", ["Hep B, adult"]).matched == []
    assert resolver("immunization", "hep a vaccine", ["Hep A, adult", "Hep B, adult"]).matched == ["Hep A, adult"]
    assert resolver("immunization", "pcv13", ["Pneumococcal conjugate PCV 13",
                                              "pneumococcal polysaccharide vaccine, 23 valent"]).matched == [
        "Pneumococcal conjugate PCV 13"]
    assert resolver("allergy", "mold", ["Allergy to mould", "Allergy to nut"]).matched == ["Allergy to mould"]


def coded(oid: str, name: str, value: str, when: str, code: str) -> dict[str, Any]:
    return obs(oid, name, None, when, unit="", code=code, category="social-history", value_string=value)


SMOKING = "Tobacco smoking status NHIS"


def test_a_text_result_answers_a_value_question():
    views = {"observation": [coded("h1", "HIV status", "not HIV positive", "2020-01-01T10:00:00", "55277-8")]}
    assert ask("What is his latest HIV status?", views)["answer"] == ["not HIV positive"]


def test_smoking_questions_are_judged_by_the_charted_value():
    never = {"observation": [coded("s1", SMOKING, "Never smoker", "2019-01-01T10:00:00", "72166-2"),
                             coded("s2", SMOKING, "Never smoker", "2020-01-01T10:00:00", "72166-2")]}
    quit = {"observation": [coded("s1", SMOKING, "Current every day smoker", "2015-01-01T10:00:00", "72166-2"),
                            coded("s2", SMOKING, "Former smoker", "2020-01-01T10:00:00", "72166-2")]}
    assert ask("current smoker?", never)["answer"] == [False]
    assert ask("any smoking history (former or current) on record?", never)["answer"] == [False]
    assert ask("current smoker?", quit)["answer"] == [False]
    assert ask("Has she ever been recorded as a current or former smoker?", quit)["answer"] == [True]
    assert ask("What is the patient's current tobacco smoking status?", quit)["answer"] == ["Former smoker"]


def test_a_number_out_of_ten_reported_is_a_threshold_on_the_score():
    pain = "Pain severity - 0-10 verbal numeric rating [Score] - Reported"
    views = {"observation": [obs("p1", pain, 3.0, "2020-01-01T10:00:00", unit="{score}", code="72514-3"),
                             obs("p2", pain, 4.0, "2021-01-01T10:00:00", unit="{score}", code="72514-3")]}
    got = ask("Has she ever reported pain above 5/10?", views)
    assert got["status"] == "answered" and got["answer"] == [False]


def allergy(aid: str, name: str, category: str = "food", criticality: str = "low",
            reaction: str | None = None) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "clinical_status": "active",
            "category": category, "criticality": criticality, "reaction": reaction,
            "recorded_time": t("2016-01-15T11:00:00")}


ALLERGIES = {"allergy": [allergy("a1", "Allergy to wheat"), allergy("a2", "Shellfish allergy", criticality="high")]}


def test_one_column_of_a_named_allergy():
    assert ask("Criticality of her allergy to wheat?", ALLERGIES)["answer"] == ["low"]
    assert ask("How critical is the shellfish allergy recorded as?", ALLERGIES)["answer"] == ["high"]
    assert ask("What category is his wheat allergy recorded under?", ALLERGIES)["answer"] == ["food"]
    assert str(ask("When was the wheat allergy recorded?", ALLERGIES)["answer"][0]).startswith("2016-01-15")


def test_no_reaction_recorded_is_no_data_never_a_lab_value():
    views = {**ALLERGIES, "observation": [obs("i1", "Wheat IgE Ab in Serum", 56.7, "2017-01-01T10:00:00", unit="kU/L")]}
    assert ask("What reaction does she have to wheat?", views)["status"] == "no-data"


def test_drug_allergies_are_those_of_category_medication():
    assert ask("Any drug allergies?", ALLERGIES)["answer"] == [False]
    with_drug = {"allergy": [*ALLERGIES["allergy"], allergy("a3", "Penicillin V", category="medication")]}
    assert ask("Any drug allergies?", with_drug)["answer"] == [True]
