"""Build the probe_admission question set: admission-time questions in four clinical voices.

Reads the raw FHIR data of ``../shared/data/synthea-r4`` (transaction bundles, ``urn:uuid:``
references) and ``../shared/data/synthea-bulk-10`` (Bulk NDJSON, ``Patient/<id>`` references, notes as
base64 text) with orjson, resolves the references itself and imports nothing from fhirqa. Every random
choice comes from an RNG seeded by a string, so the same data gives the same bytes.

Usage: python evals/probe_admission/build.py [--data DIR] [--check]
"""

from __future__ import annotations

import argparse
import base64
import calendar
import glob
import json
import os
import random
import re
import sys
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "questions.jsonl")

# ---------------------------------------------------------------- drug classes (clinical knowledge)
# Ingredient substrings, lower case, matched inside the prescription's name. Synthea's misspelling
# "Simvistatin" is listed with the statins on purpose (it is simvastatin).
CLASSES = {
    "statin": ["simvastatin", "simvistatin", "atorvastatin", "rosuvastatin", "pravastatin", "lovastatin",
               "pitavastatin", "fluvastatin"],
    "anticoagulant": ["warfarin", "heparin", "enoxaparin", "dalteparin", "fondaparinux", "apixaban",
                      "rivaroxaban", "dabigatran", "edoxaban"],
    "antiplatelet": ["clopidogrel", "prasugrel", "ticagrelor", "dipyridamole"],
    "beta blocker": ["metoprolol", "atenolol", "carvedilol", "propranolol", "bisoprolol", "labetalol",
                     "nadolol", "nebivolol"],
    "ACE inhibitor": ["lisinopril", "captopril", "enalapril", "ramipril", "benazepril", "quinapril",
                      "fosinopril", "perindopril", "trandolapril"],
    "insulin": ["insulin"],
    "NSAID": ["ibuprofen", "naproxen", "diclofenac", "meloxicam", "celecoxib", "ketorolac", "indomethacin"],
    "opioid": ["meperidine", "oxycodone", "hydrocodone", "morphine", "hydromorphone", "fentanyl", "codeine",
               "tramadol"],
    "diuretic": ["hydrochlorothiazide", "furosemide", "lasix", "chlorthalidone", "spironolactone",
                 "bumetanide", "torsemide"],
}
# "Blood thinner" = anticoagulants + P2Y12 antiplatelets; a "no" also needs none of the guard drugs
# (aspirin, alteplase), which some clinicians would count.
BLOOD_THINNER = CLASSES["anticoagulant"] + CLASSES["antiplatelet"]
GUARD = {
    "statin": [],
    "anticoagulant": CLASSES["antiplatelet"] + ["aspirin", "alteplase"],
    "blood thinner": ["aspirin", "alteplase"],
    "beta blocker": [],
    "ACE inhibitor": [],
    "insulin": [],
    "NSAID": ["aspirin"],
    "opioid": [],
    "diuretic": [],
}
CLASS_WORDS = {
    "statin": ["a statin", "any statin", "statin therapy"],
    "anticoagulant": ["an anticoagulant", "anticoagulation", "any anticoagulant"],
    "blood thinner": ["blood thinners", "any blood thinners", "a blood thinner"],
    "beta blocker": ["a beta blocker", "a BB", "any beta-blocker"],
    "ACE inhibitor": ["an ACE inhibitor", "an ACEi", "any ACE-I"],
    "insulin": ["insulin"],
    "NSAID": ["an NSAID", "NSAIDs"],
    "opioid": ["opioids", "an opioid", "narcotics"],
    "diuretic": ["a diuretic", "a water pill"],
}

# Single drugs a pharmacist names: spoken name -> substrings of the prescription name.
DRUGS = {
    "simvastatin": ["simvastatin", "simvistatin"], "atorvastatin": ["atorvastatin"],
    "HCTZ": ["hydrochlorothiazide"], "lisinopril": ["lisinopril"], "metformin": ["metformin"],
    "Plavix": ["clopidogrel"], "warfarin": ["warfarin"], "metoprolol": ["metoprolol"],
    "insulin": ["insulin"], "amlodipine": ["amlodipine"], "alendronate": ["alendron"],
    "digoxin": ["digoxin"], "verapamil": ["verapamil"], "nitroglycerin": ["nitroglycerin"],
    "levothyroxine": ["levothyroxine"], "albuterol": ["albuterol"], "Epogen": ["epoetin"],
    "tacrolimus": ["tacrolimus"], "galantamine": ["galantamine"], "donepezil": ["donepezil"],
    "naproxen": ["naproxen"], "furosemide": ["furosemide", "lasix"], "captopril": ["captopril"],
    "budesonide": ["budesonide"], "fluticasone": ["fluticasone"], "methotrexate": ["methotrexate"],
}

# Conditions a clinician asks about by shorthand: word -> regexes on the condition name (lower case);
# guard regexes: a "no" is not asked when one of them matches (a near diagnosis).
HX = {
    "HTN": ([r"\bhypertension"], [r"hypertens"]),
    "diabetes": ([r"\bdiabetes"], [r"prediabetes", r"diabet"]),
    "CHF": ([r"heart failure"], []),
    "afib": ([r"atrial fibrillation"], [r"arrhythm"]),
    "CAD": ([r"coronary (heart|artery) disease"], [r"myocardial infarction", r"angina"]),
    "COPD": ([r"chronic obstructive", r"emphysema"], [r"bronchitis"]),
    "asthma": ([r"asthma"], []),
    "CKD": ([r"chronic kidney disease"], [r"kidney", r"renal", r"nephropathy"]),
    "stroke": ([r"\bstroke", r"cerebrovascular accident"], [r"cerebrovascular", r"transient ischemic"]),
    "MI": ([r"myocardial infarction"], [r"coronary", r"angina"]),
    "seizures": ([r"seizure", r"epilepsy"], []),
    "HLD": ([r"hyperlipidemia"], [r"lipid", r"cholesterol", r"triglycerid"]),
    "osteoporosis": ([r"osteoporosis"], [r"osteopenia"]),
    "OSA": ([r"sleep apnea"], []),
    "anemia": ([r"anemia"], []),
    "osteoarthritis": ([r"osteoarthritis"], [r"arthritis"]),
    "depression": ([r"depressi"], []),
    "obesity": ([r"obesity", r"obese"], [r"body mass index", r"overweight"]),
}

