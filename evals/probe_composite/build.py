"""Build the probe_composite question set: clinicians' questions that are more than one lookup.

Voices: a resident before a procedure ("pre-op: K, Cr, any anticoagulants?"), a ward nurse ("K? Cr? any abx?"),
a pharmacist (drug classes: nephrotoxic, QT-prolonging, sedating, NSAIDs; dose thresholds written in another unit;
allergies by name and by class), a PCP reading results ("any abnormal labs?", "were her last labs normal?", "which
labs were flagged?") and anyone asking two things at once ("when was her last A1c and what was it?", "when did she
last see a doctor and why?", "anything new in the last day?").

Reads the raw FHIR bundles of ``../shared/data/synthea-r4`` and ``examples/sample`` with orjson, resolves the
``urn:uuid:`` references itself and imports nothing from fhirqa. Every random choice comes from an RNG seeded by a
string, so the same data gives the same bytes.

Usage: python evals/probe_composite/build.py [--data DIR] [--sample DIR] [--check]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "questions.jsonl")
SAMPLE_NOW = "2026-06-30T12:00:00Z"

# Items by LOINC: Synthea's code first, then the sample's where it differs.
ITEMS = {
    "K": ["6298-4", "2823-3"], "Cr": ["38483-4", "2160-0"], "Na": ["2947-0", "2951-2"], "BUN": ["6299-2", "3094-0"],
    "glucose": ["2339-0", "2345-7"], "Hgb": ["718-7"], "A1c": ["4548-4"], "plt": ["777-3"], "LDL": ["18262-6"],
    "wt": ["29463-7"], "eGFR": ["33914-3", "98979-8"], "WBC": ["6690-2"], "Ca": ["49765-1", "17861-6"],
}
# How a clinician writes each item (shorthand, full, misspelt).
SAY = {
    "K": ["K", "K+", "potassium", "potasium"], "Cr": ["Cr", "creat", "creatinine", "creatinin"],
    "Na": ["Na", "sodium"], "BUN": ["BUN"], "glucose": ["glucose", "BG", "gluc"], "Hgb": ["Hgb", "Hb", "hemoglobin"],
    "A1c": ["A1c", "HbA1c", "a1c"], "plt": ["plt", "platelets", "plts"], "LDL": ["LDL"], "wt": ["wt", "weight"],
    "eGFR": ["eGFR", "GFR"], "WBC": ["WBC", "white count"], "Ca": ["Ca", "calcium"],
}

# Usual adult reference intervals used to judge Synthea results (which carry no range or flag). Each entry:
# (clearly normal low, clearly normal high, abnormal below, abnormal above). A value between the two bounds on
# either side lies where common laboratory intervals disagree: a day holding one is never asked.
RANGES = {
    "2947-0": (136, 145, 135, 146), "6298-4": (3.5, 5.0, 3.4, 5.3), "2069-3": (98, 106, 96, 110),
    "20565-8": (23, 29, 20, 32), "6299-2": (8, 20, 6, 24), "38483-4": (0.7, 1.0, 0.5, 1.35),
    "49765-1": (8.6, 10.2, 8.4, 10.5), "2339-0": (70, 99, 65, 140), "4548-4": (4.0, 5.6, 3.5, 6.5),
    "2093-3": (0, 199, -1, 240), "18262-6": (0, 99, -1, 160), "2571-8": (0, 149, -1, 200), "2085-9": (40, 999, 35, 9999),
    "33914-3": (90, 999, 60, 9999), "6690-2": (4.5, 10.5, 3.5, 11.5), "777-3": (150, 400, 140, 450),
    "14959-1": (0, 29, -1, 30),
}
HGB_RANGES = {"female": (12.0, 15.5, 11.5, 16.0), "male": (13.5, 17.5, 13.0, 18.0)}

# Drug classes, by lower-case name fragments of the record's drug names.
STATIN = ("simvastatin", "simvistatin", "atorvastatin", "rosuvastatin", "pravastatin", "lovastatin", "zocor")
NSAID = ("ibuprofen", "naproxen", "advil", "motrin", "aleve", "ketorolac", "meloxicam", "diclofenac", "celecoxib")
ANTICOAG = ("warfarin", "heparin", "enoxaparin", "apixaban", "rivaroxaban", "dabigatran", "coumadin")
ANTITHROMB = ANTICOAG + ("clopidogrel", "aspirin", "alteplase", "plavix", "ticagrelor", "prasugrel")
SEDATIVE = ("clonazepam", "diazepam", "lorazepam", "alprazolam", "midazolam", "propofol", "dexmedetomidine",
            "ketamine", "zolpidem", "klonopin", "valium")
QT_KNOWN = ("donepezil", "aricept", "citalopram", "escitalopram", "amiodarone", "azithromycin", "ondansetron",
            "haloperidol", "methadone", "sotalol", "levofloxacin", "ciprofloxacin", "moxifloxacin", "fluconazole")
NEPHROTOX = NSAID + ("vancomycin", "gentamicin", "tobramycin", "amikacin", "amphotericin", "cisplatin", "lithium",
                     "tacrolimus", "cyclosporine")
ANTIBIOTIC = ("vancomycin", "piperacillin", "zosyn", "ceftriaxone", "cefuroxime", "cephalexin", "amoxicillin",
              "penicillin", "nitrofurantoin", "azithromycin", "ciprofloxacin", "doxycycline")
# Active drugs that no common list would put in the class asked: a patient whose active drugs all lie here is a
# clear "No". Anything else (diuretics, ACE inhibitors, antihistamines, opioids, chemotherapy…) keeps them out.
BENIGN = ("simvistatin", "simvastatin", "atorvastatin", "vitamin b 12", "errin", "kyleena", "yaz", "seasonique",
          "trinessa", "nuvaring", "liletta", "jolivette", "camila", "fluticasone", "levothyroxine", "ferrous sulfate",
          "hydrocortisone", "amlodipine", "nicotine", "albuterol", "zocor", "fexofenadine", "cetirizine")


def seeded(key: str) -> random.Random:
    """An RNG seeded by a string: the same data always gives the same draws (never hash() or the clock)."""
    return random.Random(key)  # noqa: S311 - seeded for reproducible draws, not for secrecy


def parse_time(text: str | None) -> datetime | None:
    """An ISO instant (a date alone is midnight UTC)."""
    if not text:
        return None
    if len(text) == 10:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(dt: datetime) -> str:
    """``2020-01-02T12:00:00Z``."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cc_name(cc: dict | None) -> str | None:
    """code.text, else the first coding display."""
    if not cc:
        return None
    return cc.get("text") or next((c.get("display") for c in cc.get("coding", []) if c.get("display")), None)


