"""Blind probe of fhirqa over a relational EHR in MIMIC-III v1.4 form.

Generates ~20 synthetic ICU patients with a seeded RNG as MIMIC-III CSV files (the real table and column
names, upper case, as PhysioNet ships them: PATIENTS.csv, ADMISSIONS.csv, ICUSTAYS.csv, LABEVENTS.csv +
D_LABITEMS.csv, CHARTEVENTS.csv + D_ITEMS.csv, PRESCRIPTIONS.csv, INPUTEVENTS_MV.csv, DIAGNOSES_ICD.csv +
D_ICD_DIAGNOSES.csv, PROCEDURES_ICD.csv + D_ICD_PROCEDURES.csv), a typed DuckDB copy, and the question set
whose gold answers are computed here, in plain Python over the generated rows, then re-derived by SQL over the
DuckDB copy (exit 2 when the two disagree). Imports nothing from fhirqa.

    python evals/probe_mimic3/build.py --out DIR            # DIR/csv/*.csv, DIR/mimic3.duckdb, questions.jsonl
    python evals/probe_mimic3/build.py --out DIR --check    # exit 1 when questions.jsonl is stale

MIMIC-III quirks kept: dates shifted into 2100-2200, SUBJECT_ID/HADM_ID/ICUSTAY_ID keys, PRESCRIPTIONS dated by
day (STARTDATE/ENDDATE at midnight), FLAG = 'abnormal', temperature unit '?F', CHARTEVENTS rows marked ERROR = 1
(left out of the gold), INPUTEVENTS_MV rows 'Rewritten' (superseded, not given: left out of the gold),
ICD-9 codes without dots.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions.jsonl"
SEED = "probe-mimic3-v1"
TS = "%Y-%m-%d %H:%M:%S"

# ---------------------------------------------------------------- dictionaries (real MIMIC-III ITEMIDs)
# itemid, label, fluid, category, loinc, unit, ref low, ref high, decimals, (baseline low, high)
LABS = {
    "creatinine": (50912, "Creatinine", "Blood", "Chemistry", "2160-0", "mg/dL", 0.5, 1.2, 1, (0.7, 1.4)),
    "potassium": (50971, "Potassium", "Blood", "Chemistry", "2823-3", "mEq/L", 3.3, 5.1, 1, (3.5, 4.8)),
    "sodium": (50983, "Sodium", "Blood", "Chemistry", "2951-2", "mEq/L", 133, 145, 0, (134, 144)),
    "bun": (51006, "Urea Nitrogen", "Blood", "Chemistry", "3094-0", "mg/dL", 6, 20, 0, (10, 30)),
    "glucose": (50931, "Glucose", "Blood", "Chemistry", "2345-7", "mg/dL", 70, 105, 0, (90, 180)),
    "hemoglobin": (51222, "Hemoglobin", "Blood", "Hematology", "718-7", "g/dL", 12, 16, 1, (8.5, 13.5)),
    "wbc": (51301, "White Blood Cells", "Blood", "Hematology", "804-5", "K/uL", 4.0, 11.0, 1, (6, 16)),
    "platelets": (51265, "Platelet Count", "Blood", "Hematology", "777-3", "K/uL", 150, 440, 0, (120, 350)),
    "lactate": (50813, "Lactate", "Blood", "Blood Gas", "32693-4", "mmol/L", 0.5, 2.0, 1, (1.2, 4.5)),
}
# in D_LABITEMS, charted for nobody (no-data questions)
UNUSED_LABS = [
    (51237, "INR(PT)", "Blood", "Hematology", "5895-7"),
    (51003, "Troponin T", "Blood", "Chemistry", "6598-7"),
    (50963, "NTproBNP", "Blood", "Chemistry", "33762-6"),
    (50960, "Magnesium", "Blood", "Chemistry", "2601-3"),
    (50861, "Alanine Aminotransferase (ALT)", "Blood", "Chemistry", "1742-6"),
]
# itemid, label, abbreviation, category, unit, decimals, (low, high) baseline
VITALS = {
    "hr": (220045, "Heart Rate", "HR", "Routine Vital Signs", "bpm", 0, (70, 115)),
    "sbp": (220179, "Non Invasive Blood Pressure systolic", "NBPs", "Routine Vital Signs", "mmHg", 0, (95, 150)),
    "dbp": (220180, "Non Invasive Blood Pressure diastolic", "NBPd", "Routine Vital Signs", "mmHg", 0, (50, 85)),
    "map": (220181, "Non Invasive Blood Pressure mean", "NBPm", "Routine Vital Signs", "mmHg", 0, (65, 100)),
    "spo2": (220277, "O2 saturation pulseoxymetry", "SpO2", "Respiratory", "%", 0, (92, 99)),
    "rr": (220210, "Respiratory Rate", "RR", "Respiratory", "insp/min", 0, (14, 26)),
    "temp": (223761, "Temperature Fahrenheit", "Temperature F", "Routine Vital Signs", "?F", 1, (97.5, 100.5)),
}
# MetaVision input items
INPUTS = {
    "vancomycin": (225798, "Vancomycin", "Vanco", "Antibiotics", "mg"),
    "heparin": (225152, "Heparin Sodium", "Heparin Sodium", "Medications", "units"),
    "insulin": (223258, "Insulin - Regular", "Insulin - Regular", "Medications", "units"),
    "furosemide": (221794, "Furosemide (Lasix)", "Furosemide (Lasix)", "Medications", "mg"),
    "norepinephrine": (221906, "Norepinephrine", "Norepinephrine", "Medications", "mg"),
}
# prescriptions: key -> DRUG, DRUG_NAME_GENERIC, FORMULARY_DRUG_CD, PROD_STRENGTH, DOSE, UNIT, FORM_VAL, FORM_UNIT, ROUTE
RX = {
    "vancomycin": ("Vancomycin", "Vancomycin HCl", "VANC1F", "1g Frozen Bag", "1000", "mg", "1", "BAG", "IV"),
    "heparin": ("Heparin", "Heparin Sodium", "HEPA5I", "5000 Units / mL- 1mL Vial", "5000", "UNIT", "1", "mL", "SC"),
    "heparin_gtt": ("Heparin", "Heparin Sodium", "HEPBASE", "25,000 unit Premix Bag", "25000", "UNIT", "250",
                    "mL", "IV"),
    "insulin": ("Insulin", "Insulin Regular Human", "INSULIN", "100 Units / mL - 10 mL Vial", "0", "UNIT", "0",
                "mL", "SC"),
    "furosemide": ("Furosemide", "Furosemide", "FURO40I", "40mg/4mL Vial", "40", "mg", "4", "mL", "IV"),
    "metoprolol": ("Metoprolol Tartrate", "Metoprolol Tartrate", "METO25", "25mg Tablet", "25", "mg", "1", "TAB",
                   "PO"),
    "acetaminophen": ("Acetaminophen", "Acetaminophen", "ACET325", "325mg Tablet", "650", "mg", "2", "TAB", "PO"),
    "pantoprazole": ("Pantoprazole", "Pantoprazole Sodium", "PANT40I", "40mg Vial", "40", "mg", "1", "VIAL", "IV"),
    "kcl": ("Potassium Chloride", "Potassium Chloride", "KCL20P", "20mEq Packet", "40", "mEq", "2", "PKT", "PO"),
    "magnesium": ("Magnesium Sulfate", "Magnesium Sulfate", "MAG2PM", "2 g / 50 mL Premix Bag", "2", "gm", "50",
                  "mL", "IV"),
    "piptazo": ("Piperacillin-Tazobactam Na", "Piperacillin-Tazobactam", "PIPT4.5F", "4.5 g Frozen Bag", "4.5",
                "g", "1", "BAG", "IV"),
    "docusate": ("Docusate Sodium", "Docusate Sodium", "DOCU100", "100mg Capsule", "100", "mg", "1", "CAP", "PO"),
    "ondansetron": ("Ondansetron", "Ondansetron", "ONDAN2I", "2mg/mL-2mL", "4", "mg", "2", "mL", "IV"),
    "warfarin": ("Warfarin", "Warfarin", "WARF5", "5mg Tablet", "5", "mg", "1", "TAB", "PO"),
    "lisinopril": ("Lisinopril", "Lisinopril", "LISI10", "10mg Tablet", "10", "mg", "1", "TAB", "PO"),
    "atorvastatin": ("Atorvastatin", "Atorvastatin Calcium", "ATOR40", "40mg Tablet", "40", "mg", "1", "TAB",
                     "PO"),
}
BASE_RX = [("0.9% Sodium Chloride", "NS1000", "1000mL Bag", "1000", "mL"), ("D5W", "D5W250", "250 mL Bag", "250",
                                                                              "mL")]
DX = {
    "0389": ("Septicemia NOS", "Unspecified septicemia"),
    "99592": ("Severe sepsis", "Severe sepsis"),
    "78552": ("Septic shock", "Septic shock"),
    "5849": ("Acute kidney failure NOS", "Acute kidney failure, unspecified"),
    "4280": ("CHF NOS", "Congestive heart failure, unspecified"),
    "42731": ("Atrial fibrillation", "Atrial fibrillation"),
    "4019": ("Hypertension NOS", "Unspecified essential hypertension"),
    "25000": ("DMII wo cmp nt st uncntr", "Diabetes mellitus without mention of complication, type II or "
              "unspecified type, not stated as uncontrolled"),
    "486": ("Pneumonia, organism NOS", "Pneumonia, organism unspecified"),
    "5990": ("Urin tract infection NOS", "Urinary tract infection, site not specified"),
    "2767": ("Hyperpotassemia", "Hyperpotassemia"),
    "2761": ("Hyposmolality", "Hyposmolality and/or hyponatremia"),
    "41401": ("Crnry athrsl natve vssl", "Coronary atherosclerosis of native coronary artery"),
    "51881": ("Acute respiratry failure", "Acute respiratory failure"),
    "2851": ("Ac posthemorrhag anemia", "Acute posthemorrhagic anemia"),
    "5070": ("Food/vomit pneumonitis", "Pneumonitis due to inhalation of food or vomitus"),
    "41071": ("Subendo infarct, initial", "Subendocardial infarction, initial episode of care"),
    "5789": ("Gastrointest hemorr NOS", "Hemorrhage of gastrointestinal tract, unspecified"),
    "2724": ("Hyperlipidemia NEC/NOS", "Other and unspecified hyperlipidemia"),
    "V5861": ("Long-term use anticoagul", "Long-term (current) use of anticoagulants"),
}
PX = {
    "9604": ("Insert endotracheal tube", "Insertion of endotracheal tube"),
    "9672": ("Cont inv mec ven 96+ hrs", "Continuous invasive mechanical ventilation for 96 consecutive hours or "
             "more"),
    "9671": ("Cont inv mec ven <96 hrs", "Continuous invasive mechanical ventilation for less than 96 consecutive "
             "hours"),
    "3893": ("Venous cath NEC", "Venous catheterization, not elsewhere classified"),
    "3995": ("Hemodialysis", "Hemodialysis"),
    "3891": ("Arterial catheterization", "Arterial catheterization"),
    "4513": ("Sm bowel endoscopy NEC", "Other endoscopy of small intestine"),
}
# admission profiles: primary dx, secondary pool, drugs, lab drifts per day
PROFILES = {
    "sepsis": {"primary": "0389", "extra": ["99592", "78552", "5849", "486", "5990", "4019", "25000", "2724"],
               "drugs": ["vancomycin", "piptazo", "heparin", "acetaminophen", "pantoprazole", "kcl"],
               "inputs": ["vancomycin", "norepinephrine", "insulin"], "lactate": True,
               "drift": {"creatinine": 0.12, "wbc": -0.05, "lactate": -0.15}},
    "chf": {"primary": "4280", "extra": ["42731", "4019", "41401", "2724", "5849", "25000", "2761"],
            "drugs": ["furosemide", "metoprolol", "heparin", "kcl", "atorvastatin", "lisinopril", "docusate"],
            "inputs": ["furosemide", "heparin"], "lactate": False,
            "drift": {"creatinine": 0.06, "sodium": -0.004, "potassium": -0.03}},
    "aki": {"primary": "5849", "extra": ["2767", "4019", "25000", "4280", "2724", "2761"],
            "drugs": ["heparin", "insulin", "acetaminophen", "ondansetron", "docusate"],
            "inputs": ["insulin"], "lactate": False,
            "drift": {"creatinine": -0.08, "potassium": -0.04, "bun": -0.06}},
    "gi_bleed": {"primary": "5789", "extra": ["2851", "4019", "42731", "V5861", "2724"],
                 "drugs": ["pantoprazole", "ondansetron", "acetaminophen", "magnesium"],
                 "inputs": [], "lactate": True,
                 "drift": {"hemoglobin": 0.04, "lactate": -0.1}},
    "resp": {"primary": "51881", "extra": ["486", "5070", "4019", "4280", "25000", "2724"],
             "drugs": ["piptazo", "heparin", "insulin", "acetaminophen", "pantoprazole", "magnesium"],
             "inputs": ["insulin", "heparin"], "lactate": True,
             "drift": {"wbc": -0.04, "glucose": -0.02}},
    "nstemi": {"primary": "41071", "extra": ["41401", "4019", "2724", "42731", "4280"],
               "drugs": ["heparin_gtt", "metoprolol", "atorvastatin", "lisinopril", "docusate", "warfarin"],
               "inputs": ["heparin"], "lactate": False,
               "drift": {"creatinine": 0.02}},
}

COLUMNS = {
    "PATIENTS": ["ROW_ID", "SUBJECT_ID", "GENDER", "DOB", "DOD", "DOD_HOSP", "DOD_SSN", "EXPIRE_FLAG"],
    "ADMISSIONS": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ADMITTIME", "DISCHTIME", "DEATHTIME", "ADMISSION_TYPE",
                   "ADMISSION_LOCATION", "DISCHARGE_LOCATION", "INSURANCE", "LANGUAGE", "RELIGION",
                   "MARITAL_STATUS", "ETHNICITY", "EDREGTIME", "EDOUTTIME", "DIAGNOSIS", "HOSPITAL_EXPIRE_FLAG",
                   "HAS_CHARTEVENTS_DATA"],
    "ICUSTAYS": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ICUSTAY_ID", "DBSOURCE", "FIRST_CAREUNIT", "LAST_CAREUNIT",
                 "FIRST_WARDID", "LAST_WARDID", "INTIME", "OUTTIME", "LOS"],
    "D_LABITEMS": ["ROW_ID", "ITEMID", "LABEL", "FLUID", "CATEGORY", "LOINC_CODE"],
    "LABEVENTS": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ITEMID", "CHARTTIME", "VALUE", "VALUENUM", "VALUEUOM",
                  "FLAG"],
    "D_ITEMS": ["ROW_ID", "ITEMID", "LABEL", "ABBREVIATION", "DBSOURCE", "LINKSTO", "CATEGORY", "UNITNAME",
                "PARAM_TYPE", "CONCEPTID"],
    "CHARTEVENTS": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ICUSTAY_ID", "ITEMID", "CHARTTIME", "STORETIME", "CGID",
                    "VALUE", "VALUENUM", "VALUEUOM", "WARNING", "ERROR", "RESULTSTATUS", "STOPPED"],
    "PRESCRIPTIONS": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ICUSTAY_ID", "STARTDATE", "ENDDATE", "DRUG_TYPE", "DRUG",
                      "DRUG_NAME_POE", "DRUG_NAME_GENERIC", "FORMULARY_DRUG_CD", "GSN", "NDC", "PROD_STRENGTH",
                      "DOSE_VAL_RX", "DOSE_UNIT_RX", "FORM_VAL_DISP", "FORM_UNIT_DISP", "ROUTE"],
    "INPUTEVENTS_MV": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "ICUSTAY_ID", "STARTTIME", "ENDTIME", "ITEMID", "AMOUNT",
                       "AMOUNTUOM", "RATE", "RATEUOM", "STORETIME", "CGID", "ORDERID", "LINKORDERID",
                       "ORDERCATEGORYNAME", "SECONDARYORDERCATEGORYNAME", "ORDERCOMPONENTTYPEDESCRIPTION",
                       "ORDERCATEGORYDESCRIPTION", "PATIENTWEIGHT", "TOTALAMOUNT", "TOTALAMOUNTUOM", "ISOPENBAG",
                       "CONTINUEINNEXTDOSE", "CANCELREASON", "STATUSDESCRIPTION", "COMMENTS_EDITEDBY",
                       "COMMENTS_CANCELEDBY", "COMMENTS_DATE", "ORIGINALAMOUNT", "ORIGINALRATE"],
    "DIAGNOSES_ICD": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "SEQ_NUM", "ICD9_CODE"],
    "D_ICD_DIAGNOSES": ["ROW_ID", "ICD9_CODE", "SHORT_TITLE", "LONG_TITLE"],
    "PROCEDURES_ICD": ["ROW_ID", "SUBJECT_ID", "HADM_ID", "SEQ_NUM", "ICD9_CODE"],
    "D_ICD_PROCEDURES": ["ROW_ID", "ICD9_CODE", "SHORT_TITLE", "LONG_TITLE"],
}
TYPES = {  # MIMIC-III v1.4 PostgreSQL types, for the DuckDB copy
    "ROW_ID": "INTEGER", "SUBJECT_ID": "INTEGER", "HADM_ID": "INTEGER", "ICUSTAY_ID": "INTEGER",
    "ITEMID": "INTEGER", "SEQ_NUM": "INTEGER", "CGID": "INTEGER", "ORDERID": "INTEGER", "LINKORDERID": "INTEGER",
    "EXPIRE_FLAG": "INTEGER", "HOSPITAL_EXPIRE_FLAG": "SMALLINT", "HAS_CHARTEVENTS_DATA": "SMALLINT",
    "FIRST_WARDID": "SMALLINT", "LAST_WARDID": "SMALLINT", "WARNING": "INTEGER", "ERROR": "INTEGER",
    "CONCEPTID": "INTEGER", "ISOPENBAG": "SMALLINT", "CONTINUEINNEXTDOSE": "SMALLINT", "CANCELREASON": "SMALLINT",
    "VALUENUM": "DOUBLE", "AMOUNT": "DOUBLE", "RATE": "DOUBLE", "PATIENTWEIGHT": "DOUBLE", "TOTALAMOUNT": "DOUBLE",
    "ORIGINALAMOUNT": "DOUBLE", "ORIGINALRATE": "DOUBLE", "LOS": "DOUBLE",
}
TIME_COLS = {"DOB", "DOD", "DOD_HOSP", "DOD_SSN", "ADMITTIME", "DISCHTIME", "DEATHTIME", "EDREGTIME", "EDOUTTIME",
             "INTIME", "OUTTIME", "CHARTTIME", "STORETIME", "STARTDATE", "ENDDATE", "STARTTIME", "ENDTIME",
             "COMMENTS_DATE"}


def _rng(*parts: object) -> random.Random:
    """An RNG seeded by a string, so every draw is reproducible (never hash() or the clock)."""
    return random.Random("/".join([SEED, *map(str, parts)]))  # noqa: S311 - reproducible draws, not secrets


def _fmt(t: datetime | None) -> str:
    return t.strftime(TS) if t else ""


def _round(x: float, d: int) -> float:
    return round(x, d) if d else float(round(x))


# ------------------------------------------------------------------------------------------- generation
class Db:
    """The generated tables, as lists of dicts keyed by MIMIC column names."""

    def __init__(self) -> None:
        self.t: dict[str, list[dict]] = {name: [] for name in COLUMNS}
        self.ids: dict[str, int] = {}

    def add(self, table: str, **row) -> dict:
        rid = self.ids.get(table, 0) + 1
        self.ids[table] = rid
        row = {"ROW_ID": rid, **row}
        self.t[table].append(row)
        return row


def build_dictionaries(db: Db) -> None:
    for itemid, label, fluid, cat, loinc, *_r in LABS.values():
        db.add("D_LABITEMS", ITEMID=itemid, LABEL=label, FLUID=fluid, CATEGORY=cat, LOINC_CODE=loinc)
    for itemid, label, fluid, cat, loinc in UNUSED_LABS:
        db.add("D_LABITEMS", ITEMID=itemid, LABEL=label, FLUID=fluid, CATEGORY=cat, LOINC_CODE=loinc)
    for itemid, label, abbr, cat, unit, *_r in VITALS.values():
        db.add("D_ITEMS", ITEMID=itemid, LABEL=label, ABBREVIATION=abbr, DBSOURCE="metavision",
               LINKSTO="chartevents", CATEGORY=cat, UNITNAME=unit, PARAM_TYPE="Numeric", CONCEPTID=None)
    for itemid, label, abbr, cat, unit in INPUTS.values():
        db.add("D_ITEMS", ITEMID=itemid, LABEL=label, ABBREVIATION=abbr, DBSOURCE="metavision",
               LINKSTO="inputevents_mv", CATEGORY=cat, UNITNAME=unit, PARAM_TYPE="Solution", CONCEPTID=None)
    for code, (short, long) in DX.items():
        db.add("D_ICD_DIAGNOSES", ICD9_CODE=code, SHORT_TITLE=short, LONG_TITLE=long)
    for code, (short, long) in PX.items():
        db.add("D_ICD_PROCEDURES", ICD9_CODE=code, SHORT_TITLE=short, LONG_TITLE=long)


def gen_patient(db: Db, i: int) -> dict:
    """One patient: 1-4 admissions, the last with an ICU stay; returns a summary used by the gold."""
    r = _rng("patient", i)
    sid = 10000 + i * 211 + r.randrange(0, 200)
    gender = r.choice("MF")
    dob = datetime(r.randrange(2040, 2120), r.randrange(1, 13), r.randrange(1, 29))
    age0 = r.randrange(28, 84)
    t = datetime(dob.year + age0, r.randrange(1, 13), r.randrange(1, 29), r.randrange(0, 24), r.randrange(60))
    if t.year < 2100:
        t = t.replace(year=2100 + r.randrange(0, 40))
        dob = dob.replace(year=t.year - age0)
    n_adm = r.choice([1, 1, 2, 2, 3, 4])
    profiles = [r.choice(sorted(PROFILES)) for _ in range(n_adm)]
    dies = i % 5 == 3  # in-hospital death at the last admission
    pat = {"sid": sid, "gender": gender, "dob": dob, "adms": [], "dod": None, "i": i}
    for k in range(n_adm):
        if k:
            t = t + timedelta(days=r.randrange(40, 700), hours=r.randrange(0, 24), minutes=r.randrange(60))
        last = k == n_adm - 1
        adm = gen_admission(db, r, pat, t, profiles[k], icu=last or r.random() < 0.5, death=last and dies)
        pat["adms"].append(adm)
        t = adm["disch"]
        if not last and r.random() < 0.6:  # an outpatient lab between admissions (HADM_ID empty)
            ot = t + timedelta(days=r.randrange(8, 30), hours=r.randrange(8, 16) - t.hour, minutes=r.randrange(60))
            for key in ("creatinine", "potassium"):
                lab(db, r, pat, None, key, ot, LABS[key][9][0] + r.random() * 0.6)
    last = pat["adms"][-1]
    if dies:
        pat["dod"] = last["disch"]
    elif i % 7 == 5:  # death after discharge, known from the social security index only
        pat["dod"] = last["disch"] + timedelta(days=r.randrange(30, 200))
    dod = pat["dod"]
    dday = dod.replace(hour=0, minute=0, second=0) if dod else None
    db.add("PATIENTS", SUBJECT_ID=sid, GENDER=gender, DOB=dob, DOD=dday, DOD_HOSP=dday if dies else None,
           DOD_SSN=dday if dod and not dies else None, EXPIRE_FLAG=1 if dod else 0)
    end = dod if dod and dod > last["disch"] else last["disch"]
    pat["now"] = datetime(end.year, end.month, end.day, 12) + timedelta(days=r.randrange(3, 22))
    if pat["now"].day > 28:
        pat["now"] = pat["now"] + timedelta(days=5)
    return pat


def lab(db: Db, r: random.Random, pat: dict, hadm: int | None, key: str, t: datetime, value: float) -> dict:
    itemid, _label, _f, _c, _l, unit, lo, hi, dec, _b = LABS[key]
    v = _round(max(value, 0.1), dec)
    text = str(int(v)) if dec == 0 else f"{v:.{dec}f}"
    row = db.add("LABEVENTS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ITEMID=itemid, CHARTTIME=t, VALUE=text,
                 VALUENUM=v, VALUEUOM=unit, FLAG="abnormal" if (v < lo or v > hi) else None)
    pat.setdefault("labs", []).append({"key": key, "t": t, "v": v, "hadm": hadm, "ref": f"labevents/{row['ROW_ID']}"})
    return row


def gen_admission(db: Db, r: random.Random, pat: dict, admit: datetime, profile: str, icu: bool,
                  death: bool) -> dict:
    prof = PROFILES[profile]
    hadm = 100000 + r.randrange(0, 99999)
    while any(a["HADM_ID"] == hadm for a in db.t["ADMISSIONS"]):
        hadm += 1
    los = r.randrange(3, 12)
    disch = admit + timedelta(days=los, hours=r.randrange(-6, 6), minutes=r.randrange(60))
    disch = max(disch, admit + timedelta(days=2))
    emergency = r.random() < 0.75
    db.add("ADMISSIONS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ADMITTIME=admit, DISCHTIME=disch,
           DEATHTIME=disch if death else None, ADMISSION_TYPE="EMERGENCY" if emergency else "ELECTIVE",
           ADMISSION_LOCATION="EMERGENCY ROOM ADMIT" if emergency else "PHYS REFERRAL/NORMAL DELI",
           DISCHARGE_LOCATION="DEAD/EXPIRED" if death else r.choice(["HOME", "HOME HEALTH CARE", "SNF", "REHAB/"
                                                                      "DISTINCT PART HOSP"]),
           INSURANCE=r.choice(["Medicare", "Private", "Medicaid"]), LANGUAGE="ENGL",
           RELIGION=r.choice(["CATHOLIC", "NOT SPECIFIED", "PROTESTANT QUAKER", "JEWISH"]),
           MARITAL_STATUS=r.choice(["MARRIED", "SINGLE", "WIDOWED"]), ETHNICITY=r.choice(["WHITE", "BLACK/AFRICAN "
                                                                                         "AMERICAN", "UNKNOWN/NOT "
                                                                                         "SPECIFIED"]),
           EDREGTIME=admit - timedelta(hours=3, minutes=r.randrange(60)) if emergency else None,
           EDOUTTIME=admit - timedelta(minutes=r.randrange(5, 50)) if emergency else None,
           DIAGNOSIS=DX[prof["primary"]][0].upper(), HOSPITAL_EXPIRE_FLAG=1 if death else 0,
           HAS_CHARTEVENTS_DATA=1 if icu else 0)
    adm = {"hadm": hadm, "admit": admit, "disch": disch, "profile": profile, "icu": None, "dx": [], "px": [],
           "rx": [], "inputs": []}
    # ICU stay: starts 1-20 h after admission, 2-5 days, ends before discharge
    if icu:
        intime = admit + timedelta(hours=r.randrange(1, 20), minutes=r.randrange(60))
        outtime = min(intime + timedelta(days=r.randrange(2, 5), hours=r.randrange(0, 20)),
                      disch - timedelta(hours=2))
        icustay = 200000 + r.randrange(0, 99999)
        unit = {"chf": "CCU", "nstemi": "CCU", "gi_bleed": "MICU"}.get(profile, r.choice(["MICU", "SICU"]))
        db.add("ICUSTAYS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ICUSTAY_ID=icustay, DBSOURCE="metavision",
               FIRST_CAREUNIT=unit, LAST_CAREUNIT=unit, FIRST_WARDID=r.randrange(7, 60), LAST_WARDID=r.randrange(7, 60),
               INTIME=intime, OUTTIME=outtime, LOS=round((outtime - intime).total_seconds() / 86400, 4))
        adm["icu"] = {"id": icustay, "in": intime, "out": outtime}
    # labs: one AM draw a day (04:00-06:00); lactate q6-8h in the ICU for profiles that send it
    drift = prof["drift"]
    state = {k: r.uniform(*LABS[k][9]) for k in LABS}
    if profile == "aki":
        state["creatinine"] = r.uniform(3.0, 5.5)
        state["potassium"] = r.uniform(5.4, 6.4)
    if profile == "gi_bleed":
        state["hemoglobin"] = r.uniform(6.5, 8.0)
    day = admit.replace(hour=0, minute=0, second=0) + timedelta(days=1)
    first = admit + timedelta(minutes=r.randrange(30, 90))  # admission labs
    times = [first]
    while day + timedelta(hours=6) < disch:
        times.append(day + timedelta(hours=4, minutes=r.randrange(0, 110)))
        day += timedelta(days=1)
    for tt in times:
        for key in ("creatinine", "potassium", "sodium", "bun", "glucose", "hemoglobin", "wbc", "platelets"):
            lab(db, r, pat, hadm, key, tt + timedelta(seconds=0), state[key])
            d = drift.get(key, 0.0)
            state[key] *= 1 + d + r.uniform(-0.03, 0.03)
    if prof["lactate"] and adm["icu"]:
        tt = adm["icu"]["in"] + timedelta(minutes=r.randrange(10, 50))
        while tt < adm["icu"]["out"]:
            lab(db, r, pat, hadm, "lactate", tt, state["lactate"])
            state["lactate"] *= 1 + drift.get("lactate", 0) + r.uniform(-0.08, 0.08)
            tt += timedelta(hours=r.randrange(6, 9), minutes=r.randrange(60))
    # vitals: hourly in the ICU, temperature every 4 h; a few charting errors (ERROR = 1)
    if adm["icu"]:
        ic = adm["icu"]
        vs = {k: r.uniform(*VITALS[k][6]) for k in VITALS}
        tt = ic["in"] + timedelta(minutes=r.randrange(5, 30))
        n = 0
        while tt < ic["out"]:
            for key, (itemid, _l, _a, _c, unit, dec, (lo, hi)) in VITALS.items():
                if key == "temp" and n % 4:
                    continue
                vs[key] = min(max(vs[key] + r.gauss(0, (hi - lo) * 0.08), lo - (hi - lo) * 0.4), hi + (hi - lo) * 0.4)
                if key == "spo2":
                    vs[key] = min(vs[key], 100)
                v = _round(vs[key], dec)
                row = db.add("CHARTEVENTS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ICUSTAY_ID=ic["id"], ITEMID=itemid,
                             CHARTTIME=tt, STORETIME=tt + timedelta(minutes=r.randrange(1, 40)),
                             CGID=14000 + r.randrange(0, 999), VALUE=str(int(v)) if dec == 0 else f"{v:.1f}",
                             VALUENUM=v, VALUEUOM=unit, WARNING=0, ERROR=0, RESULTSTATUS=None, STOPPED=None)
                pat.setdefault("vitals", []).append({"key": key, "t": tt, "v": v, "hadm": hadm,
                                                     "ref": f"chartevents/{row['ROW_ID']}"})
            if n in (3, 17) and r.random() < 0.7:  # artefact charted then marked in error
                bad = {"hr": 0.0, "sbp": 12.0, "spo2": 40.0}
                key = r.choice(sorted(bad))
                itemid = VITALS[key][0]
                et = tt + timedelta(minutes=7)
                db.add("CHARTEVENTS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ICUSTAY_ID=ic["id"], ITEMID=itemid,
                       CHARTTIME=et, STORETIME=et + timedelta(minutes=3), CGID=14000 + r.randrange(0, 999),
                       VALUE=str(int(bad[key])), VALUENUM=bad[key], VALUEUOM=VITALS[key][4], WARNING=1, ERROR=1,
                       RESULTSTATUS=None, STOPPED=None)
            tt += timedelta(hours=1, minutes=r.randrange(-4, 5))
            n += 1
    # diagnoses: the admission's primary first (SEQ_NUM 1), then 3-5 others
    codes = [prof["primary"]] + r.sample(prof["extra"], r.randrange(3, min(6, len(prof["extra"]) + 1)))
    for seq, code in enumerate(codes, 1):
        row = db.add("DIAGNOSES_ICD", SUBJECT_ID=pat["sid"], HADM_ID=hadm, SEQ_NUM=seq, ICD9_CODE=code)
        adm["dx"].append((code, f"diagnoses_icd/{row['ROW_ID']}"))
    pcodes = []
    if adm["icu"]:
        pcodes.append("3893")
        if profile in ("resp", "sepsis") and r.random() < 0.8:
            pcodes += ["9604", r.choice(["9671", "9672"])]
        if profile == "aki" and r.random() < 0.6:
            pcodes.append("3995")
        if profile == "gi_bleed":
            pcodes.append("4513")
    for seq, code in enumerate(pcodes, 1):
        row = db.add("PROCEDURES_ICD", SUBJECT_ID=pat["sid"], HADM_ID=hadm, SEQ_NUM=seq, ICD9_CODE=code)
        adm["px"].append((code, f"procedures_icd/{row['ROW_ID']}"))
    # prescriptions (dated by day); some drugs reordered once (a second order with a new start)
    aday = admit.replace(hour=0, minute=0, second=0)
    dday = disch.replace(hour=0, minute=0, second=0)
    for key in prof["drugs"]:
        if r.random() < 0.15:
            continue
        drug, generic, fcd, strength, dose, unit, fval, funit, route = RX[key]
        starts = [aday + timedelta(days=r.randrange(0, 2))]
        if r.random() < 0.35 and (dday - starts[0]).days > 3:
            starts.append(starts[0] + timedelta(days=r.randrange(2, (dday - starts[0]).days)))
        for j, st in enumerate(starts):
            en = starts[j + 1] if j + 1 < len(starts) else min(st + timedelta(days=r.randrange(2, 8)), dday)
            en = max(en, st + timedelta(days=1))
            if key == "insulin":
                dose = str(r.choice([0, 2, 4, 6]))
            row = db.add("PRESCRIPTIONS", SUBJECT_ID=pat["sid"], HADM_ID=hadm,
                         ICUSTAY_ID=adm["icu"]["id"] if adm["icu"] else None, STARTDATE=st, ENDDATE=en,
                         DRUG_TYPE="MAIN", DRUG=drug, DRUG_NAME_POE=drug, DRUG_NAME_GENERIC=generic,
                         FORMULARY_DRUG_CD=fcd, GSN=f"{r.randrange(1000, 70000):06d}",
                         NDC=f"{r.randrange(10**9, 10**11):011d}", PROD_STRENGTH=strength, DOSE_VAL_RX=dose,
                         DOSE_UNIT_RX=unit, FORM_VAL_DISP=fval, FORM_UNIT_DISP=funit, ROUTE=route)
            adm["rx"].append({"key": key, "drug": drug, "start": st, "end": en, "ref": f"prescriptions/{row['ROW_ID']}"})
    for name, fcd, strength, dose, unit in BASE_RX[: r.randrange(0, 3)]:
        db.add("PRESCRIPTIONS", SUBJECT_ID=pat["sid"], HADM_ID=hadm, ICUSTAY_ID=None, STARTDATE=aday,
               ENDDATE=aday + timedelta(days=2), DRUG_TYPE="BASE", DRUG=name, DRUG_NAME_POE=None,
               DRUG_NAME_GENERIC=None, FORMULARY_DRUG_CD=fcd, GSN=None, NDC="0", PROD_STRENGTH=strength,
               DOSE_VAL_RX=dose, DOSE_UNIT_RX=unit, FORM_VAL_DISP=dose, FORM_UNIT_DISP=unit, ROUTE="IV")
    if adm["icu"]:
        gen_inputs(db, r, pat, adm, prof["inputs"])
    return adm


def gen_inputs(db: Db, r: random.Random, pat: dict, adm: dict, keys: list[str]) -> None:
    """MetaVision administrations in the ICU stay; segments never cross midnight (day totals are unambiguous)."""
    ic = adm["icu"]
    weight = round(r.uniform(55, 110), 1)
    order = 1000000 + r.randrange(0, 8000000)

    def add(key: str, st: datetime, en: datetime, amount: float, rate: float | None, rate_u: str | None,
            cat: str, status: str = "FinishedRunning") -> None:
        nonlocal order
        order += 1
        itemid, _label, _a, _c, unit = INPUTS[key]
        row = db.add("INPUTEVENTS_MV", SUBJECT_ID=pat["sid"], HADM_ID=adm["hadm"], ICUSTAY_ID=ic["id"], STARTTIME=st,
                     ENDTIME=en, ITEMID=itemid, AMOUNT=amount, AMOUNTUOM=unit, RATE=rate, RATEUOM=rate_u,
                     STORETIME=en + timedelta(minutes=5), CGID=14000 + r.randrange(0, 999), ORDERID=order,
                     LINKORDERID=order, ORDERCATEGORYNAME=cat, SECONDARYORDERCATEGORYNAME="Additive",
                     ORDERCOMPONENTTYPEDESCRIPTION="Main order parameter", ORDERCATEGORYDESCRIPTION=(
                         "Continuous Med" if rate else "Drug Push"), PATIENTWEIGHT=weight,
                     TOTALAMOUNT=250 if rate else 100, TOTALAMOUNTUOM="ml", ISOPENBAG=0,
                     CONTINUEINNEXTDOSE=0, CANCELREASON=1 if status == "Rewritten" else 0, STATUSDESCRIPTION=status,
                     COMMENTS_EDITEDBY=None, COMMENTS_CANCELEDBY=None, COMMENTS_DATE=None,
                     ORIGINALAMOUNT=amount, ORIGINALRATE=rate)
        adm["inputs"].append({"key": key, "start": st, "amount": amount, "status": status,
                              "ref": f"inputevents_mv/{row['ROW_ID']}"})

    for key in keys:
        if key == "vancomycin" or key == "furosemide":
            dose = 1000.0 if key == "vancomycin" else 40.0
            step = 12 if key == "vancomycin" else 8
            tt = ic["in"] + timedelta(hours=r.randrange(1, 4), minutes=r.randrange(60))
            while tt < ic["out"]:
                en = tt + timedelta(minutes=60 if key == "vancomycin" else 2)
                if en.date() == tt.date():
                    amt = dose if r.random() < 0.8 else dose * 1.25
                    add(key, tt, en, amt, None, None,
                        "02-Fluids (Crystalloids)" if key == "vancomycin" else "05-Med Bolus")
                tt += timedelta(hours=step, minutes=r.randrange(-20, 20))
        else:  # infusions: rate per hour, charted in segments of 2-6 h, split at midnight
            rate_u = {"heparin": "units/hour", "insulin": "units/hour", "norepinephrine": "mcg/kg/min"}[key]
            rate = {"heparin": r.choice([800, 1000, 1200]), "insulin": r.choice([2, 3, 4]),
                    "norepinephrine": 0.08}[key]
            tt = ic["in"] + timedelta(hours=r.randrange(0, 6), minutes=r.randrange(60))
            stop = min(ic["out"], tt + timedelta(hours=r.randrange(20, 60)))
            rewritten = 0
            while tt < stop:
                en = min(tt + timedelta(hours=r.randrange(2, 7)), stop)
                midnight = tt.replace(hour=0, minute=0, second=0) + timedelta(days=1)
                en = min(en, midnight - timedelta(minutes=1))
                hours = (en - tt).total_seconds() / 3600
                if key == "norepinephrine":
                    amt = round(rate * weight * 60 * hours / 1000, 4)
                else:
                    amt = round(rate * hours, 2)
                if rewritten < 1 and r.random() < 0.15:  # charted, then rewritten with a new amount
                    add(key, tt, en, round(amt * 1.5, 2), rate * 1.5, rate_u, "01-Drips", "Rewritten")
                    rewritten += 1
                add(key, tt, en, amt, rate, rate_u, "01-Drips", "FinishedRunning" if en < stop else "Stopped")
                if en.hour == 23 and en.minute == 59:
                    en = midnight
                tt = en
                if key != "norepinephrine" and r.random() < 0.3:
                    rate = max(1, rate + r.choice([-1, 1]) * (100 if key == "heparin" else 1))


def generate() -> tuple[Db, list[dict]]:
    db = Db()
    build_dictionaries(db)
    pats = [gen_patient(db, i) for i in range(20)]
    return db, pats


# ------------------------------------------------------------------------------------------------ output
def write_csv(db: Db, out: Path) -> str:
    """Write the tables as MIMIC-III CSVs; returns a digest of their bytes."""
    out.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    for name, cols in COLUMNS.items():
        path = out / f"{name}.csv"
        with path.open("w", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_MINIMAL)
            w.writerow(cols)
            for row in db.t[name]:
                w.writerow([_fmt(row.get(c)) if c in TIME_COLS else ("" if row.get(c) is None else row.get(c))
                            for c in cols])
        h.update(path.read_bytes())
    return h.hexdigest()


def write_duckdb(csv_dir: Path, path: Path) -> None:
    """A typed copy (MIMIC-III v1.4 column types; lower-case names as the official build scripts make them)."""
    import duckdb

    if path.exists():
        path.unlink()
    con = duckdb.connect(str(path))
    for name, cols in COLUMNS.items():
        spec = ", ".join(f"{c.lower()} {'TIMESTAMP' if c in TIME_COLS else TYPES.get(c, 'VARCHAR')}" for c in cols)
        con.execute(f"CREATE TABLE {name.lower()} ({spec})")
        types = {c: ("TIMESTAMP" if c in TIME_COLS else TYPES.get(c, "VARCHAR")) for c in cols}
        con.execute(f"INSERT INTO {name.lower()} SELECT * FROM read_csv(?, header=true, columns=?)",
                    [str(csv_dir / f"{name}.csv"), types])
    con.close()


# --------------------------------------------------------------------------------------------- questions
# Item names a clinician would type: (register, words)
LAB_NAMES = {
    "potassium": ["K", "potassium", "K+"], "creatinine": ["Cr", "creatinine", "creat"],
    "sodium": ["Na", "sodium"], "hemoglobin": ["Hgb", "hemoglobin", "Hb"], "wbc": ["WBC", "white count"],
    "lactate": ["lactate", "lactic acid"], "glucose": ["glucose", "BG", "blood sugar"], "bun": ["BUN"],
    "platelets": ["plt", "platelets"],
}
VITAL_NAMES = {"hr": ["HR", "heart rate"], "sbp": ["SBP", "systolic BP"], "dbp": ["DBP", "diastolic BP"],
               "spo2": ["SpO2", "O2 sat"], "temp": ["temp", "temperature"], "rr": ["RR", "resp rate"]}
DRUG_WORDS = {"vancomycin": ["vanc", "vancomycin", "vanco"], "heparin": ["heparin", "hep"],
              "insulin": ["insulin"], "furosemide": ["lasix", "furosemide"], "warfarin": ["coumadin", "warfarin"],
              "piptazo": ["zosyn", "pip-tazo"], "metoprolol": ["metoprolol", "lopressor"],
              "pantoprazole": ["protonix", "pantoprazole"]}
DX_WORDS = {"42731": ["afib", "atrial fibrillation"], "5849": ["AKI", "acute kidney failure"],
            "0389": ["sepsis", "septicemia"], "4280": ["CHF", "heart failure"], "25000": ["diabetes", "DM2"],
            "486": ["pneumonia", "PNA"], "5990": ["UTI"], "41071": ["NSTEMI"], "51881": ["acute resp failure"]}
PX_WORDS = {"9604": ["intubated", "an ETT placed"], "3995": ["hemodialysis", "HD"]}
RX_KEYS_OF = {"vancomycin": {"vancomycin"}, "heparin": {"heparin", "heparin_gtt"}, "insulin": {"insulin"},
              "furosemide": {"furosemide"}, "warfarin": {"warfarin"}, "piptazo": {"piptazo"},
              "metoprolol": {"metoprolol"}, "pantoprazole": {"pantoprazole"}}
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _date_text(d: datetime, r: random.Random) -> str:
    return r.choice([d.strftime("%Y-%m-%d"), f"{d.month}/{d.day}/{d.year}", f"{MONTHS[d.month - 1]} {d.day}, {d.year}"])


def _years(a: datetime, b: datetime) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def _near_birthday(dob: datetime, t: datetime) -> bool:
    for y in (t.year - 1, t.year, t.year + 1):
        if abs((datetime(y, dob.month, min(dob.day, 28)) - t).days) <= 3:
            return True
    return False


class Q:
    """Collects questions per category; each gets its id once the set is assembled."""

    def __init__(self) -> None:
        self.by_cat: dict[str, list[dict]] = {}

    def add(self, p: dict, cat: str, question: str, atype: str, expected: list, template: str,
            refs: list[str] = (), status: str = "answered", tol: float | None = None) -> None:
        if tol is None:
            tol = 0.01 if atype == "number" else 0
        self.by_cat.setdefault(cat, []).append({
            "id": "", "patient_id": str(p["sid"]), "question": question,
            "now": p["now"].strftime("%Y-%m-%dT%H:%M:%SZ"), "category": cat, "answer_type": atype,
            "expected": expected if status == "answered" else [], "expected_status": status, "tolerance": tol,
            "gold_refs": sorted(set(refs)), "template": template})


def _in(rows: list[dict], w: tuple[datetime, datetime] | None) -> list[dict]:
    return sorted((x for x in rows if w is None or w[0] <= x["t"] <= w[1]), key=lambda x: x["t"])


TARGETS = {"latest_value": 14, "value_in_window": 8, "min_max": 16, "average": 6, "count_measurements": 7,
           "trend": 10, "threshold": 8, "first_last_time": 10, "count_encounters": 8, "count_other": 7,
           "existence_positive": 10, "existence_negative": 8, "no_data": 16, "demographics": 10, "age": 7,
           "diagnoses": 8, "daily_total": 7}


def _pick(cat: str, cands: list[dict], n: int) -> list[dict]:
    """n questions of a category, round-robin over its patterns (so every pattern is asked), then by patient."""
    r = _rng("pick", cat)
    groups: dict[str, list[dict]] = {}
    for c in cands:
        groups.setdefault(c["template"].rsplit("/", 1)[0], []).append(c)
    for g in groups.values():
        r.shuffle(g)
    order = sorted(groups)
    chosen: list[dict] = []
    while len(chosen) < n and any(groups.values()):
        for k in order:
            if groups[k] and len(chosen) < n:
                chosen.append(groups[k].pop())
    return sorted(chosen, key=lambda c: (int(c["patient_id"]), c["template"], c["question"]))


def make_questions(pats: list[dict], db: Db) -> list[dict]:
    """Every question with its gold answer, computed from the generated rows alone."""
    q = Q()
    for p in pats:
        r = _rng("questions", p["sid"])
        he, his = ("he", "his") if p["gender"] == "M" else ("she", "her")
        last = p["adms"][-1]
        stay = (last["admit"], last["disch"])
        icu = (last["icu"]["in"], last["icu"]["out"])
        labs = {k: [x for x in p.get("labs", []) if x["key"] == k] for k in LABS}
        vit = {k: [x for x in p.get("vitals", []) if x["key"] == k] for k in VITALS}

        def name(key: str, r: random.Random = r) -> tuple[str, str]:
            words = LAB_NAMES.get(key) or VITAL_NAMES[key]
            j = r.randrange(len(words))
            return words[j], ("abbr" if j == 0 else "full")

        # latest value over the whole record
        for key in r.sample(["potassium", "creatinine", "sodium", "hemoglobin", "wbc", "glucose", "lactate"], 3):
            rows = _in(labs[key], None)
            if not rows:
                continue
            n, reg = name(key)
            j = r.randrange(4)
            text = [f"last {n}?", f"most recent {n}", f"what was {his} last {n}", f"{n} - latest value?"][j]
            q.add(p, "latest_value", text, "number", [rows[-1]["v"]], f"latest_value/lab/{j}.{reg}", [rows[-1]["ref"]])
        for key in r.sample(["hr", "sbp", "spo2", "rr"], 1):
            rows = _in(vit[key], None)
            n, reg = name(key)
            q.add(p, "latest_value", f"last {n} charted?", "number", [rows[-1]["v"]], f"latest_value/vital/0.{reg}",
                  [rows[-1]["ref"]])
        # first value of this admission
        for key in r.sample(["creatinine", "potassium", "hemoglobin", "lactate", "wbc"], 2):
            rows = _in(labs[key], stay)
            if not rows:
                continue
            n, reg = name(key)
            j = r.randrange(3)
            text = [f"admission {n} this admit?", f"first {n} this admission?", f"{n} on admission?"][j]
            q.add(p, "value_in_window", text, "number", [rows[0]["v"]], f"value_in_window/admission-first/{j}.{reg}",
                  [rows[0]["ref"]])
        # extremes in this admission / the ICU stay
        for key, side in r.sample([("lactate", "max"), ("creatinine", "max"), ("hemoglobin", "min"),
                                   ("potassium", "max"), ("sodium", "min"), ("wbc", "max")], 2):
            rows = _in(labs[key], stay)
            if not rows:
                continue
            n, reg = name(key)
            pick = max(rows, key=lambda x: x["v"]) if side == "max" else min(rows, key=lambda x: x["v"])
            word = r.choice(["max", "peak", "highest"]) if side == "max" else r.choice(["min", "lowest", "nadir"])
            j = r.randrange(2)
            text = [f"{word} {n} this admission", f"what was {his} {word} {n} this admit?"][j]
            q.add(p, "min_max", text, "number", [pick["v"]], f"min_max/lab-{side}/{j}.{reg}", [pick["ref"]])
        for key, side in r.sample([("sbp", "min"), ("hr", "max"), ("temp", "max"), ("spo2", "min"), ("dbp", "min")],
                                  2):
            rows = _in(vit[key], icu)
            pick = max(rows, key=lambda x: x["v"]) if side == "max" else min(rows, key=lambda x: x["v"])
            if key == "temp" and side == "max" and r.random() < 0.5:
                text, reg = "Tmax during the ICU stay?", "abbr"
            else:
                n, reg = name(key)
                text = f"{n} {side} during the ICU stay"
            q.add(p, "min_max", text, "number", [pick["v"]], f"min_max/vital-{side}/0.{reg}", [pick["ref"]])
        # average
        key = r.choice(["hr", "glucose", "sbp"])
        rows = _in(vit[key], icu) if key in VITALS else _in(labs[key], stay)
        n, reg = name(key)
        where = "during the ICU stay" if key in VITALS else "this admission"
        q.add(p, "average", f"avg {n} {where}?", "number", [round(sum(x["v"] for x in rows) / len(rows), 4)],
              f"average/{'vital' if key in VITALS else 'lab'}/0.{reg}", [x["ref"] for x in rows][:20])
        # counts of measurements
        key = r.choice(["lactate", "potassium", "creatinine"])
        if r.random() < 0.5:
            rows = _in(labs[key], stay)
            n, reg = name(key)
            text = r.choice([f"how many {n} values this admission?", f"# of {n} draws this admit"])
            q.add(p, "count_measurements", text, "count", [len(rows)], f"count_measurements/admission/0.{reg}",
                  [x["ref"] for x in rows][:20])
        else:
            rows = _in(labs[key], None)
            n, reg = name(key)
            q.add(p, "count_measurements", f"how many {n} results on record?", "count", [len(rows)],
                  f"count_measurements/all/0.{reg}", [x["ref"] for x in rows][:20])
        # trend this admission
        for key in r.sample(["creatinine", "lactate", "hemoglobin", "wbc", "potassium"], 2):
            rows = _in(labs[key], stay)
            if len(rows) < 2:
                continue
            ratio = (rows[-1]["v"] - rows[0]["v"]) / abs(rows[0]["v"])
            if 0.045 <= abs(ratio) <= 0.055:
                continue
            trend = "increasing" if ratio > 0.05 else "decreasing" if ratio < -0.05 else "stable"
            n, reg = name(key)
            j = r.randrange(3)
            text = [f"{n} trend this admission?", f"how is {his} {n} trending this admit", f"{n} trend?"][j]
            if j == 2 and len(p["adms"]) > 1 or j == 2 and _in(labs[key], None) != rows:
                text = f"{n} trend this admission?"
                j = 0
            q.add(p, "trend", text, "string", [trend], f"trend/admission/{j}.{reg}", [rows[0]["ref"], rows[-1]["ref"]])
        # thresholds
        crit = [("potassium", ">", 5.5, "hyperkalemia"), ("lactate", ">", 4.0, None), ("hemoglobin", "<", 7.0, None),
                ("sodium", "<", 130, "hyponatremia"), ("sbp", "<", 90, None), ("temp", ">", 100.4, "fever"),
                ("glucose", ">", 250, None), ("creatinine", ">", 2.0, None)]
        key, op, cut, finding = r.choice(crit)
        rows = _in(vit[key], icu) if key in VITALS else _in(labs[key], stay)
        if rows:
            ext = max(x["v"] for x in rows) if op == ">" else min(x["v"] for x in rows)
            if abs(ext - cut) > 0.006 * abs(cut):
                ans = ext > cut if op == ">" else ext < cut
                n, reg = name(key)
                where = "during the ICU stay" if key in VITALS else "this admission"
                if finding and r.random() < 0.5:
                    text, reg = f"any {finding} ({n} {op} {cut:g}) {where}?", "finding"
                else:
                    text = f"any {n} {op} {cut:g} {where}?"
                hit = [x["ref"] for x in rows if (x["v"] > cut if op == ">" else x["v"] < cut)]
                q.add(p, "threshold", text, "boolean", [ans], f"threshold/{key}/0.{reg}", hit[:10])
        # times
        key = r.choice(["potassium", "creatinine", "lactate", "hemoglobin"])
        rows = _in(labs[key], None)
        if rows:
            n, reg = name(key)
            text = r.choice([f"when was the last {n} drawn", f"date of last {n}?"])
            q.add(p, "first_last_time", text, "date", [rows[-1]["t"].strftime("%Y-%m-%d")],
                  f"first_last_time/lab-last/0.{reg}", [rows[-1]["ref"]])
        j = r.randrange(3)
        text = [f"when was {he} last admitted?", "date of last admission?", "most recent hospitalization - when?"][j]
        q.add(p, "first_last_time", text, "date", [last["admit"].strftime("%Y-%m-%d")], f"first_last_time/adm-last/{j}",
              [f"admissions/{last['hadm']}"])
        if len(p["adms"]) > 1 and r.random() < 0.5:
            first = p["adms"][0]
            q.add(p, "first_last_time", "first admission date?", "date", [first["admit"].strftime("%Y-%m-%d")],
                  "first_last_time/adm-first/0", [f"admissions/{first['hadm']}"])
        # admissions and ICU stays
        j = r.randrange(3)
        text = ["how many admissions?", "# of hospitalizations on record", f"how many times has {he} been admitted?"][j]
        q.add(p, "count_encounters", text, "count", [len(p["adms"])], f"count_encounters/admissions/{j}",
              [f"admissions/{a['hadm']}" for a in p["adms"]])
        if r.random() < 0.2:
            n_icu = sum(1 for a in p["adms"] if a["icu"])
            q.add(p, "count_encounters", "how many ICU stays?", "count", [n_icu], "count_encounters/icustays/0",
                  [f"icustays/{a['icu']['id']}" for a in p["adms"] if a["icu"]])
        # prescriptions counted
        drug = r.choice(["vancomycin", "heparin", "furosemide", "insulin"])
        rx = [x for a in p["adms"] for x in a["rx"] if x["key"] in RX_KEYS_OF[drug]]
        word = r.choice(DRUG_WORDS[drug])
        q.add(p, "count_other", r.choice([f"how many {word} orders?", f"# of {word} Rx on record"]), "count", [len(rx)],
              f"count_other/rx-{drug}/0", [x["ref"] for x in rx])
        # existence of drugs, diagnoses, procedures (orders or administrations)
        for drug in r.sample(sorted(DRUG_WORDS), 3):
            rx = [x["ref"] for a in p["adms"] for x in a["rx"] if x["key"] in RX_KEYS_OF[drug]]
            rx += [x["ref"] for a in p["adms"] for x in a["inputs"] if x["key"] == drug and x["status"] != "Rewritten"]
            word = r.choice(DRUG_WORDS[drug])
            j = r.randrange(4)
            text = [f"was {he} on {word}?", f"any {word}?", f"ever get {word}?", f"{word} given?"][j]
            q.add(p, "existence_positive" if rx else "existence_negative", text, "boolean", [bool(rx)],
                  f"existence/drug-{drug}/{j}", rx[:10])
        codes = {c: ref for a in p["adms"] for c, ref in a["dx"]}
        for code in r.sample(sorted(DX_WORDS), 2):
            word = r.choice(DX_WORDS[code])
            j = r.randrange(3)
            text = [f"hx of {word}?", f"ever dx'd with {word}?", f"{word} on {his} problem list?"][j]
            ans = code in codes
            q.add(p, "existence_positive" if ans else "existence_negative", text, "boolean", [ans],
                  f"existence/dx-{code}/{j}", [codes[code]] if ans else [])
        pcodes = {c: ref for a in p["adms"] for c, ref in a["px"]}
        code = r.choice(sorted(PX_WORDS))
        word = PX_WORDS[code][r.randrange(2)]
        text = f"was {he} ever {word}?" if code == "9604" and word == "intubated" else f"ever had {word}?"
        ans = code in pcodes
        q.add(p, "existence_positive" if ans else "existence_negative", text, "boolean", [ans],
              f"existence/px-{code}/0", [pcodes[code]] if ans else [])
        # no-data: labs nobody has, and lactate where the patient (or the stay) has none
        j = r.randrange(5)
        text = ["last INR?", "most recent trop?", "latest BNP?", "last Mg?", "ALT?"][j]
        q.add(p, "no_data", text, "number", [], f"no_data/absent/{j}", status="no-data")
        if not labs["lactate"]:
            q.add(p, "no_data", r.choice(["last lactate?", "most recent lactic acid?"]), "number", [],
                  "no_data/never-lactate/0", status="no-data")
        elif not _in(labs["lactate"], stay):
            q.add(p, "no_data", "max lactate this admission", "number", [], "no_data/empty-stay/0", status="no-data")
        # demographics and age
        q.add(p, "demographics", r.choice(["DOB?", "date of birth?"]), "date", [p["dob"].strftime("%Y-%m-%d")],
              "demographics/dob/0", [f"patients/{p['sid']}"])
        if r.random() < 0.5:
            q.add(p, "demographics", r.choice(["gender?", "sex?"]), "string",
                  ["male" if p["gender"] == "M" else "female"], "demographics/gender/0", [f"patients/{p['sid']}"])
        dead = p["dod"] is not None
        j = r.randrange(2)
        q.add(p, "demographics", [f"is {he} deceased?", "alive?"][j], "boolean", [dead if j == 0 else not dead],
              f"demographics/deceased/{j}", [f"patients/{p['sid']}"] if dead else [])
        if dead:
            q.add(p, "demographics", "date of death?", "date", [p["dod"].strftime("%Y-%m-%d")], "demographics/dod/0",
                  [f"patients/{p['sid']}"])
        at = min(p["now"], p["dod"].replace(hour=0, minute=0)) if dead else p["now"]
        if not _near_birthday(p["dob"], at):
            q.add(p, "age", r.choice([f"how old is {he}?", "age?", "pt age"]), "number", [_years(p["dob"], at)],
                  "age/now/0", [f"patients/{p['sid']}"], tol=0)
        if not _near_birthday(p["dob"], last["admit"]) and r.random() < 0.6:
            q.add(p, "age", r.choice(["age at admission?", f"how old was {he} when admitted (last admission)?"]),
                  "number", [_years(p["dob"], last["admit"])], "age/at-admission/0", [f"admissions/{last['hadm']}"],
                  tol=0)
        # diagnoses of the last admission
        prim = last["dx"][0]
        j = r.randrange(3)
        text = ["primary dx of the last admission?", "what was the principal diagnosis last admission?",
                "main reason for the last admission (dx)?"][j]
        q.add(p, "diagnoses", text, "string", [DX[prim[0]][1]], f"diagnoses/primary-last/{j}", [prim[1]])
        if r.random() < 0.5:
            titles = sorted({DX[c][1] for c, _ in last["dx"]})
            q.add(p, "diagnoses", "diagnoses of the last admission?", "list", titles, "diagnoses/all-last/0",
                  [ref for _, ref in last["dx"]])
        # daily totals administered (INPUTEVENTS_MV; rewritten rows superseded, not given)
        given = [x for x in last["inputs"] if x["key"] in ("heparin", "insulin", "vancomycin")]
        if given:
            days: dict[tuple[str, datetime], list[dict]] = {}
            for x in given:
                days.setdefault((x["key"], x["start"].replace(hour=0, minute=0, second=0)), []).append(x)
            pref = sorted(days, key=lambda k: (not any(x["status"] == "Rewritten" for x in days[k]), k[1], k[0]))
            key, d = pref[0] if r.random() < 0.6 else r.choice(sorted(days))
            ok = [x for x in days[(key, d)] if x["status"] != "Rewritten"]
            total = round(sum(x["amount"] for x in ok), 4)
            word = r.choice(DRUG_WORDS[key])
            ds = _date_text(d, r)
            if key == "vancomycin" and r.random() < 0.5:
                q.add(p, "daily_total", f"# {word} doses on {ds}?", "count", [len(ok)], "daily_total/doses-vanc/0",
                      [x["ref"] for x in ok])
            else:
                unit = "units" if key != "vancomycin" else "mg"
                q.add(p, "daily_total", f"total {word} given on {ds} ({unit})?", "number", [total],
                      f"daily_total/total-{key}/0", [x["ref"] for x in ok])
    rows: list[dict] = []
    for cat in sorted(q.by_cat):
        for n, row in enumerate(_pick(cat, q.by_cat[cat], TARGETS[cat]), 1):
            row["id"] = f"{cat}-{n:03d}"
            rows.append(row)
    return rows


def verify_sql(path: Path, rows: list[dict]) -> list[str]:
    """Re-derive the gold of the value, count, date and name questions by SQL over the typed DuckDB copy.

    A second derivation, independent of the Python bookkeeping that wrote the questions: the item, admission
    and ICU stay are taken from the gold row (`gold_refs`), everything else is recomputed. Returns the mismatches.
    """
    import duckdb

    con = duckdb.connect(str(path), read_only=True)

    def one(sql: str, *args: object) -> object:
        return con.execute(sql, list(args)).fetchone()[0]

    def last_hadm(sid: int, now: str) -> int:
        return one("SELECT hadm_id FROM admissions WHERE subject_id = ? AND admittime <= ?::TIMESTAMP "
                   "ORDER BY admittime DESC LIMIT 1", sid, now[:19])

    # a value's table, and the rows of the same item in the question's window
    def scope(ref: str, sid: int, window: str, now: str) -> tuple[str, str, list]:
        table, rid = ref.split("/")
        item = one(f"SELECT itemid FROM {table} WHERE row_id = ?", int(rid))
        where, args = "subject_id = ? AND itemid = ? AND charttime <= ?::TIMESTAMP", [sid, item, now[:19]]
        if table == "chartevents":
            where += " AND error = 0"
        if window == "stay":
            hadm = last_hadm(sid, now)
            where += (" AND charttime BETWEEN (SELECT admittime FROM admissions WHERE hadm_id = ?) AND "
                      "(SELECT dischtime FROM admissions WHERE hadm_id = ?)")
            args += [hadm, hadm]
        return table, where, args

    bad: list[str] = []
    for q in rows:
        sid, cat, t, now = int(q["patient_id"]), q["category"], q["template"], q["now"]
        exp = q["expected"][0] if q["expected"] else None
        stay = "this adm" in q["question"] or "on admission" in q["question"] or "ICU stay" in q["question"]
        got: object = exp
        if cat in ("latest_value", "value_in_window", "min_max", "average", "count_measurements") and q["gold_refs"]:
            table, where, args = scope(q["gold_refs"][0], sid, "stay" if stay else "all", now)
            agg = {"latest_value": "arg_max(valuenum, charttime)", "value_in_window": "arg_min(valuenum, charttime)",
                   "average": "round(avg(valuenum), 4)", "count_measurements": "count(*)",
                   "min_max": "max(valuenum)" if "-max" in t else "min(valuenum)"}[cat]
            got = one(f"SELECT {agg} FROM {table} WHERE {where}", *args)
        elif cat == "trend":
            table, where, args = scope(q["gold_refs"][0], sid, "stay", now)
            first, last = con.execute(f"SELECT arg_min(valuenum, charttime), arg_max(valuenum, charttime) FROM {table} "
                                      f"WHERE {where}", args).fetchone()
            ratio = (last - first) / abs(first)
            got = "increasing" if ratio > 0.05 else "decreasing" if ratio < -0.05 else "stable"
        elif cat == "first_last_time" and "lab-last" in t:
            table, where, args = scope(q["gold_refs"][0], sid, "all", now)
            got = str(one(f"SELECT max(charttime)::DATE FROM {table} WHERE {where}", *args))
        elif cat == "first_last_time":
            got = str(one(f"SELECT {'max' if 'adm-last' in t else 'min'}(admittime)::DATE FROM admissions "
                          "WHERE subject_id = ?", sid))
        elif cat == "count_encounters":
            got = one(f"SELECT count(*) FROM {'icustays' if 'icustays' in t else 'admissions'} WHERE subject_id = ?",
                      sid)
        elif cat == "count_other":
            drug = t.split("/")[1].removeprefix("rx-")
            got = one("SELECT count(*) FROM prescriptions WHERE subject_id = ? AND drug_type = 'MAIN' AND "
                      "lower(drug) LIKE ?", sid, f"%{drug}%")
        elif cat == "demographics":
            kind = t.split("/")[1]
            dob, gender, dod = con.execute("SELECT dob::DATE, gender, dod::DATE FROM patients WHERE subject_id = ?",
                                           [sid]).fetchone()
            got = {"dob": str(dob), "gender": {"M": "male", "F": "female"}[gender], "dod": str(dod),
                   "deceased": (dod is not None) if "/0" in t[-2:] else (dod is None)}[kind]
        elif cat == "diagnoses":
            hadm = last_hadm(sid, now)
            titles = [r[0] for r in con.execute(
                "SELECT d.long_title FROM diagnoses_icd x JOIN d_icd_diagnoses d USING (icd9_code) "
                "WHERE x.hadm_id = ? ORDER BY x.seq_num", [hadm]).fetchall()]
            got = titles[0] if "primary" in t else sorted(set(titles))
            exp = exp if "primary" in t else q["expected"]
        elif cat == "daily_total":
            item, day = con.execute("SELECT itemid, starttime::DATE FROM inputevents_mv WHERE row_id = ?",
                                    [int(q["gold_refs"][0].split("/")[1])]).fetchone()
            agg = "count(*)" if "doses" in t else "round(sum(amount), 4)"
            got = one(f"SELECT {agg} FROM inputevents_mv WHERE subject_id = ? AND itemid = ? AND starttime::DATE = ? "
                      "AND statusdescription <> 'Rewritten'", sid, item, day)
        elif cat == "no_data":
            got = None
        elif cat == "threshold":
            key = t.split("/")[1]
            op, cut = re.search(r"([<>]) ([\d.]+)", q["question"]).groups()
            if key in VITALS:
                got = bool(one(f"SELECT count(*) FROM chartevents WHERE subject_id = ? AND itemid = ? AND error = 0 "
                               f"AND valuenum {op} ? AND icustay_id = (SELECT icustay_id FROM icustays WHERE "
                               "hadm_id = ?)", sid, VITALS[key][0], float(cut), last_hadm(sid, now)))
            else:
                got = bool(one(f"SELECT count(*) FROM labevents l JOIN admissions a USING (subject_id) WHERE "
                               f"l.subject_id = ? AND a.hadm_id = ? AND l.itemid = ? AND l.valuenum {op} ? AND "
                               "l.charttime BETWEEN a.admittime AND a.dischtime", sid, last_hadm(sid, now),
                               LABS[key][0], float(cut)))
        elif cat == "age":
            dob, dod = con.execute("SELECT dob, dod FROM patients WHERE subject_id = ?", [sid]).fetchone()
            if "at-admission" in t:
                at = one("SELECT admittime FROM admissions WHERE hadm_id = ?", last_hadm(sid, now))
            else:
                at = min(dod, datetime.fromisoformat(now[:19])) if dod else datetime.fromisoformat(now[:19])
            got = _years(dob, at)
        elif cat.startswith("existence"):
            kind, code = t.split("/")[1].split("-", 1)
            if kind == "drug":
                names = sorted({RX[k][0].lower() for k in RX_KEYS_OF[code]})
                n = sum(one("SELECT count(*) FROM prescriptions WHERE subject_id = ? AND lower(drug) = ?", sid, nm)
                        for nm in names)
                if code in INPUTS:
                    n += one("SELECT count(*) FROM inputevents_mv WHERE subject_id = ? AND itemid = ? AND "
                             "statusdescription <> 'Rewritten'", sid, INPUTS[code][0])
            else:
                n = one(f"SELECT count(*) FROM {'diagnoses_icd' if kind == 'dx' else 'procedures_icd'} "
                        "WHERE subject_id = ? AND icd9_code::VARCHAR = ?", sid, code)
            got = n > 0
        if isinstance(exp, float) and isinstance(got, (int, float)):
            ok = abs(got - exp) <= 1e-6 * max(1, abs(exp))
        else:
            ok = got == exp
        if not ok:
            bad.append(f"{q['id']}: gold {exp!r}, SQL {got!r}")
    con.close()
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for csv/ and mimic3.duckdb")
    ap.add_argument("--check", action="store_true", help="exit 1 when questions.jsonl is stale")
    ap.add_argument("--no-duckdb", action="store_true", help="write the CSV files only")
    args = ap.parse_args()
    db, pats = generate()
    out = Path(args.out)
    digest = write_csv(db, out / "csv")
    if not args.no_duckdb:
        write_duckdb(out / "csv", out / "mimic3.duckdb")
    rows = make_questions(pats, db)
    if not args.no_duckdb:
        bad = verify_sql(out / "mimic3.duckdb", rows)
        for line in bad:
            print("SQL re-derivation disagrees:", line, file=sys.stderr)
        if bad:
            return 2
    text = "".join(json.dumps(q, ensure_ascii=False, separators=(",", ":")) + "\n" for q in rows)
    print(f"{len(pats)} patients, {sum(len(v) for v in db.t.values())} rows, csv sha256 {digest[:16]}, "
          f"{len(rows)} questions", file=sys.stderr)
    if args.check:
        if not QUESTIONS.exists() or QUESTIONS.read_text() != text:
            print("questions.jsonl is stale: rebuild without --check", file=sys.stderr)
            return 1
        return 0
    QUESTIONS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
