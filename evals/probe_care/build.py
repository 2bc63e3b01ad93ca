"""Build the probe_care question set: care-coordination questions about one patient.

Voice: a care coordinator, case manager or primary-care nurse preparing a visit or a transition of care.
Record areas: CarePlan (status, category, activities, dates, the condition addressed), Goal, ImagingStudy,
Immunization, Procedure (screening and history), Encounter (reasons, types, who/where, utilisation counts)
and the payer on the latest ExplanationOfBenefit.

Reads the raw FHIR transaction bundles of ``../shared/data/synthea-r4`` with orjson, resolves the
``urn:uuid:`` references itself and imports nothing from fhirqa. Every random choice comes from an RNG
seeded by a string (patient id + generator name), so the same data gives the same bytes.

Usage: python evals/probe_care/build.py [--data DIR] [--check]
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

# How a coordinator says a care plan's category (SNOMED display in the record -> spoken forms).
PLAN_WORDS = {
    "Respiratory therapy": ["respiratory therapy plan", "resp therapy CP", "respiratory care plan"],
    "Diabetes self management plan": ["diabetes self-management plan", "DM self mgmt plan", "diabetes care plan"],
    "Routine antenatal care": ["antenatal care plan", "prenatal care plan", "routine antenatal care plan"],
    "Physical therapy procedure": ["physical therapy plan", "PT plan", "physical therapy care plan"],
    "Self care": ["self care plan", "self-care plan"],
    "Wound care": ["wound care plan", "wound care CP"],
    "Musculoskeletal care": ["musculoskeletal care plan", "MSK care plan"],
    "Hyperlipidemia clinical management plan": ["hyperlipidemia management plan", "HLD plan",
                                                "lipid management plan"],
    "Fracture care": ["fracture care plan", "fx care plan"],
    "Head injury rehabilitation": ["head injury rehab plan", "head injury rehabilitation plan"],
    "Demential management": ["dementia management plan", "dementia care plan"],
    "Cancer care plan": ["cancer care plan", "oncology care plan"],
    "Major surgery care management": ["major surgery care plan", "post-op care plan"],
    "Burn care": ["burn care plan"],
    "Heart failure self management plan": ["heart failure self-management plan", "CHF self mgmt plan"],
    "Asthma self management": ["asthma self-management plan", "asthma action plan"],
    "Surgery care management": ["surgery care plan", "surgical care plan"],
    "Urinary tract infection care": ["UTI care plan", "urinary tract infection care plan"],
    "Chronic obstructive pulmonary disease clinical management plan": ["COPD management plan", "COPD plan"],
    "Psychiatry care plan": ["psychiatry care plan", "psych care plan"],
}
# Category names that are record artefacts, not a plan a coordinator would name: never asked about.
ARTIFACT = {"Inpatient care plan (record artifact)", "Care plan (record artifact)", "Care Plan"}

LOINC = {"a1c": "4548-4", "glu": "2339-0", "sbp": "8480-6", "dbp": "8462-4"}

# Vaccines: spoken name -> (CVX display substrings, lower case). A "no" is asked only when the patient has
# none of the guard substrings either.
VACCINES = {
    "flu shot": (["influenza"], []),
    "Tdap": (["tdap"], ["td (adult)", "dtap"]),
    "Td booster": (["td (adult)"], ["tdap"]),
    "shingles vaccine": (["zoster"], []),
    "pneumonia vaccine": (["pneumococcal"], []),
    "HPV vaccine": (["hpv"], []),
    "hep B vaccine": (["hep b"], []),
    "hep A vaccine": (["hep a"], []),
    "MMR": (["mmr"], []),
    "meningococcal vaccine": (["meningococcal"], []),
}
VAX_WORDS = {
    "flu shot": ["flu shot", "flu vaccine", "influenza vaccine"],
    "Tdap": ["Tdap", "Tdap booster"],
    "Td booster": ["Td booster", "tetanus (Td) shot"],
    "shingles vaccine": ["shingles vaccine", "zoster vaccine", "Zostavax"],
    "pneumonia vaccine": ["pneumonia vaccine", "pneumococcal vaccine", "pneumovax or Prevnar"],
    "HPV vaccine": ["HPV vaccine", "Gardasil"],
    "hep B vaccine": ["hep B vaccine", "hepatitis B shot"],
    "hep A vaccine": ["hep A vaccine", "hepatitis A shot"],
    "MMR": ["MMR", "measles-mumps-rubella vaccine"],
    "meningococcal vaccine": ["meningococcal vaccine", "MCV4"],
}

# Procedures a coordinator checks before a visit: spoken -> (SNOMED codes, guard name substrings).
# A "no" is asked only when no procedure name contains a guard substring (a near procedure).
PROCS = {
    "colonoscopy": ({"73761001"}, ["colon", "sigmoidoscopy", "fecal occult", "polypectomy"]),
    "depression screening": ({"171207006"}, ["depression", "phq"]),
    "spirometry": ({"127783003"}, ["respiratory function", "spirometry", "pulmonary function"]),
    "bone density scan": ({"312681000"}, ["bone density", "dexa", "densitometry"]),
    "echocardiogram": ({"34552-0", "433236007"}, ["echocardiog"]),
    "appendectomy": ({"80146002"}, ["append"]),
    "CABG": ({"232717009"}, ["coronary", "bypass"]),
    "PCI": ({"415070008"}, ["coronary", "angioplasty"]),
    "cardioversion": ({"180325003"}, ["cardioversion"]),
    "fecal occult blood test": ({"1015401000000102"}, ["occult", "fecal", "colonoscopy"]),
    "mammogram": (set(), ["mammog", "breast"]),
    "pap smear": (set(), ["cytopath", "pap", "cervical", "smear"]),
}
PROC_WORDS = {
    "colonoscopy": ["colonoscopy", "colonoscopy", "c-scope"],
    "depression screening": ["depression screening", "depression screen", "PHQ screen"],
    "spirometry": ["spirometry", "PFTs (spirometry)", "spirometry test"],
    "bone density scan": ["bone density scan", "DEXA scan", "DEXA"],
    "echocardiogram": ["echocardiogram", "echo", "TTE"],
    "appendectomy": ["appendectomy", "appy"],
    "CABG": ["CABG", "bypass surgery (CABG)"],
    "PCI": ["PCI", "coronary stent / PCI"],
    "cardioversion": ["cardioversion", "electrical cardioversion", "DCCV"],
    "fecal occult blood test": ["FOBT", "fecal occult blood test", "stool occult blood test"],
    "mammogram": ["mammogram", "mammo", "screening mammogram"],
    "pap smear": ["pap smear", "Pap", "cervical cancer screening (pap)"],
}
# Procedures that put a device in a patient: a "no device" question is not asked of such a patient.
DEVICE_WORDS = ["defibrillator", "pacemaker", "intrauterine", "contraceptive", "stent", "implant", "coronary"]

# Encounter kinds a coordinator names: class code -> spoken.
ENC_WORDS = {
    "EMER": ["ED visits", "ER visits", "emergency visits"],
    "IMP": ["hospitalizations", "inpatient admissions", "admissions"],
    "AMB": ["outpatient visits", "clinic visits", "office visits"],
}
CHECKUP_TYPES = {"Encounter for check up (procedure)", "Encounter for 'check-up'"}

PAYER_WORDS = ["what insurance does {s} have?", "payer?", "who is {p} insurer on the last claim?"]


def T(s):
    """Parse an ISO instant (Synthea writes +00:00 offsets; a bare date is midnight UTC)."""
    if s is None:
        return None
    if len(s) == 10:
        return datetime.fromisoformat(s).replace(tzinfo=UTC)
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def cname(cc):
    """A CodeableConcept's name: text, else the first coding's display."""
    if not cc:
        return None
    return cc.get("text") or (cc.get("coding") or [{}])[0].get("display")


def ccode(cc):
    """The first coding's code."""
    return ((cc or {}).get("coding") or [{}])[0].get("code")


