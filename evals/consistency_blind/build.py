"""Blind probe of the note–table checker: notes in our own clinical wording, labelled from the raw Synthea JSON.

    python -m evals.consistency_blind.build [--data ../shared/data/synthea-r4] [--out evals/consistency_blind/notes.jsonl]

Deterministic: every random choice comes from random.Random seeded with a string. Imports nothing from fhirqa.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
from datetime import datetime, timedelta

from evals.consistency_blind.record import Record, load

DAY = timedelta(days=1)


def seeded(seed: str) -> random.Random:
    """A generator seeded by a string (deterministic across runs; not for cryptography)."""
    return random.Random(seed)  # noqa: S311

# ---------------------------------------------------------------- wording tables (ours)
# analyte key -> (name test, spellings, unit conversions {written unit: factor from record unit}, decimals)
ANALYTES = {
    "k": (lambda n: n == "Potassium", ["K", "Kalium", "potassium of", "K+"], {"mmol/L": 1, "mEq/L": 1, "": 1}, 1),
    "na": (lambda n: n == "Sodium", ["Na", "sodium", "serum sodium"], {"": 1, "mmol/L": 1}, 0),
    "cl": (lambda n: n == "Chloride", ["Cl", "chloride"], {"": 1}, 0),
    "co2": (lambda n: n == "Carbon Dioxide", ["bicarb", "HCO3", "total CO2"], {"": 1}, 0),
    "bun": (lambda n: n == "Urea Nitrogen", ["BUN", "urea N"], {"": 1}, 0),
    "cr": (lambda n: n == "Creatinine", ["Cr", "creat", "creatinine"],
           {"": 1, "mg/dL": 1, "umol/L": 88.4}, 1),
    "glu": (lambda n: n == "Glucose", ["glucose", "BG", "fasting sugar", "gluc"], {"": 1, "mg/dL": 1, "mmol/L": 1 / 18.0}, 0),
    "ca": (lambda n: n == "Calcium", ["Ca", "calcium"], {"": 1}, 1),
    "a1c": (lambda n: n.startswith("Hemoglobin A1c"), ["HbA1c", "A1c", "glycated Hb"], {"%": 1}, 1),
    "tc": (lambda n: n == "Total Cholesterol", ["TC", "total chol", "cholesterol"], {"": 1, "mmol/L": 1 / 38.67}, 0),
    "ldl": (lambda n: n.startswith("Low Density Lipoprotein"), ["LDL", "LDL-C"], {"": 1, "mmol/L": 1 / 38.67}, 0),
    "hdl": (lambda n: n.startswith("High Density Lipoprotein"), ["HDL", "HDL-C"], {"": 1}, 0),
    "tg": (lambda n: n == "Triglycerides", ["TG", "trigs", "triglycerides"], {"": 1}, 0),
    "hb": (lambda n: n.startswith("Hemoglobin [Mass"), ["Hb", "Hgb", "haemoglobin"], {"": 1, "g/dL": 1}, 1),
    "plt": (lambda n: n.startswith("Platelets [#"), ["plt", "platelets"], {"": 1}, 0),
    "wbc": (lambda n: n.startswith("Leukocytes [#") or n.startswith("WBC Auto"), ["WBC", "white count"], {"": 1}, 1),
    "hct": (lambda n: n.startswith("Hematocrit"), ["Hct"], {"%": 1}, 1),
    "egfr": (lambda n: n.startswith("Estimated Glomerular"), ["eGFR"], {"": 1}, 0),
    "alt": (lambda n: n.startswith("Alanine aminotransferase"), ["ALT", "SGPT"], {"": 1}, 0),
    "alb": (lambda n: n.startswith("Albumin [Mass"), ["albumin", "alb"], {"": 1, "g/dL": 1}, 1),
    "wt": (lambda n: n == "Body Weight", ["wt", "weighs", "weight"], {"kg": 1, "lb": 2.20462}, 1),
    "ht": (lambda n: n == "Body Height", ["ht", "height"], {"cm": 1, "in": 1 / 2.54}, 0),
    "bmi": (lambda n: n == "Body Mass Index", ["BMI"], {"": 1}, 1),
    "sbp": (lambda n: n == "Systolic Blood Pressure", [], {"": 1}, 0),
    "dbp": (lambda n: n == "Diastolic Blood Pressure", [], {"": 1}, 0),
    "temp": (lambda n: n == "Oral temperature", ["T", "temp", "Tmax"], {"": 1, "C": 1}, 1),
    "pain": (lambda n: n.startswith("Pain severity"), ["pain"], {"/10": 1}, 0),
}
VITALS = {"wt", "ht", "bmi", "sbp", "dbp", "temp", "pain"}
WRONG_UNIT = {"wt": ("kg", "lb"), "ht": ("cm", "in"), "glu": ("", "mmol/L"), "cr": ("", "umol/L"),
              "tc": ("", "mmol/L"), "ldl": ("", "mmol/L"), "k": ("", "mg/dL"), "hb": ("", "mg/dL")}
# labs / vitals the Synthea records here never hold (existence): spelling, value text, record-name words to avoid
ABSENT_OBS = [("TSH", "2.3", ["thyroid", "thyrotropin"]), ("Mg", "2.0", ["magnesium"]),
              ("INR", "1.1", ["inr", "coagulation"]), ("lactate", "1.4", ["lactate"]),
              ("SpO2", "97% RA", ["oxygen saturation", "spo2"]), ("HR", "84", ["heart rate"]),
              ("RR", "16", ["respiratory rate"]), ("troponin", "<0.01", ["troponin"])]

# generic (lower, words of the record name) -> (brand / shorthand wordings)
DRUGS = {
    "simvastatin": ["Zocor", "simva"], "simvistatin": ["Zocor", "simvastatin"],
    "metoprolol succinate": ["Toprol XL", "metoprolol succ"], "hydrochlorothiazide": ["HCTZ", "hydrochlorothiazide"],
    "amlodipine": ["Norvasc", "amlodipine"], "clopidogrel": ["Plavix", "clopidogrel"],
    "warfarin": ["Coumadin", "warfarin"], "digoxin": ["Lanoxin", "digoxin"], "furosemide": ["Lasix", "furosemide"],
    "lasix": ["Lasix", "furosemide"], "atorvastatin": ["Lipitor", "atorvastatin"], "aspirin": ["ASA", "aspirin"],
    "verapamil": ["Calan", "verapamil"], "naproxen": ["Aleve", "naproxen"], "ibuprofen": ["Motrin", "Advil"],
    "acetaminophen": ["Tylenol", "APAP"], "alendronic acid": ["Fosamax", "alendronate"],
    "galantamine": ["Razadyne", "galantamine"], "donepezil": ["Aricept", "donepezil"],
    "captopril": ["Capoten", "captopril"], "loratadine": ["Claritin", "loratadine"],
    "fexofenadine": ["Allegra", "fexofenadine"], "clonazepam": ["Klonopin", "clonazepam"],
    "diazepam": ["Valium", "diazepam"], "carbamazepine": ["Tegretol", "carbamazepine"],
    "penicillin v": ["Pen VK", "penicillin VK"], "cefuroxime": ["Ceftin", "cefuroxime"],
    "meperidine": ["Demerol", "meperidine"],
}
# substitutes never in the patient's record (wrong drug / existence): wording, generic words, strength, sig
OTHER_DRUGS = [("Lipitor", "atorvastatin", "20", "qhs"), ("lisinopril", "lisinopril", "10", "daily"),
               ("Synthroid", "levothyroxine", "75 mcg", "qAM"), ("Eliquis", "apixaban", "5", "BID"),
               ("metformin", "metformin", "500", "BID with meals"), ("Protonix", "pantoprazole", "40", "daily"),
               ("sertraline", "sertraline", "50", "daily"), ("Coreg", "carvedilol", "6.25", "BID"),
               ("allopurinol", "allopurinol", "100", "daily"), ("Crestor", "rosuvastatin", "10", "qhs")]
FREQ = {(1, 1, "d"): ["daily", "qd", "once a day"], (2, 1, "d"): ["BID", "twice daily"],
        (3, 1, "d"): ["TID"], (1, 4, "h"): ["q4h"], (1, 6, "h"): ["q6h"]}

# record condition name (lower, contains) -> our wordings
CONDS = [("hypertension", ["HTN", "essential hypertension", "high BP"]), ("hyperlipidemia", ["HLD", "dyslipidaemia"]),
         ("prediabetes", ["pre-diabetes", "prediabetic"]), ("diabetes", ["T2DM", "DM2", "type 2 diabetes"]),
         ("coronary heart disease", ["CAD", "coronary artery disease"]), ("atrial fibrillation", ["AF", "afib"]),
         ("myocardial infarction", ["MI", "heart attack"]), ("stroke", ["CVA", "stroke"]),
         ("congestive heart failure", ["CHF", "heart failure"]), ("anemia", ["anaemia", "anemia"]),
         ("obesity", ["obesity", "obese"]), ("osteoporosis", ["osteoporosis"]),
         ("chronic sinusitis", ["chronic rhinosinusitis", "chronic sinusitis"]),
         ("seizure disorder", ["seizure d/o", "seizure disorder"]), ("epilepsy", ["epilepsy"]),
         ("alzheimer", ["Alzheimer dementia", "Alzheimer's"]), ("osteoarthritis of knee", ["knee OA", "OA of the knee"]),
         ("emphysema", ["emphysema"]), ("asthma", ["asthma"]), ("allergic rhinitis", ["allergic rhinitis", "hay fever"]),
         ("sprain of ankle", ["ankle sprain", "sprained ankle"]), ("fracture of forearm", ["forearm fx", "broken forearm"]),
         ("polyp of colon", ["colonic polyp", "colon polyp"]), ("malignant tumor of colon", ["colon ca", "colon cancer"]),
         ("metabolic syndrome", ["metabolic syndrome"]), ("hypertriglyceridemia", ["hypertriglyceridaemia", "high TGs"]),
         ("concussion", ["concussion"]), ("acute bronchitis", ["acute bronchitis", "bronchitis"]),
         ("viral sinusitis", ["viral sinusitis", "sinusitis"]), ("pharyngitis", ["viral pharyngitis", "sore throat"]),
         ("streptococcal sore throat", ["strep throat", "strep pharyngitis"]), ("otitis media", ["otitis media", "AOM"]),
         ("laceration of", ["laceration"]), ("appendicitis", ["appendicitis"]), ("drug overdose", ["overdose", "OD"])]
# conditions to inject as absent: wording, record-name words that would make it present
ABSENT_CONDS = [("hypothyroidism", ["thyroid"]), ("gout", ["gout"]), ("GERD", ["reflux", "gerd"]),
                ("CKD stage 3", ["kidney", "renal"]), ("COPD", ["obstructive", "emphysema", "copd"]),
                ("DVT", ["thrombosis", "embol"]), ("T2DM", ["diabet"]), ("AF", ["fibrillation"]),
                ("HTN", ["hypertens"]), ("CHF", ["heart failure"]), ("depression", ["depress"]),
                ("BPH", ["prostat"])]
PROCS = [("colonoscopy", ["colonoscopy", "scope"]), ("electrical cardioversion", ["DCCV", "cardioversion"]),
         ("spirometry", ["spirometry"]), ("chest x-ray", ["CXR", "chest film"]),
         ("polypectomy", ["polypectomy"]), ("suture open wound", ["laceration repair", "sutured"]),
         ("catheter ablation", ["ablation"]), ("partial resection of colon", ["partial colectomy", "hemicolectomy"]),
         ("appendectomy", ["appy", "appendectomy"]), ("bone immobilization", ["splinted", "splint applied"]),
         ("throat culture", ["throat swab", "throat cx"]), ("insertion of intrauterine", ["IUD placement", "IUD placed"]),
         ("electroencephalogram", ["EEG"]), ("thrombectomy", ["thrombectomy"]),
         ("chemotherapy", ["chemoradiation"]), ("mammography", ["mammogram"]), ("fecal occult", ["FOBT"])]
ABSENT_PROCS = [("cholecystectomy", ["cholecyst"]), ("CABG", ["bypass", "coronary artery"]),
                ("knee arthroscopy", ["arthroscop"]), ("EGD", ["gastroscop", "esophagogastro", "endoscop"]),
                ("TTE", ["echocardio"]), ("CT head", ["computed tomography", " ct "]),
                ("MRI L-spine", ["magnetic resonance", "mri"]), ("cardiac cath", ["catheterization", "angiograph"])]
VACCINES = [("influenza", ["flu shot", "influenza vaccine", "flu jab"]), ("td (adult)", ["Td booster", "tetanus booster"]),
            ("pneumococcal", ["Prevnar 13", "pneumococcal vaccine"]), ("zoster", ["shingles vaccine", "Zostavax"])]


# ---------------------------------------------------------------- note builder
class Note:
    def __init__(self):
        self.text = ""
        self.ents: list[dict] = []

    def add(self, s: str) -> None:
        self.text += s

    def ent(self, s: str, **label) -> None:
        start = len(self.text)
        self.text += s
        self.ents.append({"span": [start, len(self.text)], "text": s, **label})


def fmt(x: float, dec: int) -> str:
    return f"{x:.{dec}f}"


def clean(x: float, dec: int) -> bool:
    """Not near a rounding edge: the written value holds the record's value under any reasonable factor."""
    q = 10 ** -dec
    return abs(x - round(x, dec)) < 0.35 * q


