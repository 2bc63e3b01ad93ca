"""Inpatient note texts: admission H&P, daily progress notes and the discharge summary."""

from __future__ import annotations

from datetime import datetime

from . import catalog as cat
from .clock import hm, md
from .hospital import Stay
from .meds import drug, sig_short
from .notes import allergies, header, intro, labs_line, med_list, numbered, problems, short, vitals_line
from .sim import MedOrder, Result, Sim

PLACE = "St. Brendan Regional Medical Center - Inpatient Medicine"
ADMIT_KEYS = [
    "sodium",
    "potassium",
    "chloride",
    "co2",
    "bun",
    "creatinine",
    "glucose",
    "magnesium",
    "wbc",
    "hemoglobin",
    "platelets",
    "lactate",
    "bnp",
    "troponin",
]
SMOKING = {"never": "Never smoker", "former": "Former smoker", "current": "Current every-day smoker"}


def _results(stay: Stay, before: datetime) -> list[dict[str, Result]]:
    return [d for d in stay.labs if d and min(r.time for r in d.values()) <= before]


def _latest(stay: Stay, key: str, before: datetime) -> Result | None:
    found = [d[key] for d in _results(stay, before) if key in d]
    return max(found, key=lambda r: r.time) if found else None


def _first(stay: Stay, key: str) -> Result | None:
    found = [d[key] for d in stay.labs if key in d]
    return min(found, key=lambda r: r.time) if found else None


def _course(stay: Stay, key: str, until: datetime) -> str | None:
    """``WBC 17.2 on admission -> 9.1`` style trend."""
    a, b = _first(stay, key), _latest(stay, key, until)
    if a is None:
        return None
    text = f"{short(key)} {a.text} on admission"
    if b is not None and b.obs_id != a.obs_id:
        text += f" -> {b.text} ({md(b.time)})"
    return text


def _inpatient_meds(sim: Sim, stay: Stay, t: datetime) -> list[str]:
    return [sig_short(o.drug, o.dose, o.timing) for o in stay.orders if o.active_at(t)]


def _vitals_before(stay: Stay, t: datetime) -> list[dict[str, Result]]:
    return [v for v in stay.vitals if v["bp"].time <= t]


def hp(sim: Sim, stay: Stay, found: list[str], t: datetime) -> str:
    """Admission history and physical."""
    reason = stay.plan.reason or "pneumonia"
    acute = cat.acute()[reason]
    v = stay.vitals[0]
    labs = stay.labs[0]
    ap: list[str] = []
    abx = [o for o in stay.orders if o.drug in ("vancomycin", "ceftriaxone", "piperacillin_tazobactam")]
    main = f"{acute['text'][0].upper()}{acute['text'][1:]}"
    if "wbc" in labs:
        main += f" - WBC {labs['wbc'].text}, T {v['temp'].text}, HR {v['hr'].text}"
    if "lactate" in labs:
        main += f", lactate {labs['lactate'].text}"
    if "bnp" in labs:
        main += f", BNP {labs['bnp'].text}"
    if stay.imaging:
        main += f". Imaging: {stay.imaging.rstrip('.')}"
    if abx:
        main += ". Start " + " + ".join(sig_short(o.drug, o.dose, o.timing) for o in abx)
    if reason == "chf_exacerbation":
        main += ". Diurese with " + "; ".join(
            sig_short(o.drug) for o in stay.orders if o.drug == "furosemide_iv"
        )
        main += "; strict I/O, daily weights, 2 g Na diet"
    if reason == "copd_exacerbation":
        main += ". Nebulized albuterol/ipratropium q4h, prednisone 40 mg PO daily"
    ap.append(main + ".")
    if "aki" in found:
        base = (
            f" (baseline {stay.baseline_cr.text} on {md(stay.baseline_cr.time)})" if stay.baseline_cr else ""
        )
        ap.append(
            f"AKI - Cr {labs['creatinine'].text}{base}. IV fluids, hold nephrotoxins, renally dose antibiotics."
        )
    if "hyperkalemia" in found:
        ap.append(
            f"Hyperkalemia - K {labs['potassium'].text} on admission. Repeat BMP, ECG, hold K-sparing meds/ACEi."
        )
    if sim.has("diabetes"):
        ap.append(f"T2DM - glucose {labs['glucose'].text}. Hold metformin; insulin lispro sliding scale AC.")
    if sim.has("hypertension"):
        ap.append(f"HTN - BP {v['bp'].text}. Continue home antihypertensives as BP allows.")
    ap.append(
        "VTE ppx: "
        + ("heparin 5,000 units SC q8h." if any(o.drug == "heparin" for o in stay.orders) else "on apixaban.")
    )
    ap.append("Code status: Full code.")
    body = [
        header(sim, "Admission history and physical", t, stay.attending, PLACE),
        f"CC: {acute['complaint']}.",
        f"HPI: {intro(sim, stay.t0)} who presents c/o {acute['complaint']} x {stay.onset_days} days. "
        f"In the ED {sim.person.he} was {'febrile' if v['temp'].value >= 38 else 'afebrile'}, HR {v['hr'].text}, "
        f"SpO2 {v['spo2'].text}% on {v['o2'].text}. Denies recent travel or sick contacts.",
        f"PMH: {problems(sim, stay.t0)}.",
        "Home meds: " + ("; ".join(med_list(sim, stay.t0)) or "none") + ".",
        f"Allergies: {allergies(sim)}.",
        f"Social: {SMOKING[sim.person.smoking]}.",
        "",
        f"Vitals on arrival ({hm(v['bp'].time)}): {vitals_line(v, with_weight=True)}.",
        f"Labs on admission ({hm(next(iter(labs.values())).time)}): {labs_line(labs.values(), ADMIT_KEYS)}.",
    ]
    body += [e for e in stay.events if e.startswith(("Blood cx", "UA", "Urine"))]
    if stay.imaging:
        body.append(f"Imaging: {stay.imaging}")
    body += ["", "Assessment/Plan:", f"{intro(sim, stay.t0)} admitted for {acute['text']}.", numbered(ap)]
    return "\n".join(body) + "\n"