def dstr(t):
    """UTC calendar date of an instant, ISO."""
    return t.date().isoformat()


def human_date(d, rng):
    """A date as a clinician writes it (unambiguous forms only)."""
    forms = [d.isoformat(), d.strftime("%B ") + str(d.day) + d.strftime(", %Y"),
             d.strftime("%b ") + str(d.day) + d.strftime(", %Y"), f"{d.day} {d.strftime('%b %Y')}"]
    return rng.choice(forms)


def add_months(d, n):
    """The same instant n months earlier/later (days here are ≤ 28, so nothing clamps)."""
    y, m = divmod(d.month - 1 + n, 12)
    return d.replace(year=d.year + y, month=m + 1)


class P:
    """One patient's resources, by type, with references resolved to ids."""

    def __init__(self, bundle):
        self.by = defaultdict(list)
        self.idx = {}
        for e in bundle["entry"]:
            r = e["resource"]
            self.by[r["resourceType"]].append(r)
            self.idx[e.get("fullUrl", "")] = r
            self.idx[f"{r['resourceType']}/{r['id']}"] = r
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

    def ref(self, reference):
        """The resource a reference points at (urn:uuid or Type/id)."""
        return self.idx.get(reference)

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

    # pronouns
    def s(self):
        """Subject pronoun."""
        return "she" if self.female else "he"

    def o(self):
        """Object pronoun."""
        return "her" if self.female else "him"

    def p(self):
        """Possessive pronoun."""
        return "her" if self.female else "his"

    def who(self, rng):
        """How the patient is referred to in a possessive slot."""
        return rng.choice([self.p(), self.p(), self.first + "'s", "the patient's"])


_TURN = [0]


def pick(options):
    """The sentence form for the next accepted question of a generator: forms take turns, so every
    form of a pattern is used (a seeded draw can repeat one form five times in a row)."""
    return options[_TURN[0] % len(options)]


