"""What a principal may do: the one place that turns scopes and patient context into yes or no.

Rules (docs/server.md, "Security model"):

- A token with a patient in context reaches that patient only, whatever its scopes say, on every
  route: reads, questions, jobs, streams. ``patient/`` scopes need that context to mean anything.
- Reading a patient's view needs read+search (v1 ``read``, v2 ``rs``) on every resource type the view
  is built from; asking a question needs it on ``*``, since an answer may rest on any record.
- Anything across patients (patient lookup, population ``$viewdefinition-run``, ingestion, other
  clients' jobs) needs a ``system/`` scope and a token without a patient.
"""

from __future__ import annotations

from collections.abc import Iterable

from fhirqa.server.auth import Principal
from fhirqa.server.errors import ApiError
from fhirqa.server.scopes import Contexts

READ = "rs"  # v1 "read" expands to these
WRITE = "cu"  # ingest creates and updates; v1 "write" expands to "cud"

#: The resource types each canonical view is built from (joins included: a condition name in the
#: encounter view is Condition data). A view not listed here needs `*`.
VIEW_TYPES: dict[str, tuple[str, ...]] = {
    "observation": ("Observation",),
    "condition": ("Condition",),
    "encounter": ("Encounter", "Condition"),
    "medication": ("MedicationRequest", "MedicationDispense", "MedicationAdministration",
                   "MedicationStatement", "Medication", "Condition"),
    "procedure": ("Procedure", "Condition"),
    "immunization": ("Immunization",),
    "allergy": ("AllergyIntolerance",),
    "note": ("DocumentReference", "DiagnosticReport"),
    "patient": ("Patient",),
    "care_plan": ("CarePlan", "Condition"),
    "goal": ("Goal", "Condition"),
    "imaging": ("ImagingStudy", "Condition"),
    "device": ("Device",),
}


def forbidden(reason: str) -> ApiError:
    """A 403 with the RFC 6750 ``insufficient_scope`` challenge."""
    return ApiError(403, reason, code="forbidden",
                    headers={"WWW-Authenticate": 'Bearer realm="fhirqa", error="insufficient_scope"'})


def patient_contexts(principal: Principal) -> Contexts:
    """Scope contexts that count for one patient's data: ``patient/`` only with a patient in the token."""
    return frozenset({"user", "system", "patient"} if principal.patient else {"user", "system"})


def check_patient(principal: Principal, patient_id: str) -> None:
    """403 unless the token may reach ``patient_id`` at all."""
    if principal.patient is not None and principal.patient != patient_id:
        raise forbidden("this access token is limited to another patient")


def require_read(principal: Principal, patient_id: str, types: Iterable[str]) -> None:
    """403 unless the token may read these resource types of ``patient_id``."""
    check_patient(principal, patient_id)
    types = tuple(types)
    if not principal.scopes.allows_all(types, READ, patient_contexts(principal)):
        shown = "*" if types == ("*",) else ", ".join(types)
        raise forbidden(f"the token's scopes do not grant read access to {shown}")


def require_ask(principal: Principal, patient_id: str) -> None:
    """Asking about one patient: read on every resource type of that patient."""
    require_read(principal, patient_id, ("*",))


def view_types(view: str) -> tuple[str, ...]:
    """The resource types behind a canonical view (``*`` for a view this module does not know)."""
    return VIEW_TYPES.get(view, ("*",))


def require_system(principal: Principal, types: Iterable[str], permissions: str, what: str) -> None:
    """Cross-patient work: a ``system/`` scope with ``permissions`` on ``types``, and no patient in the token."""
    if principal.patient is not None:
        raise forbidden(f"{what} is not open to a token limited to one patient")
    if not principal.scopes.allows_all(tuple(types), permissions, frozenset({"system"})):
        raise forbidden(f"{what} needs a system-level scope")


def can_see_job(principal: Principal, owner: str, patient: str | None) -> bool:
    """A job is visible to the principal that started it, or to a system reader without patient context.

    A token with a patient sees only its own jobs about that patient.
    """
    if principal.patient is not None:
        return owner == principal.key and patient == principal.patient
    if owner == principal.key:
        return True
    return principal.scopes.allows("*", READ, frozenset({"system"}))
