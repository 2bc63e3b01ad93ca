"""Medication resources: Medication, MedicationRequest, MedicationDispense,
MedicationAdministration and MedicationStatement."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from . import catalog as cat
from .catalog import RXNORM, SNOMED, UCUM, V3_FORM, concept
from .clock import DAY, at, iso
from .observe import rounded
from .sim import MedOrder, Sim, ref

MR_CATEGORY = "http://terminology.hl7.org/CodeSystem/medicationrequest-category"
CATEGORY_DISPLAY = {
    "inpatient": "Inpatient",
    "community": "Community",
    "discharge": "Discharge",
    "outpatient": "Outpatient",
}
FREQ_ABBR = {(1, 1.0, "d"): "daily", (2, 1.0, "d"): "BID", (3, 1.0, "d"): "TID", (4, 1.0, "d"): "QID"}


def drug(key: str) -> dict[str, Any]:
    """Drug definition from ``drugs.json``."""
    return cat.drugs()[key]


def sig_short(key: str, dose: float | None = None, timing: tuple[int, float, str] | None = None) -> str:
    """Clinician shorthand for a regimen, e.g. ``lisinopril 10 mg PO daily`` or ``vancomycin 1250 mg IV q8h``."""
    d = drug(key)
    value = d["dose"][0] if dose is None else dose
    freq, period, unit = timing or (d["timing"][0], float(d["timing"][1]), d["timing"][2])
    if freq == 1 and unit == "h":
        how = f"q{int(period)}h"
    else:
        how = FREQ_ABBR.get((freq, float(period), unit), f"{freq}x/{int(period)}{unit}")
    if d.get("when") == ["AC"]:
        how = "AC"
    if d.get("prn"):
        how += " PRN"
    if d.get("count") == 1:
        how = "x1"
    amount = f"{value:,.0f}" if value >= 1000 else f"{value:g}"
    return f"{d['name']} {amount} {d['dose'][2]} {cat.routes()[d['route']]['abbr']} {how}"


def _dose_quantity(d: dict[str, Any], value: float) -> dict[str, Any]:
    return {
        "value": rounded(value, 2 if value < 10 and value != int(value) else 0),
        "unit": d["dose"][2],
        "system": UCUM,
        "code": d["dose"][1],
    }


def _route(d: dict[str, Any]) -> dict[str, Any]:
    r = cat.routes()[d["route"]]
    return concept(SNOMED, r["snomed"], r["display"], r["abbr"])


def medication(sim: Sim, key: str) -> str:
    """The patient's Medication resource for a drug (created once, then reused)."""
    if key in sim.medications:
        return sim.medications[key]
    d = drug(key)
    form = cat.forms()[d["form"]]
    res: dict[str, Any] = {
        "resourceType": "Medication",
        "id": sim.chart.new_id(),
        "code": concept(RXNORM, d["rxnorm"], d["display"], d.get("brand_text") or d["text"]),
        "status": "active",
    }
    if form.get("snomed"):
        res["form"] = concept(SNOMED, form["snomed"], form["display"])
    ingredients = []
    for ing in d["ingredients"]:
        s = ing["strength"]
        denominator = (
            {"value": s[2], "unit": s[3], "system": UCUM, "code": s[3]}
            if len(s) > 2
            else {"value": 1, "unit": form["v3_display"], "system": V3_FORM, "code": form["v3"]}
        )
        ingredients.append(
            {
                "itemCodeableConcept": concept(RXNORM, ing["rxnorm"], ing["display"]),
                "isActive": True,
                "strength": {
                    "numerator": {"value": s[0], "unit": s[1], "system": UCUM, "code": s[1]},
                    "denominator": denominator,
                },
            }
        )
    res["ingredient"] = ingredients
    sim.medications[key] = sim.chart.add(res)
    return sim.medications[key]


def _med_fields(sim: Sim, key: str, text: str) -> dict[str, Any]:
    d = drug(key)
    if d.get("medication_resource"):
        return {"medicationReference": ref(medication(sim, key), text)}
    return {"medicationCodeableConcept": concept(RXNORM, d["rxnorm"], d["display"], text)}


def dosage(key: str, dose: float, timing: tuple[int, float, str], text: str) -> dict[str, Any]:
    """R4 Dosage with timing.repeat, route and doseAndRate.doseQuantity."""
    d = drug(key)
    repeat: dict[str, Any] = {"frequency": timing[0], "period": timing[1], "periodUnit": timing[2]}
    if d.get("count"):
        repeat = {"count": d["count"], **repeat}
    if d.get("when"):
        repeat["when"] = d["when"]
    out: dict[str, Any] = {"sequence": 1, "text": text, "timing": {"repeat": repeat}}
    if d.get("prn"):
        out["asNeededCodeableConcept"] = {"text": d["prn"]}
    out["route"] = _route(d)
    out["doseAndRate"] = [{"doseQuantity": _dose_quantity(d, dose)}]
    return out


