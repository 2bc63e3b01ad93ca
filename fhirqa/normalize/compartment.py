"""Which patient a resource belongs to (its Patient compartment), as a bare patient id."""

from __future__ import annotations

from typing import Any

# Checked in order; the first reference to a Patient wins. Covers the clinical types fhirqa maps
# and the common administrative ones (Claim, ExplanationOfBenefit, Coverage).
_PATIENT_KEYS = ("subject", "patient", "beneficiary")


def patient_of(resource: dict[str, Any]) -> str | None:
    """The id of the patient ``resource`` belongs to, or None for shared resources (Medication, Practitioner)."""
    if resource.get("resourceType") == "Patient":
        rid = resource.get("id")
        return rid if isinstance(rid, str) else None
    for key in _PATIENT_KEYS:
        value = resource.get(key)
        if isinstance(value, dict):
            ref = value.get("reference")
            if isinstance(ref, str) and ref.startswith("Patient/"):
                return ref[len("Patient/") :]
    return None
