"""Blind OMOP evaluation set: ``evals/heldout-omop.jsonl``.

Gold answers are computed here with DuckDB over the raw CSV files of two real OMOP databases
(``../shared/data/omop/synthea27nj`` CDM 5.4 and ``../shared/data/omop/mimic-iv-demo-omop-5.3`` CDM 5.3),
joining CONCEPT for names. Nothing is imported from ``fhirqa``. Meanings follow ``docs/questions.md``;
the line format is ``evals/README.md``'s plus a ``database`` field.

    python evals/build_omop_blind.py            # rewrite evals/heldout-omop.jsonl
    python evals/build_omop_blind.py --check    # exit 1 when the committed file is stale

Every random choice comes from ``random.Random(<string>)``; same data in, same bytes out.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import zipfile
from calendar import monthrange
from collections import defaultdict
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "omop"
OUT = ROOT / "evals" / "heldout-omop.jsonl"
SEED = "omop-blind-1"

# ----------------------------------------------------------------------------------------------- data


def _read(con, folder: Path, table: str, cols: str) -> list[tuple]:
    for name in (table.upper(), table.lower()):
        path = folder / f"{name}.csv"
        if path.exists():
            sql = f"SELECT {cols} FROM read_csv('{path.as_posix()}', header=true, all_varchar=true)"
            return con.execute(sql).fetchall()
    raise FileNotFoundError(folder / table)


def _d(text: str | None) -> date | None:
    if not text:
        return None
    text = text.strip()
    if re.fullmatch(r"\d{8}", text):
        return date(int(text[:4]), int(text[4:6]), int(text[6:]))
    return date.fromisoformat(text[:10])


def _dt(text: str | None, fallback: str | None = None) -> datetime | None:
    if text:
        return datetime.fromisoformat(text.strip()[:19])
    d = _d(fallback)
    return datetime(d.year, d.month, d.day) if d else None


class DB:
    """One OMOP database read from its CSV files (no fhirqa)."""

    def __init__(self, name: str, folder: Path):
        self.name = name
        con = duckdb.connect()
        concept = {r[0]: r[1] for r in _read(con, folder, "concept", "concept_id, concept_name")}
        self.concept = concept

        def nm(src_cid, cid, src_val):
            for c in (src_cid, cid):
                if c and c != "0" and concept.get(c):
                    return concept[c]
            return (src_val or "").strip() or None

        self.persons = {}
        for pid, g, y, m, d, bdt in _read(
            con, folder, "person", "person_id, gender_concept_id, year_of_birth, month_of_birth, day_of_birth, birth_datetime"
        ):
            birth = None
            if m and d:
                birth = date(int(y), int(m), int(d))
            elif bdt:
                birth = _d(bdt)
            self.persons[pid] = {"gender": {"8507": "male", "8532": "female"}.get(g), "birth": birth}
        self.death = {pid: _dt(dt, dd) for pid, dd, dt in _read(con, folder, "death", "person_id, death_date, death_datetime")}
        self.meas = defaultdict(list)  # pid -> (datetime, cid, name, value)
        if any((folder / f"{n}.csv").exists() for n in ("MEASUREMENT", "measurement")):
            for pid, cid, dd, dt, v in _read(
                con, folder, "measurement",
                "person_id, measurement_concept_id, measurement_date, measurement_datetime, value_as_number",
            ):
                if v is not None:
                    self.meas[pid].append((_dt(dt, dd), cid, concept.get(cid), float(v)))
        self.drugs = defaultdict(list)  # pid -> (start, end, name)
        for pid, cid, scid, sv, sd, sdt, ed, edt in _read(
            con, folder, "drug_exposure",
            "person_id, drug_concept_id, drug_source_concept_id, drug_source_value, drug_exposure_start_date,"
            " drug_exposure_start_datetime, drug_exposure_end_date, drug_exposure_end_datetime",
        ):
            self.drugs[pid].append((_dt(sdt, sd), _dt(edt, ed), nm(scid, cid, sv)))
        self.conds = defaultdict(list)  # pid -> (start, end, name, source_value, cid)
        for pid, cid, scid, sv, sd, sdt, ed, edt in _read(
            con, folder, "condition_occurrence",
            "person_id, condition_concept_id, condition_source_concept_id, condition_source_value,"
            " condition_start_date, condition_start_datetime, condition_end_date, condition_end_datetime",
        ):
            self.conds[pid].append((_dt(sdt, sd), _dt(edt, ed), nm(scid, cid, sv), (sv or "").strip(), cid))
        self.procs = defaultdict(list)  # pid -> (datetime, name)
        for pid, cid, scid, sv, dd, dt in _read(
            con, folder, "procedure_occurrence",
            "person_id, procedure_concept_id, procedure_source_concept_id, procedure_source_value,"
            " procedure_date, procedure_datetime",
        ):
            self.procs[pid].append((_dt(dt, dd), nm(scid, cid, sv)))
        self.visits = defaultdict(list)  # pid -> (start, concept id)
        for pid, cid, sd, sdt in _read(
            con, folder, "visit_occurrence", "person_id, visit_concept_id, visit_start_date, visit_start_datetime"
        ):
            self.visits[pid].append((_dt(sdt, sd), cid))
        self.now = {}
        self.late = {}
        for pid in sorted(self.persons):
            times = [t for t, *_ in self.meas[pid]] + [t for t, *_ in self.drugs[pid]]
            times += [e for _, e, _ in self.drugs[pid] if e] + [t for t, *_ in self.conds[pid]]
            times += [e for _, e, *_ in self.conds[pid] if e] + [t for t, _ in self.procs[pid]]
            times += [t for t, _ in self.visits[pid]]
            if pid in self.death:
                times.append(self.death[pid])
            times = [t for t in times if t]
            if not times:
                continue
            last = max(times)
            rng = random.Random(f"{SEED}:{name}:{pid}:now")  # noqa: S311
            n = last.date() + timedelta(days=rng.randint(3, 21))
            while n.day > 28:
                n += timedelta(days=1)
            self.now[pid] = datetime(n.year, n.month, n.day, 12)
            ly = n.year + rng.randint(2, 4)
            self.late[pid] = datetime(ly, n.month, n.day, 12)


# ------------------------------------------------------------------------------------------- helpers

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def fmt_date(d: date, rng: random.Random) -> str:
    forms = [
        d.isoformat(),
        f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
        f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}",
        f"{d.month}/{d.day}/{d.year}",
        f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}",
    ]
    return rng.choice(forms)


def add_months(d: datetime, n: int) -> datetime:
    m = d.month - 1 + n
    y = d.year + m // 12
    m = m % 12 + 1
    return d.replace(year=y, month=m, day=min(d.day, monthrange(y, m)[1]))


def completed_years(a: date, b: date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def completed_months(a: datetime, b: datetime) -> int:
    n = (b.year - a.year) * 12 + b.month - a.month
    if add_months(a, n) > b:
        n -= 1
    return n


def near(t: datetime, boundary: datetime, days: float) -> bool:
    return abs((t - boundary).total_seconds()) <= days * 86400


REL = [  # (phrase variants, months)
    (["in the last 6 months", "past 6 mo", "over the past six months"], 6),
    (["in the past year", "past yr", "in the last 12 months"], 12),
    (["last 18 mo", "in the past 18 months"], 18),
    (["in the last 2 years", "past 2 yrs", "over the past two years"], 24),
    (["over the past 5 years", "in the last 5 yrs"], 60),
]


def relative_windows(now: datetime, times: list[datetime], rng: random.Random):
    """(phrase, start, end) for relative windows whose start is ≥ 7 days from every time."""
    out = []
    for phrases, months in REL:
        start = add_months(now, -months)
        if any(near(t, start, 8) for t in times):
            continue
        out.append((rng.choice(phrases), start, now))
    return out


def dated_windows(now: datetime, times: list[datetime], rng: random.Random):
    """since / between / calendar-year windows; boundaries never within a day of a time."""
    out = []
    years = sorted({t.year for t in times if t <= now})
    for y in years:
        s, e = datetime(y, 1, 1), datetime(y, 12, 31, 23, 59, 59)
        if any(near(t, s, 1.5) or near(t, e, 1.5) for t in times):
            continue
        out.append((rng.choice([f"in {y}", f"during {y}", f"for {y}", f"in CY{y}"]), s, e))
    if len(times) >= 2:
        for _ in range(4):
            a = rng.choice(times)
            s = datetime(a.year, a.month, a.day) - timedelta(days=rng.randint(5, 60))
            if any(near(t, s, 1.5) for t in times) or s > now:
                continue
            out.append((f"since {fmt_date(s.date(), rng)}", s, now))
            b = rng.choice(times)
            e = datetime(b.year, b.month, b.day) + timedelta(days=rng.randint(5, 60))
            if e > s + timedelta(days=30) and e < now and not any(near(t, e, 1.5) for t in times):
                e_end = e.replace(hour=23, minute=59, second=59)
                out.append((f"between {fmt_date(s.date(), rng)} and {fmt_date(e.date(), rng)}", s, e_end))
            break
    return out


def q(db, pid, category, template, question, answer_type, expected, status="answered", tol=None, now=None,
      refs=None):
    if tol is None:
        tol = {"number": 0.01, "date": 0}.get(answer_type, 0)
    return {
        "database": db.name,
        "patient_id": pid,
        "question": question,
        "now": (now or db.now[pid]).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "category": category,
        "answer_type": answer_type,
        "expected": expected if status == "answered" else [],
        "expected_status": status,
        "tolerance": tol,
        "gold_refs": refs or [],
        "template": template,
    }


def rnd(x: float) -> float:
    return round(x, 4)


# --------------------------------------------------------------------------------------- vocabulary

# Measurement items (Synthea27): concept id -> (key, [(register, words)], related concept ids to avoid)
ITEMS = {
    "3025315": ("wt", [("abbr", "wt"), ("full", "weight"), ("full", "body weight"), ("typo", "wieght")]),
    "3036277": ("ht", [("abbr", "ht"), ("full", "height")]),
    "3038553": ("bmi", [("abbr", "BMI"), ("full", "body mass index")]),
    "3004249": ("sbp", [("abbr", "SBP"), ("full", "systolic BP"), ("lay", "top BP number"), ("full", "systolic")]),
    "3012888": ("dbp", [("abbr", "DBP"), ("full", "diastolic blood pressure"), ("lay", "bottom BP number")]),
    "3027018": ("hr", [("abbr", "HR"), ("full", "heart rate"), ("lay", "pulse")]),
    "3024171": ("rr", [("abbr", "RR"), ("full", "respiratory rate"), ("lay", "breathing rate")]),
    "3000963": ("hgb", [("abbr", "Hgb"), ("full", "hemoglobin"), ("typo", "hemoglobn")]),
    "3000905": ("wbc", [("abbr", "WBC"), ("lay", "white count"), ("full", "white blood cell count")]),
    "3024929": ("plt", [("abbr", "plts"), ("full", "platelets"), ("abbr", "plt count")]),
    "3022192": ("tg", [("abbr", "trigs"), ("full", "triglycerides"), ("abbr", "TG")]),
    "3009966": ("ldl", [("abbr", "LDL"), ("lay", "bad cholesterol")]),
    "3007070": ("hdl", [("abbr", "HDL"), ("lay", "good cholesterol")]),
    "3027114": ("tc", [("full", "total cholesterol"), ("abbr", "total chol")]),
    "3005456": ("k", [("abbr", "K"), ("full", "potassium"), ("typo", "potasium")]),
    "3000285": ("na", [("abbr", "Na"), ("full", "sodium")]),
    "3051825": ("cr", [("abbr", "Cr"), ("full", "creatinine"), ("typo", "creatinin")]),
    "3000483": ("glu", [("full", "glucose"), ("lay", "blood sugar"), ("abbr", "BG")]),
    "3004410": ("a1c", [("abbr", "A1c"), ("abbr", "HbA1c"), ("full", "hemoglobin A1c")]),
    "3032503": ("ca", [("abbr", "Ca"), ("full", "calcium")]),
    "3018572": ("cl", [("abbr", "Cl"), ("full", "chloride")]),
    "3014094": ("co2", [("abbr", "bicarb"), ("abbr", "CO2")]),
    "3020891": ("temp", [("abbr", "temp"), ("full", "body temperature")]),
    "3016502": ("o2", [("abbr", "O2 sat"), ("lay", "oxygen level")]),
}
# Items sharing a word with another concept: ask only patients without the sibling.
SIBLINGS = {"3004295": ["3013682"], "3023314": ["3009542"]}
THRESH = {"sbp": [120, 130, 140, 160], "dbp": [80, 90], "hr": [100, 60], "k": [5.0, 3.5], "na": [145, 135],
          "glu": [100, 126, 200], "a1c": [5.7, 6.5, 7], "cr": [1.2, 1.5], "wt": None, "bmi": [25, 30, 35],
          "ldl": [100, 130, 160], "tg": [150, 200], "hgb": [12, 13.5, 10], "plt": [150, 400], "wbc": [11, 4],
          "hdl": [40, 60], "tc": [200, 240], "temp": [38]}
ABSENT_LABS = [("TSH", "TSH"), ("INR", "INR"), ("PSA", "PSA"), ("troponin", "trop"), ("lactate", "lactic acid"),
               ("ferritin", "ferritin"), ("magnesium", "Mg")]

# Drugs: key -> (regex over the lower-cased record name, [(register, words)])
DRUGS = {
    "lisinopril": (r"lisinopril", [("full", "lisinopril"), ("brand", "Zestril"), ("brand", "Prinivil")]),
    "hctz": (r"hydrochlorothiazide", [("abbr", "HCTZ"), ("full", "hydrochlorothiazide")]),
    "amlodipine": (r"amlodipine", [("full", "amlodipine"), ("brand", "Norvasc")]),
    "simvastatin": (r"simvastatin", [("full", "simvastatin"), ("brand", "Zocor"), ("typo", "simvastin")]),
    "clopidogrel": (r"clopidogrel", [("full", "clopidogrel"), ("brand", "Plavix")]),
    "ibuprofen": (r"ibuprofen", [("full", "ibuprofen"), ("brand", "Motrin"), ("brand", "Advil")]),
    "naproxen": (r"naproxen", [("full", "naproxen"), ("brand", "Aleve")]),
    "augmentin": (r"amoxicillin.*clavulanate", [("brand", "Augmentin"), ("full", "amoxicillin-clavulanate")]),
    "cefuroxime": (r"cefuroxime", [("full", "cefuroxime"), ("brand", "Ceftin")]),
    "meperidine": (r"meperidine", [("full", "meperidine"), ("brand", "Demerol")]),
    "fluticasone": (r"fluticasone", [("full", "fluticasone inhaler"), ("brand", "Flovent")]),
    "albuterol": (r"albuterol", [("full", "albuterol"), ("brand", "ProAir"), ("lay", "rescue inhaler")]),
    "nitroglycerin": (r"nitroglycerin", [("abbr", "NTG"), ("full", "nitroglycerin"), ("brand", "Nitrostat")]),
    "losartan": (r"losartan", [("full", "losartan"), ("brand", "Cozaar")]),
    "insulin": (r"insulin", [("full", "insulin"), ("brand", "Humulin")]),
    "fentanyl": (r"fentanyl", [("full", "fentanyl"), ("lay", "fentanyl patch")]),
    "tramadol": (r"tramadol", [("full", "tramadol"), ("brand", "Ultram")]),
    "penicillin": (r"penicillin", [("abbr", "PCN"), ("full", "penicillin"), ("abbr", "pen VK")]),
    "medroxyprogesterone": (r"medroxyprogesterone", [("brand", "Depo-Provera"), ("abbr", "Depo shot")]),
    "hydrocodone": (r"hydrocodone", [("full", "hydrocodone"), ("brand", "Norco")]),
    "oxycodone": (r"oxycodone", [("full", "oxycodone"), ("brand", "Percocet")]),
    "epinephrine": (r"epinephrine", [("brand", "EpiPen"), ("full", "epinephrine auto-injector")]),
    "carvedilol": (r"carvedilol", [("full", "carvedilol"), ("brand", "Coreg")]),
    "alendronate": (r"alendron", [("full", "alendronate"), ("brand", "Fosamax")]),
    "nitrofurantoin": (r"nitrofurantoin", [("full", "nitrofurantoin"), ("abbr", "nitrofurantoin susp")]),
    "cyclosporine": (r"cyclosporine", [("full", "cyclosporine")]),
    "metformin": (r"metformin", [("full", "metformin"), ("brand", "Glucophage")]),
    "warfarin": (r"warfarin", [("full", "warfarin"), ("brand", "Coumadin")]),
    "atorvastatin": (r"atorvastatin", [("full", "atorvastatin"), ("brand", "Lipitor")]),
    "furosemide": (r"furosemide", [("full", "furosemide"), ("brand", "Lasix")]),
    "metoprolol": (r"metoprolol", [("full", "metoprolol"), ("brand", "Toprol XL")]),
    # MIMIC local concepts
    "magnesium": (r"magnesium sulfate", [("full", "magnesium sulfate"), ("abbr", "IV mag"), ("abbr", "Mg sulfate")]),
    "calcium gluconate": (r"calcium gluconate", [("full", "calcium gluconate"), ("abbr", "Ca gluc")]),
    "hydromorphone": (r"hydromorphone", [("full", "hydromorphone"), ("brand", "Dilaudid")]),
    "vancomycin": (r"vancomycin", [("full", "vancomycin"), ("abbr", "vanc")]),
    "cefepime": (r"cefepime", [("full", "cefepime"), ("brand", "Maxipime")]),
    "ceftriaxone": (r"ceftriaxone", [("full", "ceftriaxone"), ("brand", "Rocephin")]),
    "phenylephrine": (r"phenylephrine", [("full", "phenylephrine"), ("abbr", "neo")]),
    "fentanyl_iv": (r"fentanyl", [("full", "fentanyl"), ("abbr", "fent")]),
    "filgrastim": (r"filgrastim", [("full", "filgrastim"), ("brand", "Neupogen")]),
    "mannitol": (r"mannitol", [("full", "mannitol")]),
    "heparin": (r"heparin", [("full", "heparin")]),
}
MIMIC_DRUGS = ["magnesium", "calcium gluconate", "hydromorphone", "vancomycin", "cefepime", "ceftriaxone",
               "phenylephrine", "nitroglycerin", "fentanyl_iv", "filgrastim", "mannitol", "heparin"]
SYN_DRUGS = [k for k in DRUGS if k not in MIMIC_DRUGS or k in ("nitroglycerin", "heparin")]

# Conditions: key -> (regex over the lower-cased name, [(register, words)], regex a negative must also avoid)
CONDS = {
    "htn": (r"^essential hypertension$", [("abbr", "HTN"), ("full", "hypertension"), ("lay", "high blood pressure")],
            r"hypertens"),
    "viral sinusitis": (r"^viral sinusitis$", [("full", "viral sinusitis"), ("lay", "a viral sinus infection")],
                        r"sinusitis"),
    "pharyngitis": (r"^acute viral pharyngitis$", [("full", "viral pharyngitis"), ("lay", "a viral sore throat")],
                    r"pharyngitis|sore throat"),
    "bronchitis": (r"^acute bronchitis$", [("full", "acute bronchitis"), ("lay", "a chest cold")], r"bronchitis"),
    "otitis": (r"^otitis media$", [("full", "otitis media"), ("lay", "an ear infection"), ("abbr", "OM")],
               r"otitis"),
    "anemia": (r"^anemia$", [("full", "anemia"), ("typo", "anaemia")], r"anemia"),
    "strep": (r"^streptococcal sore throat$", [("lay", "strep throat"), ("full", "streptococcal pharyngitis")],
              r"streptococcal|pharyngitis|sore throat"),
    "pregnancy": (r"^normal pregnancy$", [("full", "pregnancy"), ("lay", "pregnant")], r"pregnan"),
    "low back pain": (r"^chronic low back pain$", [("abbr", "chronic LBP"), ("full", "chronic low back pain")],
                      r"back pain"),
    "miscarriage": (r"miscarriage", [("full", "miscarriage"), ("abbr", "SAB")], r"miscarriage|abortion|blighted"),
    "knee oa": (r"osteoarthritis of knee", [("abbr", "knee OA"), ("full", "osteoarthritis of the knee")],
                r"osteoarthritis"),
    "covid": (r"^covid-19$", [("abbr", "COVID"), ("full", "COVID-19"), ("lay", "the coronavirus")], r"covid"),
    "concussion": (r"concussion", [("full", "concussion")], r"concussion|brain injury"),
    "ankle sprain": (r"^sprain of ankle$", [("lay", "a twisted ankle"), ("full", "ankle sprain")], r"sprain"),
    "eczema": (r"^atopic dermatitis$", [("lay", "eczema"), ("full", "atopic dermatitis")], r"dermatitis|eczema"),
    "chronic sinusitis": (r"^chronic sinusitis$", [("full", "chronic sinusitis")], r"sinusitis"),
    "neck pain": (r"^chronic neck pain$", [("full", "chronic neck pain")], r"neck pain"),
    "anxiety": (r"severe anxiety", [("lay", "panic attacks"), ("full", "severe anxiety")], r"anxiety|panic"),
    "diabetes": (r"type 2 diabetes mellitus$", [("abbr", "T2DM"), ("full", "type 2 diabetes"), ("lay", "sugar diabetes")],
                 r"diabet"),
    "chf": (r"heart failure", [("abbr", "CHF"), ("full", "congestive heart failure")], r"heart failure"),
    "stroke": (r"cerebrovascular accident", [("abbr", "CVA"), ("lay", "a stroke")], r"cerebrovascular|stroke"),
    "gout": (r"^gout$", [("full", "gout")], r"gout"),
    "osteoporosis": (r"^osteoporosis$", [("full", "osteoporosis"), ("lay", "thin bones")], r"osteopor|osteopenia"),
    "asthma": (r"asthma", [("full", "asthma")], r"asthma"),
    "uti": (r"urinary tract infection|cystitis", [("abbr", "UTI"), ("lay", "a bladder infection")],
            r"urinary tract|cystitis"),
    "alzheimer": (r"alzheimer", [("full", "Alzheimer's"), ("lay", "dementia")], r"alzheimer|dementia"),
    "hypertriglyceridemia": (r"hypertriglyceridemia", [("full", "hypertriglyceridemia"), ("lay", "high triglycerides")],
                             r"triglycerid|hyperlipid"),
    "forearm fracture": (r"fracture of forearm", [("lay", "a broken forearm"), ("full", "forearm fracture")],
                         r"fracture of forearm|fracture of radius|fracture of ulna"),
    # MIMIC local concepts (chart rhythm values, ETOH)
    "afib": (r"^af \(atrial fibrillation\)$", [("abbr", "afib"), ("full", "atrial fibrillation"), ("abbr", "AF")],
             r"atrial fib"),
    "sinus tach": (r"^st \(sinus tachycardia\)$", [("full", "sinus tachycardia"), ("abbr", "sinus tach")],
                   r"sinus tach"),
    "sinus brady": (r"^sb \(sinus bradycardia\)$", [("full", "sinus bradycardia"), ("abbr", "sinus brady")],
                    r"sinus brad"),
    "aflutter": (r"atrial flutter", [("full", "atrial flutter"), ("abbr", "aflutter")], r"flutter"),
}
# Standard condition concepts a MIMIC negative must also avoid (ICD rows without a name in this CONCEPT table).
MIMIC_STD = {"afib": {"313217", "4064452"}, "sinus tach": {"4140598", "4275423"}, "sinus brady": {"4138456", "4171683"},
             "aflutter": {"314665", "4068155"}}
MIMIC_CONDS = ["afib", "sinus tach", "sinus brady", "aflutter"]
SYN_CONDS = [k for k in CONDS if k not in MIMIC_CONDS]

PROCS = {
    "colonoscopy": (r"^colonoscopy$", [("full", "colonoscopy"), ("abbr", "scope")]),
    "tubal": (r"tubal ligation", [("full", "tubal ligation"), ("abbr", "BTL")]),
    "iud": (r"intrauterine contraceptive", [("abbr", "IUD"), ("full", "IUD placement")]),
    "suture": (r"suture open wound", [("lay", "laceration repair"), ("full", "wound suturing")]),
    "immunotherapy": (r"subcutaneous immunotherapy", [("lay", "allergy shots"), ("full", "subcutaneous immunotherapy")]),
    "med rec": (r"^medication reconciliation$", [("abbr", "med rec"), ("full", "medication reconciliation")]),
    "fetal us": (r"ultrasound scan for fetal viability", [("full", "fetal viability ultrasound"), ("abbr", "viability US")]),
    "echo": (r"echo", [("abbr", "echo"), ("full", "echocardiogram")]),
    "cxr": (r"^chest x-ray$", [("abbr", "CXR"), ("full", "chest X-ray")]),
    "ekg": (r"^ekg$", [("abbr", "EKG"), ("abbr", "ECG")]),
    "intubation": (r"^intubation$", [("full", "intubation"), ("lay", "tubed")]),
    "extubation": (r"^extubation$", [("full", "extubation")]),
    "ct": (r"^ct scan$", [("abbr", "CT"), ("full", "CT scan")]),
    "bronch": (r"^bronchoscopy$", [("abbr", "bronch"), ("full", "bronchoscopy")]),
    "picc": (r"^picc line$", [("abbr", "PICC"), ("full", "PICC line")]),
    "niv": (r"^non-invasive ventilation$", [("abbr", "BiPAP/NIV"), ("full", "non-invasive ventilation")]),
    "vent": (r"^invasive ventilation$", [("lay", "on the vent"), ("full", "invasive ventilation")]),
}
SYN_PROCS = ["colonoscopy", "tubal", "iud", "suture", "immunotherapy", "med rec", "fetal us"]
MIMIC_PROCS = ["echo", "cxr", "ekg", "intubation", "extubation", "ct", "bronch", "picc", "niv", "vent"]

VISIT_CLASS = {  # standard visit concepts -> class, as the OMOP vocabulary defines them
    "9201": "IMP", "262": "IMP", "8717": "IMP", "9203": "EMER", "8870": "EMER", "9202": "AMB", "38004207": "AMB",
}
VISIT_WORDS = {  # (plural, singular)
    "EMER": [("ER visits", "ER visit"), ("ED visits", "ED visit"), ("trips to the emergency room", "ER trip"),
             ("emergency department visits", "emergency department visit")],
    "IMP": [("hospital admissions", "hospital admission"), ("inpatient stays", "inpatient stay"),
            ("hospitalizations", "hospitalization"), ("admits", "admit")],
    "AMB": [("outpatient visits", "outpatient visit"), ("clinic visits", "clinic visit"),
            ("office visits", "office visit")],
    "ALL": [("visits", "visit"), ("encounters", "encounter")],
}


def _words(entry, rng):
    reg, w = rng.choice(entry)
    return reg, w


def pron(db, pid):
    g = db.persons[pid]["gender"]
    return ("her", "she") if g == "female" else ("his", "he")


# ----------------------------------------------------------------------------------------- builders


class Builder:
    def __init__(self, db: DB):
        self.db = db

    def rng(self, *parts) -> random.Random:
        return random.Random(":".join([SEED, self.db.name, *map(str, parts)]))  # noqa: S311

    # --- item values
    def values(self, pid, cid, lo=None, hi=None):
        out = [(t, v) for t, c, _, v in self.db.meas[pid] if c == cid and (lo is None or t >= lo) and (hi is None or t <= hi)]
        return sorted(out)

    def items_of(self, pid):
        cids = {c for _, c, _, _ in self.db.meas[pid]}
        return [c for c in ITEMS if c in cids and not any(s in cids for s in SIBLINGS.get(c, []))]

    def pick(self, side, vals):
        """first/latest value; None on a tie at the deciding time."""
        if not vals:
            return None
        t = vals[-1][0] if side == "latest" else vals[0][0]
        at = {v for tt, v in vals if tt == t}
        return None if len(at) > 1 else at.pop()

    def cand_values(self, pid):
        """latest_value, first_value, value_in_window, min_max, average, count_measurements, change, trend, threshold."""
        db, now = self.db, self.db.now[pid]
        out = []
        her, she = pron(db, pid)
        for cid in self.items_of(pid):
            key, names = ITEMS[cid]
            rng = self.rng(pid, cid, "val")
            allv = self.values(pid, cid, hi=now)
            times = [t for t, _ in allv]
            reg, w = _words(names, rng)
            ref = [f"measurement/{cid}"]
            # latest / first
            v = self.pick("latest", allv)
            if v is not None:
                t = rng.choice([f"last {w}?", f"What was {her} most recent {w}?", f"{w} - latest value",
                                f"Can you pull up the latest {w} for this patient?", f"most recent {w} pls"])
                out.append(q(db, pid, "latest_value", f"latest_value/all/{reg}", t, "number", [rnd(v)], refs=ref))
            v = self.pick("first", allv)
            if v is not None:
                t = rng.choice([f"first {w} on file?", f"What was {her} very first {w} on record?",
                                f"earliest recorded {w}", f"Baseline {w} (first ever)?"])
                out.append(q(db, pid, "first_value", f"first_value/all/{reg}", t, "number", [rnd(v)], refs=ref))
            # windows
            wins = relative_windows(now, times, rng) + dated_windows(now, times, rng)
            rng.shuffle(wins)
            for phrase, lo, hi in wins[:3]:
                vals = [(t_, v_) for t_, v_ in allv if lo <= t_ <= hi]
                side = rng.choice(["latest", "first"])
                if vals:
                    v = self.pick(side, vals)
                    if v is not None:
                        t = rng.choice([f"{'last' if side == 'latest' else 'first'} {w} {phrase}?",
                                        f"What was {her} {'most recent' if side == 'latest' else 'earliest'} {w} {phrase}?",
                                        f"{w} {phrase} - {'latest' if side == 'latest' else 'first'} reading"])
                        out.append(q(db, pid, "value_in_window", f"value_in_window/{side}-window/{reg}", t, "number",
                                     [rnd(v)], refs=ref))
                    mm = rng.choice(["max", "min"])
                    vv = [x for _, x in vals]
                    t = rng.choice([f"{'highest' if mm == 'max' else 'lowest'} {w} {phrase}?",
                                    f"{w} {'max' if mm == 'max' else 'min'} {phrase}",
                                    f"What's the {'peak' if mm == 'max' else 'lowest'} {w} {she} had {phrase}?"])
                    out.append(q(db, pid, "min_max", f"min_max/{mm}-window/{reg}", t, "number",
                                 [rnd(max(vv) if mm == "max" else min(vv))], refs=ref))
                    if len(vv) >= 2:
                        t = rng.choice([f"avg {w} {phrase}?", f"What was {her} average {w} {phrase}?",
                                        f"mean {w} {phrase}"])
                        out.append(q(db, pid, "average", f"average/window/{reg}", t, "number",
                                     [rnd(sum(vv) / len(vv))], refs=ref))
                        first, last = self.pick("first", vals), self.pick("latest", vals)
                        if first is not None and last is not None and vals[0][0] != vals[-1][0]:
                            t = rng.choice([f"{w} change {phrase}?", f"How much has {her} {w} changed {phrase}?",
                                            f"net change in {w} {phrase}"])
                            out.append(q(db, pid, "change", f"change/window/{reg}", t, "number", [rnd(last - first)],
                                         tol=0.02, refs=ref))
                            r = (last - first) / abs(first) if first else None
                            if r is not None and abs(abs(r) - 0.05) > 0.01:
                                trend = "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"
                                t = rng.choice([f"{w} trend {phrase}?", f"Is {her} {w} going up or down {phrase}?",
                                                f"How has {her} {w} trended {phrase}?"])
                                out.append(q(db, pid, "trend", f"trend/window/{reg}", t, "string", [trend], refs=ref))
                    t = rng.choice([f"# of {w} readings {phrase}?", f"How many {w} values {phrase}?",
                                    f"how many times was {w} measured {phrase}"])
                    out.append(q(db, pid, "count_measurements", f"count_measurements/window/{reg}", t, "count",
                                 [len(vv)], refs=ref))
            # empty window at a late now
            late = db.late[pid]
            start = add_months(late, -6)
            if allv and allv[-1][0] < start - timedelta(days=8):
                t = rng.choice([f"last {w} in the past 6 months?", f"highest {w} in the last 6 mo?",
                                f"avg {w} over the past six months?"])
                cat = {"l": "value_in_window", "h": "min_max", "a": "average"}[t[0]]
                out.append(q(db, pid, cat, f"{cat}/empty-last/{reg}", t, "number", [], status="no-data", now=late))
            # counts ever
            if allv:
                t = rng.choice([f"how many {w} measurements on record?", f"# {w} results total",
                                f"Count of {w} values in {her} chart?"])
                out.append(q(db, pid, "count_measurements", f"count_measurements/all/{reg}", t, "count", [len(allv)],
                             refs=ref))
                vv = [x for _, x in allv]
                mm = rng.choice(["max", "min"])
                t = rng.choice([f"{'highest' if mm == 'max' else 'lowest'} {w} ever?",
                                f"What's the {'highest' if mm == 'max' else 'lowest'} {w} on record?"])
                out.append(q(db, pid, "min_max", f"min_max/{mm}-all/{reg}", t, "number",
                             [rnd(max(vv) if mm == "max" else min(vv))], refs=ref))
                if len(vv) >= 2:
                    t = rng.choice([f"average {w}?", f"mean {w} across all readings"])
                    out.append(q(db, pid, "average", f"average/all/{reg}", t, "number", [rnd(sum(vv) / len(vv))],
                                 refs=ref))
                cuts = THRESH.get(key)
                if cuts:
                    hi_v, lo_v = max(vv), min(vv)
                    c = rng.choice(cuts)
                    above = rng.random() < 0.5
                    ok = abs(c - (hi_v if above else lo_v)) > 1e-9
                    if ok:
                        if above:
                            t = rng.choice([f"ever {w} > {c}?", f"Has {her} {w} ever been above {c}?",
                                            f"any {w} over {c} on record?"])
                            exp = hi_v > c
                        else:
                            t = rng.choice([f"ever {w} < {c}?", f"Has {her} {w} ever dropped below {c}?",
                                            f"any {w} under {c}?"])
                            exp = lo_v < c
                        out.append(q(db, pid, "threshold", f"threshold/{'above' if above else 'below'}/{reg}", t,
                                     "boolean", [exp], refs=ref))
                # first/last date, time since
                side = rng.choice(["first", "last"])
                d = allv[-1][0] if side == "last" else allv[0][0]
                t = rng.choice([f"when was {her} {side} {w} checked?", f"date of {side} {w}?",
                                f"When did {she} {'first' if side == 'first' else 'last'} have a {w} recorded?"])
                out.append(q(db, pid, "first_last_time", f"first_last_time/{side}-value/{reg}", t, "date",
                             [d.date().isoformat()], refs=ref))
                d = allv[-1][0]
                days = (now.date() - d.date()).days
                if d.hour <= 12 and days <= 400:
                    t = rng.choice([f"days since last {w}?", f"How many days ago was {her} last {w}?"])
                    out.append(q(db, pid, "time_since", f"time_since/days-value/{reg}", t, "count", [days], refs=ref))
        return out

    # --- negatives about values
    def cand_absent_values(self, pid):
        db = self.db
        rng = self.rng(pid, "absent")
        out = []
        her, _ = pron(db, pid)
        names = {(n or "").lower() for _, _, n, _ in db.meas[pid]}
        for full, short in ABSENT_LABS:
            if any(full.lower() in n or short.lower() in n.split() for n in names):
                continue
            if any(full.lower() in (n or "").lower() for rows in db.meas.values() for _, _, n, _ in rows):
                continue
            w = rng.choice([full, short])
            t = rng.choice([f"last {w}?", f"What was {her} most recent {w} level?", f"{w} result?",
                            f"latest {w} value pls"])
            out.append(q(db, pid, "existence_negative", f"existence_negative/absent-lab/{w}", t, "number", [],
                         status="no-data"))
        # items other patients of this database have and this one never had
        if db.meas:
            own = set(self.items_of(pid)) | {c for _, c, _, _ in db.meas[pid]}
            for cid, (key, names_) in ITEMS.items():
                if cid in own or not any(cid == c for rows in db.meas.values() for _, c, _, _ in rows):
                    continue
                if key in ("tc", "ldl", "hdl", "tg") and own & {"3027114", "3009966", "3007070", "3022192"}:
                    continue
                reg, w = _words(names_, rng)
                t = rng.choice([f"last {w}?", f"What was {her} {w}?", f"most recent {w} value"])
                out.append(q(db, pid, "existence_negative", f"existence_negative/never-lab/{reg}", t, "number", [],
                             status="no-data"))
        return out

    # --- drugs, conditions, procedures
    def _match(self, rows, rx, name_of):
        return [r for r in rows if name_of(r) and re.search(rx, name_of(r).lower())]

    def cand_events(self, pid):
        db, now = self.db, self.db.now[pid]
        rng = self.rng(pid, "events")
        her, she = pron(db, pid)
        out = []
        mimic = db.name == "mimic-iv-demo"
        drug_keys = MIMIC_DRUGS if mimic else SYN_DRUGS
        cond_keys = MIMIC_CONDS if mimic else SYN_CONDS
        proc_keys = MIMIC_PROCS if mimic else SYN_PROCS
        drugs = [r for r in db.drugs[pid] if r[0] <= now]
        all_drug_names = {r[2].lower() for rows in db.drugs.values() for r in rows if r[2]}
        for key in drug_keys:
            rx, names = DRUGS[key]
            reg, w = _words(names, rng)
            m = sorted(self._match(drugs, rx, lambda r: r[2]), key=lambda r: r[0])
            if not m:
                if any(re.search(rx, n) for n in all_drug_names):
                    t = rng.choice([f"ever been on {w}?", f"Has {she} ever taken {w}?", f"any {w} in {her} history?",
                                    f"{w} ever prescribed?"])
                    out.append(q(db, pid, "existence_negative", f"existence_negative/drug/{reg}", t, "boolean", [False]))
                continue
            combo = any(" / " in r[2] for r in m) and key not in ("augmentin", "hydrocodone", "oxycodone")
            names_m = sorted({r[2] for r in m})
            t = rng.choice([f"ever on {w}?", f"Has {she} ever been prescribed {w}?", f"hx of {w} use?"])
            out.append(q(db, pid, "existence_positive", f"existence_positive/drug/{reg}", t, "boolean", [True],
                         refs=names_m))
            if combo:
                continue
            t = rng.choice([f"how many {w} Rx?", f"How many times was {w} prescribed?", f"# of {w} prescriptions"])
            out.append(q(db, pid, "count_other", f"count_other/rx-drug/{reg}", t, "count", [len(m)], refs=names_m))
            side = rng.choice(["first", "last"])
            d = m[0][0] if side == "first" else m[-1][0]
            t = rng.choice([f"when was {w} {'first' if side == 'first' else 'last'} prescribed?",
                            f"date {she} {'started' if side == 'first' else 'last got'} {w}?",
                            f"{side} {w} Rx date"])
            out.append(q(db, pid, "first_last_time", f"first_last_time/{side}-rx/{reg}", t, "date",
                         [d.date().isoformat()], refs=names_m))
            d = m[-1][0]
            mo = completed_months(d, now)
            if mo >= 1 and all(completed_months(d + timedelta(days=k), now) == mo for k in (-3, 3)):
                t = rng.choice([f"how many months since last {w} Rx?", f"months since {she} was last prescribed {w}?"])
                out.append(q(db, pid, "time_since", f"time_since/months-rx/{reg}", t, "count", [mo], refs=names_m))
            # after_drug (Synthea only: values exist)
            if not mimic:
                d0 = m[0][0]
                for cid in self.items_of(pid):
                    vals = [(t_, v_) for t_, v_ in self.values(pid, cid, hi=now)]
                    if any(near(t_, d0, 1.1) for t_, _ in vals):
                        continue
                    after = [(t_, v_) for t_, v_ in vals if t_ > d0]
                    if not after:
                        continue
                    side = rng.choice(["first", "latest"])
                    v = self.pick(side, after)
                    if v is None:
                        continue
                    ikey, inames = ITEMS[cid]
                    ireg, iw = _words(inames, rng)
                    t = rng.choice([f"{'first' if side == 'first' else 'last'} {iw} after starting {w}?",
                                    f"What was {her} {'first' if side == 'first' else 'most recent'} {iw} after {w} was started?",
                                    f"{iw} {'right after' if side == 'first' else 'latest since'} {w} start"])
                    out.append(q(db, pid, "after_drug", f"after_drug/{side}/{ireg}+{reg}", t, "number", [rnd(v)],
                                 refs=names_m))
                    break
        conds = [r for r in db.conds[pid] if r[0] <= now]
        all_cond = {(r[2] or "").lower() for rows in db.conds.values() for r in rows}
        for key in cond_keys:
            rx, names, avoid = CONDS[key]
            reg, w = _words(names, rng)
            m = sorted(self._match(conds, rx, lambda r: r[2]), key=lambda r: r[0])
            if not m:
                if not any(re.search(rx, n) for n in all_cond):
                    continue
                if any(re.search(avoid, (r[2] or "").lower()) for r in db.conds[pid]):
                    continue
                if mimic and any(r[4] in MIMIC_STD.get(key, set()) for r in db.conds[pid]):
                    continue
                t = rng.choice([f"hx of {w}?", f"Has {she} ever been diagnosed with {w}?", f"any history of {w}?",
                                f"{w} on {her} problem list ever?"])
                out.append(q(db, pid, "existence_negative", f"existence_negative/condition/{reg}", t, "boolean",
                             [False]))
                continue
            names_m = sorted({r[2] for r in m})
            t = rng.choice([f"hx of {w}?", f"Has {she} ever had {w}?", f"ever dx'd with {w}?"])
            out.append(q(db, pid, "existence_positive", f"existence_positive/condition/{reg}", t, "boolean", [True],
                         refs=names_m))
            side = rng.choice(["first", "last"]) if len(m) > 1 else "first"
            d = m[0][0] if side == "first" else m[-1][0]
            t = rng.choice([f"when was {she} {'first' if side == 'first' else 'last'} diagnosed with {w}?",
                            f"{w} - date of {'first' if side == 'first' else 'most recent'} dx?",
                            f"date of {'onset' if side == 'first' else 'latest episode'} of {w}"])
            out.append(q(db, pid, "first_last_time", f"first_last_time/{side}-dx/{reg}", t, "date",
                         [d.date().isoformat()], refs=names_m))
            if not mimic and db.persons[pid]["birth"] and len(m) == 1:
                b = db.persons[pid]["birth"]
                on = m[0][0].date()
                age = completed_years(b, on)
                if all(completed_years(b, on + timedelta(days=k)) == age for k in (-3, 3)):
                    t = rng.choice([f"How old was {she} when diagnosed with {w}?", f"age at {w} dx?"])
                    out.append(q(db, pid, "age", f"age/at-dx/{reg}", t, "count", [age], refs=names_m))
            if not mimic:
                last = m[-1]
                if not any(near(now, r[1], 1.5) for r in m if r[1]):
                    still = any(r[1] is None or r[1] > now for r in m)
                    t = rng.choice([f"does {she} still have {w}?", f"is {her} {w} still active?",
                                    f"{w} - still an active problem?"])
                    out.append(q(db, pid, "active_conditions", f"active_conditions/still/{reg}", t, "boolean",
                                 [still], refs=[last[2]]))
        procs = [r for r in db.procs[pid] if r[0] <= now]
        all_proc = {(r[1] or "").lower() for rows in db.procs.values() for r in rows}
        for key in proc_keys:
            rx, names = PROCS[key]
            reg, w = _words(names, rng)
            m = sorted(self._match(procs, rx, lambda r: r[1]), key=lambda r: r[0])
            if not m:
                if any(re.search(rx, n) for n in all_proc):
                    t = rng.choice([f"ever had {w}?", f"Has {she} had {w} done?", f"any {w} on record?"])
                    out.append(q(db, pid, "existence_negative", f"existence_negative/procedure/{reg}", t, "boolean",
                                 [False]))
                continue
            names_m = sorted({r[1] for r in m})
            t = rng.choice([f"ever had {w}?", f"Has {she} had {w} done?", f"any {w} on record?"])
            out.append(q(db, pid, "existence_positive", f"existence_positive/procedure/{reg}", t, "boolean", [True],
                         refs=names_m))
            t = rng.choice([f"{w} count?", f"# of {w} procedures on record", f"How many times has {she} had {w}?"])
            out.append(q(db, pid, "count_other", f"count_other/procedure/{reg}", t, "count", [len(m)], refs=names_m))
            side = rng.choice(["first", "last"])
            d = m[0][0] if side == "first" else m[-1][0]
            t = rng.choice([f"date of {side} {w}?", f"When was {her} {'first' if side == 'first' else 'most recent'} {w}?"])
            out.append(q(db, pid, "first_last_time", f"first_last_time/{side}-proc/{reg}", t, "date",
                         [d.date().isoformat()], refs=names_m))
            d = m[-1][0]
            yrs = completed_years(d.date(), now.date())
            if yrs >= 1 and all(completed_years((d + timedelta(days=k)).date(), now.date()) == yrs for k in (-3, 3)):
                t = rng.choice([f"how many years since {her} last {w}?", f"yrs since last {w}?"])
                out.append(q(db, pid, "time_since", f"time_since/years-proc/{reg}", t, "count", [yrs], refs=names_m))
        # prescriptions in total (Synthea: every row is a pharmacy claim)
        if not mimic:
            wins = relative_windows(now, [r[0] for r in drugs], rng)
            if wins:
                phrase, lo, hi = rng.choice(wins)
                n = sum(1 for r in drugs if lo <= r[0] <= hi)
                t = rng.choice([f"how many prescriptions {phrase}?", f"# Rx {phrase}", f"total meds prescribed {phrase}?"])
                out.append(q(db, pid, "count_other", "count_other/rx-all/any", t, "count", [n]))
        return out

    # --- encounters
    def cand_visits(self, pid):
        db, now = self.db, self.db.now[pid]
        rng = self.rng(pid, "visits")
        her, she = pron(db, pid)
        out = []
        visits = sorted(r for r in db.visits[pid] if r[0] <= now)
        if not visits:
            return out
        kinds = {c for _, c in visits}
        unknown = any(c not in VISIT_CLASS for c in kinds)
        for cls in ["EMER", "IMP", "AMB", "ALL"]:
            if cls == "EMER" and "262" in kinds:
                continue  # an ER-then-inpatient visit: is it an ED visit? ambiguous
            if cls == "AMB" and unknown:
                continue  # observation room / ambulatory surgery: outpatient or not? ambiguous
            sel = [t for t, c in visits if cls == "ALL" or VISIT_CLASS.get(c) == cls]
            w, w1 = rng.choice(VISIT_WORDS[cls])
            times = [t for t, _ in visits]
            wins = [("", None, None)] + relative_windows(now, times, rng) + dated_windows(now, times, rng)
            for phrase, lo, hi in rng.sample(wins, min(2, len(wins))):
                n = sum(1 for t in sel if (lo is None or lo <= t) and (hi is None or t <= hi))
                p = f" {phrase}" if phrase else rng.choice(["", " total", " ever"])
                t = rng.choice([f"# {w}{p}?", f"How many {w} has {she} had{p}?", f"count of {w}{p}",
                                f"number of {w}{p}?"])
                out.append(q(db, pid, "count_encounters", f"count_encounters/{cls}-{'all' if lo is None else 'window'}/any",
                             t, "count", [n]))
            if sel:
                side = rng.choice(["first", "last"])
                d = sel[0] if side == "first" else sel[-1]
                t = rng.choice([f"date of {side} {w1}?", f"When was {her} {'first' if side == 'first' else 'most recent'} {w1}?",
                                f"{side} {w1} - when?"])
                out.append(q(db, pid, "first_last_time", f"first_last_time/{side}-{cls}/any", t, "date",
                             [d.date().isoformat()]))
                d = sel[-1]
                days = (now.date() - d.date()).days
                if d.hour <= 12 and days <= 365:
                    t = rng.choice([f"days since last {w1}?", f"How many days since {her} last {w1}?"])
                    out.append(q(db, pid, "time_since", f"time_since/days-{cls}/any", t, "count", [days]))
        return out

    # --- demographics, age, active problems
    def cand_people(self, pid):
        db, now = self.db, self.db.now[pid]
        rng = self.rng(pid, "people")
        her, she = pron(db, pid)
        p = db.persons[pid]
        out = []
        if p["gender"]:
            t = rng.choice(["sex?", "gender", "Is this patient male or female?", "pt's sex"])
            out.append(q(db, pid, "demographics", "demographics/gender/any", t, "string", [p["gender"]]))
        dead = pid in db.death and db.death[pid] <= now
        kind = rng.choice(["deceased", "alive"])
        t = rng.choice(["deceased?", "Is the patient deceased?", "has this patient died?"] if kind == "deceased"
                       else ["alive?", f"Is {she} still alive?", "pt living?"])
        out.append(q(db, pid, "demographics", f"demographics/{kind}/any", t, "boolean",
                     [dead if kind == "deceased" else not dead]))
        if dead:
            t = rng.choice(["date of death?", "DOD", f"When did {she} die?"])
            out.append(q(db, pid, "demographics", "demographics/death-date/any", t, "date",
                         [db.death[pid].date().isoformat()]))
        b = p["birth"] if db.name != "mimic-iv-demo" else None  # MIMIC keeps the year of birth only
        if b:
            t = rng.choice(["DOB?", "date of birth", f"When was {she} born?", "birthdate?"])
            out.append(q(db, pid, "demographics", "demographics/birth-date/any", t, "date", [b.isoformat()]))
            end = db.death[pid].date() if dead else now.date()
            age = completed_years(b, end)
            if all(completed_years(b, end + timedelta(days=k)) == age for k in (-3, 3)):
                t = rng.choice(["age?", f"How old is {she}?", "pt age", f"{her} age"] if not dead
                               else [f"How old was {she} when {she} died?", "age at death?"])
                out.append(q(db, pid, "age", f"age/{'death' if dead else 'now'}/any", t, "count", [age]))
        if db.name != "mimic-iv-demo":
            for at_now in (True, False):
                if at_now:
                    at, phrase = now, rng.choice(["", " now", " currently"])
                else:
                    starts = sorted({r[0] for r in db.conds[pid]})
                    if not starts:
                        continue
                    at = rng.choice(starts) + timedelta(days=rng.randint(10, 200), hours=12)
                    if at > now:
                        continue
                    phrase = f" on {fmt_date(at.date(), rng)}"
                bounds = [r[0] for r in db.conds[pid]] + [r[1] for r in db.conds[pid] if r[1]]
                if any(near(x, at, 1.5) for x in bounds):
                    continue
                act = sorted({r[2] for r in db.conds[pid] if r[0] <= at and (r[1] is None or r[1] > at)})
                t = rng.choice([f"active problems{phrase}?", f"What conditions did {she} have{phrase}?"
                                if not at_now else f"What's on {her} active problem list{phrase}?",
                                f"problem list{phrase}", f"active dx{phrase}"])
                out.append(q(db, pid, "active_conditions", f"active_conditions/{'now' if at_now else 'at-date'}/any",
                             t, "list", act, now=now))
        return out


# ------------------------------------------------------------------------------------------ assembly

QUOTA = {
    "synthea27nj": {
        "latest_value": 8, "first_value": 6, "value_in_window": 8, "min_max": 8, "average": 6, "count_measurements": 6,
        "change": 5, "trend": 5, "threshold": 7, "after_drug": 4, "count_encounters": 8, "count_other": 8,
        "existence_positive": 8, "existence_negative": 10, "first_last_time": 10, "time_since": 6,
        "active_conditions": 8, "age": 5, "demographics": 6,
    },
    "mimic-iv-demo": {
        "count_encounters": 10, "count_other": 8, "existence_positive": 10, "existence_negative": 10,
        "first_last_time": 10, "time_since": 6, "demographics": 8,
    },
}


def select(db: DB, cands: list[dict]) -> list[dict]:
    by_cat = defaultdict(list)
    for c in cands:
        by_cat[c["category"]].append(c)
    out = []
    for cat, n in QUOTA[db.name].items():
        pool = by_cat.get(cat, [])
        rng = random.Random(f"{SEED}:{db.name}:{cat}:select")  # noqa: S311
        rng.shuffle(pool)
        # spread over patients and patterns: round-robin over (pattern) then patients
        by_pat = defaultdict(list)
        for c in pool:
            by_pat[c["template"].split("/")[1]].append(c)
        pats = sorted(by_pat)
        rng.shuffle(pats)
        chosen, per_patient, seen_q = [], defaultdict(int), set()
        empties = 0
        while len(chosen) < n and any(by_pat[p] for p in pats):
            for p in pats:
                while by_pat[p]:
                    c = by_pat[p].pop()
                    key = (c["patient_id"], c["question"])
                    if per_patient[c["patient_id"]] >= 2 or key in seen_q:
                        continue
                    if c["answer_type"] == "list" and not c["expected"]:
                        if empties >= 2:
                            continue
                        empties += 1
                    chosen.append(c)
                    per_patient[c["patient_id"]] += 1
                    seen_q.add(key)
                    break
                if len(chosen) >= n:
                    break
        out += chosen
    return out


def build() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(DATA / "synthea27nj" / "Synthea27Nj_5.4.zip") as z:
            for m in z.namelist():
                if m.endswith(".csv") and not m.startswith("__MACOSX"):
                    (Path(tmp) / Path(m).name).write_bytes(z.read(m))
        dbs = [DB("synthea27nj", Path(tmp)), DB("mimic-iv-demo", DATA / "mimic-iv-demo-omop-5.3")]
    for db in dbs:
        b = Builder(db)
        cands = []
        for pid in sorted(db.now):
            cands += b.cand_values(pid) + b.cand_absent_values(pid) + b.cand_events(pid) + b.cand_visits(pid)
            cands += b.cand_people(pid)
        rows += select(db, cands)
    counters = defaultdict(int)
    out = []
    for r in rows:
        counters[r["category"]] += 1
        r = {"id": f"omop-{r['category']}-{counters[r['category']]:03d}", **r}
        out.append(r)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in build())
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("up to date" if same else "stale")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    n = text.count("\n")
    print(f"wrote {n} questions to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
