"""Hospital building blocks: ED visits, the Stay record, cultures, imaging, MAR, troughs, sliding scale."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from . import catalog as cat
from . import clinical, meds, notes, observe
from .clock import DAY, at, md
from .planner import Plan
from .sim import CondRec, MedOrder, Result, Sim, ref

MIN = timedelta(minutes=1)
SCHEDULE = {
    (1, 12.0, "h"): [9, 21],
    (1, 8.0, "h"): [6, 14, 22],
    (1, 24.0, "h"): [10],
    (1, 6.0, "h"): [0, 6, 12, 18],
}
SLIDING_SCALE = [(300, 8), (250, 6), (200, 4), (150, 2)]
AC_TIMES = [(7, 30), (11, 30), (16, 30)]


@dataclass
class Stay:
    """Facts of one admission, collected for the H&P, progress notes and discharge summary."""

    plan: Plan
    enc: dict[str, Any]
    t0: datetime
    end: datetime
    attending: dict[str, Any]
    onset_days: int
    vitals: list[dict[str, Result]] = field(default_factory=list)
    labs: list[dict[str, Result]] = field(default_factory=list)
    orders: list[MedOrder] = field(default_factory=list)
    conds: list[CondRec] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    imaging: str | None = None
    baseline_cr: Result | None = None
    disposition: str = "home"
    discharge_orders: list[MedOrder] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.enc["id"])


def special_labs(
    sim: Sim, keys: list[str], t: datetime, enc_id: str, reason: str, hospital: bool
) -> list[str]:
    """Cultures and urinalysis; returns note snippets."""
    out: list[str] = []
    f = cat.clinical()["findings"]
    for key in keys:
        if key == "blood_culture":
            clinical.procedure(sim, "blood_culture", t, enc_id)
            positive = reason == "cellulitis" and sim.rng.random() < 0.25
            if positive:
                observe.coded(sim, "blood_culture", tuple(f["mssa"]), t, enc_id, "laboratory")
                out.append("Blood cx: S. aureus (MSSA) 1 of 2 sets.")
            else:
                observe.stringy(sim, "blood_culture", "No growth at 5 days", t, enc_id, issued=t + DAY * 5)
                out.append("Blood cx: no growth.")
        elif key == "urinalysis":
            out.append(observe.urinalysis(sim, t, enc_id, infected=True, hospital=hospital) + ".")
        elif key == "urine_culture":
            observe.coded(sim, "urine_culture", tuple(f["ecoli"]), t, enc_id, "laboratory")
            out.append("Urine cx: >100,000 CFU/mL E. coli.")
    return out


def draw(sim: Sim, t: datetime, enc_id: str, keys: list[str]) -> dict[str, Result]:
    res: dict[str, Result] = {}
    for k in keys:
        if k in cat.panels():
            res.update(observe.panel(sim, k, t, enc_id, hospital=True))
        elif k in cat.labs():
            res[k] = observe.lab(sim, k, t, enc_id, hospital=True, turnaround_min=45)
    return res


def imaging(sim: Sim, key: str, t: datetime, enc_id: str, reason_id: str | None, indication: str) -> str:
    """Procedure plus radiology DiagnosticReport with presentedForm text; returns the impression."""
    img = cat.clinical()["imaging"]["ankle_xr" if key == "ankle_xr" else key]
    radiologist = sim.rng.choice(sim.pool["radiologist"])
    clinical.procedure(sim, "ankle_xr" if key == "ankle_xr" else "cxr", t, enc_id, radiologist, reason_id)
    n = radiologist["name"][0]
    text = (
        f"EXAM: {img['display']}\nDATE: {md(t)}\nINDICATION: {indication}\n\n"
        f"FINDINGS: {img['findings']}\n\nIMPRESSION: {img['impression']}\n\n"
        f"Electronically signed by {n['prefix'][0]} {n['given'][0]} {n['family']}, radiologist.\n"
    )
    code = (img["snomed"], img["snomed_display"]) if img.get("snomed") else None
    observe.report(
        sim,
        key,
        img["loinc"],
        img["display"],
        "RAD",
        t,
        enc_id,
        [],
        hospital=True,
        conclusion=img["impression"],
        text=text,
        interpreter=radiologist,
        conclusion_code=code,
    )
    return str(img["impression"])


def ecg(sim: Sim, t: datetime, enc_id: str, hr: Result) -> str:
    clinical.procedure(sim, "ecg", t, enc_id)
    rhythm = (
        "Atrial fibrillation with controlled ventricular response"
        if sim.has("atrial_fibrillation")
        else "Normal sinus rhythm"
    )
    text = f"{rhythm}, rate {hr.text}. Normal axis. No acute ST-T wave changes."
    observe.report(sim, "ecg", "11524-6", "EKG study", "EC", t, enc_id, [], hospital=True, conclusion=text)
    return "ECG: " + text


def emergency_visit(sim: Sim, plan: Plan) -> None:
    """ED visit treated and released home."""
    reason = plan.reason or "chest_pain"
    acute = cat.acute()[reason]
    t = plan.time
    onset_days = sim.rng.randint(1, 3)
    sim.physio.add_illness(acute.get("effects", []), t - DAY * onset_days, t)
    doc = sim.rng.choice(sim.pool["ed"])
    end = t + MIN * sim.rng.randint(150, 380)
    enc = clinical.encounter(sim, "emergency", t, end, doc, [reason], "hospital", disposition="home")
    vit = observe.vital_signs(sim, t + 6 * MIN, enc["id"])
    vit["pain"] = observe.pain_score(sim, t + 7 * MIN, enc["id"])
    lab_keys = {"chest_pain": ["bmp", "cbc", "troponin"], "gastroenteritis": ["bmp", "cbc"]}.get(reason, [])
    labs = draw(sim, t + 25 * MIN, enc["id"], lab_keys)
    studies = special_labs(
        sim,
        [k for k in acute.get("extra_labs", []) if k not in cat.labs()],
        t + 30 * MIN,
        enc["id"],
        reason,
        True,
    )
    rec = clinical.condition(
        sim,
        reason,
        end,
        t - DAY * onset_days,
        enc["id"],
        problem_list=False,
        abated=end + DAY * sim.rng.randint(2, 14),
        asserter=doc,
    )
    plan_lines: list[str] = []
    if reason == "chest_pain":
        studies.append(ecg(sim, t + 12 * MIN, enc["id"], vit["hr"]))
        studies.append(
            "CXR: " + imaging(sim, "cxr_normal", t + 50 * MIN, enc["id"], rec.id, acute["complaint"])
        )
        trop2 = observe.lab(
            sim,
            "troponin",
            t + 205 * MIN if end > t + 205 * MIN else end - 10 * MIN,
            enc["id"],
            hospital=True,
        )
        first = labs["troponin"]
        clinical.condition(
            sim, "mi", end, t, enc["id"], problem_list=False, verification="refuted", icd10=False
        )
        plan_lines.append(
            f"Chest pain - hsTnI {first.text} -> {trop2.text} ng/L (no delta), ECG without ischemia. ACS ruled out. "
            "Outpatient stress test; aspirin PRN."
        )
    elif reason == "gastroenteritis":
        k = labs["potassium"]
        plan_lines.append(
            f"Gastroenteritis with volume depletion - K {k.text}, BUN {labs['bun'].text}. "
            "1 L NS bolus, PO challenge passed. BRAT diet."
        )
    elif reason == "ankle_sprain":
        studies.append(
            "XR R ankle: " + imaging(sim, "ankle_xr", t + 40 * MIN, enc["id"], rec.id, acute["complaint"])
        )
        plan_lines.append(
            "Right ankle sprain - Ottawa positive, XR negative for fracture. RICE, ASO brace, crutches."
        )
    elif reason == "uti":
        plan_lines.append("Cystitis - UA positive. Urine culture sent.")
    for drug in acute.get("discharge_meds", []):
        if drug == "ibuprofen" and sim.has("ckd3"):
            continue
        meds.prescribe(sim, drug, end - 20 * MIN, enc["id"], doc, "discharge", rec.id)
        plan_lines.append(f"Rx: {meds.sig_short(drug)}.")
    plan_lines.append("Return precautions reviewed; f/u with PCP in 1 week.")
    vit2 = observe.vital_signs(sim, end - 15 * MIN, enc["id"])
    text = notes.ed_note(
        sim,
        end,
        doc,
        acute["complaint"],
        onset_days,
        vit,
        list(labs.values()),
        studies,
        plan_lines,
        f"discharged home in stable condition at {end:%H:%M}, BP {vit2['bp'].text}, HR {vit2['hr'].text}",
    )
    notes.document(sim, "ed", text, end + 30 * MIN, enc["id"], doc, (t, end), "hospital")


def inpatient_orders(sim: Sim, stay: Stay, t: datetime, reason_id: str) -> None:
    acute = cat.acute()[stay.plan.reason or "pneumonia"]
    keys = list(acute.get("inpatient_meds", []))
    if "penicillin" in sim.allergies:
        keys = list(acute.get("pcn_allergy_meds", keys))
        keys = [k for k in keys if not meds.drug(k).get("penicillin")]
    elif acute.get("pcn_ok_meds") and sim.rng.random() < 0.3:
        keys = list(acute["pcn_ok_meds"])
    if not sim.on_drug("apixaban", t):
        keys.append("heparin")
    if sim.has("diabetes"):
        keys.append("insulin_lispro")
    keys.append("acetaminophen_inpatient")
    for k in keys:
        stay.orders.append(meds.prescribe(sim, k, t, stay.id, stay.attending, "inpatient", reason_id))


def mar(sim: Sim, stay: Stay) -> None:
    """Scheduled administrations for every inpatient order (first dose stat)."""
    for order in stay.orders:
        if order.drug in ("insulin_lispro", "acetaminophen_inpatient", "potassium_chloride"):
            continue  # given against POC glucose / fever / low K, see glucose_checks, prn and replete
        end = min(order.end or stay.end, stay.end)
        hours = SCHEDULE.get((order.timing[0], float(order.timing[1]), order.timing[2]), [9])
        # New orders get a stat first dose; a dose change continues on the regular schedule.
        stat = not (order.resource or {}).get("priorPrescription")
        times = [order.start + 15 * MIN] if stat else []
        lead = 3 * 60 * MIN if stat else MIN
        day = at(order.start, 0)
        while day < end:
            for h in hours:
                slot = at(day, h)
                if order.start + lead < slot < end and all(
                    abs((slot - x).total_seconds()) > 4 * 3600 for x in times
                ):
                    times.append(slot)
            day += DAY
        for i, slot in enumerate(sorted(times)):
            nurse = sim.rng.choice(sim.pool["nurse"])
            held = i > 0 and sim.rng.random() < 0.03
            given = slot + MIN * sim.rng.randint(-10, 25)  # nurses give scheduled doses within a window
            infusion = MIN * int(meds.drug(order.drug).get("infusion_minutes", 0))
            if given + infusion >= min(end, stay.end - 10 * MIN):
                continue
            meds.administer(
                sim,
                order,
                given,
                stay.id,
                nurse,
                status="not-done" if held else "completed",
                reason=sim.rng.choice(["Patient refused", "Patient off unit for imaging"]) if held else None,
            )


def vanco_trough(sim: Sim, stay: Stay, day: datetime) -> None:
    """Trough before the 09:00 dose; low troughs lead to 1,250 mg q8h, high ones to q24h dosing."""
    vanc = next((o for o in stay.orders if o.drug == "vancomycin" and o.active_at(at(day, 8, 30))), None)
    if vanc is None:
        return
    t = at(day, 8, 30)
    cr = sim.physio.true_value("creatinine", t)
    # Fixed 1 g q12h under-doses heavier patients and accumulates when the kidneys are failing.
    weight = sim.physio.true_value("weight", t)
    level = max(3.0, 10.5 * 80.0 / weight + sim.rng.gauss(0.0, 2.5) + 8.0 * max(0.0, cr - 1.1))
    r = observe.lab(sim, "vanco_trough", t, stay.id, value=level, hospital=True, turnaround_min=40)
    stay.labs.append({"vanco_trough": r})
    if r.value > 20:
        _redose_vancomycin(sim, stay, vanc, r, at(day, 9, 0) - MIN, 1000.0, (1, 24.0, "h"),
                           f"Vanc trough {r.text} on {md(t)}, supratherapeutic -> decreased to")
    elif r.value < 10:
        _redose_vancomycin(sim, stay, vanc, r, at(day, 13, 0), 1250.0, (1, 8.0, "h"),
                           f"Vanc trough {r.text} on {md(t)} -> increased to")
    else:
        stay.events.append(
            f"Vanc trough {r.text} on {md(t)}, therapeutic; continued {meds.sig_short('vancomycin')}"
        )


def _redose_vancomycin(sim: Sim, stay: Stay, vanc: MedOrder, r: Result, change: datetime, dose: float,
                       timing: tuple[int, float, str], event: str) -> None:
    """Stop the current vancomycin order and have pharmacy re-dose it after a trough."""
    meds.stop(vanc, change, "stopped", f"Dose adjusted for vancomycin trough {r.text} ug/mL")
    pharm = sim.rng.choice(sim.pool["pharmacist"])
    new = meds.prescribe(sim, "vancomycin", change, stay.id, pharm, "inpatient", vanc.reason_id, dose=dose,
                         timing=timing, note=f"Pharmacy-to-dose: trough {r.text} ug/mL")
    if new.resource is not None:
        new.resource["priorPrescription"] = ref(vanc.id)
    stay.orders.append(new)
    stay.events.append(f"{event} {meds.sig_short('vancomycin', dose, timing)}")


def replete_potassium(sim: Sim, stay: Stay, k: Result) -> None:
    """Low K on a resulted draw: oral KCl 40 mEq once, ordered and given after the result."""
    if k.value >= 3.5:
        return
    t = k.time + 70 * MIN
    if t >= stay.end - 30 * MIN:
        return
    order = meds.prescribe(sim, "potassium_chloride", t, stay.id, stay.attending, "inpatient", None)
    meds.administer(sim, order, t + 20 * MIN, stay.id, sim.rng.choice(sim.pool["nurse"]))
    order.effects = []  # detach first: the replacement persists after the single dose
    meds.stop(order, t + 21 * MIN, "completed")
    stay.orders.append(order)
    stay.events.append(f"K {k.text} on {md(k.time)} -> {meds.sig_short('potassium_chloride')}")


def glucose_checks(sim: Sim, stay: Stay) -> None:
    order = next((o for o in stay.orders if o.drug == "insulin_lispro"), None)
    if order is None:
        return
    day = at(stay.t0, 0)
    while day < stay.end:
        for h, m in AC_TIMES:
            t = at(day, h, m)
            if not (order.start < t < stay.end - 30 * MIN):
                continue
            r = observe.lab(sim, "glucose_poc", t, stay.id, hospital=True, turnaround_min=2)
            units = next((u for limit, u in SLIDING_SCALE if r.value >= limit), 0)
            if units:
                meds.administer(
                    sim, order, t + 10 * MIN, stay.id, sim.rng.choice(sim.pool["nurse"]), dose=float(units)
                )
        day += DAY


def prn(sim: Sim, stay: Stay) -> None:
    order = next((o for o in stay.orders if o.drug == "acetaminophen_inpatient"), None)
    if order is None:
        return
    last: datetime | None = None
    for v in stay.vitals:
        t = v["temp"].time
        if v["temp"].value >= 38.0 and t > order.start and (last is None or t - last >= 6 * 60 * MIN):
            last = t + 20 * MIN
            meds.administer(sim, order, last, stay.id, sim.rng.choice(sim.pool["nurse"]))
