"""Shared fakes for the tool tests: a few hand-made observation and medication rows, a trivial resolver."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from fhirqa.agent.tools import execute
from fhirqa.agent.tools.base import Resolution, ToolContext

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def t(text: str) -> datetime:
    """An aware UTC datetime from a short ISO string."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def obs(oid: str, name: str, value: float | None, when: str, unit: str = "%", code: str = "4548-4",
        category: str = "laboratory", **extra: Any) -> dict[str, Any]:
    """An observation row as the view gives it."""
    return {"patient_id": "p1", "ref": f"Observation/{oid}", "is_component": False, "parent_name": None,
            "name": name, "code": code, "code_system": "http://loinc.org", "category": category,
            "value": value, "value_string": None, "unit": unit, "time": t(when), "issued": None,
            "status": "final", "ref_low": None, "ref_high": None, "interpretation": None,
            "encounter_ref": None, **extra}


def med(mid: str, name: str, kind: str, when: str | None, dose: float | None = None, unit: str | None = "mg",
        **extra: Any) -> dict[str, Any]:
    """A medication event row as the view gives it."""
    prefix = {"request": "MedicationRequest", "administration": "MedicationAdministration",
              "dispense": "MedicationDispense", "statement": "MedicationStatement"}[kind]
    return {"patient_id": "p1", "ref": f"{prefix}/{mid}", "kind": kind, "request_ref": None,
            "medication_name": name, "medication_code": "11124", "status": "completed", "intent": None,
            "time": t(when) if when else None, "end_time": None, "dose": dose, "dose_unit": unit,
            "route": "intravenous", "frequency": None, "period": None, "period_unit": None,
            "daily_dose": None, "dosage_text": None, "category": None, **extra}


A1C = "Hemoglobin A1c/Hemoglobin.total in Blood"
VANCO = "Vancomycin 1250 MG Injection"

OBSERVATIONS = [
    obs("a1", A1C, 6.1, "2022-01-10T09:00:00"),
    obs("a2", A1C, 7.4, "2023-11-20T09:00:00"),
    obs("a3", A1C, 6.8, "2024-05-02T09:00:00", interpretation="H"),
    obs("k1", "Potassium", 4.1, "2024-05-02T09:00:00", unit="mmol/L", code="2823-3"),
    obs("bp", "Systolic blood pressure", 128.0, "2024-06-01T10:00:00", unit="mm[Hg]", code="8480-6",
        category="vital-signs", is_component=True, parent_name="Blood pressure panel"),
    obs("bp", "Diastolic blood pressure", 82.0, "2024-06-01T10:00:00", unit="mm[Hg]", code="8462-4",
        category="vital-signs", is_component=True, parent_name="Blood pressure panel"),
    obs("sm", "Tobacco smoking status", None, "2024-06-01T10:00:00", unit=None, code="72166-2",
        category="social-history", value_string="Never smoker"),
    obs("x1", A1C, 9.9, "2024-04-01T09:00:00", status="entered-in-error"),
]

MEDICATIONS = [
    med("req", VANCO, "request", "2024-03-01T07:00:00", dose=1250, frequency=3, period=1.0, period_unit="d",
        daily_dose=3750.0),
    med("v1", VANCO, "administration", "2024-03-01T08:00:00", dose=1250),
    med("v2", VANCO, "administration", "2024-03-01T16:00:00", dose=1250),
    med("v3", VANCO, "administration", "2024-03-02T00:00:00", dose=1250),
    med("v4", VANCO, "administration", "2024-03-02T08:00:00", dose=1250),
    med("m1", "Metformin 500 MG Oral Tablet", "statement", "2023-01-01T00:00:00", dose=500),
    med("m2", "Metformin 500 MG Oral Tablet", "statement", None, dose=500),
]

PATIENT = [{"patient_id": "p1", "ref": "Patient/p1", "name": "Ada Lovelace", "birth_date": date(1970, 6, 16),
            "gender": "female", "deceased": False, "deceased_time": None}]


class FakeRows:
    """``PatientRows`` over in-memory rows."""

    def __init__(self, views: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.views = views if views is not None else {
            "observation": OBSERVATIONS, "medication": MEDICATIONS, "patient": PATIENT}

    def rows(self, view: str) -> list[dict[str, Any]]:
        """The view's rows (none for views the fake does not hold)."""
        return self.views.get(view, [])

    def items(self, view: str) -> list[str]:
        """Distinct item names, sorted."""
        field = {"medication": "medication_name", "encounter": "type_name", "note": "note_type"}.get(view, "name")
        return sorted({r[field] for r in self.rows(view) if r.get(field)})


def resolve(view: str, phrase: str, items: list[str]) -> Resolution:
    """Substring match; 'blood pressure' is ambiguous; unmatched phrases get same-initial candidates."""
    needle = phrase.lower()
    matched = [i for i in items if needle in i.lower()]
    if needle == "blood pressure":
        return Resolution(matched=[], candidates=matched, ambiguous=True, how="test")
    candidates = [] if matched else [i for i in items if i[0].lower() == needle[0]]
    return Resolution(matched=matched, candidates=candidates, how="test")


def make_ctx(views: dict[str, list[dict[str, Any]]] | None = None) -> ToolContext:
    """A context over the fake rows, as of :data:`NOW`."""
    return ToolContext(patient_id="p1", now=NOW, data=FakeRows(views), resolve=resolve)


def call(ctx: ToolContext, name: str, **arguments: Any) -> dict[str, Any]:
    """Run a tool through the registry (validation included), as the composer does."""
    return execute(ctx, name, arguments)


def fetch(ctx: ToolContext, view: str, **arguments: Any) -> str:
    """get_resources → its handle."""
    result = call(ctx, "get_resources", view=view, **arguments)
    assert result["ok"], result
    return result["handle"]


def offline_answer(question: str, views: dict[str, list[dict[str, Any]]], now: datetime) -> dict[str, Any]:
    """The offline backend's final answer to ``question`` over ``views`` as of ``now``, with ``cited``: the
    references of the evidence the answer rests on."""
    from fhirqa.agent.backends.offline import OfflineBackend
    from fhirqa.agent.composer import compose
    from fhirqa.agent.resolver import ConceptResolver
    from fhirqa.agent.tools import tool_specs

    ctx = ToolContext(patient_id="p1", now=now, data=FakeRows(views), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {now.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {e.ref for e in ctx.evidence.values()}}
