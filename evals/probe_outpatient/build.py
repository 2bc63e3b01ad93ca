"""Build the probe_outpatient question set: chronic-disease follow-up questions about one adult patient.

Voice: an internist, family physician or nurse practitioner preparing or holding a follow-up visit for
hypertension, diabetes / prediabetes, hyperlipidemia or obesity: latest labs and vitals, series and trends,
then-and-now comparisons, control against the goal, screening and vaccine dates, what the patient is on,
visit counts, the problem list, smoking and allergies, and honest "not in the record" questions.

Reads the raw FHIR transaction bundles of ``../shared/data/synthea-r4`` with orjson, resolves the
``urn:uuid:`` references itself and imports nothing from fhirqa. Every random choice comes from an RNG seeded
by a string (patient id + generator name), so the same data gives the same bytes.

Usage: python evals/probe_outpatient/build.py [--data DIR] [--check]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "questions.jsonl")

# LOINC codes of the items asked about. BP is one Observation with two components.
A1C, LDL, HDL, TC, TG = "4548-4", "18262-6", "2085-9", "2093-3", "2571-8"
CR, EGFR, K, NA, GLU, BUN, MALB = "38483-4", "33914-3", "6298-4", "2947-0", "2339-0", "6299-2", "14959-1"
WT, BMI, BP, SBP, DBP, SMOKE = "29463-7", "39156-5", "55284-4", "8480-6", "8462-4", "72166-2"

# Spoken names of each item: (plain forms, shorthand forms, misspelt forms).
ITEM_WORDS = {
    A1C: ["A1c", "HbA1c", "hemoglobin A1c", "a1c", "hgba1c", "hemoglobn A1c"],
    LDL: ["LDL", "LDL cholesterol", "ldl-c", "bad cholesterol (LDL)", "LDL choleterol"],
    HDL: ["HDL", "HDL cholesterol", "good cholesterol (HDL)"],
    TC: ["total cholesterol", "TC", "total choleterol"],
    TG: ["triglycerides", "trigs", "TG", "triglicerides"],
    CR: ["creatinine", "Cr", "creat", "creatinin"],
    EGFR: ["eGFR", "GFR", "estimated GFR"],
    K: ["potassium", "K", "K+", "potasium"],
    NA: ["sodium", "Na"],
    GLU: ["glucose", "blood sugar", "BG", "glucse"],
    BUN: ["BUN", "urea nitrogen"],
    MALB: ["microalbumin", "urine microalbumin/creatinine ratio", "UACR", "microalbumen"],
    WT: ["weight", "wt", "weight", "wieght"],
    BMI: ["BMI", "body mass index"],
    SBP: ["systolic BP", "SBP", "systolic", "top BP number"],
}
NAMES_FOR_TEXT = {A1C: "A1c", LDL: "LDL", CR: "creatinine", EGFR: "eGFR", WT: "weight", BMI: "BMI", SBP: "systolic BP",
                  K: "potassium", GLU: "glucose", TG: "triglycerides", HDL: "HDL", TC: "total cholesterol"}

CHRONIC = ("Hypertension", "Diabetes", "Prediabetes", "Hyperlipidemia", "Hypertriglyceridemia", "Metabolic syndrome",
           "obesity", "Coronary Heart Disease", "Chronic kidney disease", "emphysema")
CHECKUP = "Encounter for check up (procedure)"
# Antihypertensive ingredients (lower case) and statins, for "what's he on for BP" / "on a statin?".
ANTIHTN = ("hydrochlorothiazide", "amlodipine", "captopril", "lisinopril", "losartan", "metoprolol", "verapamil",
           "atenolol", "furosemide", "lasix", "chlorthalidone")
STATINS = ("simvastatin", "simvistatin", "atorvastatin", "rosuvastatin", "pravastatin", "lovastatin")
# Drugs nobody in these records was ever prescribed: asked as "is she on X?" (false) or "X dose?" (no-data).
ABSENT_DRUGS = [("metformin", ["metformin", "metfromin", "Glucophage"]), ("insulin", ["insulin", "any insulin"]),
                ("lisinopril", ["lisinopril", "an ACE (lisinopril)"]), ("losartan", ["losartan", "an ARB like losartan"]),
                ("ezetimibe", ["Zetia", "ezetimibe"])]
VAX = {"flu": ("influenza",), "tetanus": ("td (adult)", "tdap", "dtap"), "ppsv23": ("polysaccharide",),
       "pneumo": ("pneumococcal",), "zoster": ("zoster",)}


def T(s):
    """Parse an ISO instant (Synthea writes +00:00; a bare date is midnight UTC)."""
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


def r_(res):
    """The Type/id of a resource."""
    return f"{res['resourceType']}/{res['id']}"


def rd(x):
    """A gold number: two decimals (the tolerance absorbs any display rounding)."""
    return round(x, 2)


def add_months(d, n):
    """The same instant n months earlier/later (days are ≤ 28 here, so nothing clamps)."""
    y, m = divmod(d.month - 1 + n, 12)
    return d.replace(year=d.year + y, month=m + 1)


def noon(d):
    """12:00Z on a calendar date."""
    return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)


def human_date(d, rng):
    """A date as a clinician writes it (unambiguous forms only)."""
    forms = [d.isoformat(), d.strftime("%B ") + str(d.day) + d.strftime(", %Y"),
             d.strftime("%b ") + str(d.day) + d.strftime(", %Y"), f"{d.month}/{d.day}/{d.year}"]
    return rng.choice(forms)


class P:
    """One patient's resources with references resolved, plus the moments questions are asked at."""

    def __init__(self, bundle):
        self.by = defaultdict(list)
        self.text = orjson.dumps(bundle).decode().lower()
        for e in bundle["entry"]:
            r = e["resource"]
            self.by[r["resourceType"]].append(r)
        self.pat = self.by["Patient"][0]
        self.id = self.pat["id"]
        self.first = re.sub(r"\d+", "", self.pat["name"][0]["given"][0])
        self.female = self.pat.get("gender") == "female"
        self.death = T(self.pat.get("deceasedDateTime"))
        self.birth = date.fromisoformat(self.pat["birthDate"])
        self.obs = defaultdict(list)  # code -> [(t, value, res)]
        for o in self.by["Observation"]:
            c = ccode(o["code"])
            t = T(o.get("effectiveDateTime") or (o.get("effectivePeriod") or {}).get("start") or o.get("issued"))
            if "valueQuantity" in o:
                self.obs[c].append((t, o["valueQuantity"]["value"], o))
            elif "component" in o:
                for comp in o["component"]:
                    if "valueQuantity" in comp:
                        self.obs[ccode(comp["code"])].append((t, comp["valueQuantity"]["value"], o))
            elif "valueCodeableConcept" in o:
                self.obs[c].append((t, cname(o["valueCodeableConcept"]), o))
        for v in self.obs.values():
            v.sort(key=lambda x: x[0])
        self.encs = sorted(self.by["Encounter"], key=lambda e: T(e["period"]["start"]))
        self.last = self._last_fact()
        self.nows = self._nows()

    def _last_fact(self):
        ts = []
        for typ, rs in self.by.items():
            if typ in ("Claim", "ExplanationOfBenefit", "Patient", "Organization", "Practitioner"):
                continue  # billing periods run a year past the care
            for r in rs:
                for k in ("effectiveDateTime", "issued", "authoredOn", "occurrenceDateTime", "onsetDateTime",
                          "abatementDateTime", "recordedDate", "performedDateTime"):
                    if k in r:
                        ts.append(T(r[k]))
                for k in ("period", "performedPeriod", "effectivePeriod"):
                    for kk in ("start", "end"):
                        if kk in r.get(k, {}):
                            ts.append(T(r[k][kk]))
        return max(ts)

    def _nows(self):
        """'late': a few days after the last fact (alive patients): nothing after it in the record.
        'mid': the day after a check-up 2-4 years before the last fact: later facts exist and must not count."""
        nows = {}
        rng = random.Random(self.id + ":now")  # noqa: S311 - seeded for reproducible draws
        if self.death is None:
            offs = [k for k in range(3, 22) if (self.last + timedelta(days=k)).day <= 28]
            nows["late"] = noon((self.last + timedelta(days=rng.choice(offs))).date())
        bp_times = {t for t, _v, _o in self.obs[SBP]}
        cands = []
        for e in self.encs:
            t = T(e["period"]["start"])
            if cname(e["type"][0]) != CHECKUP or t not in bp_times:
                continue
            end = self.death or self.last
            if timedelta(days=2 * 365) <= end - t <= timedelta(days=4 * 365 + 60) and (t + timedelta(days=1)).day <= 28:
                cands.append(t)
        if cands:
            t = rng.choice(cands)
            nows["mid"] = noon((t + timedelta(days=1)).date())
        return nows

    def now(self, rng, kinds=("late", "mid")):
        """One of the patient's moments of the allowed kinds (None when it has none)."""
        ks = [k for k in kinds if k in self.nows]
        return self.nows[rng.choice(ks)] if ks else None

    def vals(self, code, now, start=None):
        """Values of an item at or before now (and at or after start)."""
        return [x for x in self.obs[code] if x[0] <= now and (start is None or x[0] >= start)]

    def age(self, now):
        """Completed years at now."""
        d = now.date()
        return d.year - self.birth.year - ((d.month, d.day) < (self.birth.month, self.birth.day))

    def conds(self, now):
        """Conditions with onset at or before now."""
        return [c for c in self.by["Condition"] if T(c.get("onsetDateTime")) and T(c["onsetDateTime"]) <= now]

    def active_conds(self, now):
        """Conditions active at now: onset ≤ now and no abatement, or abatement after now."""
        return [c for c in self.conds(now) if not c.get("abatementDateTime") or T(c["abatementDateTime"]) > now]

    def has_cond(self, now, word):
        """Whether a condition naming the word has begun by now."""
        return any(word.lower() in cname(c["code"]).lower() for c in self.conds(now))

    def meds(self):
        """MedicationRequests in order of authoredOn."""
        return sorted(self.by["MedicationRequest"], key=lambda m: T(m["authoredOn"]))

    def goals(self):
        """Goal descriptions -> Goal."""
        return {g["description"]["text"]: g for g in self.by["Goal"]}

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
        """How the patient is named in a possessive slot."""
        return rng.choice([self.p(), self.p(), self.first + "'s", "the patient's", "pt's"])


