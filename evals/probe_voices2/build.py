"""Build the probe_voices2 question set: one patient's record as people other than the doctor ask about it.

Voices: a clinical pharmacist verifying orders and doing med rec (start and stop dates, doses per day, years on a
drug, duplicate orders, routes, the last dose given, what was given today, renal function before a drug), a charge
nurse at handoff (last vitals, trends since admission, devices, a COVID history), a case manager planning discharge
(ED visits and admissions in a period, length of stay, the problem list, vaccines up to date), consulting specialists
(cardiology: systolic trend, LDL, the statin; nephrology: creatinine and eGFR; endocrinology: the A1c history) and
patients or caregivers in lay words ("my kidney number", "my dad's cholesterol pill").

Reads the raw FHIR JSON of ``../shared/data/synthea-r4`` (transaction bundles), ``../shared/data/synthea-bulk-10``
(NDJSON Bulk export) and ``examples/sample`` (hospital patients) with orjson, resolves ``urn:uuid:`` and
``Type/id`` references itself and imports nothing from fhirqa. Every random choice comes from an RNG seeded by a
string (patient id + generator), so the same data gives the same bytes.

Usage: python evals/probe_voices2/build.py [--data DIR] [--sample DIR] [--check]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import sys
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "questions.jsonl")
SAMPLE_NOW = datetime(2026, 6, 30, 12, 0, tzinfo=UTC)

# ---------------------------------------------------------------- items, drugs, vaccines, conditions

# Items by LOINC (Synthea's code first, then the sample's where it differs).
ITEMS = {
    "Cr": ("38483-4", "2160-0"), "eGFR": ("33914-3", "98979-8"), "K": ("6298-4", "2823-3"), "A1c": ("4548-4",),
    "LDL": ("18262-6",), "SBP": ("8480-6",), "HR": ("8867-4",), "RR": ("9279-1",), "temp": ("8310-5", "8331-1"),
    "SpO2": ("59408-5", "2708-6"), "wt": ("29463-7",), "WBC": ("6690-2",), "UACR": ("14959-1",),
    "BNP": ("30934-4", "42637-9", "33762-6"), "INR": ("6301-6", "34714-6"), "Mg": ("19123-9", "2601-3"),
    "digoxin": ("10535-3",), "troponin": ("89579-7", "6598-7", "10839-9", "42757-5"), "EF": ("10230-1",),
}

# Drugs: lower-case fragments of the record's names, and how a pharmacist writes them (generic, brand, short,
# misspelt). A drug is asked about only by a key whose fragments name one ingredient.
DRUGS = {
    "simvastatin": (("simvastatin", "simvistatin", "zocor"), ["simvastatin", "simva", "Zocor", "simvastatn"]),
    "atorvastatin": (("atorvastatin", "lipitor"), ["atorvastatin", "Lipitor", "atorva"]),
    "hydrochlorothiazide": (("hydrochlorothiazide",), ["HCTZ", "hydrochlorothiazide", "hctz", "hydrochlorthiazide"]),
    "lisinopril": (("lisinopril",), ["lisinopril", "lisinipril"]),
    "metformin": (("metformin", "glucophage"), ["metformin", "Glucophage", "metfromin"]),
    "furosemide": (("furosemide", "lasix"), ["furosemide", "Lasix", "lasix"]),
    "metoprolol": (("metoprolol", "toprol"), ["metoprolol", "Toprol XL", "metoprolol succ"]),
    "amlodipine": (("amlodipine", "norvasc"), ["amlodipine", "Norvasc", "amlodipene"]),
    "clopidogrel": (("clopidogrel", "plavix"), ["clopidogrel", "Plavix"]),
    "warfarin": (("warfarin", "coumadin"), ["warfarin", "Coumadin"]),
    "digoxin": (("digoxin", "lanoxin"), ["digoxin", "Lanoxin"]),
    "verapamil": (("verapamil",), ["verapamil", "verapamil IR"]),
    "alendronate": (("alendron",), ["alendronate", "Fosamax"]),
    "glargine": (("glargine", "lantus"), ["Lantus", "insulin glargine"]),
    "sertraline": (("sertraline", "zoloft"), ["sertraline", "Zoloft"]),
    "naproxen": (("naproxen", "aleve"), ["naproxen", "Aleve"]),
    "galantamine": (("galantamine",), ["galantamine", "Razadyne"]),
    "fexofenadine": (("fexofenadine", "allegra"), ["fexofenadine", "Allegra"]),
    "budesonide": (("budesonide",), ["budesonide", "Pulmicort"]),
    "albuterol": (("albuterol",), ["albuterol", "albuterol neb"]),
    "levothyroxine": (("levothyroxine", "synthroid"), ["levothyroxine", "Synthroid"]),
    "vancomycin": (("vancomycin",), ["vanc", "vanco", "vancomycin"]),
    "piperacillin": (("piperacillin", "zosyn"), ["Zosyn", "pip-tazo", "pip/tazo"]),
    "ceftriaxone": (("ceftriaxone", "rocephin"), ["ceftriaxone", "Rocephin", "ceftriaxon"]),
    "heparin": (("heparin",), ["heparin", "hep", "SQ heparin"]),
    "acetaminophen": (("acetaminophen", "tylenol"), ["acetaminophen", "Tylenol", "APAP"]),
    "cephalexin": (("cephalexin", "keflex"), ["cephalexin", "Keflex"]),
    "b12": (("vitamin b 12", "vitamin b12"), ["B12 injections", "vitamin B12"]),
}
STATIN = ("simvastatin", "simvistatin", "zocor", "atorvastatin", "lipitor", "rosuvastatin", "pravastatin",
          "lovastatin")
# Broad classes: an active list with two members of one class is never asked as "no duplicate".
CLASSES = {
    "statin": STATIN, "ccb": ("amlodipine", "verapamil", "diltiazem", "nifedipine"),
    "diuretic": ("hydrochlorothiazide", "furosemide", "lasix", "spironolactone", "chlorthalidone"),
    "nsaid": ("naproxen", "ibuprofen", "aspirin", "celecoxib", "meloxicam"),
    "antithrombotic": ("warfarin", "clopidogrel", "aspirin", "heparin", "apixaban", "rivaroxaban"),
    "bb": ("metoprolol", "atenolol", "carvedilol", "propranolol"), "acei": ("lisinopril", "captopril", "enalapril"),
    "opioid": ("oxycodone", "hydrocodone", "meperidine", "morphine", "codeine", "tramadol"),
    "antihistamine": ("loratadine", "cetirizine", "fexofenadine", "chlorpheniramine", "diphenhydramine"),
    "steroid_inh": ("fluticasone", "budesonide"), "contraceptive": ("day pack", "intrauterine", "nuvaring",
                                                                     "etonogestrel", "medroxyprogesterone"),
    "dementia": ("donepezil", "galantamine", "memantine", "tacrine"), "insulin": ("insulin",),
    "chemo": ("oxaliplatin", "leucovorin", "docetaxel", "leuprolide"), "benzo": ("diazepam", "clonazepam"),
}
# Ingredients known well enough to say two active orders are (or are not) the same drug.
INGREDIENTS = sorted({f for frags, _ in DRUGS.values() for f in frags} | set(
    f for c in CLASSES.values() for f in c) | {"ferrous sulfate", "hydrocortisone", "nitroglycerin", "epinephrine",
                                                 "nicotine", "levothyroxine", "carbamazepine", "tacrolimus",
                                                 "salmeterol", "errin", "kyleena", "liletta", "yaz", "trinessa",
                                                 "seasonique", "camila", "jolivette"})
SYNONYM = {"simvistatin": "simvastatin", "zocor": "simvastatin", "lasix": "furosemide", "glucophage": "metformin",
           "toprol": "metoprolol", "lantus": "glargine", "zoloft": "sertraline", "lipitor": "atorvastatin",
           "plavix": "clopidogrel", "coumadin": "warfarin", "tylenol": "acetaminophen", "aleve": "naproxen",
           "norvasc": "amlodipine", "zosyn": "piperacillin", "rocephin": "ceftriaxone", "keflex": "cephalexin",
           "lanoxin": "digoxin", "allegra": "fexofenadine", "synthroid": "levothyroxine", "alendron": "alendronate",
           "vitamin b12": "vitamin b 12"}

VACCINES = {
    "flu": lambda n: "influenza" in n,
    "tetanus": lambda n: n.startswith("td ") or n.startswith("td(") or "tdap" in n or "dtap" in n or "tetanus" in n,
    "pneumo": lambda n: "pneumococcal" in n or "pcv" in n or "prevnar" in n or "pneumovax" in n,
    "zoster": lambda n: "zoster" in n or "shingrix" in n,
}

# Conditions a case manager names: record names (lower case) and the words used for them.
CONDITIONS = {
    "htn": (("hypertension",), ["HTN", "hypertension", "high blood pressure"]),
    "hld": (("hyperlipidemia",), ["HLD", "hyperlipidemia"]),
    "prediabetes": (("prediabetes",), ["prediabetes", "pre-diabetes"]),
    "dm": (("diabetes",), ["diabetes", "DM", "type 2 diabetes"]),
    "anemia": (("anemia",), ["anemia", "anaemia"]),
    "chronic sinusitis": (("chronic sinusitis",), ["chronic sinusitis"]),
    "osteoporosis": (("osteoporosis",), ["osteoporosis"]),
    "afib": (("atrial fibrillation",), ["afib", "atrial fibrillation", "AF"]),
    "cad": (("coronary heart disease",), ["CAD", "coronary heart disease"]),
    "chf": (("heart failure",), ["CHF", "heart failure"]),
    "obesity": (("obesity",), ["obesity"]),
    "knee oa": (("osteoarthritis of knee", "knee osteoarthritis"), ["knee OA", "osteoarthritis of the knee"]),
    "ckd": (("ckd", "chronic kidney disease"), ["CKD", "chronic kidney disease"]),
    "depression": (("depression",), ["depression"]),
    "asthma": (("asthma",), ["asthma"]),
    "alzheimer": (("alzheimer",), ["Alzheimer's", "alzheimers"]),
    "rhinitis": (("allergic rhinitis",), ["allergic rhinitis"]),
    "bronchitis": (("bronchitis",), ["bronchitis", "the bronchitis"]),
    "strep": (("streptococcal sore throat",), ["strep throat"]),
    "pharyngitis": (("pharyngitis",), ["pharyngitis"]),
    "otitis": (("otitis media",), ["ear infection", "otitis media"]),
    "ankle sprain": (("sprain of ankle", "ankle sprain"), ["ankle sprain", "sprained ankle"]),
    "pneumonia": (("pneumonia",), ["pneumonia", "CAP"]),
    "aki": (("acute kidney injury",), ["AKI", "acute kidney injury"]),
    "uti": (("urinary tract infection",), ["UTI"]),
    "cellulitis": (("cellulitis",), ["cellulitis"]),
    "back pain": (("low back pain",), ["low back pain", "back pain"]),
    "viral sinusitis": (("viral sinusitis",), ["viral sinusitis", "the sinus infection"]),
}
# Episode-like conditions Synthea leaves open (no abatement): a problem list holding one is not asked, because a
# reader could fairly leave it out.
EPISODES = ("pregnancy", "miscarriage", "appendicitis", "appendix", "overdose", "bullet", "concussion",
            "cardiac arrest", "myocardial infarction", "fracture", "laceration", "burn", "injury", "eclampsia",
            "complication", "sprain")


# ---------------------------------------------------------------- small helpers

def seeded(key: str) -> random.Random:
    """An RNG seeded by a string: the same data always gives the same draws (never hash() or the clock)."""
    return random.Random(key)  # noqa: S311 - seeded for reproducible draws, not for secrecy


def pick(rng: random.Random, seq):
    """One element, drawn by a seeded RNG."""
    return seq[rng.randrange(len(seq))]


def parse_time(text: str | None) -> datetime | None:
    """An ISO instant with its written offset kept (a date alone is midnight UTC)."""
    if not text:
        return None
    if len(text) == 10:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def udate(dt: datetime) -> date:
    return dt.astimezone(UTC).date()


def same_day(dt: datetime) -> bool:
    """The local (as written) date and the UTC date agree, so a date answer has one reading."""
    return dt.date() == udate(dt)


def cc_name(cc: dict | None) -> str | None:
    """code.text, else the first coding display."""
    if not cc:
        return None
    return cc.get("text") or next((c.get("display") for c in cc.get("coding", []) if c.get("display")), None)


def add_years(dt: datetime, n: int) -> datetime:
    return dt.replace(year=dt.year + n)  # nows fall on days <= 28, never Feb 29


def years_between(a: datetime, b: datetime) -> int:
    """Completed calendar years from a to b (UTC dates)."""
    da, db = udate(a), udate(b)
    return db.year - da.year - ((db.month, db.day) < (da.month, da.day))


def r4(x: float) -> float:
    return round(float(x), 4)


def has(name: str, frags) -> bool:
    low = name.lower()
    return any(f in low for f in frags)


def ingredients(name: str) -> list[str]:
    """The known ingredients a drug name holds (brands folded into generics)."""
    low = name.lower()
    found = {SYNONYM.get(f, f) for f in INGREDIENTS if f in low}
    return sorted(found)


def trend_word(first: float, last: float) -> str | None:
    """increasing / decreasing / stable by the 5 % rule; None within 1 point of the cut (a reading choice)."""
    r = (last - first) / abs(first)
    if abs(abs(r) - 0.05) < 0.01:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


# ---------------------------------------------------------------- one patient, references resolved

class Patient:
    """One patient's resources from any of the three sources, with references resolved."""

    def __init__(self, source: str, resources: list[dict], by_ref: dict[str, dict]):
        self.source = source
        self.by_ref = by_ref
        self.by_type: dict[str, list[dict]] = defaultdict(list)
        for r in resources:
            self.by_type[r["resourceType"]].append(r)
        self.pt = self.by_type["Patient"][0]
        self.id = self.pt["id"]
        self.sex = self.pt.get("gender")
        self.birth = datetime.fromisoformat(self.pt["birthDate"]).date()
        self.dead = bool(self.pt.get("deceasedDateTime") or self.pt.get("deceasedBoolean"))
        self.he = "she" if self.sex == "female" else "he"
        self.his = "her" if self.sex == "female" else "his"
        self.him = "her" if self.sex == "female" else "him"
        self._observations()
        self._orders()
        self._events()
        self.last_fact = max(self._times())
        rng = seeded(f"{self.id}/now")
        t = self.last_fact.astimezone(UTC) + timedelta(days=rng.randint(3, 21))
        if t.day > 28:
            t = t + timedelta(days=32 - t.day)
        self.late = t.replace(hour=12, minute=0, second=0, microsecond=0)
        self.now = SAMPLE_NOW if source == "sample" else self.late

    # -- loading

    def resolve(self, ref: str | None) -> dict | None:
        return self.by_ref.get(ref or "")

    def med_name(self, r: dict) -> str:
        if "medicationCodeableConcept" in r:
            return cc_name(r["medicationCodeableConcept"]) or ""
        ref = r.get("medicationReference", {})
        med = self.resolve(ref.get("reference"))
        return (cc_name(med.get("code")) if med else None) or ref.get("display", "")

    def _observations(self):
        self.obs = []  # (time, code, value, unit, name, ref)
        for o in self.by_type["Observation"]:
            t = parse_time(o.get("effectiveDateTime") or o.get("effectivePeriod", {}).get("start") or o.get("issued"))
            if t is None:
                continue
            ref = f"Observation/{o['id']}"
            parts = [(c["code"], c.get("valueQuantity")) for c in o.get("component", [])] or [(o["code"], o.get("valueQuantity"))]
            for code, vq in parts:
                if vq and "value" in vq:
                    self.obs.append((t, code["coding"][0]["code"], float(vq["value"]), vq.get("unit"),
                                     cc_name(code), ref))
        self.obs.sort(key=lambda x: (x[0], x[1]))

    def _orders(self):
        self.meds = []  # (authoredOn, name, status, ref, dosage)
        for r in self.by_type["MedicationRequest"]:
            t = parse_time(r.get("authoredOn"))
            if t:
                di = (r.get("dosageInstruction") or [{}])[0]
                self.meds.append((t, self.med_name(r), r.get("status"), f"MedicationRequest/{r['id']}", di))
        self.meds.sort(key=lambda x: (x[0], x[1]))
        self.statements = [self.med_name(r) for r in self.by_type["MedicationStatement"]]
        self.admins = []  # (time, name, status, dose, unit, route, ref)
        for r in self.by_type["MedicationAdministration"]:
            t = parse_time(r.get("effectiveDateTime") or r.get("effectivePeriod", {}).get("start"))
            d = r.get("dosage", {})
            route = d.get("route") or {}
            self.admins.append((t, self.med_name(r), r.get("status"), d.get("dose", {}).get("value"),
                                d.get("dose", {}).get("unit"), route.get("text") or cc_name(route),
                                f"MedicationAdministration/{r['id']}"))
        self.admins.sort(key=lambda x: (x[0], x[1]))

    def _events(self):
        self.encs = []  # (start, end, class, type, ref)
        for e in self.by_type["Encounter"]:
            p = e.get("period", {})
            self.encs.append((parse_time(p.get("start")), parse_time(p.get("end")), e["class"]["code"],
                              cc_name((e.get("type") or [{}])[0]) or "", f"Encounter/{e['id']}"))
        self.encs.sort(key=lambda x: x[0])
        self.conds = []  # (onset, abatement, clinical, verification, name, ref)
        for c in self.by_type["Condition"]:
            self.conds.append((parse_time(c.get("onsetDateTime") or c.get("onsetPeriod", {}).get("start")),
                               parse_time(c.get("abatementDateTime")),
                               (c.get("clinicalStatus") or {}).get("coding", [{}])[0].get("code"),
                               (c.get("verificationStatus") or {}).get("coding", [{}])[0].get("code"),
                               cc_name(c.get("code")) or "", f"Condition/{c['id']}"))
        self.imms = []  # (time, name, ref)
        for r in self.by_type["Immunization"]:
            if r.get("status", "completed") == "completed" and r.get("occurrenceDateTime"):
                self.imms.append((parse_time(r["occurrenceDateTime"]), cc_name(r.get("vaccineCode")) or "",
                                  f"Immunization/{r['id']}"))
        self.imms.sort(key=lambda x: x[0])
        self.devices = [((cc_name(d.get("type")) or (d.get("deviceName") or [{}])[0].get("name") or ""),
                         d.get("status"), f"Device/{d['id']}") for d in self.by_type["Device"]]

    def _times(self):
        for o in self.obs:
            yield o[0]
        for m in self.meds:
            yield m[0]
        for a in self.admins:
            yield a[0]
        for e in self.encs:
            yield e[0]
            if e[1]:
                yield e[1]
        for c in self.conds:
            if c[0]:
                yield c[0]
        for i in self.imms:
            yield i[0]
        for r in self.by_type["Procedure"]:
            t = parse_time(r.get("performedDateTime") or r.get("performedPeriod", {}).get("start"))
            if t:
                yield t
        for r in self.by_type["DocumentReference"]:
            t = parse_time(r.get("date"))
            if t:
                yield t
        for r in self.by_type["DiagnosticReport"]:
            t = parse_time(r.get("effectiveDateTime") or r.get("issued"))
            if t:
                yield t

    # -- reading

    def age(self, now: datetime) -> int:
        d = udate(now)
        return d.year - self.birth.year - ((d.month, d.day) < (self.birth.month, self.birth.day))

    def values(self, item: str, now: datetime, start: datetime | None = None):
        codes = ITEMS[item]
        return [o for o in self.obs if o[1] in codes and o[0] <= now and (start is None or o[0] >= start)]

    def latest(self, item: str, now: datetime, start: datetime | None = None):
        """The latest value (None when there is none or two different values tie at its time)."""
        vals = self.values(item, now, start)
        if not vals:
            return None
        tied = {round(o[2], 4) for o in vals if o[0] == vals[-1][0]}
        return vals[-1] if len(tied) == 1 else None

    def first(self, item: str, now: datetime, start: datetime | None = None):
        vals = self.values(item, now, start)
        if not vals:
            return None
        tied = {round(o[2], 4) for o in vals if o[0] == vals[0][0]}
        return vals[0] if len(tied) == 1 else None

    def orders(self, key: str, now: datetime):
        frags = DRUGS[key][0]
        return [m for m in self.meds if has(m[1], frags) and m[0] <= now]

    def active(self):
        """Active MedicationRequests (read at a now after the last fact)."""
        return [m for m in self.meds if m[2] == "active"]

    def given(self, key: str, now: datetime, start: datetime | None = None):
        frags = DRUGS[key][0]
        return [a for a in self.admins if a[2] == "completed" and has(a[1], frags) and a[0] <= now
                and (start is None or a[0] >= start)]

    def stay_at(self, now: datetime):
        """The inpatient stay holding now."""
        for e in self.encs:
            if e[2] == "IMP" and e[0] <= now and e[1] and now <= e[1]:
                return e
        return None

    def drug_keys(self, now: datetime) -> list[str]:
        """Drug keys the patient has orders for (one ingredient each)."""
        out = []
        for key in sorted(DRUGS):
            ms = self.orders(key, now)
            if ms and all(len(ingredients(m[1])) == 1 for m in ms):
                out.append(key)
        return out