def age(rec: Record, when: datetime) -> int:
    return int((when - rec.birth).days / 365.25)


def fdate(d: datetime, rng: random.Random, year=True) -> str:
    forms = [f"{d.month}/{d.day}/{d.year}", d.strftime("%-d %b %Y"), d.strftime("%b %-d, %Y")] if year \
        else [f"{d.month}/{d.day}", d.strftime("%-d %b"), d.strftime("%B %-d")]
    return rng.choice(forms)


class Probe:
    def __init__(self, rec: Record):
        self.rec = rec

    # --- record lookups
    def rows(self, key, lo=None, hi=None):
        test = ANALYTES[key][0]
        return [o for o in self.rec.obs if test(o.name) and (lo is None or lo <= o.time <= hi)]

    def held(self, key, written: float, dec: int, factor: float, lo, hi) -> bool:
        q = 0.5 * 10 ** -dec + 1e-9
        return any(abs(o.value * factor - written) <= q + 0.02 * 10 ** -dec for o in self.rows(key, lo, hi))

    def has_obs_words(self, words):
        return any(w in o.name.lower() for o in self.rec.obs for w in words)

    def cond_words(self, words):
        return any(w in c.name.lower() for c in self.rec.conds for w in words)

    def proc_words(self, words):
        return any(w in f" {p.name.lower()} " for p in self.rec.procs for w in words)

    def drug_key(self, name: str):
        low = name.lower()
        for g in DRUGS:
            if g in low:
                return g
        return None

    def has_generic(self, generic: str) -> bool:
        return any(generic in m.name.lower() for m in self.rec.meds)

    # --- value statements
    def value_ent(self, n: Note, rng, key, row, spelling, lo, hi, cls, inject=None, timetxt="", unit=None,
                  after=" "):
        """Write `spelling value unit` for record row `row`; inject one of value/unit or none."""
        _, _, units, dec = ANALYTES[key]
        if unit is None:
            unit = rng.choice(list(units))
        factor = units[unit]
        if key == "glu" and unit == "mmol/L" or key in ("tc", "ldl") and unit == "mmol/L":
            dec = 1
        if key == "cr" and unit == "umol/L":
            dec = 0
        if key == "wt" and unit == "lb":
            dec = rng.choice([0, 1])
        x = row.value * factor
        if not clean(x, dec):
            dec += 1
            if not clean(x, dec):
                return False
        if factor != 1 and round(x * 1.001, dec) != round(x * 0.999, dec):
            return False
        truth = f"{row.name} {row.value:.3f} {row.unit} at {row.time.isoformat()} ({row.ref})"
        label, kind, written, wunit = "consistent", None, x, unit
        if inject == "value":
            for _ in range(20):
                w = round(x * (1 + rng.choice([-1, 1]) * rng.uniform(0.12, 0.35)), dec)
                if w > 0 and not self.held(key, w, dec, factor, lo - DAY, hi + DAY) and abs(w - x) > 3 * 10 ** -dec:
                    written, label, kind = w, "inconsistent", "value"
                    break
        elif inject == "unit" and key in WRONG_UNIT:
            good, bad = WRONG_UNIT[key]
            if unit == good or (good == "" and unit in ("", "mg/dL")):
                raw = round(row.value, ANALYTES[key][3])
                written, wunit, dec, label, kind = raw, bad, ANALYTES[key][3], "inconsistent", "unit"
                bf = {"lb": 2.20462, "in": 1 / 2.54, "mmol/L": 1 / (38.67 if key in ("tc", "ldl") else 18.0),
                      "umol/L": 88.4, "mg/dL": 1}.get(bad, 1)
                if key in ("k", "hb"):
                    bf = None  # no sensible conversion; the number simply carries a wrong unit
                if bf and self.held(key, written, dec, bf, lo - DAY, hi + DAY):
                    return False
        if spelling:
            n.add(spelling + " ")
        sval = fmt(written, dec)
        label_d = dict(cls="vital" if key in VITALS else "lab", label=label, kind=kind, analyte=key, truth=truth)
        if key == "pain":
            n.ent(sval, **label_d)
            n.add("/10")
        else:
            n.ent(sval, **label_d)
            if wunit and wunit not in ("/10",):
                sep = "" if wunit == "%" or (wunit in ("kg", "lb", "cm", "in") and rng.random() < 0.4) else " "
                n.add(sep + wunit)
        if timetxt:
            n.add(" " + timetxt)
        n.add(after)
        return True

    def bp_ok(self, lo, hi):
        s, d = self.rows("sbp", lo, hi), self.rows("dbp", lo, hi)
        return bool(s and d and clean(s[0].value, 0) and clean(d[0].value, 0))

    def bp(self, n, rng, lo, hi, t0, inject=None, style=None):
        s = [o for o in self.rows("sbp", lo, hi)]
        d = [o for o in self.rows("dbp", lo, hi)]
        if not s or not d:
            return False
        s, d = s[0], d[0]
        style = style or rng.choice(["BP {} over {}", "BP {}/{}", "blood pressure {}/{}", "BP was {} over {}"])
        sv, dv = round(s.value), round(d.value)
        if not clean(s.value, 0) or not clean(d.value, 0):
            return False
        labs = [dict(cls="vital", label="consistent", kind=None, analyte="sbp",
                     truth=f"SBP {s.value:.2f} at {s.time.isoformat()} ({s.ref})"),
                dict(cls="vital", label="consistent", kind=None, analyte="dbp",
                     truth=f"DBP {d.value:.2f} at {d.time.isoformat()} ({d.ref})")]
        if inject == "value":
            nv = sv + rng.choice([-1, 1]) * rng.randint(14, 30)
            if not self.held("sbp", nv, 0, 1, lo - DAY, hi + DAY):
                sv = nv
                labs[0].update(label="inconsistent", kind="value")
        pre, mid = style.split("{}")[0], style.split("{}")[1]
        n.add(pre)
        n.ent(str(sv), **labs[0])
        n.add(mid)
        n.ent(str(dv), **labs[1])
        return True


