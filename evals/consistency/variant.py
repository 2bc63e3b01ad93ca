"""The held-out variant: other wordings, other absent items and drugs, other distractors, other patients.

The development set (``notes.jsonl``) is what the checker was tuned on. This variant was written before the
checker was ever run on it, with spellings, time phrases and distractor templates that the development set
does not use, so its score estimates how the checker does on wording it has not seen. ``apply()`` swaps the
generator's tables in place; run it through ``generate.py --variant heldout``.
"""

from __future__ import annotations

from evals.consistency import distract, vocab
from evals.consistency.entities import Writer
from evals.consistency.vocab import Item

NAMES: dict[str, tuple[str, ...]] = {
    "2947-0": ("serum sodium", "sodium level", "Na level"), "6298-4": ("serum K", "potassium level", "K level"),
    "2069-3": ("chloride level", "serum Cl"), "20565-8": ("bicarbonate", "serum bicarb", "total CO2"),
    "6299-2": ("BUN level", "blood urea nitrogen"), "38483-4": ("serum creatinine", "Creat", "creatinine level"),
    "2339-0": ("serum glucose", "Glu", "fasting glucose", "blood sugar"), "49765-1": ("calcium level", "serum calcium"),
    "2093-3": ("total cholesterol", "Chol"), "2571-8": ("triglyceride", "Trig"), "18262-6": ("LDL-C", "LDL chol"),
    "2085-9": ("HDL-C", "HDL chol"), "4548-4": ("A1C", "glycated Hb", "hemoglobin A1C"),
    "6690-2": ("WBCs", "white cell count", "leukocyte count"), "789-8": ("red cell count", "RBCs"),
    "718-7": ("HGB", "Hb level"), "4544-3": ("HCT", "hematocrit"), "787-2": ("mean corpuscular volume", "MCV"),
    "785-6": ("MCH",), "786-4": ("MCHC",), "21000-5": ("RDW-SD",), "777-3": ("platelet count", "PLT count", "plts"),
    "32623-1": ("mean platelet volume",), "33914-3": ("estimated GFR", "eGFR (CKD-EPI)"),
    "1751-7": ("serum albumin",), "1975-2": ("total bilirubin", "TBili"), "6768-6": ("alkaline phosphatase", "Alk Phos"),
    "1742-6": ("ALT (SGPT)",), "1920-8": ("AST (SGOT)",), "14959-1": ("urine albumin/creatinine ratio", "ACR"),
    "2857-1": ("prostate specific antigen",), "19926-5": ("FEV1/FVC ratio",), "10230-1": ("ejection fraction", "EF by echo"),
    "8480-6": ("SBP",), "8462-4": ("DBP",), "29463-7": ("weight", "body weight", "Wt."), "8302-2": ("height", "Ht."),
    "39156-5": ("body mass index",), "72514-3": ("pain scale", "pain level", "NRS pain"),
    "8331-1": ("temperature", "Temp.", "oral temp"),
}
ABSENT_OBS = [
    (("zinc",), 60, 120, 0, "mcg/dL"), (("copper",), 70, 140, 0, "mcg/dL"), (("lead level",), 1, 4, 0, "mcg/dL"),
    (("ceruloplasmin",), 20, 40, 0, "mg/dL"), (("C3",), 90, 180, 0, "mg/dL"), (("IgA",), 70, 400, 0, "mg/dL"),
    (("magnesium level",), 1.7, 2.4, 1, "mg/dL"), (("uric acid",), 3, 7, 1, "mg/dL"), (("vitamin D",), 20, 60, 0, "ng/mL"),
    (("free T4",), 0.8, 1.8, 2, "ng/dL"), (("troponin I",), 0.01, 0.03, 2, "ng/mL"), (("CK",), 50, 200, 0, "U/L"),
    (("heart rate", "pulse"), 58, 100, 0, ""), (("O2 sat", "SpO2"), 93, 100, 0, "%"),
]
ABSENT_OBS_CODES = {"zinc": ("5763-1",), "copper": ("5631-0",), "lead level": ("5671-6",), "ceruloplasmin": ("2064-4",),
                    "C3": ("4485-9",), "IgA": ("2458-8",), "magnesium level": ("19123-9", "2601-3"), "uric acid": ("3084-1",),
                    "vitamin D": ("1989-3", "62292-8"), "free T4": ("3024-7",), "troponin I": ("10839-9",),
                    "CK": ("2157-6",), "heart rate": ("8867-4",), "O2 sat": ("59408-5", "2708-6")}
