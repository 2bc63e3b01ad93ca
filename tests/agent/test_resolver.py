"""The concept resolver: the record's own item names for what a clinician typed."""

from __future__ import annotations

from fhirqa.agent.resolver import ConceptResolver, core_name

LABS = [
    "Hemoglobin A1c/Hemoglobin.total in Blood", "Potassium", "Cholesterol [Mass/volume] in Serum or Plasma",
    "Low Density Lipoprotein Cholesterol", "Cholesterol in HDL [Mass/volume] in Serum or Plasma", "Body Weight",
    "Systolic Blood Pressure", "Diastolic Blood Pressure", "Glucose", "Hemoglobin [Mass/volume] in Blood",
    "Leukocytes [#/volume] in Blood by Automated count", "Body Mass Index",
]
CODES = {"Hemoglobin A1c/Hemoglobin.total in Blood": {"4548-4"}, "Leukocytes [#/volume] in Blood by Automated count": {"6690-2"}}


def resolve(phrase, names=LABS, view="observation", **kwargs):
    return ConceptResolver(codes_of=lambda v: CODES, **kwargs)(view, phrase, names)


def test_abbreviations_resolve_through_the_lexicon_and_codes():
    assert resolve("A1c").matched == ["Hemoglobin A1c/Hemoglobin.total in Blood"]
    assert resolve("wbc").matched == ["Leukocytes [#/volume] in Blood by Automated count"]
    assert resolve("BMI").matched == ["Body Mass Index"]


def test_plain_words_match_the_tightest_name():
    assert resolve("cholesterol").matched == ["Cholesterol [Mass/volume] in Serum or Plasma"]
    assert resolve("weight").matched == ["Body Weight"]


def test_a_misspelling_is_forgiven():
    assert resolve("potasium").matched == ["Potassium"]


def test_a_known_term_the_record_lacks_matches_nothing_rather_than_something_close():
    result = resolve("glycated hemoglobin", names=["Hemoglobin [Mass/volume] in Blood", "Glucose"])
    assert result.matched == [] and result.candidates


def test_nothing_matching_returns_nearest_candidates():
    result = resolve("troponin")
    assert result.matched == [] and len(result.candidates) == 5


def test_a_panel_means_its_components():
    children = {"Blood Pressure": ["Systolic Blood Pressure", "Diastolic Blood Pressure"]}
    result = resolve("blood pressure", names=[*LABS, "Blood Pressure"], children_of=lambda v: children)
    assert sorted(result.matched) == ["Diastolic Blood Pressure", "Systolic Blood Pressure"]


def test_a_drug_class_means_every_member_in_the_record():
    meds = ["Simvastatin 10 MG Oral Tablet", "Atorvastatin 80 MG Oral Tablet", "Metformin 500 MG Oral Tablet"]
    assert sorted(resolve("statin", names=meds, view="medication").matched) == meds[:2][::-1]


def test_brand_names_find_generics():
    meds = ["Furosemide 40 MG Oral Tablet", "Lisinopril 10 MG Oral Tablet"]
    assert resolve("Lasix", names=meds, view="medication").matched == ["Furosemide 40 MG Oral Tablet"]


def test_core_names_drop_specimen_and_method_qualifiers():
    assert core_name("Glucose [Mass/volume] in Serum or Plasma") == "glucose"
    assert core_name("Hemoglobin [Presence] in Urine by Test strip") != core_name("Hemoglobin [Mass/volume] in Blood")