def same_day(start: datetime, hours: int) -> datetime:
    """Note time a few hours after the visit, kept on the visit's calendar day ('today' = that day)."""
    t = start + timedelta(hours=hours)
    return t if t.date() == start.date() else start.replace(hour=23, minute=55)


def pick_inject(rng, rate=0.3, kinds=("value",)):
    return rng.choice(kinds) if rng.random() < rate else None


def cond_wording(name: str, rng):
    low = name.lower()
    for key, words in CONDS:
        if key in low and not (key == "diabetes" and "prediabetes" in low) and \
                not (key == "myocardial infarction" and "history of" in low):
            return rng.choice(words)
    return None


def proc_wording(name: str, rng):
    low = name.lower()
    for key, words in PROCS:
        if key in low:
            return rng.choice(words)
    return None


def vax_wording(name: str, rng):
    low = name.lower()
    for key, words in VACCINES:
        if low.startswith(key) or key in low:
            return rng.choice(words)
    return None


def drug_wording(p: Probe, med, rng, when=None):
    """'Zocor 10 mg qhs' from a record product; returns (name text, strength text, sig text)."""
    g = p.drug_key(med.name)
    if not g:
        return None
    import re
    m = re.search(r"(\d+(?:\.\d+)?)\s*(MG|mg)\b", med.name)
    if not m or med.name[m.end():].lstrip().startswith("/") or "/" in med.name[:m.start()][-3:]:
        return None
    strength = m.group(1)
    nm = rng.choice(DRUGS[g])
    if med.freq and tuple(med.freq) in FREQ:
        sig = rng.choice(FREQ[tuple(med.freq)])
    elif med.freq:
        return None
    else:
        sig = rng.choice(["daily", "qhs", "PRN", "qAM"])
    return nm, strength, sig


