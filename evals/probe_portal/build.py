"""Build the probe_portal question set: a patient (or a parent) reading their own record in a patient portal.

Voice: first person ("what was my cholesterol last time?", "am I still on the water pill?") and parents asking about
a child ("how tall was she at her last checkup?", "how many DTaP shots has he had?"). Lay words for labs, vitals,
drugs and conditions, vague time words with fixed meanings (see README.md), a misspelling now and then.

Reads the raw FHIR transaction bundles of ``../shared/data/synthea-r4`` with orjson, resolves the ``urn:uuid:``
references itself and imports nothing from fhirqa. Every random choice comes from an RNG seeded by a string
(patient id + generator name), so the same data gives the same bytes.

Usage: python evals/probe_portal/build.py [--data DIR] [--check]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import sys
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "questions.jsonl")

# Labs a patient names in lay words: key -> (LOINC, spoken forms; the last ones are the misspellings).
LABS = {
    "chol": ("2093-3", ["cholesterol", "total cholesterol", "cholesterol number", "cholestrol"]),
    "ldl": ("18262-6", ["bad cholesterol", "LDL", "bad cholesterol (LDL)", "LDL cholestrol"]),
    "hdl": ("2085-9", ["good cholesterol", "HDL", "good cholesterol number"]),
    "trig": ("2571-8", ["triglycerides", "trigs", "triglicerides"]),
    "glu": ("2339-0", ["blood sugar", "sugar", "glucose", "blood suger"]),
    "a1c": ("4548-4", ["A1c", "sugar test (the A1c)", "hemoglobin A1c", "A1C number", "a1c"]),
    "egfr": ("33914-3", ["kidney function (GFR)", "GFR", "kidney function number (eGFR)", "eGFR"]),
    "cr": ("38483-4", ["creatinine", "kidney number (creatinine)", "creatinin"]),
    "k": ("6298-4", ["potassium", "potassium level", "potasium"]),
    "hgb": ("718-7", ["hemoglobin", "hemoglobin (blood count)", "hemoglobn"]),
    "plt": ("777-3", ["platelets", "platelet count"]),
    "na": ("2947-0", ["sodium", "salt level (sodium)"]),
}
# Vitals: key -> (LOINC, spoken forms). BP components come from the 55284-4 panel.
VITALS = {
    "wt": ("29463-7", ["weight", "weight", "wieght"]),
    "ht": ("8302-2", ["height"]),
    "bmi": ("39156-5", ["BMI", "body mass index"]),
    "sbp": ("8480-6", ["top blood pressure number", "systolic blood pressure", "top number (BP)"]),
    "dbp": ("8462-4", ["bottom blood pressure number", "diastolic pressure", "bottom BP number"]),
}
# Things nobody in these bundles has measured: asking for them is a no-data question.
ABSENT = ["heart rate", "pulse", "thyroid level (TSH)", "vitamin D level", "INR", "oxygen level",
          "iron level (ferritin)"]

# Lay drug classes: the RxNorm names (lower-case substrings of MedicationRequest text) counted as members, and guard
# substrings that make a "no" unclear (a near drug) so no negative is asked of a patient who has one.
CLASSES = {
    "water pill": (["hydrochlorothiazide", "furosemide", "lasix"], []),
    "blood thinner": (["warfarin", "clopidogrel"], ["aspirin", "alteplase", "heparin"]),
    "cholesterol pill": (["simvastatin", "simvistatin", "atorvastatin"], []),
    "blood pressure pill": (["hydrochlorothiazide", "amlodipine", "metoprolol", "captopril", "verapamil"],
                            ["furosemide", "lasix"]),
    "antibiotic": (["amoxicillin", "clavulanate", "penicillin", "cefuroxime", "nitrofurantoin", "ampicillin"], []),
    "birth control": (["day pack", "intrauterine system", "etonogestrel", "medroxyprogesterone", "nuvaring",
                       "norelgestromin"], []),
    "inhaler": (["inhaler"], []),
    "thyroid pill": (["levothyroxine"], []),
}
CLASS_WORDS = {
    "water pill": ["water pill", "water pill", "fluid pill"],
    "blood thinner": ["blood thinner", "blood thinners"],
    "cholesterol pill": ["cholesterol pill", "cholesterol medicine", "statin"],
    "blood pressure pill": ["blood pressure pill", "blood pressure medicine", "BP meds"],
    "antibiotic": ["antibiotics", "antibiotic"],
    "birth control": ["birth control"],
    "inhaler": ["inhaler", "puffer"],
    "thyroid pill": ["thyroid pill", "thyroid medicine"],
}

# Vaccines: spoken -> CVX display substrings (lower case) of the completed Immunizations counted.
VAX = {
    "tetanus shot": ["td (adult)", "tdap", "dtap"],
    "flu shot": ["influenza"],
    "shingles shot": ["zoster"],
    "pneumonia shot": ["pneumococcal"],
    "HPV shot": ["hpv"],
    "MMR": ["mmr"],
    "DTaP": ["dtap"],
    "polio shot": ["ipv"],
    "chickenpox shot": ["varicella"],
    "hep B shot": ["hep b"],
    "hep A shot": ["hep a"],
    "Hib": ["hib"],
    "rotavirus vaccine": ["rotavirus"],
    "meningitis shot": ["meningococcal"],
}
# Procedures that also give tetanus protection: no tetanus question is asked of a patient who has one.
TETANUS_PROCS = ["tetanus", "diphtheria"]

# Conditions in lay words: spoken -> exact condition names (code.text) counted, and near names (a "no" is then not
# asked).
CONDS = {
    "high blood pressure": (["Hypertension"], []),
    "diabetes": (["Diabetes", "Neuropathy due to type 2 diabetes mellitus (disorder)", "Diabetic renal disease (disorder)"],
                 ["Prediabetes", "Hyperglycemia (disorder)", "Metabolic syndrome X (disorder)"]),
    "prediabetes": (["Prediabetes"], ["Diabetes", "Hyperglycemia (disorder)"]),
    "high cholesterol": (["Hyperlipidemia"], ["Hypertriglyceridemia (disorder)", "Metabolic syndrome X (disorder)"]),
    "anemia": (["Anemia (disorder)"], []),
    "asthma": (["Childhood asthma", "Asthma"], []),
    "heart disease": (["Coronary Heart Disease"], ["Myocardial Infarction", "History of myocardial infarction (situation)",
                                                   "Chronic congestive heart failure (disorder)", "Cardiac Arrest"]),
    "a heart attack": (["Myocardial Infarction", "History of myocardial infarction (situation)"], ["Cardiac Arrest"]),
    "a stroke": (["Stroke"], []),
    "osteoporosis": (["Osteoporosis (disorder)"], ["Pathological fracture due to osteoporosis (disorder)"]),
    "a sinus infection": (["Viral sinusitis (disorder)", "Sinusitis (disorder)", "Acute bacterial sinusitis (disorder)",
                         "Chronic sinusitis (disorder)"], []),
    "strep throat": (["Streptococcal sore throat (disorder)"], ["Acute viral pharyngitis (disorder)"]),
    "a sprained ankle": (["Sprain of ankle"], ["Fracture of ankle"]),
    "an ear infection": (["Otitis media"], []),
    "bronchitis": (["Acute bronchitis (disorder)"], []),
    "atrial fibrillation": (["Atrial Fibrillation"], []),
}
CHECKUP = {"Encounter for check up (procedure)", "Encounter for 'check-up'"}
# Procedures a patient calls "my surgery" (code.text). "Since my surgery" is asked only when the record has exactly
# one such procedure.
SURGERY = {"Appendectomy", "Partial resection of colon", "Coronary artery bypass grafting", "Cesarean section",
           "Prostatectomy", "Bilateral tubal ligation", "Vasectomy",
           "Excision of fallopian tube and surgical removal of ectopic pregnancy"}
SURGERY_NEAR = ["ectomy", "resection", "bypass", "section", "ligation", "excision", "surg", "implant", "insertion",
                "catheter", "thrombectomy", "ablation"]

KG_TO_LB = 2.2046226218
CM_TO_IN = 1 / 2.54


def T(s):
    """Parse an ISO instant (Synthea writes +00:00 offsets; a bare date is midnight UTC)."""
    if s is None:
        return None
    if len(s) == 10:
        return datetime.fromisoformat(s).replace(tzinfo=UTC)
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def add_months(d, n):
    """The same instant n months earlier/later (days here are ≤ 28, so nothing clamps)."""
    y, m = divmod(d.month - 1 + n, 12)
    return d.replace(year=d.year + y, month=m + 1)


def add_years(d, n):
    """The same calendar date n years later (Feb 29 -> Feb 28)."""
    try:
        return d.replace(year=d.year + n)
    except ValueError:
        return d.replace(year=d.year + n, day=28)


def r_(res):
    return f"{res['resourceType']}/{res['id']}"


class P:
    """One patient's resources, by type, with references resolved."""

    def __init__(self, bundle):
        self.by = defaultdict(list)
        self.idx = {}
        for e in bundle["entry"]:
            r = e["resource"]
            self.by[r["resourceType"]].append(r)
            self.idx[e.get("fullUrl", "")] = r
        self.pat = self.by["Patient"][0]
        self.id = self.pat["id"]
        self.first = self.pat["name"][0]["given"][0]
        self.female = self.pat.get("gender") == "female"
        self.dead = "deceasedDateTime" in self.pat
        self.birth = date.fromisoformat(self.pat["birthDate"])
        self.last = self._last_fact()
        rng = random.Random(self.id + ":now")  # noqa: S311 - seeded for reproducible draws
        offs = [k for k in range(3, 22) if (self.last + timedelta(days=k)).day <= 28]
        nd = (self.last + timedelta(days=rng.choice(offs))).date()
        self.now = datetime(nd.year, nd.month, nd.day, 12, tzinfo=UTC)
        self.age = (self.now.date() - self.birth).days / 365.25
        self._series = {}

    def _last_fact(self):
        ts = []
        for typ, rs in self.by.items():
            if typ in ("Claim", "ExplanationOfBenefit", "Patient", "Organization", "Practitioner"):
                continue  # billing periods run a year past the care; not a clinical fact
            for r in rs:
                for k in ("effectiveDateTime", "issued", "authoredOn", "occurrenceDateTime", "onsetDateTime",
                          "abatementDateTime", "recordedDate", "started", "performedDateTime"):
                    if k in r:
                        ts.append(T(r[k]))
                for k in ("period", "performedPeriod", "effectivePeriod"):
                    for kk in ("start", "end"):
                        if kk in r.get(k, {}):
                            ts.append(T(r[k][kk]))
        if self.dead:
            ts.append(T(self.pat["deceasedDateTime"]))
        return max(ts)

    def series(self, loinc):
        """(instant, value, Observation) of one LOINC code, oldest first; BP components included."""
        if loinc in self._series:
            return self._series[loinc]
        out = []
        for o in self.by["Observation"]:
            t = T(o.get("effectiveDateTime"))
            if ((o["code"].get("coding") or [{}])[0].get("code") == loinc and "valueQuantity" in o):
                out.append((t, o["valueQuantity"]["value"], o))
            for c in o.get("component", []):
                if (c["code"].get("coding") or [{}])[0].get("code") == loinc and "valueQuantity" in c:
                    out.append((t, c["valueQuantity"]["value"], o))
        out.sort(key=lambda x: x[0])
        self._series[loinc] = out
        return out

    def encs(self, cls=None):
        """Encounters (of one class), by start."""
        es = [e for e in self.by["Encounter"] if cls is None or e["class"]["code"] == cls]
        return sorted(es, key=lambda e: T(e["period"]["start"]))

    def meds(self, cls):
        """MedicationRequests whose name holds a member substring of a lay class."""
        members, _ = CLASSES[cls]
        return [m for m in self.by["MedicationRequest"] if any(s in mtext(m).lower() for s in members)]

    def near_meds(self, cls):
        _, guard = CLASSES[cls]
        return [m for m in self.by["MedicationRequest"] if any(s in mtext(m).lower() for s in guard)]

    def vax(self, key):
        """Completed Immunizations of a spoken vaccine, by date."""
        subs = VAX[key]
        out = [i for i in self.by["Immunization"] if i.get("status") == "completed"
               and any(s in i["vaccineCode"]["text"].lower() for s in subs)]
        return sorted(out, key=lambda i: T(i["occurrenceDateTime"]))

    def conds(self, names):
        return [c for c in self.by["Condition"] if c["code"]["text"] in names]

    # pronouns
    def s(self):
        return "she" if self.female else "he"

    def o(self):
        return "her" if self.female else "him"

    def p(self):
        return "her" if self.female else "his"

    def kid(self):
        return "daughter" if self.female else "son"