_TURN = [0]


def pick(options):
    """The sentence form for the next accepted question of a generator: forms take turns."""
    return options[_TURN[0] % len(options)]


def Q(question, atype, expected, template, refs=(), status="answered", tol=None, now=None):
    """One question row (id and patient filled by build)."""
    if tol is None:
        tol = 0.01 if atype in ("number", "list") else 0
    return {"question": question, "answer_type": atype, "expected": expected, "expected_status": status,
            "tolerance": tol, "gold_refs": sorted(set(refs)), "template": template, "now": now}


def no_tie(vs, i=-1):
    """The value at position i is alone at its time (no other different value shares it)."""
    t, v = vs[i][0], vs[i][1]
    return all(x[1] == v for x in vs if x[0] == t)


def robust_window(p, code, now, months):
    """The values in the last N months, only when moving the start 7 days either way keeps them."""
    start = add_months(now, -months)
    sets = [tuple(x[0] for x in p.vals(code, now, start + timedelta(days=d))) for d in (-7, 0, 7)]
    return p.vals(code, now, start) if len(set(sets)) == 1 else None


def item_word(code, rng):
    """A spoken name of an item."""
    return rng.choice(ITEM_WORDS[code])


# -------------------------------------------------------------------------------------------- latest_value
LATEST_ITEMS = [A1C, LDL, HDL, TC, TG, CR, EGFR, K, NA, GLU, BUN, MALB, WT, BMI, SBP]


def g_latest(p, rng):
    """'last A1c?' -> the latest value at or before now."""
    now = p.now(rng)
    code = rng.choice([c for c in LATEST_ITEMS if p.vals(c, now)] or [None])
    if code is None:
        return None
    vs = p.vals(code, now)
    if not no_tie(vs):
        return None
    w = item_word(code, rng)
    forms = ["last {w}?", "most recent {w}", "what was {who} last {w}", "{w}?", "latest {w} pls",
             "what's {who} {w} been most recently?"]
    q = pick(forms).format(w=w, who=p.who(rng))
    return Q(q, "number", [rd(vs[-1][1])], f"latest_value/{code}", [r_(vs[-1][2])], now=now)


def g_latest_bp(p, rng):
    """'last BP?' -> [systolic, diastolic] of the latest reading."""
    now = p.now(rng)
    s, d = p.vals(SBP, now), p.vals(DBP, now)
    if not s or not no_tie(s) or not no_tie(d):
        return None
    forms = ["last BP?", "what was {who} BP at the last visit?", "most recent blood pressure",
             "BP last time?", "latest blod pressure reading"]
    q = pick(forms).format(who=p.who(rng))
    if "last visit" in q:  # only when the latest encounter before now is the one that took the BP
        last_enc = max((T(e["period"]["start"]) for e in p.encs if T(e["period"]["start"]) <= now), default=None)
        if last_enc != s[-1][0]:
            return None
    return Q(q, "list", [rd(s[-1][1]), rd(d[-1][1])], "latest_value/bp", [r_(s[-1][2])], now=now)


# ------------------------------------------------------------------------------------------------ series
def g_last_two(p, rng):
    """'last A1c and the one before' -> [latest, previous]."""
    now = p.now(rng)
    code = rng.choice([c for c in (A1C, LDL, CR, EGFR, WT) if len(p.vals(c, now)) >= 2] or [None])
    if code is None:
        return None
    vs = p.vals(code, now)
    if not no_tie(vs) or not no_tie(vs, -2) or vs[-1][0] == vs[-2][0] or abs(vs[-1][1] - vs[-2][1]) < 0.01:
        return None
    w = item_word(code, rng)
    q = pick(["last {w} and the one before", "last 2 {w}s?", "{w} - latest and prior value?",
              "what were {who} two most recent {w} results"]).format(w=w, who=p.who(rng))
    return Q(q, "list", [rd(vs[-1][1]), rd(vs[-2][1])], f"series/last-two-{code}", [r_(vs[-1][2]), r_(vs[-2][2])],
             now=now)