def med_ent(n: Note, p: Probe, rng, med, lo, hi, inject=None, with_mg=None, prefix=""):
    w = drug_wording(p, med, rng)
    if not w:
        return False
    nm, strength, sig = w
    truth = f"{med.name} ordered {med.time.date()} ({med.ref})"
    with_mg = rng.random() < 0.5 if with_mg is None else with_mg
    mg = " mg" if with_mg else ""
    g = p.drug_key(med.name)
    strengths = set()
    import re
    for m2 in p.rec.meds:
        if p.drug_key(m2.name) == g and m2.time <= hi:
            strengths |= set(re.findall(r"(\d+(?:\.\d+)?)\s*MG", m2.name, re.I))
    n.add(prefix)
    if inject == "wrong_drug":
        cands = [o for o in OTHER_DRUGS if not p.has_generic(o[1])]
        o = rng.choice(cands)
        n.ent(f"{o[0]} {o[2]}", cls="medication", label="inconsistent", kind="wrong_drug",
              truth=f"no {o[1]} in record; record has {med.name}")
        n.add(f" {o[3]}")
        return True
    if inject == "value":
        opts = [s for s in ["5", "10", "20", "40", "80", "25", "50", "100", "200", "12.5", "500"]
                if s not in strengths and s != strength]
        ns = rng.choice(opts)
        n.ent(f"{nm} {ns}{mg}", cls="medication", label="inconsistent", kind="value",
              truth=f"strengths of {g} in record: {sorted(strengths)}")
        n.add(f" {sig}")
        return True
    if inject == "unit":
        n.ent(f"{nm} {strength} mcg", cls="medication", label="inconsistent", kind="unit", truth=truth)
        n.add(f" {sig}")
        return True
    n.ent(f"{nm} {strength}{mg}", cls="medication", label="consistent", kind=None, truth=truth)
    n.add(f" {sig}")
    return True


def latest_meds(p: Probe, before: datetime):
    seen, out = set(), []
    for m in sorted(p.rec.meds, key=lambda m: m.time, reverse=True):
        g = p.drug_key(m.name)
        if m.time <= before and g and g not in seen:
            seen.add(g)
            out.append(m)
    return out