def progress(sim: Sim, stay: Stay, hd: int, t: datetime) -> str:
    """Daily hospitalist SOAP note quoting this morning's labs and overnight vitals."""
    reason = stay.plan.reason or "pneumonia"
    acute = cat.acute()[reason]
    seen = _vitals_before(stay, t)
    last = seen[-1]
    recent = [v for v in seen if (t - v["temp"].time).total_seconds() <= 86400]
    tmax = max(recent or seen, key=lambda v: v["temp"].value)["temp"]
    today = [d for d in _results(stay, t) if "sodium" in d][-1]
    trough = _latest(stay, "vanco_trough", t)
    subj = ("Febrile overnight" if tmax.value >= 38.0 else "Afebrile overnight") + (
        ", feels somewhat better." if hd > 2 else ", still fatigued."
    )
    trends = [c for c in (_course(stay, k, t) for k in ("wbc", "creatinine", "potassium", "sodium")) if c]
    events = [e for e in stay.events if not e.startswith(("Blood cx", "UA", "Urine"))]
    ap = [f"{acute['text'][0].upper()}{acute['text'][1:]} - HD#{hd}. " + "; ".join(trends[:2]) + "."]
    ap += [e + "." for e in events if md(t) in e]
    if sim.has("diabetes"):
        poc = [
            r
            for r in sim.chart.results
            if r.key == "glucose_poc" and r.encounter_id == stay.id and r.time <= t
        ]
        if poc:
            ap.append("T2DM - FSBG " + ", ".join(r.text for r in poc[-3:]) + " on sliding scale.")
    if reason == "chf_exacerbation":
        w = [v["weight"] for v in seen if "weight" in v]
        ap.append(
            f"Volume - net negative on IV furosemide; admission Wt {w[0].text} kg."
            if w
            else "Volume - diuresing."
        )
    ap.append("Dispo: continue inpatient care" + ("; anticipate discharge in 24-48h." if hd >= 3 else "."))
    body = [
        header(sim, f"Hospitalist progress note - HD#{hd}", t, stay.attending, PLACE),
        f"S: {subj}",
        f"O: Tmax {tmax.text} (24h). Vitals ({hm(last['bp'].time)}): {vitals_line(last)}.",
        f"Labs {'this AM' if today['sodium'].time.date() == t.date() else 'on admission'} "
        f"({hm(today['sodium'].time)}): {labs_line(today.values())}."
        + (
            f" Vanc trough {trough.text} ({hm(trough.time)})."
            if trough and trough.time.date() == t.date()
            else ""
        ),
        "Inpatient meds: " + "; ".join(_inpatient_meds(sim, stay, t)) + ".",
        "",
        "A/P:",
        numbered(ap),
    ]
    return "\n".join(body) + "\n"


