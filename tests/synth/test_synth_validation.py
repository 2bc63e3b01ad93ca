"""Every generated resource validates against the fhir.resources R4B models."""

from __future__ import annotations

from typing import Any

from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.bundle import Bundle

from .conftest import resources


def test_every_resource_validates(few: list[dict[str, Any]]) -> None:
    errors = []
    for bundle in few:
        for res in resources(bundle):
            try:
                get_fhir_model_class(res["resourceType"]).model_validate(res)
            except Exception as exc:  # collect all failures for one readable report
                errors.append(f"{res['resourceType']}/{res['id']}: {str(exc)[:300]}")
    assert not errors, "\n".join(errors[:20])


def test_bundle_validates(few: list[dict[str, Any]]) -> None:
    bundle = Bundle.model_validate(few[0])
    assert bundle.type == "transaction"


def test_expected_resource_types_present(few: list[dict[str, Any]], cohort: list[dict[str, Any]]) -> None:
    types = {r["resourceType"] for b in few + cohort for r in resources(b)}
    assert {
        "Patient",
        "Encounter",
        "Observation",
        "DiagnosticReport",
        "Condition",
        "Medication",
        "MedicationRequest",
        "MedicationDispense",
        "MedicationAdministration",
        "MedicationStatement",
        "Procedure",
        "Immunization",
        "AllergyIntolerance",
        "DocumentReference",
        "Practitioner",
        "Organization",
    } <= types


def test_status_codes_are_valid(cohort: list[dict[str, Any]]) -> None:
    """The models do not check required value sets, so check the common ones here."""
    allowed = {
        "Observation": {"final"},
        "MedicationRequest": {"active", "completed", "stopped"},
        "MedicationAdministration": {"completed", "not-done"},
        "MedicationDispense": {"completed"},
        "Encounter": {"finished"},
        "DocumentReference": {"current"},
    }
    for b in cohort:
        for r in resources(b):
            if r["resourceType"] in allowed:
                assert r["status"] in allowed[r["resourceType"]], r
