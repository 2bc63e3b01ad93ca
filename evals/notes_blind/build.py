"""Blind note-QA probe over synthea-bulk-10: questions whose answers are in the note TEXT.

Reads the raw Bulk NDJSON with the standard library only (no fhirqa imports), decodes the
DocumentReference base64 text/plain notes and writes ``questions.jsonl`` (evals/README.md schema).

    python evals/notes_blind/build.py            # rewrite questions.jsonl
    python evals/notes_blind/build.py --check    # exit 1 when the committed file is stale

Deterministic: every random choice comes from seeded(<string seed>).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import sys
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data" / "synthea-bulk-10"
OUT = HERE / "questions.jsonl"
SEED = "notes-blind-1"

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


# ---------------------------------------------------------------- reading

def seeded(seed: str) -> random.Random:
    """An RNG seeded by a string (never hash() or the clock)."""
    return random.Random(seed)  # noqa: S311 - not for security

def read_ndjson(name: str) -> list[dict]:
    path = DATA / f"{name}.000.ndjson"
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def parse_dt(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def section(text: str, name: str) -> str:
    m = re.search(r"^#+ " + re.escape(name) + r"\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    return m.group(1).strip() if m else ""


class Note:
    def __init__(self, doc: dict):
        self.id = doc["id"]
        self.ref = f"DocumentReference/{doc['id']}"
        self.patient = doc["subject"]["reference"].split("/", 1)[1]
        self.time = parse_dt(doc["date"])
        self.local_date = date.fromisoformat(doc["date"][:10])
        self.utc_date = self.time.astimezone(UTC).date()
        self.kind = doc["type"]["coding"][0]["display"]
        self.ed = self.kind == "Emergency department note"
        self.text = base64.b64decode(doc["content"][0]["attachment"]["data"]).decode("utf-8")
        self.lower = self.text.lower()
        cc = section(self.text, "Chief Complaint")
        self.cc_none = cc == "No complaints."
        self.cc = [x[2:].strip() for x in cc.splitlines() if x.startswith("- ")]
        meds = section(self.text, "Medications")
        self.meds = [] if meds.startswith("No Active") else [m.strip() for m in meds.split("; ")]
        self.allergies = section(self.text, "Allergies")
        ap = section(self.text, "Assessment and Plan")
        m = re.search(r"Patient is presenting with (.*?)\.\s*$", ap.split("## Plan")[0], re.M)
        self.presenting = m.group(1) if m else None
        plan = self.text.split("## Plan", 1)[1]
        self.plan = plan
        self.procedures = re.findall(r"^- (.*)$", plan.split("The following procedures were conducted:")[1]
                                     .split("The patient was")[0], re.M) if "procedures were conducted" in plan else []
        self.prescribed = re.findall(r"^- (.*)$", plan.split("prescribed the following medications:")[1]
                                     .split("The patient was placed")[0], re.M) if "prescribed the" in plan else []
        m = re.search(r"immunizations: (.*)$", plan, re.M)
        self.immunizations = m.group(1).lower() if m else ""
        m = re.search(r"is an? (\d+) year-old", self.text)
        self.age = int(m.group(1)) if m else None
        m = re.search(r"quit smoking at age (\d+)", self.text)
        self.quit_age = int(m.group(1)) if m else None
        m = re.search(r"Patient currently has (.*?)\.\s*$", self.text, re.M)
        self.insurance = m.group(1) if m else None
        m = re.search(r"Patient is (married|single|divorced|widowed)", self.text)
        self.marital = m.group(1) if m else None


# ---------------------------------------------------------------- helpers

def strength_items(note: Note) -> dict[str, str]:
    """drug key → strength as written, only for drugs listed once with one strength."""
    seen: dict[str, list[str]] = defaultdict(list)
    for item in note.meds:
        if " / " in item:
            continue
        m = re.match(r"^(?:\d+ (?:hr|ml) )?([a-z][a-z ,]*?) (\d+(?:\.\d+)?) (mg/ml|mg|mcg)\b", item)
        if not m:
            continue
        key = m.group(1).split()[0].rstrip(",")
        seen[key].append(f"{m.group(2)} {m.group(3)}")
    # a drug listed twice (nitrofurantoin suspension + capsules) is ambiguous
    counts: dict[str, int] = defaultdict(int)
    for item in note.meds:
        w = re.sub(r"^\d+ (?:hr|ml) ", "", item).split()[0].rstrip(",")
        counts[w] += 1
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and counts[k] == 1}


DRUG_NAMES = {
    "lisinopril": ["lisinopril", "lisinopril"],
    "metformin": ["metformin", "metformin ER"],
    "meperidine": ["meperidine", "Demerol"],
    "phenazopyridine": ["phenazopyridine", "Pyridium"],
    "nitrofurantoin": ["nitrofurantoin", "nitrofurantoin"],
    "simvastatin": ["simvastatin", "Zocor"],
    "hydrochlorothiazide": ["HCTZ", "hydrochlorothiazide"],
    "paclitaxel": ["paclitaxel", "Taxol"],
    "cisplatin": ["cisplatin", "cisplatin"],
    "ibuprofen": ["ibuprofen", "Motrin"],
    "alendronic": ["alendronate", "Fosamax"],
    "budesonide": ["budesonide", "Pulmicort"],
    "albuterol": ["albuterol", "albuterol neb"],
    "naproxen": ["naproxen", "Aleve"],
    "penicillin": ["pen VK", "penicillin"],
    "amoxicillin": ["amoxicillin", "amoxicillin"],
    "aspirin": ["aspirin", "ASA"],
    "acetaminophen": ["acetaminophen", "Tylenol"],
    "tacrolimus": ["tacrolimus", "tacrolimus"],
    "ferrous": ["ferrous sulfate", "iron"],
}

SYMPTOMS = {  # as asked → as written in the chief complaint
    "cough": "Cough", "thirst": "Thirst", "hunger": "Hunger", "frequent urination": "Frequent Urination",
    "nasal congestion": "Nasal Congestion", "chest pressure": "Chest Pressure",
}
SYMPTOM_ASK = {"cough": ["cough", "cough"], "thirst": ["thirst", "polydipsia"], "hunger": ["hunger", "polyphagia"],
               "frequent urination": ["frequent urination", "polyuria"],
               "nasal congestion": ["nasal congestion", "congestion"], "chest pressure": ["chest pressure", "chest pressure"]}

MENTION_TERMS = {  # as asked → substring of the note text (lower case)
    "dialysis": "dialysis", "hospice": "hospice", "chemo": "chemotherapy", "sepsis": "sepsis",
    "bronchitis": "bronchitis", "sinusitis": "sinusitis", "pharyngitis": "pharyngitis",
    "osteoporosis": "osteoporosis", "prediabetes": "prediabetes", "hyperlipidemia": "hyperlipidemia",
    "UTI": "urinary tract infection", "kidney transplant": "transplantation of kidney",
    "anemia": "anemia", "asthma": "asthma", "lung cancer": "carcinoma of lung", "sleep apnea": "sleep apnea",
    "obesity": "obesity", "ankle sprain": "sprain of ankle", "depression screening": "depression screening",
    "alcohol use": "alcohol", "miscarriage": "miscarriage", "hypertension": "hypertension",
}

NEG_VALUES = ["BP", "blood pressure", "temp", "HR", "pulse", "weight", "wt", "BMI", "A1c", "K", "Cr",
              "glucose", "SpO2", "O2 sat", "Hgb", "LDL", "resp rate"]
NEG_DRUGS = ["warfarin", "Lasix", "atorvastatin", "metoprolol", "prednisone", "levothyroxine", "gabapentin",
             "amlodipine", "omeprazole", "sertraline"]


def pron(gender: str) -> tuple[str, str]:
    return ("she", "her") if gender == "female" else ("he", "his")


def date_forms(d: date, rng: random.Random) -> str:
    forms = [
        f"{d.month}/{d.day}/{d.year}",
        d.isoformat(),
        f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
        f"{MONTHS[d.month - 1][:3]} {d.day} '{d.year % 100:02d}",
        f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}",
        f"{d.month:02d}/{d.day:02d}/{d.year}",
    ]
    return rng.choice(forms)


class Patient:
    def __init__(self, pid: str, gender: str, notes: list[Note], last_fact: date):
        self.id = pid
        self.gender = gender
        self.notes = sorted(notes, key=lambda n: n.time)
        rng = seeded(f"{SEED}/now/{pid}")
        d = last_fact + timedelta(days=rng.randint(3, 21))
        while d.day > 28:
            d += timedelta(days=1)
        self.now = f"{d.isoformat()}T12:00:00Z"
        dates = defaultdict(int)
        for n in self.notes:
            dates[n.local_date] += 1
            dates[n.utc_date] += 0
        self.date_ok = set()
        for n in self.notes:
            others = [m for m in self.notes if m is not n]
            if n.local_date != n.utc_date:
                continue
            if any(abs((m.local_date - n.local_date).days) <= 1 or abs((m.utc_date - n.local_date).days) <= 1
                   for m in others):
                continue
            self.date_ok.add(n.id)
        self.ed_years = defaultdict(list)
        for n in self.notes:
            if n.ed:
                self.ed_years[n.local_date.year].append(n)

    def refs(self, note: Note) -> list[str]:
        """Ways to point at this note unambiguously (may be empty)."""
        _, his = pron(self.gender)
        out = []
        rng = seeded(f"{SEED}/ref/{note.id}")
        if note.id in self.date_ok:
            d = date_forms(note.local_date, rng)
            out += [f"at the {d} visit", f"on {d}", f"in the {d} note", f"in the note from {d}"]
        if note is self.notes[-1] and note.time != self.notes[-2].time:
            out += [f"in {his} last note", "at the most recent visit", "in the latest note"]
        if note is self.notes[0] and note.time != self.notes[1].time:
            out += [f"in {his} first note", "at the earliest documented visit"]
        if note.ed and len(self.ed_years[note.local_date.year]) == 1 and note.id in self.date_ok:
            y = note.local_date.year
            out += [f"at the ED visit in {y}", f"at the {y} ED visit", f"ED visit '{y % 100:02d}"]
        return out


# ---------------------------------------------------------------- generators

def q(p: Patient, category: str, template: str, text: str, atype: str, expected, status="answered",
      refs=(), tol=0.0) -> dict:
    return {"id": "", "patient_id": p.id, "question": text, "now": p.now, "category": category,
            "answer_type": atype, "expected": expected, "expected_status": status, "tolerance": tol,
            "gold_refs": list(refs), "template": template}


def pick(rng: random.Random, cands: list, n: int) -> list:
    """Up to n candidates, spread over patients (round robin in a seeded order)."""
    by_p: dict[str, list] = defaultdict(list)
    for c in cands:
        by_p[c[0].id].append(c)
    order = sorted(by_p)
    rng.shuffle(order)
    for k in order:
        rng.shuffle(by_p[k])
    out = []
    while len(out) < n and any(by_p[k] for k in order):
        for k in order:
            if by_p[k] and len(out) < n:
                out.append(by_p[k].pop())
    return out


def candidates(patients: list[Patient], want) -> list[tuple[Patient, Note, str]]:
    out = []
    for p in patients:
        for n in p.notes:
            rs = p.refs(n)
            if rs and want(n):
                out.append((p, n, seeded(f"{SEED}/r/{n.id}/{want.__name__}").choice(rs)))
    return out


def gen_cc(patients, rng):
    qs = []
    forms = ["CC {r}?", "chief complaint {r}", "what did {she} c/o {r}?", "complaints listed {r}?",
             "presenting complaint {r}?"]
    def has_cc(n):
        return bool(n.cc)

    def no_cc(n):
        return n.cc_none
    for p, n, r in pick(rng, candidates(patients, has_cc), 9) + pick(rng, candidates(patients, no_cc), 4):
        she, _ = pron(p.gender)
        text = rng.choice(forms).format(r=r, she=she)
        if n.cc_none:
            qs.append(q(p, "note_cc", "note_cc/none", text, "string", ["No complaints"], refs=[n.ref]))
        elif len(n.cc) == 1:
            qs.append(q(p, "note_cc", "note_cc/single", text, "string", n.cc, refs=[n.ref]))
        else:
            qs.append(q(p, "note_cc", "note_cc/list", text, "list", sorted(n.cc), refs=[n.ref]))
    return qs


def gen_symptom(patients, rng):
    qs = []
    forms = ["c/o {s} {r}?", "did {she} report {s} {r}?", "any {s} {r}?", "was {she} complaining of {s} {r}?",
             "{s} {r} - yes or no?"]
    def listed(n):
        return bool(n.cc)
    for p, n, r in pick(rng, candidates(patients, listed), 14):
        she, _ = pron(p.gender)
        sym = rng.choice([k for k, v in SYMPTOMS.items() if v in n.cc])
        s = rng.choice(SYMPTOM_ASK[sym])
        qs.append(q(p, "note_symptom", "note_symptom/listed",
                    rng.choice(forms).format(s=s, r=r, she=she), "boolean", [True], refs=[n.ref]))
    def no_complaints(n):
        return n.cc_none
    for p, n, r in pick(rng, candidates(patients, no_complaints), 8):
        she, _ = pron(p.gender)
        s = rng.choice(list(SYMPTOM_ASK))
        s = rng.choice(SYMPTOM_ASK[s])
        qs.append(q(p, "note_symptom", "note_symptom/no-complaints",
                    rng.choice(forms).format(s=s, r=r, she=she), "boolean", [False], refs=[n.ref]))
    return qs


def gen_mentioned(patients, rng):
    qs = []
    forms = ["was {t} mentioned {r}?", "any mention of {t} {r}?", "{t} documented {r}?",
             "anything about {t} {r}?", "{t} noted {r}?"]
    cands = candidates(patients, lambda n: True)
    for i, (p, n, r) in enumerate(pick(rng, cands, 16)):
        # alternate true / false; keep only terms whose answer is literal in the text
        want = i % 2 == 0
        terms = sorted(t for t, pat in MENTION_TERMS.items() if (pat in n.lower) == want)
        if want:
            # prefer terms that are not in every note of the patient (a real look at this note)
            rare = [t for t in terms if not all(MENTION_TERMS[t] in m.lower for m in p.notes)]
            terms = rare or terms
        else:
            rare = [t for t in terms if any(MENTION_TERMS[t] in m.lower for m in p.notes)]
            terms = rare or terms
        if not terms:
            continue
        t = rng.choice(terms)
        qs.append(q(p, "note_mentioned", f"note_mentioned/{'yes' if want else 'no'}",
                    rng.choice(forms).format(t=t, r=r), "boolean", [want], refs=[n.ref] if want else [n.ref]))
    return qs


def gen_assessment(patients, rng):
    qs = []
    forms = ["what was {she} presenting with {r}?", "assessment {r}?", "dx {r}?", "what was the diagnosis {r}?",
             "A/P {r} - what was {she} presenting with?"]
    def clean(n):
        return bool(n.presenting) and "(" not in n.presenting and "," not in n.presenting
    for p, n, r in pick(rng, candidates(patients, clean), 12):
        she, _ = pron(p.gender)
        qs.append(q(p, "note_assessment", "note_assessment/single",
                    rng.choice(forms).format(r=r, she=she), "string", [n.presenting], refs=[n.ref]))
    return qs


def gen_strength(patients, rng):
    qs = []
    forms = ["{d} strength {r}?", "what dose of {d} was listed {r}?", "{d} mg {r}?", "{d} dose on the med list {r}",
             "how much {d} {r}?"]
    cands = []
    for p in patients:
        for n in p.notes:
            rs = p.refs(n)
            items = {k: v for k, v in strength_items(n).items() if k in DRUG_NAMES}
            if rs and items:
                crng = seeded(f"{SEED}/str/{n.id}")
                cands.append((p, n, crng.choice(rs), crng.choice(sorted(items)), items))
    # favour rarer drugs: group by drug so lisinopril/metformin do not take every slot
    by_drug: dict[str, list] = defaultdict(list)
    for c in cands:
        by_drug[c[3]].append(c)
    chosen = []
    drugs = sorted(by_drug)
    rng.shuffle(drugs)
    for dk in drugs:
        chosen += pick(rng, by_drug[dk], 1)
    for p, n, r, dk, items in chosen[:18]:
        d = rng.choice(DRUG_NAMES[dk])
        form = rng.choice(forms)
        if "mg" in form and "mg" not in items[dk].split()[1]:
            form = forms[0]
        qs.append(q(p, "note_med_strength", "note_med_strength/listed", form.format(d=d, r=r), "string",
                    [items[dk]], refs=[n.ref]))
    return qs


def med_keys(n: Note) -> set[str]:
    out = set()
    for item in n.meds:
        w = re.sub(r"^\d+ (?:hr|ml) ", "", item).split()[0].rstrip(",")
        out.add(w)
    return out


def gen_med_list(patients, rng):
    qs = []
    forms = ["was {she} on {d} {r}?", "{d} on the med list {r}?", "taking {d} {r}?", "meds {r} include {d}?"]
    all_keys = sorted(k for k in DRUG_NAMES)
    cands = candidates(patients, lambda n: True)
    for i, (p, n, r) in enumerate(pick(rng, cands, 14)):
        she, _ = pron(p.gender)
        keys = med_keys(n) & set(DRUG_NAMES)
        want = i % 2 == 0
        if want:
            pool = sorted(keys)
        else:
            elsewhere = set().union(*(med_keys(m) for m in p.notes)) & set(DRUG_NAMES)
            pool = sorted(elsewhere - keys) or sorted(set(all_keys) - keys - {"tacrolimus"})
            pool = [k for k in pool if k not in n.lower]
        if not pool:
            continue
        dk = rng.choice(pool)
        d = rng.choice(DRUG_NAMES[dk])
        qs.append(q(p, "note_med_list", f"note_med_list/{'yes' if want else 'no'}",
                    rng.choice(forms).format(d=d, r=r, she=she), "boolean", [want], refs=[n.ref]))
    return qs


def gen_plan(patients, rng):
    qs = []
    # procedures
    proc_ask = {"renal dialysis": "dialysis", "hearing examination": "hearing exam",
                "depression screening": "depression screen", "medication reconciliation": "med rec",
                "combined chemotherapy and radiation therapy": "chemoradiation",
                "hospice care": "hospice care", "screening for domestic abuse": "DV screening",
                "assessment of substance use": "substance use assessment"}
    forms_p = ["{t} done {r}?", "was {t} performed {r}?", "did {she} get {t} {r}?"]
    cands = candidates(patients, lambda n: True)
    for i, (p, n, r) in enumerate(pick(rng, cands, 10)):
        she, _ = pron(p.gender)
        done = {k for k in proc_ask if any(x.startswith(k + " (") for x in n.procedures)}
        # a 'no' must not be found anywhere else in the note either
        want = i % 2 == 0
        pool = sorted(done) if want else sorted(k for k in proc_ask if k not in n.lower)
        if not pool:
            continue
        k = rng.choice(pool)
        qs.append(q(p, "note_plan", f"note_plan/procedure-{'yes' if want else 'no'}",
                    rng.choice(forms_p).format(t=proc_ask[k], r=r, she=she), "boolean", [want], refs=[n.ref]))
    # flu shot
    forms_f = ["flu shot given {r}?", "did {she} get {his} flu vaccine {r}?", "influenza vaccine {r}?"]

    def flu(n):
        return "influenza" in n.immunizations

    def no_flu(n):
        return "influenza" not in n.lower
    for p, n, r in pick(rng, candidates(patients, flu), 4) + pick(rng, candidates(patients, no_flu), 3):
        she, his = pron(p.gender)
        qs.append(q(p, "note_plan", "note_plan/flu", rng.choice(forms_f).format(r=r, she=she, his=his),
                    "boolean", ["influenza" in n.immunizations], refs=[n.ref]))
    # newly prescribed
    forms_rx = ["was {d} prescribed {r}?", "{d} started {r}?", "new Rx for {d} {r}?"]
    def has_rx(n):
        return bool(n.prescribed)
    for i, (p, n, r) in enumerate(pick(rng, candidates(patients, has_rx), 8)):
        rx = {re.sub(r"^\d+ (?:hr|ml) ", "", x).split()[0].rstrip(",") for x in n.prescribed} & set(DRUG_NAMES)
        want = i % 2 == 0
        pool = sorted(rx) if want else sorted(k for k in DRUG_NAMES if k not in n.lower)
        if not pool:
            continue
        dk = rng.choice(pool)
        qs.append(q(p, "note_plan", f"note_plan/rx-{'yes' if want else 'no'}",
                    rng.choice(forms_rx).format(d=rng.choice(DRUG_NAMES[dk]), r=r), "boolean", [want],
                    refs=[n.ref]))
    return qs


def gen_social(patients, rng):
    qs = []
    def named_ins(n):
        return bool(n.insurance) and n.insurance != "NO INSURANCE"
    forms_i = ["insurance {r}?", "payer per the note {r}", "what insurance did {she} have {r}?"]
    for p, n, r in pick(rng, candidates(patients, named_ins), 6):
        she, _ = pron(p.gender)
        qs.append(q(p, "note_social", "note_social/insurance", rng.choice(forms_i).format(r=r, she=she),
                    "string", [n.insurance], refs=[n.ref]))
    def quit_(n):
        return n.quit_age is not None
    forms_s = ["age {she} quit smoking, per social hx {r}?", "quit smoking at what age ({r})?"]
    for p, n, r in pick(rng, candidates(patients, quit_), 4):
        she, _ = pron(p.gender)
        qs.append(q(p, "note_social", "note_social/quit-age", rng.choice(forms_s).format(r=r, she=she),
                    "number", [n.quit_age], refs=[n.ref], tol=0.0))
    forms_m = ["married {r}?", "was {she} married {r}?", "marital status {r} - married?"]
    def single(n):
        return n.marital == "single"

    def married(n):
        return n.marital == "married"
    for p, n, r in pick(rng, candidates(patients, married), 2) + pick(rng, candidates(patients, single), 2):
        she, _ = pron(p.gender)
        qs.append(q(p, "note_social", "note_social/married", rng.choice(forms_m).format(r=r, she=she),
                    "boolean", [n.marital == "married"], refs=[n.ref]))
    return qs


def gen_allergy(patients, rng):
    qs = []
    def has_all(n):
        return n.allergies != "No Known Allergies."
    forms_y = ["allergic to {a} {r}?", "{a} allergy documented {r}?"]
    for p, n, r in pick(rng, candidates(patients, has_all), 3):
        a = rng.choice(["tree nuts", "mold", "Bactrim"])
        qs.append(q(p, "note_allergy", "note_allergy/listed", rng.choice(forms_y).format(a=a, r=r),
                    "boolean", [True], refs=[n.ref]))
    def nka(n):
        return n.allergies == "No Known Allergies."
    forms_n = ["NKDA {r}?", "any known allergies {r}?", "allergies listed {r}?"]
    for p, n, r in pick(rng, candidates(patients, nka), 4):
        form = rng.choice(forms_n)
        qs.append(q(p, "note_allergy", "note_allergy/nka", form.format(r=r), "boolean",
                    [form.startswith("NKDA")], refs=[n.ref]))
    return qs


def gen_age(patients, rng):
    qs = []
    forms = ["age per the HPI {r}?", "how old was {she} {r} (per the note)?"]
    for p, n, r in pick(rng, candidates(patients, lambda n: n.age is not None), 4):
        she, _ = pron(p.gender)
        qs.append(q(p, "note_age", "note_age/hpi", rng.choice(forms).format(r=r, she=she), "number", [n.age],
                    refs=[n.ref]))
    return qs


def gen_negative(patients, rng, drug_keys_by_patient):
    qs = []
    forms_v = ["{v} {r}?", "what was {his} {v} {r}?", "{v} value {r}"]
    for p, _n, r in pick(rng, candidates(patients, lambda n: True), 12):
        _, his = pron(p.gender)
        v = rng.choice(NEG_VALUES)
        qs.append(q(p, "note_negative", "note_negative/value", rng.choice(forms_v).format(v=v, r=r, his=his),
                    "number", [], status="no-data"))
    forms_d = ["{d} dose {r}?", "what dose of {d} was {she} on {r}?"]
    for p, _n, r in pick(rng, candidates(patients, lambda n: True), 5):
        she, _ = pron(p.gender)
        pool = [d for d in NEG_DRUGS if d.lower() not in drug_keys_by_patient[p.id]]
        d = rng.choice(pool)
        qs.append(q(p, "note_negative", "note_negative/drug-dose", rng.choice(forms_d).format(d=d, r=r, she=she),
                    "string", [], status="no-data"))
    return qs


# ---------------------------------------------------------------- main

def build() -> list[dict]:
    notes = [Note(d) for d in read_ndjson("DocumentReference")]
    genders = {p["id"]: p.get("gender", "female") for p in read_ndjson("Patient")}
    last_fact: dict[str, date] = {}
    for n in notes:
        last_fact[n.patient] = max(last_fact.get(n.patient, n.utc_date), n.utc_date)
    for enc in read_ndjson("Encounter"):
        pid = enc["subject"]["reference"].split("/", 1)[1]
        end = enc.get("period", {}).get("end")
        if end:
            d = parse_dt(end).astimezone(UTC).date()
            last_fact[pid] = max(last_fact.get(pid, d), d)
    drug_text: dict[str, str] = defaultdict(str)
    for mr in read_ndjson("MedicationRequest"):
        pid = mr["subject"]["reference"].split("/", 1)[1]
        drug_text[pid] += json.dumps(mr.get("medicationCodeableConcept", {})).lower()
    by_p: dict[str, list[Note]] = defaultdict(list)
    for n in notes:
        by_p[n.patient].append(n)
        drug_text[n.patient] += n.lower
    # brand ↔ generic for the negative drugs
    generic = {"lasix": "furosemide"}
    neg_keys = {pid: {d.lower() for d in NEG_DRUGS
                      if d.lower() in txt or generic.get(d.lower(), "~") in txt}
                for pid, txt in drug_text.items()}
    patients = [Patient(pid, genders[pid], ns, last_fact[pid]) for pid, ns in sorted(by_p.items())]
    gens = [("cc", gen_cc), ("symptom", gen_symptom), ("mentioned", gen_mentioned),
            ("assessment", gen_assessment), ("strength", gen_strength), ("medlist", gen_med_list),
            ("plan", gen_plan), ("social", gen_social), ("allergy", gen_allergy), ("age", gen_age)]
    rows: list[dict] = []
    for name, g in gens:
        rows += g(patients, seeded(f"{SEED}/{name}"))
    rows += gen_negative(patients, seeded(f"{SEED}/negative"), neg_keys)
    counters: dict[str, int] = defaultdict(int)
    for r in rows:
        counters[r["category"]] += 1
        r["id"] = f"{r['category']}-{counters[r['category']]:03d}"
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build())
    if args.check:
        ok = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if ok else "stale")
        return 0 if ok else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} questions to {OUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
