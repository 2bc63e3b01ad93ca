"""A third wording variant, written after the checker was tuned on the development and held-out sets.

Scored once, blind, to estimate the checker on wording it has never met (``generate.py --variant fresh``).
Same patients as the held-out set, other seed, other spellings, phrases, absent items and distractors.
"""

from __future__ import annotations

from evals.consistency import distract, vocab
from evals.consistency.entities import Writer
from evals.consistency.vocab import Item

NAMES: dict[str, tuple[str, ...]] = {
    "2947-0": ("Na+", "NA"), "6298-4": ("K+", "pot"), "2069-3": ("Cl-",), "20565-8": ("HCO3-", "CO2 content"),
    "6299-2": ("urea N", "BUN"), "38483-4": ("creatinine (serum)", "Cre"), "2339-0": ("GLU", "glucose, serum"),
    "49765-1": ("Ca++", "total calcium"), "2093-3": ("cholesterol, total", "T chol"), "2571-8": ("TRIG", "triglycerides, fasting"),
    "18262-6": ("LDL calc", "calculated LDL"), "2085-9": ("HDL-cholesterol",), "4548-4": ("HgbA1c", "Hb A1c"),
    "6690-2": ("leukocytes", "WBC ct"), "789-8": ("erythrocytes",), "718-7": ("haemoglobin", "Hgb."), "4544-3": ("Hct",),
    "787-2": ("MCV",), "785-6": ("MCH",), "786-4": ("MCHC",), "21000-5": ("RDW",), "777-3": ("thrombocytes", "PLTs"),
    "32623-1": ("MPV",), "33914-3": ("GFR est", "eGFR non-AA"), "1751-7": ("ALB",), "1975-2": ("bilirubin, total", "T.bili"),
    "6768-6": ("ALK PHOS",), "1742-6": ("SGPT/ALT",), "1920-8": ("SGOT/AST",), "14959-1": ("microalb/creat ratio",),
    "2857-1": ("total PSA",), "19926-5": ("FEV1:FVC",), "10230-1": ("LV EF",), "8480-6": ("SBP",), "8462-4": ("DBP",),
    "29463-7": ("wgt", "WT"), "8302-2": ("hgt", "HT"), "39156-5": ("BMI (calc)",), "72514-3": ("pain rating", "pain intensity"),
    "8331-1": ("temp (oral)", "Tmax"),
}
ABSENT_OBS = [
    (("amylase",), 30, 110, 0, "U/L"), (("TSH",), 0.5, 4.0, 2, "mIU/L"), (("free T3",), 2.3, 4.2, 1, "pg/mL"),
    (("PTH",), 15, 65, 0, "pg/mL"), (("folate",), 5, 20, 1, "ng/mL"), (("B12 level",), 250, 900, 0, "pg/mL"),
    (("fibrinogen",), 200, 400, 0, "mg/dL"), (("anion gap",), 6, 14, 0, ""), (("lactic acid",), 0.6, 2.0, 1, "mmol/L"),
    (("procalcitonin",), 0.02, 0.2, 2, "ng/mL"), (("CK-MB",), 1, 4, 1, "ng/mL"), (("ESR",), 5, 30, 0, "mm/hr"),
    (("pulse",), 60, 96, 0, ""), (("resp rate",), 12, 20, 0, ""),
]
ABSENT_OBS_CODES = {"amylase": ("1798-8",), "TSH": ("3016-3",), "free T3": ("3051-0",), "PTH": ("2731-8",),
                    "folate": ("2284-8",), "B12 level": ("2132-9",), "fibrinogen": ("3255-7",), "anion gap": ("33037-3",),
                    "lactic acid": ("2524-7", "32693-4"), "procalcitonin": ("33959-8",), "CK-MB": ("13969-1",),
                    "ESR": ("4537-7", "30341-2"), "pulse": ("8867-4",), "resp rate": ("9279-1",)}
