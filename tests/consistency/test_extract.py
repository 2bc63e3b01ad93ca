"""Offline extraction: Type 1 values, Type 2 mentions, and the statements that are not checked."""

from __future__ import annotations

import pytest

from fhirqa.consistency.extract import extract
from fhirqa.consistency.vocab import base_gazetteer


def _ents(text: str):
    return extract(text, base_gazetteer())


def _one(text: str):
    found = [e for e in _ents(text) if not e.skip]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("text", "category", "value", "unit"), [
    ("WBC 10.2", "lab", 10.2, ""), ("temp 99.9", "vital", 99.9, ""), ("K 5.4", "lab", 5.4, ""),
    ("K+ of 5.4 mEq/L", "lab", 5.4, "mEq/L"), ("potassium came back at 5.4", "lab", 5.4, ""),
    ("Wt. - 87.4 lbs", "vital", 87.4, "lbs"), ("Plt: 374 x10^3/uL", "lab", 374, "x10^3/uL"),
    ("A1c 6.2%", "lab", 6.2, "%"), ("pain 3/10", "vital", 3, "/10"), ("WBC=10.0 /uL", "lab", 10.0, "/uL"),
    ("ALT (SGPT) = 22 U/L", "lab", 22, "U/L"), ("glycated Hb 6.0", "lab", 6.0, ""),
])
def test_type1_values(text, category, value, unit):
    ent = _one(text)
    assert (ent.cls, ent.category, ent.value, ent.unit) == ("T1", category, value, unit)
    assert text[ent.value_span[0]:ent.value_span[1]] == ent.value_text


def test_blood_pressure_is_two_values():
    sbp, dbp = _ents("BP 120/80 mmHg")
    assert (sbp.component, sbp.value, dbp.component, dbp.value) == ("systolic", 120, "diastolic", 80)


def test_height_in_feet_and_inches_and_comparators():
    assert _one("Ht 5'8\"").value == 68 and _one("Ht 5'8\"").unit == "in"
    egfr = _one("eGFR >60")
    assert (egfr.value, egfr.comparator) == (60, ">")


def test_slash_panel_by_position():
    ents = _ents("BMP: 137/4.7/103/29/17/1.0/71")
    assert [e.search for e in ents] == ["sodium", "potassium", "chloride", "carbon dioxide", "urea nitrogen",
                                        "creatinine", "glucose"]
    assert ents[5].value == 1.0 and ents[5].decimals == 1


@pytest.mark.parametrize(("text", "value", "unit", "route", "frequency", "context"), [
    ("Lasix 40 mg IV given", 40, "mg", "IV", "", "listed"),
    ("started on metformin 500 mg PO BID", 500, "mg", "PO", "BID", "given"),
    ("24 hr metformin hydrochloride 500 mg extended release oral tablet", 500, "mg", "oral", "", "listed"),
])
def test_drugs_with_doses(text, value, unit, route, frequency, context):
    ent = _one(text)
    assert (ent.cls, ent.category, ent.value, ent.unit, ent.route, ent.frequency, ent.context) == (
        "T1", "medication", value, unit, route, frequency, context)


def test_a_comma_does_not_give_a_drug_the_next_drugs_dose():
    a, b = _ents("Meds: lisinopril, acetaminophen 325 mg PO")
    assert (a.cls, b.cls, b.value) == ("T2", "T1", 325)


def test_type2_mentions():
    ents = _ents("Hospital course: vancomycin was started. Blood cultures sent. CXR done. Flu shot given.")
    assert [(e.category, e.cls, e.context) for e in ents] == [
        ("medication", "T2", "given"), ("procedure", "T2", "mentioned"), ("procedure", "T2", "mentioned"),
        ("immunization", "T2", "mentioned")]


@pytest.mark.parametrize(("text", "why"), [
    ("Denies h/o DVT or CHF.", "negated"), ("No history of CKD.", "negated"), ("Pt declined Shingrix.", "negated"),
    ("FHx: mother with breast cancer", "family history"), ("Her mother had breast cancer.", "family history"),
    ("Plan: start KCl 20 mEq PO", "plan"), ("Will start lisinopril 10 mg.", "plan"), ("goal A1c <7%", "plan"),
    ("Home BG readings 135 per log.", "home or outside reading"), ("Outside hospital Cr 1.9.", "home or outside reading"),
    ("Hold antihypertensives for SBP < 100.", "parameter"), ("Allergies: PCN (rash)", "allergy"),
    ("r/o PNA", "uncertain"), ("Discussed risks and benefits of apixaban.", "counselling"),
    ("PMH: obesity (BMI 30+)", "part of a diagnosis"),
])
def test_statements_that_are_not_checked(text, why):
    skipped = [e.skip for e in _ents(text) if e.skip]
    assert skipped and set(skipped) == {why}, _ents(text)


def test_past_tense_lines_of_a_plan_are_checked():
    text = "## Plan\nThe following procedures were conducted:\n- colonoscopy\nWill schedule a CT next year."
    ents = _ents(text)
    assert [(e.name, e.skip) for e in ents] == [("colonoscopy", ""), ("CT", "plan")]


def test_cue_words_inside_item_names_do_not_count():
    text = "Patient has a history of not in labor force (finding), acute bronchitis."
    from fhirqa.consistency.vocab import Term, record_terms

    g = base_gazetteer().extended(record_terms({"condition": ["Not in labor force (finding)",
                                                              "Acute bronchitis (disorder)"]}))
    assert [(e.name, e.skip) for e in extract(text, g)] == [("not in labor force", ""), ("acute bronchitis", "")]
    assert Term("condition", "")  # the record's names become terms of the patient's gazetteer
