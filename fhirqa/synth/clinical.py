"""Encounter, Condition, Procedure, Immunization and AllergyIntolerance builders."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from . import catalog as cat
from .catalog import CVX, SNOMED, V3_ACT, concept
from .clock import iso
from .sim import CondRec, Sim, ref

CLINICAL = "http://terminology.hl7.org/CodeSystem/condition-clinical"
VERIFICATION = "http://terminology.hl7.org/CodeSystem/condition-ver-status"
COND_CATEGORY = "http://terminology.hl7.org/CodeSystem/condition-category"
PARTICIPATION = "http://terminology.hl7.org/CodeSystem/v3-ParticipationType"
DISPOSITION = "http://terminology.hl7.org/CodeSystem/discharge-disposition"
ADMIT_SOURCE = "http://terminology.hl7.org/CodeSystem/admit-source"


def encounter(
    sim: Sim,
    kind: str,
    start: datetime,
    end: datetime,
    practitioner: dict[str, Any],
    reasons: list[str],
    org_key: str = "clinic",
    disposition: str | None = None,
    type_override: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """Encounter resource (returned so callers can attach diagnoses before the bundle is written)."""
    et = cat.clinical()["encounter_types"][kind]
    cls = et["class"]
    snomed, display, text = type_override or (et["snomed"], et["display"], et["text"])
    enc: dict[str, Any] = {
        "resourceType": "Encounter",
        "id": sim.chart.new_id(),
        "status": "finished",
        "class": cat.coding(V3_ACT, cls, cat.clinical()["classes"][cls]),
        "type": [concept(SNOMED, snomed, display, text)],
        "subject": sim.patient_ref,
        "participant": [
            {
                "type": [
                    concept(
                        PARTICIPATION,
                        "ATND" if cls == "IMP" else "PPRF",
                        "attender" if cls == "IMP" else "primary performer",
                    )
                ],
                "period": {"start": iso(start), "end": iso(end)},
                "individual": sim.use(practitioner),
            }
        ],
        "period": {"start": iso(start), "end": iso(end)},
    }
    if reasons:
        enc["reasonCode"] = [cat.condition_concept(k) for k in reasons]
    if cls in ("IMP", "EMER"):
        hosp: dict[str, Any] = {}
        if cls == "IMP":
            hosp["admitSource"] = concept(ADMIT_SOURCE, "emd", "From accident/emergency department")
        if disposition:
            hosp["dischargeDisposition"] = concept(
                DISPOSITION, disposition, cat.clinical()["dispositions"][disposition]
            )
        enc["hospitalization"] = hosp
    enc["serviceProvider"] = sim.use(sim.pool[org_key])
    sim.chart.add(enc)
    return enc


def condition(
    sim: Sim,
    key: str,
    recorded: datetime,
    onset: datetime,
    enc_id: str | None,
    problem_list: bool,
    abated: datetime | None = None,
    verification: str = "confirmed",
    icd10: bool | None = None,
    asserter: dict[str, Any] | None = None,
) -> CondRec:
    """Condition resource; chronic problems go on the problem list, acute ones are encounter diagnoses."""
    with_icd = (sim.rng.random() < 0.6) if icd10 is None else icd10
    clinical_status = "resolved" if abated and abated <= sim.now else "active"
    if verification == "refuted":
        clinical_status = "inactive"
    cond: dict[str, Any] = {
        "resourceType": "Condition",
        "id": sim.chart.new_id(),
        "clinicalStatus": concept(CLINICAL, clinical_status, clinical_status.capitalize()),
        "verificationStatus": concept(VERIFICATION, verification, verification.capitalize()),
        "category": [
            concept(
                COND_CATEGORY,
                "problem-list-item" if problem_list else "encounter-diagnosis",
                "Problem List Item" if problem_list else "Encounter Diagnosis",
            )
        ],
        "code": cat.condition_concept(key, with_icd),
        "subject": sim.patient_ref,
    }
    if enc_id:
        cond["encounter"] = ref(enc_id)
    cond["onsetDateTime"] = iso(onset)
    if abated and abated <= sim.now and verification != "refuted":
        cond["abatementDateTime"] = iso(abated)
    cond["recordedDate"] = iso(recorded)
    if asserter:
        cond["recorder"] = sim.use(asserter)
    rec = CondRec(key, sim.chart.add(cond), onset, abated, recorded)
    if verification == "confirmed":
        sim.conditions.setdefault(key, rec)
    return rec


def procedure(
    sim: Sim,
    key: str,
    t: datetime,
    enc_id: str | None,
    performer: dict[str, Any] | None = None,
    reason_id: str | None = None,
) -> str:
    """Completed Procedure with a performed period."""
    p = cat.clinical()["procedures"][key]
    pr: dict[str, Any] = {
        "resourceType": "Procedure",
        "id": sim.chart.new_id(),
        "status": "completed",
        "code": concept(SNOMED, p["snomed"], p["display"], p["text"]),
        "subject": sim.patient_ref,
    }
    if enc_id:
        pr["encounter"] = ref(enc_id)
    pr["performedPeriod"] = {"start": iso(t), "end": iso(t + timedelta(minutes=int(p["minutes"])))}
    if performer:
        pr["performer"] = [{"actor": sim.use(performer)}]
    if reason_id:
        pr["reasonReference"] = [ref(reason_id)]
    return sim.chart.add(pr)


def immunization(
    sim: Sim, key: str, t: datetime, enc_id: str | None, performer: dict[str, Any] | None
) -> str:
    """Completed Immunization (CVX), left deltoid IM."""
    v = cat.clinical()["vaccines"][key]
    im: dict[str, Any] = {
        "resourceType": "Immunization",
        "id": sim.chart.new_id(),
        "status": "completed",
        "vaccineCode": concept(CVX, v["cvx"], v["display"], v["text"]),
        "patient": sim.patient_ref,
    }
    if enc_id:
        im["encounter"] = ref(enc_id)
    im["occurrenceDateTime"] = iso(t)
    im["primarySource"] = enc_id is not None
    im["lotNumber"] = f"{sim.rng.choice('ABCDEFGHJK')}{sim.rng.randint(1000, 9999)}{sim.rng.choice('XYZ')}"
    im["site"] = concept("http://terminology.hl7.org/CodeSystem/v3-ActSite", "LA", "left arm")
    im["route"] = concept(
        "http://terminology.hl7.org/CodeSystem/v3-RouteOfAdministration", "IM", "Injection, intramuscular"
    )
    im["doseQuantity"] = {"value": v["dose_ml"], "unit": "mL", "system": cat.UCUM, "code": "mL"}
    if performer:
        im["performer"] = [{"actor": sim.use(performer)}]
    return sim.chart.add(im)


def allergy(sim: Sim, key: str, recorded: datetime, onset_year: int, enc_id: str | None) -> str:
    """AllergyIntolerance with a reaction manifestation and criticality."""
    a = cat.clinical()["allergies"][key]
    reaction = sim.rng.choice(a["reactions"])
    severity = reaction[3]
    ai: dict[str, Any] = {
        "resourceType": "AllergyIntolerance",
        "id": sim.chart.new_id(),
        "clinicalStatus": concept(
            "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "Active"
        ),
        "verificationStatus": concept(
            "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", "confirmed", "Confirmed"
        ),
        "type": a["type"],
        "category": [a["category"]],
        "criticality": "high" if severity == "severe" else "low",
        "code": concept(cat.SYSTEMS[a["system"]], a["code"], a["display"]),
        "patient": sim.patient_ref,
    }
    if enc_id:
        ai["encounter"] = ref(enc_id)
    ai["onsetDateTime"] = f"{onset_year:04d}"
    ai["recordedDate"] = iso(recorded)
    ai["reaction"] = [
        {
            "manifestation": [concept(SNOMED, reaction[0], reaction[1], reaction[2])],
            "severity": severity,
        }
    ]
    sim.allergies[key] = reaction[2]
    return sim.chart.add(ai)


def allergy_text(key: str, sim: Sim) -> str:
    """How a note lists one allergy, e.g. ``penicillin (hives)``."""
    a = cat.clinical()["allergies"][key]
    return f"{a['display'].replace(' (substance)', '').lower()} ({sim.allergies[key]})"