def courses(orders) -> list[list]:
    """Orders of one drug chained while consecutive orders are at most 400 days apart (yearly renewals)."""
    out: list[list] = []
    for m in orders:
        if out and (m[0] - out[-1][-1][0]).days <= 400:
            out[-1].append(m)
        else:
            out.append([m])
    return out


def load_bundles(pattern: str, source: str) -> list[Patient]:
    pts = []
    for path in sorted(glob.glob(pattern)):
        with open(path, "rb") as fh:
            bundle = orjson.loads(fh.read())
        if bundle.get("resourceType") != "Bundle":
            continue
        res = [e["resource"] for e in bundle.get("entry", [])]
        if not any(r["resourceType"] == "Patient" for r in res):
            continue
        by_ref = {}
        for e in bundle.get("entry", []):
            r = e["resource"]
            by_ref[f"{r['resourceType']}/{r.get('id')}"] = r
            if e.get("fullUrl"):
                by_ref[e["fullUrl"]] = r
        pts.append(Patient(source, res, by_ref))
    return pts


def load_bulk(folder: str) -> list[Patient]:
    """The NDJSON export, one Patient per compartment (subject / patient references ``Patient/<id>``)."""
    per: dict[str, list[dict]] = defaultdict(list)
    by_ref = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.ndjson"))):
        with open(path, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                r = orjson.loads(line)
                if "resourceType" not in r or "id" not in r:
                    continue
                by_ref[f"{r['resourceType']}/{r['id']}"] = r
                if r["resourceType"] == "Patient":
                    per[r["id"]].append(r)
                    continue
                ref = (r.get("subject") or r.get("patient") or {}).get("reference", "")
                if ref.startswith("Patient/"):
                    per[ref.split("/", 1)[1]].append(r)
    return [Patient("bulk", per[pid], by_ref) for pid in sorted(per)
            if any(r["resourceType"] == "Patient" for r in per[pid])]


# ---------------------------------------------------------------- collecting rows

class Builder:
    def __init__(self):
        self.rows: list[dict] = []

    def add(self, cat, p, q, now, atype, expected, refs, pattern, status="answered", tol=0.0, bucket=None):
        self.rows.append({"id": "", "patient_id": p.id, "question": q, "now": iso(now), "category": cat,
                          "answer_type": atype, "expected": expected if status == "answered" else [],
                          "expected_status": status, "tolerance": tol, "gold_refs": sorted(set(refs)),
                          "template": f"{cat}/{pattern}", "_bucket": bucket or pattern})


def say(p: Patient, rng: random.Random, forms: list[str], **kw) -> str:
    return pick(rng, forms).format(he=p.he, his=p.his, him=p.him, He=p.he.capitalize(), **kw)


def window_words(rng: random.Random, years: int) -> str:
    return pick(rng, {1: ["12 months", "year", "yr"], 2: ["2 yrs", "two years", "24 months"],
                      3: ["3 years", "3 yrs"], 5: ["5 years", "5 yrs"]}[years])


def robust_window(times, now: datetime, years: int, days: int = 7) -> bool:
    """No event within `days` of the window's start, so 30-day months or a date-based start agree."""
    start = add_years(now, -years)
    return all(abs((t - start).total_seconds()) > days * 86400 for t in times)


def year_start(y: int) -> datetime:
    return datetime(y, 1, 1, tzinfo=UTC)


def robust_since(times, y: int, days: int = 7) -> bool:
    start = year_start(y)
    return all(abs((t - start).total_seconds()) > days * 86400 for t in times)


def stay_moments(p: Patient):
    """(stay, now) pairs inside each inpatient stay of the sample: 10:00, 13:00 or 15:00 on the stay's own clock
    (so the now's UTC date is its local date), from the day after admission to the last full day."""
    out = []
    for e in p.encs:
        if e[2] != "IMP" or not e[1]:
            continue
        tz = e[0].tzinfo
        day = e[0].date() + timedelta(days=1)
        while day <= e[1].date():
            rng = seeded(f"{p.id}/moment/{day.isoformat()}")
            hour = pick(rng, [10, 13, 15])
            now = datetime(day.year, day.month, day.day, hour, 0, tzinfo=tz)
            if e[0] < now < e[1] and udate(now) == now.date():
                out.append((e, now.astimezone(UTC)))
            day += timedelta(days=1)
    return out


# ---------------------------------------------------------------- pharmacist: orders

STARTED = ["when was {d} started?", "{d} start date", "date {he} was first put on {d}?", "when did {he} go on {d}",
           "first rx for {d} - when?"]
STOPPED = ["{d} d/c'd?", "has the {d} been discontinued", "was the {d} dc'ed", "was {his} {d} stopped",
           "is {d} discontinued at this point?"]
PER_DAY = ["{d} - how many doses/day on the latest rx?", "how many times a day is {d} written for",
           "latest {d} sig: doses per day?", "# of daily doses, {d} (most recent order)"]
HOW_LONG = ["how many years has {he} been on {d}", "{d}: how long on it, in yrs?", "yrs on {d}?",
            "how long (years) has {he} been taking {d}"]
DUP_ANY = ["any duplicate orders - same drug ordered twice on the active list?",
           "dup therapy check: is any med active more than once?", "same med on the active list twice?",
           "any active med duplicated (same ingredient, 2 orders)?"]
DUP_COUNT = ["how many active {d} orders are there?", "# of active {d} orders", "count of open {d} orders?",
             "{d}: number of active rxs"]


def doses_per_day(di: dict) -> float | None:
    rep = (di.get("timing") or {}).get("repeat") or {}
    if di.get("asNeededBoolean") or di.get("asNeededCodeableConcept") or not rep.get("frequency"):
        return None
    per = {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}.get(rep.get("periodUnit"))
    if not per or not rep.get("period"):
        return None
    return rep["frequency"] / (rep["period"] * per)


def med_orders(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead:
            continue
        now = p.now
        rng = seeded(f"{p.id}/med_orders")
        keys = [k for k in p.drug_keys(now) if not any(has(s, DRUGS[k][0]) for s in p.statements)]
        rng.shuffle(keys)
        for key in keys[:3]:
            ms = p.orders(key, now)
            d = pick(rng, DRUGS[key][1])
            cs = courses(ms)
            refs = [m[3] for m in ms]
            # started: the first order, when the record holds one course of the drug
            if len(cs) == 1 and same_day(ms[0][0]):
                b.add("med_orders", p, say(p, rng, STARTED, d=d), now, "date", [udate(ms[0][0]).isoformat()],
                      [ms[0][3]], "started")
            # stopped: Synthea and the bulk export chart only active / stopped
            if p.source != "sample" and {m[2] for m in ms} <= {"active", "stopped"} and len({m[1] for m in ms}) == 1:
                stopped = not any(m[2] == "active" for m in ms)
                if not stopped or len(ms) >= 2 or rng.random() < 0.5:
                    b.add("med_orders", p, say(p, rng, STOPPED, d=d), now, "boolean", [stopped], refs,
                          "stopped", bucket=f"stopped-{stopped}")
            # doses per day on the latest order that carries a timing
            timed = [m for m in ms if doses_per_day(m[4]) is not None]
            if timed and timed[-1] is ms[-1] and p.source != "sample":
                same_t = [m for m in ms if m[0] == ms[-1][0]]
                # Synthea writes levothyroxine once per 60 days: a schedule no pharmacist would read as a daily count
                if len({doses_per_day(m[4]) for m in same_t}) == 1 and doses_per_day(ms[-1][4]) >= 1:
                    b.add("med_orders", p, say(p, rng, PER_DAY, d=d), now, "number",
                          [r4(doses_per_day(ms[-1][4]))], [ms[-1][3]], "per-day", tol=0.01)
            # years on it: one course, still active now
            if len(cs) == 1 and ms[-1][2] == "active" and p.source != "sample":
                yrs = years_between(ms[0][0], now)
                if yrs >= 1 and all(years_between(ms[0][0] + timedelta(days=s), now) == yrs for s in (-30, 30)):
                    b.add("med_orders", p, say(p, rng, HOW_LONG, d=d), now, "number", [yrs], refs, "how-long",
                          tol=0.0)
        # in a sample stay: the latest order known at that moment
        if p.source == "sample":
            for stay, mnow in stay_moments(p):
                r2 = seeded(f"{p.id}/med_orders/{iso(mnow)}")
                if r2.random() > 0.4:
                    continue
                for key in ("vancomycin", "heparin", "piperacillin", "ceftriaxone"):
                    ms = [m for m in p.orders(key, mnow) if m[0] >= stay[0]]
                    if any(abs((m[0] - mnow).total_seconds()) < 3600 for m in p.orders(key, mnow + timedelta(hours=1))):
                        continue
                    if ms and doses_per_day(ms[-1][4]) is not None and r2.random() < 0.5:
                        b.add("med_orders", p, say(p, r2, PER_DAY, d=pick(r2, DRUGS[key][1])), mnow, "number",
                              [r4(doses_per_day(ms[-1][4]))], [ms[-1][3]], "per-day", tol=0.01)
        dup_orders(b, p, rng, now)
    for p in pts:
        # Synthea's heart-failure deaths: oral and IV furosemide both active during the last stay
        if p.dead and p.source == "synthea":
            for e in p.encs:
                if e[2] == "IMP" and e[1]:
                    t = (e[0] + (e[1] - e[0]) / 2).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
                    death = parse_time(p.pt.get("deceasedDateTime"))
                    if e[0] < t < e[1] and (death is None or t < death) and p.last_fact - t < timedelta(days=3):
                        dup_orders(b, p, seeded(f"{p.id}/dup/{iso(t)}"), t)


def dup_orders(b: Builder, p: Patient, rng: random.Random, now: datetime):
    """Duplicate active orders (same ingredient) among the orders active at now (authored by now, status active).
    "No" is asked only when no two active drugs share a broad class either (two calcium-channel blockers, two
    diuretics…), which a pharmacist could also call duplicate therapy."""
    act = [m for m in p.active() if m[0] <= now]
    if len(act) < 2 or p.statements:
        return
    ings = [ingredients(m[1]) for m in act]
    if not all(ings):
        return
    flat = [i for g in ings for i in g]
    dup = len(flat) != len(set(flat))
    same_class = any(sum(has(m[1], frags) for m in act) >= 2 for frags in CLASSES.values())
    if dup or not same_class:
        dup_refs = [m[3] for m, g in zip(act, ings, strict=True) if any(flat.count(i) > 1 for i in g)]
        b.add("med_orders", p, say(p, rng, DUP_ANY), now, "boolean", [dup], dup_refs, "dup-any",
              bucket=f"dup-any-{dup}")
    for key in sorted(DRUGS):
        hits = [m for m in act if has(m[1], DRUGS[key][0])]
        if hits and (len(hits) >= 2 or rng.random() < 0.25) and all(len(ingredients(m[1])) == 1 for m in hits):
            b.add("med_orders", p, say(p, rng, DUP_COUNT, d=pick(rng, DRUGS[key][1])), now, "count",
                  [len(hits)], [m[3] for m in hits], "dup-count", bucket=f"dup-count-{min(len(hits), 2)}")


# ---------------------------------------------------------------- pharmacist and nurse: the MAR (sample stays)

ROUTE_WORDS = {"IV": ["IV", "intravenously", "via IV"], "SC": ["subq", "SC", "subcut"], "PO": ["PO", "by mouth", "orally"]}
ROUTE_YN = ["is {d} being given {r}?", "{d} {r}?", "route check: {d} {r}?", "is {his} {d} going {r}"]
LAST_GIVEN = ["when did {he} last get {d}?", "last {d} dose - when?", "{d} last given on?",
              "when was the most recent {d} administered", "date of last {d} admin"]
TODAY_LIST = ["what meds did {he} get today?", "what's been given today so far", "meds administered today?",
              "which drugs has {he} received today"]
COUNT_24 = ["how many {d} doses in the last 24h?", "# {d} doses past 24 hrs", "{d} doses given in the past 24 hours?",
            "how many times was {d} given in the last 24 hours"]
AMOUNT_24 = ["how much {d} in the last 24h ({u})?", "total {d} given over the past 24 hours, in {u}?",
             "{d} total last 24 hrs ({u})"]
GIVEN_TODAY = ["did {he} get {his} {d} today?", "{d} given today?", "has {d} been given yet today",
               "any {d} today?"]
NEXT_DUE = ["when is the next {d} due?", "next {d} dose due at?", "{d} - when's the next one due"]
MAR_DRUGS = ("vancomycin", "piperacillin", "ceftriaxone", "heparin", "acetaminophen")


def day_reading(p: Patient, key: str, now: datetime, local_tz) -> tuple[list, list]:
    """The doses of `key` 'today': by now's UTC day, and by the record's local day."""
    u0 = now.replace(hour=0, minute=0, second=0)
    ln = now.astimezone(local_tz)
    l0 = ln.replace(hour=0, minute=0, second=0)
    return p.given(key, now, u0), p.given(key, now, l0)


def mar(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.source != "sample":
            continue
        for stay, now in stay_moments(p):
            rng = seeded(f"{p.id}/mar/{iso(now)}")
            tz = stay[0].tzinfo
            keys = [k for k in MAR_DRUGS if p.given(k, now, stay[0])]
            if not keys:
                continue
            # what was given today: asked when the UTC day and the local day give the same drugs
            names_u = sorted({a[1] for k in keys for a in day_reading(p, k, now, tz)[0]})
            names_l = sorted({a[1] for k in keys for a in day_reading(p, k, now, tz)[1]})
            if names_u == names_l and names_u and rng.random() < 0.4:
                refs = [a[6] for k in keys for a in day_reading(p, k, now, tz)[1]]
                b.add("mar", p, say(p, rng, TODAY_LIST), now, "list", names_l, refs, "today-list")
            start24 = now - timedelta(hours=24)
            for key in MAR_DRUGS:
                ads = p.given(key, now, stay[0])
                if not ads:
                    continue
                d = pick(rng, DRUGS[key][1])
                routes = sorted({a[5] for a in ads})
                if len(routes) == 1 and routes[0] in ROUTE_WORDS and rng.random() < 0.25:
                    asked = pick(rng, sorted(ROUTE_WORDS))
                    q = say(p, rng, ROUTE_YN, d=d, r=pick(rng, ROUTE_WORDS[asked]))
                    b.add("mar", p, q, now, "boolean", [asked == routes[0]], [a[6] for a in ads[-2:]], "route",
                          bucket=f"route-{asked == routes[0]}")
                if same_day(ads[-1][0]) and rng.random() < 0.25:
                    b.add("mar", p, say(p, rng, LAST_GIVEN, d=d), now, "date", [udate(ads[-1][0]).isoformat()],
                          [ads[-1][6]], "last-given")
                # 24-hour windows: no dose within an hour of either end
                near = [a for a in p.given(key, now + timedelta(hours=1))
                        if min(abs((a[0] - start24).total_seconds()), abs((a[0] - now).total_seconds())) < 3600]
                win = p.given(key, now, start24)
                if not near and rng.random() < 0.3:
                    b.add("mar", p, say(p, rng, COUNT_24, d=d), now, "count", [len(win)], [a[6] for a in win],
                          "count-24h", bucket=f"count-24h-{min(len(win), 1)}")
                units = sorted({a[4] for a in win})
                if win and not near and len(units) == 1 and rng.random() < 0.3:
                    unit = units[0]
                    total = sum(a[3] for a in win)
                    asked = pick(rng, {"mg": ["mg", "g"], "g": ["g", "mg"], "units": ["units"]}[unit])
                    factor = {("mg", "g"): 0.001, ("g", "mg"): 1000}.get((unit, asked), 1)
                    b.add("mar", p, say(p, rng, AMOUNT_24, d=d, u=asked), now, "number", [r4(total * factor)],
                          [a[6] for a in win], "amount-24h", tol=0.01)
                u, lt = day_reading(p, key, now, tz)
                if bool(u) == bool(lt) and rng.random() < 0.25:
                    b.add("mar", p, say(p, rng, GIVEN_TODAY, d=d), now, "boolean", [bool(lt)], [a[6] for a in lt],
                          "given-today", bucket=f"given-today-{bool(lt)}")
                if now - ads[-1][0] < timedelta(hours=24) and rng.random() < 0.15:
                    # the time of a future dose is a schedule the record does not hold
                    b.add("mar", p, say(p, rng, NEXT_DUE, d=d), now, "date", [], [], "next-due", status="no-data")


# ---------------------------------------------------------------- pharmacist: labs before a drug

BEFORE = {
    "Cr": (["what was {his} {x} before {d} was started?", "{x} prior to starting {d}?", "last {x} before {he} went on {d}",
            "pre-{d} {x}?"], ["Cr", "creat", "SCr", "creatinine"],
           ("metformin", "lisinopril", "hydrochlorothiazide", "furosemide", "vancomycin", "piperacillin", "naproxen",
            "digoxin", "alendronate", "ceftriaxone")),
    "eGFR": (["{x} before starting {d}?", "what was the {x} just before {d} began", "renal fxn before {d}: {x}?",
              "last {x} prior to {d}"], ["eGFR", "GFR"],
             ("metformin", "lisinopril", "hydrochlorothiazide", "furosemide", "vancomycin", "piperacillin", "naproxen",
              "digoxin", "alendronate", "ceftriaxone")),
    "K": (["{x} before {d} was started?", "what was {his} {x} before {he} started {d}", "pre-{d} {x} level",
           "most recent {x} prior to starting {d}"], ["K", "potassium", "K+"],
          ("lisinopril", "hydrochlorothiazide", "furosemide", "digoxin", "heparin")),
}
LEVEL_NONE = ["latest {x}?", "what was {his} last {x}", "{x} - most recent value?", "last {x} result pls"]
LEVEL_FOR = {"warfarin": ("INR", ["INR", "PT/INR"]), "digoxin": ("digoxin", ["dig level", "digoxin level"]),
             "furosemide": ("Mg", ["Mg", "mag level"]), "hydrochlorothiazide": ("Mg", ["Mg", "magnesium"])}


def pre_drug_labs(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead or p.source == "bulk":
            continue
        now = p.now
        rng = seeded(f"{p.id}/pre_drug_labs")
        for item, (forms, words, drugs) in sorted(BEFORE.items()):
            for key in drugs:
                ms = p.orders(key, now)
                if not ms or any(len(ingredients(m[1])) != 1 for m in ms):
                    continue
                t0 = ms[0][0]
                ads = p.given(key, now)
                if ads:
                    zone = (t0 - timedelta(minutes=30), max(t0, ads[0][0]))
                else:
                    zone = (t0 - timedelta(days=1), t0 + timedelta(days=1))
                vals = p.values(item, now)
                if any(zone[0] <= o[0] <= zone[1] for o in vals):
                    continue
                before = [o for o in vals if o[0] < zone[0]]
                if not before or (t0 - before[-1][0]).days > 400:
                    continue
                if len({round(o[2], 4) for o in before if o[0] == before[-1][0]}) > 1:
                    continue
                if rng.random() < (0.6 if p.source == "synthea" else 0.5):
                    o = before[-1]
                    q = say(p, rng, forms, x=pick(rng, words), d=pick(rng, DRUGS[key][1]))
                    b.add("pre_drug_labs", p, q, now, "number", [r4(o[2])], [o[5], ms[0][3]],
                          f"{item.lower()}-before", tol=0.01)
        # levels nobody in the record has, asked of the patients on the drug
        for key, (item, words) in sorted(LEVEL_FOR.items()):
            if any(has(m[1], DRUGS[key][0]) for m in p.active()) and not p.values(item, now):
                if rng.random() < 0.7:
                    b.add("pre_drug_labs", p, say(p, rng, LEVEL_NONE, x=pick(rng, words)), now, "number", [], [],
                          "level-none", status="no-data")


# ---------------------------------------------------------------- charge nurse: vitals at handoff

VITAL_WORDS = {"HR": ["HR", "heart rate", "pulse"], "RR": ["RR", "resp rate"], "temp": ["temp", "temperature"],
               "SpO2": ["sat", "SpO2", "O2 sat", "pulse ox"], "SBP": ["SBP", "systolic"], "wt": ["wt", "weight"],
               "WBC": ["WBC", "white count"], "Cr": ["Cr", "creat"]}
LAST_VITAL = ["last {x}?", "most recent {x}", "what was {his} last {x}", "{x} on the last set of vitals?",
              "latest {x} pls"]
ADMIT_TREND = ["{x} trend since admit", "how's {his} {x} trending since admission?",
               "{x} since {he} came in - up, down or flat?", "trend of {x} this admission?"]
ADMIT_MAX = ["highest {x} since admission?", "max {x} this admit?", "peak {x} since {he} got here",
             "{x} - highest value this stay?"]
TMAX = ["Tmax since admit?", "highest temp since {he} was admitted"]
ADMIT_FIRST = ["admission {x}?", "{x} on arrival?", "what was {his} {x} when {he} came in", "first {x} this admission"]
ABSENT_VITAL = ["last {x}?", "most recent {x} reading", "what's {his} latest {x}", "{x} on the last check?"]


def handoff(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.source == "sample":
            for stay, now in stay_moments(p):
                rng = seeded(f"{p.id}/handoff/{iso(now)}")
                item = pick(rng, ["HR", "RR", "temp", "SpO2", "SBP"])
                o = p.latest(item, now)
                if o and rng.random() < 0.5:
                    b.add("handoff", p, say(p, rng, LAST_VITAL, x=pick(rng, VITAL_WORDS[item])), now, "number",
                          [r4(o[2])], [o[5]], "last-vital", tol=0.01)
                item = pick(rng, ["HR", "SBP", "WBC", "Cr"])  # not temperature: 5 % of 37 °C is a fever's span
                vals = p.values(item, now, stay[0])
                if len(vals) >= 3 and rng.random() < 0.6:
                    f, lt = p.first(item, now, stay[0]), p.latest(item, now, stay[0])
                    w = trend_word(f[2], lt[2]) if f and lt else None
                    if w:
                        b.add("handoff", p, say(p, rng, ADMIT_TREND, x=pick(rng, VITAL_WORDS[item])), now, "string",
                              [w], [f[5], lt[5]], "admit-trend", bucket=f"admit-trend-{w}")
                item = pick(rng, ["temp", "temp", "HR", "WBC"])
                vals = p.values(item, now, stay[0])
                if len(vals) >= 2 and rng.random() < 0.4:
                    top = max(o[2] for o in vals)
                    q = say(p, rng, TMAX) if item == "temp" else say(p, rng, ADMIT_MAX, x=pick(rng, VITAL_WORDS[item]))
                    b.add("handoff", p, q, now, "number", [r4(top)], [o[5] for o in vals if o[2] == top],
                          "admit-max", tol=0.01)
                item = pick(rng, ["HR", "temp", "SBP", "Cr", "WBC"])
                f = p.first(item, now, stay[0])
                if f and rng.random() < 0.3:
                    b.add("handoff", p, say(p, rng, ADMIT_FIRST, x=pick(rng, VITAL_WORDS[item])), now, "number",
                          [r4(f[2])], [f[5]], "admit-first", tol=0.01)
        elif p.source == "synthea" and not p.dead:
            rng = seeded(f"{p.id}/handoff")
            now = p.now
            item = pick(rng, ["wt", "SBP", "temp"])
            o = p.latest(item, now)
            if o and rng.random() < 0.2:
                b.add("handoff", p, say(p, rng, LAST_VITAL, x=pick(rng, VITAL_WORDS[item])), now, "number",
                      [r4(o[2])], [o[5]], "last-vital", tol=0.01)
            # heart rate, saturation and respiratory rate are charted for nobody in the Synthea bundles
            item = pick(rng, ["HR", "SpO2", "RR"])
            if not p.values(item, now) and rng.random() < 0.12:
                b.add("handoff", p, say(p, rng, ABSENT_VITAL, x=pick(rng, VITAL_WORDS[item])), now, "number", [], [],
                      "absent-vital", status="no-data")


# ---------------------------------------------------------------- nurse and case manager: devices, COVID history

DEVICE_LIST = ["what devices are on file for {him}?", "DME on record?", "list {his} equipment/devices",
               "any devices documented? which ones"]
DEVICE_YN = ["does {he} have a {x}?", "{x} at home?", "is there a {x} on file", "uses a {x}?"]
DEVICE_KINDS = {"wheelchair": (("wheelchair",), ["wheelchair", "w/c"]),
                "cpap": (("positive airway pressure",), ["CPAP", "cpap machine"]),
                "glucometer": (("glucose meter",), ["glucometer", "glucose meter"]),
                "nebulizer": (("nebulizer",), ["nebulizer", "neb machine"]),
                "hospital bed": (("hospital bed",), ["hospital bed"]),
                "crutches": (("crutches",), ["crutches"])}
COVID = ["hx of covid?", "ever had COVID-19?", "prior covid infection on record?", "covid history - yes/no"]


def devices_infection(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.source != "bulk" or p.dead:
            continue
        now = p.now
        rng = seeded(f"{p.id}/devices")
        devs = [d for d in p.devices if d[1] in (None, "active")]
        names = sorted({d[0] for d in devs})
        if names or rng.random() < 0.5:
            b.add("devices_infection", p, say(p, rng, DEVICE_LIST), now, "list", names, [d[2] for d in devs],
                  "device-list", bucket="device-list" if names else "device-list-empty")
        kinds = sorted(DEVICE_KINDS)
        rng.shuffle(kinds)
        for kind in kinds[:3]:
            frags, words = DEVICE_KINDS[kind]
            hits = [d for d in devs if has(d[0], frags)]
            if hits or rng.random() < 0.5:
                b.add("devices_infection", p, say(p, rng, DEVICE_YN, x=pick(rng, words)), now, "boolean", [bool(hits)],
                      [d[2] for d in hits], "device-yn", bucket=f"device-yn-{bool(hits)}")
        covid = [c for c in p.conds if "covid" in c[4].lower()]
        confirmed = [c for c in covid if c[4].lower() == "covid-19" and c[3] not in ("refuted", "entered-in-error")]
        if confirmed or not covid:  # a 'suspected' episode alone is left out
            b.add("devices_infection", p, say(p, rng, COVID), now, "boolean", [bool(confirmed)],
                  [c[5] for c in confirmed], "covid-hx", bucket=f"covid-{bool(confirmed)}")


# ---------------------------------------------------------------- case manager: utilization

ED_COUNT = ["# ED visits in the past {w}?", "# of ED vists in the past {w}", "how many ER visits since {y}", "ED utilization past {w} - count?",
            "how many times has {he} been to the ER in the last {w}", "number of emergency visits, last {w}"]
ADMIT_COUNT = ["how many admisions in the last {w}?", "# inpatient stays since {y}",
               "how many times was {he} hospitalized in the past {w}", "admits past {w}?"]
LOS = ["LOS for the last admission?", "how many days was {he} in on {his} last admit",
       "length of stay, most recent hospitalization (days)", "last inpt stay - LOS in days?"]
LAST_ED = ["when was {his} last ED visit?", "date of last ER visit", "last time {he} was in the emergency dept?",
           "most recent ED encounter - date?"]


def utilization(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead:
            continue
        now = p.now
        rng = seeded(f"{p.id}/utilization")
        encs = [e for e in p.encs if e[0] <= now]
        snf = any("skilled nursing" in e[3].lower() for e in encs)
        for cls, forms, pat in (("EMER", ED_COUNT, "ed-count"), ("IMP", ADMIT_COUNT, "admit-count")):
            if cls == "IMP" and snf:
                continue
            starts = [e[0] for e in encs if e[2] == cls]
            if rng.random() < (0.5 if starts else 0.12):
                form = pick(rng, forms)
                if "{y}" in form:
                    y = udate(now).year - pick(rng, [1, 2, 3, 4, 6])
                    if not robust_since(starts, y):
                        continue
                    win = [t for t in starts if t >= year_start(y)]
                    q = form.format(y=pick(rng, [str(y), f"Jan {y}", f"'{str(y)[2:]}"]), he=p.he, his=p.his)
                else:
                    n = pick(rng, [1, 2, 3, 5])
                    if not robust_window(starts, now, n):
                        continue
                    win = [t for t in starts if t >= add_years(now, -n)]
                    q = form.format(w=window_words(rng, n), he=p.he, his=p.his)
                refs = [e[4] for e in encs if e[2] == cls and e[0] in win]
                b.add("utilization", p, q, now, "count", [len(win)], refs, pat, bucket=f"{pat}-{min(len(win), 1)}")
        stays = [e for e in encs if e[2] == "IMP" and e[1] and e[1] <= now]
        if stays and not snf:
            last = stays[-1]
            los_local = (last[1].date() - last[0].date()).days
            los_utc = (udate(last[1]) - udate(last[0])).days
            if los_local == los_utc and rng.random() < 0.8:
                b.add("utilization", p, say(p, rng, LOS), now, "count", [los_local], [last[4]], "los")
        elif not any(e[2] == "IMP" for e in encs) and p.age(now) >= 18 and rng.random() < 0.08:
            b.add("utilization", p, say(p, rng, LOS), now, "count", [], [], "los-none", status="no-data")
        eds = [e for e in encs if e[2] == "EMER"]
        if eds and same_day(eds[-1][0]) and rng.random() < 0.5:
            b.add("utilization", p, say(p, rng, LAST_ED), now, "date", [udate(eds[-1][0]).isoformat()], [eds[-1][4]],
                  "last-ed")


# ---------------------------------------------------------------- case manager: problem list

ACTIVE_LIST = ["what's on {his} active problem list?", "current problem list", "active dx list pls",
               "which problems are still active", "list {his} current diagnoses"]
STILL_ACTIVE = ["is {c} stil active?", "{c} still on the problem list?", "does {he} still have {c}?",
                "{c} - still an active problem?"]
RESOLVED = ["has the {c} resolved?", "{c} resolved?", "is {his} {c} resolved now", "{c} cleared up?"]
YEARS_WITH = ["how many years has {he} had {c}?", "how mnay years has {he} had {c}", "{c} for how many yrs?", "how long has {he} had {c} (years)",
              "yrs since {c} dx?"]


ACUTE = ("bronchitis", "strep", "pharyngitis", "otitis", "ankle sprain", "pneumonia", "aki", "uti", "cellulitis",
         "back pain", "viral sinusitis")


def is_open(c, now: datetime) -> bool:
    """A condition open at now: onset by now, no abatement by now, not closed, not refuted."""
    if c[3] in ("refuted", "entered-in-error") or not c[0] or c[0] > now:
        return False
    if c[1] and c[1] <= now:
        return False
    if c[1] is None and c[2] in ("inactive", "resolved", "remission"):
        return False
    return True


def concept_hits(p: Patient, key: str, now: datetime):
    frags = CONDITIONS[key][0]
    hits = [c for c in p.conds if c[0] and c[0] <= now and c[3] not in ("refuted", "entered-in-error")
            and has(c[4], frags)]
    if key == "dm":
        hits = [c for c in hits if "prediabetes" not in c[4].lower() and not c[4].lower().startswith(
            ("neuropathy", "microalbuminuria", "proteinuria", "disorder of kidney", "diabetic"))]
    if key == "htn":
        hits = [c for c in hits if "pregnancy" not in c[4].lower()]
    return hits


def problem_list(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead or p.source == "bulk":  # the bulk export files social findings as conditions
            continue
        now = p.now
        rng = seeded(f"{p.id}/problem_list")
        open_ = [c for c in p.conds if is_open(c, now)]
        names = sorted({c[4] for c in open_})
        if names and len(names) <= 9 and not any(has(n, EPISODES) for n in names) and rng.random() < 0.6:
            b.add("problem_list", p, say(p, rng, ACTIVE_LIST), now, "list", names, [c[5] for c in open_],
                  "active-list")
        keys = sorted(CONDITIONS)
        rng.shuffle(keys)
        asked = 0
        for key in keys:
            hits = concept_hits(p, key, now)
            if not hits or asked >= 2:
                continue
            states = {is_open(c, now) for c in hits}
            if len(states) != 1:
                continue
            open_now = states.pop()
            c = pick(rng, CONDITIONS[key][1])
            acute = key in ACUTE
            roll = rng.random()
            refs = [h[5] for h in hits]
            if open_now and not acute and roll < 0.45:
                first = min(h[0] for h in hits)
                yrs = years_between(first, now)
                if yrs >= 1 and all(years_between(first + timedelta(days=s), now) == yrs for s in (-30, 30)):
                    b.add("problem_list", p, say(p, rng, YEARS_WITH, c=c), now, "number", [yrs],
                          [h[5] for h in hits if h[0] == first], "years-with")
            elif (acute and roll < 0.7) or (not acute and roll >= 0.85):
                b.add("problem_list", p, say(p, rng, RESOLVED, c=c), now, "boolean", [not open_now], refs,
                      "resolved", bucket=f"resolved-{not open_now}")
            else:
                b.add("problem_list", p, say(p, rng, STILL_ACTIVE, c=c), now, "boolean", [open_now], refs,
                      "still-active", bucket=f"still-active-{open_now}")
            asked += 1


# ---------------------------------------------------------------- case manager and patients: vaccines

FLU_SEASON = ["flu shot this season?", "has {he} had {his} flu vaccine yet this season", "flu vax up to date (this season)?",
              "got {his} flu shot for this season?"]
LAST_FLU = ["last flu shot?", "last influenza vacine?", "date of most recent influenza vaccine", "when was {his} last flu vaccine given",
            "most recent flu vax - date?"]
TD_CURRENT = ["tetanus up to date?", "Td/Tdap within the last 10 yrs?", "is {his} tetanus current",
              "tdap current? (10 yr rule)"]
FLU_COUNT = ["how many flu shots since {y}?", "# influenza vaccines since {y}", "count of flu vaccines given since {y}"]
PNEUMO = ["ever had a pneumonia vaccine?", "pneumococcal vaccine on file?", "any pneumovax or prevnar given?",
          "has {he} had the pneumonia shot"]
ZOSTER = ["shingles vaccine done?", "has {he} had Shingrix or Zostavax?", "zoster vaccine on record?"]


def season_start(now: datetime) -> datetime:
    y = now.year if (now.month, now.day) >= (8, 1) else now.year - 1
    return datetime(y, 8, 1, tzinfo=UTC)


def immunizations(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead:
            continue
        now = p.now
        rng = seeded(f"{p.id}/immunizations")
        imms = [i for i in p.imms if i[0] <= now]
        kind = {k: [i for i in imms if f(i[1].lower())] for k, f in VACCINES.items()}
        flu = kind["flu"]
        s0 = season_start(now)
        if flu and all(abs((i[0] - s0).total_seconds()) > 3 * 86400 for i in flu) and rng.random() < 0.45:
            this = [i for i in flu if i[0] >= s0]
            b.add("immunizations", p, say(p, rng, FLU_SEASON), now, "boolean", [bool(this)], [i[2] for i in this],
                  "flu-season", bucket=f"flu-season-{bool(this)}")
        if flu and same_day(flu[-1][0]) and rng.random() < 0.35:
            b.add("immunizations", p, say(p, rng, LAST_FLU), now, "date", [udate(flu[-1][0]).isoformat()],
                  [flu[-1][2]], "last-flu")
        if p.age(now) >= 18 and rng.random() < 0.4:
            tet = kind["tetanus"]
            start = add_years(now, -10)
            if all(abs((i[0] - start).total_seconds()) > 30 * 86400 for i in tet):
                inside = [i for i in tet if i[0] >= start]
                b.add("immunizations", p, say(p, rng, TD_CURRENT), now, "boolean", [bool(inside)],
                      [i[2] for i in inside], "td-current", bucket=f"td-current-{bool(inside)}")
        if len(flu) >= 2 and rng.random() < 0.35:
            y = udate(now).year - pick(rng, [3, 4, 5, 6])
            if robust_since([i[0] for i in flu], y):
                win = [i for i in flu if i[0] >= year_start(y)]
                q = say(p, rng, FLU_COUNT, y=pick(rng, [str(y), f"Jan {y}"]))
                b.add("immunizations", p, q, now, "count", [len(win)], [i[2] for i in win], "flu-count")
        if rng.random() < 0.3:
            pn = kind["pneumo"]
            b.add("immunizations", p, say(p, rng, PNEUMO), now, "boolean", [bool(pn)], [i[2] for i in pn],
                  "pneumo-ever", bucket=f"pneumo-{bool(pn)}")
        if p.age(now) >= 50 and rng.random() < 0.35:
            z = kind["zoster"]
            b.add("immunizations", p, say(p, rng, ZOSTER), now, "boolean", [bool(z)], [i[2] for i in z],
                  "zoster-ever", bucket=f"zoster-{bool(z)}")


# ---------------------------------------------------------------- cardiology

SBP_TREND = ["SBP trend over the past {w}?", "systolic trend, last {w}", "how has {his} systolic BP trended over {w}",
             "BP trend (systolic only) past {w}"]
LDL_LAST = ["most recent LDL-C?", "latest LDL", "where is {his} LDL now (last value)?", "LDL on the last lipid panel"]
STATIN_START = ["when was the statin started?", "statin start date?", "when did {he} first go on a statin",
                "date statin therapy began"]
STATIN_WHICH = ["which statin is {he} on?", "what statin is {he} taking now", "current statin and dose?",
                "name of the statin on {his} active meds"]
LDL_SINCE = ["lowest LDL since startng the statin?", "nadir LDL since statin start", "min LDL after the statin was started",
             "how low has the LDL gotten since {he} started {his} statin"]
LAB_NONE = ["last {x}?", "most recent {x}", "{x} - latest value?", "what was {his} last {x}"]
LAB_NONE_WORDS = {"BNP": ["BNP"], "troponin": ["trop", "troponin"], "EF": ["EF", "ejection fraction"]}


def statin_orders(p: Patient, now: datetime):
    return [m for m in p.meds if has(m[1], STATIN) and m[0] <= now]


def cardiology(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead or p.source == "bulk":
            continue
        now = p.now
        rng = seeded(f"{p.id}/cardiology")
        if p.age(now) < 18:
            continue
        sbp = p.values("SBP", now)
        n = pick(rng, [2, 3, 5])
        win = [o for o in sbp if o[0] >= add_years(now, -n)]
        if len(win) >= 3 and robust_window([o[0] for o in sbp], now, n) and rng.random() < 0.5:
            f, lt = p.first("SBP", now, add_years(now, -n)), p.latest("SBP", now)
            w = trend_word(f[2], lt[2]) if f and lt else None
            if w:
                b.add("cardiology", p, say(p, rng, SBP_TREND, w=window_words(rng, n)), now, "string", [w],
                      [f[5], lt[5]], "sbp-trend", bucket=f"sbp-trend-{w}")
        o = p.latest("LDL", now)
        if o and rng.random() < 0.35:
            b.add("cardiology", p, say(p, rng, LDL_LAST), now, "number", [r4(o[2])], [o[5]], "ldl-last", tol=0.01)
        # a cardiac test the patient never had, asked of a patient with a heart or vascular diagnosis
        cardiac = any(concept_hits(p, k, now) for k in ("htn", "cad", "afib", "chf"))
        item = pick(rng, sorted(LAB_NONE_WORDS))
        if cardiac and not p.values(item, now) and rng.random() < 0.4:
            b.add("cardiology", p, say(p, rng, LAB_NONE, x=pick(rng, LAB_NONE_WORDS[item])), now, "number", [], [],
                  "lab-none", status="no-data")
        st = statin_orders(p, now)
        no_statement = not any(has(s, STATIN) for s in p.statements)
        if st and no_statement and len(courses(st)) == 1:
            t0 = st[0][0]
            if same_day(t0) and rng.random() < 0.5:
                b.add("cardiology", p, say(p, rng, STATIN_START), now, "date", [udate(t0).isoformat()], [st[0][3]],
                      "statin-start")
            ldl = p.values("LDL", now)
            after = [o for o in ldl if o[0] > t0]
            if after and not any(abs((o[0] - t0).total_seconds()) <= 86400 for o in ldl) and rng.random() < 0.7:
                low = min(o[2] for o in after)
                b.add("cardiology", p, say(p, rng, LDL_SINCE), now, "number", [r4(low)],
                      [o[5] for o in after if o[2] == low] + [st[0][3]], "ldl-since-statin", tol=0.01)
        if no_statement and rng.random() < (0.5 if st else 0.1):
            act = [m for m in p.active() if has(m[1], STATIN)]
            names = sorted({m[1] for m in act})
            b.add("cardiology", p, say(p, rng, STATIN_WHICH), now, "list", names, [m[3] for m in act],
                  "statin-which", bucket="statin-which" if names else "statin-which-empty")


# ---------------------------------------------------------------- nephrology

CR_TREND = ["creat trend over the last {w}", "creatnine trend past {w}?", "Cr trending up or down past {w}?", "how has {his} creatinine trended in the last {w}",
            "SCr trend, {w}"]
EGFR_LAST = ["latest eGFR?", "most recent GFR", "what's {his} GFR now (last result)", "current eGFR value"]
EGFR_MIN = ["lowest GFR on recrod?", "nadir eGFR ever", "worst eGFR {he}'s had", "min eGFR on file"]
EGFR_BELOW = ["GFR ever below {t}?", "has {his} eGFR ever dropped under {t}", "any eGFR < {t} on record?"]
CR_CHANGE = ["how much has {his} Cr changed since {y}?", "creatinine change since {y} (last minus first)?",
             "delta creat since {y}", "Cr change from first to latest since {y}"]
UACR = ["last urine microalbumin/creatinine ratio?", "most recent UACR", "latest urine albumin-to-creatinine ratio",
        "microalbumin/Cr ratio - last value"]


def nephrology(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead or p.source == "bulk":
            continue
        now = p.now
        rng = seeded(f"{p.id}/nephrology")
        cr = p.values("Cr", now)
        n = pick(rng, [2, 3, 5])
        win = [o for o in cr if o[0] >= add_years(now, -n)]
        if len(win) >= 3 and robust_window([o[0] for o in cr], now, n) and rng.random() < 0.5:
            f, lt = p.first("Cr", now, add_years(now, -n)), p.latest("Cr", now)
            w = trend_word(f[2], lt[2]) if f and lt else None
            if w:
                b.add("nephrology", p, say(p, rng, CR_TREND, w=window_words(rng, n)), now, "string", [w],
                      [f[5], lt[5]], "cr-trend", bucket=f"cr-trend-{w}")
        eg = p.values("eGFR", now)
        roll = rng.random()
        if eg and roll < 0.3:
            o = p.latest("eGFR", now)
            if o:
                b.add("nephrology", p, say(p, rng, EGFR_LAST), now, "number", [r4(o[2])], [o[5]], "egfr-last",
                      tol=0.01)
        elif eg and roll < 0.55:
            low = min(o[2] for o in eg)
            b.add("nephrology", p, say(p, rng, EGFR_MIN), now, "number", [r4(low)],
                  [o[5] for o in eg if o[2] == low], "egfr-min", tol=0.01)
        elif eg and roll < 0.8:
            low = min(o[2] for o in eg)
            ts = [t for t in (30, 45, 60, 90) if abs(low - t) >= 3]
            if ts:
                t = pick(rng, ts)
                b.add("nephrology", p, say(p, rng, EGFR_BELOW, t=t), now, "boolean", [low < t],
                      [o[5] for o in eg if o[2] < t][:5], "egfr-below", bucket=f"egfr-below-{low < t}")
        if len(cr) >= 2 and rng.random() < 0.4:
            y = udate(now).year - pick(rng, [2, 3, 4, 5])
            inside = [o for o in cr if o[0] >= year_start(y)]
            f, lt = p.first("Cr", now, year_start(y)), p.latest("Cr", now)
            if len(inside) >= 2 and f and lt and robust_since([o[0] for o in cr], y) and abs(lt[2] - f[2]) >= 0.1:
                q = say(p, rng, CR_CHANGE, y=pick(rng, [str(y), f"Jan {y}", f"1/1/{y}"]))
                b.add("nephrology", p, q, now, "number", [r4(lt[2] - f[2])], [f[5], lt[5]], "cr-change", tol=0.02)
        o = p.latest("UACR", now)
        if o:
            b.add("nephrology", p, say(p, rng, UACR), now, "number", [r4(o[2])], [o[5]], "uacr-last", tol=0.01)
        elif p.age(now) >= 18 and any(concept_hits(p, k, now) for k in ("htn", "dm")) and rng.random() < 0.3:
            b.add("nephrology", p, say(p, rng, UACR), now, "number", [], [], "uacr-none", status="no-data")


# ---------------------------------------------------------------- endocrinology

A1C_COUNT = ["how many A1cs since {y}?", "how many a1c's done since {y}", "# of HbA1c checks since {y}", "count of a1c results since {y}"]
A1C_MAX = ["highest A1c in the past {w}", "higest A1c past {w}", "peak hgba1c last {w}?", "max A1c over the last {w}"]
A1C_FIRST = ["first A1c on file?", "earliest HbA1c we have", "what was {his} very first a1c"]
A1C_ABOVE = ["A1c ever above {t}?", "has {his} HbA1c ever been over {t}%", "any a1c > {t} on record?"]
A1C_UP = ["did {his} A1c go up from the one before?", "is the latest a1c higher than the previous one?",
          "A1c up vs prior?", "hgba1c rising compared with the last one?"]
A1C_NONE = ["latest A1c?", "most recent hemoglobin A1c", "what's {his} last a1c"]


def endocrine(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead or p.source == "bulk":
            continue
        now = p.now
        rng = seeded(f"{p.id}/endocrine")
        a1c = p.values("A1c", now)
        if not a1c:
            # an adult whose chemistry panels never held an A1c
            if p.age(now) >= 18 and any(o[1] in ("2339-0", "2345-7") for o in p.obs) and rng.random() < 0.6:
                b.add("endocrine", p, say(p, rng, A1C_NONE), now, "number", [], [], "a1c-none", status="no-data")
            continue
        if rng.random() < 0.4:
            y = udate(now).year - pick(rng, [2, 3, 4, 5])
            if robust_since([o[0] for o in a1c], y):
                win = [o for o in a1c if o[0] >= year_start(y)]
                b.add("endocrine", p, say(p, rng, A1C_COUNT, y=pick(rng, [str(y), f"Jan {y}"])), now, "count",
                      [len(win)], [o[5] for o in win], "a1c-count")
        n = pick(rng, [2, 3, 5])
        win = [o for o in a1c if o[0] >= add_years(now, -n)]
        if len(win) >= 2 and robust_window([o[0] for o in a1c], now, n) and rng.random() < 0.4:
            top = max(o[2] for o in win)
            b.add("endocrine", p, say(p, rng, A1C_MAX, w=window_words(rng, n)), now, "number", [r4(top)],
                  [o[5] for o in win if o[2] == top], "a1c-max", tol=0.01)
        f = p.first("A1c", now)
        if f and len(a1c) >= 2 and rng.random() < 0.3:
            b.add("endocrine", p, say(p, rng, A1C_FIRST), now, "number", [r4(f[2])], [f[5]], "a1c-first", tol=0.01)
        top = max(o[2] for o in a1c)
        ts = [t for t in (5.7, 6.5, 7, 8, 9) if abs(top - t) >= 0.15]
        if ts and rng.random() < 0.4:
            t = pick(rng, ts)
            b.add("endocrine", p, say(p, rng, A1C_ABOVE, t=t), now, "boolean", [top > t],
                  [o[5] for o in a1c if o[2] > t][:5], "a1c-above", bucket=f"a1c-above-{top > t}")
        if len(a1c) >= 2 and rng.random() < 0.4:
            lt = p.latest("A1c", now)
            prev = [o for o in a1c if lt and o[0] < lt[0]]
            if lt and prev and len({round(o[2], 4) for o in prev if o[0] == prev[-1][0]}) == 1 \
                    and abs(lt[2] - prev[-1][2]) >= 0.1:
                up = lt[2] > prev[-1][2]
                b.add("endocrine", p, say(p, rng, A1C_UP), now, "boolean", [up], [lt[5], prev[-1][5]], "a1c-up",
                      bucket=f"a1c-up-{up}")


# ---------------------------------------------------------------- patients and caregivers, in lay words

KIDNEY = ["what was {poss} last kidney number?", "{poss} kidney function number from the last blood test?",
          "what did {poss} most recent kidney function test show", "latest kidney numbers for {obj}?",
          "whats {poss} latest kidny number"]
SUGAR = ["what did {poss} last sugar test come back as?", "what was {poss} last sugar tst number", "{poss} most recent sugar test result?",
         "what was {poss} last 3-month sugar test (A1C)?", "last a1c number for {obj}?"]
ER_TRIPS = ["how many times did {subj} go to the ER in the last {w}?", "how many emergency room visits {has} had since {y}?",
            "how often was {subj} in the emergency room over the past {w}", "{poss} ER visits in the last {w} - how many?",
            "how many emergancy room trips for {obj} in the last {w}?"]
MEDS_NOW = ["what medicines {be} supposed to be taking now?", "list of {poss} current meds please",
            "what medications {be} on right now", "which prescriptions are active for {obj}?"]
TETANUS = ["when was {poss} last tetanus shot?", "when did {subj} last get a tetnus shot", "date of {poss} last tetanus booster"]
WEIGHT_LB = ["how much did {subj} weigh last time, in pounds?", "{poss} most recent weight in lbs?",
             "what's {poss} last weight in pounds", "{poss} wieght last time in pounds?"]
CHOL_PILL = ["when did {subj} start the cholesterol pill?", "when was {poss} cholesterol medicine started",
             "what date did {subj} begin taking {pp} cholesterol pill"]
OXYGEN = ["what was {poss} oxygen level last time?", "{poss} last oxygen reading?", "how was {poss} oxygen at the last check?"]


def voice(p: Patient, now: datetime, rng: random.Random) -> dict:
    """First person, or a family member asking (a child's parent, an older patient's son or daughter, a spouse)."""
    a = p.age(now)
    f = p.sex == "female"
    if a < 18:
        who = "my daughter" if f else "my son"
    elif a >= 65 and rng.random() < 0.6:
        who = "my mom" if f else "my dad"
    elif rng.random() < 0.3:
        who = "my wife" if f else "my husband"
    else:
        return {"poss": "my", "subj": "I", "be": "am I", "obj": "me", "has": "have I", "pp": "my"}
    return {"poss": f"{who}'s", "subj": who, "be": f"is {who}", "obj": who, "has": f"has {who}", "pp": p.his}


def lay(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead:
            continue
        now = p.now
        rng = seeded(f"{p.id}/lay")
        v = voice(p, now, rng)

        def ask(forms, rng=rng, v=v, **kw):
            return pick(rng, forms).format(**v, **kw)

        o = p.latest("eGFR", now)
        if o and rng.random() < 0.2:
            b.add("lay", p, ask(KIDNEY), now, "number", [r4(o[2])], [o[5]], "kidney-number", tol=0.01)
        o = p.latest("A1c", now)
        if o and rng.random() < 0.25:
            b.add("lay", p, ask(SUGAR), now, "number", [r4(o[2])], [o[5]], "sugar-test", tol=0.01)
        eds = [e for e in p.encs if e[2] == "EMER" and e[0] <= now]
        if (eds and rng.random() < 0.3) or rng.random() < 0.03:
            form = pick(rng, ER_TRIPS)
            starts = [e[0] for e in eds]
            if "{y}" in form:
                y = udate(now).year - pick(rng, [2, 3, 5])
                if robust_since(starts, y):
                    win = [e for e in eds if e[0] >= year_start(y)]
                    b.add("lay", p, form.format(y=y, **v), now, "count", [len(win)], [e[4] for e in win], "er-trips",
                          bucket=f"er-trips-{min(len(win), 1)}")
            else:
                n = pick(rng, [1, 2, 3])
                if robust_window(starts, now, n):
                    win = [e for e in eds if e[0] >= add_years(now, -n)]
                    b.add("lay", p, form.format(w=window_words(rng, n), **v), now, "count", [len(win)],
                          [e[4] for e in win], "er-trips", bucket=f"er-trips-{min(len(win), 1)}")
        act = p.active()
        if not p.statements and rng.random() < (0.2 if act else 0.04):
            names = sorted({m[1] for m in act})
            b.add("lay", p, ask(MEDS_NOW), now, "list", names, [m[3] for m in act], "meds-now",
                  bucket="meds-now" if names else "meds-now-empty")
        tet = [i for i in p.imms if VACCINES["tetanus"](i[1].lower()) and i[0] <= now]
        if tet and same_day(tet[-1][0]) and rng.random() < 0.2:
            b.add("lay", p, ask(TETANUS), now, "date", [udate(tet[-1][0]).isoformat()], [tet[-1][2]], "tetanus-last")
        o = p.latest("wt", now)
        if o and rng.random() < 0.15:
            b.add("lay", p, ask(WEIGHT_LB), now, "number", [round(o[2] * 2.2046226218, 2)], [o[5]], "weight-lb",
                  tol=0.01)
        st = statin_orders(p, now)
        if st and not any(has(s, STATIN) for s in p.statements) and len(courses(st)) == 1 and same_day(st[0][0]) \
                and rng.random() < 0.4:
            b.add("lay", p, ask(CHOL_PILL), now, "date", [udate(st[0][0]).isoformat()], [st[0][3]], "statin-start-lay")
        if p.source == "synthea" and not p.values("SpO2", now) and rng.random() < 0.05:
            b.add("lay", p, ask(OXYGEN), now, "number", [], [], "oxygen-none", status="no-data")


# ---------------------------------------------------------------- selection

CATEGORY_CAP = {"med_orders": 22, "mar": 20, "pre_drug_labs": 16, "handoff": 20, "devices_infection": 14,
                "utilization": 20, "problem_list": 18, "immunizations": 20, "cardiology": 18, "nephrology": 18,
                "endocrine": 18, "lay": 20}
NODATA_CAP = 3      # questions per no-data pattern
THIN_CAP = 2        # empty lists and zero counts, per bucket
GENERATORS = (med_orders, mar, pre_drug_labs, handoff, devices_infection, utilization, problem_list, immunizations,
              cardiology, nephrology, endocrine, lay)


def select(rows: list[dict]) -> list[dict]:
    """A balanced subset: round-robin over a category's patterns (no-data patterns first), each pattern's queue
    alternating over its buckets (the kind of gold: yes / no, zero / some, a trend word), every bucket shuffled by a
    seeded RNG; up to the category's cap. Identical questions (patient, now, words) are kept once. The kept rows stay
    in build order."""
    seen = set()
    uniq = []
    for row in rows:
        key = (row["patient_id"], row["now"], row["question"])
        if key not in seen:
            seen.add(key)
            uniq.append(row)
    groups: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for i, row in enumerate(uniq):
        groups[row["category"]][row["template"]][row["_bucket"]].append(i)
    keep: set[int] = set()
    for cat in sorted(groups):
        queues = {}
        for pat, buckets in sorted(groups[cat].items()):
            lanes = []
            for bucket, idx in sorted(buckets.items()):
                idx = list(idx)
                seeded(f"select/{cat}/{bucket}").shuffle(idx)
                if uniq[idx[0]]["expected_status"] == "no-data":
                    idx = idx[:NODATA_CAP]
                elif bucket.endswith(("-empty", "-0")):
                    idx = idx[:THIN_CAP]
                lanes.append(idx)
            seeded(f"lanes/{cat}/{pat}").shuffle(lanes)
            merged = []
            while any(lanes):
                for lane in lanes:
                    if lane:
                        merged.append(lane.pop(0))
            queues[pat] = merged
        order = sorted(queues, key=lambda k: (uniq[queues[k][0]]["expected_status"] != "no-data", k))
        taken = 0
        while taken < CATEGORY_CAP[cat] and any(queues.values()):
            for pat in order:
                if queues[pat] and taken < CATEGORY_CAP[cat]:
                    keep.add(queues[pat].pop(0))
                    taken += 1
    return [row for i, row in enumerate(uniq) if i in keep]


def build(data: str, sample: str) -> list[dict]:
    pts = load_bundles(os.path.join(data, "synthea-r4", "*.json"), "synthea")
    pts += load_bulk(os.path.join(data, "synthea-bulk-10"))
    pts += load_bundles(os.path.join(sample, "*.json"), "sample")
    b = Builder()
    for gen in GENERATORS:
        gen(b, pts)
    rows = select(b.rows)
    order = {g.__name__: i for i, g in enumerate(GENERATORS)}
    rows.sort(key=lambda r: order[r["category"]])  # stable: build order within a category
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row["category"]] += 1
        row["id"] = f"{row['category']}-{counts[row['category']]:03d}"
        del row["_bucket"]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--sample", default=os.path.join(ROOT, "examples", "sample"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    for sub in ("synthea-r4", "synthea-bulk-10"):
        if not os.path.isdir(os.path.join(args.data, sub)):
            print(f"missing {sub} under --data {args.data}", file=sys.stderr)
            return 2
    rows = build(args.data, args.sample)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if args.check:
        try:
            with open(OUT, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            print("stale: run evals/probe_voices2/build.py", file=sys.stderr)
            return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["category"]] += 1
    nodata = sum(r["expected_status"] == "no-data" for r in rows)
    print(dict(counts), len(rows), f"no-data {nodata}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
