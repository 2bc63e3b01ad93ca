"""A small store for the consistency tests: one inpatient stay with labs, vitals, drugs, a diagnosis, an x-ray and a note."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import condition, observation, patient, transaction, write_json

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ADMIT, DISCHARGE = "2024-03-01T07:00:00Z", "2024-03-04T12:00:00Z"
NOTE = """DISCHARGE SUMMARY
Admission date: 3/1/2024    Discharge date: 3/4/2024

Discharge diagnoses:
- HTN
- CHF

Hospital course: Admitted for volume overload. K 5.4 on HD #2, Cr 1.1. Lasix 40 mg IV given.
CXR on 3/1/2024.
Discharge meds: simvastatin 20 mg PO daily
"""


def _vital(oid: str, code: str, display: str, value: float, unit: str, when: str) -> dict[str, Any]:
    obs = observation(oid, "p1", code, display, value, unit, when)
    obs["category"][0]["coding"][0]["code"] = "vital-signs"
    return obs


def _bp(when: str) -> dict[str, Any]:
    return {
        "resourceType": "Observation", "id": "bp1", "status": "final",
        "category": [{"coding": [{"code": "vital-signs"}]}],
        "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9", "display": "Blood Pressure"}],
                 "text": "Blood Pressure"},
        "subject": {"reference": "Patient/p1"}, "effectiveDateTime": when,
        "component": [
            {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6", "display": "Systolic Blood Pressure"}]},
             "valueQuantity": {"value": 128.3, "unit": "mm[Hg]"}},
            {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4", "display": "Diastolic Blood Pressure"}]},
             "valueQuantity": {"value": 81.6, "unit": "mm[Hg]"}},
        ],
    }


def _med(mid: str, code: str, text: str, when: str, **dosage: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resourceType": "MedicationRequest", "id": mid, "status": "active", "intent": "order",
        "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                                  "code": code, "display": text}], "text": text},
        "subject": {"reference": "Patient/p1"}, "encounter": {"reference": "Encounter/e1"}, "authoredOn": when,
    }
    if dosage:
        out["dosageInstruction"] = [{"timing": {"repeat": dosage}, "doseAndRate": [{"doseQuantity": {"value": 1}}]}]
    return out


def _furosemide() -> dict[str, Any]:
    med = _med("m1", "1719286", "10 ML Furosemide 10 MG/ML Injection", "2024-03-01T10:00:00Z")
    med["dosageInstruction"] = [{"route": {"text": "IV"},
                                 "doseAndRate": [{"doseQuantity": {"value": 40, "unit": "mg"}}]}]
    return med


def resources() -> list[dict[str, Any]]:
    """The test patient's record."""
    note = base64.b64encode(NOTE.encode()).decode()
    return [
        patient("p1"),
        {"resourceType": "Encounter", "id": "e1", "status": "finished", "class": {"code": "IMP"},
         "type": [{"text": "Inpatient stay"}], "subject": {"reference": "Patient/p1"},
         "period": {"start": ADMIT, "end": DISCHARGE}},
        observation("k1", "p1", "6298-4", "Potassium", 4.21, "mmol/L", "2024-03-01T08:00:00Z"),
        observation("k2", "p1", "6298-4", "Potassium", 5.38, "mmol/L", "2024-03-02T08:00:00Z"),
        observation("cr1", "p1", "38483-4", "Creatinine", 1.12, "mg/dL", "2024-03-01T08:00:00Z"),
        observation("glu1", "p1", "2339-0", "Glucose", 102.4, "mg/dL", "2024-03-01T08:00:00Z"),
        observation("wbc1", "p1", "6690-2", "Leukocytes [#/volume] in Blood by Automated count", 10.23, "10*3/uL",
                    "2024-03-01T08:00:00Z"),
        _vital("wt1", "29463-7", "Body Weight", 80.2, "kg", "2024-03-01T09:00:00Z"),
        _vital("t1", "8331-1", "Oral temperature", 37.72, "Cel", "2024-03-01T09:00:00Z"),
        _bp("2024-03-01T09:00:00Z"),
        _furosemide(),
        _med("m2", "312961", "Simvastatin 20 MG Oral Tablet", "2023-01-10T10:00:00Z", frequency=1, period=1, periodUnit="d"),
        condition("c1", "p1", "Hypertension", onsetDateTime="2020-05-01"),
        {"resourceType": "Procedure", "id": "pr1", "status": "completed",
         "code": {"coding": [{"system": "http://snomed.info/sct", "code": "399208008", "display": "Plain chest X-ray"}],
                  "text": "Plain chest X-ray"},
         "subject": {"reference": "Patient/p1"}, "performedDateTime": "2024-03-01T11:00:00Z"},
        {"resourceType": "Immunization", "id": "im1", "status": "completed",
         "vaccineCode": {"coding": [{"system": "http://hl7.org/fhir/sid/cvx", "code": "140",
                                     "display": "Influenza, seasonal, injectable, preservative free"}]},
         "patient": {"reference": "Patient/p1"}, "occurrenceDateTime": "2024-03-02T10:00:00Z"},
        {"resourceType": "DocumentReference", "id": "d1", "status": "current",
         "type": {"coding": [{"system": "http://loinc.org", "code": "18842-5", "display": "Discharge summary"}]},
         "subject": {"reference": "Patient/p1"}, "date": "2024-03-04T12:00:00Z",
         "context": {"encounter": [{"reference": "Encounter/e1"}]},
         "content": [{"attachment": {"contentType": "text/plain", "data": note}}]},
    ]


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The test patient ingested once."""
    root = tmp_path_factory.mktemp("consistency-store")
    ingest([FileSource([write_json(root / "in" / "bundle.json", transaction(*resources()))])], root / "db")
    return Store(root / "db")


@pytest.fixture(scope="session")
def checker(store: Store):
    """A PatientChecker over the test patient (record read once)."""
    from fhirqa.consistency import PatientChecker

    c = PatientChecker(store, "p1")
    yield c
    c.close()


@pytest.fixture
def shared_synthea() -> Path:
    """../shared/data/synthea-r4, or a skip saying why."""
    path = SHARED / "synthea-r4"
    if not path.is_dir():
        pytest.skip(f"{path} is absent (the shared data set is in CI and developer checkouts, not in a fresh clone)")
    return path