def a_(word):
    """'a' or 'an' before a spoken name."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def mtext(m):
    return m["medicationCodeableConcept"]["text"]


_TURN = [0]


def pick(options):
    """The sentence form for the next accepted question of a generator: forms take turns."""
    return options[_TURN[0] % len(options)]


def Q(question, atype, expected, template, refs=(), status="answered", tol=None):
    """One question row (id, patient and now are filled by build)."""
    if tol is None:
        tol = 0.01 if atype == "number" else 0
    return {"question": question, "answer_type": atype, "expected": expected, "expected_status": status,
            "tolerance": tol, "gold_refs": list(refs), "template": template}


def rnd(v):
    return round(v, 2)


def latest(series):
    """The last (t, v, o) unless two different values share the latest instant."""
    if not series:
        return None
    t = series[-1][0]
    vals = {x[1] for x in series if x[0] == t}
    return series[-1] if len(vals) == 1 else None


def in_win(series, start, end):
    return [x for x in series if start <= x[0] <= end]


def robust_window(p, series, months):
    """Values in the last `months` months, or None when moving the start 7 days either way changes them."""
    start = add_months(p.now, -months)
    a = in_win(series, start, p.now)
    for d in (-7, 7):
        if in_win(series, start + timedelta(days=d), p.now) != a:
            return None
    return a


def this_year(p, series):
    """Values from Jan 1 of now's year to now; None when a value lies within a day of Jan 1."""
    start = datetime(p.now.year, 1, 1, tzinfo=UTC)
    if any(abs((x[0] - start).total_seconds()) < 86400 for x in series):
        return None
    return in_win(series, start, p.now)