def a_(word):
    """'a' or 'an' before a spoken name."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def r_(res):
    return f"{res['resourceType']}/{res['id']}"


def Q(question, atype, expected, template, refs=(), status="answered", tol=None):
    """One question row (id, patient and now are filled by build)."""
    if tol is None:
        tol = 0.01 if atype == "number" else 0
    return {"question": question, "answer_type": atype, "expected": expected, "expected_status": status,
            "tolerance": tol, "gold_refs": list(refs), "template": template}


# ----------------------------------------------------------------------------------------- care plans
def plans(p):
    """Care plans with a single named category, not record artefacts."""
    out = []
    for cp in p.by["CarePlan"]:
        cats = [cname(c) for c in cp.get("category", [])]
        if len(cats) != 1 or cats[0] in ARTIFACT:
            continue
        out.append((cats[0], cp))
    return out


def all_plan_cats(p):
    return {cname(c) for cp in p.by["CarePlan"] for c in cp.get("category", [])}


def active_plans(p):
    """Care plans active at now: status active and no period end on or before now."""
    res = []
    for cp in p.by["CarePlan"]:
        end = T(cp.get("period", {}).get("end"))
        if cp["status"] == "active" and (end is None or end > p.now) and T(cp["period"]["start"]) <= p.now:
            res.append(cp)
    return res


def g_cp_active_list(p, rng):
    if p.dead:
        return None
    act = active_plans(p)
    names = sorted({cname(c) for cp in act for c in cp["category"]})
    if any(n in ARTIFACT for n in names):
        return None
    if not names and rng.random() < 0.6:
        return None
    ph = pick(["active care plans?", f"what care plans is {p.first} on right now?",
                     "current CPs?", f"which care plans are currently active for {p.o()}?"])
    return Q(ph, "list", names, "careplan_active/list" + ("-empty" if not names else ""), [r_(c) for c in act])


def g_cp_active_bool(p, rng):
    if p.dead:
        return None
    pl = plans(p)
    if not pl:
        return None
    cats = Counter(c for c, _ in pl)
    cat = rng.choice(sorted(cats))
    act = [cp for c, cp in pl if c == cat and cp in active_plans(p)]
    word = rng.choice(PLAN_WORDS.get(cat, [cat.lower()]))
    ph = pick([f"is {p.p()} {word} still active?", f"{word} active?", f"{word} still open?"])
    if not act and all(cp["status"] == "completed" for c, cp in pl if c == cat):
        return Q(ph, "boolean", [False], "careplan_active/still-no", [r_(cp) for c, cp in pl if c == cat])
    if act:
        return Q(ph, "boolean", [True], "careplan_active/still-yes", [r_(cp) for cp in act])
    return None


def g_cp_active_neg(p, rng, everyone):
    """A care plan kind other patients have and this one never had → false."""
    if p.dead:
        return None
    mine = all_plan_cats(p)
    cands = sorted(c for c in everyone if c not in mine and c in PLAN_WORDS)
    if not cands:
        return None
    cat = rng.choice(cands)
    word = rng.choice(PLAN_WORDS[cat])
    ph = pick([f"is {p.first} on {a_(word)}?", f"any {word} on file?", f"does {p.s()} have {a_(word)}?"])
    return Q(ph, "boolean", [False], "careplan_active/never")


def _unique_plan(p, rng):
    pl = plans(p)
    cats = Counter(c for c, _ in pl)
    single = sorted(c for c, n in cats.items() if n == 1 and c in PLAN_WORDS)
    if not single:
        return None, None
    cat = rng.choice(single)
    return cat, next(cp for c, cp in pl if c == cat)


def g_cp_activities(p, rng):
    cat, cp = _unique_plan(p, rng)
    if cp is None:
        return None
    acts = sorted({cname(a["detail"]["code"]) for a in cp.get("activity", [])})
    if not acts:
        return None
    word = rng.choice(PLAN_WORDS[cat])
    ph = pick([f"what activities are on {p.p()} {word}?", f"{word} activities?",
                     f"what does the {word} include?", f"list the interventions in {p.first}'s {word}"])
    return Q(ph, "list", acts, "careplan_activities/list", [r_(cp)])


def g_cp_activity_bool(p, rng, all_acts):
    cat, cp = _unique_plan(p, rng)
    if cp is None:
        return None
    acts = sorted({cname(a["detail"]["code"]) for a in cp.get("activity", [])})
    word = rng.choice(PLAN_WORDS[cat])
    mine_all = {cname(a["detail"]["code"]).lower() for c in p.by["CarePlan"] for a in c.get("activity", [])}
    if rng.random() < 0.5 and acts:
        act = rng.choice(acts)
        ph = pick([f"does {p.p()} {word} include {act.lower()}?", f"is {act.lower()} part of the {word}?"])
        return Q(ph, "boolean", [True], "careplan_activities/includes-yes", [r_(cp)])
    others = sorted(a for a in all_acts if a.lower() not in mine_all
                    and not any(w in a.lower() for w in ("diet", "exercise")))
    act = rng.choice(others)
    ph = pick([f"does {p.p()} {word} include {act.lower()}?", f"is {act.lower()} part of the {word}?"])
    return Q(ph, "boolean", [False], "careplan_activities/includes-no", [r_(cp)])


def g_cp_activity_status(p, rng):
    """Activities still in progress across the active plans."""
    if p.dead:
        return None
    act = active_plans(p)
    if not act or any(cname(c) in ARTIFACT for cp in act for c in cp["category"]):
        return None
    items = sorted({cname(a["detail"]["code"]) for cp in act for a in cp.get("activity", [])
                    if a["detail"].get("status") == "in-progress"})
    if not items:
        return None
    ph = pick(["which care plan activities are in progress?", "open CP activities?",
                     f"what care plan interventions are still in progress for {p.first}?"])
    return Q(ph, "list", items, "careplan_activities/in-progress", [r_(c) for c in act])


def g_cp_start(p, rng):
    cat, cp = _unique_plan(p, rng)
    if cp is None:
        return None
    word = rng.choice(PLAN_WORDS[cat])
    if cp["status"] == "completed" and "end" in cp["period"] and rng.random() < 0.45:
        ph = pick([f"when did {p.p()} {word} end?", f"{word} end date?", f"when was the {word} completed?"])
        return Q(ph, "date", [dstr(T(cp["period"]["end"]))], "careplan_dates/end", [r_(cp)])
    ph = pick([f"when was {p.p()} {word} started?", f"{word} start date?", f"when did the {word} begin?"])
    return Q(ph, "date", [dstr(T(cp["period"]["start"]))], "careplan_dates/start", [r_(cp)])


def g_cp_count(p, rng):
    n = len(p.by["CarePlan"])
    ph = pick([f"how many care plans does {p.first} have on file?", "# care plans on record?",
                     f"how many care plans has {p.s()} had in total?"])
    return Q(ph, "count", [n], "careplan_dates/count-all", [r_(c) for c in p.by["CarePlan"]])


def g_cp_count_active(p, rng):
    if p.dead:
        return None
    act = active_plans(p)
    ph = pick(["how many active care plans?", "# active CPs?", f"how many care plans are open for {p.o()}?"])
    return Q(ph, "count", [len(act)], "careplan_dates/count-active", [r_(c) for c in act])


def g_cp_reason(p, rng):
    cat, cp = _unique_plan(p, rng)
    if cp is None or len(cp.get("addresses", [])) != 1:
        return None
    cond = p.ref(cp["addresses"][0]["reference"])
    if not cond:
        return None
    word = rng.choice(PLAN_WORDS[cat])
    ph = pick([f"what condition is {p.p()} {word} for?", f"{word} addresses what dx?",
                     f"which problem does the {word} address?"])
    return Q(ph, "list", [cname(cond["code"])], "careplan_reason/addresses", [r_(cp), r_(cond)])


# ----------------------------------------------------------------------------------------------- goals
def _values(p, code):
    out = []
    for o in p.by["Observation"]:
        t = T(o.get("effectiveDateTime") or o.get("issued"))
        if ccode(o["code"]) == code and "valueQuantity" in o:
            out.append((t, o["valueQuantity"]["value"], o))
        for c in o.get("component", []):
            if ccode(c["code"]) == code and "valueQuantity" in c:
                out.append((t, c["valueQuantity"]["value"], o))
    return sorted(out, key=lambda x: x[0])


def _latest(p, code):
    v = [x for x in _values(p, code) if x[0] <= p.now]
    if not v:
        return None
    same = {x[1] for x in v if x[0] == v[-1][0]}
    return v[-1] if len(same) == 1 else None


def g_goals_list(p, rng):
    goals = p.by["Goal"]
    if p.dead:
        return None
    if not goals:
        if rng.random() < 0.7:
            return None
        ph = pick([f"any care goals documented for {p.first}?", "goals on file?",
                         f"does {p.s()} have any documented goals?"])
        return Q(ph, "boolean", [False], "goals/any-no")
    names = sorted({g["description"]["text"] for g in goals})
    ph = pick([f"what are {p.p()} care goals?", "pt goals?", f"list {p.first}'s documented goals"])
    return Q(ph, "list", names, "goals/list", [r_(g) for g in goals])


def g_goal_met(p, rng, kind):
    if p.dead:
        return None
    goals = {g["description"]["text"]: g for g in p.by["Goal"]}
    if kind == "a1c":
        g = goals.get("Hemoglobin A1c total in Blood < 7.0")
        lv = _latest(p, LOINC["a1c"])
        if not g or not lv or abs(lv[1] - 7.0) < 0.05:
            return None
        ph = pick(["A1c goal met?", f"is {p.p()} A1c at goal?", f"has {p.first} met the A1c < 7 goal?"])
        return Q(ph, "boolean", [lv[1] < 7.0], "goals/met-a1c", [r_(g), r_(lv[2])])
    if kind == "glu":
        g = goals.get("Glucose [Mass/volume] in Blood < 108")
        lv = _latest(p, LOINC["glu"])
        if not g or not lv or abs(lv[1] - 108) < 1:
            return None
        ph = pick(["glucose goal met?", f"is {p.p()} blood sugar at goal (<108)?", "BG at goal?"])
        return Q(ph, "boolean", [lv[1] < 108], "goals/met-glucose", [r_(g), r_(lv[2])])
    g = goals.get("Maintain blood pressure below 140/90 mmHg")
    s, d = _latest(p, LOINC["sbp"]), _latest(p, LOINC["dbp"])
    if not g or not s or not d or s[0] != d[0] or abs(s[1] - 140) < 1 or abs(d[1] - 90) < 1:
        return None
    ph = pick(["BP at goal?", f"is {p.p()} blood pressure at goal (<140/90)?", "BP goal met?"])
    return Q(ph, "boolean", [s[1] < 140 and d[1] < 90], "goals/met-bp", [r_(g), r_(s[2])])


def g_goal_has(p, rng):
    if p.dead:
        return None
    goals = {g["description"]["text"] for g in p.by["Goal"]}
    yes = rng.random() < 0.5
    if yes and "Maintain blood pressure below 140/90 mmHg" in goals:
        ph = pick(["is there a BP goal on file?", f"does {p.p()} care plan have a blood pressure goal?"])
        return Q(ph, "boolean", [True], "goals/has-bp-yes")
    if not yes and not p.by["Goal"]:
        ph = pick(["is there an A1c goal on file?", f"does {p.first} have a documented A1c goal?"])
        return Q(ph, "boolean", [False], "goals/has-a1c-no")
    return None


# --------------------------------------------------------------------------------------------- imaging
def _studies(p):
    return sorted(((T(s["started"]), s) for s in p.by["ImagingStudy"] if T(s["started"]) <= p.now),
                  key=lambda x: x[0])


# Procedures that are imaging without an ImagingStudy (fetal ultrasound, echo, DEXA…). A coordinator
# counts them as imaging, so a question whose answer they could change is not asked (gold fix after the
# first run: "any ultrasound on file?" was gold False for a patient with "Ultrasound scan for fetal
# viability" procedures, and the engine's Yes was a fair reading).
IMAGING_PROC_WORDS = ["x-ray", "ultrasound", "echocardiog", "bone density", "computed tomography", "mri",
                      "magnetic resonance", "mammog", "fetal anatomy", "radiograph", "sonogra", "fluoroscop"]


def _imaging_procs(p):
    """(time, Procedure) of the procedures whose name says imaging."""
    out = []
    for pr in p.by["Procedure"]:
        n = (cname(pr["code"]) or "").lower()
        if any(w in n for w in IMAGING_PROC_WORDS):
            out.append((T(pr.get("performedDateTime") or pr.get("performedPeriod", {}).get("start")), pr))
    return out


def _imaging_clean(p):
    """True when every imaging-like procedure falls on the day of an ImagingStudy (the same event)."""
    days = {dstr(T(s["started"])) for s in p.by["ImagingStudy"]}
    return all(dstr(t) in days for t, _ in _imaging_procs(p))


def _is_cxr(s):
    sr = s["series"][0]
    site = (sr.get("bodySite") or {}).get("display", "").lower()
    return sr["modality"]["code"] in ("DX", "CR") and ("thora" in site or "chest" in site)


def g_img_last(p, rng):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    if not st:
        return None
    t, s = st[-1]
    if len(st) > 1 and dstr(st[-2][0]) == dstr(t):
        return None
    ph = pick(["last imaging?", f"when was {p.p()} most recent imaging study?", "date of last imaging study?"])
    return Q(ph, "date", [dstr(t)], "imaging/last-date", [r_(s)])


def g_img_cxr(p, rng):
    st = [(t, s) for t, s in _studies(p) if _is_cxr(s)]
    ph = pick(["last CXR?", "when was the last chest x-ray?", f"date of {p.p()} most recent chest film?"])
    if not st:
        if p.by["ImagingStudy"] and rng.random() < 0.5:
            return None
        if any("chest x-ray" in (cname(pr["code"]) or "").lower() for pr in p.by["Procedure"]):
            return None
        return Q(ph, "date", [], "imaging/cxr-none", status="no-data")
    return Q(ph, "date", [dstr(st[-1][0])], "imaging/cxr-last", [r_(st[-1][1])])


def g_img_us(p, rng, everyone_mod):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    mods = {s["series"][0]["modality"]["code"] for _, s in st}
    if not st and rng.random() < 0.5:
        return None
    ans = "US" in mods
    ph = pick(["any ultrasound on file?", f"has {p.s()} had an ultrasound?", "any US imaging?"])
    return Q(ph, "boolean", [ans], "imaging/us-" + ("yes" if ans else "no"), [r_(s) for _, s in st
                                                                              if s["series"][0]["modality"]["code"] == "US"])


def g_img_none(p, rng):
    """Imaging questions about a patient with no ImagingStudy → no-data."""
    if p.by["ImagingStudy"] or _imaging_procs(p):
        return None
    if rng.random() < 0.5:
        ph = pick(["last imaging?", "date of most recent imaging study?"])
        return Q(ph, "date", [], "imaging/last-date-none-ever", status="no-data")
    ph = pick(["what body part was imaged most recently?", "last imaging study - what body site?"])
    return Q(ph, "list", [], "imaging/last-site-none-ever", status="no-data")


def g_ed_reason_none(p, rng):
    """'Why was she last in the ED?' for a patient never seen in the ED → no-data."""
    if _encs(p, "EMER"):
        return None
    ph = pick(["reason for last ER visit?", f"why was {p.s()} last in the ED?"])
    return Q(ph, "list", [], "encounter_reasons/last-ed-reason-none-ever", status="no-data")


def g_img_count(p, rng):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    ph = pick(["how many imaging studies on file?", "# imaging studies?", f"how many imaging studies has {p.first} had?"])
    return Q(ph, "count", [len(st)], "imaging/count", [r_(s) for _, s in st])


def g_img_site(p, rng):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    if not st:
        return None
    t, s = st[-1]
    if len(st) > 1 and st[-2][0] == t:
        return None
    site = s["series"][0].get("bodySite", {}).get("display")
    if not site:
        return None
    ph = pick(["what body part was imaged most recently?", "last imaging study - what body site?",
                     f"what was imaged on {p.p()} last study?"])
    return Q(ph, "list", [site], "imaging/last-site", [r_(s)])


def g_img_instances(p, rng):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    if not st:
        return None
    t, s = st[-1]
    ph = pick(["how many images in the last imaging study?", "# instances on most recent study?",
                     "number of series in the latest imaging study?"])
    n = s["numberOfSeries"] if "series" in ph else s["numberOfInstances"]
    return Q(ph, "count", [n], "imaging/last-" + ("series" if "series" in ph else "instances"), [r_(s)])


def g_img_modality(p, rng):
    if not _imaging_clean(p):
        return None
    st = _studies(p)
    if not st:
        return None
    t, s = st[-1]
    if len(st) > 1 and st[-2][0] == t:
        return None
    mod = s["series"][0]["modality"]["code"]
    word = rng.choice(["an ultrasound", "an x-ray"])
    ans = (mod == "US") if word == "an ultrasound" else (mod in ("DX", "CR"))
    ph = pick([f"was {p.p()} last imaging study {word}?", f"last imaging {word}?"])
    return Q(ph, "boolean", [ans], "imaging/last-modality", [r_(s)])


# ---------------------------------------------------------------------------------------- immunizations
def _imms(p):
    return sorted(((T(i["occurrenceDateTime"]), i) for i in p.by["Immunization"]
                   if i.get("status") == "completed" and T(i["occurrenceDateTime"]) <= p.now), key=lambda x: x[0])


def _vax(p, key):
    subs = VACCINES[key][0]
    return [(t, i) for t, i in _imms(p) if any(s in cname(i["vaccineCode"]).lower() for s in subs)]


def g_vax_last(p, rng, everyone):
    names = [cname(i["vaccineCode"]).lower() for _, i in _imms(p)]
    # "last tetanus shot" is ambiguous when a near vaccine (Tdap vs Td) is also on file
    keys = [k for k in VACCINES if _vax(p, k) and not any(g in n for g in VACCINES[k][1] for n in names)]
    if not keys:
        return None
    k = rng.choice(keys)
    v = _vax(p, k)
    w = rng.choice(VAX_WORDS[k])
    ph = pick([f"last {w}?", f"when did {p.s()} last get the {w}?", f"date of {p.p()} most recent {w}?"])
    return Q(ph, "date", [dstr(v[-1][0])], f"immunizations/last-{k.replace(' ', '_')}", [r_(v[-1][1])])


def g_vax_ever(p, rng, everyone):
    yes = rng.random() < 0.5
    have = [k for k in VACCINES if _vax(p, k)]
    names = [cname(i["vaccineCode"]).lower() for _, i in _imms(p)]
    if yes and have:
        k = rng.choice(have)
        ans = True
    else:
        cands = [k for k in VACCINES if k in everyone and not _vax(p, k)
                 and not any(g in n for g in VACCINES[k][1] for n in names)]
        if not cands:
            return None
        k = rng.choice(cands)
        ans = False
    w = rng.choice(VAX_WORDS[k])
    ph = pick([f"has {p.s()} had the {w}?", f"{w} ever given?", f"any {w} on record for {p.first}?"])
    return Q(ph, "boolean", [ans], f"immunizations/ever-{'yes' if ans else 'no'}",
             [r_(i) for _, i in _vax(p, k)])


def g_vax_count_flu(p, rng):
    v = _vax(p, "flu shot")
    if len(v) < 2:
        return None
    years = sorted({t.year for t, _ in v})
    y = rng.choice(years[: max(1, len(years) - 1)])
    n = len([1 for t, _ in v if t.year >= y])
    ph = pick([f"how many flu shots since {y}?", f"# flu vaccines since Jan 1 {y}?",
                     f"how many times has {p.s()} had the flu vaccine since {y}?"])
    return Q(ph, "count", [n], "immunizations/count-flu-since",
             [r_(i) for t, i in v if t.year >= y])


def g_vax_on_date(p, rng):
    im = _imms(p)
    if not im:
        return None
    days = sorted({dstr(t) for t, _ in im})
    d = rng.choice(days[-4:])
    names = sorted({cname(i["vaccineCode"]) for t, i in im if dstr(t) == d})
    dd = date.fromisoformat(d)
    ph = pick([f"which vaccines were given on {human_date(dd, rng)}?", f"shots given {human_date(dd, rng)}?",
                     f"what immunizations did {p.s()} get on {human_date(dd, rng)}?"])
    return Q(ph, "list", names, "immunizations/on-date", [r_(i) for t, i in im if dstr(t) == d])


def g_vax_last_any(p, rng):
    im = _imms(p)
    if not im:
        return None
    t = im[-1][0]
    names = sorted({cname(i["vaccineCode"]) for tt, i in im if dstr(tt) == dstr(t)})
    ph = pick(["most recent vaccine given?", "last immunization?", f"what was {p.p()} last vaccine?"])
    return Q(ph, "list", names, "immunizations/last-any", [r_(i) for tt, i in im if dstr(tt) == dstr(t)])


# ------------------------------------------------------------------------------------------ procedures
def _procs(p, key):
    codes = PROCS[key][0]
    out = []
    for pr in p.by["Procedure"]:
        t = T(pr.get("performedDateTime") or pr.get("performedPeriod", {}).get("start"))
        if ccode(pr["code"]) in codes and t <= p.now:
            out.append((t, pr))
    return sorted(out, key=lambda x: x[0])


def _near(p, key):
    guards = PROCS[key][1]
    for pr in p.by["Procedure"]:
        n = (cname(pr["code"]) or "").lower()
        if any(g in n for g in guards):
            return True
    for r in p.by["DiagnosticReport"] + p.by["Observation"]:
        n = (cname(r["code"]) or "").lower()
        if any(g in n for g in guards):
            return True
    return False


SCREEN = ["colonoscopy", "depression screening", "spirometry", "bone density scan", "echocardiogram",
          "fecal occult blood test", "mammogram", "pap smear"]
HISTORY = ["appendectomy", "CABG", "PCI", "cardioversion", "colonoscopy"]


def g_proc_last(p, rng, keys, cat):
    have = [k for k in keys if _procs(p, k)]
    if not have:
        return None
    k = rng.choice(have)
    v = _procs(p, k)
    w = rng.choice(PROC_WORDS[k])
    ph = pick([f"last {w}?", f"when was {p.p()} last {w}?", f"date of most recent {w}?"])
    return Q(ph, "date", [dstr(v[-1][0])], f"{cat}/last-{k.replace(' ', '_')}", [r_(v[-1][1])])


def g_proc_ever(p, rng, keys, cat, everyone):
    yes = rng.random() < 0.45
    have = [k for k in keys if _procs(p, k)]
    if yes and have:
        k = rng.choice(have)
        ans = True
    else:
        cands = [k for k in keys if not _procs(p, k) and not _near(p, k)
                 and (k in everyone or k in ("mammogram",) and p.female)]
        if not cands:
            return None
        k = rng.choice(cands)
        ans = False
    w = rng.choice(PROC_WORDS[k])
    ph = pick([f"any {w} on file?", f"has {p.s()} ever had {a_(w)}?", f"{w} done?"])
    return Q(ph, "boolean", [ans], f"{cat}/ever-{'yes' if ans else 'no'}", [r_(x) for _, x in _procs(p, k)])


def g_proc_last_none(p, rng, keys, cat, everyone):
    """Date of a procedure the patient never had → no-data."""
    cands = [k for k in keys if not _procs(p, k) and not _near(p, k)
             and (k in everyone or k == "mammogram" and p.female)]
    if not cands:
        return None
    k = rng.choice(cands)
    w = rng.choice(PROC_WORDS[k])
    ph = pick([f"when was {p.p()} last {w}?", f"last {w}?", f"date of {p.first}'s last {w}?"])
    return Q(ph, "date", [], f"{cat}/last-none", status="no-data")


def g_proc_count(p, rng, everyone):
    k = rng.choice(["colonoscopy", "colonoscopy", "depression screening"])
    v = _procs(p, k)
    if not v and (_near(p, k) or rng.random() < 0.6):
        return None
    w = rng.choice(PROC_WORDS[k])
    ws = w[:-1] + "ies" if w.endswith("y") else w + "s"
    ph = pick([f"how many {ws} has {p.s()} had?", f"# of {ws} on file?"])
    return Q(ph, "count", [len(v)], f"procedure_history/count-{k.replace(' ', '_')}", [r_(x) for _, x in v])


def g_device(p, rng):
    names = " ".join((cname(pr["code"]) or "").lower() for pr in p.by["Procedure"])
    if any(w in names for w in DEVICE_WORDS) or rng.random() < 0.7:
        return None
    ph = pick(["any implanted devices?", f"does {p.s()} have a pacemaker or ICD?",
                     "implants or devices on file?"])
    return Q(ph, "boolean", [False], "procedure_history/device-no")


# ---------------------------------------------------------------------------------------- encounters
def _encs(p, cls=None):
    return sorted(((T(e["period"]["start"]), e) for e in p.by["Encounter"]
                   if T(e["period"]["start"]) <= p.now and (cls is None or e["class"]["code"] == cls)),
                  key=lambda x: x[0])


def g_enc_reason_ed(p, rng):
    ed = _encs(p, "EMER")
    if not ed:
        return None
    t, e = ed[-1]
    rs = sorted({cname(r) for r in e.get("reasonCode", [])})
    if not rs:
        return None
    ph = pick([f"why was {p.s()} last in the ED?", "reason for last ER visit?",
                     f"what brought {p.first} to the ED last time?"])
    return Q(ph, "list", rs, "encounter_reasons/last-ed-reason", [r_(e)])


def g_enc_reason_last(p, rng):
    en = _encs(p)
    if not en:
        return None
    t, e = en[-1]
    if len(en) > 1 and en[-2][0] == t:
        return None
    rs = sorted({cname(r) for r in e.get("reasonCode", [])})
    if not rs:
        return None
    ph = pick(["reason for last visit?", f"why was {p.s()} last seen?", "last encounter reason?"])
    return Q(ph, "list", rs, "encounter_reasons/last-reason", [r_(e)])


def g_enc_type_last(p, rng):
    en = _encs(p)
    if not en or p.dead:
        return None
    t, e = en[-1]
    if len(en) > 1 and en[-2][0] == t:
        return None
    ty = cname(e["type"][0]) if e.get("type") else None
    if not ty:
        return None
    ph = pick(["what kind of visit was the last one?", "last encounter type?",
                     f"what type of encounter did {p.first} have most recently?"])
    return Q(ph, "list", [ty], "encounter_reasons/last-type", [r_(e)])


def g_checkup(p, rng):
    cu = [(t, e) for t, e in _encs(p) if e.get("type") and cname(e["type"][0]) in CHECKUP_TYPES]
    if not cu:
        return None
    ph = pick(["last annual physical?", "when was the last well visit?",
                     f"date of {p.p()} last check-up?"])
    return Q(ph, "date", [dstr(cu[-1][0])], "encounter_reasons/last-checkup", [r_(cu[-1][1])])


def g_visit_for(p, rng):
    by = defaultdict(list)
    for t, e in _encs(p):
        for r in e.get("reasonCode", []):
            by[cname(r)].append((t, e))
    def base(k):
        return k.replace(" (disorder)", "").lower()
    # "last seen for sinusitis" is ambiguous when another reason's name contains it (viral sinusitis)
    cands = sorted(k for k in by if k not in ("Normal pregnancy",)
                   and not any(o != k and (base(k) in base(o) or base(o) in base(k)) for o in by))
    if not cands:
        return None
    k = rng.choice(cands)
    t, e = by[k][-1]
    nm = k.replace(" (disorder)", "").lower()
    ph = pick([f"last visit for {nm}?", f"when was {p.s()} last seen for {nm}?",
                     f"date of most recent encounter for {nm}?"])
    return Q(ph, "date", [dstr(t)], "encounter_reasons/last-for-reason", [r_(e)])


def _robust_count(p, cls, months):
    def n(start):
        return len([1 for t, _ in _encs(p, cls) if start <= t <= p.now])
    base = add_months(p.now, -months)
    vals = {n(base + timedelta(days=d)) for d in (-7, 0, 7)}
    return n(base) if len(vals) == 1 else None


def g_util_window(p, rng):
    cls = rng.choice(["EMER", "EMER", "IMP", "AMB"])
    months = rng.choice([12, 24, 60] if cls != "AMB" else [6, 12])
    n = _robust_count(p, cls, months)
    if n is None:
        return None
    w = rng.choice(ENC_WORDS[cls])
    span = {6: rng.choice(["past 6 mo", "last 6 months"]), 12: rng.choice(["past yr", "last 12 months"]),
            24: rng.choice(["past 2 yrs", "last 24 months"]), 60: rng.choice(["past 5 yrs", "last 5 years"])}[months]
    ph = pick([f"# {w} {span}?", f"how many {w} in the {span}?", f"{w} in {span} - how many?"])
    ids = [r_(e) for t, e in _encs(p, cls) if add_months(p.now, -months) <= t <= p.now]
    return Q(ph, "count", [n], f"utilization/{cls}-last-{months}m", ids)


def g_util_year(p, rng):
    cls = rng.choice(["EMER", "AMB", None])
    years = sorted({t.year for t, _ in _encs(p)})
    if not years:
        return None
    y = rng.choice(years[-6:])
    en = [(t, e) for t, e in _encs(p, cls) if t.year == y]
    if any((t.month == 1 and t.day == 1) or (t.month == 12 and t.day == 31) for t, _ in _encs(p, cls)):
        return None
    w = rng.choice(ENC_WORDS[cls]) if cls else rng.choice(["encounters", "visits of any kind"])
    ph = pick([f"how many {w} in {y}?", f"# {w} during {y}?"])
    return Q(ph, "count", [len(en)], f"utilization/{cls or 'ALL'}-year", [r_(e) for _, e in en])


def g_util_this_year(p, rng):
    y = p.now.year
    en = [(t, e) for t, e in _encs(p, "EMER") if t.year == y]
    if p.now.month < 3 and rng.random() < 0.7:
        return None
    ph = pick(["how many ED visits this year?", "# ER visits YTD?", f"ED visits so far in {y}?"])
    return Q(ph, "count", [len(en)], "utilization/EMER-this-year", [r_(e) for _, e in en])


def g_util_ever_imp(p, rng):
    en = _encs(p, "IMP")
    ph = pick(["how many times has she been hospitalized?" if p.female else
                     "how many times has he been hospitalized?", "# inpatient stays ever?",
                     f"total hospital admissions for {p.first}?"])
    return Q(ph, "count", [len(en)], "utilization/IMP-ever", [r_(e) for _, e in en])


# ------------------------------------------------------------------------------------- care team / payer
def _pract_name(pr):
    n = pr["name"][0]
    return " ".join(n.get("given", []) + [n["family"]])


def g_last_provider(p, rng):
    en = _encs(p)
    if not en:
        return None
    t, e = en[-1]
    if len(en) > 1 and en[-2][0] == t:
        return None
    parts = [p.ref(x["individual"]["reference"]) for x in e.get("participant", [])]
    parts = [x for x in parts if x and x["resourceType"] == "Practitioner"]
    if len(parts) != 1:
        return None
    ph = pick(["who saw her at the last visit?" if p.female else "who saw him at the last visit?",
                     "provider at last encounter?", f"which clinician saw {p.first} most recently?"])
    return Q(ph, "list", [_pract_name(parts[0])], "care_team/last-provider", [r_(e), r_(parts[0])])


def g_last_place(p, rng):
    en = _encs(p)
    if not en:
        return None
    t, e = en[-1]
    if len(en) > 1 and en[-2][0] == t:
        return None
    org = p.ref(e.get("serviceProvider", {}).get("reference", ""))
    if not org:
        return None
    ph = pick([f"where was {p.s()} last seen?", "facility of last visit?", f"which clinic did {p.first} go to last?"])
    return Q(ph, "list", [org["name"]], "care_team/last-facility", [r_(e), r_(org)])


def g_payer(p, rng):
    eobs = sorted(((T(x["created"]), x) for x in p.by["ExplanationOfBenefit"] if T(x["created"]) <= p.now),
                  key=lambda x: x[0])
    if not eobs:
        return None
    t, x = eobs[-1]
    payers = {i["coverage"].get("display") for tt, xx in eobs if tt == t for i in xx.get("insurance", [])}
    if len(payers) != 1:
        return None
    pay = payers.pop()
    if pay == "no_insurance" or pay == "dual_eligible":
        return None  # spelled as codes, not names a coordinator would accept as written
    ph = pick(PAYER_WORDS).format(s=p.s(), p=p.p())
    return Q(ph, "string", [pay], "care_team/payer", [r_(x)])


def g_pcp_neg(p, rng):
    """No CareTeam resources in these bundles: 'care team members' has no record → no-data."""
    if p.by["CareTeam"] or rng.random() < 0.85:
        return None
    ph = pick(["who is on her care team?" if p.female else "who is on his care team?",
                     "care team members?"])
    return Q(ph, "list", [], "care_team/careteam-none", status="no-data")


# ------------------------------------------------------------------------------------------------ build
CATS = ["careplan_active", "careplan_activities", "careplan_dates", "careplan_reason", "goals", "imaging",
        "immunizations", "screening", "procedure_history", "encounter_reasons", "utilization", "care_team"]


def load(data):
    pats = []
    for f in sorted(glob.glob(os.path.join(data, "synthea-r4", "*.json"))):
        pats.append(P(orjson.loads(open(f, "rb").read())))
    return sorted(pats, key=lambda p: p.id)


ONE_SIDED = ("/never", "/any-no", "/has-a1c-no", "/has-bp-yes", "/device-no")
# True negatives by design: never limited as "trivial" answers.
NEGATIVE = ("/last-none", "/careteam-none", "/none-ever")


def build(data):
    pats = load(data)
    everyone_cp = {c for p in pats for c in all_plan_cats(p)}
    all_acts = sorted({cname(a["detail"]["code"]) for p in pats for cp in p.by["CarePlan"]
                       for a in cp.get("activity", [])})
    everyone_vax = {k for p in pats for k in VACCINES if _vax(p, k)}
    everyone_proc = {k for p in pats for k in PROCS if _procs(p, k)}
    gens = {
        "careplan_active": ([(g_cp_active_list, 9), (g_cp_active_bool, 9), (lambda p, r: g_cp_active_neg(p, r, everyone_cp), 5)], 22),
        "careplan_activities": ([(g_cp_activities, 10), (lambda p, r: g_cp_activity_bool(p, r, all_acts), 6),
                                 (g_cp_activity_status, 5)], 20),
        "careplan_dates": ([(g_cp_start, 10), (g_cp_count, 5), (g_cp_count_active, 5)], 20),
        "careplan_reason": ([(g_cp_reason, 12)], 12),
        "goals": ([(g_goals_list, 6), (lambda p, r: g_goal_met(p, r, "a1c"), 5), (lambda p, r: g_goal_met(p, r, "glu"), 4),
                   (lambda p, r: g_goal_met(p, r, "bp"), 5), (g_goal_has, 4)], 22),
        "imaging": ([(g_img_last, 4), (g_img_cxr, 5), (lambda p, r: g_img_us(p, r, None), 3), (g_img_count, 3),
                     (g_img_site, 3), (g_img_instances, 2), (g_img_modality, 2), (g_img_none, 2)], 24),
        "immunizations": ([(lambda p, r: g_vax_last(p, r, everyone_vax), 7), (lambda p, r: g_vax_ever(p, r, everyone_vax), 7),
                           (g_vax_count_flu, 3), (g_vax_on_date, 3), (g_vax_last_any, 3)], 22),
        "screening": ([(lambda p, r: g_proc_last(p, r, SCREEN, "screening"), 8),
                       (lambda p, r: g_proc_ever(p, r, SCREEN, "screening", everyone_proc), 8),
                       (lambda p, r: g_proc_last_none(p, r, SCREEN, "screening", everyone_proc), 5)], 20),
        "procedure_history": ([(lambda p, r: g_proc_last(p, r, HISTORY, "procedure_history"), 5),
                               (lambda p, r: g_proc_ever(p, r, HISTORY, "procedure_history", everyone_proc), 6),
                               (lambda p, r: g_proc_count(p, r, everyone_proc), 4), (g_device, 3)], 18),
        "encounter_reasons": ([(g_enc_reason_ed, 5), (g_enc_reason_last, 4), (g_enc_type_last, 4), (g_checkup, 4),
                               (g_visit_for, 5), (g_ed_reason_none, 2)], 24),
        "utilization": ([(g_util_window, 8), (g_util_year, 5), (g_util_this_year, 4), (g_util_ever_imp, 3)], 20),
        "care_team": ([(g_last_provider, 5), (g_last_place, 5), (g_payer, 5)], 15),
    }
    rows = []
    for cat in CATS:
        gl, _cap = gens[cat]
        got = []
        seen = set()
        for gi, (g, quota) in enumerate(gl):
            rng0 = random.Random(f"probe_care:{cat}:{gi}")  # noqa: S311 - seeded for reproducible draws
            order = pats[:]
            rng0.shuffle(order)
            n = 0
            by_answer = Counter()
            for p in order:
                if n >= quota:
                    break
                rng = random.Random(f"{p.id}:{cat}:{gi}")  # noqa: S311 - seeded for reproducible draws
                _TURN[0] = n
                q = g(p, rng)
                if q is None:
                    continue
                # Balance: a zero count, an empty list or a no-data answer at most a third of a pattern's
                # questions; each boolean value at most two thirds (unless the pattern is one-sided by design).
                ans = (q["expected_status"], json.dumps(q["expected"]))
                trivial = (q["expected_status"] == "no-data" or (q["answer_type"] == "count" and q["expected"] == [0])
                           or (q["answer_type"] == "list" and q["expected"] == []))
                limit = max(1, quota // 3) if trivial and not q["template"].endswith(NEGATIVE) else quota
                if q["answer_type"] == "boolean" and not q["template"].endswith(ONE_SIDED):
                    limit = -(-2 * quota // 3)
                if by_answer[ans] >= limit:
                    continue
                key = (p.id, q["question"])
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
          dict(Counter(r["answer_type"] for r in rows)), dict(Counter(str(r["expected"]) for r in rows
                                                                     if r["answer_type"] == "boolean")))


if __name__ == "__main__":
    main()