def prescribe(
    sim: Sim,
    key: str,
    t: datetime,
    enc_id: str | None,
    requester: dict[str, Any],
    setting: str = "community",
    reason_id: str | None = None,
    dose: float | None = None,
    timing: tuple[int, float, str] | None = None,
    effects_from: datetime | None = None,
    note: str | None = None,
    effects: bool = True,
) -> MedOrder:
    """Write a MedicationRequest and start the drug's physiological effects."""
    d = drug(key)
    dose = float(d["dose"][0]) if dose is None else dose
    timing = timing or (int(d["timing"][0]), float(d["timing"][1]), str(d["timing"][2]))
    # Brand names appear in some order texts, as they do in real EHR order entry.
    text = d["brand_text"] if d.get("brand_text") and sim.rng.random() < 0.4 else d["text"]
    sig = d["sig"] if dose == d["dose"][0] and timing[1] == d["timing"][1] else sig_short(key, dose, timing)
    mr: dict[str, Any] = {
        "resourceType": "MedicationRequest",
        "id": sim.chart.new_id(),
        "status": "active",
        "intent": "order",
        "category": [concept(MR_CATEGORY, setting, CATEGORY_DISPLAY[setting])],
        **_med_fields(sim, key, text),
        "subject": sim.patient_ref,
    }
    if enc_id:
        mr["encounter"] = ref(enc_id)
    mr["authoredOn"] = iso(t)
    mr["requester"] = sim.use(requester)
    if reason_id:
        mr["reasonReference"] = [ref(reason_id)]
    if note:
        mr["note"] = [{"text": note}]
    mr["dosageInstruction"] = [dosage(key, dose, timing, sig)]
    if setting != "inpatient" and d.get("dispense"):
        qty, unit, days, refills = d["dispense"]
        mr["dispenseRequest"] = {
            "validityPeriod": {"start": iso(t), "end": iso(t + timedelta(days=365 if refills else 30))},
            "numberOfRepeatsAllowed": refills,
            "quantity": dispense_quantity(qty, unit),
            "expectedSupplyDuration": {"value": days, "unit": "days", "system": UCUM, "code": "d"},
        }
    sim.chart.add(mr)
    order = MedOrder(
        key,
        mr["id"],
        t,
        enc_id,
        str(requester["id"]),
        setting,
        dose,
        timing,
        sim.medications.get(key),
        reason_id=reason_id,
        resource=mr,
        text=text,
    )
    if effects:
        order.effects = sim.physio.add_all(d.get("effects", []), effects_from or t)
    if d.get("course_days"):
        order.end = t + timedelta(days=int(d["course_days"]))
        order.status = "completed"
    sim.orders.append(order)
    return order


def renew(sim: Sim, order: MedOrder, t: datetime, enc_id: str | None, requester: dict[str, Any]) -> MedOrder:
    """Yearly renewal: complete the old prescription and write a new one.

    The drug is taken without interruption, so the effects move to the new order
    instead of ending and restarting.
    """
    order.end = t
    order.status = "completed"
    new = prescribe(
        sim,
        order.drug,
        t,
        enc_id,
        requester,
        order.setting,
        order.reason_id,
        order.dose,
        order.timing,
        effects=False,
    )
    new.effects, order.effects = order.effects, []
    if new.resource is not None:
        new.resource["priorPrescription"] = ref(order.id)
    return new


def dispense_quantity(qty: float, unit: str) -> dict[str, Any]:
    """Dispensed amount: tablets/capsules as v3 orderable drug forms, liquids in UCUM."""
    if unit in ("tablet", "capsule"):
        return {"value": qty, "unit": unit, "system": V3_FORM, "code": "TAB" if unit == "tablet" else "CAP"}
    if unit == "mL":
        return {"value": qty, "unit": "mL", "system": UCUM, "code": "mL"}
    return {"value": qty, "unit": unit}


def stop(order: MedOrder, t: datetime, status: str = "stopped", reason: str | None = None) -> None:
    """End an order at ``t`` (its physiological effects wear off)."""
    order.end = t
    order.status = status
    for e in order.effects:
        e.end = t
    if reason and order.resource is not None:
        order.resource["statusReason"] = {"text": reason}