OTHER_DRUGS = [
    ("Eliquis", 5, "mg", "PO"), ("Xarelto", 20, "mg", "PO"), ("Januvia", 100, "mg", "PO"), ("Farxiga", 10, "mg", "PO"),
    ("Zoloft", 50, "mg", "PO"), ("Lexapro", 10, "mg", "PO"), ("Wellbutrin", 150, "mg", "PO"), ("Neurontin", 300, "mg", "PO"),
    ("Flomax", 0.4, "mg", "PO"), ("Protonix", 40, "mg", "PO"), ("Coreg", 6.25, "mg", "PO"), ("Imdur", 30, "mg", "PO"),
    ("Bactrim DS", 1, "tab", "PO"), ("Keflex", 500, "mg", "PO"), ("Valtrex", 1, "g", "PO"), ("Lovenox", 40, "mg", "SC"),
    ("Dilaudid", 0.5, "mg", "IV"), ("Zofran", 4, "mg", "IV"), ("Trulicity", 0.75, "mg", "SC"), ("Mounjaro", 2.5, "mg", "SC"),
    ("Repatha", 140, "mg", "SC"), ("buspirone", 10, "mg", "PO"), ("meloxicam", 15, "mg", "PO"),
]
ALTERNATIVES = {"simvastatin": ("Lipitor", "Crestor"), "HCTZ": ("Lasix", "Aldactone"), "acetaminophen": ("Toradol",),
                "ibuprofen": ("Celebrex", "Toradol"), "naproxen": ("Celebrex", "meloxicam"), "amoxicillin": ("Keflex", "Z-Pak"),
                "penicillin VK": ("Keflex", "Z-Pak"), "clopidogrel": ("Brilinta",), "meperidine": ("Dilaudid", "Percocet")}
DRUG_NAMES = {"simvistatin": ("Zocor", "simvastatin"), "acetaminophen": ("Tylenol", "APAP"), "naproxen": ("Naprosyn", "Aleve"),
              "hydrochlorothiazide": ("HCTZ", "hydrochlorothiazide"), "ibuprofen": ("Motrin", "ibuprofen"),
              "penicillin": ("penicillin V potassium", "Pen-VK"), "clavulanate": ("amoxicillin-clavulanate", "Augmentin"),
              "amoxicillin": ("Amoxil", "amoxicillin"), "clopidogrel": ("Plavix",), "meperidine": ("Demerol",),
              "alteplase": ("tPA",), "epinephrine": ("epinephrine auto-injector", "Epi-Pen")}
ABSENT_CONDITIONS = [("high blood pressure",), ("high cholesterol",), ("acid reflux",), ("sleep apnea",), ("afib",),
                     ("heart failure",), ("kidney disease",), ("restless legs syndrome",), ("Bell's palsy",),
                     ("iron deficiency",), ("arthritis",), ("thyroid disease",)]
ABSENT_CONDITION_WORDS = {"high blood pressure": ("hypertension",), "high cholesterol": ("lipid", "cholesterol"),
                          "acid reflux": ("reflux",), "sleep apnea": ("apnea",), "afib": ("atrial fib",),
                          "heart failure": ("heart failure",), "kidney disease": ("kidney", "renal"),
                          "restless legs syndrome": ("restless",), "Bell's palsy": ("palsy",), "iron deficiency": ("iron",),
                          "arthritis": ("arthritis",), "thyroid disease": ("thyroid",)}
ABSENT_PROCEDURES = [("CT chest",), ("MRI lumbar spine",), ("echocardiogram",), ("Doppler",), ("nerve conduction study",),
                     ("upper endoscopy",), ("PET scan",), ("skin biopsy",), ("cystoscopy",)]
ABSENT_PROCEDURE_WORDS = {"CT chest": ("computed tomography",), "MRI lumbar spine": ("magnetic resonance",),
                          "echocardiogram": ("echocardiography",), "Doppler": ("doppler", "ultrasound"),
                          "nerve conduction study": ("nerve",), "upper endoscopy": ("endoscopy",), "PET scan": ("positron",),
                          "skin biopsy": ("biopsy",), "cystoscopy": ("cystoscopy",)}
