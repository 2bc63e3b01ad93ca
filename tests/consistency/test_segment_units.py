"""Segmentation into sections, and unit spellings and conversions."""

from __future__ import annotations

import pytest

from fhirqa.consistency.segment import section_at, section_kind, segment
from fhirqa.consistency.units import canon, compatible, convert

NOTE = """PROGRESS NOTE
S: feels well.
PMH: HTN, HLD
Meds: lisinopril 10 mg daily
FHx: mother with breast cancer
Labs (3/1/2024):
BMP: Na 139, K 4.2
A/P:
# Prediabetes: A1c 6.1, stable.
Plan: recheck A1c in 6 months.
"""


def test_sections_cover_headings_with_inline_content():
    kinds = [s.kind for s in segment(NOTE)]
    assert kinds == ["other", "hpi", "pmh", "meds", "family_history", "labs", "labs", "assessment_plan", "plan"]


def test_a_problem_heading_inside_the_assessment_stays_in_it():
    offset = NOTE.index("A1c 6.1")
    assert section_at(segment(NOTE), offset).kind == "assessment_plan"


def test_markdown_headings_of_synthea_notes():
    text = "# Chief Complaint\n- Cough\n\n# History of Present Illness\nPt has a history of asthma.\n\n# Medications\nalbuterol\n"
    assert [s.kind for s in segment(text)] == ["chief_complaint", "hpi", "meds"]


@pytest.mark.parametrize(("title", "kind"), [
    ("Discharge Diagnoses", "discharge_diagnoses"), ("Home meds", "meds"), ("Discharge medications", "discharge_meds"),
    ("Family history", "family_history"), ("Hospital course", "hospital_course"), ("Chem on admission", "labs"),
    ("Vitals on admission", "vitals"), ("Follow-up", "plan"), ("Date", None), ("Prediabetes", None),
])
def test_section_kind_of_headings(title, kind):
    assert section_kind(title) == kind


def test_unit_spellings_and_conversions():
    assert canon("mEq/L") == canon("mmol/L")
    assert canon("10*3/uL") == canon("K/uL") == canon("x10^3/uL")
    assert convert(198.7, "lb", "kg") == pytest.approx(90.13, abs=0.01)
    assert convert(99.9, "F", "Cel") == pytest.approx(37.72, abs=0.01)
    assert convert(5.5, "mmol/L", "mg/dL", "Glucose") == pytest.approx(99.1, abs=0.1)
    assert convert(1.0, "mg/dL", "umol/L", "Creatinine") == pytest.approx(88.4, abs=0.1)
    assert convert(75, "mcg", "mg") == pytest.approx(0.075)
    assert convert(4.2, "ng/mL", "mmol/L", "Troponin I") is None  # no molar mass known: not convertible
    assert convert(4.2, "mg/dL", "mmol/L", "Potassium") == pytest.approx(1.074, abs=0.001)  # 39.098 g/mol
    assert not compatible("kg", "cm")