class Patient:
    """One patient's resources, references resolved."""

    def __init__(self, path: str, source: str):
        bundle = orjson.loads(open(path, "rb").read())
        self.source = source
        self.by_url = {e.get("fullUrl"): e["resource"] for e in bundle.get("entry", [])}
        res = [e["resource"] for e in bundle.get("entry", [])]
        self.pt = next(r for r in res if r["resourceType"] == "Patient")
        self.id = self.pt["id"]
        self.sex = self.pt.get("gender")
        self.first = self.pt.get("name", [{}])[0].get("given", ["?"])[0].rstrip("0123456789")
        self.he = "she" if self.sex == "female" else "he"
        self.her = "her" if self.sex == "female" else "his"
        self.dead = bool(self.pt.get("deceasedDateTime"))
        self.by_type: dict[str, list[dict]] = defaultdict(list)
        for r in res:
            self.by_type[r["resourceType"]].append(r)
        self.obs = []  # (time, code, value, unit, name, ref, resource)
        for o in self.by_type["Observation"]:
            t = parse_time(o.get("effectiveDateTime") or o.get("effectivePeriod", {}).get("start") or o.get("issued"))
            vq = o.get("valueQuantity") or {}
            cat = [c.get("code") for k in o.get("category", []) for c in k.get("coding", [])]
            if t is None or ("value" not in vq and "laboratory" not in cat):
                continue  # a lab charted as text or a code is kept (value None): it is one of the day's results
            code = o["code"]["coding"][0]["code"]
            value = float(vq["value"]) if "value" in vq else None
            self.obs.append((t, code, value, vq.get("unit"), cc_name(o["code"]),
                             f"Observation/{o['id']}", o, "laboratory" in cat))
        self.obs.sort(key=lambda x: x[0])
        self.last_fact = max(self._times())

    def _times(self):
        for r in self.by_type["Observation"]:
            t = parse_time(r.get("effectiveDateTime") or r.get("issued"))
            if t:
                yield t
        for r in self.by_type["Procedure"]:
            if r.get("performedPeriod"):
                yield parse_time(r["performedPeriod"]["start"])
        for r in self.by_type["Encounter"]:
            yield parse_time(r["period"]["start"])
            if r["period"].get("end"):
                yield parse_time(r["period"]["end"])
        for k, f in (("MedicationRequest", "authoredOn"), ("Immunization", "occurrenceDateTime"),
                     ("Condition", "onsetDateTime"), ("DiagnosticReport", "effectiveDateTime"),
                     ("Procedure", "performedDateTime")):
            for r in self.by_type[k]:
                if r.get(f):
                    yield parse_time(r[f])

    def med_name(self, r: dict) -> str:
        """A drug's name as recorded (through medicationReference when there)."""
        if "medicationCodeableConcept" in r:
            return cc_name(r["medicationCodeableConcept"]) or ""
        ref = r.get("medicationReference", {})
        med = self.by_url.get(ref.get("reference"))
        return (cc_name(med.get("code")) if med else None) or ref.get("display", "")

    def active_meds(self) -> list[tuple[str, str]]:
        """(name, ref) of MedicationRequests with status active (read at a now after the last fact)."""
        return [(self.med_name(r), f"MedicationRequest/{r['id']}") for r in self.by_type["MedicationRequest"]
                if r.get("status") == "active"]

    def values(self, item: str, now: datetime):
        codes = ITEMS[item]
        return [o for o in self.obs if o[1] in codes and o[0] <= now and o[2] is not None]

    def latest(self, item: str, now: datetime):
        """The latest value at now, or None (also None when two different values tie at that time)."""
        vals = self.values(item, now)
        if not vals:
            return None
        last = [o for o in vals if o[0] == vals[-1][0]]
        if len({round(o[2], 4) for o in last}) > 1:
            return None
        return vals[-1]

    def admins(self, now: datetime):
        """(time, name, dose value, dose unit, ref) of completed MedicationAdministrations at or before now."""
        out = []
        for r in self.by_type["MedicationAdministration"]:
            if r.get("status") != "completed":
                continue
            t = parse_time(r.get("effectiveDateTime") or r.get("effectivePeriod", {}).get("start"))
            if t and t <= now:
                d = r.get("dosage", {}).get("dose", {})
                out.append((t, self.med_name(r), d.get("value"), d.get("unit"), f"MedicationAdministration/{r['id']}"))
        return sorted(out, key=lambda x: x[0])


