"""How clinicians write things: lab and vital shorthand, drug names, diagnoses and procedures.

Written for the note generator, independently of fhirqa's lexicon: these are the words a note uses,
keyed by the record's own codes (LOINC, RxNorm text, SNOMED display). Several spellings per item, some
of which a checker's lexicon may not know; that is the point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    """A numeric observation as a note writes it."""

    names: tuple[str, ...]  # spellings, first the most common
    decimals: int  # precision a clinician writes
    units: tuple[str, ...]  # correct unit spellings ("" = often written without a unit)
    wrong_units: tuple[str, ...]  # plausible but wrong units for the record's value
    step: float  # smallest clinically meaningful change (for value injections)
    kind: str = "lab"  # lab or vital


LABS: dict[str, Item] = {
    "2947-0": Item(("Na", "sodium", "Na+"), 0, ("", "mmol/L", "mEq/L"), ("mg/dL",), 4),
    "6298-4": Item(("K", "K+", "potassium"), 1, ("", "mmol/L", "mEq/L"), ("mg/dL",), 0.5),
    "2069-3": Item(("Cl", "chloride"), 0, ("", "mmol/L"), ("mg/dL",), 4),
    "20565-8": Item(("CO2", "bicarb", "HCO3"), 0, ("", "mmol/L"), ("mg/dL",), 4),
    "6299-2": Item(("BUN", "urea nitrogen"), 0, ("", "mg/dL"), ("mmol/L",), 5),
    "38483-4": Item(("Cr", "creat", "creatinine", "SCr"), 1, ("", "mg/dL"), ("mmol/L", "g/dL"), 0.4),
    "2339-0": Item(("glucose", "BG", "gluc", "BS", "glu"), 0, ("", "mg/dL"), ("mmol/L", "g/dL"), 20),
    "49765-1": Item(("Ca", "calcium"), 1, ("", "mg/dL"), ("mmol/L",), 0.6),
    "2093-3": Item(("TC", "total chol", "cholesterol", "chol"), 0, ("", "mg/dL"), ("mmol/L",), 25),
    "2571-8": Item(("TG", "trigs", "triglycerides"), 0, ("", "mg/dL"), ("mmol/L",), 30),
    "18262-6": Item(("LDL", "LDL-C", "LDL cholesterol"), 0, ("", "mg/dL"), ("mmol/L",), 20),
    "2085-9": Item(("HDL", "HDL-C"), 0, ("", "mg/dL"), ("mmol/L",), 10),
    "4548-4": Item(("A1c", "HbA1c", "Hgb A1c", "hemoglobin A1c"), 1, ("%", ""), ("mg/dL", "mmol/L"), 0.6),
    "6690-2": Item(("WBC", "white count"), 1, ("", "K/uL", "x10^3/uL"), ("x10^6/uL", "/uL"), 2.5),
    "789-8": Item(("RBC",), 2, ("", "M/uL"), ("K/uL",), 0.5),
    "718-7": Item(("Hgb", "Hb", "hemoglobin"), 1, ("", "g/dL"), ("mg/dL", "g/L"), 1.5),
    "4544-3": Item(("Hct", "hematocrit"), 1, ("", "%"), ("g/dL",), 4),
    "787-2": Item(("MCV",), 0, ("", "fL"), ("pg",), 6),
    "785-6": Item(("MCH",), 1, ("", "pg"), ("fL",), 2.5),
    "786-4": Item(("MCHC",), 1, ("", "g/dL"), ("%",), 2),
    "21000-5": Item(("RDW",), 1, ("", "fL"), ("%",), 3),
    "777-3": Item(("Plt", "plt", "platelets", "PLT"), 0, ("", "K/uL", "x10^3/uL"), ("x10^6/uL",), 60),
    "32623-1": Item(("MPV",), 1, ("", "fL"), ("pg",), 1.5),
    "33914-3": Item(("eGFR", "GFR"), 0, ("", "mL/min/1.73m2"), ("mg/dL",), 15),
    "1751-7": Item(("albumin", "alb", "Alb"), 1, ("", "g/dL"), ("mg/dL", "g/L"), 0.6),
    "1975-2": Item(("T bili", "tbili", "total bili", "bilirubin"), 1, ("", "mg/dL"), ("mmol/L",), 0.6),
    "6768-6": Item(("alk phos", "ALP", "AlkP"), 0, ("", "U/L"), ("mg/dL",), 30),
    "1742-6": Item(("ALT", "SGPT"), 0, ("", "U/L"), ("mg/dL",), 15),
    "1920-8": Item(("AST", "SGOT"), 0, ("", "U/L"), ("mg/dL",), 15),
    "14959-1": Item(("UACR", "urine microalbumin/Cr ratio", "microalbumin"), 1, ("mg/g", ""), ("mg/dL",), 8),
    "2857-1": Item(("PSA",), 1, ("", "ng/mL"), ("mg/dL",), 1.5),
    "19926-5": Item(("FEV1/FVC",), 0, ("%", ""), ("L",), 8),
    "10230-1": Item(("EF", "LVEF"), 0, ("%",), ("mL",), 10),
}

VITALS: dict[str, Item] = {
    "8480-6": Item(("SBP",), 0, ("", "mmHg"), ("cmH2O",), 15, "vital"),
    "8462-4": Item(("DBP",), 0, ("", "mmHg"), ("cmH2O",), 10, "vital"),
    "29463-7": Item(("Wt", "weight", "wt"), 1, ("kg",), ("lb", "lbs"), 4, "vital"),
    "8302-2": Item(("Ht", "height", "ht"), 0, ("cm",), ("in",), 6, "vital"),
    "39156-5": Item(("BMI",), 1, ("", "kg/m2"), ("kg",), 3, "vital"),
    "72514-3": Item(("pain", "pain score"), 0, ("/10",), (), 3, "vital"),
    "8331-1": Item(("T", "temp", "Temp"), 1, ("C", "F"), ("F",), 1.0, "vital"),
}

ITEMS = LABS | VITALS

PANELS: dict[str, tuple[str, ...]] = {
    "bmp": ("2947-0", "6298-4", "2069-3", "20565-8", "6299-2", "38483-4", "2339-0", "49765-1"),
    "lipids": ("2093-3", "2571-8", "18262-6", "2085-9"),
    "cbc": ("6690-2", "718-7", "4544-3", "777-3", "789-8", "787-2", "785-6", "786-4", "21000-5", "32623-1"),
    "lfts": ("1751-7", "1975-2", "6768-6", "1742-6", "1920-8"),
    "other": ("4548-4", "33914-3", "14959-1", "2857-1", "19926-5", "10230-1"),
}
PANEL_TITLES = {
    "bmp": ("BMP", "Chem 7", "Chem", "Lytes", "Basic metabolic panel"),
    "lipids": ("Lipids", "Lipid panel", "FLP"),
    "cbc": ("CBC", "Heme"),
    "lfts": ("LFTs", "Hepatic panel"),
    "other": ("Other", ""),
}

# Labs and vitals the record may lack: (spellings, typical low, high, decimals, unit as written)
ABSENT_OBS: list[tuple[tuple[str, ...], float, float, int, str]] = [
    (("Mg", "magnesium", "mag"), 1.7, 2.4, 1, "mg/dL"),
    (("Phos", "phosphorus"), 2.6, 4.4, 1, "mg/dL"),
    (("lactate", "lactic acid"), 0.6, 2.4, 1, "mmol/L"),
    (("TSH",), 0.6, 4.0, 2, "mIU/L"),
    (("INR",), 0.9, 1.3, 1, ""),
    (("PTT",), 26, 36, 0, "s"),
    (("troponin", "trop", "TnI"), 0.01, 0.04, 2, "ng/mL"),
    (("BNP",), 20, 400, 0, "pg/mL"),
    (("lipase",), 15, 60, 0, "U/L"),
    (("CRP",), 0.5, 12, 1, "mg/L"),
    (("ESR", "sed rate"), 5, 40, 0, "mm/hr"),
    (("ferritin",), 30, 300, 0, "ng/mL"),
    (("HR", "pulse"), 58, 104, 0, ""),
    (("RR", "resp rate"), 12, 22, 0, ""),
    (("SpO2", "O2 sat"), 93, 100, 0, "%"),
    (("ammonia", "NH3"), 15, 45, 0, "umol/L"),
    (("LDH",), 120, 240, 0, "U/L"),
    (("haptoglobin",), 40, 180, 0, "mg/dL"),
    (("retic count", "reticulocytes"), 0.5, 2.2, 1, "%"),
    (("cortisol",), 6, 20, 1, "mcg/dL"),
    (("beta-hCG", "hCG"), 1, 4, 0, "mIU/mL"),
    (("GGT",), 10, 60, 0, "U/L"),
]
ABSENT_OBS_CODES = {  # LOINC codes that would make an "absent" item present after all
    "Mg": ("19123-9", "2601-3"), "Phos": ("2777-1",), "lactate": ("2524-7", "32693-4"), "TSH": ("3016-3",),
    "INR": ("6301-6", "34714-6"), "PTT": ("3173-2", "14979-9"), "troponin": ("10839-9", "6598-7", "89579-7"),
    "BNP": ("30934-4", "33762-6"), "lipase": ("3040-3",), "CRP": ("1988-5",), "ESR": ("4537-7", "30341-2"),
    "ferritin": ("2276-4",), "HR": ("8867-4",), "RR": ("9279-1",), "SpO2": ("59408-5", "2708-6"),
    "ammonia": ("16362-6", "1845-6"), "LDH": ("2532-0", "14804-9"), "haptoglobin": ("4542-7",),
    "retic count": ("4679-7", "17849-1"), "cortisol": ("2143-6",), "beta-hCG": ("2106-3", "21198-7"),
    "GGT": ("2324-2",),
}

# Drug names: a lower-case word in the record's product name → how notes write it
DRUG_NAMES: dict[str, tuple[str, ...]] = {
    "simvistatin": ("simvastatin", "Zocor"), "simvastatin": ("simvastatin", "Zocor"),
    "atorvastatin": ("atorvastatin", "Lipitor"), "acetaminophen": ("acetaminophen", "Tylenol", "APAP"),
    "naproxen": ("naproxen", "Aleve"), "hydrochlorothiazide": ("HCTZ", "hydrochlorothiazide"),
    "ibuprofen": ("ibuprofen", "Motrin", "Advil"), "penicillin": ("penicillin VK", "pen VK", "PCN VK"),
    "clopidogrel": ("clopidogrel", "Plavix"), "meperidine": ("meperidine", "Demerol"),
    "alteplase": ("tPA", "alteplase"), "verapamil": ("verapamil",), "digoxin": ("digoxin",),
    "warfarin": ("warfarin", "Coumadin"), "furosemide": ("furosemide", "Lasix"), "lasix": ("Lasix", "furosemide"),
    "metoprolol": ("metoprolol succinate", "Toprol XL", "metoprolol"), "captopril": ("captopril",),
    "prednisone": ("prednisone",), "amlodipine": ("amlodipine", "Norvasc"), "aspirin": ("aspirin", "ASA"),
    "clavulanate": ("Augmentin", "amox-clav"), "amoxicillin": ("amoxicillin",), "cefuroxime": ("cefuroxime",),
    "galantamine": ("galantamine",), "alendronic": ("alendronate", "Fosamax"), "fexofenadine": ("fexofenadine",
    "Allegra"), "loratadine": ("loratadine", "Claritin"), "cetirizine": ("cetirizine", "Zyrtec"),
    "diphenhydramine": ("diphenhydramine", "Benadryl"), "ferrous": ("ferrous sulfate", "FeSO4"),
    "levothyroxine": ("levothyroxine", "Synthroid"), "donepezil": ("donepezil", "Aricept"),
    "memantine": ("memantine", "Namenda"), "nitroglycerin": ("nitroglycerin", "SL NTG"),
    "albuterol": ("albuterol", "albuterol MDI"), "fluticasone": ("fluticasone", "Flovent"),
    "nitrofurantoin": ("nitrofurantoin", "Macrobid"), "phenazopyridine": ("phenazopyridine", "Pyridium"),
    "methotrexate": ("methotrexate",), "sertraline": ("sertraline", "Zoloft"), "tacrine": ("tacrine",),
    "metformin": ("metformin",), "chlorpheniramine": ("chlorpheniramine",), "amiodarone": ("amiodarone",),
    "epinephrine": ("EpiPen", "epinephrine"), "carbamazepine": ("carbamazepine", "Tegretol"),
    "clonazepam": ("clonazepam", "Klonopin"), "diazepam": ("diazepam", "Valium"), "yaz": ("Yaz",),
    "mirena": ("Mirena IUD",), "leucovorin": ("leucovorin",), "oxaliplatin": ("oxaliplatin",),
    "docetaxel": ("docetaxel",), "nicotine": ("nicotine patch",), "ampicillin": ("ampicillin",),
    "atropine": ("atropine",), "medroxyprogesterone": ("Depo-Provera", "medroxyprogesterone"),
}
# Combination products are named, never dosed; single products carry their strength
COMBINATIONS = ("clavulanate", "hydrocodone", "oxycodone", "dextromethorphan", "salmeterol", "norelgestromin",
                "insulin")
# Drugs to name when injecting an absent or a wrong drug: (note name, dose, unit, route)
OTHER_DRUGS: list[tuple[str, float, str, str]] = [
    ("lisinopril", 10, "mg", "PO"), ("losartan", 50, "mg", "PO"), ("metformin", 500, "mg", "PO"),
    ("atorvastatin", 40, "mg", "PO"), ("rosuvastatin", 10, "mg", "PO"), ("pravastatin", 20, "mg", "PO"),
    ("amlodipine", 5, "mg", "PO"), ("chlorthalidone", 25, "mg", "PO"), ("Lasix", 40, "mg", "IV"),
    ("ceftriaxone", 1, "g", "IV"), ("vancomycin", 1, "g", "IV"), ("azithromycin", 500, "mg", "PO"),
    ("cephalexin", 500, "mg", "PO"), ("doxycycline", 100, "mg", "PO"), ("ondansetron", 4, "mg", "IV"),
    ("pantoprazole", 40, "mg", "PO"), ("enoxaparin", 40, "mg", "SC"), ("morphine", 4, "mg", "IV"),
    ("ketorolac", 15, "mg", "IV"), ("oxycodone", 5, "mg", "PO"), ("gabapentin", 300, "mg", "PO"),
    ("sertraline", 50, "mg", "PO"), ("levothyroxine", 50, "mcg", "PO"), ("warfarin", 5, "mg", "PO"),
    ("apixaban", 5, "mg", "PO"), ("metoprolol tartrate", 25, "mg", "PO"), ("omeprazole", 20, "mg", "PO"),
    ("nadolol", 20, "mg", "PO"), ("glimepiride", 2, "mg", "PO"), ("cefdinir", 300, "mg", "PO"),
    ("fluconazole", 150, "mg", "PO"), ("hydroxyzine", 25, "mg", "PO"), ("cyclobenzaprine", 10, "mg", "PO"),
    ("oxybutynin", 5, "mg", "PO"), ("topiramate", 25, "mg", "PO"),
]
# Same-class alternatives for a wrong-drug injection
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "simvastatin": ("atorvastatin", "rosuvastatin", "pravastatin"), "Zocor": ("Lipitor", "Crestor"),
    "HCTZ": ("chlorthalidone", "lisinopril"), "hydrochlorothiazide": ("chlorthalidone", "lisinopril"),
    "acetaminophen": ("ibuprofen", "naproxen", "ketorolac"), "Tylenol": ("Motrin", "Aleve"),
    "ibuprofen": ("naproxen", "ketorolac", "acetaminophen"), "naproxen": ("ibuprofen", "ketorolac", "meloxicam"),
    "amoxicillin": ("azithromycin", "cephalexin", "doxycycline"), "Augmentin": ("azithromycin", "cephalexin"),
    "penicillin VK": ("azithromycin", "cephalexin", "clindamycin"), "clopidogrel": ("ticagrelor", "prasugrel"),
    "meperidine": ("morphine", "hydromorphone", "oxycodone"), "captopril": ("lisinopril", "losartan"),
    "atorvastatin": ("rosuvastatin", "simvastatin"), "Plavix": ("Brilinta", "Effient"),
}

ABSENT_CONDITIONS: list[tuple[str, ...]] = [
    ("CKD stage 3", "chronic kidney disease"), ("CHF", "heart failure"), ("COPD",), ("AFib", "atrial fibrillation"),
    ("T2DM", "type 2 diabetes"), ("HTN", "hypertension"), ("hypothyroidism",), ("GERD",), ("OSA",),
    ("depression", "MDD"), ("asthma",), ("HLD", "hyperlipidemia"), ("CAD",), ("gout",), ("anemia",),
    ("osteoarthritis", "OA"), ("migraines",), ("BPH",), ("PNA", "pneumonia"), ("UTI",), ("cellulitis",),
    ("diverticulosis",), ("hypokalemia",), ("pancreatitis",), ("glaucoma",), ("sciatica",), ("psoriasis",),
]
ABSENT_CONDITION_WORDS = {  # words in a record's condition name that make an "absent" one present
    "CKD stage 3": ("kidney",), "CHF": ("heart failure",), "COPD": ("obstructive", "emphysema", "bronchitis"),
    "AFib": ("atrial fib",), "T2DM": ("diabetes",), "HTN": ("hypertension",), "hypothyroidism": ("thyroid",),
    "GERD": ("reflux",), "OSA": ("apnea",), "depression": ("depress",), "asthma": ("asthma",),
    "HLD": ("lipid", "cholesterol"), "CAD": ("coronary",), "gout": ("gout",), "anemia": ("anemia",),
    "osteoarthritis": ("osteoarthritis",), "migraines": ("migraine",), "BPH": ("prostat",),
    "PNA": ("pneumonia",), "UTI": ("urinary",), "cellulitis": ("cellulitis",), "diverticulosis": ("diverticul",),
    "hypokalemia": ("hypokalemia",), "pancreatitis": ("pancreatitis",), "glaucoma": ("glaucoma",),
    "sciatica": ("sciatica",), "psoriasis": ("psoriasis",),
}

ABSENT_PROCEDURES: list[tuple[str, ...]] = [
    ("CT head", "head CT"), ("CXR", "chest x-ray"), ("EKG", "ECG"), ("echo", "TTE"), ("blood cultures",),
    ("UA", "urinalysis"), ("MRI brain",), ("CT abd/pelvis",), ("LP", "lumbar puncture"), ("paracentesis",),
    ("EEG",), ("renal ultrasound", "renal US"), ("bronchoscopy",), ("thoracentesis",), ("PICC placement",),
]
ABSENT_PROCEDURE_WORDS = {
    "CT head": ("computed tomography", "ct of head"), "CXR": ("chest x-ray", "chest"), "EKG": ("electrocardiogram",),
    "echo": ("echocardiography",), "blood cultures": ("blood culture",), "UA": ("urinalysis",),
    "MRI brain": ("magnetic resonance",), "CT abd/pelvis": ("computed tomography",), "LP": ("lumbar",),
    "paracentesis": ("paracentesis",), "EEG": ("electroencephalogram",), "renal ultrasound": ("ultrasound",),
    "bronchoscopy": ("bronchoscopy",), "thoracentesis": ("thoracentesis",), "PICC placement": ("catheter",),
}

# Record condition display (lower case, parenthetical dropped) → how notes write it
CONDITION_NAMES: dict[str, tuple[str, ...]] = {
    "hypertension": ("HTN", "hypertension"), "hyperlipidemia": ("HLD", "hyperlipidemia"),
    "prediabetes": ("prediabetes", "pre-diabetes"), "diabetes": ("DM2", "T2DM", "diabetes"),
    "anemia": ("anemia",), "body mass index 30+ - obesity": ("obesity", "obesity (BMI 30+)"),
    "viral sinusitis": ("viral sinusitis",), "acute viral pharyngitis": ("viral pharyngitis", "acute pharyngitis"),
    "acute bronchitis": ("acute bronchitis", "bronchitis"), "chronic sinusitis": ("chronic sinusitis",),
    "streptococcal sore throat": ("strep throat", "strep pharyngitis"), "sprain of ankle": ("ankle sprain",),
    "otitis media": ("otitis media", "AOM"), "polyp of colon": ("colon polyp", "colonic polyps"),
    "stroke": ("CVA", "stroke"), "coronary heart disease": ("CAD", "coronary artery disease"),
    "atrial fibrillation": ("AFib", "atrial fibrillation"), "osteoporosis": ("osteoporosis",),
    "myocardial infarction": ("MI", "myocardial infarction"), "chronic congestive heart failure": ("CHF",),
    "alzheimer's disease": ("Alzheimer's disease", "Alzheimer dementia"), "seizure disorder": ("seizure disorder",),
    "epilepsy": ("epilepsy",), "osteoarthritis of knee": ("knee OA", "osteoarthritis of the knee"),
    "osteoarthritis of hip": ("hip OA",), "hypertriglyceridemia": ("hypertriglyceridemia",),
    "metabolic syndrome x": ("metabolic syndrome",), "childhood asthma": ("asthma",),
    "perennial allergic rhinitis": ("allergic rhinitis",), "pulmonary emphysema": ("emphysema",),
    "perennial allergic rhinitis with seasonal variation": ("allergic rhinitis",),
    "neuropathy due to type 2 diabetes mellitus": ("diabetic neuropathy",), "chronic pain": ("chronic pain",),
    "acute allergic reaction": ("allergic reaction",), "drug overdose": ("drug overdose", "overdose"),
    "opioid abuse": ("opioid use disorder",), "gout": ("gout",), "cystitis": ("cystitis",),
    "escherichia coli urinary tract infection": ("E. coli UTI",), "concussion with no loss of consciousness":
    ("concussion without LOC", "concussion"), "concussion with loss of consciousness": ("concussion with LOC",),
    "laceration of thigh": ("thigh laceration",), "laceration of forearm": ("forearm laceration",),
    "laceration of foot": ("foot laceration",), "laceration of hand": ("hand laceration",),
    "fracture of forearm": ("forearm fracture", "forearm fx"), "fracture of ankle": ("ankle fracture",),
    "closed fracture of hip": ("hip fracture", "closed hip fx"), "fracture of clavicle": ("clavicle fracture",),
    "sinusitis": ("sinusitis",), "acute bacterial sinusitis": ("bacterial sinusitis",),
    "whiplash injury to neck": ("whiplash",), "first degree burn": ("first degree burn",),
    "sprain of wrist": ("wrist sprain",), "impacted molars": ("impacted molars",),
    "chronic intractable migraine without aura": ("chronic migraine",),
    "pathological fracture due to osteoporosis": ("osteoporotic fracture",),
    "injury of tendon of the rotator cuff of shoulder": ("rotator cuff injury",),
    "localized, primary osteoarthritis of the hand": ("hand OA",), "hyperglycemia": ("hyperglycemia",),
    "malignant tumor of colon": ("colon cancer",), "overlapping malignant neoplasm of colon": ("colon cancer",),
    "recurrent rectal polyp": ("rectal polyps",), "appendicitis": ("appendicitis",),
    "rupture of appendix": ("ruptured appendix",), "cardiac arrest": ("cardiac arrest",),
    "traumatic brain injury": ("TBI",), "brain damage - traumatic": ("traumatic brain injury",),
}

PROCEDURE_NAMES: dict[str, tuple[str, ...]] = {
    "suture open wound": ("laceration repaired with sutures", "wound sutured"),
    "ankle x-ray": ("ankle XR", "x-ray of the ankle"), "upper arm x-ray": ("humerus XR", "upper arm x-ray"),
    "pelvis x-ray": ("pelvic XR", "pelvis x-ray"), "plain chest x-ray": ("CXR", "chest x-ray"),
    "colonoscopy": ("colonoscopy",), "electrical cardioversion": ("DCCV", "cardioversion"),
    "percutaneous coronary intervention": ("PCI",), "coronary artery bypass grafting": ("CABG",),
    "appendectomy": ("appendectomy", "lap appy"), "bone immobilization": ("splinting", "immobilization"),
    "throat culture": ("throat culture",), "urine culture": ("urine culture", "UCx"),
    "spirometry": ("spirometry", "PFTs"), "digital examination of rectum": ("DRE",),
    "bone density scan": ("DEXA scan",), "rectal polypectomy": ("polypectomy",),
    "depression screening": ("depression screening", "PHQ-9 screen"), "bilateral tubal ligation": ("BTL",),
    "catheter ablation of tissue of heart": ("catheter ablation",),
    "intravenous blood transfusion of packed cells": ("pRBC transfusion",),
    "injection of adrenaline": ("IM epinephrine",), "hemoglobin / hematocrit / platelet count": ("H/H",),
    "skin test for tuberculosis": ("PPD",), "standard pregnancy test": ("urine hCG",),
    "insertion of intrauterine contraceptive device": ("IUD placed",), "biopsy of prostate": ("prostate biopsy",),
    "admission to orthopedic department": ("ortho admission",), "childbirth": ("delivery",),
}

VACCINE_NAMES: dict[str, tuple[str, ...]] = {
    "influenza": ("flu shot", "influenza vaccine"), "td (adult)": ("Td booster",), "tdap": ("Tdap",),
    "pneumococcal": ("pneumococcal vaccine", "Pneumovax"), "zoster": ("Shingrix", "zoster vaccine"),
    "hep b": ("hep B vaccine",), "hpv": ("HPV vaccine",), "meningococcal": ("meningococcal vaccine",),
}


# How time is written; the held-out variant (variant.py) swaps these lists in place
PHRASES: dict[str, list[str]] = {
    "today": ["today"], "yesterday": ["yesterday"], "hd": ["HD #{n}", "HD{n}", "hospital day {n}"],
    "admission": ["on admission"], "labs_today": ["Labs drawn today:"], "months_ago": ["{n} months ago"],
    "vitals_admission": ["Vitals on admission: ", "VS on arrival: ", "Vitals: "],
}
CLOCK_STYLES: list[int] = [0, 0, 1, 2]
DATE_STYLES: list[int] = [0, 1, 2, 3, 4]
SEPARATORS: list[str] = [" ", " ", " ", ": ", " of ", " was ", "="]
PROSE_LEADS: list[str] = ["{n} came back at ", "{n} was ", "{n} of ", "{n} stable at ", "{n} noted to be "]


def clean(name: str) -> str:
    """A record display without its parenthetical tag, lower case: "Viral sinusitis (disorder)" → "viral sinusitis"."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", name).strip().lower()


def drug_words(product: str) -> tuple[str | None, float | None, str | None]:
    """(note name key, strength, unit) for a record product; strength only for single-ingredient products."""
    low = product.lower()
    key = next((word for word in DRUG_NAMES if re.search(rf"\b{re.escape(word)}", low)), None)
    if key is None or any(c in low for c in COMBINATIONS):
        return key, None, None
    amounts = re.findall(r"(\d+(?:\.\d+)?)\s*(mg|mcg|unt)\b(?!\s*/)", low)
    per = re.search(r"\d\s*(mg|mcg|unt)\s*/", low)
    if len(amounts) != 1 or per:
        return key, None, None
    value, unit = float(amounts[0][0]), amounts[0][1]
    if unit == "mg" and value < 1:
        return key, round(value * 1000, 3), "mcg"
    return key, value, unit