def problem_list(n: Note, p: Probe, rng, upto: datetime, sep=", ", inject_rate=0.25, maxn=5):
    conds, seen = [], set()
    for c in sorted(p.rec.conds, key=lambda c: c.time):
        if c.time <= upto:
            w = cond_wording(c.name, rng)
            if w and w.lower() not in seen:
                seen.add(w.lower())
                conds.append((w, c))
    conds = conds[-maxn:]
    items = [(w, "consistent", None, f"{c.name} onset {c.time.date()} ({c.ref})") for w, c in conds]
    if rng.random() < inject_rate * 2 or not items:
        absent = [a for a in ABSENT_CONDS if not p.cond_words(a[1]) and a[0].lower() not in seen]
        if absent:
            a = rng.choice(absent)
            items.insert(rng.randrange(len(items) + 1), (a[0], "inconsistent", "existence",
                                                         f"no condition matching {a[1]} in record"))
    for i, (w, lab, kind, truth) in enumerate(items):
        if i:
            n.add(sep)
        n.ent(w, cls="condition", label=lab, kind=kind, truth=truth)
    return bool(items)


def unverifiables(n: Note, p: Probe, rng, k=2):
    opts = [
        lambda: (n.add("FHx: father with "), n.ent("MI", cls="condition", label="unverifiable", kind=None,
                                                     truth="family history"), n.add(" at 58; mother "),
                 n.ent("T2DM", cls="condition", label="unverifiable", kind=None, truth="family history"), n.add(".\n")),
        lambda: (n.add("Sister was recently diagnosed with "), n.ent("colon cancer", cls="condition",
                                                                      label="unverifiable", kind=None,
                                                                      truth="family history"), n.add(".\n")),
        lambda: (n.add("Pt states her home "), n.ent("BP", cls="vital", label="unverifiable", kind=None,
                                                   truth="patient-reported"), n.add(" runs 120s-130s.\n")),
        lambda: (n.add("Denies "), n.ent("chest pain", cls="condition", label="unverifiable", kind=None,
                                         truth="negated"), n.add(", no hx of "),
                 n.ent("DVT", cls="condition", label="unverifiable", kind=None, truth="negated"), n.add(".\n")),
        lambda: (n.add("Allergic to "), n.ent("sulfa", cls="medication", label="unverifiable", kind=None,
                                              truth="allergy"), n.add(" (hives).\n")),
        lambda: (n.add("Outside lab (per pt) "), n.ent("A1c 6.8%", cls="lab", label="unverifiable", kind=None,
                                                      truth="outside result"), n.add(" last year.\n")),
        lambda: (n.add("Declined "), n.ent("Shingrix", cls="immunization", label="unverifiable", kind=None,
                                           truth="refused"), n.add(" again today.\n")),
        lambda: (n.add("Plan to recheck "), n.ent("TSH", cls="lab", label="unverifiable", kind=None, truth="plan"),
                 n.add(" and lipids in 3 months.\n")),
        lambda: (n.add("If BP stays >140, will add "), n.ent("lisinopril 10 mg", cls="medication",
                                                              label="unverifiable", kind=None,
                                                              truth="conditional plan"), n.add(".\n")),
        lambda: (n.add("Rule out "), n.ent("PE", cls="condition", label="unverifiable", kind=None,
                                           truth="uncertain"), n.add(" - low pretest probability.\n")),
    ]
    for f in rng.sample(opts, k):
        f()


# ---------------------------------------------------------------- note styles
def visit_encounter(p: Probe):
    encs = [e for e in p.rec.encs if e.cls == "AMB" and p.rows("k", e.start - timedelta(hours=1), e.start + timedelta(hours=1))
            and p.rows("wt", e.start - timedelta(hours=1), e.start + timedelta(hours=1))]
    return encs[-1] if encs else None


def prev_visit(p: Probe, v):
    encs = [e for e in p.rec.encs if e.start < v.start - 30 * DAY and p.rows("wt", e.start - timedelta(hours=1), e.start + timedelta(hours=1))]
    return encs[-1] if encs else None


def labs_line(n: Note, p: Probe, rng, lo, hi, keys, rate, kinds=("value", "value", "unit"), timetxt=""):
    written = 0
    for key in keys:
        rows = p.rows(key, lo, hi)
        if not rows:
            continue
        sp = rng.choice(ANALYTES[key][1])
        inj = pick_inject(rng, rate, kinds)
        if p.value_ent(n, rng, key, rows[0], sp, lo, hi, "lab", inject=inj, timetxt=timetxt, after=", "):
            written += 1
    if written:
        n.text = n.text.rstrip(", ")
    return written


def absent_obs(n: Note, p: Probe, rng, sep=", "):
    cands = [a for a in ABSENT_OBS if not p.has_obs_words(a[2])]
    if not cands:
        return
    a = rng.choice(cands)
    n.add(sep)
    n.add(a[0] + " ")
    cls = "vital" if a[0] in ("SpO2", "HR", "RR") else "lab"
    n.ent(a[1], cls=cls, label="inconsistent", kind="existence", truth=f"no observation matching {a[2]}")