def age(p: Patient, now: datetime) -> int:
    """Completed years at now."""
    bd = datetime.fromisoformat(p.pt["birthDate"]).date()
    d = now.date()
    return d.year - bd.year - ((d.month, d.day) < (bd.month, bd.day))


def has(name: str, frags) -> bool:
    low = name.lower()
    return any(f in low for f in frags)


def r2(x: float) -> float:
    return round(x, 2)


def late_now(p: Patient) -> datetime:
    rng = seeded(f"{p.id}/now")
    t = p.last_fact + timedelta(days=rng.randint(3, 21))
    if t.day > 28:
        t = t + timedelta(days=32 - t.day)
    return t.replace(hour=12, minute=0, second=0, microsecond=0)


def quiet(p: Patient) -> bool:
    """Nothing is charted in the 8 days before the late now (so "this week", "the last 48 hours", "since
    yesterday" and "overnight" hold no record at all)."""
    return p.last_fact < late_now(p) - timedelta(days=8)


class Builder:
    """Collects questions per category."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, cat, p, q, now, atype, expected, refs, template, status="answered", tol=0.0):
        self.rows.append({"id": "", "patient_id": p.id, "question": q, "now": iso(now), "category": cat,
                          "answer_type": atype, "expected": expected if status == "answered" else [],
                          "expected_status": status, "tolerance": tol, "gold_refs": sorted(set(refs)),
                          "template": template})


def pick(rng: random.Random, seq):
    """One element, drawn by a seeded RNG."""
    return seq[rng.randrange(len(seq))]


# ---------------------------------------------------------------- checklist: several questions in one

VALUE_FORMS = [
    "{a}? {b}?", "last {a} and {b}", "{a}, {b} pls", "pre-op check: {a}, {b}", "quick one - latest {a} and {b}?",
    "most recent {a} & {b}",
]
MIXED_FORMS = [
    "{a}? {b}? {c}", "pre-op: last {a} and {b}, {c}", "{a}; {b}; {c}", "before the procedure - {a}, {b} and {c}",
    "need {a} + {b}, also {c}",
]
YESNO_PARTS = {
    "statin": (["on a statin?", "is {he} on a statin?", "any statin?"], STATIN),
    "nsaid": (["any NSAIDs?", "on any nsaids?", "taking any NSAIDs?"], NSAID),
    "anticoag": (["any anticoagulants?", "on any anticoagulation?", "any anticoagulant meds?"], ANTICOAG),
}


def yesno_part(p: Patient, key: str):
    """Whether the patient is on a member of the class now (active orders), or None where the gold would be a
    judgement (anticoagulants asked of a patient on an antiplatelet, say)."""
    act = p.active_meds()
    frags = YESNO_PARTS[key][1]
    hits = [(n, r) for n, r in act if has(n, frags)]
    if key == "anticoag" and not hits and any(has(n, ANTITHROMB) for n, _ in act):
        return None
    if key == "nsaid" and any("aspirin" in n.lower() for n, _ in act):
        return None
    return bool(hits), [r for _, r in hits]


def checklist(b: Builder, pts: list[Patient]):
    for p in pts:
        now = SAMPLE_NOW_DT if p.source == "sample" else late_now(p)
        if age(p, now) < 18:
            continue  # a pre-op checklist in the adult voice
        rng = seeded(f"{p.id}/checklist")
        avail = [i for i in ("K", "Cr", "Na", "BUN", "glucose", "Hgb", "A1c", "plt", "eGFR", "wt", "Ca")
                 if p.latest(i, now)]
        if len(avail) < 2:
            continue
        for rnd in range(2 if p.source == "synthea" else 4):
            a, bb = rng.sample(avail, 2)
            va, vb = p.latest(a, now), p.latest(bb, now)
            if abs(va[2] - vb[2]) <= 0.02 * max(abs(va[2]), abs(vb[2])):
                continue  # two near-equal numbers could be matched by one
            if rnd % 2 == 0:
                q = pick(rng, VALUE_FORMS).format(a=pick(rng, SAY[a]), b=pick(rng, SAY[bb]))
                b.add("checklist", p, q, now, "list", [r2(va[2]), r2(vb[2])], [va[5], vb[5]],
                      f"checklist/values-{a}-{bb}", tol=0.01)
            elif not p.dead:
                key = pick(rng, sorted(YESNO_PARTS))
                yn = yesno_part(p, key)
                if yn is None:
                    continue
                c = pick(rng, YESNO_PARTS[key][0]).format(he=p.he)
                q = pick(rng, MIXED_FORMS).format(a=pick(rng, SAY[a]), b=pick(rng, SAY[bb]), c=c)
                b.add("checklist", p, q, now, "list", [r2(va[2]), r2(vb[2]), yn[0]], [va[5], vb[5], *yn[1]],
                      f"checklist/mixed-{key}-{'yes' if yn[0] else 'no'}", tol=0.01)
        # allergies as one part: only when some allergy is on file (an empty part has no value to score)
        alg = [(cc_name(r["code"]), f"AllergyIntolerance/{r['id']}") for r in p.by_type["AllergyIntolerance"]]
        k = p.latest("K", now)
        if alg and k and rng.random() < 0.6:
            q = pick(rng, ["pre-op: last K, allergies?", "K? allergies?", "allergies + latest potassium pls"])
            b.add("checklist", p, q, now, "list", [r2(k[2])] + sorted({n for n, _ in alg}),
                  [k[5]] + [r for _, r in alg], "checklist/K-allergies", tol=0.01)
    # no-data: neither part is ever charted for the patient (magnesium and phosphorus in Synthea)
    for p in pts:
        if p.source != "synthea":
            continue
        rng = seeded(f"{p.id}/checklist-nodata")
        if rng.random() < 0.08:
            q = pick(rng, ["Mg? phos?", "last mag and phos", "magnesium, phosphorus?"])
            b.add("checklist", p, q, late_now(p), "list", [], [], "checklist/nodata-mg-phos", status="no-data")


# ---------------------------------------------------------------- abnormal: judgements over a kind of results

ABN_YESNO = ["any abnormal labs?", "anything abnormal on {her} last labs?", "labs ok?", "were {her} last labs normal?",
             "any labs out of range on the last draw?", "anythng abnormal in the latest bloodwork?"]
ABN_LIST = ["which labs were flagged?", "which labs were abnormal last time?", "what was off on {her} last labs?",
            "abnormal results on the most recent labs - which ones?"]


def judge(p: Patient, o) -> bool | None:
    """True abnormal, False normal, None where common intervals disagree or no interval is stated."""
    if p.source == "sample":
        flags = {c.get("code") for i in o[6].get("interpretation", []) for c in i.get("coding", [])}
        if not flags:
            # an unflagged coded result: a culture with no growth is normal; anything else (a positive urine
            # strip, say) would be the gold's own judgement, so its window is not asked
            text = (o[6].get("valueString") or cc_name(o[6].get("valueCodeableConcept")) or "").lower()
            return False if ("no growth" in text or text == "negative") else None
        return bool(flags - {"N"})
    rng = HGB_RANGES.get(p.sex) if o[1] == "718-7" else RANGES.get(o[1])
    if rng is None:
        return None
    lo, hi, ab_lo, ab_hi = rng
    v = o[2]
    if v is None:
        return None
    if lo <= v <= hi:
        return False
    if v < ab_lo or v > ab_hi:
        return True
    return None


def lab_day(p: Patient, now: datetime):
    """The lab results of the latest local day holding any, at or before now."""
    labs = [o for o in p.obs if o[7] and o[0] <= now]
    if not labs:
        return []
    day = labs[-1][0].date()  # Synthea writes +00:00, the sample one offset per patient: the day as written
    return [o for o in labs if o[0].date() == day]


def abnormal_nows(p: Patient) -> list[datetime]:
    """The moments a result question is asked: the sample's now; for Synthea the late now and, for up to two
    earlier lab days, noon UTC of the next day (so that day is the latest with lab results)."""
    if p.source == "sample":
        return [SAMPLE_NOW_DT]
    days = sorted({o[0].date() for o in p.obs if o[7]})
    rng = seeded(f"{p.id}/abnormal-days")
    earlier = rng.sample(days[:-1], min(2, len(days) - 1)) if len(days) > 1 else []
    nows = [datetime(d.year, d.month, d.day, 12, tzinfo=UTC) + timedelta(days=1) for d in sorted(earlier)]
    return nows + [late_now(p)]


def abnormal_day(b: Builder, p: Patient, now: datetime):
    """Questions over the latest day of lab results at now, when every result of it is clearly judged."""
    rng = seeded(f"{p.id}/abnormal/{iso(now)}")
    day = lab_day(p, now)
    verdicts = [judge(p, o) for o in day]
    if not day or any(v is None for v in verdicts):
        return
    if len({o[1] for o in day}) != len(day):
        return  # one result per test on the day (a repeat would make the list ambiguous)
    bad = [o for o, v in zip(day, verdicts, strict=True) if v]
    refs = [o[5] for o in day]
    for i in range(1 if p.source == "synthea" else 3):
        if rng.random() < 0.6 or not bad or p.source == "sample" and i == 0:
            form = pick(rng, ABN_YESNO)
            normal_q = "labs normal" in form or "ok?" in form
            gold = (not bad) if normal_q else bool(bad)
            b.add("abnormal", p, form.format(her=p.her), now, "boolean", [gold], refs,
                  f"abnormal/{'normal' if normal_q else 'any'}-{'yes' if gold else 'no'}")
        else:
            b.add("abnormal", p, pick(rng, ABN_LIST).format(her=p.her), now, "list", sorted({o[4] for o in bad}),
                  [o[5] for o in bad], "abnormal/which")


def abnormal(b: Builder, pts: list[Patient]):
    for p in pts:
        for now in abnormal_nows(p):
            abnormal_day(b, p, now)
    # a window that holds no results at all: no-data
    for p in pts:
        if p.source != "synthea":
            continue
        rng = seeded(f"{p.id}/abnormal-empty")
        if rng.random() < 0.15 and quiet(p):
            q = pick(rng, ["any abnormal labs in the last 48 hours?", "abnormal labs this week?",
                           "anything flagged on labs since yesterday?"])
            b.add("abnormal", p, q, late_now(p), "boolean", [], [], "abnormal/empty-window", status="no-data")
    # the sample's stays: flagged results since admission, asked on a day of the stay
    for p in pts:
        if p.source != "sample":
            continue
        for enc in p.by_type["Encounter"]:
            if enc["class"]["code"] != "IMP":
                continue
            start, end = parse_time(enc["period"]["start"]), parse_time(enc["period"]["end"])
            now = (start + timedelta(days=1)).astimezone(UTC).replace(hour=18, minute=0, second=0)
            if now >= end:
                now = end - timedelta(hours=1)
            win = [o for o in p.obs if o[7] and start <= o[0] <= now]
            verdicts = [judge(p, o) for o in win]
            if not win or any(v is None for v in verdicts):
                continue
            bad = [o for o, v in zip(win, verdicts, strict=True) if v]
            rng = seeded(f"{p.id}/abnormal-stay")
            b.add("abnormal", p, pick(rng, ["any abnormal labs since admission?", "abnl labs this admit?"]), now,
                  "boolean", [bool(bad)], [o[5] for o in win], "abnormal/stay-any")
            if bad:
                b.add("abnormal", p, pick(rng, ["which labs have been flagged since admit?",
                                                "what labs were abnormal this admission?"]), now, "list",
                      sorted({o[4] for o in bad}), [o[5] for o in bad], "abnormal/stay-which")


# ---------------------------------------------------------------- drug classes and allergies

CLASS_QS = {
    "nephrotox": (["is {he} on anything nephrotoxic?", "any nephrotoxins?", "nephrotoxic meds?",
                   "any nephrotoxic drugs on {her} list?"], NEPHROTOX),
    "qt": (["any QT-prolonging meds?", "is {he} on anything that prolongs the QT?", "QT prolonging drugs?"],
           QT_KNOWN),
    "sedative": (["any sedatives?", "is {he} on anything sedating like a benzo?", "on any benzos?"], SEDATIVE),
    "statin": (["statin?", "is {he} on a statin", "any statn?"], STATIN),
    "nsaid": (["on any NSAIDs?", "NSAID use?", "is {he} taking an nsaid"], NSAID),
    "anticoag": (["anticoagulated?", "is {he} on a blood thinner like warfarin?", "any anticoagulant?"], ANTICOAG),
}
# Active drugs that make a "No" a judgement for the class (kept out of that class's "No" questions).
UNSURE = {
    "nephrotox": ("hydrochlorothiazide", "lasix", "furosemide", "metformin", "digoxin", "oxaliplatin", "docetaxel",
                  "leucovorin", "alendronic", "carbamazepine", "lisinopril", "captopril", "acetaminophen"),
    "qt": ("hydrochlorothiazide", "lasix", "furosemide", "galantamine", "sertraline", "diphenhydramine",
           "chlorpheniramine", "loratadine", "memantine", "oxaliplatin", "docetaxel", "leuprolide", "hydrocodone",
           "oxycodone", "epinephrine", "carbamazepine", "digoxin", "verapamil"),
    "sedative": ("diphenhydramine", "chlorpheniramine", "hydrocodone", "oxycodone", "carbamazepine", "memantine",
                 "galantamine", "donepezil", "sertraline", "meperidine"),
    "statin": (), "nsaid": ("aspirin",), "anticoag": ANTITHROMB,
}


def drug_class(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.dead:
            continue
        now = SAMPLE_NOW_DT if p.source == "sample" else late_now(p)
        rng = seeded(f"{p.id}/class")
        act = p.active_meds()
        for key in sorted(CLASS_QS):
            forms, frags = CLASS_QS[key]
            hits = [(n, r) for n, r in act if has(n, frags)]
            if not hits:
                if any(has(n, UNSURE[key]) and not has(n, frags) for n, _ in act):
                    continue
                if not all(has(n, BENIGN) for n, _ in act) and key not in ("statin", "anticoag"):
                    continue
                if key == "anticoag" and any(has(n, ANTITHROMB) for n, _ in act):
                    continue
                if rng.random() > (0.08 if act else 0.03):
                    continue
            q = pick(rng, forms).format(he=p.he, her=p.her)
            b.add("drug_class", p, q, now, "boolean", [bool(hits)], [r for _, r in hits],
                  f"drug_class/{key}-{'yes' if hits else 'no'}")
    # the sample's stays, asked on a day of the stay: drugs given in the last 24 hours
    stay_qs = {"abx": (["any abx?", "on abx?", "is {he} getting antibiotics?"], ANTIBIOTIC),
               "nephrotox": (["any nephrotoxins?", "nephrotoxic meds on board?"], NEPHROTOX),
               "sedative": (["sedation?", "any sedatives running?"], SEDATIVE)}
    for p in pts:
        if p.source != "sample":
            continue
        for enc in p.by_type["Encounter"]:
            if enc["class"]["code"] != "IMP":
                continue
            start = parse_time(enc["period"]["start"])
            now = (start + timedelta(days=1)).astimezone(UTC).replace(hour=18, minute=0, second=0)
            given = [a for a in p.admins(now) if now - timedelta(hours=24) <= a[0]]
            rng = seeded(f"{p.id}/class-stay")
            for key in sorted(stay_qs):
                forms, frags = stay_qs[key]
                hits = [a for a in given if has(a[1], frags)]
                # 'No' only when the drug was never given in the stay either (no 'recent' window question)
                if not hits and any(has(a[1], frags) for a in p.admins(now)):
                    continue
                b.add("drug_class", p, pick(rng, forms).format(he=p.he), now, "boolean", [bool(hits)],
                      [a[4] for a in hits], f"drug_class/stay-{key}-{'yes' if hits else 'no'}")


ALG_ASK = {
    # asked drug -> fragments of a recorded allergy that make it a Yes (the drug itself, or its class)
    "amoxicillin": ("amoxicillin", "penicillin"), "penicillin": ("penicillin", "amoxicillin"),
    "sulfa": ("sulfa", "sulfamethoxazole"), "codeine": ("codeine",), "lisinopril": ("lisinopril",),
    "enalapril": ("enalapril", "lisinopril", "ace inhibitor"), "peanuts": ("peanut",), "latex": ("latex",),
    "shellfish": ("shellfish",), "bee stings": ("bee venom",), "eggs": ("eggs",),
}
ALG_FORMS = ["is {he} allergic to {x}?", "{x} allergy?", "any allergy to {x}", "ok to give {x}? any allergy to it?"]


def allergies(b: Builder, pts: list[Patient]):
    for p in pts:
        now = SAMPLE_NOW_DT if p.source == "sample" else late_now(p)
        alg = [(cc_name(r["code"]) or "", f"AllergyIntolerance/{r['id']}", r) for r in p.by_type["AllergyIntolerance"]]
        rng = seeded(f"{p.id}/allergy")
        names = " | ".join(n.lower() for n, _, _ in alg)
        for x in sorted(ALG_ASK):
            hits = [(n, r) for n, r, _ in alg if has(n, ALG_ASK[x])]
            drug = x in ("amoxicillin", "penicillin", "sulfa", "codeine", "lisinopril", "enalapril")
            food_words = x in ("peanuts", "eggs") and "nut" in names and not hits
            if food_words:
                continue  # "Allergy to nut" against peanuts is a judgement
            if x == "eggs" and not hits:
                continue
            if not hits and rng.random() > (0.06 if drug else 0.0):
                continue
            if hits and p.source == "synthea" and rng.random() > 0.5:
                continue
            form = pick(rng, ALG_FORMS[:3] if not drug else ALG_FORMS)
            q = form.format(he=p.he, x=x)
            b.add("allergy", p, q, now, "boolean", [bool(hits)], [r for _, r in hits],
                  f"allergy/{x}-{'yes' if hits else 'no'}")
        drug_alg = [(n, r) for n, r, res in alg if "medication" in res.get("category", [])]
        if rng.random() < (1.0 if p.source == "sample" else 0.12):
            q = pick(rng, ["any drug allergies?", "med allergies?", "NKDA?"])
            val = bool(drug_alg) if q != "NKDA?" else not drug_alg
            b.add("allergy", p, q, now, "boolean", [val], [r for _, r in drug_alg], f"allergy/drug-any-{val}")


# ---------------------------------------------------------------- thresholds in another unit

def thresholds(b: Builder, pts: list[Patient]):
    for p in pts:
        rng = seeded(f"{p.id}/threshold")
        if p.source == "sample":
            now = SAMPLE_NOW_DT
            doses = defaultdict(list)
            for a in p.admins(now):
                doses[a[1]].append(a)
            spoken = {"vancomycin": ["vanc", "vanco"], "piperacillin": ["zosyn", "pip-tazo"], "heparin": ["heparin", "hep"],
                      "ceftriaxone": ["ceftriaxone"], "acetaminophen": ["tylenol", "acetaminophen"]}
            for name, ads in sorted(doses.items()):
                key = next((k for k in spoken if k in name.lower()), None)
                if key is None:
                    continue
                vals = [(a[2], a[3]) for a in ads]
                unit = vals[0][1]
                if any(u != unit for _, u in vals):
                    continue
                top = max(v for v, _ in vals)
                # thresholds in the other unit of mass (g <-> mg), or in units: one below and one above the largest
                # dose, never within 10 % of it
                grid = {"mg": ([0.25, 0.5, 0.8, 1.2, 1.5, 2, 3], "g", 1000), "g": ([2000, 4000, 5000, 6000], "mg", 0.001),
                        "units": ([2500, 7500, 10000], "units", 1)}.get(unit)
                if grid is None:
                    continue
                steps, u, per = grid
                below = [t for t in steps if t * per < top * 0.9]
                above = [t for t in steps if t * per > top * 1.1]
                for thr in ([below[-1]] if below else []) + ([above[0]] if above else []):
                    over = top > thr * per
                    thr_s = f"{thr:,}" if u == "units" else f"{thr:g}"
                    q = pick(rng, ["any {d} dose over {t} {u}?", "was a single {d} dose ever > {t} {u}?",
                                   "{d} doses above {t} {u} at any point?"]).format(d=pick(rng, spoken[key]), t=thr_s, u=u)
                    b.add("threshold", p, q, now, "boolean", [over], [a[4] for a in ads],
                          f"threshold/dose-{key}-{'yes' if over else 'no'}")
            temps = [o for o in p.obs if o[1] == "8310-5" and o[0] <= now]
            if temps:
                tmax = max(o[2] for o in temps)
                tf = tmax * 9 / 5 + 32
                grid = [99.5, 100.4, 101, 101.5, 102, 103, 104]
                below = [t for t in grid if t < tf - 0.3]
                above = [t for t in grid if t > tf + 0.3]
                for thr in ([below[-1]] if below else []) + ([above[0]] if above else []):
                    q = pick(rng, ["temp ever over {t} F?", "ever febrile above {t}F?", "any temp > {t} °F on record?"])
                    b.add("threshold", p, q.format(t=thr), now, "boolean", [tf > thr], [o[5] for o in temps],
                          f"threshold/temp-F-{'yes' if tf > thr else 'no'}")
        else:
            now = late_now(p)
            if p.dead or age(p, now) < 18 or rng.random() > 0.3:
                continue
            wts = [o for o in p.obs if o[1] == "29463-7" and o[0] <= now]
            if len(wts) < 2:
                continue
            top_lb = max(o[2] for o in wts) * 2.2046226218
            thr = int(round(top_lb + pick(rng, [-12, -6, 6, 12]), -0))
            if abs(top_lb - thr) < 2:
                continue
            q = pick(rng, ["wt ever over {t} lb?", "has {he} ever weighed more than {t} lbs?", "weight > {t} lb at any point?"])
            b.add("threshold", p, q.format(t=thr, he=p.he), now, "boolean", [top_lb > thr], [o[5] for o in wts],
                  f"threshold/weight-lb-{'yes' if top_lb > thr else 'no'}")


# ---------------------------------------------------------------- two parts: when and what

def two_part(b: Builder, pts: list[Patient]):
    for p in pts:
        now = SAMPLE_NOW_DT if p.source == "sample" else late_now(p)
        rng = seeded(f"{p.id}/twopart")
        items = [i for i in ("A1c", "LDL", "Cr", "K", "Hgb", "eGFR") if p.latest(i, now)]
        if items and rng.random() < (0.3 if p.source == "synthea" else 1.0):
            i = pick(rng, items)
            o = p.latest(i, now)
            q = pick(rng, ["when was {her} last {x} and what was it?", "last {x} - when, and the value?",
                           "date and result of the most recent {x}?", "when was {x} last checked, what did it show"])
            q = q.format(her=p.her, he=p.he, x=pick(rng, SAY[i]))
            b.add("two_part", p, q, now, "list", [o[0].astimezone(UTC).date().isoformat(), r2(o[2])], [o[5]],
                  f"two_part/when-what-{i}", tol=0.01)
        elif p.source == "synthea" and not p.values("A1c", now) and rng.random() < 0.5:
            q = pick(rng, ["when was {her} last A1c and what was it?", "last a1c: date + value?"]).format(her=p.her)
            b.add("two_part", p, q, now, "list", [], [], "two_part/when-what-none", status="no-data")
        # the latest visit and its reason, asked only when that visit records one
        encs = sorted((e for e in p.by_type["Encounter"] if parse_time(e["period"]["start"]) <= now),
                      key=lambda e: parse_time(e["period"]["start"]))
        if encs and rng.random() < (0.35 if p.source == "synthea" else 1.0):
            last = encs[-1]
            if len(encs) > 1 and parse_time(encs[-2]["period"]["start"]).date() == parse_time(last["period"]["start"]).date():
                continue
            reasons = sorted({cc_name(rc) for rc in last.get("reasonCode", []) if cc_name(rc)})
            if len(reasons) == 1:
                q = pick(rng, ["when did {he} last see a doctor and why?", "last visit - when and what for?",
                               "date of {her} last appt and the reason?", "when was {he} last seen, for what?"])
                start = parse_time(last["period"]["start"])
                b.add("two_part", p, q.format(he=p.he, her=p.her), now, "list",
                      [start.astimezone(UTC).date().isoformat(), reasons[0]], [f"Encounter/{last['id']}"],
                      "two_part/last-visit-why")
        # highest value and when
        vals = p.values("A1c", now) or p.values("Cr", now)
        if len(vals) >= 3 and rng.random() < (0.2 if p.source == "synthea" else 0.6):
            item = "A1c" if p.values("A1c", now) else "Cr"
            top = max(o[2] for o in vals)
            at = [o for o in vals if o[2] == top]
            if len(at) == 1 and sorted(o[2] for o in vals)[-2] < top:
                q = pick(rng, ["highest {x} ever and when?", "what was {her} peak {x}, and on what date?"])
                b.add("two_part", p, q.format(x=pick(rng, SAY[item]), her=p.her), now, "list",
                      [r2(top), at[0][0].astimezone(UTC).date().isoformat()], [at[0][5]], f"two_part/max-when-{item}",
                      tol=0.01)


# ---------------------------------------------------------------- events in a window

def events(b: Builder, pts: list[Patient]):
    for p in pts:
        if p.source == "synthea":
            rng = seeded(f"{p.id}/events")
            if rng.random() < 0.2 and quiet(p):
                q = pick(rng, ["anything happen in the last 48 hours?", "events since yesterday?",
                               "what happened overnight?", "interval events, last 2 days?"])
                b.add("events", p, q, late_now(p), "list", [], [], "events/empty", status="no-data")
            continue
        for enc in p.by_type["Encounter"]:
            start = parse_time(enc["period"]["start"])
            if enc["class"]["code"] not in ("IMP", "EMER"):
                continue
            now = start + timedelta(hours=6)
            rng = seeded(f"{p.id}/events/{enc['id']}")
            q = pick(rng, ["anything new in the last 24h?", "any new events today?", "anything new since yesterday?"])
            b.add("events", p, q, now, "boolean", [True], [f"Encounter/{enc['id']}"], "events/admission-yes")


# How many questions each category keeps, and each pattern at most (so no one pattern fills a category).
CATEGORY_CAP = {"checklist": 46, "abnormal": 32, "drug_class": 34, "allergy": 26, "threshold": 22, "two_part": 30,
                "events": 14}
NODATA_CAP = 7


def pattern(row: dict) -> str:
    """The template without its item (checklist/values-K-Cr → checklist/values), with its gold kind."""
    head = row["template"].split("/")[1]
    if row["category"] == "checklist":
        parts = head.split("-")
        head = {"values": "values", "mixed": f"mixed-{parts[-1]}"}.get(parts[0], head)
    return head


def select(rows: list[dict]) -> list[dict]:
    """Keep a balanced subset: round-robin over a category's patterns (each shuffled by a seeded RNG), up to the
    category's cap; no-data patterns at most NODATA_CAP each. The kept rows stay in build order."""
    groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, row in enumerate(rows):
        groups[row["category"]][pattern(row)].append(i)
    keep: set[int] = set()
    for cat, pats in groups.items():
        queues = {}
        for pat, idx in sorted(pats.items()):
            idx = list(idx)
            seeded(f"select/{cat}/{pat}").shuffle(idx)
            if rows[idx[0]]["expected_status"] == "no-data":
                idx = idx[:NODATA_CAP]
            queues[pat] = idx
        taken = 0
        while taken < CATEGORY_CAP[cat] and any(queues.values()):
            for pat in sorted(queues):
                if queues[pat] and taken < CATEGORY_CAP[cat]:
                    keep.add(queues[pat].pop(0))
                    taken += 1
    return [row for i, row in enumerate(rows) if i in keep]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--sample", default=os.path.join(ROOT, "examples", "sample"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    pts = [Patient(f, "synthea") for f in sorted(glob.glob(os.path.join(args.data, "synthea-r4", "*.json")))
           if not os.path.basename(f).startswith(("hospital", "practitioner"))]
    pts += [Patient(f, "sample") for f in sorted(glob.glob(os.path.join(args.sample, "*.json")))]
    b = Builder()
    for gen in (checklist, abnormal, drug_class, allergies, thresholds, two_part, events):
        gen(b, pts)
    rows = select(b.rows)
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row["category"]] += 1
        row["id"] = f"{row['category']}-{counts[row['category']]:03d}"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if args.check:
        with open(OUT, encoding="utf-8") as fh:
            if fh.read() != text:
                print("stale: run evals/probe_composite/build.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(dict(counts), len(rows), sum(r["expected_status"] == "no-data" for r in rows))
    return 0


SAMPLE_NOW_DT = parse_time(SAMPLE_NOW)

if __name__ == "__main__":
    sys.exit(main())