def discharge_summary(sim: Sim, stay: Stay, signed: datetime) -> str:
    """Discharge summary (or death summary) recapping the stay with real values."""
    reason = stay.plan.reason or "pneumonia"
    acute = cat.acute()[reason]
    end = stay.end
    los = (end.date() - stay.t0.date()).days
    died = stay.plan.dies
    abx = []
    for o in sorted(stay.orders, key=lambda o: o.start):
        if o.drug in ("vancomycin", "ceftriaxone", "piperacillin_tazobactam", "furosemide_iv"):
            abx.append(f"{sig_short(o.drug, o.dose, o.timing)} ({md(o.start)}-{md(o.end or end)})")
    course = [f"{intro(sim, stay.t0)} admitted with {acute['complaint']}, found to have {acute['text']}."]
    if abx:
        course.append("Treated with " + "; ".join(abx) + ".")
    events = [e for e in stay.events if not e.startswith(("Blood cx", "UA", "Urine"))]
    if events:
        course.append(". ".join(events) + ".")
    trends = [
        c for c in (_course(stay, k, end) for k in ("wbc", "creatinine", "potassium", "sodium", "bnp")) if c
    ]
    if trends:
        course.append("; ".join(trends) + ".")
    secondary = [cat.condition(c.key)["text"] for c in stay.conds[1:]] + [
        cat.chronic()[k]["text"] for k in sim.conditions if k in cat.chronic()
    ]
    last_v = stay.vitals[-1]
    last_labs = stay.labs[-1] if "sodium" in stay.labs[-1] else stay.labs[0]
    title = "Death summary" if died else "Discharge summary"
    body = [
        header(sim, title, signed, stay.attending, PLACE),
        f"Admit: {md(stay.t0)} {hm(stay.t0)}    {'Expired' if died else 'Discharge'}: {md(end)} {hm(end)}    "
        f"LOS: {los} days",
        f"Principal dx: {acute['text']}",
        "Secondary dx: " + ("; ".join(dict.fromkeys(secondary)) or "none"),
        f"Disposition: {cat.clinical()['dispositions'][stay.disposition]}",
        "",
        "Hospital course: " + " ".join(course),
    ]
    if stay.imaging:
        body.append(f"Imaging: {stay.imaging}")
    body.append(f"Last vitals ({hm(last_v['bp'].time)}): {vitals_line(last_v)}.")
    body.append(f"Last labs ({md(next(iter(last_labs.values())).time)}): {labs_line(last_labs.values())}.")
    if died:
        body += [
            "",
            f"Despite treatment {sim.person.he} developed progressive hypotension and hypoxemia. After goals-of-care "
            f"discussion with family, transitioned to comfort care. Patient expired on {md(end)} at {hm(end)}.",
        ]
    else:
        new = [
            sig_short(o.drug, o.dose, o.timing) + f" x {meds_days(o)} days"
            if meds_days(o)
            else sig_short(o.drug)
            for o in stay.discharge_orders
        ]
        cont = med_list(sim, end)
        cont = [c for c in cont if c not in [sig_short(o.drug) for o in stay.discharge_orders]]
        body += [
            "",
            "Discharge medications:",
            "  NEW: " + ("; ".join(new) or "none"),
            "  CONTINUE: " + ("; ".join(cont) or "none"),
            "",
            "Follow-up: PCP in 1-2 weeks with repeat BMP/CBC. Return for fever, worsening SOB or chest pain.",
        ]
    return "\n".join(body) + "\n"


def meds_days(order: MedOrder) -> int | None:
    """Course length of a discharge prescription, if it has one."""
    d = drug(order.drug)
    return int(d["course_days"]) if d.get("course_days") else None
