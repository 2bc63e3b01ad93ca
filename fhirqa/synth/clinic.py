"""Outpatient encounters: wellness, chronic follow-up, acute sick visits and screening procedures."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import catalog as cat
from . import clinical, meds, notes, observe
from .clock import DAY, iso, md
from .planner import Plan, Timeline
from .sim import Result, Sim

MIN = timedelta(minutes=1)
STATINS = ("atorvastatin", "simvastatin")
HTN_DRUGS = ("lisinopril", "amlodipine", "hydrochlorothiazide")
ROS_WELL = "Feels well. Denies chest pain, SOB, palpitations, abdominal pain or changes in bowel habits."
ROS_FU = "Reports adherence to meds. Denies chest pain, SOB, dizziness, polyuria or polydipsia."


def drug_for(sim: Sim, key: str, new: bool) -> list[str]:
    """Drugs a condition is treated with, honouring allergies and avoiding duplicates."""
    d = cat.chronic()[key]
    chosen = list(d.get("meds", []))
    if key == "hypertension":
        chosen = ["lisinopril"] if new else [sim.rng.choices(HTN_DRUGS, weights=[0.65, 0.25, 0.1])[0]]
    elif key == "hyperlipidemia":
        chosen = [sim.rng.choice(STATINS)]
    elif key == "diabetes" and not new and sim.rng.random() < 0.25:
        chosen.append("insulin_glargine")
    if "lisinopril" in sim.allergies:
        chosen = [d.get("alt_meds", ["amlodipine"])[0] if c == "lisinopril" else c for c in chosen]
    return chosen


def _on(sim: Sim, t: datetime, drug: str) -> bool:
    return sim.on_drug(drug, t) is not None


def establish_care(sim: Sim, tl: Timeline, t: datetime, enc_id: str) -> list[str]:
    """First visit: allergies, problem list, home medications (as orders and a few statements)."""
    pcp = sim.pcp
    plan: list[str] = []
    for key in tl.allergies:
        clinical.allergy(sim, key, t, sim.person.birth.year + sim.rng.randint(5, 40), enc_id)
    for key, onset in tl.chronic.items():
        if key in tl.new_dx or onset > t:
            continue
        rec = clinical.condition(sim, key, t, onset, enc_id, problem_list=True, asserter=pcp)
        rec.recorded = onset  # known history, even though first charted here
        for drug in drug_for(sim, key, new=False):
            if _on(sim, t, drug):
                continue
            since = min(onset + DAY * sim.rng.randint(20, 400), t - DAY * 30)
            order = meds.prescribe(
                sim,
                drug,
                t,
                enc_id,
                pcp,
                reason_id=rec.id,
                effects_from=since,
                note="Continued home medication; renewed at establishment of care.",
            )
            if sim.rng.random() < 0.3:
                meds.statement(sim, drug, since, t, enc_id)
            del order
    age = sim.physio.age(t)
    if age >= 50 and (sim.has("diabetes") or sim.has("hyperlipidemia")) and sim.rng.random() < 0.5:
        meds.statement(sim, "aspirin", t - DAY * sim.rng.randint(200, 2000), t, enc_id)
    if sim.has("osteoarthritis") or sim.rng.random() < 0.15:
        meds.statement(sim, "acetaminophen", t - DAY * sim.rng.randint(30, 900), t, enc_id)
    clinical.procedure(sim, "med_rec", t + 10 * MIN, enc_id, pcp)
    if sim.conditions:
        plan.append("Established care. Problem list, allergies and home medications reconciled.")
    return plan


def _panel_due(sim: Sim, key: str, t: datetime, days: int) -> bool:
    last = sim.chart.latest(key, before=t)
    return last is None or (t - last.time).days >= days


def _labs(sim: Sim, plan: Plan, t: datetime, enc_id: str) -> list[Result]:
    """Order the labs a clinician would at this visit."""
    wellness = plan.kind == "wellness"
    diabetic = sim.has("diabetes") or "diabetes" in plan.dx
    draw: list[str] = []
    if wellness:
        draw += ["bmp", "cbc", "lipid"]
    else:
        monitored = (
            diabetic
            or sim.has("ckd3")
            or any(_on(sim, t, d) for d in ("lisinopril", "furosemide", "hydrochlorothiazide"))
        )
        if plan.after_discharge or (monitored and _panel_due(sim, "potassium", t, 60)):
            draw.append("bmp")
        if plan.after_discharge:
            draw.append("cbc")
        if "hyperlipidemia" in plan.dx or (
            any(_on(sim, t, s) for s in STATINS) and _panel_due(sim, "ldl", t, 300)
        ):
            draw.append("lipid")
    singles: list[str] = []
    if (
        (diabetic and _panel_due(sim, "a1c", t, 75))
        or (wellness and sim.physio.age(t) >= 35 and not sim.has("diabetes"))
        or "diabetes" in plan.dx
    ):
        singles.append("a1c")
    if (sim.has("hypothyroidism") and _panel_due(sim, "tsh", t, 120)) or "hypothyroidism" in plan.dx:
        singles.append("tsh")
    if sim.has("heart_failure") and sim.rng.random() < 0.5:
        singles.append("bnp")
    if (
        wellness
        and sim.rng.random() < 0.25
        or _on(sim, t, "pantoprazole")
        and _panel_due(sim, "magnesium", t, 180)
    ):
        singles.append("magnesium")
    res: list[Result] = []
    when = t + 25 * MIN
    for p in draw:
        res += list(observe.panel(sim, p, when, enc_id).values())
    res += [observe.lab(sim, k, when, enc_id) for k in dict.fromkeys(singles)]
    return res


def _vaccines(sim: Sim, plan: Plan, t: datetime, enc_id: str) -> list[str]:
    given: list[str] = []
    age = sim.physio.age(t)

    def last(k: str) -> datetime | None:
        return max(sim.vaccines.get(k, []), default=None)

    def give(k: str) -> None:
        clinical.immunization(sim, k, t + 15 * MIN, enc_id, sim.rng.choice(sim.pool["nurse"]))
        sim.vaccines.setdefault(k, []).append(t)
        given.append(cat.clinical()["vaccines"][k]["text"])

    flu = last("flu")
    if t.month in (9, 10, 11, 12) and (flu is None or (t - flu).days > 200) and sim.rng.random() < 0.8:
        give("flu")
    covid = last("covid")
    if t.month in (9, 10, 11) and (covid is None or (t - covid).days > 300) and sim.rng.random() < 0.35:
        give("covid")
    if plan.kind == "wellness":
        if "tdap" not in sim.vaccines and sim.rng.random() < 0.15:
            give("tdap")
        if age >= 65 and "pcv20" not in sim.vaccines and sim.rng.random() < 0.5:
            give("pcv20")
    zoster = sim.vaccines.get("zoster", [])
    if age >= 50 and (
        len(zoster) == 0
        and plan.kind == "wellness"
        and sim.rng.random() < 0.3
        or len(zoster) == 1
        and (t - zoster[0]).days >= 60
    ):
        give("zoster")
    return given


EVIDENCE = {
    "diabetes": ("a1c", 6.5),
    "hyperlipidemia": ("ldl", 150.0),
    "hypothyroidism": ("tsh", 6.0),
    "depression": ("phq9", 10.0),
    "hypertension": ("sbp", 140.0),
}


def _diagnoses(
    sim: Sim, plan: Plan, t: datetime, labs: dict[str, Result], vit: dict[str, Result]
) -> list[str]:
    """Undiagnosed conditions recognised today: planned for this visit, or evidently abnormal already."""
    out = []
    for key in sorted(sim.pending_dx):
        if key in sim.conditions:
            continue
        signal, threshold = EVIDENCE[key]
        now = labs.get(signal) or vit.get(signal)
        abnormal = now is not None and now.value >= threshold
        if key == "hypertension" and abnormal:
            # Hypertension needs a second elevated reading on a separate day.
            prior = sim.chart.latest("sbp", before=t - DAY)
            abnormal = prior is not None and prior.value >= threshold
        if key in plan.dx or abnormal:
            out.append(key)
    return out


def _evidence(sim: Sim, key: str, labs: dict[str, Result], vit: dict[str, Result], t: datetime) -> str:
    signal, _ = EVIDENCE[key]
    if key == "hypertension":
        prior = sim.chart.latest("bp", before=t - DAY)
        return f"BP {vit['bp'].text}" + (f" (prior {prior.text} on {md(prior.time)})" if prior else "")
    r = labs.get(signal) or sim.chart.latest(signal, before=t + DAY)
    if r is None:
        return "clinical diagnosis"
    label = "PHQ-9" if signal == "phq9" else notes.short(signal)
    return f"{label} {r.text}" + ("" if r.time >= t else f" on {md(r.time)}")


def _manage(
    sim: Sim, plan: Plan, t: datetime, enc_id: str, labs: dict[str, Result], vit: dict[str, Result]
) -> list[str]:
    """Chronic disease decisions driven by today's values; returns A/P lines."""
    pcp = sim.pcp
    out: list[str] = []
    plan.dx = _diagnoses(sim, plan, t, labs, vit)
    for key in plan.dx:
        onset = sim.timeline_onset(key)
        rec = clinical.condition(sim, key, t, onset, enc_id, problem_list=True, asserter=pcp)
        started = []
        for drug in drug_for(sim, key, new=True):
            if not _on(sim, t, drug):
                meds.prescribe(sim, drug, t + 20 * MIN, enc_id, pcp, reason_id=rec.id)
                started.append(meds.sig_short(drug))
        why = _evidence(sim, key, labs, vit, t)
        out.append(
            f"{cat.chronic()[key]['short']}, new dx - {why}. "
            + ("Start " + "; ".join(started) + "." if started else "Lifestyle counseling.")
        )
    done = set(plan.dx)
    if sim.has("diabetes") and "diabetes" not in done and "a1c" in labs:
        a1c = labs["a1c"]
        met = sim.on_drug("metformin", t)
        line = f"T2DM - {notes.trend(sim, 'a1c', a1c)}"
        if a1c.value >= 8.0 and met and (t - met.start).days >= 150 and not _on(sim, t, "insulin_glargine"):
            meds.prescribe(
                sim, "insulin_glargine", t + 20 * MIN, enc_id, pcp, reason_id=sim.conditions["diabetes"].id
            )
            line += f", above goal despite metformin. Start {meds.sig_short('insulin_glargine')}; hypoglycemia teaching."
        elif a1c.value < 7.0:
            line += ", at goal. Continue current regimen."
        else:
            line += ". Continue " + ("metformin" if met else "current regimen") + "; diet reviewed."
        out.append(line)
    lis = sim.on_drug("lisinopril", t)
    if lis and "potassium" in labs and labs["potassium"].value >= 5.5:
        k = labs["potassium"]
        meds.stop(lis, t + 20 * MIN, "stopped", f"Hyperkalemia (K {k.text})")
        clinical.condition(sim, "hyperkalemia", t, k.time, enc_id, problem_list=False, abated=t + DAY * 30)
        line = f"Hyperkalemia - K {k.text} on lisinopril. Stop lisinopril; low-K diet; repeat BMP in 1 week."
        if not _on(sim, t, "amlodipine"):
            htn = sim.conditions.get("hypertension")
            meds.prescribe(sim, "amlodipine", t + 20 * MIN, enc_id, pcp, reason_id=htn.id if htn else None)
            line += f" Start {meds.sig_short('amlodipine')} for BP."
        out.append(line)
    elif sim.has("hypertension") and "hypertension" not in done:
        bp = vit["bp"]
        on = [meds.sig_short(d) for d in HTN_DRUGS if _on(sim, t, d)]
        goal = (
            "at goal"
            if vit["sbp"].value < 140 and vit["dbp"].value < 90
            else "above goal, recheck at next visit"
        )
        k_text = f"; K {labs['potassium'].text}" if "potassium" in labs and lis else ""
        out.append(f"HTN - BP {bp.text}, {goal}{k_text}. Continue {', '.join(on) or 'lifestyle measures'}.")
    if sim.has("ckd3") and "creatinine" in labs:
        out.append(
            f"CKD3 - Cr {labs['creatinine'].text}, eGFR {labs['egfr'].text}. Avoid NSAIDs; renally dose meds."
        )
    if sim.has("hypothyroidism") and "hypothyroidism" not in done and "tsh" in labs:
        out.append(
            f"Hypothyroidism - {notes.trend(sim, 'tsh', labs['tsh'])}. Continue levothyroxine 75 mcg PO daily."
        )
    if sim.has("hyperlipidemia") and "hyperlipidemia" not in done and "ldl" in labs:
        out.append(f"HLD - {notes.trend(sim, 'ldl', labs['ldl'])}. Continue statin.")
    if sim.has("heart_failure"):
        bnp = f", BNP {labs['bnp'].text}" if "bnp" in labs else ""
        out.append(
            f"CHF - euvolemic on exam, Wt {vit['weight'].text} kg{bnp}. Continue furosemide and metoprolol; daily weights."
        )
    if sim.has("atrial_fibrillation"):
        out.append(f"AF - rate controlled, HR {vit['hr'].text}. Continue apixaban 5 mg PO BID.")
    return out