def progress_note(p: Probe, rng):
    v = visit_encounter(p)
    lo, hi = v.start - timedelta(hours=1), v.start + timedelta(hours=1)
    t = same_day(v.start, 2)
    n = Note()
    rec = p.rec
    sex = "M" if rec.gender == "male" else "F"
    n.add(f"PROGRESS NOTE\nS: {age(rec, t)}{sex} seen for annual f/u. PMH: ")
    problem_list(n, p, rng, t)
    n.add(".\n")
    unverifiables(n, p, rng, 2)
    meds = latest_meds(p, t)[:4]
    if meds:
        n.add(rng.choice(["Meds: ", "Current meds: ", "Taking: "]))
        for i, m in enumerate(meds):
            med_ent(n, p, rng, m, lo, hi, inject=pick_inject(rng, 0.3, ("value", "wrong_drug", "unit")),
                    prefix=", " if i else "")
        n.add(".\n")
    n.add("O: ")
    p.bp(n, rng, lo, hi, t, inject=pick_inject(rng, 0.3))
    n.add(", ")
    wt = p.rows("wt", lo, hi)[0]
    p.value_ent(n, rng, "wt", wt, rng.choice(["wt", "weight"]), lo, hi, "vital",
                inject=pick_inject(rng, 0.35, ("value", "unit")), after="")
    pv = prev_visit(p, v)
    if pv and rng.random() < 0.7:
        pw = p.rows("wt", pv.start - timedelta(hours=1), pv.start + timedelta(hours=1))[0]
        n.add(" (" + ("down" if pw.value > wt.value else "up") + " from ")
        p.value_ent(n, rng, "wt", pw, "", pv.start - timedelta(hours=1), pv.start + timedelta(hours=1), "vital",
                    unit="kg", timetxt="at last visit", after=")")
    for key, sp in (("bmi", "BMI"), ("temp", rng.choice(["T", "temp"])), ("pain", "pain")):
        rows = p.rows(key, lo, hi)
        if rows:
            n.add(", ")
            p.value_ent(n, rng, key, rows[0], sp, lo, hi, "vital", inject=pick_inject(rng, 0.25), after="")
    if rng.random() < 0.5:
        absent_obs(n, p, rng)
    n.add(".\n")
    n.add(rng.choice(["BMP notable for ", "Labs today: ", "Chem: "]))
    labs_line(n, p, rng, lo, hi, ["na", "k", "cl", "co2", "bun", "cr", "glu", "ca"], 0.25)
    n.add(".\n")
    if p.rows("ldl", lo, hi) or p.rows("a1c", lo, hi) or p.rows("hb", lo, hi):
        n.add(rng.choice(["Also ", "Other results: "]))
        labs_line(n, p, rng, lo, hi, ["tc", "ldl", "hdl", "tg", "a1c", "hb", "plt", "egfr"], 0.25)
        n.add(".\n")
    imms = [i for i in p.rec.imms if lo <= i.time <= hi]
    if imms and vax_wording(imms[0].name, rng):
        n.add(rng.choice(["Given ", "Administered "]))
        n.ent(vax_wording(imms[0].name, rng), cls="immunization", label="consistent", kind=None,
              truth=f"{imms[0].name} {imms[0].time.isoformat()} ({imms[0].ref})")
        n.add(" today.\n")
    elif rng.random() < 0.5 and not any("pneumococcal" in i.name.lower() for i in p.rec.imms):
        n.add("Given ")
        n.ent("Pneumovax 23", cls="immunization", label="inconsistent", kind="existence",
              truth="no pneumococcal vaccine in record")
        n.add(" today.\n")
    n.add("A/P:\n1. Continue current regimen. Recheck BMP and A1c in 6 months.\n")
    n.add("2. Counseled on diet and exercise; goal LDL < 100.\n")
    return n, t, "Progress note", v.id


def nursing_handoff(p: Probe, rng):
    v = visit_encounter(p)
    t = same_day(v.start, 3)
    n = Note()
    n.add(f"NURSING HANDOFF (SBAR) {t.strftime('%H%M')}\nS: {p.rec.name.split()[0]} in clinic for routine review, "
          "comfortable.\nB: hx of ")
    problem_list(n, p, rng, t, sep=", ", maxn=3)
    n.add(".\nA:\n")
    for key, sp in (("sbp", None), ("wt", "wt"), ("temp", "T"), ("pain", "pain score"), ("ht", "ht")):
        rows = p.rows(key, v.start - timedelta(hours=1), v.start + timedelta(hours=1))
        if not rows:
            continue
        row = rows[0]
        if key == "sbp" and not p.bp_ok(row.time - timedelta(minutes=1), row.time + timedelta(minutes=1)):
            continue
        inj = pick_inject(rng, 0.3, ("time", "value", "time"))
        clock = row.time + timedelta(minutes=rng.choice([0, 2, 5, -3]))
        shifted = inj == "time"
        if shifted:
            clock = row.time - timedelta(hours=rng.choice([1, 2]))
            if any(abs((o.time - clock).total_seconds()) < 3600 for o in p.rows(key)):
                shifted = False
                clock = row.time
        ctext = rng.choice([clock.strftime("%H%M"), clock.strftime("%H:%M"), clock.strftime("%H%M") + "h"])
        n.add(f"- {ctext}: ")
        lo, hi = clock - timedelta(minutes=20), clock + timedelta(minutes=20)
        start = len(n.ents)
        if key == "sbp":
            p.bp(n, rng, row.time - timedelta(minutes=1), row.time + timedelta(minutes=1), t,
                 style=rng.choice(["BP {}/{}", "BP {} over {}"]))
        else:
            p.value_ent(n, rng, key, row, sp, lo, hi, "vital", after="", unit=None if key != "ht" else "cm")
        if shifted:
            for e in n.ents[start:]:
                if e["label"] == "consistent":
                    e.update(label="inconsistent", kind="time",
                             truth=e["truth"] + f"; written {ctext}")
        elif inj == "value" and key != "sbp" and n.ents[start:]:
            pass
        n.add("\n")
    hr = v.start.hour
    n.add("Labs resulted " + ("this AM" if hr < 12 else "this afternoon" if hr < 18 else "this evening") + ": ")
    labs_line(n, p, rng, v.start - timedelta(hours=1), v.start + timedelta(hours=1), ["k", "na", "glu", "cr", "hb"], 0.3)
    n.add(".\n")
    unverifiables(n, p, rng, 1)
    n.add("R: d/c home when ride arrives; recheck BP at next visit.\n")
    return n, t, "Nursing note", v.id