# Vague time words (README.md): "lately" = past 6 months, "in the past year" = 12 months, "this year" = calendar.
WINDOWS = [("lately", 6), ("in the past year", 12), ("over the past 2 years", 24),
           ("this year", None)]


def window(p, series, rng):
    word, months = rng.choice(WINDOWS)
    vals = this_year(p, series) if months is None else robust_window(p, series, months)
    return word, vals


def trend_word(first, last):
    """increasing / decreasing / stable by the ±5 % rule; None within 0.5 % of a cut-off."""
    r = (last - first) / first
    if abs(abs(r) - 0.05) < 0.005:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


# ----------------------------------------------------------------------------------------- labs: last value
def g_lab_last(p, rng):
    key = rng.choice(sorted(LABS))
    loinc, words = LABS[key]
    last = latest(p.series(loinc))
    if not last:
        return None
    w = rng.choice(words)
    ph = pick([f"what was my {w} last time?", f"what was my most recent {w}?", f"my last {w} result?",
               f"whats my {w} now", f"what did my {w} come back at last time"])
    return Q(ph, "number", [rnd(last[1])], f"lab_last/{key}", [r_(last[2])])


def g_lab_last_date(p, rng):
    key = rng.choice(sorted(LABS))
    loinc, words = LABS[key]
    s = p.series(loinc)
    if not s:
        return None
    w = rng.choice(words)
    ph = pick([f"when did I last get my {w} checked?", f"when was my {w} last tested?",
               f"when was the last time they checked my {w}?"])
    return Q(ph, "date", [s[-1][0].date().isoformat()], f"lab_last/date-{key}", [r_(s[-1][2])])


def g_lab_never(p, rng, everyone):
    """A lab other patients have and this one never had, or a lab nobody has → no-data."""
    if rng.random() < 0.5:
        cands = [k for k in sorted(LABS) if k in everyone and not p.series(LABS[k][0])]
        if not cands:
            return None
        key = rng.choice(cands)
        w = rng.choice(LABS[key][1][:2])
        tag = f"never-{key}"
    else:
        w = rng.choice(ABSENT)
        tag = "absent"
    ph = pick([f"what was my last {w}?", f"what was my {w} last time?", f"my most recent {w}?"])
    return Q(ph, "number", [], f"lab_last/{tag}", status="no-data")


# ----------------------------------------------------------------------------------------- vitals
def g_vital_last(p, rng):
    if p.age < 18:
        return None
    key = rng.choice(sorted(VITALS))
    loinc, words = VITALS[key]
    last = latest(p.series(loinc))
    if not last:
        return None
    w = rng.choice(words)
    v = last[1]
    if key == "wt" and rng.random() < 0.5:
        ph = pick(["how much did I weigh last time, in pounds?", "what was my weight in lbs at my last visit?"])
        return Q(ph, "number", [rnd(v * KG_TO_LB)], "vitals/wt-lb", [r_(last[2])])
    if key == "ht" and rng.random() < 0.3:
        return Q("how tall am I in inches?", "number", [rnd(v * CM_TO_IN)], "vitals/ht-in", [r_(last[2])])
    ph = pick([f"what was my {w} last time?", f"what was my {w} at my last visit?", f"my most recent {w}?"])
    return Q(ph, "number", [rnd(v)], f"vitals/{key}", [r_(last[2])])


def g_vital_extreme(p, rng):
    if p.age < 18:
        return None
    key = rng.choice(["wt", "sbp", "dbp", "bmi"])
    loinc, words = VITALS[key]
    s = p.series(loinc)
    if len(s) < 2:
        return None
    hi = rng.random() < 0.6
    v = max(x[1] for x in s) if hi else min(x[1] for x in s)
    w = rng.choice(words)
    ph = (f"what's the {'highest' if hi else 'lowest'} my {w} has ever been?" if pick([0, 1]) == 0
          else f"{'highest' if hi else 'lowest'} {w} I've ever had?")
    return Q(ph, "number", [rnd(v)], f"vitals/{'max' if hi else 'min'}-{key}")


def g_vital_absent(p, rng):
    w = rng.choice(["heart rate", "pulse", "oxygen level", "oxygen saturation"])
    ph = pick([f"what was my {w} last time?", f"what's my {w}?", f"my {w} at my last visit?"])
    return Q(ph, "number", [], "vitals/absent", status="no-data")


# ----------------------------------------------------------------------------------------- values over vague windows
def g_window_stat(p, rng):
    key = rng.choice(["glu", "a1c", "chol", "ldl", "sbp", "wt", "dbp"])
    loinc, words = (LABS.get(key) or VITALS[key])
    s = p.series(loinc)
    if not s:
        return None
    word, vals = window(p, s, rng)
    if vals is None:
        return None
    w = rng.choice(words)
    stat = rng.choice(["max", "min", "avg", "last"])
    if word == "lately" and (stat == "last" or not vals):
        return None  # "what was my X lately?" fairly reads as "my latest X" whatever its date (gold fix)
    if not vals:
        ph = f"what was my {w} {word}?"
        return Q(ph, "number", [], f"window/empty-{key}", status="no-data")
    if stat == "avg" and len(vals) < 2:
        stat = "max"
    if stat == "last" and len({x[1] for x in vals if x[0] == vals[-1][0]}) > 1:
        return None
    v = {"max": max(x[1] for x in vals), "min": min(x[1] for x in vals),
         "avg": sum(x[1] for x in vals) / len(vals), "last": vals[-1][1]}[stat]
    ph = {"max": f"what was my highest {w} {word}?", "min": f"what's the lowest my {w} has been {word}?",
          "avg": f"what has my {w} averaged {word}?", "last": f"what was my {w} {word}?"}[stat]
    return Q(ph, "number", [rnd(v)], f"window/{stat}-{key}", [r_(x[2]) for x in vals][:10])