def administer(
    sim: Sim,
    order: MedOrder,
    t: datetime,
    enc_id: str,
    nurse: dict[str, Any],
    dose: float | None = None,
    status: str = "completed",
    reason: str | None = None,
) -> str:
    """MedicationAdministration for one dose; IV infusions get an effectivePeriod."""
    d = drug(order.drug)
    value = order.dose if dose is None else dose
    ma: dict[str, Any] = {
        "resourceType": "MedicationAdministration",
        "id": sim.chart.new_id(),
        "status": status,
        **_med_fields(sim, order.drug, order.text),
        "subject": sim.patient_ref,
        "context": ref(enc_id),
    }
    if status == "not-done" and reason:
        ma["statusReason"] = [{"text": reason}]
    if d.get("infusion_minutes"):
        ma["effectivePeriod"] = {
            "start": iso(t),
            "end": iso(t + timedelta(minutes=int(d["infusion_minutes"]))),
        }
    else:
        ma["effectiveDateTime"] = iso(t)
    ma["performer"] = [{"actor": sim.use(nurse)}]
    ma["request"] = ref(order.id)
    amount = f"{value:,.0f}" if value >= 1000 else f"{value:g}"
    ma["dosage"] = {
        "text": f"{amount} {d['dose'][2]} {cat.routes()[d['route']]['abbr']}",
        "route": _route(d),
        "dose": _dose_quantity(d, value),
    }
    return sim.chart.add(ma)


def statement(
    sim: Sim, key: str, since: datetime, asserted: datetime, enc_id: str | None, status: str = "active"
) -> str:
    """Patient-reported MedicationStatement (home or over-the-counter medication)."""
    d = drug(key)
    ms: dict[str, Any] = {
        "resourceType": "MedicationStatement",
        "id": sim.chart.new_id(),
        "status": status,
        **_med_fields(sim, key, d["text"]),
        "subject": sim.patient_ref,
    }
    if enc_id:
        ms["context"] = ref(enc_id)
    ms["effectivePeriod"] = {"start": iso(since)}
    ms["dateAsserted"] = iso(asserted)
    ms["informationSource"] = sim.patient_ref
    ms["dosage"] = [dosage(key, float(d["dose"][0]), tuple(d["timing"]), d["sig"])]
    if d.get("otc"):
        sim.otc.append(key)
    return sim.chart.add(ms)


def finalize(sim: Sim) -> None:
    """Close the record: final statuses, and pharmacy fills for every community/discharge order."""
    end = sim.person.deceased or sim.now
    for order in sim.orders:
        if order.end is None and sim.person.deceased:
            stop(order, sim.person.deceased, "stopped", "Patient deceased")
        if order.end is not None and order.end > end and order.status == "completed":
            order.status = "active"  # course still running at "now"
        if order.resource is not None:
            order.resource["status"] = order.status
        if order.setting != "inpatient" and drug(order.drug).get("dispense"):
            _dispenses(sim, order, min(order.end or end, end))


def _dispenses(sim: Sim, order: MedOrder, until: datetime) -> None:
    d = drug(order.drug)
    qty, unit, days, refills = d["dispense"]
    fill = at(
        order.start + DAY * sim.rng.choice([0, 0, 1, 2]),
        sim.rng.randint(10, 19),
        sim.rng.choice([0, 15, 30, 45]),
    )
    # A prescription cannot be handed over before it was written.
    fill = max(fill, order.start + timedelta(hours=2, minutes=sim.rng.randint(0, 90)))
    for n in range(refills + 1):
        if fill >= until or fill > sim.now:
            break
        md: dict[str, Any] = {
            "resourceType": "MedicationDispense",
            "id": sim.chart.new_id(),
            "status": "completed",
            **_med_fields(sim, order.drug, order.text),
            "subject": sim.patient_ref,
            "authorizingPrescription": [ref(order.id)],
            "type": concept(
                "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                "FF" if n == 0 else "RF",
                "First Fill" if n == 0 else "Refill",
            ),
            "quantity": dispense_quantity(qty, unit),
            "daysSupply": {"value": days, "unit": "days", "system": UCUM, "code": "d"},
            "whenPrepared": iso(fill - timedelta(hours=2)),
            "whenHandedOver": iso(fill),
            "dosageInstruction": [{"text": d["sig"]}],
        }
        sim.chart.add(md)
        # Refills come a few days early or, now and then, late (adherence gaps).
        fill = at(
            fill
            + DAY
            * (days - sim.rng.randint(0, 5) + (sim.rng.randint(5, 25) if sim.rng.random() < 0.15 else 0)),
            sim.rng.randint(10, 19),
            sim.rng.choice([0, 15, 30, 45]),
        )
