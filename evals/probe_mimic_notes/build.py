"""Blind probe of fhirqa over the clinical notes of a MIMIC-III v1.4-shaped database.

Generates 12 synthetic hospital patients with a seeded RNG as MIMIC-III CSV files (upper-case table and column
names as PhysioNet ships them: PATIENTS, ADMISSIONS, ICUSTAYS, D_LABITEMS, LABEVENTS, D_ITEMS, CHARTEVENTS,
PRESCRIPTIONS, DIAGNOSES_ICD, D_ICD_DIAGNOSES, NOTEEVENTS) and the question set, whose gold answers are computed
here from the generated rows and note texts. Imports nothing from fhirqa.

    python evals/probe_mimic_notes/build.py --out DIR          # DIR/csv/*.csv, rewrites questions.jsonl
    python evals/probe_mimic_notes/build.py --out DIR --check  # exit 1 when questions.jsonl is stale

MIMIC quirks kept: years shifted into 2150-2200, CATEGORY values with trailing blanks ("Physician ",
"Respiratory "), "Nursing/other" beside "Nursing", discharge summaries, echo and ECG reports dated by CHARTDATE
only (CHARTTIME empty), ISERROR = 1 rows (a wrong report later corrected: left out of every gold), and
de-identification brackets ([**Hospital1 18**], [**2151-3-4**]) in the text.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = "probe-mimic-notes-v1"

# --------------------------------------------------------------------------------------------- vocabularies

LABS = {  # ITEMID, LABEL, LOINC, unit, decimals
    "K": (50971, "Potassium", "2823-3", "mEq/L", 1),
    "Cr": (50912, "Creatinine", "2160-0", "mg/dL", 1),
    "Na": (50983, "Sodium", "2951-2", "mEq/L", 0),
    "Hgb": (51222, "Hemoglobin", "718-7", "g/dL", 1),
    "WBC": (51301, "White Blood Cells", "804-5", "K/uL", 1),
}

PROFILES = {
    "pneumonia": dict(
        cc="Fever and productive cough", primary="Community acquired pneumonia",
        icd=[("486", "Pneumonia, organism unspecified")],
        secondary=["Hypoxemic respiratory failure"], sec_icd=[("51881", "Acute respiratory failure")],
        meds=["Levofloxacin", "Albuterol Inhaler", "Acetaminophen"],
        cxr="Right lower lobe consolidation consistent with pneumonia.",
        hpi="presented with three days of fever, productive cough and dyspnea. In the ED he was febrile to 102.4",
        labs=dict(K=(3.6, 4.6), Cr=(0.8, 1.3), Na=(134, 141), Hgb=(11.0, 13.5), WBC=(13.0, 19.0)),
    ),
    "sepsis": dict(
        cc="Hypotension and altered mental status", primary="Sepsis secondary to urinary tract infection",
        icd=[("99591", "Sepsis"), ("5990", "Urinary tract infection, site not specified")],
        secondary=["Acute kidney injury", "Delirium"], sec_icd=[("5849", "Acute kidney failure, unspecified")],
        meds=["Ciprofloxacin", "Metoprolol Tartrate", "Acetaminophen"],
        cxr="No acute cardiopulmonary process.",
        hpi="was found confused at home with fever and hypotension; lactate 4.1 in the ED. Treated for sepsis with fluids and broad spectrum antibiotics",
        labs=dict(K=(3.8, 5.2), Cr=(1.4, 2.6), Na=(132, 140), Hgb=(9.5, 12.0), WBC=(14.0, 22.0)),
    ),
    "chf": dict(
        cc="Shortness of breath and leg swelling", primary="Acute on chronic systolic congestive heart failure",
        icd=[("42823", "Acute on chronic systolic heart failure")],
        secondary=["Atrial fibrillation", "Chronic kidney disease stage III"],
        sec_icd=[("42731", "Atrial fibrillation"), ("5853", "Chronic kidney disease, Stage III (moderate)")],
        meds=["Furosemide", "Metoprolol Succinate", "Lisinopril", "Warfarin"],
        cxr="Moderate pulmonary edema with small bilateral pleural effusions.",
        hpi="reports two weeks of worsening dyspnea on exertion, orthopnea and bilateral lower extremity edema after running out of his diuretic",
        labs=dict(K=(3.4, 4.8), Cr=(1.3, 2.0), Na=(130, 138), Hgb=(10.5, 12.5), WBC=(6.0, 9.5)),
    ),
    "copd": dict(
        cc="Worsening shortness of breath and wheezing", primary="COPD exacerbation",
        icd=[("49121", "Obstructive chronic bronchitis with (acute) exacerbation")],
        secondary=["Hypercarbic respiratory failure"], sec_icd=[("51881", "Acute respiratory failure")],
        meds=["Prednisone", "Azithromycin", "Albuterol Inhaler", "Tiotropium Bromide"],
        cxr="Hyperinflated lungs without focal consolidation.",
        hpi="with severe COPD on home oxygen presented with increased wheezing and sputum production; ABG 7.28/68",
        labs=dict(K=(3.7, 4.7), Cr=(0.7, 1.1), Na=(136, 143), Hgb=(13.0, 15.5), WBC=(9.0, 14.0)),
    ),
    "gib": dict(
        cc="Black tarry stools", primary="Upper gastrointestinal bleed",
        icd=[("5789", "Hemorrhage of gastrointestinal tract, unspecified")],
        secondary=["Acute blood loss anemia"], sec_icd=[("2851", "Acute posthemorrhagic anemia")],
        meds=["Pantoprazole", "Ferrous Sulfate", "Sucralfate"],
        cxr="No acute cardiopulmonary process.",
        hpi="presented with melena for two days and lightheadedness; Hct 21 in the ED. EGD showed a duodenal ulcer",
        labs=dict(K=(3.5, 4.5), Cr=(0.9, 1.4), Na=(135, 142), Hgb=(6.8, 9.0), WBC=(7.0, 11.0)),
    ),
    "dka": dict(
        cc="Nausea, vomiting and abdominal pain", primary="Diabetic ketoacidosis",
        icd=[("25013", "Diabetes with ketoacidosis, type I [juvenile type], uncontrolled")],
        secondary=["Hypokalemia"], sec_icd=[("2768", "Hypopotassemia")],
        meds=["Insulin Glargine", "Insulin Lispro", "Ondansetron"],
        cxr="No acute cardiopulmonary process.",
        hpi="with type 1 diabetes presented with two days of nausea, vomiting and abdominal pain after missing insulin doses; glucose 612, anion gap 28",
        labs=dict(K=(3.0, 5.6), Cr=(1.0, 1.6), Na=(128, 137), Hgb=(12.0, 14.5), WBC=(10.0, 16.0)),
    ),
}

DISPOSITIONS = ["Home", "Home With Service", "Extended Care", "Home"]
FIRST = {"M": ["John", "Robert", "Michael", "William", "David", "James"],
         "F": ["Mary", "Linda", "Susan", "Karen", "Nancy", "Helen"]}

# Findings probed by "any note mention X?" questions: term as asked -> phrase written in the note.
INTUB = "intubated"


def seeded(key: str) -> random.Random:
    """An RNG seeded by a string: the same draws on every machine and run."""
    return random.Random(key)  # noqa: S311 - reproducible draws, not secrets


def fmt_ts(t: datetime) -> str:
    """MIMIC timestamp text."""
    return t.strftime("%Y-%m-%d %H:%M:%S")


def deid_date(d: date) -> str:
    """A date as MIMIC's de-identification writes it inside note text: [**2151-3-4**]."""
    return f"[**{d.year}-{d.month}-{d.day}**]"


def fmt_val(code: str, v: float) -> str:
    """A lab value with the decimals the lab reports."""
    dec = LABS[code][4]
    return str(int(round(v))) if dec == 0 else f"{v:.{dec}f}"


# --------------------------------------------------------------------------------------------- generation