def g_window_count(p, rng):
    key = rng.choice(["glu", "a1c", "chol", "wt"])
    loinc, words = (LABS.get(key) or VITALS[key])
    s = p.series(loinc)
    if not s:
        return None
    word, vals = window(p, s, rng)
    if vals is None:
        return None
    w = rng.choice(words)
    verb = "weighed" if key == "wt" else f"had my {w} checked"
    ph = f"how many times have I {verb} {word}?" if key != "wt" else f"how many times was I weighed {word}?"
    del verb
    return Q(ph, "count", [len(vals)], f"window/count-{key}")


# ----------------------------------------------------------------------------------------- trends, better/worse
def g_trend(p, rng):
    key = rng.choice(["chol", "ldl", "a1c", "glu", "wt", "sbp", "egfr", "bmi"])
    loinc, words = (LABS.get(key) or VITALS[key])
    s = p.series(loinc)
    months = rng.choice([24, 36, 60])
    vals = robust_window(p, s, months)
    if not vals or len(vals) < 2:
        return None
    first, last = vals[0], vals[-1]
    if latest(vals) is None or len({x[1] for x in vals if x[0] == first[0]}) > 1:
        return None
    tw = trend_word(first[1], last[1])
    if tw is None:
        return None
    w = rng.choice(words)
    span = f"{months // 12} years"
    ph = pick([f"is my {w} going up or down over the past {span}?", f"how has my {w} been trending the last {span}?",
               f"has my {w} gotten higher or lower in the past {span}?"])
    return Q(ph, "string", [tw], f"trend/{key}-{months}m", [r_(first[2]), r_(last[2])])


def _last_two(s):
    """The latest and the previous value (distinct instants, no ties)."""
    if len(s) < 2 or latest(s) is None:
        return None
    prev = [x for x in s if x[0] < s[-1][0]]
    if not prev or len({x[1] for x in prev if x[0] == prev[-1][0]}) > 1:
        return None
    return prev[-1], s[-1]


def g_since_last_time(p, rng):
    """'Did my X go up since last time?' = the latest value vs the one before it."""
    key = rng.choice(["chol", "ldl", "a1c", "glu", "wt", "sbp", "trig", "hdl"])
    loinc, words = (LABS.get(key) or VITALS[key])
    two = _last_two(p.series(loinc))
    if not two:
        return None
    a, b = two
    if abs(b[1] - a[1]) <= 0.01 * abs(a[1]):
        return None
    up = rng.random() < 0.5
    w = rng.choice(words)
    ph = f"did my {w} go {'up' if up else 'down'} since last time?"
    return Q(ph, "boolean", [(b[1] > a[1]) == up], f"trend/since-last-{key}", [r_(a[2]), r_(b[2])])


def g_kidney_worse(p, rng):
    """'Did my kidney numbers get worse?' = eGFR fell from the previous test to the latest, and creatinine rose."""
    e2 = _last_two(p.series("33914-3"))
    c2 = _last_two(p.series("38483-4"))
    if not e2 or not c2 or e2[1][0] != c2[1][0] or e2[0][0] != c2[0][0]:
        return None
    de = (e2[1][1] - e2[0][1]) / e2[0][1]
    dc = (c2[1][1] - c2[0][1]) / c2[0][1]
    if abs(de) < 0.02 or abs(dc) < 0.02 or (de < 0) == (dc < 0):
        return None  # the two numbers must tell the same story
    ph = pick(["did my kidney numbers get worse?", "are my kidneys getting worse compared to last time?",
               "did my kidney function go down since my last test?"])
    return Q(ph, "boolean", [de < 0], "trend/kidney-worse", [r_(e2[0][2]), r_(e2[1][2])])


def g_weight_change(p, rng):
    """'How much weight have I lost/gained in the past year?' (asked with the verb that fits; answer in kg, positive)."""
    if p.age < 18:
        return None
    s = p.series("29463-7")
    vals = robust_window(p, s, 12)
    if not vals or len(vals) < 2:
        return None
    d = vals[-1][1] - vals[0][1]
    if abs(d) < 0.5:
        return None
    verb = "gained" if d > 0 else "lost"
    ph = pick([f"how much weight have I {verb} in the past year?", f"how many kilos have I {verb} over the last 12 months?"])
    return Q(ph, "number", [rnd(abs(d))], f"trend/wt-{verb}-12m", [r_(vals[0][2]), r_(vals[-1][2])], tol=0.02)


# ----------------------------------------------------------------------------------------- current meds
def active(p, ms):
    return [m for m in ms if m["status"] == "active" and T(m["authoredOn"]) <= p.now]


def g_med_still(p, rng):
    if p.dead:
        return None
    cls = rng.choice(sorted(CLASSES))
    ms = p.meds(cls)
    if not ms:
        return None
    act = active(p, ms)
    w = rng.choice(CLASS_WORDS[cls])
    art = "" if w.endswith("s") and w != "BP meds" else "the "
    ph = pick([f"am I still on {art}{w}?", f"am i still taking {art}{w}", f"do I still take {art}{w}?"])
    return Q(ph, "boolean", [bool(act)], f"meds_current/still-{'yes' if act else 'no'}",
             [r_(m) for m in (act or ms)])


def g_med_on_class(p, rng, everyone):
    """'Am I on a blood thinner?' — a class the patient has never been prescribed → false (no near drug)."""
    if p.dead:
        return None
    cls = rng.choice(sorted(CLASSES))
    if p.meds(cls) or p.near_meds(cls) or cls not in everyone:
        return None
    if cls == "birth control" and (not p.female or p.age < 14):
        return None
    w = rng.choice(CLASS_WORDS[cls])
    ph = pick([f"am I on any {w}?", f"am I taking {a_(w.rstrip('s'))} right now?" if w != "birth control"
               else "am I taking birth control right now?"])
    return Q(ph, "boolean", [False], f"meds_current/class-never-{cls.replace(' ', '_')}")


def g_med_list(p, rng):
    if p.dead:
        return None
    act = active(p, p.by["MedicationRequest"])
    names = sorted({mtext(m) for m in act})
    if not names and rng.random() < 0.7:
        return None
    if p.age < 16:
        ph = pick([f"what medicines is my {p.kid()} on right now?", f"is {p.first} on any medications right now?"])
        if "any" in ph:
            return Q(ph, "boolean", [bool(names)], "meds_current/kid-any", [r_(m) for m in act])
    else:
        ph = pick(["what meds am I on?", "what medications am I taking right now?", "what am i currently prescribed",
                   "list my current medicines"])
    return Q(ph, "list", names, "meds_current/list" + ("" if names else "-empty"), [r_(m) for m in act])


# ----------------------------------------------------------------------------------------- medication history
def g_med_ever(p, rng, everyone):
    cls = rng.choice(sorted(CLASSES))
    if cls not in everyone or (cls == "birth control" and (not p.female or p.age < 14)):
        return None
    ms = p.meds(cls)
    if not ms and p.near_meds(cls):
        return None
    w = rng.choice(CLASS_WORDS[cls])
    aw = w if w.endswith("s") or w == "birth control" else a_(w)
    ph = pick([f"have I ever been on {aw}?", f"was I ever prescribed {aw}?", f"did they ever put me on {aw}?"])
    return Q(ph, "boolean", [bool(ms)], f"meds_history/ever-{'yes' if ms else 'no'}", [r_(m) for m in ms][:5])


