"""Code lists and clinical parameters, loaded from the JSON files in ``data/``.

The generator keeps every terminology code (LOINC, SNOMED CT, RxNorm, ICD-10-CM,
CVX) in data files so that clinicians can review them without reading code.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).with_name("data")

LOINC = "http://loinc.org"
SNOMED = "http://snomed.info/sct"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"
CVX = "http://hl7.org/fhir/sid/cvx"
UCUM = "http://unitsofmeasure.org"
V3_ACT = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
V3_INTERP = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"
V3_FORM = "http://terminology.hl7.org/CodeSystem/v3-orderableDrugForm"
OBS_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"
V2_0074 = "http://terminology.hl7.org/CodeSystem/v2-0074"
MRN_SYSTEM = "urn:oid:2.16.840.1.113883.3.4711.1"
NPI = "http://hl7.org/fhir/sid/us-npi"

SYSTEMS = {"rxnorm": RXNORM, "snomed": SNOMED, "loinc": LOINC}


@cache
def load(name: str) -> dict[str, Any]:
    """Return the parsed JSON data file ``data/<name>.json`` (cached)."""
    with (DATA_DIR / f"{name}.json").open(encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def labs() -> dict[str, Any]:
    """Lab definitions keyed by short key (``potassium``, ``a1c`` ...)."""
    return load("labs")["labs"]


def vitals() -> dict[str, Any]:
    """Vital-sign definitions keyed by signal (``sbp``, ``hr`` ...)."""
    return load("labs")["vitals"]


def panels() -> dict[str, Any]:
    """Lab panel definitions (members refer to :func:`labs` keys)."""
    return load("labs")["panels"]


def drugs() -> dict[str, Any]:
    """Drug product definitions keyed by drug key."""
    return load("drugs")["drugs"]


def routes() -> dict[str, Any]:
    """Route of administration definitions keyed by abbreviation."""
    return load("drugs")["routes"]


def forms() -> dict[str, Any]:
    """Dose form definitions."""
    return load("drugs")["forms"]


def chronic() -> dict[str, Any]:
    """Chronic condition definitions."""
    return load("conditions")["chronic"]


def acute() -> dict[str, Any]:
    """Acute condition definitions (sick/ED/inpatient reasons and complications)."""
    return load("conditions")["acute"]


def condition(key: str) -> dict[str, Any]:
    """Look up a condition definition in the chronic or acute list."""
    return chronic().get(key) or acute()[key]


def settings() -> dict[str, Any]:
    """Which acute conditions can cause which encounter setting, and their relative weights."""
    return load("conditions")["settings"]


def clinical() -> dict[str, Any]:
    """Encounter types, procedures, vaccines, allergies, notes, surveys, imaging."""
    return load("clinical")


def people() -> dict[str, Any]:
    """Name and address pools."""
    return load("people")


def coding(system: str, code: str, display: str | None = None) -> dict[str, str]:
    """Build a FHIR Coding."""
    out = {"system": system, "code": code}
    if display:
        out["display"] = display
    return out


def concept(system: str, code: str, display: str, text: str | None = None) -> dict[str, Any]:
    """Build a single-coding CodeableConcept; ``text`` only when it adds to the display."""
    out: dict[str, Any] = {"coding": [coding(system, code, display)]}
    if text and text != display:
        out["text"] = text
    return out


def condition_concept(key: str, with_icd10: bool = False) -> dict[str, Any]:
    """CodeableConcept for a condition: SNOMED CT, optionally with ICD-10-CM."""
    d = condition(key)
    codings = [coding(SNOMED, d["snomed"], d["display"])]
    if with_icd10 and d.get("icd10"):
        codings.append(coding(ICD10, d["icd10"], d["icd10_display"]))
    return {"coding": codings, "text": d["text"][0].upper() + d["text"][1:]}