def clinic_letter(p: Probe, rng):
    v = visit_encounter(p)
    k = rng.choice([2, 3, 14])
    t = v.start + timedelta(days=k, hours=1)
    lo, hi = v.start - timedelta(hours=1), v.start + timedelta(hours=1)
    rec = p.rec
    pr, pos = ("Mr", "his") if rec.gender == "male" else ("Ms", "her")
    n = Note()
    when = "two weeks ago" if k == 14 else "on " + fdate(v.start, rng, year=False)
    n.add(f"Dear Dr Okafor,\n\nRe: {pr} {rec.name}, age {age(rec, t)}\n\nI reviewed {pr} {rec.name.split()[-1]} in "
          f"clinic {when}. {pos.capitalize()} active problems are ")
    problem_list(n, p, rng, t, sep=", ", maxn=4)
    n.add(".\n\n")
    if p.bp_ok(lo, hi):
        n.add(f"At that visit {pos} ")
        p.bp(n, rng, lo, hi, t, inject=pick_inject(rng, 0.3), style="blood pressure was {} over {}")
        n.add(f" and {pr == 'Mr' and 'he' or 'she'} weighed ")
    else:
        n.add(f"At that visit {pr == 'Mr' and 'he' or 'she'} weighed ")
    mark = len(n.text)
    if not p.value_ent(n, rng, "wt", p.rows("wt", lo, hi)[0], "", lo, hi, "vital",
                       inject=pick_inject(rng, 0.35, ("value", "unit")), after=". "):
        n.text = n.text[:mark].rstrip().removesuffix("weighed").rstrip().removesuffix("and").rstrip() + ". "
    n.add(f"Bloods taken {when} showed ")
    labs_line(n, p, rng, lo, hi, ["a1c", "ldl", "cr", "egfr", "k", "hb"], 0.3)
    n.add(".\n\n")
    past = [x for x in p.rec.procs if x.time < v.start and proc_wording(x.name, rng)]
    if past or rng.random() < 0.5:
        n.add("Past procedures: ")
        items = []
        for x in past[-3:]:
            items.append(("c", x))
        if rng.random() < 0.6:
            items.append(("absent", None))
        for i, (kind, x) in enumerate(items):
            if i:
                n.add("; ")
            if kind == "absent":
                a = rng.choice([a for a in ABSENT_PROCS if not p.proc_words(a[1])])
                yr = v.start.year - rng.randint(1, 6)
                n.ent(a[0], cls="procedure", label="inconsistent", kind="existence",
                      truth=f"no procedure matching {a[1]}")
                n.add(f" ({yr})")
                continue
            inj = pick_inject(rng, 0.3, ("time",))
            yr = x.time.year
            if inj == "time":
                ny = yr + rng.choice([-3, -2, 2])
                same = [y for y in p.rec.procs if proc_wording(y.name, seeded("x")) is not None and
                        y.name == x.name and y.time.year == ny]
                if not same and ny < t.year:
                    n.ent(proc_wording(x.name, rng), cls="procedure", label="inconsistent", kind="time",
                          truth=f"{x.name} {x.time.date()} ({x.ref}); written {ny}")
                    n.add(f" ({ny})")
                    continue
            n.ent(proc_wording(x.name, rng), cls="procedure", label="consistent", kind=None,
                  truth=f"{x.name} {x.time.date()} ({x.ref})")
            n.add(" (" + (str(yr) if rng.random() < 0.5 else x.time.strftime("%B %Y")) + ")")
        n.add(".\n")
    meds = latest_meds(p, t)[:3]
    if meds:
        n.add(f"{pos.capitalize()} current medication: ")
        for i, m in enumerate(meds):
            med_ent(n, p, rng, m, lo, t, inject=pick_inject(rng, 0.3, ("value", "wrong_drug")),
                    prefix=", " if i else "", with_mg=True)
        n.add(".\n")
    unverifiables(n, p, rng, 2)
    n.add("\nI have suggested we review again in six months.\n\nYours sincerely,\nDr A. Lindqvist\n")
    return n, t, "Clinic letter", None


def acute_encounter(p: Probe):
    encs = [e for e in p.rec.encs if e.cls in ("EMER", "IMP")
            and ([c for c in p.rec.conds if c.enc == e.id and cond_wording(c.name, seeded("x"))]
                 or [x for x in p.rec.procs if x.enc == e.id and proc_wording(x.name, seeded("x"))])]
    return encs[-1] if encs else None


def ed_or_discharge(p: Probe, rng):
    e = acute_encounter(p)
    rec = p.rec
    disch = e.cls == "IMP" or (e.end - e.start) > timedelta(days=1)
    t = e.end if disch else e.start + timedelta(hours=2)
    n = Note()
    lo, hi = (e.start - timedelta(hours=12), e.end + timedelta(hours=12)) if disch else \
        (e.start - DAY, t + timedelta(hours=12))
    dx = [c for c in p.rec.conds if c.enc == e.id and cond_wording(c.name, rng)]
    procs = [x for x in p.rec.procs if x.enc == e.id and proc_wording(x.name, rng)]
    if disch:
        n.add(f"DISCHARGE SUMMARY\nAdmitted: {fdate(e.start, rng)}   Discharged: {fdate(e.end, rng)}\n"
              "Discharge diagnoses: ")
    else:
        n.add(f"ED NOTE\n{age(rec, t)}{'M' if rec.gender == 'male' else 'F'} presenting at "
              f"{e.start.strftime('%H%M')} with acute complaint. Diagnosis: ")
    for i, c in enumerate(dx[:2]):
        n.add(", " if i else "")
        n.ent(cond_wording(c.name, rng), cls="condition", label="consistent", kind=None,
              truth=f"{c.name} onset {c.time.isoformat()} ({c.ref})")
    if rng.random() < 0.5 or not dx:
        a = rng.choice([a for a in ABSENT_CONDS if not p.cond_words(a[1])])
        n.add(", " if dx else "")
        n.ent(a[0], cls="condition", label="inconsistent", kind="existence", truth=f"no condition matching {a[1]}")
    n.add(".\nPMH: ")
    problem_list(n, p, rng, e.start - DAY, maxn=3, inject_rate=0.2)
    n.add(".\n")
    hm = latest_meds(p, e.start - DAY)[:3]
    if hm:
        n.add("Home meds: ")
        for i, m in enumerate(hm):
            med_ent(n, p, rng, m, lo, hi, inject=pick_inject(rng, 0.25, ("value", "wrong_drug")),
                    prefix=", " if i else "")
        n.add(".\n")
    n.add("Hospital course: " if disch else "ED course: ")
    for x in procs[:3]:
        day = (x.time.date() - e.start.date()).days + 1
        inj = pick_inject(rng, 0.3, ("time",))
        if disch:
            wtime = rng.choice([f"on HD #{day}", f"on {fdate(x.time, rng, year=False)}", "on admission"
                                if x.time - e.start < timedelta(hours=12) else f"on HD #{day}"])
            shift = rng.choice([-2, 2, 3])
            other = x.time + shift * DAY
            if inj == "time" and e.start - timedelta(hours=12) <= other <= e.end and \
                    not any(y.name == x.name and y.time.date() == other.date() for y in p.rec.procs):
                wtime = f"on {fdate(other, rng, year=False)}"
            elif inj == "time":
                inj = None
        else:
            clock = x.time
            if inj == "time":
                clock = x.time + timedelta(hours=rng.choice([-2, 1, 2]))
                if clock > t or any(y.name == x.name and abs(y.time - clock) < timedelta(hours=1) for y in p.rec.procs):
                    inj, clock = None, x.time
            wtime = "at " + clock.strftime(rng.choice(["%H%M", "%H:%M"]))
        n.add(rng.choice(["underwent ", "had ", "s/p "]))
        n.ent(proc_wording(x.name, rng), cls="procedure", label="inconsistent" if inj else "consistent",
              kind="time" if inj else None, truth=f"{x.name} {x.time.isoformat()} ({x.ref}); written {wtime}")
        n.add(f" {wtime}. ")
    if rng.random() < 0.5:
        a = rng.choice([a for a in ABSENT_PROCS if not p.proc_words(a[1])])
        n.add("Had ")
        n.ent(a[0], cls="procedure", label="inconsistent", kind="existence", truth=f"no procedure matching {a[1]}")
        n.add(" which was unremarkable. ")
    given = [m for m in p.rec.meds if m.enc == e.id and drug_wording(p, m, seeded("x"))]
    for m in given[:2]:
        n.add("Started ")
        med_ent(n, p, rng, m, lo, hi, inject=pick_inject(rng, 0.3, ("value", "wrong_drug", "unit")))
        n.add(f" on {fdate(m.time, rng, year=False)}. ")
    if rng.random() < 0.5:
        n.add("VS: ")
        absent_obs(n, p, rng, sep="")
        n.add(". ")
    n.add("\n")
    unverifiables(n, p, rng, 2)
    n.add("Disposition: home with PCP follow-up in 1 week; return precautions given.\n")
    return n, t, "Discharge summary" if disch else "ED note", e.id