def g_med_start(p, rng):
    cls = rng.choice(sorted(CLASSES))
    ms = sorted(p.meds(cls), key=lambda m: T(m["authoredOn"]))
    if not ms:
        return None
    if p.near_meds(cls) and min(T(m["authoredOn"]) for m in p.near_meds(cls)) < T(ms[0]["authoredOn"]):
        return None
    w = rng.choice(CLASS_WORDS[cls])
    first = pick([True, False, True])
    if first:
        ph = rng.choice([f"when did I start the {w}?", f"when was I first put on the {w}?",
                         f"when did they first give me the {w}?"])
        m = ms[0]
    else:
        ph = rng.choice([f"when was my {w} last prescribed?", f"when did I last get a prescription for the {w}?"])
        m = ms[-1]
    return Q(ph, "date", [m["authoredOn"][:10]], f"meds_history/{'first' if first else 'last'}", [r_(m)])


def g_med_count(p, rng):
    cls = rng.choice(["antibiotic", "cholesterol pill", "water pill", "birth control"])
    ms = p.meds(cls)
    if not ms:
        return None
    w = rng.choice(CLASS_WORDS[cls])
    if not w.endswith("s"):
        w = {"water pill": "water pills", "cholesterol pill": "cholesterol pills", "statin": "statins",
             "fluid pill": "fluid pills", "cholesterol medicine": "cholesterol medicine"}.get(w, w)
    ph = pick([f"how many times have I been prescribed {w}?", f"how many prescriptions for {w} have I had?"])
    return Q(ph, "count", [len(ms)], f"meds_history/count-{cls.replace(' ', '_')}", [r_(m) for m in ms][:10])


# ----------------------------------------------------------------------------------------- adult immunizations
def g_vax_last(p, rng):
    if p.age < 18:
        return None
    key = rng.choice(["tetanus shot", "flu shot", "shingles shot", "pneumonia shot", "tetanus shot"])
    if key == "tetanus shot" and any(any(s in pr["code"]["text"].lower() for s in TETANUS_PROCS)
                                     for pr in p.by["Procedure"]):
        return None
    vs = p.vax(key)
    if not vs:
        return None
    w = {"tetanus shot": rng.choice(["tetanus shot", "tetnus shot", "tetanus booster"]),
         "flu shot": rng.choice(["flu shot", "flu vaccine"]), "shingles shot": "shingles shot",
         "pneumonia shot": rng.choice(["pneumonia shot", "pneumonia vaccine"])}[key]
    ph = pick([f"when did I get my last {w}?", f"when was my last {w}?", f"when did i last have a {w}"])
    return Q(ph, "date", [vs[-1]["occurrenceDateTime"][:10]], f"immunizations/last-{key.split()[0]}", [r_(vs[-1])])


def g_vax_flu_count(p, rng):
    if p.age < 18:
        return None
    vs = p.vax("flu shot")
    if not vs:
        return None
    years = range(max(2010, p.birth.year + 18), p.now.year)
    if not years:
        return None
    y = rng.choice(years)
    n = sum(1 for v in vs if T(v["occurrenceDateTime"]).year >= y)
    if any(T(v["occurrenceDateTime"]).date() in (date(y, 1, 1), date(y - 1, 12, 31)) for v in vs):
        return None
    ph = pick([f"how many flu shots have I had since {y}?", f"how many flu shots since {y}?",
               f"number of flu vaccines I've gotten since {y}?"])
    return Q(ph, "count", [n], "immunizations/flu-count-since")


def g_vax_ever(p, rng):
    if p.age < 18:
        return None
    key = rng.choice(["shingles shot", "pneumonia shot", "HPV shot", "hep B shot", "tetanus shot", "meningitis shot"])
    vs = p.vax(key)
    if key == "tetanus shot" and not vs and any(any(s in pr["code"]["text"].lower() for s in TETANUS_PROCS)
                                                for pr in p.by["Procedure"]):
        return None
    w = {"shingles shot": "the shingles vaccine", "pneumonia shot": "a pneumonia shot", "HPV shot": "the HPV vaccine",
         "hep B shot": "the hepatitis B vaccine", "tetanus shot": "a tetanus shot",
         "meningitis shot": "the meningitis vaccine"}[key]
    ph = pick([f"have I had {w}?", f"did I ever get {w}?", f"have i ever gotten {w}"])
    return Q(ph, "boolean", [bool(vs)], f"immunizations/ever-{'yes' if vs else 'no'}", [r_(v) for v in vs][:5])


# ----------------------------------------------------------------------------------------- children: vaccines
def g_kid_vax_count(p, rng):
    if p.age >= 18:
        return None
    key = rng.choice(["DTaP", "MMR", "polio shot", "hep B shot", "Hib", "chickenpox shot", "rotavirus vaccine",
                      "hep A shot"])
    vs = p.vax(key)
    w = {"polio shot": "polio shots", "hep B shot": "hep B shots", "Hib": "Hib shots", "chickenpox shot":
         "chickenpox shots", "rotavirus vaccine": "rotavirus doses", "hep A shot": "hep A shots", "DTaP": "DTaP shots",
         "MMR": "MMR shots"}[key]
    ph = pick([f"how many {w} has {p.first} had?", f"how many {w} has my {p.kid()} gotten so far?",
               f"how many {w} has {p.s()} had?"])
    return Q(ph, "count", [len(vs)], f"child_vaccines/count-{key.split()[0]}", [r_(v) for v in vs])


def g_kid_vax_date(p, rng):
    if p.age >= 18:
        return None
    key = rng.choice(["DTaP", "MMR", "polio shot", "hep B shot", "chickenpox shot", "hep A shot", "flu shot"])
    vs = p.vax(key)
    if not vs:
        return None
    first = rng.random() < 0.5 and len(vs) > 1
    v = vs[0] if first else vs[-1]
    w = {"polio shot": "polio shot", "hep B shot": "hepatitis B shot", "chickenpox shot": "chickenpox vaccine",
         "hep A shot": "hep A shot", "DTaP": "DTaP", "MMR": "MMR", "flu shot": "flu shot"}[key]
    ph = (pick([f"when did {p.first} get {p.p()} first {w}?", f"when was my {p.kid()}'s first {w}?"]) if first
          else pick([f"when did {p.first} get {p.p()} last {w}?", f"when was my {p.kid()}'s most recent {w}?"]))
    return Q(ph, "date", [v["occurrenceDateTime"][:10]], f"child_vaccines/{'first' if first else 'last'}-{key.split()[0]}",
             [r_(v)])