OTHER_DRUGS = [
    ("Norvasc", 10, "mg", "PO"), ("Lopressor", 25, "mg", "PO"), ("Zestril", 20, "mg", "PO"), ("Glucophage", 850, "mg", "PO"),
    ("Prilosec", 20, "mg", "PO"), ("Pepcid", 20, "mg", "PO"), ("Singulair", 10, "mg", "PO"), ("Flexeril", 5, "mg", "PO"),
    ("Ultram", 50, "mg", "PO"), ("Xanax", 0.25, "mg", "PO"), ("Ativan", 1, "mg", "IV"), ("Seroquel", 25, "mg", "PO"),
    ("Lamictal", 100, "mg", "PO"), ("Cymbalta", 60, "mg", "PO"), ("Levaquin", 750, "mg", "PO"), ("cefepime", 2, "g", "IV"),
    ("piperacillin-tazobactam", 4.5, "g", "IV"), ("heparin", 5000, "units", "SC"), ("famotidine", 20, "mg", "IV"),
]
ALTERNATIVES = {"simvastatin": ("Pravachol", "Livalo"), "Zocor": ("Lipitor",), "HCTZ": ("Lasix", "chlorthalidone"),
                "acetaminophen": ("Ultram", "Norco"), "Tylenol": ("Ultram", "Norco"), "ibuprofen": ("Toradol", "Mobic"),
                "naproxen": ("Mobic", "Celebrex"), "amoxicillin": ("Omnicef", "Levaquin"), "Augmentin": ("Omnicef",),
                "penicillin VK": ("Omnicef", "Levaquin"), "clopidogrel": ("Effient",), "meperidine": ("Ultram", "morphine")}
DRUG_NAMES = {"simvistatin": ("simvastatin", "Zocor"), "acetaminophen": ("Tylenol", "paracetamol"),
              "naproxen": ("naproxen sodium", "Aleve"), "hydrochlorothiazide": ("HCTZ",), "ibuprofen": ("Advil", "ibuprofen"),
              "penicillin": ("penicillin VK",), "clavulanate": ("Augmentin",), "amoxicillin": ("amoxicillin",)}
ABSENT_CONDITIONS = [("gastroparesis",), ("hyperparathyroidism",), ("GERD",), ("spinal stenosis",), ("peripheral neuropathy",),
                     ("osteopenia",), ("hiatal hernia",), ("vitamin D deficiency",), ("anxiety disorder",), ("CKD 3a",)]
ABSENT_CONDITION_WORDS = {"gastroparesis": ("gastroparesis",), "hyperparathyroidism": ("parathyroid",), "GERD": ("reflux",),
                          "spinal stenosis": ("stenosis",), "peripheral neuropathy": ("neuropathy",), "osteopenia": ("osteopenia",
                          "osteoporosis"), "hiatal hernia": ("hernia",), "vitamin D deficiency": ("vitamin d",),
                          "anxiety disorder": ("anxiety",), "CKD 3a": ("kidney",)}
ABSENT_PROCEDURES = [("stress echo",), ("Holter monitor",), ("carotid ultrasound",), ("MRA head",), ("EGD",), ("bone scan",),
                     ("sleep study",), ("lumbar puncture",)]
ABSENT_PROCEDURE_WORDS = {"stress echo": ("echocardiography", "stress"), "Holter monitor": ("holter", "electrocardio"),
                          "carotid ultrasound": ("ultrasound",), "MRA head": ("magnetic resonance",), "EGD": ("endoscopy",),
                          "bone scan": ("bone",), "sleep study": ("polysomnography", "sleep"), "lumbar puncture": ("lumbar",)}
CONDITION_NAMES = {
    "hypertension": ("HTN (essential)", "elevated BP"), "hyperlipidemia": ("hyperlipidaemia", "mixed hyperlipidemia"),
    "prediabetes": ("pre-DM", "prediabetic state"), "diabetes": ("DM type 2", "T2D"), "viral sinusitis": ("viral rhinosinusitis",),
    "acute bronchitis": ("acute bronchitis",), "body mass index 30+ - obesity": ("adiposity", "obesity"),
    "anemia": ("anaemia",), "streptococcal sore throat": ("strep pharyngitis",), "acute viral pharyngitis": ("sore throat",),
    "otitis media": ("AOM",), "sprain of ankle": ("ankle sprain",), "chronic sinusitis": ("chronic sinus disease",),
    "coronary heart disease": ("CAD",), "myocardial infarction": ("STEMI",), "stroke": ("stroke",),
    "osteoporosis": ("osteoporosis",), "concussion with no loss of consciousness": ("concussion",),
}
PROCEDURE_NAMES = {"suture open wound": ("lac repair", "wound closure"), "plain chest x-ray": ("CXR",),
                   "bone immobilization": ("splint applied",), "colonoscopy": ("screening colonoscopy",),
                   "upper arm x-ray": ("XR humerus",), "ankle x-ray": ("XR ankle",)}