class World:
    """All generated rows plus, per patient, the facts the gold answers read."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict]] = {k: [] for k in (
            "PATIENTS", "ADMISSIONS", "ICUSTAYS", "D_LABITEMS", "LABEVENTS", "D_ITEMS", "CHARTEVENTS",
            "PRESCRIPTIONS", "DIAGNOSES_ICD", "D_ICD_DIAGNOSES", "NOTEEVENTS")}
        self.ids = {k: 0 for k in self.rows}
        self.patients: list[dict] = []

    def add(self, table: str, row: dict) -> dict:
        self.ids[table] += 1
        row = {"ROW_ID": self.ids[table], **row}
        self.rows[table].append(row)
        return row


def note(w: World, p: dict, adm: dict | None, cat: str, desc: str, when: datetime, text: str,
         timed: bool = True, iserror: bool = False, cgid: int | None = None) -> dict:
    """Append one NOTEEVENTS row (CHARTTIME empty when not timed, as MIMIC's summaries, echo and ECG)."""
    row = w.add("NOTEEVENTS", {
        "SUBJECT_ID": p["sid"], "HADM_ID": adm["hadm"] if adm else "",
        "CHARTDATE": when.strftime("%Y-%m-%d"),
        "CHARTTIME": fmt_ts(when) if timed else "",
        "STORETIME": fmt_ts(when + timedelta(minutes=37)) if timed else "",
        "CATEGORY": cat, "DESCRIPTION": desc, "CGID": cgid if cgid is not None else 14000 + len(w.rows["NOTEEVENTS"]) % 900,
        "ISERROR": "1" if iserror else "", "TEXT": text})
    rec = {"row": row, "cat": cat.strip(), "time": when, "date": when.date(), "adm": adm, "error": iserror,
           "text": text}
    p["notes"].append(rec)
    return rec


def gen_patient(w: World, i: int, spec: dict) -> None:
    rng = seeded(f"{SEED}/patient/{i}")
    sex = spec["sex"]
    sid = 40000 + 137 * i + rng.randint(0, 99)
    first = rng.choice(FIRST[sex])
    pr = "he" if sex == "M" else "she"
    base_year = 2150 + rng.randint(0, 40)
    dob = datetime(base_year - rng.randint(45, 85), rng.randint(1, 12), rng.randint(1, 28))
    p = dict(sid=sid, sex=sex, first=first, pr=pr, dob=dob, adms=[], notes=[], labs=[], spec=spec)
    w.add("PATIENTS", {"SUBJECT_ID": sid, "GENDER": sex, "DOB": fmt_ts(dob), "DOD": "", "DOD_HOSP": "",
                       "DOD_SSN": "", "EXPIRE_FLAG": 0})
    t = datetime(base_year, rng.randint(1, 6), rng.randint(1, 28), rng.randint(8, 22), rng.randint(0, 59))
    for a_i, prof_name in enumerate(spec["profiles"]):
        prof = PROFILES[prof_name]
        arng = seeded(f"{SEED}/adm/{i}/{a_i}")
        los = arng.randint(4, 8)
        admit = t
        disch = datetime.combine((admit + timedelta(days=los)).date(), datetime.min.time()) + timedelta(
            hours=arng.randint(11, 16), minutes=arng.randint(0, 59))
        hadm = 100000 + arng.randint(0, 99999)
        adm = dict(hadm=hadm, admit=admit, disch=disch, prof=prof_name, p=prof, i=a_i,
                   intubated=prof_name in ("copd", "pneumonia") and arng.random() < 0.7,
                   dispo=arng.choice(DISPOSITIONS))
        p["adms"].append(adm)
        w.add("ADMISSIONS", {"SUBJECT_ID": sid, "HADM_ID": hadm, "ADMITTIME": fmt_ts(admit),
                             "DISCHTIME": fmt_ts(disch), "DEATHTIME": "", "ADMISSION_TYPE": "EMERGENCY",
                             "ADMISSION_LOCATION": "EMERGENCY ROOM ADMIT",
                             "DISCHARGE_LOCATION": {"Home": "HOME", "Home With Service": "HOME HEALTH CARE",
                                                    "Extended Care": "SNF"}[adm["dispo"]],
                             "INSURANCE": "Medicare", "LANGUAGE": "ENGL", "RELIGION": "CATHOLIC",
                             "MARITAL_STATUS": "MARRIED", "ETHNICITY": "WHITE",
                             "EDREGTIME": fmt_ts(admit - timedelta(hours=3)),
                             "EDOUTTIME": fmt_ts(admit), "DIAGNOSIS": prof["cc"].upper(),
                             "HOSPITAL_EXPIRE_FLAG": 0, "HAS_CHARTEVENTS_DATA": 1})
        icu_in = admit + timedelta(hours=2)
        icu_out = icu_in + timedelta(days=2, hours=arng.randint(0, 20))
        w.add("ICUSTAYS", {"SUBJECT_ID": sid, "HADM_ID": hadm, "ICUSTAY_ID": 200000 + arng.randint(0, 99999),
                           "DBSOURCE": "metavision", "FIRST_CAREUNIT": "MICU", "LAST_CAREUNIT": "MICU",
                           "FIRST_WARDID": 52, "LAST_WARDID": 52, "INTIME": fmt_ts(icu_in),
                           "OUTTIME": fmt_ts(icu_out), "LOS": round((icu_out - icu_in).total_seconds() / 86400, 4)})
        # diagnoses
        codes = prof["icd"] + prof["sec_icd"]
        for seq, (code, _title) in enumerate(codes, 1):
            w.add("DIAGNOSES_ICD", {"SUBJECT_ID": sid, "HADM_ID": hadm, "SEQ_NUM": seq, "ICD9_CODE": code})
        # labs: admission draw + daily 05:00
        draws = [admit + timedelta(minutes=50)]
        d = datetime.combine(admit.date() + timedelta(days=1), datetime.min.time()) + timedelta(hours=5)
        while d < disch:
            draws.append(d + timedelta(minutes=arng.randint(0, 40)))
            d += timedelta(days=1)
        adm["draws"] = []
        for dt in draws:
            vals = {}
            for code, (item, _label, _loinc, unit, dec) in LABS.items():
                lo, hi = prof["labs"][code]
                v = round(arng.uniform(lo, hi), dec)
                vals[code] = v
                w.add("LABEVENTS", {"SUBJECT_ID": sid, "HADM_ID": hadm, "ITEMID": item,
                                    "CHARTTIME": fmt_ts(dt), "VALUE": fmt_val(code, v), "VALUENUM": v,
                                    "VALUEUOM": unit, "FLAG": ""})
            adm["draws"].append((dt, vals))
            p["labs"].append((dt, vals))
        # vitals (a few heart rates and SpO2 in the ICU)
        ct = icu_in + timedelta(minutes=30)
        while ct < icu_out:
            w.add("CHARTEVENTS", {"SUBJECT_ID": sid, "HADM_ID": hadm, "ICUSTAY_ID": "", "ITEMID": 220045,
                                  "CHARTTIME": fmt_ts(ct), "STORETIME": fmt_ts(ct + timedelta(minutes=5)),
                                  "CGID": 15000, "VALUE": str(arng.randint(70, 115)), "VALUENUM": "",
                                  "VALUEUOM": "bpm", "WARNING": 0, "ERROR": 0, "RESULTSTATUS": "",
                                  "STOPPED": ""})
            ct += timedelta(hours=4)
        for row in w.rows["CHARTEVENTS"]:
            if row["VALUENUM"] == "":
                row["VALUENUM"] = row["VALUE"]
        # prescriptions: the discharge meds (ordered during the stay) + an inpatient-only heparin
        for drug in prof["meds"] + ["Heparin"]:
            w.add("PRESCRIPTIONS", {"SUBJECT_ID": sid, "HADM_ID": hadm, "ICUSTAY_ID": "",
                                    "STARTDATE": fmt_ts(datetime.combine(admit.date(), datetime.min.time())),
                                    "ENDDATE": fmt_ts(datetime.combine(disch.date(), datetime.min.time())),
                                    "DRUG_TYPE": "MAIN", "DRUG": drug, "DRUG_NAME_POE": drug,
                                    "DRUG_NAME_GENERIC": drug, "FORMULARY_DRUG_CD": drug[:6].upper(),
                                    "GSN": "", "NDC": "0", "PROD_STRENGTH": "", "DOSE_VAL_RX": "1",
                                    "DOSE_UNIT_RX": "TAB", "FORM_VAL_DISP": "1", "FORM_UNIT_DISP": "TAB",
                                    "ROUTE": "PO" if drug != "Heparin" else "SC"})
        gen_notes(w, p, adm, arng, spec)
        t = disch + timedelta(days=arng.randint(60, 300), hours=arng.randint(-5, 5))
    last = p["adms"][-1]["disch"]
    p["now"] = datetime.combine(last.date() + timedelta(days=seeded(f"{SEED}/now/{i}").randint(3, 21)),
                                datetime.min.time()) + timedelta(hours=12)
    w.patients.append(p)


def lab_before(adm: dict, t: datetime) -> tuple[datetime, dict]:
    """The latest draw of the stay at or before t (the values a note written at t quotes)."""
    best = None
    for dt, vals in adm["draws"]:
        if dt <= t:
            best = (dt, vals)
    assert best is not None
    return best


def gen_notes(w: World, p: dict, adm: dict, rng: random.Random, spec: dict) -> None:
    prof = adm["p"]
    Pr = p["pr"].capitalize()
    age = adm["admit"].year - p["dob"].year
    adm["nursing"], adm["physician"], adm["radiology"], adm["echo"], adm["ecg"], adm["resp"] = [], [], [], [], [], []
    adm["pressure_ulcer"] = False
    days = [(adm["admit"] + timedelta(days=k)).date() for k in range((adm["disch"].date() - adm["admit"].date()).days + 1)]
    # radiology: admission CXR, maybe a follow-up CXR; never two on one day
    if spec.get("radiology", True):
        cxr_days = [days[0]] + ([days[2]] if rng.random() < 0.6 else [])
        for k, d in enumerate(cxr_days):
            t = datetime.combine(d, datetime.min.time()) + timedelta(hours=rng.randint(7, 22), minutes=rng.randint(0, 59))
            if t < adm["admit"]:
                t = adm["admit"] + timedelta(minutes=40)
            imp = prof["cxr"] if k == 0 else rng.choice(["Interval improvement.", prof["cxr"], "Stable appearance of the chest."])
            if k == 0 and adm["intubated"]:
                imp = "Endotracheal tube terminates 4 cm above the carina. " + imp
            desc = "CHEST (PORTABLE AP)"
            text = (f"{deid_date(d)} {t.strftime('%-I:%M %p')}\n{desc}                                             "
                    f"Clip # [**Clip Number (Radiology) {rng.randint(10000, 99999)}**]\n"
                    f"Reason: {prof['cc'].lower()}\nAdmitting Diagnosis: {prof['cc'].upper()}\n"
                    f"______________________________________________________________________________\n"
                    f"                                 FINAL REPORT\n"
                    f"INDICATION:  {age}-year-old {'man' if p['sex'] == 'M' else 'woman'} with {prof['cc'].lower()}.\n\n"
                    f"COMPARISON:  None.\n\nFINDINGS:  Portable AP view of the chest. Heart size is "
                    f"{'enlarged' if adm['prof'] == 'chf' else 'normal'}. "
                    f"{'There is no pneumothorax.' }\n\nIMPRESSION:  {imp}\n")
            rec = note(w, p, adm, "Radiology", desc, t, text)
            rec["impression"] = imp
            adm["radiology"].append(rec)
        if rng.random() < 0.4:  # a CT on another day
            d = days[1]
            t = datetime.combine(d, datetime.min.time()) + timedelta(hours=14, minutes=rng.randint(0, 59))
            imp = "No acute intracranial process." if adm["prof"] in ("sepsis", "dka") else "No pulmonary embolism."
            desc = "CT HEAD W/O CONTRAST" if adm["prof"] in ("sepsis", "dka") else "CTA CHEST W&W/O C&RECONS"
            text = (f"{deid_date(d)} 2:10 PM\n{desc}\nReason: eval\n                                 FINAL REPORT\n"
                    f"FINDINGS:  Unremarkable study.\n\nIMPRESSION:  {imp}\n")
            rec = note(w, p, adm, "Radiology", desc, t, text)
            rec["impression"] = imp
            adm["radiology"].append(rec)
    # nursing notes: 2-4, the skin line varies; one patient-level flag plants a pressure ulcer
    if spec.get("nursing", True):
        n_n = rng.randint(2, 4)
        for k in range(n_n):
            d = days[min(k + 1, len(days) - 2)]
            t = datetime.combine(d, datetime.min.time()) + timedelta(hours=rng.choice([5, 6, 17, 18]), minutes=rng.randint(0, 59))
            pu = spec.get("pu_adm") == adm["i"] and k == n_n - 1
            skin = ("Stage II pressure ulcer to coccyx, 2 x 3 cm, Duoderm applied, wound care consulted."
                    if pu else rng.choice(["Skin intact.", "Skin intact, turned q2h.", "Skin: no breakdown noted."]))
            adm["pressure_ulcer"] |= pu
            resp = ("Remains intubated on AC 500 x 14, PEEP 5, FiO2 40%." if adm["intubated"] and k == 0
                    else "Lungs with scattered rhonchi, on 2L NC, sats 94-97%.")
            neuro = ("Confused, oriented to self only, CAM positive for delirium." if adm["prof"] == "sepsis" and k == 0
                     else "A&Ox3, follows commands, MAE.")
            cat = "Nursing/other" if rng.random() < 0.5 else "Nursing"
            desc = "Report" if cat == "Nursing/other" else "Nursing Progress Note"
            text = (f"Nursing Progress Note 0700-1900\nNeuro: {neuro}\nCV: HR 80s-90s, SBP 100s-120s.\n"
                    f"Resp: {resp}\nGI/GU: Tolerating diet, foley draining clear yellow urine.\nSkin: {skin}\n"
                    f"Social: {('Wife' if p['sex'] == 'M' else 'Husband')} in to visit, updated on plan of care.\n"
                    f"Plan: Continue current plan, monitor labs.\n")
            rec = note(w, p, adm, cat, desc, t, text, cgid=16000 + rng.randint(0, 50))
            rec["pu"] = pu
            adm["nursing"].append(rec)
    # physician progress notes quoting the morning labs; the spec plants mismatched potassiums
    if spec.get("physician", True):
        n_p = rng.randint(1, 3)
        for k in range(n_p):
            d = days[k + 1]
            t = datetime.combine(d, datetime.min.time()) + timedelta(hours=rng.randint(9, 12), minutes=rng.randint(0, 59))
            ldt, vals = lab_before(adm, t)
            quoted = dict(vals)
            mism = (spec.get("k_mismatch") == adm["i"]) and k == n_p - 1
            if mism:
                quoted["K"] = round(vals["K"] + (1.1 if vals["K"] < 4.5 else -1.2), 1)
            lab_line = (f"Na {fmt_val('Na', quoted['Na'])}, K {fmt_val('K', quoted['K'])}, Cr {fmt_val('Cr', quoted['Cr'])}, "
                        f"Hgb {fmt_val('Hgb', quoted['Hgb'])}, WBC {fmt_val('WBC', quoted['WBC'])}")
            plan = [f"# {prof['primary']}: continue current therapy."]
            for s in prof["secondary"]:
                plan.append(f"# {s}: monitor, trend labs.")
            vent = "Intubated, on AC ventilation, wean as tolerated." if adm["intubated"] and k == 0 else "On nasal cannula."
            text = (f"Chief Complaint: {prof['cc'].lower()}\nHPI: {age} yo {'M' if p['sex'] == 'M' else 'F'} admitted to "
                    f"[**Hospital1 18**] for {prof['primary'].lower()}.\n24 Hour Events: No acute events overnight.\n"
                    f"Physical Examination: General: NAD. Resp: {vent}\n"
                    f"Labs / Radiology: {lab_line}\n"
                    f"Assessment and Plan:\n" + "\n".join(plan) + "\nICU Care: Code status: Full code.\n")
            rec = note(w, p, adm, "Physician ", "Physician Resident Progress Note", t, text,
                       cgid=17000 + rng.randint(0, 50))
            rec.update(quoted=quoted, lab=vals, lab_time=ldt, mismatch=mism)
            adm["physician"].append(rec)
    # echo (CHF always, others when the spec says), ECG, respiratory therapy
    if spec.get("echo") and (adm["prof"] == "chf" or adm["i"] == len(spec["profiles"]) - 1):
        d = days[1]
        ef = rng.choice([25, 30, 35, 40]) if adm["prof"] == "chf" else rng.choice([55, 60, 65])
        text = (f"PATIENT/TEST INFORMATION:\nIndication: {prof['cc']}.\nDate/Time: {deid_date(d)} at 10:15\n"
                f"Test: TTE (Complete)\nMEASUREMENTS:\nLeft Ventricle - Ejection Fraction:  {ef}%\n\n"
                f"Conclusions:\nThe left atrium is mildly dilated. The left ventricular ejection fraction is {ef}%. "
                f"{'There is severe global left ventricular hypokinesis.' if ef < 45 else 'Regional left ventricular wall motion is normal.'}\n")
        rec = note(w, p, adm, "Echo", "Report", datetime.combine(d, datetime.min.time()), text, timed=False)
        rec["ef"] = ef
        adm["echo"].append(rec)
    if spec.get("ecg", True):
        d = days[0]
        afib = adm["prof"] == "chf"
        interp = ("Atrial fibrillation with rapid ventricular response. Nonspecific ST-T wave changes." if afib
                  else "Sinus tachycardia. Otherwise normal ECG.")
        rec = note(w, p, adm, "ECG", "Report", datetime.combine(d, datetime.min.time()), interp + "\n", timed=False)
        rec["afib"] = afib
        adm["ecg"].append(rec)
    if adm["intubated"]:
        d = days[1]
        t = datetime.combine(d, datetime.min.time()) + timedelta(hours=3, minutes=rng.randint(0, 59))
        text = ("Respiratory Care Note\nPt remains intubated on AC 500 x 14, PEEP 5, FiO2 40%. BS coarse bilaterally, "
                "suctioned for thick tan secretions. RSBI 78 this am, SBT planned.\n")
        adm["resp"].append(note(w, p, adm, "Respiratory ", "Respiratory Care Shift Note", t, text))
    # discharge summary (CHARTDATE only)
    if spec.get("ds", True):
        dx = [prof["primary"]] + prof["secondary"]
        meds = prof["meds"]
        med_lines = "\n".join(f"{k}. {m} {rng.choice(['20 mg', '25 mg', '40 mg', '500 mg', '1 tab'])} PO {rng.choice(['daily', 'BID'])}"
                              for k, m in enumerate(meds, 1))
        course = f"{Pr} was admitted to the MICU. "
        if adm["intubated"]:
            course += f"{Pr} was intubated on arrival for hypoxemic respiratory failure and extubated on hospital day 3. "
        if adm["prof"] == "sepsis":
            course += "Blood cultures grew E. coli; sepsis resolved with antibiotics. "
        if adm["pressure_ulcer"]:
            course += "A stage II sacral pressure ulcer was noted and followed by wound care. "
        text = (f"Admission Date:  {deid_date(adm['admit'].date())}     Discharge Date:   {deid_date(adm['disch'].date())}\n\n"
                f"Date of Birth:  {deid_date(p['dob'].date())}     Sex:   {p['sex']}\n\nService: MEDICINE\n\n"
                f"Allergies:\nPatient recorded as having No Known Allergies to Drugs\n\n"
                f"Attending:[**First Name3 (LF) {rng.randint(100, 999)}**]\nChief Complaint:\n{prof['cc']}\n\n"
                f"Major Surgical or Invasive Procedure:\n{'Endotracheal intubation' if adm['intubated'] else 'None'}\n\n"
                f"History of Present Illness:\n{age} year old {'man' if p['sex'] == 'M' else 'woman'} {prof['hpi']}.\n\n"
                f"Past Medical History:\n{spec['pmh']}\n\n"
                f"Brief Hospital Course:\n{course}\n\n"
                f"Discharge Medications:\n{med_lines}\n\n"
                f"Discharge Disposition:\n{adm['dispo']}\n\n"
                f"Discharge Diagnosis:\nPrimary:\n{dx[0]}\n\nSecondary:\n" + "\n".join(dx[1:]) + "\n\n"
                "Discharge Condition:\nMental Status: Clear and coherent. Activity Status: Ambulatory - Independent.\n\n"
                "Followup Instructions:\nPlease follow up with your PCP [**Name Initial (PRE) 176**] 1 week.\n")
        rec = note(w, p, adm, "Discharge summary", "Report", datetime.combine(adm["disch"].date(), datetime.min.time()),
                   text, timed=False)
        rec.update(dx=dx, meds=meds, cc=prof["cc"], dispo=adm["dispo"])
        adm["ds"] = rec
    else:
        adm["ds"] = None
    # ISERROR rows: a wrong CXR report filed after the real ones and a wrong summary, both to be ignored
    if spec.get("err_cxr") == adm["i"]:
        t = adm["disch"] - timedelta(hours=2)
        text = (f"{deid_date(t.date())} 9:05 AM\nCHEST (PA & LAT)\n                                 FINAL REPORT\n"
                f"FINDINGS: Wrong patient.\n\nIMPRESSION:  Large left pneumothorax. Patient was intubated.\n")
        note(w, p, adm, "Radiology", "CHEST (PA & LAT)", t, text, iserror=True)
    if spec.get("err_nursing") == adm["i"]:
        t = adm["disch"] - timedelta(hours=1)
        text = ("Nursing Progress Note\nSkin: Stage III pressure ulcer to sacrum. Pt had a fall overnight.\n"
                "Note entered on wrong patient.\n")
        note(w, p, adm, "Nursing/other", "Report", t, text, iserror=True)


# Patient specs: profiles of successive admissions, note kinds present, planted findings.
SPECS = [
    dict(sex="M", profiles=["copd", "pneumonia", "copd"], pmh="COPD on 2L home oxygen\nHypertension\nTobacco abuse, 60 pack-years",
         echo=False, k_mismatch=2, err_cxr=2),
    dict(sex="F", profiles=["chf", "chf"], pmh="Ischemic cardiomyopathy\nAtrial fibrillation on warfarin\nCKD stage III",
         echo=True, pu_adm=1),
    dict(sex="M", profiles=["sepsis", "gib"], pmh="BPH\nPeptic ulcer disease\nHypertension", echo=False, ds=True,
         k_mismatch=1),
    dict(sex="F", profiles=["dka", "dka", "sepsis"], pmh="Type 1 diabetes mellitus\nGastroparesis\nDepression",
         echo=True, pu_adm=2),
    dict(sex="M", profiles=["gib", "pneumonia"], pmh="Alcohol abuse\nCirrhosis\nEsophageal varices", echo=False,
         ecg=False),
    dict(sex="F", profiles=["pneumonia", "chf", "chf"], pmh="Hypertension\nDiastolic dysfunction\nHypothyroidism",
         echo=True, k_mismatch=2),
    dict(sex="M", profiles=["sepsis", "sepsis"], pmh="Neurogenic bladder\nParaplegia after spinal cord injury",
         echo=False, ds=False, pu_adm=1),
    dict(sex="F", profiles=["copd", "copd"], pmh="COPD\nOsteoporosis\nAnxiety", echo=False, physician=False),
    dict(sex="M", profiles=["chf", "sepsis"], pmh="Coronary artery disease s/p CABG\nAtrial fibrillation\nDiabetes type 2",
         echo=True, err_cxr=1, k_mismatch=1, err_nursing=1),
    dict(sex="F", profiles=["gib", "gib"], pmh="Peptic ulcer disease\nRheumatoid arthritis on prednisone", echo=False,
         radiology=False, ds=False),
    dict(sex="M", profiles=["dka", "pneumonia"], pmh="Type 1 diabetes mellitus\nHypertension", echo=False,
         nursing=False),
    dict(sex="F", profiles=["pneumonia", "sepsis", "copd"], pmh="COPD\nRecurrent UTI\nDementia",
         echo=True, pu_adm=1, k_mismatch=0),
]


def dictionaries(w: World) -> None:
    for code, (item, label, loinc, _unit, _dec) in LABS.items():
        w.add("D_LABITEMS", {"ITEMID": item, "LABEL": label, "FLUID": "Blood", "CATEGORY": "Chemistry" if code in ("K", "Cr", "Na") else "Hematology",
                             "LOINC_CODE": loinc})
    w.add("D_ITEMS", {"ITEMID": 220045, "LABEL": "Heart Rate", "ABBREVIATION": "HR", "DBSOURCE": "metavision",
                      "LINKSTO": "chartevents", "CATEGORY": "Routine Vital Signs", "UNITNAME": "bpm",
                      "PARAM_TYPE": "Numeric", "CONCEPTID": ""})
    seen = {}
    for prof in PROFILES.values():
        for code, title in prof["icd"] + prof["sec_icd"]:
            seen[code] = title
    for code, title in sorted(seen.items()):
        w.add("D_ICD_DIAGNOSES", {"ICD9_CODE": code, "SHORT_TITLE": title[:24], "LONG_TITLE": title})


def build_world() -> World:
    w = World()
    dictionaries(w)
    for i, spec in enumerate(SPECS):
        gen_patient(w, i, spec)
    return w


def write_csv(w: World, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for table, rows in w.rows.items():
        with open(out / f"{table}.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()), quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
            wr.writeheader()
            for r in rows:
                wr.writerow(r)


# --------------------------------------------------------------------------------------------- gold

def valid(p: dict, cat: str | None = None) -> list[dict]:
    """The patient's notes that count: not ISERROR, charted by now, of the category (trailing blanks ignored)."""
    out = [n for n in p["notes"] if not n["error"] and n["date"] <= p["now"].date()]
    if cat == "Nursing":
        return [n for n in out if n["cat"] in ("Nursing", "Nursing/other")]
    return [n for n in out if cat is None or n["cat"] == cat]


def latest(notes: list[dict]) -> dict | None:
    """The latest note by CHARTTIME, else CHARTDATE (a summary dated by day only sorts at the start of its day)."""
    return max(notes, key=lambda n: n["time"]) if notes else None


def section(text: str, head: str) -> list[str]:
    """The non-empty lines under a 'Heading:' line of a discharge summary, up to the next blank-line heading."""
    lines = text.split("\n")
    i = lines.index(head + ":")
    out = []
    for ln in lines[i + 1:]:
        if ln.endswith(":") and ln[:-1] and ln[:-1][0].isupper() and ln[:-1] not in ("Primary", "Secondary"):
            break
        if ln.strip() and ln.strip() not in ("Primary:", "Secondary:"):
            out.append(ln.strip())
    return out


def impression(text: str) -> str:
    return text.split("IMPRESSION:", 1)[1].strip()


def quoted(text: str, code: str) -> float:
    line = next(ln for ln in text.split("\n") if ln.startswith("Labs / Radiology:"))
    for part in line.split(":", 1)[1].split(","):
        k, v = part.split()
        if k == code:
            return float(v)
    raise KeyError(code)


# Affirmative phrases of each finding asked about, as the notes write them; no note writes them negated
# ("no pneumothorax", "No pulmonary embolism." are written, and asked on purpose: those answers are No).
FINDINGS = {
    "intubation": ["intubated", "endotracheal intubation"],
    "sepsis": ["sepsis"],
    "delirium": ["delirium"],
    "pressure ulcer": ["pressure ulcer"],
    "atrial fibrillation": ["atrial fibrillation"],
    "pneumonia": ["pneumonia"],
    "a fall": ["had a fall"],
    "pneumothorax": ["large left pneumothorax"],
    "pulmonary embolism": ["pulmonary embolism."],  # only ever "No pulmonary embolism."
}
NEGATED = {"pneumothorax": "no pneumothorax", "pulmonary embolism": "no pulmonary embolism"}


def mentions(notes: list[dict], term: str) -> bool:
    """Whether some note affirms the finding (a negated mention is not one)."""
    for n in notes:
        low = n["text"].lower()
        for ph in FINDINGS[term]:
            j = low.find(ph)
            while j >= 0:
                if term not in NEGATED or not low[max(0, j - 3):j + len(ph)].startswith("no "):
                    if not (term == "pulmonary embolism" and low[max(0, j - 3):j].endswith("no ")):
                        return True
                j = low.find(ph, j + 1)
    return False


def fmt_date(d: date, style: int) -> str:
    if style == 0:
        return d.isoformat()
    if style == 1:
        return f"{d.month}/{d.day}/{d.year}"
    return d.strftime("%b ") + f"{d.day}, {d.year}"


QUOTA = {"discharge_summary": 40, "echo_ecg": 20, "no_data": 32, "note_mentions": 40, "note_vs_lab": 18,
         "nursing": 20, "progress_note": 22, "radiology": 30}


def questions(w: World) -> list[dict]:
    cands: dict[str, list[dict]] = {}

    def q(cat: str, pattern: str, voice: str, p: dict, text: str, atype: str, expected, status="answered",
          refs=(), form=0):
        cands.setdefault(cat, []).append(dict(
            patient_id=str(p["sid"]), question=text, now=p["now"].strftime("%Y-%m-%dT%H:%M:%SZ"), category=cat,
            answer_type=atype, expected=expected if status == "answered" else [], expected_status=status,
            tolerance=0.01 if atype == "number" else 0, gold_refs=[f"noteevents/{r}" for r in refs],
            template=f"{cat}/{pattern}/{voice}.{form}"))

    all_drugs = sorted({m for prof in PROFILES.values() for m in prof["meds"]})
    for p in w.patients:
        rng = seeded(f"{SEED}/q/{p['sid']}")
        his = "his" if p["sex"] == "M" else "her"
        last_adm = p["adms"][-1]
        # ---- discharge summaries
        ds = latest(valid(p, "Discharge summary"))
        if ds:
            dx = section(ds["text"], "Discharge Diagnosis")
            assert dx == ds["dx"], (dx, ds["dx"])
            meds = [ln.split(". ", 1)[1] for ln in section(ds["text"], "Discharge Medications")]
            med_names = [m for m in ds["meds"] if any(x.startswith(m + " ") for x in meds)]
            assert med_names == ds["meds"]
            r = [ds["row"]["ROW_ID"]]
            k = rng.randint(0, 2)
            q("discharge_summary", "dc-dx-list", ["team", "cdi", "cdi"][k], p, [
                "what did the last discharge summary list as discharge dx?",
                "Discharge diagnoses per the most recent d/c summary?",
                "List the discharge diagnoses documented in the latest discharge summary."][k], "list", sorted(dx), refs=r, form=k)
            k = rng.randint(0, 2)
            q("discharge_summary", "primary-dx", ["cdi", "team", "quality"][k], p, [
                "principal discharge dx per the last summary?",
                "primary dx on the last d/c summary",
                "What primary discharge diagnosis does the most recent discharge summary give?"][k], "string", [dx[0]], refs=r, form=k)
            k = rng.randint(0, 2)
            q("discharge_summary", "dc-meds", ["team", "team", "quality"][k], p, [
                "d/c meds per the summary?", "discharge meds on the last discharge summary?",
                "Which medications were listed under discharge medications in the latest summary?"][k],
                "list", sorted(med_names), refs=r, form=k)
            yes = rng.choice(med_names)
            no = rng.choice([d for d in all_drugs if d not in med_names and d.split()[0] not in " ".join(med_names)])
            for drug, exp in ((yes, True), (no, False)):
                k = rng.randint(0, 1)
                q("discharge_summary", "dc-on-drug-" + ("yes" if exp else "no"), "team", p, [
                    f"was {p['pr']} discharged on {drug.lower()} per the last summary?",
                    f"{drug} on the d/c med list of the last discharge summary?"][k], "boolean", [exp], refs=r, form=k)
            k = rng.randint(0, 2)
            q("discharge_summary", "chief-complaint", ["team", "cdi", "team"][k], p, [
                "chief complaint on admission per the last discharge summary?",
                "CC per the last d/c summary?",
                f"What was {his} chief complaint according to the most recent discharge summary?"][k],
                "string", [section(ds["text"], "Chief Complaint")[0]], refs=r, form=k)
            k = rng.randint(0, 1)
            q("discharge_summary", "disposition", ["quality", "team"][k], p, [
                "Discharge disposition per the last discharge summary?", "dispo on the last d/c summary?"][k],
                "string", [section(ds["text"], "Discharge Disposition")[0]], refs=r, form=k)
            k = rng.randint(0, 2)
            q("discharge_summary", "ds-date", ["quality", "team", "cdi"][k], p, [
                "When was the last discharge summary written?", "date of last d/c summary?",
                "last discharge summary date"][k], "date", [ds["date"].isoformat()], refs=r, form=k)
            n_ds = len(valid(p, "Discharge summary"))
            q("discharge_summary", "ds-count", "quality", p, "How many discharge summaries are on file?",
              "count", [n_ds], refs=[n["row"]["ROW_ID"] for n in valid(p, "Discharge summary")])
        else:
            for k, (text, atype) in enumerate([("what did the last discharge summary list as discharge dx?", "list"),
                                               ("d/c meds per the summary?", "list"),
                                               ("chief complaint per the last d/c summary?", "string"),
                                               ("date of last discharge summary?", "date")]):
                q("no_data", "no-ds", "team", p, text, atype, None, status="no-data", form=k)
            q("discharge_summary", "ds-count", "quality", p, "How many discharge summaries are on file?", "count", [0])
        # ---- mentions in any note
        notes = valid(p)
        terms = ["intubation", "sepsis", "delirium", "pressure ulcer", "atrial fibrillation", "pneumonia",
                 "a fall", "pneumothorax", "pulmonary embolism"]
        forms = {
            "intubation": ["any note mention intubation?", "was {pr} ever intubated per the notes?",
                           "Is intubation documented in any note?"],
            "sepsis": ["was sepsis documented in any note?", "any note mention sepsis?",
                       "Does any note document sepsis?"],
            "delirium": ["any delirium documented in the notes?", "Was delirium mentioned in any note?"],
            "pressure ulcer": ["any note document a pressure ulcer?", "pressure ulcer mentioned in any note?",
                               "Has a pressure injury (pressure ulcer) been documented in any note?"],
            "atrial fibrillation": ["afib mentioned in any note?", "Is atrial fibrillation documented in the notes?"],
            "pneumonia": ["any note mention pneumonia?", "was pneumonia documented in any note?"],
            "a fall": ["any fall documented in the notes?", "Did any note document a fall?"],
            "pneumothorax": ["any pneumothorax on the chest x-ray reports?", "was a pneumothorax reported on any imaging?"],
            "pulmonary embolism": ["any PE on the imaging reports?", "was a pulmonary embolism found on any imaging report?"],
        }
        for term in terms:
            if term in ("pneumothorax",) and not valid(p, "Radiology"):
                continue
            if term == "pulmonary embolism" and not any("CTA" in n["row"]["DESCRIPTION"] for n in valid(p, "Radiology")):
                continue
            exp = mentions(notes, term)
            k = rng.randrange(len(forms[term]))
            refs = [n["row"]["ROW_ID"] for n in notes if any(ph in n["text"].lower() for ph in FINDINGS[term])] if exp else []
            q("note_mentions", term.replace(" ", "-") + ("-yes" if exp else "-no"),
              "quality" if term in ("pressure ulcer", "a fall") else ("cdi" if term in ("sepsis", "delirium") else "team"),
              p, forms[term][k].format(pr=p["pr"]), "boolean", [exp], refs=refs[:3], form=k)
        # ---- radiology
        rads = valid(p, "Radiology")
        cxrs = [n for n in rads if n["row"]["DESCRIPTION"].startswith("CHEST")]
        if cxrs:
            for n in cxrs:
                same_day = [m for m in rads if m["date"] == n["date"]]
                if len(same_day) == 1:
                    st = rng.randint(0, 2)
                    k = rng.randint(0, 2)
                    q("radiology", "cxr-impression-date", "team", p, [
                        f"CXR impression on {fmt_date(n['date'], st)}?",
                        f"what did the chest x-ray on {fmt_date(n['date'], st)} show (impression)?",
                        f"Impression of the {fmt_date(n['date'], st)} CXR?"][k], "string",
                      [impression(n["text"])], refs=[n["row"]["ROW_ID"]], form=k)
            lc = latest(cxrs)
            k = rng.randint(0, 1)
            q("radiology", "last-cxr-impression", "team", p, ["last CXR impression?",
              "What was the impression of the most recent chest x-ray?"][k], "string", [impression(lc["text"])],
              refs=[lc["row"]["ROW_ID"]], form=k)
            k = rng.randint(0, 1)
            q("radiology", "last-cxr-date", "team", p, ["when was the last CXR?", "date of most recent chest x-ray report?"][k],
              "date", [lc["date"].isoformat()], refs=[lc["row"]["ROW_ID"]], form=k)
        else:
            q("no_data", "no-radiology-impression", "team", p, "last CXR impression?", "string", None, status="no-data")
            q("no_data", "no-radiology-date", "team", p, "when was the last chest x-ray?", "date", None, status="no-data")
        this = [n for n in rads if n["adm"] is last_adm]
        k = rng.randint(0, 2)
        q("radiology", "count-this-admission", ["quality", "team", "quality"][k], p, [
            "how many radiology reports this admission?", "# of imaging reports this admit?",
            "How many radiology reports were filed during this admission?"][k], "count", [len(this)],
          refs=[n["row"]["ROW_ID"] for n in this], form=k)
        for e in [n for n in p["notes"] if n["error"] and n["cat"] == "Radiology"]:
            q("no_data", "error-cxr-day", "quality", p, f"CXR impression on {fmt_date(e['date'], 1)}?", "string", None,
              status="no-data")
        # ---- nursing
        nurs = valid(p, "Nursing")
        if nurs:
            ln = latest(nurs)
            k = rng.randint(0, 2)
            q("nursing", "last-note-pressure-ulcer", "quality", p, [
                "last nursing note say anything about pressure ulcer?",
                "Does the most recent nursing note document a pressure ulcer?",
                "pressure ulcer in the latest nursing note?"][k], "boolean", ["pressure ulcer" in ln["text"].lower()],
              refs=[ln["row"]["ROW_ID"]], form=k)
            k = rng.randint(0, 1)
            q("nursing", "last-nursing-date", "quality", p, ["when was the last nursing note?",
              "date of the most recent nursing progress note?"][k], "date", [ln["date"].isoformat()],
              refs=[ln["row"]["ROW_ID"]], form=k)
        else:
            q("no_data", "no-nursing", "quality", p, "last nursing note say anything about pressure ulcer?", "boolean",
              None, status="no-data")
            q("no_data", "no-nursing-date", "quality", p, "when was the last nursing note?", "date", None, status="no-data")
        this = [n for n in nurs if n["adm"] is last_adm]
        k = rng.randint(0, 1)
        q("nursing", "count-this-admission", "quality", p, ["how many nursing notes this admission?",
          "# of nursing notes this admit?"][k], "count", [len(this)], refs=[n["row"]["ROW_ID"] for n in this], form=k)
        # ---- physician progress notes and their lab values
        phys = valid(p, "Physician")
        if phys:
            lp = latest(phys)
            for n in rng.sample(phys, min(2, len(phys))):
                if sum(1 for m in phys if m["date"] == n["date"]) != 1:
                    continue
                code = rng.choice(["K", "Cr", "Hgb", "WBC"])
                word = {"K": rng.choice(["K", "potassium"]), "Cr": rng.choice(["Cr", "creatinine"]),
                        "Hgb": rng.choice(["Hgb", "hemoglobin"]), "WBC": "WBC"}[code]
                st = rng.randint(0, 2)
                k = rng.randint(0, 1)
                q("progress_note", f"value-on-date-{code}", "team", p, [
                    f"{word} per the progress note on {fmt_date(n['date'], st)}?",
                    f"What {word} did the {fmt_date(n['date'], st)} progress note quote?"][k], "number",
                  [quoted(n["text"], code)], refs=[n["row"]["ROW_ID"]], form=k)
            code = rng.choice(["Hgb", "Cr", "K"])
            k = rng.randint(0, 1)
            q("progress_note", f"value-last-note-{code}", "team", p, [
                f"{code} in the last progress note?", f"What {code} does the most recent physician progress note quote?"][k],
              "number", [quoted(lp["text"], code)], refs=[lp["row"]["ROW_ID"]], form=k)
            k = rng.randint(0, 1)
            q("progress_note", "last-progress-date", "team", p, ["date of the last progress note?",
              "when was the most recent physician note written?"][k], "date", [lp["date"].isoformat()],
              refs=[lp["row"]["ROW_ID"]], form=k)
            # note vs lab: latest lab draw at or before the note's CHARTTIME
            for n, which in ((lp, "last"),) + tuple((m, "dated") for m in phys if m is not lp and m.get("mismatch")):
                lab_t, vals = max(((t, v) for t, v in p["labs"] if t <= n["time"]), key=lambda x: x[0])
                kq = quoted(n["text"], "K")
                exp = abs(kq - vals["K"]) < 0.05
                st = rng.randint(0, 2)
                k = rng.randint(0, 2)
                if which == "last":
                    text = ["does the last progress note's K match the lab?",
                            "Does the potassium quoted in the most recent progress note match the lab result?",
                            "last progress note K same as the lab K?"][k]
                else:
                    text = [f"does the K in the {fmt_date(n['date'], st)} progress note match the lab?",
                            f"Is the potassium in the progress note of {fmt_date(n['date'], st)} consistent with the lab value?",
                            f"{fmt_date(n['date'], st)} progress note K vs lab K - same?"][k]
                q("note_vs_lab", f"k-match-{which}-" + ("yes" if exp else "no"), "quality", p, text, "boolean", [exp],
                  refs=[n["row"]["ROW_ID"]], form=k)
                k = rng.randint(0, 1)
                q("note_vs_lab", "lab-k-at-note", "quality", p, [
                    f"what was the lab K at the time of the {'last' if which == 'last' else fmt_date(n['date'], 0)} progress note?",
                    f"Lab potassium drawn before the {'most recent' if which == 'last' else fmt_date(n['date'], 0)} progress note?"][k],
                  "number", [vals["K"]], form=k)
        else:
            q("no_data", "no-progress-value", "team", p, "K in the last progress note?", "number", None, status="no-data")
            q("no_data", "no-progress-match", "quality", p, "does the progress note's K match the lab?", "boolean", None,
              status="no-data")
        # ---- echo / ECG / respiratory
        echo = valid(p, "Echo")
        if echo:
            le = latest(echo)
            k = rng.randint(0, 2)
            q("echo_ecg", "last-echo-date", "team", p, ["when was the last echo report?", "date of most recent TTE?",
              "last echo - when?"][k], "date", [le["date"].isoformat()], refs=[le["row"]["ROW_ID"]], form=k)
            ef = int(le["text"].split("Ejection Fraction:")[1].split("%")[0])
            k = rng.randint(0, 2)
            q("echo_ecg", "last-echo-ef", "team", p, ["EF on the last echo?", "LVEF per the most recent echo report?",
              "what was the ejection fraction on the latest echo?"][k], "number", [ef], refs=[le["row"]["ROW_ID"]], form=k)
            q("echo_ecg", "echo-count", "quality", p, "how many echo reports are on file?", "count", [len(echo)],
              refs=[n["row"]["ROW_ID"] for n in echo])
        else:
            k = rng.randint(0, 1)
            q("no_data", "no-echo-date", "team", p, ["when was the last echo report?", "date of most recent TTE?"][k],
              "date", None, status="no-data", form=k)
            q("no_data", "no-echo-ef", "team", p, "EF on the last echo?", "number", None, status="no-data")
        ecg = valid(p, "ECG")
        if ecg:
            lg = latest(ecg)
            k = rng.randint(0, 1)
            q("echo_ecg", "last-ecg-afib", "team", p, ["last ECG show afib?",
              "Does the most recent ECG report describe atrial fibrillation?"][k], "boolean",
              ["atrial fibrillation" in lg["text"].lower()], refs=[lg["row"]["ROW_ID"]], form=k)
            q("echo_ecg", "last-ecg-date", "team", p, "date of the last ECG?", "date", [lg["date"].isoformat()],
              refs=[lg["row"]["ROW_ID"]])
        else:
            q("no_data", "no-ecg", "team", p, "last ECG show afib?", "boolean", None, status="no-data")
            q("no_data", "no-ecg-date", "team", p, "date of the last ECG?", "date", None, status="no-data")
        resp = valid(p, "Respiratory")
        this = [n for n in resp if n["adm"] is last_adm]
        q("echo_ecg", "resp-count-this-admission", "quality", p, "how many respiratory therapy notes this admission?",
          "count", [len(this)], refs=[n["row"]["ROW_ID"] for n in this])
    # per category, a seeded draw round-robin over the patterns (every pattern asked), then ids in draw order
    out = []
    for cat in sorted(cands):
        groups: dict[str, list[dict]] = {}
        for c in cands[cat]:
            groups.setdefault(c["template"].split("/")[1], []).append(c)
        rng = seeded(f"{SEED}/draw/{cat}")
        for g in groups.values():
            rng.shuffle(g)
        picked: list[dict] = []
        while len(picked) < min(QUOTA[cat], len(cands[cat])):
            for name in sorted(groups):
                if groups[name] and len(picked) < QUOTA[cat]:
                    picked.append(groups[name].pop())
        picked.sort(key=lambda c: (int(c["patient_id"]), c["template"]))
        for n, c in enumerate(picked, 1):
            out.append({"id": f"{cat}-{n:03d}", **c})
    return out


# --------------------------------------------------------------------------------------------- second derivation

def verify_sql(csv_dir: Path, qs: list[dict]) -> list[str]:
    """Re-derive every gold by SQL over the CSV files (DuckDB), from the rows and texts alone; return the
    disagreements. Shares no state with the generator: note kinds, ISERROR, latest notes, sections and values
    are found again by SQL and regular expressions."""
    import duckdb

    con = duckdb.connect()
    for t in ("NOTEEVENTS", "LABEVENTS", "ADMISSIONS"):
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_csv_auto('{csv_dir / (t + '.csv')}', header=true)")
    con.execute("CREATE VIEW ok AS SELECT *, trim(CATEGORY) AS cat, coalesce(CHARTTIME, CAST(CHARTDATE AS TIMESTAMP)) AS t "
                "FROM NOTEEVENTS WHERE ISERROR IS NULL OR ISERROR <> 1")

    def one(sql: str, *args):
        return con.execute(sql, list(args)).fetchone()

    def kind_where(kind: str) -> str:
        return {"ds": "cat = 'Discharge summary'", "rad": "cat = 'Radiology'", "cxr": "cat = 'Radiology' AND DESCRIPTION LIKE 'CHEST%'",
                "nurs": "cat IN ('Nursing', 'Nursing/other')", "phys": "cat = 'Physician'", "echo": "cat = 'Echo'",
                "ecg": "cat = 'ECG'", "resp": "cat = 'Respiratory'"}[kind]

    def last(kind: str, sid: int):
        return one(f"SELECT ROW_ID, CHARTDATE, TEXT, HADM_ID FROM ok WHERE SUBJECT_ID = ? AND {kind_where(kind)} "
                   "ORDER BY t DESC LIMIT 1", sid)

    def sect(text: str, head: str) -> list[str]:
        m = re.search(head + r":\n(.*?)\n\n(?=[A-Z][A-Za-z ]+:\n)", text + "\n\nEnd:\n", re.S)
        body = m.group(1) if m else ""
        if head == "Discharge Diagnosis":
            body = re.search(r"Discharge Diagnosis:\n(.*?)\n\nDischarge Condition", text, re.S).group(1)
        return [ln.strip() for ln in body.split("\n") if ln.strip() and ln.strip() not in ("Primary:", "Secondary:")]

    def qval(text: str, code: str) -> float:
        return float(re.search(r"Labs / Radiology:.*?\b" + code + r" ([0-9.]+)", text).group(1))

    def this_adm(sid: int, now: str) -> int:
        return one("SELECT HADM_ID FROM ADMISSIONS WHERE SUBJECT_ID = ? AND ADMITTIME <= CAST(? AS TIMESTAMP) "
                   "ORDER BY ADMITTIME DESC LIMIT 1", sid, now[:19])[0]

    def count(kind: str, sid: int, hadm: int | None = None) -> int:
        extra = "" if hadm is None else f" AND HADM_ID = {int(hadm)}"
        return one(f"SELECT count(*) FROM ok WHERE SUBJECT_ID = ? AND {kind_where(kind)}{extra}", sid)[0]

    def ref_row(qq: dict):
        rid = int(qq["gold_refs"][0].split("/")[1])
        return one("SELECT ROW_ID, CHARTDATE, TEXT, cat, DESCRIPTION, CHARTTIME FROM ok WHERE ROW_ID = ?", rid)

    bad = []
    for qq in qs:
        sid, pat, now = int(qq["patient_id"]), qq["template"].split("/")[1], qq["now"]
        exp = qq["expected"]
        got: object = "skip"
        if pat in ("dc-dx-list", "primary-dx", "dc-meds", "chief-complaint", "disposition", "ds-date") or pat.startswith("dc-on-drug"):
            r = last("ds", sid)
            text = r[2]
            if pat == "dc-dx-list":
                got = sorted(sect(text, "Discharge Diagnosis"))
            elif pat == "primary-dx":
                got = sect(text, "Discharge Diagnosis")[:1]
            elif pat == "dc-meds":
                got = sorted(re.match(r"\d+\. (.*?) (?:\d+ mg|1 tab) ", ln + " ").group(1) for ln in sect(text, "Discharge Medications"))
            elif pat.startswith("dc-on-drug"):
                m = re.search(r"discharged on (.*?) per the last", qq["question"]) or re.match(r"(.*?) on the d/c", qq["question"])
                drug = m.group(1)
                got = [any(re.match(r"\d+\. " + re.escape(drug) + " ", ln, re.I) for ln in sect(text, "Discharge Medications"))]
            elif pat == "chief-complaint":
                got = sect(text, "Chief Complaint")[:1]
            elif pat == "disposition":
                got = sect(text, "Discharge Disposition")[:1]
            else:
                got = [str(r[1])]
        elif pat == "ds-count":
            got = [count("ds", sid)]
        elif pat == "cxr-impression-date":
            r = ref_row(qq)
            n_day = one("SELECT count(*) FROM ok WHERE SUBJECT_ID = ? AND cat = 'Radiology' AND CHARTDATE = ?", sid, r[1])[0]
            got = [r[2].split("IMPRESSION:", 1)[1].strip()] if n_day == 1 else "ambiguous day"
        elif pat in ("last-cxr-impression", "last-cxr-date"):
            r = last("cxr", sid)
            got = [r[2].split("IMPRESSION:", 1)[1].strip()] if pat == "last-cxr-impression" else [str(r[1])]
        elif pat == "count-this-admission" and qq["category"] == "radiology":
            got = [count("rad", sid, this_adm(sid, now))]
        elif pat == "count-this-admission":
            got = [count("nurs", sid, this_adm(sid, now))]
        elif pat == "resp-count-this-admission":
            got = [count("resp", sid, this_adm(sid, now))]
        elif pat == "last-note-pressure-ulcer":
            got = ["pressure ulcer" in last("nurs", sid)[2].lower()]
        elif pat == "last-nursing-date":
            got = [str(last("nurs", sid)[1])]
        elif pat.startswith("value-on-date"):
            r = ref_row(qq)
            assert one("SELECT count(*) FROM ok WHERE SUBJECT_ID = ? AND cat = 'Physician' AND CHARTDATE = ?", sid, r[1])[0] == 1
            got = [qval(r[2], pat.rsplit("-", 1)[1])]
        elif pat.startswith("value-last-note"):
            got = [qval(last("phys", sid)[2], pat.rsplit("-", 1)[1])]
        elif pat == "last-progress-date":
            got = [str(last("phys", sid)[1])]
        elif pat.startswith("k-match") or pat == "lab-k-at-note":
            if pat.startswith("k-match"):
                r = ref_row(qq)
            else:
                m = re.search(r"(\d{4}-\d\d-\d\d) progress note", qq["question"])
                r = (one("SELECT ROW_ID, CHARTDATE, TEXT, cat, DESCRIPTION, CHARTTIME FROM ok WHERE SUBJECT_ID = ? AND "
                         "cat = 'Physician' AND CHARTDATE = CAST(? AS DATE)", sid, m.group(1)) if m else
                     one("SELECT ROW_ID, CHARTDATE, TEXT, cat, DESCRIPTION, CHARTTIME FROM ok WHERE SUBJECT_ID = ? AND "
                         "cat = 'Physician' ORDER BY t DESC LIMIT 1", sid))
            lab = one("SELECT VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = ? AND ITEMID = 50971 AND CHARTTIME <= ? "
                      "ORDER BY CHARTTIME DESC LIMIT 1", sid, r[5])[0]
            got = [abs(qval(r[2], "K") - lab) < 0.05] if pat.startswith("k-match") else [lab]
            if pat.startswith("k-match") and "last" in pat:
                assert r[0] == last("phys", sid)[0]
        elif pat in ("last-echo-date", "last-echo-ef", "echo-count"):
            r = last("echo", sid)
            got = ([str(r[1])] if pat == "last-echo-date" else [int(re.search(r"Ejection Fraction:\s+(\d+)%", r[2]).group(1))]
                   if pat == "last-echo-ef" else [count("echo", sid)])
        elif pat in ("last-ecg-afib", "last-ecg-date"):
            r = last("ecg", sid)
            got = ["atrial fibrillation" in r[2].lower()] if pat == "last-ecg-afib" else [str(r[1])]
        elif qq["category"] == "note_mentions":
            term = pat.rsplit("-", 1)[0]
            rx = {"intubation": r"intubat", "sepsis": r"sepsis", "delirium": r"delirium", "pressure-ulcer": r"pressure ulcer",
                  "atrial-fibrillation": r"atrial fibrillation", "pneumonia": r"pneumonia", "a-fall": r"\bfall\b",
                  "pneumothorax": r"pneumothorax", "pulmonary-embolism": r"pulmonary embolism"}[term]
            hits = [t for (t,) in con.execute("SELECT TEXT FROM ok WHERE SUBJECT_ID = ?", [sid]).fetchall()]
            neg = re.compile(r"\bno (?:evidence of )?(?:\w+ ){0,1}" + rx, re.I)
            got = [any(re.search(rx, s, re.I) and not all(neg.search(ln) for ln in s.split("\n") if re.search(rx, ln, re.I))
                       for s in hits)]
        elif qq["category"] == "no_data":
            kind = {"no-ds": "ds", "no-radiology-impression": "rad", "no-radiology-date": "rad", "no-nursing": "nurs",
                    "no-nursing-date": "nurs", "no-progress-value": "phys", "no-progress-match": "phys", "no-echo-date": "echo",
                    "no-echo-ef": "echo", "no-ecg": "ecg", "no-ecg-date": "ecg"}.get(pat)
            if kind:
                got = [] if count(kind, sid) == 0 else ["notes of that kind exist"]
            else:  # error-cxr-day: no valid radiology report that day, an ISERROR one
                m = re.search(r"on (\d+)/(\d+)/(\d+)", qq["question"])
                d = f"{m.group(3)}-{int(m.group(1)):02d}-{int(m.group(2)):02d}"
                n_ok = one("SELECT count(*) FROM ok WHERE SUBJECT_ID = ? AND cat = 'Radiology' AND CHARTDATE = CAST(? AS DATE)", sid, d)[0]
                n_err = one("SELECT count(*) FROM NOTEEVENTS WHERE SUBJECT_ID = ? AND ISERROR = 1 AND trim(CATEGORY) = 'Radiology' "
                            "AND CHARTDATE = CAST(? AS DATE)", sid, d)[0]
                got = [] if n_ok == 0 and n_err == 1 else ["not an error-only day"]
        if got == "skip" or got != exp:
            bad.append(f"{qq['id']}: gold {exp} vs SQL {got}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the CSV files (OUT/csv)")
    ap.add_argument("--check", action="store_true", help="exit 1 when questions.jsonl is stale")
    ap.add_argument("--no-verify", action="store_true", help="skip the second derivation of the gold by SQL (DuckDB)")
    args = ap.parse_args(argv)
    w = build_world()
    write_csv(w, Path(args.out) / "csv")
    qs = questions(w)
    if not args.no_verify:
        bad = verify_sql(Path(args.out) / "csv", qs)
        if bad:
            print("gold and SQL disagree:\n" + "\n".join(bad), file=sys.stderr)
            return 2
        print(f"all {len(qs)} golds re-derived by SQL", file=sys.stderr)
    text = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in qs)
    target = HERE / "questions.jsonl"
    if args.check:
        return 0 if target.exists() and target.read_text() == text else 1
    target.write_text(text)
    cats: dict[str, int] = {}
    for x in qs:
        cats[x["category"]] = cats.get(x["category"], 0) + 1
    print(len(qs), "questions", cats, file=sys.stderr)
    print({t: len(r) for t, r in w.rows.items()}, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
