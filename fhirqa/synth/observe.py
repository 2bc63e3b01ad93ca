"""Observation and DiagnosticReport builders: labs, lab panels, vital signs, surveys."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

from . import catalog as cat
from .catalog import LOINC, OBS_CATEGORY, UCUM, V2_0074, V3_INTERP, concept
from .clock import iso
from .physiology import egfr_ckd_epi_2021, interpret, sex_value
from .sim import Result, Sim, ref

INTERP_DISPLAY = {"H": "High", "L": "Low", "N": "Normal"}
CATEGORY_DISPLAY = {
    "laboratory": "Laboratory",
    "vital-signs": "Vital Signs",
    "survey": "Survey",
    "social-history": "Social History",
}


def fmt(value: float, decimals: int) -> str:
    """Format a value exactly as the lab reports it (and as notes quote it)."""
    return f"{value:.{decimals}f}"


def rounded(value: float, decimals: int) -> float | int:
    """Round to reporting precision; integers stay ints so JSON shows ``139`` not ``139.0``."""
    return int(round(value)) if decimals == 0 else round(value, decimals)


def quantity(value: float | int, unit: str) -> dict[str, Any]:
    """UCUM Quantity."""
    return {"value": value, "unit": unit, "system": UCUM, "code": unit}


def category(code: str) -> list[dict[str, Any]]:
    """Observation.category for one observation-category code."""
    return [concept(OBS_CATEGORY, code, CATEGORY_DISPLAY[code])]


def _observation(
    sim: Sim, code: dict[str, Any], cat_code: str, t: datetime, enc_id: str | None
) -> dict[str, Any]:
    obs: dict[str, Any] = {
        "resourceType": "Observation",
        "id": sim.chart.new_id(),
        "status": "final",
        "category": category(cat_code),
        "code": code,
        "subject": sim.patient_ref,
    }
    if enc_id:
        obs["encounter"] = ref(enc_id)
    obs["effectiveDateTime"] = iso(t)
    return obs


def lab(
    sim: Sim,
    key: str,
    t: datetime,
    enc_id: str | None,
    value: float | None = None,
    hospital: bool = False,
    turnaround_min: int = 60,
) -> Result:
    """Measure (unless ``value`` is given) and chart one laboratory Observation."""
    d = cat.labs()[key]
    if "variants" in d:
        # Hospital and clinic labs may report magnesium in different units/codes.
        v = d["variants"][sim.mg_variant if hospital else 0]
        raw = sim.physio.measure(key, t) if value is None else value
        raw *= float(v["factor"])
        d = {**d, **v}
    else:
        raw = sim.physio.measure(d.get("signal", key), t, d.get("sd")) if value is None else value
    decimals = int(d["decimals"])
    val = rounded(raw, decimals)
    low = sex_value(d.get("low"), sim.person.gender)
    high = sex_value(d.get("high"), sim.person.gender)
    flag = interpret(float(val), low, high)
    obs = _observation(sim, concept(LOINC, d["loinc"], d["display"]), "laboratory", t, enc_id)
    obs["issued"] = iso(min(t + timedelta(minutes=turnaround_min + sim.rng.randint(0, 40)), sim.now))
    obs["valueQuantity"] = quantity(val, d["unit"])
    obs["interpretation"] = [concept(V3_INTERP, flag, INTERP_DISPLAY[flag])]
    rng_: dict[str, Any] = {}
    if low is not None:
        rng_["low"] = quantity(low, d["unit"])
    if high is not None:
        rng_["high"] = quantity(high, d["unit"])
    if rng_:
        obs["referenceRange"] = [rng_]
    sim.chart.add(obs)
    return sim.chart.record(
        Result(key, float(val), fmt(val, decimals), d["unit"], t, obs["id"], enc_id, flag)
    )


def panel(sim: Sim, key: str, t: datetime, enc_id: str | None, hospital: bool = False) -> dict[str, Result]:
    """Draw a lab panel (BMP, CBC, lipids): member Observations plus a DiagnosticReport."""
    p = cat.panels()[key]
    res: dict[str, Result] = {}
    # Derived members are computed from measured ones, so measure the rest first.
    for m in [m for m in p["members"] if not cat.labs()[m].get("derived")]:
        res[m] = lab(sim, m, t, enc_id, hospital=hospital)
    if "egfr" in p["members"]:
        e = egfr_ckd_epi_2021(res["creatinine"].value, sim.physio.age(t), sim.person.gender)
        res["egfr"] = lab(sim, "egfr", t, enc_id, value=e, hospital=hospital)
    if "hematocrit" in p["members"]:
        hct = res["hemoglobin"].value * 2.95 + sim.rng.gauss(0.0, 0.6)
        res["hematocrit"] = lab(sim, "hematocrit", t, enc_id, value=hct, hospital=hospital)
    if "cholesterol" in p["members"]:
        tc = res["ldl"].value + res["hdl"].value + res["triglycerides"].value / 5.0
        res["cholesterol"] = lab(sim, "cholesterol", t, enc_id, value=tc, hospital=hospital)
    ordered = [res[m] for m in p["members"]]
    report(sim, key, p["loinc"], p["display"], "LAB", t, enc_id, ordered, hospital=hospital)
    return res


def report(
    sim: Sim,
    key: str,
    loinc: str,
    display: str,
    cat_code: str,
    t: datetime,
    enc_id: str | None,
    results: list[Result],
    hospital: bool = False,
    conclusion: str | None = None,
    text: str | None = None,
    interpreter: dict[str, Any] | None = None,
    conclusion_code: tuple[str, str] | None = None,
) -> str:
    """DiagnosticReport with ``result`` references and optional conclusion / presentedForm text."""
    org = sim.pool["hospital" if hospital else "clinic"]
    dr: dict[str, Any] = {
        "resourceType": "DiagnosticReport",
        "id": sim.chart.new_id(),
        "status": "final",
        "category": [
            concept(
                V2_0074, cat_code, {"LAB": "Laboratory", "RAD": "Radiology", "EC": "Electrocardiac"}[cat_code]
            )
        ],
        "code": concept(LOINC, loinc, display),
        "subject": sim.patient_ref,
    }
    if enc_id:
        dr["encounter"] = ref(enc_id)
    dr["effectiveDateTime"] = iso(t)
    dr["issued"] = iso(min(t + timedelta(minutes=90 + sim.rng.randint(0, 60)), sim.now))
    dr["performer"] = [sim.use(org)]
    if interpreter:
        dr["resultsInterpreter"] = [sim.use(interpreter)]
    if results:
        dr["result"] = [ref(r.obs_id, cat.labs().get(r.key, {}).get("short")) for r in results]
    if conclusion:
        dr["conclusion"] = conclusion
    if conclusion_code:
        dr["conclusionCode"] = [concept(cat.SNOMED, conclusion_code[0], conclusion_code[1])]
    if text:
        dr["presentedForm"] = [
            {
                "contentType": "text/plain; charset=utf-8",
                "data": base64.b64encode(text.encode("utf-8")).decode("ascii"),
                "title": display,
                "creation": dr["issued"],
            }
        ]
    return sim.chart.add(dr)


def vital_signs(
    sim: Sim,
    t: datetime,
    enc_id: str,
    full: bool = False,
    o2: str | None = None,
) -> dict[str, Result]:
    """Chart a set of vitals. BP is one Observation (85354-9) with systolic/diastolic components.

    ``full`` adds weight, height and BMI (clinic visits, admission); ``o2`` is the
    oxygen delivery text quoted by notes (``RA``, ``2L NC``).
    """
    v = cat.vitals()
    res: dict[str, Result] = {}
    sbp = rounded(sim.physio.measure("sbp", t), 0)
    dbp = rounded(min(sim.physio.measure("dbp", t), sbp - 20), 0)
    bp_panel = cat.load("labs")["bp_panel"]
    bp = _observation(
        sim,
        concept(LOINC, bp_panel["loinc"], bp_panel["display"], "Blood pressure"),
        "vital-signs",
        t,
        enc_id,
    )
    bp["component"] = [
        {
            "code": concept(LOINC, v["sbp"]["loinc"], v["sbp"]["display"]),
            "valueQuantity": quantity(sbp, "mm[Hg]"),
        },
        {
            "code": concept(LOINC, v["dbp"]["loinc"], v["dbp"]["display"]),
            "valueQuantity": quantity(dbp, "mm[Hg]"),
        },
    ]
    sim.chart.add(bp)
    res["sbp"] = sim.chart.record(Result("sbp", sbp, str(sbp), "mm[Hg]", t, bp["id"], enc_id))
    res["dbp"] = sim.chart.record(Result("dbp", dbp, str(dbp), "mm[Hg]", t, bp["id"], enc_id))
    res["bp"] = sim.chart.record(Result("bp", sbp, f"{sbp}/{dbp}", "mm[Hg]", t, bp["id"], enc_id))
    keys = ["hr", "rr", "temp", "spo2"] + (["weight", "height", "bmi"] if full else [])
    for key in keys:
        d = v[key]
        if key == "height":
            raw = sim.physio.height_cm
        elif key == "bmi":
            raw = res["weight"].value / (sim.physio.height_cm / 100.0) ** 2
        else:
            raw = sim.physio.measure(key, t)
        res[key] = simple(sim, key, d, raw, t, enc_id, "vital-signs")
    if o2:
        res["o2"] = Result("o2", 0.0, o2, "", t, res["spo2"].obs_id, enc_id)
    return res


def simple(
    sim: Sim, key: str, d: dict[str, Any], raw: float, t: datetime, enc_id: str | None, cat_code: str
) -> Result:
    """Chart a single-valued Quantity observation (vital sign or score)."""
    decimals = int(d.get("decimals", 0))
    val = rounded(raw, decimals)
    code = concept(LOINC, d["loinc"], d["display"])
    if d.get("alt_loinc"):
        code["coding"].append(cat.coding(LOINC, d["alt_loinc"], d["alt_display"]))
    obs = _observation(sim, code, cat_code, t, enc_id)
    obs["valueQuantity"] = quantity(val, d["unit"])
    sim.chart.add(obs)
    return sim.chart.record(Result(key, float(val), fmt(val, decimals), d["unit"], t, obs["id"], enc_id))


def pain_score(sim: Sim, t: datetime, enc_id: str) -> Result:
    """0-10 pain score (survey category, integer score)."""
    d = cat.vitals()["pain"]
    return simple(sim, "pain", d, sim.physio.measure("pain", t), t, enc_id, "survey")


def phq(sim: Sim, t: datetime, enc_id: str) -> Result:
    """Depression screening: PHQ-2 when low risk, full PHQ-9 when PHQ-2 is positive or known depression."""
    s = cat.clinical()["surveys"]
    score = sim.physio.measure("phq9", t)
    if score < 5 and not sim.has("depression"):
        return simple(sim, "phq2", {**s["phq2"], "decimals": 0}, min(6.0, score * 0.4), t, enc_id, "survey")
    return simple(sim, "phq9", {**s["phq9"], "decimals": 0}, score, t, enc_id, "survey")


def coded(sim: Sim, key: str, value: tuple[str, str], t: datetime, enc_id: str | None, cat_code: str) -> str:
    """Observation with valueCodeableConcept (SNOMED CT answer)."""
    d = cat.clinical()["surveys"][key]
    obs = _observation(sim, concept(LOINC, d["loinc"], d["display"]), cat_code, t, enc_id)
    obs["valueCodeableConcept"] = concept(cat.SNOMED, value[0], value[1])
    return sim.chart.add(obs)


def stringy(
    sim: Sim, key: str, value: str, t: datetime, enc_id: str | None, issued: datetime | None = None
) -> str:
    """Laboratory Observation with valueString."""
    d = cat.clinical()["surveys"][key]
    obs = _observation(sim, concept(LOINC, d["loinc"], d["display"]), "laboratory", t, enc_id)
    if issued:
        obs["issued"] = iso(min(issued, sim.now))
    obs["valueString"] = value
    return sim.chart.add(obs)


def smoking_status(sim: Sim, t: datetime, enc_id: str) -> str:
    """Tobacco smoking status (social-history, valueCodeableConcept)."""
    values = cat.clinical()["surveys"]["smoking"]["values"]
    code, display = values[sim.person.smoking]
    return coded(sim, "smoking", (code, display), t, enc_id, "social-history")


def urinalysis(sim: Sim, t: datetime, enc_id: str, infected: bool, hospital: bool = False) -> str:
    """Urine dipstick panel mixing valueString and valueCodeableConcept members; returns summary text."""
    f = cat.clinical()["findings"]
    color = "Yellow" if not infected else sim.rng.choice(["Dark yellow", "Amber"])
    appearance = "Clear" if not infected else "Cloudy"
    ids = [
        stringy(sim, "urine_color", color, t, enc_id),
        stringy(sim, "urine_appearance", appearance, t, enc_id),
        coded(sim, "urine_leuk", tuple(f["positive" if infected else "negative"]), t, enc_id, "laboratory"),
        coded(
            sim,
            "urine_nitrite",
            tuple(f["positive" if infected and sim.rng.random() < 0.7 else "negative"]),
            t,
            enc_id,
            "laboratory",
        ),
    ]
    d = cat.clinical()["surveys"]["urinalysis"]
    results = [Result("ua", 0.0, "", "", t, i, enc_id) for i in ids]
    summary = f"UA {appearance.lower()}, LE {'positive' if infected else 'negative'}"
    report(
        sim, "ua", d["loinc"], d["display"], "LAB", t, enc_id, results, hospital=hospital, conclusion=summary
    )
    return summary