LOINC = {
    "cr": "38483-4", "k": "6298-4", "bmi": "39156-5", "a1c": "4548-4", "sbp": "8480-6", "dbp": "8462-4",
    "wt": "29463-7", "ldl": "18262-6", "hgb": "718-7", "glu": "2339-0", "na": "2947-0", "egfr": "33914-3",
    "smoke": "72166-2",
}
# Items nobody in these records has (checked by the builder before asking): asked as no-data.
ABSENT = {
    "HR": ["8867-4"], "SpO2": ["2708-6", "59408-5"], "troponin": ["6598-7", "10839-9", "89579-7", "49563-0"],
    "lactate": ["2524-7", "32693-4"], "INR": ["6301-6", "34714-6"], "TSH": ["3016-3", "11580-8"],
    "BNP": ["30934-4", "42637-9"], "Mg": ["19123-9", "2601-3"], "lipase": ["3040-3"],
}


def T(s):
    """Parse an ISO date or datetime string into an aware datetime (dates at 00:00 UTC)."""
    if s is None:
        return None
    if len(s) == 10:
        return datetime.fromisoformat(s).replace(tzinfo=UTC)
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def cname(cc):
    """Name of a CodeableConcept as the record spells it: text, else the first display."""
    if not cc:
        return None
    return cc.get("text") or (cc.get("coding") or [{}])[0].get("display")


def add_months(d, n):
    y, m = divmod(d.month - 1 + n, 12)
    y += d.year
    m += 1
    return d.replace(year=y, month=m, day=min(d.day, calendar.monthrange(y, m)[1]))