def _renewals(sim: Sim, t: datetime, enc_id: str) -> None:
    for order in list(sim.active_orders(t, "community")):
        if (t - order.start).days >= 330 and not meds.drug(order.drug).get("course_days"):
            meds.renew(sim, order, t + 25 * MIN, enc_id, sim.pcp)


def clinic_visit(sim: Sim, plan: Plan, tl: Timeline, first: bool) -> None:
    """Chart one outpatient visit end to end, finishing with the clinic note."""
    t = plan.time
    pcp = sim.pcp
    if plan.kind == "screening":
        _screening(sim, plan)
        return
    duration = sim.rng.randint(30, 50)
    reasons = (
        [plan.reason]
        if plan.kind == "sick" and plan.reason
        else [k for k in sim.conditions if k in cat.chronic()][:3] + plan.dx
    )
    enc = clinical.encounter(sim, plan.kind, t, t + duration * MIN, pcp, reasons)
    enc_id = enc["id"]
    ap: list[str] = []
    acute = cat.acute().get(plan.reason or "") if plan.kind == "sick" else None
    onset_days = sim.rng.randint(2, 10)
    if acute:
        sim.physio.add_illness(acute.get("effects", []), t - DAY * onset_days, t)
    if first:
        ap += establish_care(sim, tl, t, enc_id)
    vit = observe.vital_signs(sim, t + 5 * MIN, enc_id, full=True)
    vit["pain"] = observe.pain_score(sim, t + 6 * MIN, enc_id)
    surveys: dict[str, Result] = {}
    if plan.kind == "wellness" or "depression" in plan.dx:
        phq = observe.phq(sim, t + 8 * MIN, enc_id)
        surveys[phq.key] = phq
    if plan.kind == "wellness":
        observe.smoking_status(sim, t + 8 * MIN, enc_id)
    lab_list = _labs(sim, plan, t, enc_id)
    labs = {r.key: r for r in lab_list}
    if acute and plan.reason:
        rec = clinical.condition(
            sim,
            plan.reason,
            t + duration * MIN,
            t - DAY * onset_days,
            enc_id,
            problem_list=False,
            abated=t + DAY * sim.rng.randint(7, 21),
        )
        line = f"{acute['text'][0].upper()}{acute['text'][1:]}"
        if plan.reason == "uti":
            ua = observe.urinalysis(sim, t + 15 * MIN, enc_id, infected=True)
            line += f" - {ua}"
        started = []
        for drug in acute.get("discharge_meds", []):
            if drug == "ibuprofen" and sim.has("ckd3"):
                continue  # NSAIDs are avoided in CKD
            meds.prescribe(sim, drug, t + 20 * MIN, enc_id, pcp, reason_id=rec.id)
            started.append(meds.sig_short(drug))
        line += (
            ". Start " + "; ".join(started) + "."
            if started
            else ". Supportive care, fluids, return precautions."
        )
        ap.append(line)
    ap += _manage(sim, plan, t, enc_id, {**labs, **surveys}, vit)
    if not first:
        _renewals(sim, t, enc_id)
    given = _vaccines(sim, plan, t, enc_id)
    if given:
        ap.append("Immunizations given today: " + "; ".join(given) + ".")
    if plan.kind == "sick" and acute:
        subjective, ros = f"{acute['complaint']} x {onset_days} days", "Denies chest pain or SOB."
    elif plan.after_discharge and sim.last_stay:
        subjective, ros = f"hospital f/u after recent admission for {sim.last_stay}", ROS_FU
    elif plan.kind == "wellness":
        subjective, ros = "annual wellness exam", ROS_WELL
    else:
        subjective, ros = f"f/u of {notes.problems(sim, t)}", ROS_FU
    if not sim.conditions and plan.kind == "followup":
        subjective, ros = "routine follow-up", ROS_WELL
    # Signed after the same-day labs have resulted, so the note can quote them.
    signed = t + duration * MIN + 4 * 60 * MIN
    text = notes.clinic_note(
        sim,
        signed,
        pcp,
        cat.clinical()["encounter_types"][plan.kind]["text"],
        subjective,
        vit,
        lab_list,
        ap,
        ros,
        "RTC 3 months." if sim.conditions else "RTC 1 year or sooner PRN.",
        t,
    )
    notes.document(sim, "clinic", text, signed, enc_id, pcp, (t, t + duration * MIN), "clinic")


def _screening(sim: Sim, plan: Plan) -> None:
    """A procedure-only ambulatory encounter (colonoscopy, mammogram, spirometry, echo)."""
    t = plan.time
    p = cat.clinical()["procedures"][plan.reason or "colonoscopy"]
    specialist = {"mammogram": "radiologist", "echo": "cardiologist", "colonoscopy": "gastroenterologist"}
    role = specialist.get(plan.reason or "")
    performer = sim.rng.choice(sim.pool[role]) if role else sim.pcp
    enc = clinical.encounter(
        sim,
        "followup",
        t,
        t + (int(p["minutes"]) + 30) * MIN,
        performer,
        [],
        type_override=(p["snomed"], p["display"], p["text"]),
    )
    reason = None
    if plan.reason == "spirometry":
        reason = sim.conditions.get("copd")
    elif plan.reason == "echo":
        reason = sim.conditions.get("heart_failure")
    clinical.procedure(
        sim, plan.reason or "colonoscopy", t + 15 * MIN, enc["id"], performer, reason.id if reason else None
    )
    enc["period"]["end"] = iso(t + (int(p["minutes"]) + 30) * MIN)