def pharmacy_note(p: Probe, rng):
    meds = [m for m in p.rec.meds if drug_wording(p, m, seeded("x"))]
    last = max(meds, key=lambda m: m.time)
    t = last.time + timedelta(days=rng.choice([1, 3]), hours=2)
    lo, hi = t - DAY, t + DAY
    n = Note()
    n.add(f"CLINICAL PHARMACIST NOTE\nPt {p.rec.name}. Reviewed fill history with patient.\n"
          "Active list:\n")
    for m in latest_meds(p, t)[:6]:
        med_ent(n, p, rng, m, lo, hi, inject=pick_inject(rng, 0.3, ("value", "wrong_drug", "unit")), prefix="- ")
        n.add("\n")
    n.add("Most recent change: ")
    # drug started: the order must fall on the written day
    inj = pick_inject(rng, 0.35, ("time",))
    day = last.time
    if inj == "time":
        day = last.time - rng.choice([3, 5, 8]) * DAY
        if any(p.drug_key(m.name) == p.drug_key(last.name) and m.time.date() == day.date() for m in p.rec.meds):
            inj, day = None, last.time
    start = len(n.ents)
    med_ent(n, p, rng, last, day, day, prefix="started ")
    for e in n.ents[start:]:
        if inj and e["label"] == "consistent":
            e.update(label="inconsistent", kind="time", truth=e["truth"] + f"; written {day.date()}")
    n.add(f" on {fdate(day, rng)}.\n")
    n.add("Relevant dx: ")
    problem_list(n, p, rng, t, maxn=3)
    n.add(".\n")
    unverifiables(n, p, rng, 2)
    n.add("Recommend: continue current regimen; will call pt in 1 wk re adherence.\n")
    return n, t, "Pharmacy note", None


STYLES_A = [progress_note, clinic_letter, nursing_handoff]


def build(data: str):
    files = sorted(glob.glob(os.path.join(data, "*.json")))
    recs = []
    for f in files:
        r = load(f)
        pr = Probe(r)
        if visit_encounter(pr):
            recs.append(pr)
    rng0 = seeded("consistency-blind/patients")
    chosen = sorted(rng0.sample(recs, min(30, len(recs))), key=lambda q: q.rec.pid)
    out = []
    for i, p in enumerate(chosen):
        styles = [STYLES_A[i % 3]]
        if acute_encounter(p):
            styles.append(ed_or_discharge)
        if len([m for m in p.rec.meds if drug_wording(p, m, seeded("x"))]) >= 2 and \
                (len(styles) == 1 or i % 2 == 0):
            styles.append(pharmacy_note)
        if len(styles) == 1:
            styles.append(STYLES_A[(i + 1) % 3])
        for st in styles:
            rng = seeded(f"consistency-blind/{p.rec.pid}/{st.__name__}")
            n, t, ntype, enc = st(p, rng)
            out.append({"id": f"{p.rec.pid[:8]}-{st.__name__}", "patient": p.rec.pid, "time": t.isoformat(),
                        "type": ntype, "encounter": f"Encounter/{enc}" if enc else None, "style": st.__name__,
                        "text": n.text, "entities": n.ents})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/synthea-r4")
    ap.add_argument("--out", default="evals/consistency_blind/notes.jsonl")
    a = ap.parse_args(argv)
    notes = build(a.data)
    with open(a.out, "w", encoding="utf-8") as f:
        for n in notes:
            f.write(json.dumps(n, ensure_ascii=False) + "\n")
    from collections import Counter
    c = Counter(e["label"] for n in notes for e in n["entities"])
    print(f"{len(notes)} notes, {len({n['patient'] for n in notes})} patients, {dict(c)}")


if __name__ == "__main__":
    main()