def g_kid_vax_ever(p, rng):
    if p.age >= 18:
        return None
    key = rng.choice(["chickenpox shot", "MMR", "HPV shot", "meningitis shot", "hep A shot", "rotavirus vaccine",
                      "flu shot"])
    vs = p.vax(key)
    w = {"chickenpox shot": "the chickenpox vaccine", "MMR": "an MMR shot", "HPV shot": "the HPV vaccine",
         "meningitis shot": "the meningitis shot", "hep A shot": "the hep A vaccine",
         "rotavirus vaccine": "the rotavirus vaccine", "flu shot": "a flu shot"}[key]
    ph = pick([f"has {p.first} had {w}?", f"did my {p.kid()} ever get {w}?", f"has {p.s()} gotten {w} yet?"])
    return Q(ph, "boolean", [bool(vs)], f"child_vaccines/ever-{'yes' if vs else 'no'}", [r_(v) for v in vs][:5])


# ----------------------------------------------------------------------------------------- children: growth
def _checkup_value(p, loinc, enc):
    ref = None
    for o in p.by["Observation"]:
        if (o["code"].get("coding") or [{}])[0].get("code") == loinc and "valueQuantity" in o:
            e = p.idx.get(o.get("encounter", {}).get("reference"))
            if e is enc:
                if ref is not None:
                    return None
                ref = o
    return ref


def g_kid_last_checkup(p, rng):
    if p.age >= 18:
        return None
    ups = [e for e in p.encs() if e["type"][0]["text"] in CHECKUP]
    if not ups:
        return None
    enc = ups[-1]  # the last check-up itself; skipped below when it holds no such measurement
    key = rng.choice(["ht", "wt", "wt", "ht", "bmi"])
    o = _checkup_value(p, VITALS[key][0], enc)
    if o is None:
        return None
    v = o["valueQuantity"]["value"]
    if key == "ht":
        ph = pick([f"how tall was {p.first} at {p.p()} last checkup?", f"how tall was my {p.kid()} at the last checkup (cm)?"])
    elif key == "wt":
        if rng.random() < 0.4:
            return Q(f"how much did {p.first} weigh at {p.p()} last checkup, in pounds?", "number", [rnd(v * KG_TO_LB)],
                     "child_growth/checkup-wt-lb", [r_(o)])
        ph = pick([f"how much did {p.first} weigh at {p.p()} last checkup?", f"what was my {p.kid()}'s weight at the last well visit?"])
    else:
        ph = f"what was {p.first}'s BMI at {p.p()} last checkup?"
    return Q(ph, "number", [rnd(v)], f"child_growth/checkup-{key}", [r_(o)])


def g_kid_at_age(p, rng):
    """'How much did she weigh at 2?' = the one measurement within 45 days of that birthday."""
    if p.age >= 21:
        return None
    key = rng.choice(["wt", "ht"])
    s = p.series(VITALS[key][0])
    ages = [a for a in range(1, int(p.age) + 1)]
    if not ages:
        return None
    a = rng.choice(ages)
    bd = add_years(p.birth, a)
    near = [x for x in s if abs((x[0].date() - bd).days) <= 45]
    if len(near) != 1:
        return None
    v = near[0][1]
    whole_year = [x for x in s if bd <= x[0].date() < add_years(p.birth, a + 1)]
    if pick([0, 1, 2]) == 0 and whole_year != near:
        return None  # "at 2" could mean any time while 2: asked only when that year holds this one value
    if key == "wt":
        ph = pick([f"how much did {p.first} weigh at {a}?", f"what did my {p.kid()} weigh when {p.s()} turned {a}?",
                   f"how much did {p.s()} weigh at {p.p()} {a} year checkup?"])
    else:
        ph = pick([f"how tall was {p.first} at {a}?", f"how tall was my {p.kid()} when {p.s()} turned {a}?",
                   f"what was {p.p()} height at {p.p()} {a} year checkup?"])
    return Q(ph, "number", [rnd(v)], f"child_growth/at-age-{key}", [r_(near[0][2])])


def g_kid_growth(p, rng):
    """'How much has she grown in the past year?' = last − first height over the past 12 months (cm)."""
    if p.age >= 18:
        return None
    key = rng.choice(["ht", "wt"])
    vals = robust_window(p, p.series(VITALS[key][0]), 12)
    if not vals or len(vals) < 2:
        return None
    d = vals[-1][1] - vals[0][1]
    if d <= 0.2:
        return None
    ph = (f"how much has {p.first} grown in the past year?" if key == "ht"
          else f"how much weight has my {p.kid()} gained in the past year?")
    return Q(ph, "number", [rnd(d)], f"child_growth/gain-12m-{key}", [r_(vals[0][2]), r_(vals[-1][2])], tol=0.02)


# ----------------------------------------------------------------------------------------- visits
def _robust_count(p, es, months):
    def n(start):
        return sum(1 for e in es if start <= T(e["period"]["start"]) <= p.now)
    start = add_months(p.now, -months)
    c = n(start)
    return c if n(start - timedelta(days=7)) == c == n(start + timedelta(days=7)) else None


def g_er_count(p, rng):
    es = p.encs("EMER")
    if rng.random() < 0.55:
        ph = pick(["how many times have I been to the ER?", "how many ER visits have I had?",
                   "how many times did I go to the emergency room?"])
        return Q(ph, "count", [len(es)], "visits/er-ever", [r_(e) for e in es])
    word, months = rng.choice([("in the past year", 12), ("in the last 2 years", 24), ("in the last 5 years", 60)])
    c = _robust_count(p, es, months)
    if c is None:
        return None
    return Q(f"how many times have I been to the ER {word}?", "count", [c], f"visits/er-{months}m")


def g_er_last(p, rng):
    es = p.encs("EMER")
    if not es or (len(es) > 1 and es[-1]["period"]["start"][:10] == es[-2]["period"]["start"][:10]):
        return None
    ph = pick(["when was I last in the ER?", "when was my last emergency room visit?", "last time I went to the ER?"])
    return Q(ph, "date", [es[-1]["period"]["start"][:10]], "visits/er-last", [r_(es[-1])])


def g_hosp(p, rng):
    es = p.encs("IMP")
    if es and rng.random() < 0.5:
        return Q(pick(["when was I last in the hospital?", "when was my last hospital stay?"]), "date",
                 [es[-1]["period"]["start"][:10]], "visits/imp-last", [r_(es[-1])])
    ph = pick(["how many times have I been admitted to the hospital?", "how many hospital stays have I had?"])
    return Q(ph, "count", [len(es)], "visits/imp-count", [r_(e) for e in es])


