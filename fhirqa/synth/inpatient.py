"""Inpatient stay: ED arrival, admission work-up, daily labs, q8h vitals, MAR, notes, discharge."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import catalog as cat
from . import clinical, hospital_notes, meds, notes, observe
from .clock import DAY, at, md
from .hospital import (
    MIN,
    Stay,
    draw,
    glucose_checks,
    imaging,
    inpatient_orders,
    mar,
    prn,
    replete_potassium,
    special_labs,
    vanco_trough,
)
from .physiology import Effect
from .planner import Plan
from .sim import Result, Sim, ref

VITAL_HOURS = [0, 8, 16]


def _o2(sim: Sim, t: datetime) -> str:
    """Oxygen delivery quoted with SpO2: supplemental O2 while the patient is hypoxic."""
    s = sim.physio.true_value("spo2", t)
    return "RA" if s >= 93 else ("2L NC" if s >= 89 else "4L NC")


def _vitals(sim: Sim, stay: Stay, t: datetime, full: bool = False) -> dict[str, Result]:
    v = observe.vital_signs(sim, t, stay.id, full=full, o2=_o2(sim, t))
    stay.vitals.append(v)
    return v


def _complications(sim: Sim, stay: Stay, labs: dict[str, Result], t: datetime) -> list[str]:
    """AKI / hyperkalemia diagnosed from the admission labs themselves."""
    out: list[str] = []
    acute = cat.acute()[stay.plan.reason or "pneumonia"]
    cr = labs.get("creatinine")
    base = stay.baseline_cr
    aki = cr is not None and (
        (base is not None and cr.value >= base.value * 1.5) or (base is None and cr.value >= 1.6)
    )
    if aki or "aki" in acute.get("also", []) and cr is not None and cr.interp == "H":
        rec = clinical.condition(
            sim,
            "aki",
            t + 60 * MIN,
            t,
            stay.id,
            problem_list=False,
            abated=stay.end + DAY * sim.rng.randint(5, 20),
            asserter=stay.attending,
        )
        stay.conds.append(rec)
        out.append("aki")
    k = labs.get("potassium")
    if k is not None and k.value >= 5.5:
        stay.conds.append(
            clinical.condition(
                sim,
                "hyperkalemia",
                t + 60 * MIN,
                t,
                stay.id,
                problem_list=False,
                abated=t + DAY * 2,
                asserter=stay.attending,
            )
        )
        out.append("hyperkalemia")
    if "uti" in acute.get("also", []):
        stay.conds.append(
            clinical.condition(
                sim,
                "uti",
                t + 60 * MIN,
                t - DAY * stay.onset_days,
                stay.id,
                problem_list=False,
                abated=stay.end + DAY * 5,
            )
        )
    return out


def _dying(sim: Sim, stay: Stay) -> None:
    """Clinical deterioration over the last ~36 hours before an in-hospital death."""
    start = stay.end - 36 * 60 * MIN
    for signal, delta in (
        ("sbp", -45),
        ("dbp", -22),
        ("spo2", -14),
        ("hr", 35),
        ("rr", 10),
        ("lactate", 4.5),
        ("creatinine", 1.4),
        ("potassium", 0.9),
        ("wbc", 8),
    ):
        sim.physio.add(Effect(signal, start, delta, ramp=1.4))


def run_stay(sim: Sim, plan: Plan) -> None:
    """Chart an inpatient stay from ED arrival to discharge (or death)."""
    reason = plan.reason or "pneumonia"
    acute = cat.acute()[reason]
    t0 = plan.time
    onset_days = sim.rng.randint(1, 4)
    sim.physio.add_illness(acute.get("effects", []), t0 - DAY * onset_days, t0)
    attending = sim.rng.choice(sim.pool["hospitalist"])
    end = at(t0 + DAY * max(plan.los, 1), sim.rng.randint(10, 15), sim.rng.randint(0, 59))
    if plan.dies:
        end = at(t0 + DAY * max(plan.los, 1), sim.rng.randint(1, 23), sim.rng.randint(0, 59))
    age = sim.physio.age(t0)
    disposition = (
        "exp"
        if plan.dies
        else sim.rng.choices(
            ["home", "hh", "snf", "rehab"], weights=[0.7, 0.12, 0.12 if age >= 70 else 0.02, 0.06]
        )[0]
    )
    enc = clinical.encounter(sim, "inpatient", t0, end, attending, [reason], "hospital", disposition)
    stay = Stay(plan, enc, t0, end, attending, onset_days, disposition=disposition)
    stay.baseline_cr = sim.chart.latest("creatinine", before=t0)
    if plan.dies:
        _dying(sim, stay)

    # ED work-up
    _vitals(sim, stay, t0 + 8 * MIN, full=True)
    labs = draw(
        sim,
        t0 + 25 * MIN,
        stay.id,
        ["bmp", "cbc", "magnesium", *[k for k in acute.get("extra_labs", []) if k in cat.labs()]],
    )
    stay.labs.append(labs)
    principal = clinical.condition(
        sim,
        reason,
        t0 + 90 * MIN,
        t0 - DAY * onset_days,
        stay.id,
        problem_list=False,
        abated=None if plan.dies else end + DAY * sim.rng.randint(3, 14),
        icd10=True,
        asserter=attending,
    )
    stay.conds.append(principal)
    extra = special_labs(
        sim,
        [k for k in acute.get("extra_labs", []) if k not in cat.labs()],
        t0 + 30 * MIN,
        stay.id,
        reason,
        True,
    )
    stay.events += extra
    if acute.get("imaging"):
        stay.imaging = imaging(
            sim, acute["imaging"], t0 + 55 * MIN, stay.id, principal.id, acute["complaint"]
        )
    for key in acute.get("procedures", []):
        if key == "echo":
            clinical.procedure(
                sim, "echo", at(t0 + DAY, 11), stay.id, sim.rng.choice(sim.pool["cardiologist"]), principal.id
            )
    clinical.procedure(sim, "med_rec", t0 + 100 * MIN, stay.id, attending)
    found = _complications(sim, stay, labs, t0 + 25 * MIN)
    inpatient_orders(sim, stay, t0 + 90 * MIN, principal.id)
    replete_potassium(sim, stay, labs["potassium"])
    enc["diagnosis"] = [
        {
            "condition": ref(c.id),
            "use": cat.concept(
                "http://terminology.hl7.org/CodeSystem/diagnosis-role",
                "AD" if i == 0 else "CM",
                "Admission diagnosis" if i == 0 else "Comorbidity diagnosis",
            ),
            "rank": i + 1,
        }
        for i, c in enumerate(stay.conds)
    ]
    hp = hospital_notes.hp(sim, stay, found, t0 + 3 * 60 * MIN)
    notes.document(sim, "hp", hp, t0 + 3 * 60 * MIN, stay.id, attending, (t0, t0 + 3 * 60 * MIN), "hospital")

    # Daily rhythm: vitals q8h, AM labs, trough on HD2, progress note mid-morning.
    day = at(t0, 0) + DAY
    hd = 2
    t = at(t0, 0)
    while True:
        for h in VITAL_HOURS:
            vt = at(t, h) + MIN * sim.rng.randint(0, 25)
            if t0 + 3 * 60 * MIN < vt < end - 30 * MIN:
                _vitals(sim, stay, vt)
        t += DAY
        if t > end:
            break
    while day < end:
        am = at(day, 5, 30) + MIN * sim.rng.randint(-15, 20)
        if am < end - 60 * MIN:
            keys = (
                ["bmp", "cbc"]
                + (["magnesium"] if hd % 2 == 0 else [])
                + (["bnp"] if reason == "chf_exacerbation" and hd == 3 else [])
            )
            stay.labs.append(draw(sim, am, stay.id, keys))
            replete_potassium(sim, stay, stay.labs[-1]["potassium"])
        if reason == "pneumonia" and hd == 3:
            # MRSA coverage is stopped once nares PCR and cultures are negative, before any trough.
            vanc = next((o for o in stay.orders if o.drug == "vancomycin" and o.active_at(at(day, 7))), None)
            if vanc is not None:
                meds.stop(
                    vanc, at(day, 7), "stopped", "De-escalated: MRSA nares PCR and blood cultures negative"
                )
                stay.events.append(f"Vancomycin discontinued {md(day)} (MRSA nares negative, blood cx NGTD)")
        if hd == 3:  # trough at steady state, before the 4th-5th dose
            vanco_trough(sim, stay, day)
        note_t = at(day, 10, 30) + MIN * sim.rng.randint(0, 60)
        if note_t < end - 90 * MIN:
            text = hospital_notes.progress(sim, stay, hd, note_t)
            notes.document(
                sim, "progress", text, note_t, stay.id, attending, (at(day, 0), note_t), "hospital"
            )
        day += DAY
        hd += 1
    _discharge(sim, stay)


def _discharge(sim: Sim, stay: Stay) -> None:
    end = stay.end
    for o in stay.orders:
        if o.end is None or o.end > end:
            meds.stop(o, end, "completed")
    mar(sim, stay)
    glucose_checks(sim, stay)
    prn(sim, stay)
    acute = cat.acute()[stay.plan.reason or "pneumonia"]
    if stay.plan.dies:
        sim.person.deceased = end
    else:
        for drug in acute.get("discharge_meds", []):
            stay.discharge_orders.append(
                meds.prescribe(
                    sim, drug, end - 60 * MIN, stay.id, stay.attending, "discharge", stay.conds[0].id
                )
            )
        if stay.plan.reason == "chf_exacerbation" and not sim.on_drug("furosemide", end):
            stay.discharge_orders.append(
                meds.prescribe(
                    sim, "furosemide", end - 60 * MIN, stay.id, stay.attending, "discharge", stay.conds[0].id
                )
            )
    sim.last_stay = acute["text"]
    signed = end + timedelta(minutes=sim.rng.randint(30, 180))
    text = hospital_notes.discharge_summary(sim, stay, signed)
    notes.document(sim, "discharge", text, signed, stay.id, stay.attending, (stay.t0, end), "hospital")