class P:
    """One patient's facts, normalised by hand from the raw resources."""

    def __init__(self, pid, source):
        self.id, self.source = pid, source
        self.patient = None
        self.cond, self.meds, self.enc, self.obs = [], [], [], []
        self.allergy, self.imm, self.proc, self.notes = [], [], [], []
        self.times = []

    def add(self, r):
        t = r["resourceType"]
        if t == "Patient":
            self.patient = r
        elif t == "Condition":
            ver = ((r.get("verificationStatus") or {}).get("coding") or [{}])[0].get("code")
            if ver in ("refuted", "entered-in-error"):
                return
            cs = ((r.get("clinicalStatus") or {}).get("coding") or [{}])[0].get("code")
            self.cond.append(dict(name=cname(r["code"]), onset=T(r.get("onsetDateTime")),
                                  abate=T(r.get("abatementDateTime")), status=cs, id=r["id"]))
        elif t == "MedicationRequest":
            self.meds.append(dict(name=cname(r.get("medicationCodeableConcept")), t=T(r.get("authoredOn")),
                                  status=r.get("status"), id=r["id"]))
        elif t == "Encounter":
            p = r.get("period") or {}
            self.enc.append(dict(cls=r["class"]["code"], start=T(p.get("start")), end=T(p.get("end")),
                                 id=r["id"]))
        elif t == "Observation":
            tm = T(r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued"))
            code = r["code"]["coding"][0]["code"]
            if "valueQuantity" in r:
                self.obs.append(dict(code=code, t=tm, v=r["valueQuantity"].get("value"), id=r["id"]))
            elif "valueCodeableConcept" in r:
                self.obs.append(dict(code=code, t=tm, v=None, s=cname(r["valueCodeableConcept"]), id=r["id"]))
            for c in r.get("component") or []:
                if "valueQuantity" in c:
                    self.obs.append(dict(code=c["code"]["coding"][0]["code"], t=tm,
                                         v=c["valueQuantity"].get("value"), id=r["id"]))
        elif t == "AllergyIntolerance":
            self.allergy.append(dict(name=cname(r["code"]), cat=r.get("category"), id=r["id"]))
        elif t == "Immunization":
            self.imm.append(dict(name=cname(r["vaccineCode"]), t=T(r.get("occurrenceDateTime")), id=r["id"]))
        elif t == "Procedure":
            tm = r.get("performedDateTime") or (r.get("performedPeriod") or {}).get("start")
            self.proc.append(dict(name=cname(r["code"]), t=T(tm), id=r["id"]))
        elif t == "DocumentReference":
            for c in r.get("content") or []:
                a = c.get("attachment") or {}
                if a.get("data") and (a.get("contentType") or "").startswith("text/plain"):
                    self.notes.append(dict(t=T(r.get("date")), text=base64.b64decode(a["data"]).decode("utf-8"),
                                           id=r["id"]))
        else:
            return
        for k in ("effectiveDateTime", "issued", "authoredOn", "onsetDateTime", "abatementDateTime",
                  "recordedDate", "occurrenceDateTime", "performedDateTime", "date"):
            if isinstance(r.get(k), str):
                self.times.append(T(r[k]))
        for k in ("period", "performedPeriod", "effectivePeriod"):
            for kk in ("start", "end"):
                if (r.get(k) or {}).get(kk):
                    self.times.append(T(r[k][kk]))

    # ---------------------------------------------------------------- derived facts
    def first_name(self):
        n = (self.patient.get("name") or [{}])[0]
        return re.sub(r"\d+", "", (n.get("given") or ["the patient"])[0])

    def pron(self):
        return ("she", "her") if self.patient.get("gender") == "female" else ("he", "his")

    def values(self, code, start=None, end=None):
        end = end or self.now
        return sorted((o for o in self.obs if o["code"] == code and o.get("v") is not None and o["t"] <= end
                       and (start is None or o["t"] >= start)), key=lambda o: o["t"])

    def meds_match(self, subs, active=None):
        out = []
        for m in self.meds:
            n = (m["name"] or "").lower()
            if any(s in n for s in subs) and (active is None or (m["status"] == "active") == active):
                out.append(m)
        return out

    def stays(self):
        return sorted((e for e in self.enc if e["cls"] == "IMP" and e["start"] <= self.now), key=lambda e: e["start"])


def load(data):
    pats = {}
    for f in sorted(glob.glob(os.path.join(data, "synthea-r4", "*.json"))):
        b = orjson.loads(open(f, "rb").read())
        if b.get("resourceType") != "Bundle":
            continue
        pid = next(e["resource"]["id"] for e in b["entry"] if e["resource"]["resourceType"] == "Patient")
        p = pats.setdefault(pid, P(pid, "r4"))
        for e in b["entry"]:  # one patient per bundle: every clinical resource is hers
            p.add(e["resource"])
    bulk = os.path.join(data, "synthea-bulk-10")
    for f in sorted(glob.glob(os.path.join(bulk, "*.ndjson"))):
        for line in open(f, "rb"):
            r = orjson.loads(line)
            if "resourceType" not in r:
                continue
            if r["resourceType"] == "Patient":
                pid = r["id"]
            else:
                ref = (r.get("subject") or r.get("patient") or {}).get("reference", "")
                if not ref.startswith("Patient/"):
                    continue
                pid = ref.split("/", 1)[1]
            pats.setdefault(pid, P(pid, "bulk")).add(r)
    for pid, p in pats.items():
        last = max(p.times)
        rng = random.Random("now:" + pid)  # noqa: S311 - seeded for reproducible draws
        days = [k for k in range(3, 22) if (last + timedelta(days=k)).day <= 28]
        d = (last + timedelta(days=rng.choice(days))).date()
        p.now = datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
    return [pats[k] for k in sorted(pats)]


def r4(x):
    return round(x, 4)


def dstr(t):
    return t.astimezone(UTC).date().isoformat()


def human_date(d, rng):
    return rng.choice([d.isoformat(), f"{calendar.month_abbr[d.month]} {d.day}, {d.year}",
                       f"{d.month}/{d.day}/{d.year}"])


def robust(p, fn, months=None, days=None):
    """fn(start) over a window ending at now; None unless the answer is the same with start ±7 days."""
    start = add_months(p.now, -months) if months else p.now - timedelta(days=days)
    outs = [fn(start + timedelta(days=k)) for k in (-7, 0, 7)]
    return outs[1] if outs[0] == outs[1] == outs[2] else None


# ---------------------------------------------------------------- generators
# Each generator takes (p, rng) and yields dicts with question, answer_type, expected, status, refs, template.

def Q(question, atype, expected, template, refs=(), status="answered", tol=None):
    if tol is None:
        tol = 0.01 if atype == "number" else 0
    return dict(question=question, answer_type=atype, expected=expected, expected_status=status,
                tolerance=tol, gold_refs=list(refs), template=template)


def g_allergies(p, rng):
    names = sorted({a["name"] for a in p.allergy})
    she, her = p.pron()
    q = rng.choice(["allergies?", "allergy list?", f"NKDA or does {she} have allergies listed?",
                    f"What is {p.first_name()} allergic to?", "allergy list pls"])
    yield Q(q, "list", names, "allergies/list" + ("" if names else "-empty"), [f"AllergyIntolerance/{a['id']}" for a in p.allergy])


def g_allergy_any(p, rng):
    she, her = p.pron()
    q = rng.choice(["any known allergies?", f"does {she} have any allergies?", "NKDA?"])
    has = bool(p.allergy)
    if q == "NKDA?":
        # no known *drug* allergies: only category medication counts against it
        drug = [a for a in p.allergy if "medication" in (a["cat"] or [])]
        yield Q(q, "boolean", [not drug], "allergies/nkda", [f"AllergyIntolerance/{a['id']}" for a in p.allergy])
    else:
        yield Q(q, "boolean", [has], "allergies/any", [f"AllergyIntolerance/{a['id']}" for a in p.allergy])


def _class_now(p, cls):
    subs = BLOOD_THINNER if cls == "blood thinner" else CLASSES[cls]
    act = [m for m in p.meds_match(subs, active=True) if m["t"] <= p.now]
    ever = [m for m in p.meds_match(subs) if m["t"] <= p.now]
    guard = p.meds_match(GUARD[cls]) if GUARD[cls] else []
    if act:
        return True, act
    if not ever and not guard:
        return False, []
    return None, None  # stopped member, or a near drug: "on X?" could mean ever; skip


def g_class_now(classes, template, phr):
    def gen(p, rng):
        cls = rng.choice(classes)
        ans, refs = _class_now(p, cls)
        if ans is None:
            return
        she, her = p.pron()
        w = rng.choice(CLASS_WORDS[cls])
        q = rng.choice(phr).format(w=w, she=she, her=her, name=p.first_name())
        yield Q(q, "boolean", [ans], f"{template}/{cls.replace(' ', '-')}", [f"MedicationRequest/{m['id']}" for m in refs])
    return gen


def g_class_ever(p, rng):
    cls = rng.choice(["insulin", "opioid", "anticoagulant", "statin", "NSAID", "ACE inhibitor"])
    subs = CLASSES[cls]
    ever = [m for m in p.meds_match(subs) if m["t"] <= p.now]
    if not ever and GUARD[cls] and p.meds_match(GUARD[cls]):
        return
    she, her = p.pron()
    w = rng.choice(CLASS_WORDS[cls])
    q = rng.choice(["ever on {w}?", "has {she} ever been on {w}?", "any hx of {w} use?", "{w} ever prescribed?"]).format(w=w, she=she)
    yield Q(q, "boolean", [bool(ever)], f"class-ever/{cls.replace(' ', '-')}", [f"MedicationRequest/{m['id']}" for m in ever])


def _events(p, cls, start=None):
    return [e for e in p.enc if e["cls"] == cls and e["start"] <= p.now and (start is None or e["start"] >= start)]


def g_enc_count(cls, word_choices, months_choices, template):
    def gen(p, rng):
        months = rng.choice(months_choices)
        n = robust(p, lambda s: len(_events(p, cls, s)), months=months)
        if n is None:
            return
        win = {12: rng.choice(["in last 12 mo", "past yr", "in the past 12 months"]),
               24: rng.choice(["in last 2 yrs", "past 24 mo"]), 60: rng.choice(["in the last 5 years", "past 5 yrs"])}[months]
        w = rng.choice(word_choices)
        she, her = p.pron()
        q = rng.choice(["# {w} {win}", "how many {w} {win}?", "number of {w} {win}?"]).format(w=w, win=win)
        refs = [f"Encounter/{e['id']}" for e in _events(p, cls, add_months(p.now, -months))]
        yield Q(q, "count", [n], f"{template}/{months}mo", refs)
    return gen


def g_last_enc(cls, phr, template):
    def gen(p, rng):
        ev = sorted(_events(p, cls), key=lambda e: e["start"])
        she, her = p.pron()
        q = rng.choice(phr).format(she=she, her=her, name=p.first_name())
        if not ev:
            yield Q(q, "date", [], f"{template}/never", status="no-data")
            return
        if len(ev) > 1 and dstr(ev[-1]["start"]) == dstr(ev[-2]["start"]) and ev[-1]["start"] != ev[-2]["start"]:
            return
        yield Q(q, "date", [dstr(ev[-1]["start"])], f"{template}/last", [f"Encounter/{ev[-1]['id']}"])
    return gen


def _hx(p, key):
    pats, guard = HX[key]
    hits = [c for c in p.cond if c["onset"] and c["onset"] <= p.now and any(re.search(x, (c["name"] or "").lower()) for x in pats)]
    if hits:
        return True, hits
    if any(re.search(x, (c["name"] or "").lower()) for c in p.cond for x in guard):
        return None, None
    return False, []


def g_hx(phr, template):
    def gen(p, rng):
        key = rng.choice(sorted(HX))
        if key not in HAVE_HX:
            return
        ans, hits = _hx(p, key)
        if ans is None:
            return
        she, her = p.pron()
        q = rng.choice(phr).format(x=key, she=she, her=her, name=p.first_name())
        yield Q(q, "boolean", [ans], f"{template}/{'pos' if ans else 'neg'}", [f"Condition/{c['id']}" for c in hits])
    return gen


def g_age(p, rng):
    if p.patient.get("deceasedDateTime"):
        return
    b = date.fromisoformat(p.patient["birthDate"])
    n = p.now.date()
    age = n.year - b.year - ((n.month, n.day) < (b.month, b.day))
    for k in (-3, 3):
        m = n + timedelta(days=k)
        if m.year - b.year - ((m.month, m.day) < (b.month, b.day)) != age:
            return
    q = rng.choice(["age?", "pt age?", f"how old is {p.first_name()}?"])
    yield Q(q, "number", [age], "age/now", [f"Patient/{p.id}"], tol=0)


def _latest(vals):
    if not vals:
        return None
    if len(vals) > 1 and vals[-1]["t"] == vals[-2]["t"] and vals[-1]["v"] != vals[-2]["v"]:
        return "tie"
    return vals[-1]


ITEMS = {  # key -> spoken forms
    "cr": ["creat", "Cr", "creatinine"], "k": ["K", "potassium", "K+"], "bmi": ["BMI"], "a1c": ["A1c", "HbA1c"],
    "sbp": ["SBP", "systolic BP"], "wt": ["wt", "weight"], "ldl": ["LDL"], "hgb": ["Hgb", "hemoglobin"],
    "glu": ["glucose", "BG"], "na": ["Na", "sodium"], "egfr": ["eGFR", "GFR"],
}


def g_latest(keys, template, phr, nodata_ok=True):
    def gen(p, rng):
        key = rng.choice(keys)
        vals = p.values(LOINC[key])
        w = rng.choice(ITEMS[key])
        she, her = p.pron()
        q = rng.choice(phr).format(w=w, she=she, her=her, name=p.first_name())
        lt = _latest(vals)
        if lt == "tie":
            return
        if lt is None:
            if nodata_ok:
                yield Q(q, "number", [], f"{template}/{key}-none", status="no-data")
            return
        yield Q(q, "number", [r4(lt["v"])], f"{template}/{key}", [f"Observation/{lt['id']}"])
    return gen


def g_last_date(p, rng):
    key = rng.choice(["cr", "a1c", "ldl", "k"])
    vals = p.values(LOINC[key])
    w = rng.choice(ITEMS[key])
    q = rng.choice(["date of last {w}?", "when was the last {w} drawn?", "last {w} - when?"]).format(w=w)
    if not vals:
        yield Q(q, "date", [], f"last-date/{key}-none", status="no-data")
        return
    yield Q(q, "date", [dstr(vals[-1]["t"])], f"last-date/{key}", [f"Observation/{vals[-1]['id']}"])


def g_absent(p, rng, keys=None):
    key = rng.choice(keys or sorted(ABSENT))
    if key not in NOBODY:
        return
    q = rng.choice(["{w}?", "last {w}?", "what was the most recent {w}?", "{w} on file?"]).format(w=key)
    if q.endswith("on file?"):
        q = f"most recent {key} on file?"
    yield Q(q, "number", [], f"absent/{key}", status="no-data")


NEVER = {"PSA": "2857-1", "EF": "10230-1", "FEV1/FVC": "19926-5", "MMSE": "72106-8",
         "urine microalbumin/creatinine ratio": "14959-1", "A1c": "4548-4", "LDL": "18262-6"}


def g_never_lab(p, rng):
    """A result other patients have and this one never had: no-data."""
    key = rng.choice(sorted(NEVER))
    if any(o["code"] == NEVER[key] for o in p.obs):
        return
    q = rng.choice(["last {w}?", "most recent {w} result?", "what was {her} last {w}?"]).format(w=key, her=p.pron()[1])
    yield Q(q, "number", [], f"never-lab/{key.split('/')[0].split(' ')[0]}", status="no-data")


def g_trend(p, rng):
    key = rng.choice(["k", "cr", "wt", "bmi", "a1c", "sbp"])

    def fn(s):
        v = p.values(LOINC[key], s)
        return (v[0]["id"], v[-1]["id"], len(v) >= 2) if v else None
    r = robust(p, fn, months=12)
    if not r or not r[2]:
        return
    v = p.values(LOINC[key], add_months(p.now, -12))
    if v[0]["t"] == v[1]["t"] or v[-1]["t"] == v[-2]["t"]:
        return
    first, last = v[0]["v"], v[-1]["v"]
    rr = (last - first) / abs(first)
    if abs(abs(rr) - 0.05) < 0.005:
        return
    ans = "increasing" if rr > 0.05 else "decreasing" if rr < -0.05 else "stable"
    w = rng.choice(ITEMS[key])
    q = rng.choice(["{w} trend over past yr", "how has {her} {w} trended over the past 12 months?", "{w} trend past yr?"]).format(w=w, her=p.pron()[1])
    yield Q(q, "string", [ans], f"trend/{key}-12mo", [f"Observation/{o['id']}" for o in (v[0], v[-1])])


def g_max_sbp(p, rng):
    def fn(s):
        v = p.values(LOINC["sbp"], s)
        return max(o["v"] for o in v) if v else None
    past = robust(p, fn, months=12)
    if past is None:
        return
    y = p.now.year - 1
    cal = [o["v"] for o in p.values(LOINC["sbp"]) if o["t"].year == y]
    form = rng.choice(["past", "last"])
    if form == "last":
        if not cal or max(cal) != past:
            form = "past"
    if form == "last":
        q = rng.choice(["highest BP last yr (systolic)?", "max SBP last year"])
    else:
        q = rng.choice(["max SBP past yr", "highest systolic over the past 12 months?", "highest BP past yr (systolic)?"])
    v = [o for o in p.values(LOINC["sbp"], add_months(p.now, -12)) if o["v"] == past]
    yield Q(q, "number", [r4(past)], f"max-sbp/12mo-{form}", [f"Observation/{v[0]['id']}"])


def g_smoker(p, rng):
    v = sorted((o for o in p.obs if o["code"] == LOINC["smoke"] and o.get("s") and o["t"] <= p.now), key=lambda o: o["t"])
    if not v:
        return
    if len(v) > 1 and v[-1]["t"] == v[-2]["t"] and v[-1]["s"] != v[-2]["s"]:
        return
    kind = rng.choice(["current", "current", "ever", "status"])
    she, her = p.pron()
    if kind == "current":
        q = rng.choice(["smoker?", f"does {she} currently smoke?", "current smoker?", "active tobacco use?"])
        yield Q(q, "boolean", [v[-1]["s"].lower().startswith("current")], "smoking/current", [f"Observation/{v[-1]['id']}"])
    elif kind == "ever":
        ever = [o for o in v if o["s"].lower().startswith(("current", "former"))]
        q = rng.choice(["ever smoker?", "any smoking hx?", f"has {she} ever smoked?"])
        yield Q(q, "boolean", [bool(ever)], "smoking/ever", [f"Observation/{o['id']}" for o in ever[-1:]])
    else:
        q = rng.choice(["smoking status?", "tobacco status?"])
        yield Q(q, "string", [v[-1]["s"]], "smoking/status", [f"Observation/{v[-1]['id']}"])


def _active_conditions(p):
    out = {}
    for c in p.cond:
        if c["onset"] and c["onset"] <= p.now and not (c["abate"] and c["abate"] <= p.now) \
                and c["status"] not in ("inactive", "resolved", "remission"):
            out.setdefault(c["name"], c)
    return out


def g_problems(p, rng):
    act = _active_conditions(p)
    she, her = p.pron()
    q = rng.choice(["active problem list?", "active problems?", f"what are {her} active medical problems?", "current dx list"])
    yield Q(q, "list", sorted(act), "problems/active" + ("" if act else "-empty"), [f"Condition/{c['id']}" for c in act.values()])


def g_dx_date(p, rng):
    names = defaultdict(list)
    for c in p.cond:
        if c["onset"] and c["onset"] <= p.now:
            names[c["name"]].append(c)
    cands = [n for n in sorted(names) if len(names[n]) == 1 and "pregnan" not in n.lower() and not re.search(r"\((finding|situation|person)\)", n)
             and not re.search(r"employment|labor force|education|stress|social|housing|violence|abuse|refugee|criminal|income|transport", n.lower())]
    if not cands:
        return
    n = rng.choice(cands)
    first = min(names[n], key=lambda c: c["onset"])
    she, her = p.pron()
    disp = re.sub(r"\s*\(disorder\)$", "", n)
    q = rng.choice(["when was {she} dx'd with {x}?", "date of dx of {x}?", "{x} - when diagnosed?", "onset date of {x}?"]).format(she=she, x=disp.lower() if rng.random() < 0.5 else disp)
    yield Q(q, "date", [dstr(first["onset"])], "dx-date/first", [f"Condition/{first['id']}"])


def g_last_admit(p, rng):
    st = p.stays()
    she, her = p.pron()
    q = rng.choice(["last admit?", "when was {her} last admission?", "date of last hospitalization?", "most recent inpatient stay - date?"]).format(her=her)
    if not st:
        yield Q(q, "date", [], "last-admit/never", status="no-data")
        return
    yield Q(q, "date", [dstr(st[-1]["start"])], "last-admit/date", [f"Encounter/{st[-1]['id']}"])


def g_admit_count(p, rng):
    n = len(p.stays())
    she, her = p.pron()
    q = rng.choice(["# hospitalizations ever?", "how many times has {she} been admitted?", "total inpatient admissions on record?"]).format(she=she)
    yield Q(q, "count", [n], "admit-count/ever", [f"Encounter/{e['id']}" for e in p.stays()])


def g_last_discharge(p, rng):
    st = [e for e in p.stays() if e["end"] and e["end"] <= p.now]
    she, her = p.pron()
    q = rng.choice(["last d/c date?", "when was {she} last discharged from the hospital?", "date of last discharge?"]).format(she=she)
    if not p.stays():
        yield Q(q, "date", [], "last-discharge/never", status="no-data")
        return
    if not st:
        return
    last = max(st, key=lambda e: e["end"])
    yield Q(q, "date", [dstr(last["end"])], "last-discharge/date", [f"Encounter/{last['id']}"])


def g_los(p, rng):
    st = p.stays()
    she, her = p.pron()
    q = rng.choice(["LOS last admission?", "how long was {her} last hospital stay (days)?", "length of stay, most recent admit?"]).format(her=her)
    if not st:
        yield Q(q, "number", [], "los/never", status="no-data")
        return
    s = st[-1]
    if not s["end"] or s["end"] > p.now:
        return
    los = (s["end"].astimezone(UTC).date() - s["start"].astimezone(UTC).date()).days
    yield Q(q, "number", [los], "los/last", [f"Encounter/{s['id']}"], tol=0)


def g_days_since_dc(p, rng):
    st = [e for e in p.stays() if e["end"] and e["end"] <= p.now]
    if not st:
        return
    e = max(st, key=lambda e: e["end"])
    completed = (p.now - e["end"]).days
    if completed != (p.now.date() - e["end"].astimezone(UTC).date()).days:
        return
    q = rng.choice(["days since last discharge?", "how many days since {she} left the hospital?"]).format(she=p.pron()[0])
    yield Q(q, "number", [completed], "days-since-dc/last", [f"Encounter/{e['id']}"], tol=0)


def g_last_clinic(p, rng):
    ev = sorted(_events(p, "AMB"), key=lambda e: e["start"])
    if not ev:
        return
    q = rng.choice(["last clinic visit?", "date of last outpatient visit?", "when was {her} last PCP/office visit?"]).format(her=p.pron()[1])
    yield Q(q, "date", [dstr(ev[-1]["start"])], "last-clinic/AMB", [f"Encounter/{ev[-1]['id']}"])


def g_flu(p, rng):
    v = sorted((i for i in p.imm if i["t"] and i["t"] <= p.now and "influenza" in (i["name"] or "").lower()), key=lambda i: i["t"])
    q = rng.choice(["last flu shot?", "date of most recent influenza vaccine?", "when did {she} last get a flu shot?"]).format(she=p.pron()[0])
    if not v:
        yield Q(q, "date", [], "flu/never", status="no-data")
        return
    yield Q(q, "date", [dstr(v[-1]["t"])], "flu/last", [f"Immunization/{v[-1]['id']}"])


def _drug_for(p, rng, active=None):
    cands = [d for d in sorted(DRUGS) if p.meds_match(DRUGS[d])]
    return rng.choice(cands) if cands else None


def g_home_meds(p, rng):
    act = sorted({m["name"] for m in p.meds if m["status"] == "active" and m["t"] <= p.now})
    she, her = p.pron()
    q = rng.choice(["home meds?", "current med list?", "what meds is {she} on at home?", "active outpatient meds pls"]).format(she=she)
    yield Q(q, "list", act, "home-meds/list" + ("" if act else "-empty"),
            [f"MedicationRequest/{m['id']}" for m in p.meds if m["status"] == "active"])


def g_med_count(p, rng):
    recs = [m for m in p.meds if m["status"] == "active" and m["t"] <= p.now]
    act = {m["name"] for m in recs}
    if len(act) != len(recs):
        return  # duplicate active orders: "how many meds" could count orders or drugs
    q = rng.choice(["# active meds?", "how many active meds?", "how many different medications is {she} currently on?"]).format(she=p.pron()[0])
    yield Q(q, "count", [len(act)], "active-med-count/distinct", [])


def g_drug_start(p, rng):
    she, her = p.pron()
    if rng.random() < 0.15:
        # a drug the patient never had (another patient has it): no start date
        cands = [d for d in sorted(DRUGS) if d in HAVE_DRUG and not p.meds_match(DRUGS[d])
                 and not any(p.meds_match(CLASSES[c]) for c in CLASSES if any(s in CLASSES[c] for s in DRUGS[d]))]
        if not cands:
            return
        d = rng.choice(cands)
        q = rng.choice(["when was {d} started", "{d} start date?", "when did {she} start {d}?"]).format(d=d, she=she)
        yield Q(q, "date", [], "drug-start/never", status="no-data")
        return
    d = _drug_for(p, rng)
    if not d:
        return
    ms = [m for m in p.meds_match(DRUGS[d]) if m["t"] <= p.now]
    names = {m["name"] for m in ms}
    first = min(ms, key=lambda m: m["t"])
    q = rng.choice(["when was {d} started", "{d} start date?", "when did {she} start {d}?", "date {d} first prescribed?"]).format(d=d, she=she)
    yield Q(q, "date", [dstr(first["t"])], "drug-start/first" + ("-multi" if len(names) > 1 else ""), [f"MedicationRequest/{first['id']}"])


def g_still_on(p, rng):
    d = _drug_for(p, rng)
    if not d:
        return
    ms = [m for m in p.meds_match(DRUGS[d]) if m["t"] <= p.now]
    act = [m for m in ms if m["status"] == "active"]
    she, her = p.pron()
    q = rng.choice(["still on {d}?", "is {she} still taking {d}?", "{d} still active?", "is {d} still on {her} med list?"]).format(d=d, she=she, her=her)
    yield Q(q, "boolean", [bool(act)], f"still-on/{'yes' if act else 'no'}", [f"MedicationRequest/{m['id']}" for m in (act or ms[-1:])])


def g_last_rx(p, rng):
    d = _drug_for(p, rng)
    if not d:
        return
    ms = sorted((m for m in p.meds_match(DRUGS[d]) if m["t"] <= p.now), key=lambda m: m["t"])
    q = rng.choice(["last Rx for {d}?", "when was {d} last prescribed?", "date of most recent {d} script?"]).format(d=d)
    yield Q(q, "date", [dstr(ms[-1]["t"])], "last-rx/date", [f"MedicationRequest/{ms[-1]['id']}"])


def g_started_90(p, rng):
    def fn(s):
        inwin = [m for m in p.meds if s <= m["t"] <= p.now]
        names = sorted({m["name"] for m in inwin})
        for n in names:
            if any(m["name"] == n and m["t"] < s for m in p.meds):
                return "renewal"
        return tuple(names)
    r = robust(p, fn, days=90)
    if r is None or r == "renewal":
        return
    if not r and rng.random() < 0.8:
        return  # most records start nothing in 90 days: keep a few such, prefer the others
    q = rng.choice(["meds started in last 90d", "any new meds in the past 3 months?", "what was started in the last 90 days?"])
    if q.startswith("any new"):
        yield Q(q, "boolean", [bool(r)], "started-90d/any", [])
    else:
        yield Q(q, "list", list(r), "started-90d/list" + ("" if r else "-empty"), [])


NOTE_TERMS = ["chest pain", "chest pressure", "cough", "nasal congestion", "frequent urination", "thirst",
              "shortness of breath", "fever", "headache", "sinusitis", "fracture", "anemia", "hypertension",
              "dizziness", "wheezing", "sore throat", "back pain"]


def _mentions(p, term):
    rx = re.compile(r"\b" + re.escape(term) + r"\b", re.I)
    return [n for n in p.notes if n["t"] <= p.now and rx.search(n["text"])]


def g_note(p, rng):
    if not p.notes:
        return
    term = rng.choice([t for t in NOTE_TERMS if t in NOTE_HAVE])
    hits = _mentions(p, term)
    q = rng.choice(["any note mention {t}?", "is {t} documented in any note?", "{t} ever mentioned in {her} notes?",
                    "do the notes say anything about {t}?"]).format(t=term, her=p.pron()[1])
    yield Q(q, "boolean", [bool(hits)], f"note-mention/{'pos' if hits else 'neg'}", [f"DocumentReference/{n['id']}" for n in hits[-1:]])


def g_note_cc(p, rng):
    ns = sorted((n for n in p.notes if n["t"] <= p.now), key=lambda n: n["t"])
    if not ns:
        return
    if len(ns) > 1 and ns[-1]["t"] == ns[-2]["t"]:
        return
    m = re.search(r"# Chief Complaint\n(.*?)\n\n", ns[-1]["text"], re.S)
    if not m:
        return
    items = [x.strip().lstrip("-").strip() for x in m.group(1).splitlines() if x.strip()]
    if items == ["No complaints."]:
        items = ["No complaints"]
    q = rng.choice(["CC at last visit?", "chief complaint in the most recent note?", "what was {her} chief complaint last visit?"]).format(her=p.pron()[1])
    yield Q(q, "list", sorted(items), "note-cc/last", [f"DocumentReference/{ns[-1]['id']}"])


# category -> [(generator, quota, sources)]
HX_PHR_ED = ["hx {x}?", "h/o {x}?", "any {x} history?", "PMH {x}?"]
HX_PHR_HP = ["PMH significant for {x}?", "any hx of {x}?", "{x} on {her} problem list ever?", "has {name} ever been diagnosed with {x}?"]
PLAN = {
    "ed_triage": [
        (g_allergies, 8, ("r4", "bulk")), (g_allergy_any, 5, ("r4", "bulk")),
        (g_class_now(["blood thinner", "anticoagulant"], "thinner-now",
                     ["on {w}?", "currently on {w}?", "is {she} on {w} right now?", "is {she} on {w} at home?"]), 10, ("r4", "bulk")),
        (g_enc_count("EMER", ["ED visits", "ER visits", "ED encounters"], [12, 24], "ed-count"), 8, ("r4", "bulk")),
        (g_last_enc("EMER", ["last ED visit?", "when was {her} last ER visit?", "date of most recent ED encounter?"], "last-ed"), 7, ("r4", "bulk")),
        (g_hx(HX_PHR_ED, "hx-ed"), 10, ("r4", "bulk")),
        (g_age, 3, ("r4",)),
        (g_latest(["sbp", "wt", "glu"], "latest-ed", ["last {w}?", "most recent {w}", "{w} most recent?"], nodata_ok=False), 5, ("r4",)),
        (g_absent, 6, ("r4", "bulk")),
    ],
    "hp_admit": [
        (g_problems, 6, ("r4",)),
        (g_smoker, 9, ("r4",)),
        (g_latest(["bmi"], "latest-bmi", ["last BMI", "most recent BMI?", "BMI?"]), 4, ("r4",)),
        (g_latest(["a1c", "ldl", "hgb", "egfr"], "latest-lab", ["last {w}?", "most recent {w}", "latest {w} value"]), 7, ("r4", "bulk")),
        (g_latest(["cr"], "latest-cr", ["last creat + date", "last Cr?", "most recent creatinine?"]), 6, ("r4",)),
        (g_last_date, 5, ("r4",)),
        (g_trend, 7, ("r4",)),
        (g_max_sbp, 5, ("r4",)),
        (g_last_admit, 7, ("r4", "bulk")),
        (g_admit_count, 4, ("r4", "bulk")),
        (g_dx_date, 6, ("r4", "bulk")),
        (g_hx(HX_PHR_HP, "hx-hp"), 8, ("r4", "bulk")),
        (g_never_lab, 6, ("r4",)),
    ],
    "med_rec": [
        (g_home_meds, 9, ("r4", "bulk")),
        (g_class_now(["statin", "beta blocker", "ACE inhibitor", "diuretic", "NSAID"], "class-now",
                     ["on {w}?", "currently on {w}?", "is {name} taking {w} now?"]), 12, ("r4", "bulk")),
        (g_class_ever, 7, ("r4", "bulk")),
        (g_drug_start, 9, ("r4", "bulk")),
        (g_still_on, 9, ("r4", "bulk")),
        (g_started_90, 6, ("r4", "bulk")),
        (g_med_count, 4, ("r4", "bulk")),
        (g_last_rx, 4, ("r4", "bulk")),
        (lambda p, rng: g_absent(p, rng, ["INR", "Mg", "TSH"]), 3, ("r4", "bulk")),
    ],
    "discharge": [
        (g_last_discharge, 6, ("r4", "bulk")),
        (g_los, 6, ("r4", "bulk")),
        (g_enc_count("IMP", ["admissions", "hospitalizations", "inpatient stays"], [12, 24, 60], "admit-count-win"), 6, ("r4", "bulk")),
        (g_enc_count("EMER", ["ED visits", "ER visits"], [12, 60], "ed-count-dc"), 4, ("r4", "bulk")),
        (g_days_since_dc, 4, ("r4", "bulk")),
        (g_last_clinic, 4, ("r4", "bulk")),
        (g_flu, 5, ("r4", "bulk")),
    ],
    "notes": [
        (g_note, 14, ("bulk",)),
        (g_note_cc, 4, ("bulk",)),
    ],
}


def build(data):
    global HAVE_HX, NOBODY, HAVE_DRUG, NOTE_HAVE
    pats = load(data)
    HAVE_HX = {k for k in HX if any(_hx(p, k)[0] for p in pats)}
    codes = {o["code"] for p in pats for o in p.obs}
    NOBODY = {k for k, cs in ABSENT.items() if not codes & set(cs)}
    HAVE_DRUG = {d for d in DRUGS if any(p.meds_match(s) for p in pats for s in [DRUGS[d]])}
    NOTE_HAVE = {t for t in NOTE_TERMS if any(_mentions(p, t) for p in pats)}
    out = []
    for cat, plan in PLAN.items():
        n = 0
        for gi, (gen, quota, sources) in enumerate(plan):
            pool = [p for p in pats if p.source in sources]
            rng = random.Random(f"{cat}:{gi}")  # noqa: S311 - seeded for reproducible draws
            rng.shuffle(pool)
            got, used, seen_tmpl = [], set(), defaultdict(int)
            for rounds in range(4):
                for p in pool:
                    if len(got) >= quota:
                        break
                    if p.id in used and rounds == 0:
                        continue
                    prng = random.Random(f"{cat}:{gi}:{p.id}:{rounds}")  # noqa: S311 - seeded
                    for q in gen(p, prng) or []:
                        # balance: at most 2 empty lists and ~half of any single boolean answer
                        if q["answer_type"] == "list" and not q["expected"] and q["expected_status"] == "answered":
                            if seen_tmpl["empty"] >= 2:
                                continue
                            seen_tmpl["empty"] += 1
                        if q["expected_status"] == "no-data" and gen not in (g_absent, g_never_lab) and "absent/" not in q["template"]:
                            if seen_tmpl["nodata"] >= max(2, quota // 2):
                                continue
                            seen_tmpl["nodata"] += 1
                        if q["answer_type"] == "boolean":
                            key = "b" + str(q["expected"][0])
                            if seen_tmpl[key] >= (quota + 1) // 2 + 1:
                                continue
                            seen_tmpl[key] += 1
                        if q["answer_type"] == "count" and q["expected"] == [0]:
                            if seen_tmpl["zero"] >= max(2, quota // 3):
                                continue
                            seen_tmpl["zero"] += 1
                        if any(g["question"] == q["question"] and g["patient_id"] == p.id for g in got):
                            continue
                        q["patient_id"] = p.id
                        q["now"] = p.now.strftime("%Y-%m-%dT%H:%M:%SZ")
                        got.append(q)
                        used.add(p.id)
            for q in got:
                n += 1
                out.append(dict(id=f"{cat}-{n:03d}", patient_id=q["patient_id"], question=q["question"], now=q["now"],
                                category=cat, answer_type=q["answer_type"], expected=q["expected"],
                                expected_status=q["expected_status"], tolerance=q["tolerance"],
                                gold_refs=q["gold_refs"], template=f"{cat}/{q['template']}"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    rows = build(a.data)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if a.check:
        same = os.path.exists(OUT) and open(OUT, encoding="utf-8").read() == text
        print("up to date" if same else "stale")
        sys.exit(0 if same else 1)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    from collections import Counter
    print(len(rows), Counter(r["category"] for r in rows), Counter(r["expected_status"] for r in rows),
          Counter(r["answer_type"] for r in rows))


HAVE_HX = NOBODY = HAVE_DRUG = NOTE_HAVE = set()

if __name__ == "__main__":
    main()