VACCINE_NAMES = {"influenza": ("IIV4", "flu shot"), "td (adult)": ("Td",), "pneumococcal": ("PCV20",), "zoster": ("RZV",)}
PHRASES = {"today": ["this a.m.", "today"], "yesterday": ["yest.", "on the prior day"],
           "hd": ["hosp day {n}", "HD#{n}"], "admission": ["on arrival to the ED", "initially"],
           "labs_today": ["AM labs:", "Labs (today):"], "months_ago": ["{n} months prior", "roughly {n} months back"],
           "vitals_admission": ["Arrival vitals: ", "ED vitals: "]}
SEPARATORS = [" ", ": ", " ~", " "]
PROSE_LEADS = ["{n} reported as ", "{n} resulted at ", "{n} on recheck ", "{n} noted at "]


def sister(w: Writer) -> None:
    """Family history in shorthand."""
    w.unverifiable([("Sister: ", None), (w.rng.choice(("breast ca", "CAD", "HTN")), "name"), (" at 50. ", None)],
                   "condition", "family history")


def contrast(w: Writer) -> None:
    """A conditional hold."""
    w.unverifiable([("Would hold ", None), ("metformin", "name"), (" before CT contrast. ", None)], "medication", "conditional")


def recommend(w: Writer) -> None:
    """A recommendation for the future."""
    w.unverifiable([("Recommend ", None), (w.rng.choice(("flu vaccine", "PCV20", "Shingrix")), "name"),
                    (" next season. ", None)], "immunization", "recommendation")


def jnc(w: Writer) -> None:
    """A guideline goal."""
    w.unverifiable([("BP", "name"), (" goal per JNC: <", None), ("140", "value"), ("/90. ", None)], "vital", "goal")


def unsure(w: Writer) -> None:
    """An uncertain history."""
    w.unverifiable([("Pt unsure if she ever had a ", None), ("colonoscopy", "name"), (". ", None)], "procedure", "uncertain")


def prior(w: Writer) -> None:
    """A value from old outside records."""
    w.unverifiable([("Prior ", None), ("K", "name"), (" was ", None), ("3.1", "value"), (" per records from 2015. ", None)],
                   "lab", "outside result")


def rises(w: Writer) -> None:
    """A conditional threshold with a value."""
    w.unverifiable([("If ", None), ("Cr", "name"), (" rises above ", None), ("1.5", "value"), (", stop lisinopril. ", None)],
                   "lab", "conditional")


FRESH_EXTRA = [sister, contrast, recommend, jnc, unsure, prior, rises]


def apply() -> None:
    """Swap the fresh tables into the generator (in place)."""
    for code, names in NAMES.items():
        old = vocab.ITEMS[code]
        item = Item(names, old.decimals, old.units, old.wrong_units, old.step, old.kind)
        vocab.ITEMS[code] = item
        (vocab.LABS if code in vocab.LABS else vocab.VITALS)[code] = item
    vocab.ABSENT_OBS[:] = ABSENT_OBS
    vocab.ABSENT_OBS_CODES.update(ABSENT_OBS_CODES)
    vocab.OTHER_DRUGS[:] = OTHER_DRUGS
    vocab.ALTERNATIVES.clear()
    vocab.ALTERNATIVES.update(ALTERNATIVES)
    vocab.DRUG_NAMES.update(DRUG_NAMES)
    vocab.ABSENT_CONDITIONS[:] = ABSENT_CONDITIONS
    vocab.ABSENT_CONDITION_WORDS.update(ABSENT_CONDITION_WORDS)
    vocab.ABSENT_PROCEDURES[:] = ABSENT_PROCEDURES
    vocab.ABSENT_PROCEDURE_WORDS.update(ABSENT_PROCEDURE_WORDS)
    vocab.CONDITION_NAMES.update(CONDITION_NAMES)
    vocab.PROCEDURE_NAMES.update(PROCEDURE_NAMES)
    vocab.VACCINE_NAMES.update(VACCINE_NAMES)
    for key, values in PHRASES.items():
        vocab.PHRASES[key][:] = values
    vocab.CLOCK_STYLES[:] = [0, 2, 4, 5]
    vocab.DATE_STYLES[:] = [0, 3, 5, 6, 7]
    vocab.SEPARATORS[:] = SEPARATORS
    vocab.PROSE_LEADS[:] = PROSE_LEADS
    distract.EXTRA[:] = FRESH_EXTRA