def g_last_n_sbp(p, rng):
    """'systolics at the last 3 visits' -> the latest 3 systolic values."""
    now = p.now(rng)
    vs = p.vals(SBP, now)
    if len(vs) < 3 or len({x[0] for x in vs[-3:]}) < 3:
        return None
    q = pick(["BP at the last 3 visits - just the systolics", "last 3 SBPs?", "what were the last three systolic readings",
              "systolic BP x last 3 readings"])
    return Q(q, "list", [rd(x[1]) for x in vs[-3:]], "series/last-3-sbp", [r_(x[2]) for x in vs[-3:]], now=now)


def g_values_window(p, rng):
    """'A1c values over the past 2 yrs' -> every value in the window."""
    now = p.now(rng)
    code = rng.choice([A1C, LDL, WT, CR, EGFR])
    months = rng.choice([24, 36])
    vs = robust_window(p, code, now, months)
    if not vs or len(vs) < 2 or len(vs) > 8:
        return None
    w = item_word(code, rng)
    span = {24: rng.choice(["past 2 yrs", "last 2 years", "over the past two years"]),
            36: rng.choice(["past 3 yrs", "last 3 years", "over the past three years"])}[months]
    q = pick(["{w} values {span}", "list {who} {w}s {span}", "all {w} results in the {span2}",
              "show me the {w}s {span}"]).format(w=w, span=span, who=p.who(rng), span2=span.replace("past ", "")
                                                 .replace("over the ", "").replace("last ", "last "))
    return Q(q, "list", [rd(x[1]) for x in vs], f"series/window-{code}-{months}", [r_(x[2]) for x in vs], now=now)


def trend_word(vs):
    """increasing / decreasing / stable by the 5 % rule on last vs first; None near a cut-off."""
    a, b = vs[0][1], vs[-1][1]
    r = (b - a) / abs(a)
    if abs(abs(r) - 0.05) < 0.005:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


def g_trend(p, rng):
    """'A1c trend over the last 2 years' -> increasing / decreasing / stable."""
    now = p.now(rng)
    code = rng.choice([A1C, A1C, LDL, WT, SBP, EGFR, CR, BMI])
    months = rng.choice([24, 36, 60])
    vs = robust_window(p, code, now, months)
    if not vs or len(vs) < 2 or vs[0][0] == vs[-1][0] or not no_tie(vs) or not no_tie(vs, 0):
        return None
    word = trend_word(vs)
    if word is None:
        return None
    w = item_word(code, rng)
    span = {24: "last 2 years", 36: "past 3 yrs", 60: "last 5 yrs"}[months]
    q = pick(["{w} trend over the {span}?", "how has {who} {w} been trending the {span} - up, down or stable?",
              "is {who} {w} going up or down ({span})?", "{w} trending? {span}"]).format(w=w, span=span, who=p.who(rng))
    return Q(q, "string", [word], f"series/trend-{code}-{months}", [r_(vs[0][2]), r_(vs[-1][2])], now=now)


def g_empty_window(p, rng):
    """'A1c in the last 6 months?' with no value in the window (robust) -> no-data."""
    now = p.now(rng)
    code = rng.choice([A1C, LDL, CR, MALB, A1C, WT, WT])
    months = rng.choice([3, 6])
    vs = robust_window(p, code, now, months)
    if vs is None or vs or not p.vals(code, now):
        return None
    w = item_word(code, rng)
    q = pick(["{w} in the last {m} months?", "{w} value from the past {m} mo?", "{w} past {m} months?"]
             ).format(w=w, m=months)
    return Q(q, "number", [], f"series/empty-{code}-{months}", status="no-data", now=now)