def g_checkup_last(p, rng):
    ups = [e for e in p.encs("AMB") if e["type"][0]["text"] in CHECKUP]
    if not ups:
        return None
    if p.age < 18:
        ph = pick([f"when was {p.first}'s last checkup?", f"when was my {p.kid()}'s last well child visit?"])
    else:
        ph = pick(["when was my last checkup?", "when did I last have a physical?", "when was my last check up"])
    return Q(ph, "date", [ups[-1]["period"]["start"][:10]], "visits/checkup-last", [r_(ups[-1])])


def g_visits_year(p, rng):
    es = p.encs()
    start = datetime(p.now.year, 1, 1, tzinfo=UTC)
    if any(abs((T(e["period"]["start"]) - start).total_seconds()) < 86400 for e in es):
        return None
    n = sum(1 for e in es if start <= T(e["period"]["start"]) <= p.now)
    ph = pick(["how many doctor visits have I had this year?", "how many times have I seen the doctor this year?",
               "how many appointments did I have this year"])
    return Q(ph, "count", [n], "visits/all-this-year")


# ----------------------------------------------------------------------------------------- diagnoses
def g_er_dx(p, rng):
    es = p.encs("EMER")
    if not es or (len(es) > 1 and es[-1]["period"]["start"][:10] == es[-2]["period"]["start"][:10]):
        return None
    enc = es[-1]
    cs = [c for c in p.by["Condition"] if p.idx.get(c.get("encounter", {}).get("reference")) is enc]
    if not cs:
        return None
    names = sorted({c["code"]["text"] for c in cs})
    forms = ["what did they diagnose me with in the ER?", "what did the ER say was wrong with me last time?",
             "what was my diagnosis at my last emergency room visit?"]
    ph = pick(forms if len(es) == 1 else forms[1:] + forms[1:2])  # "in the ER" alone needs a single ER visit

    return Q(ph, "list", names, "diagnoses/er-last", [r_(c) for c in cs])


def g_dx_have(p, rng, everyone):
    key = rng.choice(sorted(CONDS))
    names, near = CONDS[key]
    cs = p.conds(names)
    if not cs and (p.conds(near) or key not in everyone):
        return None
    chronic = key in ("high blood pressure", "diabetes", "prediabetes", "high cholesterol", "heart disease",
                      "osteoporosis", "atrial fibrillation", "asthma", "anemia")
    if chronic:
        act = [c for c in cs if c["clinicalStatus"]["coding"][0]["code"] == "active" and "abatementDateTime" not in c]
        if cs and not act:
            return None
        ph = pick([f"do I have {key}?", f"have I been diagnosed with {key}?", f"does my chart say I have {key}?"])
        return Q(ph, "boolean", [bool(act)], f"diagnoses/have-{'yes' if act else 'no'}", [r_(c) for c in cs])
    ph = pick([f"have I ever had {key}?", f"was I ever diagnosed with {key}?"])
    return Q(ph, "boolean", [bool(cs)], f"diagnoses/ever-{'yes' if cs else 'no'}", [r_(c) for c in cs][:5])


def g_dx_when(p, rng):
    keys = [k for k in sorted(CONDS) if p.conds(CONDS[k][0])]
    if not keys:
        return None
    key = rng.choice(keys)
    cs = sorted(p.conds(CONDS[key][0]), key=lambda c: T(c["onsetDateTime"]))
    if len({c["code"]["text"] for c in cs}) > 1 and key not in ("a heart attack",):
        return None
    last = rng.random() < 0.4 and len(cs) > 1
    c = cs[-1] if last else cs[0]
    if last:
        ph = f"when was the last time I had {key}?"
    else:
        ph = pick([f"when was I diagnosed with {key}?", f"when did I first get {key}?",
                   f"when did they find my {key.removeprefix('a ').removeprefix('an ')}?"])
    return Q(ph, "date", [c["onsetDateTime"][:10]], f"diagnoses/{'last' if last else 'first'}-onset", [r_(c)])


def g_dx_active(p, rng):
    if p.dead:
        return None
    act = [c for c in p.by["Condition"] if c["clinicalStatus"]["coding"][0]["code"] == "active"
           and "abatementDateTime" not in c]
    names = sorted({c["code"]["text"] for c in act})
    if not names and rng.random() < 0.7:
        return None
    ph = pick(["what health problems do I have right now?", "what conditions am I being treated for?",
               "what's on my problem list?"])
    return Q(ph, "list", names, "diagnoses/active" + ("" if names else "-empty"), [r_(c) for c in act])


# ----------------------------------------------------------------------------------------- since an event
def _surgery(p):
    ps = [x for x in p.by["Procedure"] if x["code"]["text"] in SURGERY]
    others = [x for x in p.by["Procedure"] if x["code"]["text"] not in SURGERY
              and any(s in x["code"]["text"].lower() for s in SURGERY_NEAR)]
    if len(ps) != 1 or others:
        return None
    pr = ps[0]
    return pr, T(pr.get("performedPeriod", {}).get("end") or pr.get("performedPeriod", {}).get("start")
                 or pr.get("performedDateTime"))


def _since(series, t):
    """Values strictly after t; None when a value lies within a day of t."""
    if any(abs((x[0] - t).total_seconds()) < 86400 for x in series):
        return None
    return [x for x in series if x[0] > t]


def g_since_surgery(p, rng):
    sx = _surgery(p)
    if not sx:
        return None
    pr, t = sx
    kind = rng.choice(["wt", "sbp", "visits", "chol", "er"])
    if kind in ("visits", "er"):
        es = p.encs("EMER" if kind == "er" else None)
        if any(abs((T(e["period"]["start"]) - t).total_seconds()) < 86400 for e in es):
            return None
        n = sum(1 for e in es if T(e["period"]["start"]) > t)
        ph = ("how many times have I been to the ER since my surgery?" if kind == "er"
              else "how many doctor visits have I had since my surgery?")
        return Q(ph, "count", [n], f"since_event/surgery-{kind}", [r_(pr)])
    loinc, words = (LABS.get(kind) or VITALS[kind])
    vals = _since(p.series(loinc), t)
    if vals is None:
        return None
    w = rng.choice(words)
    if not vals:
        return Q(f"what has my {w} been since my surgery?", "number", [], f"since_event/surgery-empty-{kind}",
                 [r_(pr)], status="no-data")
    if latest(vals) is None:
        return None
    hi = rng.random() < 0.5
    if hi:
        return Q(f"what's the highest my {w} has been since my surgery?", "number", [rnd(max(x[1] for x in vals))],
                 f"since_event/surgery-max-{kind}", [r_(pr)])
    return Q(f"what was my latest {w} since my surgery?", "number", [rnd(vals[-1][1])],
             f"since_event/surgery-last-{kind}", [r_(pr), r_(vals[-1][2])])