CONDITION_NAMES = {
    "hypertension": ("essential HTN", "high blood pressure"), "hyperlipidemia": ("dyslipidemia", "high cholesterol"),
    "prediabetes": ("impaired fasting glucose", "borderline DM"), "diabetes": ("type 2 DM", "NIDDM"),
    "body mass index 30+ - obesity": ("obese", "class I obesity"), "viral sinusitis": ("acute sinusitis", "sinus infection"),
    "acute viral pharyngitis": ("pharyngitis",), "acute bronchitis": ("bronchitis",), "streptococcal sore throat":
    ("strep", "GAS pharyngitis"), "sprain of ankle": ("sprained ankle",), "otitis media": ("ear infection", "OM"),
    "stroke": ("ischemic stroke", "CVA"), "coronary heart disease": ("ischemic heart disease",), "atrial fibrillation":
    ("a-fib", "AF"), "myocardial infarction": ("heart attack",), "chronic congestive heart failure": ("CHF",),
    "alzheimer's disease": ("dementia, Alzheimer type",), "seizure disorder": ("seizures",), "osteoarthritis of knee":
    ("DJD of knee",), "hypertriglyceridemia": ("high triglycerides",), "concussion with no loss of consciousness":
    ("mild TBI",), "laceration of thigh": ("thigh lac",), "closed fracture of hip": ("hip fx",), "chronic sinusitis":
    ("chronic rhinosinusitis",), "perennial allergic rhinitis": ("seasonal allergies",), "anemia": ("anemia",),
    "osteoporosis": ("osteoporosis",), "childhood asthma": ("asthma",), "laceration of forearm": ("forearm lac",),
    "fracture of forearm": ("broken forearm",), "drug overdose": ("OD",),
}
PROCEDURE_NAMES = {"suture open wound": ("laceration closed with sutures", "simple repair of laceration"),
                   "ankle x-ray": ("ankle films",), "upper arm x-ray": ("humerus films",), "plain chest x-ray": ("chest film",),
                   "colonoscopy": ("colonoscopy",), "electrical cardioversion": ("cardioverted",), "bone immobilization":
                   ("placed in a splint",), "throat culture": ("rapid strep",), "percutaneous coronary intervention": ("PCI",),
                   "coronary artery bypass grafting": ("bypass surgery",), "appendectomy": ("appendectomy",)}
VACCINE_NAMES = {"influenza": ("flu vaccine", "influenza immunization"), "td (adult)": ("tetanus booster",),
                 "pneumococcal": ("Prevnar",), "zoster": ("shingles vaccine",), "hep b": ("hepatitis B vaccine",)}
PHRASES = {"today": ["this AM", "earlier today", "this morning"], "yesterday": ["yesterday", "the day prior"],
           "hd": ["hospital day #{n}", "HD {n}", "day {n} of the admission"], "admission": ["upon admission", "at presentation"],
           "labs_today": ["Labs this AM:", "Today's labs:"], "months_ago": ["~{n} months ago", "{n} mo ago"],
           "vitals_admission": ["Initial vitals: ", "Triage VS: ", "VS at presentation: "]}
SEPARATORS = [" ", " - ", " = ", ": ", " is ", " at "]
PROSE_LEADS = ["her {n} this time was ", "the {n} was ", "{n} returned at ", "{n} measured ", "{n} now "]


def daughter(w: Writer) -> None:
    """Family history in a sentence without a heading or the usual relative words."""
    w.unverifiable([("Daughter has ", None), (w.rng.choice(("hypothyroidism", "T1DM", "asthma")), "name"), (". ", None)],
                   "condition", "family history")


def replete(w: Writer) -> None:
    """A repletion parameter."""
    w.unverifiable([("Continue to monitor; replete ", None), ("K", "name"), (" if < ", None), ("3.5", "value"), (". ", None)],
                   "lab", "parameter")


def ruled_out(w: Writer) -> None:
    """An uncertain diagnosis."""
    w.unverifiable([(w.rng.choice(("Rule out ", "Possible ", "Doubt ")), None), (w.rng.choice(("PE", "UTI", "PNA")), "name"),
                    (". ", None)], "condition", "uncertain")


def inquiry(w: Writer) -> None:
    """The patient asks about a drug."""
    w.unverifiable([("Pt asking about ", None), (w.rng.choice(("Ozempic", "Wegovy", "Viagra")), "name"),
                    (" today. ", None)], "medication", "inquiry")


def avoid(w: Writer) -> None:
    """Advice that names a drug class and a risk."""
    w.unverifiable([("Avoid ", None), ("NSAIDs", None), (" given ", None), ("CKD", "name"), (" risk. ", None)],
                   "condition", "advice")


def due(w: Writer) -> None:
    """Screening that is due, not done."""
    w.unverifiable([("Due for ", None), (w.rng.choice(("colonoscopy", "mammogram", "DEXA")), "name"), (". ", None)],
                   "procedure", "due")


def home_bp(w: Writer) -> None:
    """A home reading phrased differently."""
    w.unverifiable([("States his ", None), ("BP", "name"), (" runs ", None), (str(w.rng.randrange(125, 150)), "value"),
                    ("s at home. ", None)], "vital", "home reading")


HELD_OUT_EXTRA = [daughter, replete, ruled_out, inquiry, avoid, due, home_bp]


def apply() -> None:
    """Swap the held-out tables into the generator (in place, so every module sees them)."""
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
    vocab.CLOCK_STYLES[:] = [3, 4, 5, 1]
    vocab.DATE_STYLES[:] = [5, 6, 7, 2, 4]
    vocab.SEPARATORS[:] = SEPARATORS
    vocab.PROSE_LEADS[:] = PROSE_LEADS
    distract.EXTRA[:] = HELD_OUT_EXTRA