# -------------------------------------------------------------------------------------------- comparison
def then_value(p, code, now, months):
    """The one value within ±(months/3) of now − months, when exactly one lies there and it is not the latest."""
    back = add_months(now, -months)
    span = timedelta(days=months * 30 // 3)
    near = [x for x in p.vals(code, now) if abs(x[0] - back) <= span]
    vs = p.vals(code, now)
    if len(near) != 1 or not vs or near[0][0] == vs[-1][0] or not no_tie(vs):
        return None
    return near[0], vs[-1]


def g_change_back(p, rng):
    """'weight change since last year' -> latest − the value about a year (two years) back."""
    now = p.now(rng)
    code, months = rng.choice([(WT, 12), (BMI, 24), (WT, 24), (A1C, 12), (BMI, 12), (LDL, 12)])
    tv = then_value(p, code, now, months)
    if tv is None:
        return None
    (t0, v0, o0), (t1, v1, o1) = tv
    if abs(v1 - v0) < 0.05:
        return None
    w = item_word(code, rng)
    if months == 12:
        q = pick(["{w} change since last year?", "how much has {who} {w} changed over the past year?",
                  "{w} now vs a year ago - difference?"]).format(w=w, who=p.who(rng))
    else:
        q = pick(["{w} now vs 2 years ago: how much change?", "change in {w} over the last 2 yrs?",
                  "how much has {who} {w} changed since 2 years ago"]).format(w=w, who=p.who(rng))
    return Q(q, "number", [rd(v1 - v0)], f"comparison/change-{code}-{months}", [r_(o0), r_(o1)], tol=0.02, now=now)


def g_higher(p, rng):
    """'is her A1c higher than a year ago?' -> latest > the value a year back."""
    now = p.now(rng)
    code = rng.choice([A1C, WT, LDL, CR, SBP])
    tv = then_value(p, code, now, 12)
    if tv is None:
        return None
    (t0, v0, o0), (t1, v1, o1) = tv
    if abs(v1 - v0) <= 0.01 * abs(v0):
        return None
    w = item_word(code, rng)
    worse = rng.random() < 0.5
    q = pick(["is {who} {w} higher than a year ago?", "{w} up compared with last year?",
              "has {who} {w} gone up since this time last year?"]).format(w=w, who=p.who(rng))
    _ = worse
    return Q(q, "boolean", [v1 > v0], f"comparison/higher-{code}", [r_(o0), r_(o1)], now=now)


def g_change_since_year(p, rng):
    """'how much has his eGFR changed since 2017?' -> last − first in [Jan 1 of the year, now]."""
    now = p.now(rng)
    code = rng.choice([EGFR, CR, A1C, WT])
    year = now.year - rng.choice([2, 3, 4])
    start = datetime(year, 1, 1, tzinfo=UTC)
    vs = p.vals(code, now, start)
    if len(vs) < 2 or any(abs(x[0] - start) < timedelta(days=2) for x in p.obs[code]):
        return None
    if not no_tie(vs) or not no_tie(vs, 0) or vs[0][0] == vs[-1][0] or abs(vs[-1][1] - vs[0][1]) < 0.05:
        return None
    w = item_word(code, rng)
    q = pick(["how much has {who} {w} changed since {y}?", "{w} change since {y}", "change in {w} from {y} to now?"]
             ).format(w=w, who=p.who(rng), y=year)
    return Q(q, "number", [rd(vs[-1][1] - vs[0][1])], f"comparison/since-year-{code}", [r_(vs[0][2]), r_(vs[-1][2])],
             tol=0.02, now=now)


# ------------------------------------------------------------------------------------------------ control
A1C_GOAL = "Hemoglobin A1c total in Blood < 7.0"
BP_GOAL = "Maintain blood pressure below 140/90 mmHg"


def g_dm_control(p, rng):
    """'is her diabetes controlled?' -> latest A1c < 7.0 (her Goal when recorded; ADA's 7 % otherwise)."""
    now = p.now(rng)
    if not p.has_cond(now, "Diabetes") or p.has_cond(now, "Prediabetes") and not any(
            cname(c["code"]) == "Diabetes" for c in p.conds(now)):
        return None
    vs = p.vals(A1C, now)
    if not vs or not no_tie(vs) or abs(vs[-1][1] - 7.0) < 0.05:
        return None
    refs = [r_(vs[-1][2])] + ([r_(p.goals()[A1C_GOAL])] if A1C_GOAL in p.goals() else [])
    q = pick(["is {p} diabetes controlled?", "DM well controlled?", "is {p} sugar under control?",
              "is {p} diabetis controlled on the last A1c?"]).format(p=p.p())
    return Q(q, "boolean", [vs[-1][1] < 7.0], "control/dm", refs, now=now)


def g_a1c_goal(p, rng):
    """'A1c at goal?' for a patient whose record holds the A1c Goal."""
    now = p.now(rng)
    g = p.goals().get(A1C_GOAL)
    vs = p.vals(A1C, now)
    if g is None or not vs or not no_tie(vs) or abs(vs[-1][1] - 7.0) < 0.05:
        return None
    q = pick(["is {p} A1c at goal?", "A1c at target?", "has {s} met {p} A1c goal?"]).format(p=p.p(), s=p.s())
    return Q(q, "boolean", [vs[-1][1] < 7.0], "control/a1c-goal", [r_(vs[-1][2]), r_(g)], now=now)


def g_bp_control(p, rng):
    """'is his BP at goal?' -> latest SBP and DBP under the patient's Goal (140/90) when recorded; 'controlled'
    without a Goal uses 130/80, and is asked only when 130/80 and 140/90 agree."""
    now = p.now(rng)
    s, d = p.vals(SBP, now), p.vals(DBP, now)
    if not s or not no_tie(s) or not no_tie(d):
        return None
    sv, dv = s[-1][1], d[-1][1]
    g = p.goals().get(BP_GOAL)
    at140 = sv < 140 and dv < 90
    at130 = sv < 130 and dv < 80
    if min(abs(sv - 140), abs(sv - 130), abs(dv - 90), abs(dv - 80)) < 1:
        return None
    if g is not None:
        q = pick(["is {p} BP at goal?", "BP at target per {p} goal?", "has {s} met {p} blood pressure goal?"]
                 ).format(p=p.p(), s=p.s())
        return Q(q, "boolean", [at140], "control/bp-goal", [r_(s[-1][2]), r_(g)], now=now)
    if not p.has_cond(now, "Hypertension") or at140 != at130:
        return None
    q = pick(["is {p} BP controlled?", "HTN controlled?", "how's {p} blood pressure control - controlled?",
              "is {p} hypertension under control"]).format(p=p.p())
    return Q(q, "boolean", [at130], "control/bp", [r_(s[-1][2])], now=now)


def g_ldl_goal(p, rng):
    """'is his LDL at goal?' -> no-data: no LDL goal is recorded for anyone in these records."""
    now = p.now(rng)
    if not p.vals(LDL, now) or not p.has_cond(now, "Hyperlipidemia") and rng.random() < 0.7:
        return None
    q = pick(["is {p} LDL at goal?", "LDL at target?", "has {s} reached {p} LDL goal?"]).format(p=p.p(), s=p.s())
    return Q(q, "boolean", [], "control/ldl-goal-none", status="no-data", now=now)


# Commonly used adult reference ranges (no Observation in these records carries one): (low, high, margin).
RANGES = {K: (3.5, 5.0, 0.1), NA: (135, 145, 1.0), CR: None}


def g_normal(p, rng):
    """'is her potassium normal?' -> latest value inside the adult range (3.5-5.0 mmol/L; Na 135-145)."""
    now = p.now(rng)
    code = rng.choice([K, K, NA])
    vs = p.vals(code, now)
    if not vs or not no_tie(vs) or p.age(now) < 18:
        return None
    lo, hi, m = RANGES[code]
    v = vs[-1][1]
    hi2 = 5.3 if code == K else hi  # some labs run K to 5.1-5.3: skip values between
    if min(abs(v - lo), abs(v - hi)) < m or hi < v <= hi2:
        return None
    w = item_word(code, rng)
    q = pick(["is {p} {w} normal?", "{w} ok?", "was the last {w} in the normal range?", "{w} WNL?"]).format(p=p.p(), w=w)
    return Q(q, "boolean", [lo <= v <= hi], f"control/normal-{code}", [r_(vs[-1][2])], now=now)


def g_egfr_below(p, rng):
    """'is his eGFR under 60?' -> latest eGFR < 60 (the CKD cut-off), from values only."""
    now = p.now(rng)
    vs = p.vals(EGFR, now)
    if not vs or not no_tie(vs) or abs(vs[-1][1] - 60) < 1:
        return None
    q = pick(["is {p} eGFR below 60?", "GFR < 60 on the latest?", "does {p} latest eGFR put {o} under 60 (CKD range)?"]
             ).format(p=p.p(), o=p.o())
    return Q(q, "boolean", [vs[-1][1] < 60], "control/egfr-lt60", [r_(vs[-1][2])], now=now)


# ------------------------------------------------------------------------------------------------ dates
def _imms(p, key, now):
    return sorted([i for i in p.by["Immunization"] if T(i["occurrenceDateTime"]) <= now
                   and any(k in cname(i["vaccineCode"]).lower() for k in VAX[key])],
                  key=lambda i: T(i["occurrenceDateTime"]))


def g_last_test_date(p, rng):
    """'when was her last microalbumin?' -> the date of the latest value."""
    now = p.now(rng)
    code = rng.choice([MALB, A1C, LDL, CR, MALB])
    vs = p.vals(code, now)
    if not vs:
        return None
    name = {MALB: rng.choice(["microalbumin", "urine microalbumin", "UACR"]), A1C: rng.choice(["A1c", "hba1c"]),
            LDL: rng.choice(["lipid panel", "lipids", "fasting lipid panel"]), CR: rng.choice(["BMP", "creatinine"])}[code]
    q = pick(["when was {p} last {n}?", "date of last {n}", "last {n} done when?", "when did {s} last have a {n}?"]
             ).format(p=p.p(), n=name, s=p.s())
    return Q(q, "date", [vs[-1][0].date().isoformat()], f"dates/last-test-{code}", [r_(vs[-1][2])], now=now)


def g_colonoscopy(p, rng):
    """'last colonoscopy?' -> the date of the latest one; none on record -> no-data."""
    now = p.now(rng)
    if p.age(now) < 45:
        return None
    cs = sorted([x for x in p.by["Procedure"] if cname(x["code"]) == "Colonoscopy"
                 and T((x.get("performedPeriod") or {}).get("start") or x.get("performedDateTime")) <= now],
                key=lambda x: T((x.get("performedPeriod") or {}).get("start") or x.get("performedDateTime")))
    q = pick(["when was {p} last colonoscopy?", "last c-scope?", "date of last colonscopy", "colonoscopy - when was the last one?"]
             ).format(p=p.p())
    if not cs:
        if rng.random() < 0.5:
            return None
        return Q(q, "date", [], "dates/colonoscopy-none", status="no-data", now=now)
    x = cs[-1]
    t = T((x.get("performedPeriod") or {}).get("start") or x.get("performedDateTime"))
    return Q(q, "date", [t.date().isoformat()], "dates/colonoscopy", [r_(x)], now=now)


def g_vax_last(p, rng):
    """'when was the last flu shot?' / 'last tetanus?' -> the date of the latest one."""
    now = p.now(rng)
    key = rng.choice(["flu", "flu", "tetanus", "pneumo"])
    xs = _imms(p, key, now)
    if not xs:
        return None
    w = {"flu": ["flu shot", "flu vaccine", "influenza vaccine"], "tetanus": ["tetanus shot", "Td/Tdap", "tetanus booster"],
         "pneumo": ["pneumonia vaccine", "pneumococcal vaccine"]}[key]
    q = pick(["when was {p} last {w}?", "last {w} given when?", "date of the most recent {w}"]).format(
        p=p.p(), w=rng.choice(w))
    return Q(q, "date", [T(xs[-1]["occurrenceDateTime"]).date().isoformat()], f"dates/vax-{key}", [r_(xs[-1])], now=now)


def g_flu_due(p, rng):
    """'is she due for a flu shot?' -> no influenza vaccine since the latest 1 August at or before now."""
    now = p.now(rng)
    aug = datetime(now.year if now.month >= 8 else now.year - 1, 8, 1, tzinfo=UTC)
    xs = _imms(p, "flu", now)
    if abs(now - aug) < timedelta(days=20):
        return None
    due = not any(T(i["occurrenceDateTime"]) >= aug for i in xs)
    refs = [r_(i) for i in xs if T(i["occurrenceDateTime"]) >= aug]
    q = pick(["is {s} due for a flu shot?", "needs flu vaccine this season?", "flu shot due?",
              "has {s} had {p} flu shot this season?"]).format(s=p.s(), p=p.p())
    ans = due if "due" in q or "needs" in q else not due
    return Q(q, "boolean", [ans], "dates/flu-due", refs, now=now)


def g_tdap_due(p, rng):
    """'due for tdap?' -> no Td/Tdap/DTaP in the 10 years before now (skipped within 30 days of the 10 years)."""
    now = p.now(rng)
    xs = _imms(p, "tetanus", now)
    cut = add_months(now, -120)
    if any(abs(T(i["occurrenceDateTime"]) - cut) < timedelta(days=30) for i in xs):
        return None
    recent = [i for i in xs if T(i["occurrenceDateTime"]) >= cut]
    q = pick(["is {s} due for tdap?", "tetanus booster due?", "due for a Td booster?"]).format(s=p.s())
    return Q(q, "boolean", [not recent], "dates/tdap-due", [r_(i) for i in recent], now=now)


def g_pneumovax(p, rng):
    """'has he had pneumovax?' -> a PPSV23 (pneumococcal polysaccharide) vaccine on record before now."""
    now = p.now(rng)
    if p.age(now) < 60:
        return None
    xs = _imms(p, "ppsv23", now)
    q = pick(["has {s} had pneumovax?", "PPSV23 given?", "pneumovax 23 ever?"]).format(s=p.s())
    return Q(q, "boolean", [bool(xs)], "dates/ppsv23", [r_(i) for i in xs], now=now)


def _visits(p, now, cls=None):
    return [e for e in p.encs if T(e["period"]["start"]) <= now and (cls is None or e["class"]["code"] == cls)]


def g_last_seen(p, rng):
    """'when did she last see us?' -> the latest ambulatory visit (asked when the latest visit of any kind is one)."""
    now = p.now(rng)
    vs = _visits(p, now)
    if not vs or vs[-1]["class"]["code"] != "AMB":
        return None
    q = pick(["when did {s} last see us?", "last office visit?", "date of {p} last visit", "when was {s} last in clinic?"]
             ).format(s=p.s(), p=p.p())
    return Q(q, "date", [T(vs[-1]["period"]["start"]).date().isoformat()], "dates/last-visit", [r_(vs[-1])], now=now)


def g_last_physical(p, rng):
    """'last physical?' -> the latest check-up encounter."""
    now = p.now(rng)
    vs = [e for e in _visits(p, now) if cname(e["type"][0]) == CHECKUP]
    other = [e for e in _visits(p, now) if "check-up" in cname(e["type"][0]).lower()]
    if not vs or (other and T(other[-1]["period"]["start"]) > T(vs[-1]["period"]["start"])):
        return None  # a later "Encounter for 'check-up'" (a screening visit) would make "physical" ambiguous
    q = pick(["when was {p} last physical?", "last annual exam?", "last wellness visit date?"]).format(p=p.p())
    return Q(q, "date", [T(vs[-1]["period"]["start"]).date().isoformat()], "dates/last-physical", [r_(vs[-1])], now=now)


def g_dx_date(p, rng):
    """'when was her diabetes diagnosed?' -> the onset of the first such condition."""
    now = p.now(rng)
    word, spoken = rng.choice([("Hypertension", ["HTN", "hypertension", "high blood pressure"]),
                               ("Diabetes", ["diabetes", "DM2"]), ("Prediabetes", ["prediabetes", "pre-diabetes"]),
                               ("Hyperlipidemia", ["hyperlipidemia", "HLD", "high cholesterol"])])
    cs = sorted([c for c in p.conds(now) if cname(c["code"]) == word], key=lambda c: T(c["onsetDateTime"]))
    if not cs:
        return None
    q = pick(["when was {p} {w} diagnosed?", "{w} dx date?", "since when has {s} had {w}?"]).format(
        p=p.p(), w=rng.choice(spoken), s=p.s())
    return Q(q, "date", [T(cs[0]["onsetDateTime"]).date().isoformat()], f"dates/dx-{word}", [r_(cs[0])], now=now)


# ------------------------------------------------------------------------------------------------ counts
def _robust_count(items, now, months):
    def n(shift):
        start = add_months(now, -months) + timedelta(days=shift)
        return [x for x in items if start <= x[0] <= now]
    a, b, c = n(-7), n(0), n(7)
    return b if len(a) == len(b) == len(c) else None


def g_ed_count(p, rng):
    """'how many ED visits in the last year?' -> EMER encounters started in the window."""
    now = p.now(rng)
    months = rng.choice([12, 12, 24, 36])
    items = [(T(e["period"]["start"]), e) for e in p.encs if e["class"]["code"] == "EMER"]
    got = _robust_count(items, now, months)
    if got is None:
        return None
    span = {12: rng.choice(["in the last year", "past 12 months", "in the past yr"]),
            24: rng.choice(["in the last 2 years", "past 24 mo"]), 36: "in the past 3 years"}[months]
    q = pick(["how many ED visits {sp}?", "# ER visits {sp}", "any ER trips {sp} - how many?", "ED utilization {sp}?"]
             ).format(sp=span)
    return Q(q, "count", [len(got)], f"counts/ed-{months}", [r_(e) for _t, e in got], now=now)


def g_lab_count(p, rng):
    """'how many A1cs in the past 2 years?' -> values in the window."""
    now = p.now(rng)
    code = rng.choice([A1C, LDL, CR])
    months = rng.choice([24, 36])
    vs = robust_window(p, code, now, months)
    if vs is None:
        return None
    w = item_word(code, rng)
    q = pick(["how many {w}s in the past {n} years?", "# of {w} checks last {n} yrs", "how many times was {w} checked in the last {n} years"]
             ).format(w=w, n=months // 12)
    return Q(q, "count", [len(vs)], f"counts/lab-{code}-{months}", [r_(x[2]) for x in vs], now=now)


def g_visit_count_year(p, rng):
    """'# office visits this year' -> AMB encounters since 1 January of now's year."""
    now = p.now(rng)
    year = rng.choice([now.year, now.year - 1])
    this = year == now.year
    start, end = datetime(year, 1, 1, tzinfo=UTC), (now if this else datetime(year + 1, 1, 1, tzinfo=UTC))
    es = [e for e in p.encs if e["class"]["code"] == "AMB"]
    if any(abs(T(e["period"]["start"]) - start) < timedelta(days=2) or abs(T(e["period"]["start"]) - end) < timedelta(days=2)
           for e in es):
        return None
    got = [e for e in es if start <= T(e["period"]["start"]) < end]
    sp = rng.choice(["this year", "so far this year"]) if this else rng.choice([f"in {year}", f"during {year}"])
    q = pick(["how many office visits {sp}?", "# clinic visits {sp}", "outpatient visits {sp} - how many?"]).format(sp=sp)
    return Q(q, "count", [len(got)], "counts/amb-year", [r_(e) for e in got], now=now)


def g_flu_count(p, rng):
    """'how many flu shots since 2015?' -> influenza vaccines since 1 January of the year."""
    now = p.now(rng)
    year = now.year - rng.choice([3, 4, 5])
    xs = [i for i in _imms(p, "flu", now) if T(i["occurrenceDateTime"]) >= datetime(year, 1, 1, tzinfo=UTC)]
    if any(abs(T(i["occurrenceDateTime"]) - datetime(year, 1, 1, tzinfo=UTC)) < timedelta(days=2) for i in _imms(p, "flu", now)):
        return None
    q = pick(["how many flu shots has {s} had since {y}?", "# flu vaccines since {y}"]).format(s=p.s(), y=year)
    return Q(q, "count", [len(xs)], "counts/flu-since", [r_(i) for i in xs], now=now)


# ------------------------------------------------------------------------------------------------ meds
def _active(p):
    """Active orders (only asked at the 'late' now, after the last order, so the status is the status at now)."""
    return [m for m in p.meds() if m["status"] == "active"]


def mname(m):
    """A prescription's name as recorded."""
    return cname(m.get("medicationCodeableConcept"))


def g_bp_meds(p, rng):
    """"what's he on for BP?" -> the active antihypertensive orders (names, deduplicated)."""
    now = p.now(rng, ("late",))
    if now is None or not p.has_cond(now, "Hypertension"):
        return None
    ms = [m for m in _active(p) if any(k in mname(m).lower() for k in ANTIHTN)]
    q = pick(["what's {s} on for BP?", "current BP meds?", "what antihypertensives is {s} taking?",
              "BP regimen?"]).format(s=p.s())
    return Q(q, "list", sorted({mname(m) for m in ms}), "meds/bp-meds", [r_(m) for m in ms], now=now)


def g_on_statin(p, rng):
    """'is she on a statin?' -> an active statin order."""
    now = p.now(rng, ("late",))
    if now is None or p.age(now) < 40:
        return None
    ms = [m for m in _active(p) if any(k in mname(m).lower() for k in STATINS)]
    q = pick(["is {s} on a statin?", "on a statin currently?", "statin?", "is {s} taking a cholesterol med (statin)?"]
             ).format(s=p.s())
    return Q(q, "boolean", [bool(ms)], "meds/on-statin", [r_(m) for m in ms], now=now)


def g_dose(p, rng):
    """'simva dose?' -> the strength (mg) in the name of the drug's latest order."""
    now = p.now(rng, ("late",))
    if now is None:
        return None
    cands = {}
    for m in p.meds():
        n = mname(m).lower()
        for ing, words in (("simv", ["simvastatin", "simva", "Zocor", "simvastin"]),
                           ("hydrochlorothiazide", ["HCTZ", "hydrochlorothiazide", "hctz", "hydrochlorothiazde"])):
            if n.startswith(ing) and m["status"] == "active":
                cands[ing] = (m, words)
    if not cands:
        return None
    ing = rng.choice(sorted(cands))
    m, words = cands[ing]
    mg = re.search(r"([\d.]+)\s*MG", mname(m))
    if not mg:
        return None
    q = pick(["{w} dose?", "what dose of {w} is {s} on?", "current {w} dose (mg)?"]).format(w=rng.choice(words), s=p.s())
    return Q(q, "number", [float(mg.group(1))], f"meds/dose-{ing}", [r_(m)], now=now)


def g_started(p, rng):
    """'when was the HCTZ started?' -> the first order's authoredOn."""
    now = p.now(rng, ("late",))
    if now is None:
        return None
    firsts = {}
    for m in p.meds():
        n = mname(m).lower()
        for ing, words in (("simv", ["simvastatin", "the statin", "simva"]),
                           ("hydrochlorothiazide", ["HCTZ", "hydrochlorothiazide", "the water pill (HCTZ)"])):
            if n.startswith(ing) and ing not in firsts:
                firsts[ing] = (m, words)
    if not firsts:
        return None
    ing = rng.choice(sorted(firsts))
    m, words = firsts[ing]
    q = pick(["when was {w} started?", "when did {s} start {w}?", "{w} start date?"]).format(w=rng.choice(words), s=p.s())
    return Q(q, "date", [T(m["authoredOn"]).date().isoformat()], f"meds/start-{ing}", [r_(m)], now=now)


def g_med_list(p, rng):
    """'med list?' -> every active order (names, deduplicated)."""
    now = p.now(rng, ("late",))
    if now is None:
        return None
    ms = _active(p)
    q = pick(["current meds?", "what is {s} taking now?", "active med list", "what meds is {s} on?"]).format(s=p.s())
    return Q(q, "list", sorted({mname(m) for m in ms}), "meds/list", [r_(m) for m in ms], now=now)


def g_new_meds(p, rng):
    """'any new meds in the past year?' -> drugs whose first order falls in the last 12 months (renewals are no start)."""
    now = p.now(rng, ("late",))
    if now is None:
        return None
    first = {}
    for m in p.meds():
        first.setdefault(mname(m), m)
    items = [(T(m["authoredOn"]), m) for m in first.values()]
    got = _robust_count(items, now, 12)
    if got is None:
        return None
    q = pick(["which meds were started in the past year?", "new medications in the last 12 months?",
              "what meds were started in the last year?"])
    return Q(q, "list", sorted({mname(m) for _t, m in got}), "meds/new-year", [r_(m) for _t, m in got], now=now)


def g_absent_drug(p, rng):
    """'is she on metformin?' -> false (no one in these records was ever prescribed it); 'metformin dose?' -> no-data."""
    now = p.now(rng)
    if not (p.has_cond(now, "Diabetes") or p.has_cond(now, "Prediabetes") or p.has_cond(now, "Hypertension")
            or p.has_cond(now, "Hyperlipidemia")):
        return None
    drug, words = rng.choice(ABSENT_DRUGS)
    if drug in p.text:
        return None  # only drugs this patient's record never names
    w = rng.choice(words)
    if _TURN[0] % 3 == 2:
        q = rng.choice(["{w} dose?", "what dose of {w} is {s} on?"]).format(w=w, s=p.s())
        return Q(q, "number", [], f"absence/dose-{drug}", status="no-data", now=now)
    q = rng.choice(["is {s} on {w}?", "on {w}?", "has {s} ever been on {w}?"]).format(w=w, s=p.s())
    return Q(q, "boolean", [False], f"absence/on-{drug}", now=now)


# ------------------------------------------------------------------------------------------------ problems
def g_problem_list(p, rng):
    """'active problem list' -> the conditions active at now (onset ≤ now, no abatement or abated after now)."""
    now = p.now(rng)
    cs = p.active_conds(now)
    names = sorted({cname(c["code"]) for c in cs})
    if not names:
        return None
    q = pick(["active problem list", "what are {p} active problems?", "current dx list?", "problem list?"]).format(p=p.p())
    return Q(q, "list", names, "problems/active", [r_(c) for c in cs], now=now)


def g_new_dx_year(p, rng):
    """'any new diagnoses in the past year?' -> conditions with onset in the last 12 months."""
    now = p.now(rng)
    items = [(T(c["onsetDateTime"]), c) for c in p.conds(now)]
    got = _robust_count(items, now, 12)
    if got is None:
        return None
    q = pick(["what new diagnoses in the past year?", "new dx in the last 12 months?", "what's been diagnosed in the last year?"])
    return Q(q, "list", sorted({cname(c["code"]) for _t, c in got}), "problems/new-year", [r_(c) for _t, c in got],
             now=now)


def g_new_dx_since_physical(p, rng):
    """'any new diagnoses since her last physical?' -> onset after the latest check-up before now; asked only when
    nothing was diagnosed on that check-up's own day (so 'since' inclusive or exclusive agree)."""
    now = p.now(rng)
    vs = [e for e in _visits(p, now) if cname(e["type"][0]) == CHECKUP and T(e["period"]["start"]) < now - timedelta(days=1)]
    other = [e for e in _visits(p, now) if "check-up" in cname(e["type"][0]).lower()]
    if not vs or (other and T(other[-1]["period"]["start"]) > T(vs[-1]["period"]["start"])):
        return None
    t0 = T(vs[-1]["period"]["start"])
    cs = p.conds(now)
    if any(T(c["onsetDateTime"]).date() == t0.date() for c in cs):
        return None
    got = [c for c in cs if T(c["onsetDateTime"]) > t0]
    q = pick(["what new diagnoses since {p} last physical?", "new problems since the last annual?",
              "what was newly dx'd since {p} last check-up?"]).format(p=p.p())
    return Q(q, "list", sorted({cname(c["code"]) for c in got}), "problems/new-since-physical",
             [r_(c) for c in got] + [r_(vs[-1])], now=now)


def g_has_dx(p, rng):
    """'does she have diabetes?' -> a condition of that name active at now."""
    now = p.now(rng)
    word, spoken = rng.choice([("Hypertension", ["HTN", "hypertension"]), ("Diabetes", ["diabetes", "DM"]),
                               ("Prediabetes", ["prediabetes"]), ("Hyperlipidemia", ["hyperlipidemia", "HLD"]),
                               ("Body mass index 30+ - obesity (finding)", ["obesity"])])
    cs = [c for c in p.active_conds(now) if cname(c["code"]) == word]
    if word == "Diabetes" and not cs and p.has_cond(now, "Prediabetes"):
        return None  # 'diabetes?' of a prediabetic patient: a clinician may mean either; not asked
    if not cs and any(word.lower()[:6] in cname(c["code"]).lower() for c in p.conds(now)):
        return None  # resolved or a near name: not a clean no
    q = pick(["does {s} have {w}?", "{w} on the problem list?", "any hx of {w}?"]).format(s=p.s(), w=rng.choice(spoken))
    return Q(q, "boolean", [bool(cs)], f"problems/has-{word[:12]}", [r_(c) for c in cs], now=now)


# ------------------------------------------------------------------------------------------------ social
def g_smoking(p, rng):
    """'smoking status?' -> the latest tobacco smoking status."""
    now = p.now(rng)
    vs = p.vals(SMOKE, now)
    if not vs or not no_tie(vs):
        return None
    if _TURN[0] % 2:
        q = rng.choice(["does {s} smoke?", "current smoker?", "is {s} a smoker currently?"]).format(s=p.s())
        return Q(q, "boolean", [vs[-1][1].lower().startswith("current")], "social/smoker", [r_(vs[-1][2])], now=now)
    q = rng.choice(["smoking status?", "tobacco use?", "smoking hx - status?"])
    return Q(q, "string", [vs[-1][1]], "social/smoking-status", [r_(vs[-1][2])], now=now)


def g_allergies(p, rng):
    """'allergies?' -> the AllergyIntolerance names (none on record: an empty list)."""
    now = p.now(rng)
    al = [a for a in p.by["AllergyIntolerance"] if not a.get("recordedDate") or T(a["recordedDate"]) <= now]
    if len(al) != len(p.by["AllergyIntolerance"]):
        return None  # recorded after now: avoid the question
    q = pick(["allergies?", "which allergies are on file?", "what is {s} allergic to?", "list allergies (or NKDA)"]).format(s=p.s())
    return Q(q, "list", sorted({cname(a["code"]) for a in al}), "social/allergies", [r_(a) for a in al], now=now)


# ------------------------------------------------------------------------------------------------ absence
NEVER = [("eye", ["when was {p} last eye exam?", "last diabetic eye exam?", "last dilated retinal exam?",
                  "when was {p} last opthalmology exam?"]),
         ("foot", ["when was {p} last foot exam?", "last monofilament foot exam?", "diabetic foot exam - last done?"]),
         ("tsh", ["last TSH?", "what was {p} last TSH?"]),
         ("mammo", ["when was {p} last mammogram?", "last mammo?"]),
         ("psa", ["last PSA?"]),
         ("dexa", ["last DEXA T-score?"])]


def g_never(p, rng):
    """Things no record here (or not this patient's) holds: eye and foot exams, TSH, mammograms -> no-data."""
    now = p.now(rng)
    kind, forms = pick(NEVER)  # kinds take turns: a guarded kind passes its turn to the next patient
    if kind == "mammo" and not p.female:
        return None
    if kind == "psa" and (p.female or p.obs["2857-1"]):
        return None
    if kind == "dexa" and p.obs["38265-5"]:
        return None
    if kind in ("eye", "foot") and not (p.has_cond(now, "Diabetes") or p.has_cond(now, "Prediabetes")):
        return None
    q = rng.choice(forms).format(p=p.p())
    atype = "number" if kind in ("tsh", "psa", "dexa") else "date"
    return Q(q, atype, [], f"absence/never-{kind}", status="no-data", now=now)


def g_never_lab(p, rng):
    """'last microalbumin?' / 'last A1c?' for a patient who never had one (before now) -> no-data."""
    now = p.now(rng)
    code = rng.choice([MALB, A1C, MALB])
    if p.vals(code, now):
        return None
    w = item_word(code, rng)
    q = rng.choice(["last {w}?", "what was {p} most recent {w}?", "{w} result?"]).format(w=w, p=p.p())
    return Q(q, "number", [], f"absence/never-lab-{code}", status="no-data", now=now)


def g_eye_ever(p, rng):
    """'has she ever had a diabetic eye exam?' -> false (no such procedure in these records)."""
    now = p.now(rng)
    if not p.has_cond(now, "Diabetes"):
        return None
    q = rng.choice(["has {s} ever had a diabetic eye exam?", "retinal screening ever done?", "any foot exam on record?"]
                   ).format(s=p.s())
    return Q(q, "boolean", [False], "absence/eye-foot-ever", now=now)


# ------------------------------------------------------------------------------------------------ build
CATS = {
    "latest_value": [(g_latest, 20), (g_latest_bp, 5)],
    "series": [(g_last_two, 7), (g_last_n_sbp, 4), (g_values_window, 6), (g_trend, 10), (g_empty_window, 6)],
    "comparison": [(g_change_back, 10), (g_higher, 6), (g_change_since_year, 6)],
    "control": [(g_dm_control, 5), (g_a1c_goal, 4), (g_bp_control, 8), (g_normal, 6), (g_egfr_below, 3),
                (g_ldl_goal, 4)],
    "dates": [(g_last_test_date, 5), (g_colonoscopy, 4), (g_vax_last, 4), (g_flu_due, 4), (g_tdap_due, 3),
              (g_pneumovax, 2), (g_last_seen, 4), (g_last_physical, 3), (g_dx_date, 4)],
    "counts": [(g_ed_count, 7), (g_lab_count, 5), (g_visit_count_year, 4), (g_flu_count, 3)],
    "meds": [(g_bp_meds, 5), (g_on_statin, 5), (g_dose, 5), (g_started, 5), (g_med_list, 4), (g_new_meds, 3)],
    "problems": [(g_problem_list, 6), (g_new_dx_year, 5), (g_new_dx_since_physical, 4), (g_has_dx, 8)],
    "social": [(g_smoking, 8), (g_allergies, 5)],
    "absence": [(g_absent_drug, 10), (g_never, 10), (g_never_lab, 5), (g_eye_ever, 3)],
}


def load(data):
    """The adult chronic-disease patients of the Synthea set (with at least 4 BP readings)."""
    pats = []
    for f in sorted(glob.glob(os.path.join(data, "synthea-r4", "*.json"))):
        p = P(orjson.loads(open(f, "rb").read()))
        names = {cname(c["code"]) for c in p.by["Condition"]}
        if not any(k.lower() in n.lower() for n in names for k in CHRONIC) or len(p.obs[SBP]) < 4 or not p.nows:
            continue
        if min(p.age(t) for t in p.nows.values()) < 18:
            continue
        pats.append(p)
    return sorted(pats, key=lambda p: p.id)


ONE_SIDED = ("/ppsv23",)


def build(data):
    """Every question row, in category order."""
    pats = load(data)
    rows = []
    for cat, gl in CATS.items():
        got, seen = [], set()
        for gi, (g, quota) in enumerate(gl):
            rng0 = random.Random(f"probe_outpatient:{cat}:{gi}")  # noqa: S311 - seeded for reproducible draws
            order = pats[:]
            rng0.shuffle(order)
            n, by_answer, per_pat = 0, Counter(), Counter()
            for rnd in range(3):  # a patient may give a pattern a second question when the first round is short
                for p in order:
                    if n >= quota:
                        break
                    if per_pat[p.id] > rnd:
                        continue
                    rng = random.Random(f"{p.id}:{cat}:{gi}:{rnd}")  # noqa: S311 - seeded for reproducible draws
                    _TURN[0] = n
                    q = g(p, rng)
                    if q is None or q["now"] is None:
                        continue
                    ans = (q["expected_status"], json.dumps(q["expected"]))
                    trivial = q["expected_status"] == "no-data" and not q["template"].startswith(
                        ("absence/", "control/ldl", "series/empty"))
                    trivial = trivial or (q["answer_type"] == "count" and q["expected"] == [0]) or (
                        q["answer_type"] == "list" and q["expected"] == [])
                    limit = max(1, quota // 3) if trivial else quota
                    if q["answer_type"] == "boolean" and not q["template"].startswith("absence/") \
                            and not q["template"].endswith(ONE_SIDED):
                        limit = -(-2 * quota // 3)
                    if by_answer[ans] >= limit:
                        continue
                    key = (p.id, q["question"], q["now"])
                    if key in seen:
                        continue
                    seen.add(key)
                    by_answer[ans] += 1
                    per_pat[p.id] += 1
                    q["patient_id"] = p.id
                    got.append(q)
                    n += 1
        for i, q in enumerate(got, 1):
            rows.append({"id": f"{cat}-{i:03d}", "patient_id": q["patient_id"], "question": q["question"],
                         "now": q["now"].strftime("%Y-%m-%dT%H:%M:%SZ"), "category": cat,
                         "answer_type": q["answer_type"], "expected": q["expected"],
                         "expected_status": q["expected_status"], "tolerance": q["tolerance"],
                         "gold_refs": q["gold_refs"], "template": q["template"]})
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
          dict(Counter(r["answer_type"] for r in rows)),
          dict(Counter(str(r["expected"]) for r in rows if r["answer_type"] == "boolean")))


if __name__ == "__main__":
    main()