def g_since_drug(p, rng):
    """'What's my cholesterol been since I started the cholesterol pill?' = after the first member prescription."""
    cls, key = rng.choice([("cholesterol pill", "ldl"), ("cholesterol pill", "chol"), ("water pill", "sbp"),
                           ("blood pressure pill", "sbp"), ("cholesterol pill", "trig")])
    ms = sorted(p.meds(cls), key=lambda m: T(m["authoredOn"]))
    if not ms:
        return None
    near = p.near_meds(cls)
    t = T(ms[0]["authoredOn"])
    if near and min(T(m["authoredOn"]) for m in near) < t:
        return None
    loinc, words = (LABS.get(key) or VITALS[key])
    vals = _since(p.series(loinc), t)
    if not vals or latest(vals) is None:
        return None
    w = rng.choice(CLASS_WORDS[cls])
    lw = rng.choice(words)
    lo = rng.random() < 0.4
    if lo:
        ph = f"what's the lowest my {lw} has been since I started the {w}?"
        v = min(x[1] for x in vals)
    else:
        ph = pick([f"what was my most recent {lw} after I started the {w}?",
                   f"since starting the {w}, what's my latest {lw}?"])
        v = vals[-1][1]
    return Q(ph, "number", [rnd(v)], f"since_event/drug-{'min' if lo else 'last'}-{key}", [r_(ms[0])])


def g_since_er(p, rng):
    """'Have I had a flu shot since my last ER visit?' / '# checkups since'."""
    es = p.encs("EMER")
    if not es or p.age < 2:
        return None
    t = T(es[-1]["period"]["start"])
    if len(es) > 1 and es[-2]["period"]["start"][:10] == es[-1]["period"]["start"][:10]:
        return None
    ups = [e for e in p.encs("AMB") if e["type"][0]["text"] in CHECKUP]
    if any(abs((T(e["period"]["start"]) - t).total_seconds()) < 86400 for e in ups):
        return None
    n = sum(1 for e in ups if T(e["period"]["start"]) > t)
    ph = pick(["how many checkups have I had since my last ER visit?",
               "since I was in the ER last, how many check-ups have I been to?"])
    return Q(ph, "count", [n], "since_event/er-checkups", [r_(es[-1])])


# ----------------------------------------------------------------------------------------- build
CATS = ["lab_last", "vitals", "window", "trend", "meds_current", "meds_history", "immunizations", "child_vaccines",
        "child_growth", "visits", "diagnoses", "since_event"]
ONE_SIDED = ("absent", "class-never-", "-empty", "surgery-empty")


def load(data):
    pats = []
    for f in sorted(glob.glob(os.path.join(data, "synthea-r4", "*.json"))):
        with open(f, "rb") as fh:
            b = orjson.loads(fh.read())
        if b.get("resourceType") == "Bundle":
            pats.append(P(b))
    return sorted(pats, key=lambda p: p.id)


def build(data):
    """All question rows, in category order."""
    # A portal user is alive: deceased patients are not asked about (their records end at death).
    pats = [p for p in load(data) if not p.dead]
    ev_labs = {k for k in LABS if any(p.series(LABS[k][0]) for p in pats)}
    ev_cls = {c for c in CLASSES if any(p.meds(c) for p in pats)}
    ev_cond = {k for k in CONDS if any(p.conds(CONDS[k][0]) for p in pats)}
    gens = {
        "lab_last": [(g_lab_last, 14), (g_lab_last_date, 5), (lambda p, r: g_lab_never(p, r, ev_labs), 4)],
        "vitals": [(g_vital_last, 12), (g_vital_extreme, 5), (g_vital_absent, 3)],
        "window": [(g_window_stat, 16), (g_window_count, 5)],
        "trend": [(g_trend, 8), (g_since_last_time, 6), (g_kidney_worse, 4), (g_weight_change, 4)],
        "meds_current": [(g_med_still, 10), (lambda p, r: g_med_on_class(p, r, ev_cls), 4), (g_med_list, 7)],
        "meds_history": [(lambda p, r: g_med_ever(p, r, ev_cls), 8), (g_med_start, 8), (g_med_count, 5)],
        "immunizations": [(g_vax_last, 8), (g_vax_flu_count, 6), (g_vax_ever, 6)],
        "child_vaccines": [(g_kid_vax_count, 8), (g_kid_vax_date, 7), (g_kid_vax_ever, 6)],
        "child_growth": [(g_kid_last_checkup, 8), (g_kid_at_age, 8), (g_kid_growth, 4)],
        "visits": [(g_er_count, 6), (g_er_last, 4), (g_hosp, 4), (g_checkup_last, 4), (g_visits_year, 4)],
        "diagnoses": [(g_er_dx, 6), (lambda p, r: g_dx_have(p, r, ev_cond), 8), (g_dx_when, 5), (g_dx_active, 3)],
        "since_event": [(g_since_surgery, 8), (g_since_drug, 8), (g_since_er, 4)],
    }
    rows = []
    for cat in CATS:
        got = []
        seen = set()
        for gi, (g, quota) in enumerate(gens[cat]):
            order = pats[:]
            random.Random(f"probe_portal:{cat}:{gi}").shuffle(order)  # noqa: S311 - seeded
            n = 0
            by_answer = Counter()
            for rep in range(3):  # a patient may serve a generator more than once (children are few)
                for p in order:
                    if n >= quota:
                        break
                    rng = random.Random(f"{p.id}:{cat}:{gi}:{rep}")  # noqa: S311 - seeded
                    _TURN[0] = n
                    q = g(p, rng)
                    if q is None:
                        continue
                    ans = (q["expected_status"], json.dumps(q["expected"]))
                    trivial = (q["expected_status"] == "no-data" or q["expected"] in ([0], [])
                               or q["expected"] == [False])
                    one_sided = any(s in q["template"] for s in ONE_SIDED)
                    limit = quota if one_sided else (max(1, quota // 3) if trivial else -(-2 * quota // 3))
                    if by_answer[ans] >= limit:
                        continue
                    key = (p.id, q["template"], json.dumps(q["expected"]))  # one fact asked once
                    if key in seen:
                        continue
                    seen.add(key)
                    by_answer[ans] += 1
                    q["patient_id"] = p.id
                    q["now"] = p.now.strftime("%Y-%m-%dT%H:%M:%SZ")
                    got.append(q)
                    n += 1
        for i, q in enumerate(got, 1):
            rows.append({"id": f"{cat}-{i:03d}", "patient_id": q["patient_id"], "question": q["question"],
                         "now": q["now"], "category": cat, "answer_type": q["answer_type"],
                         "expected": q["expected"], "expected_status": q["expected_status"],
                         "tolerance": q["tolerance"], "gold_refs": q["gold_refs"], "template": q["template"]})
    return rows


def main():
    """Write questions.jsonl (or with --check, exit 1 when it is stale)."""
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
    print(len(rows), dict(Counter(r["category"] for r in rows)), dict(Counter(r["expected_status"] for r in rows)),
          dict(Counter(r["answer_type"] for r in rows)))


if __name__ == "__main__":
    main()
