"""Held-out gold, step 3: what questions name, and the words people use for it.

Items are sets of LOINC codes covering both data sets (Synthea uses 6298-4 for potassium, the synthetic
sample 2823-3). Each item has names by **register**: ``abbr`` (clinician shorthand), ``full``, ``lay``
(what a patient or a tired colleague says) and ``typo`` (a plausible misspelling). Only names that mean
one item are listed: "sugar" is glucose; the ambiguous "sugar test", "kidney function" and "bloodwork" are
asked only where every reading gives the same answer (existence, last date of any lab).

Concepts match the record's own names with a regular expression. A class ("blood thinner", "water pill",
"cholesterol pill") is a union of drugs; ``near`` lists what must also be absent before "no" is the gold
(aspirin for "blood thinner", any combination product holding the ingredient).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    """A measured item."""

    key: str
    codes: frozenset[str]
    names: dict[str, tuple[str, ...]]
    cuts: tuple[float, ...] = ()
    unit: str = ""

    def says(self, register: str) -> tuple[str, ...]:
        """Names in one register (empty when the item has none there)."""
        return self.names.get(register, ())


def _item(key: str, codes: str, abbr: str = "", full: str = "", lay: str = "", typo: str = "",
          cuts: tuple[float, ...] = (), unit: str = "") -> Item:
    def split(text: str) -> tuple[str, ...]:
        return tuple(p.strip() for p in text.split("|") if p.strip())
    names = {k: split(v) for k, v in (("abbr", abbr), ("full", full), ("lay", lay), ("typo", typo)) if v}
    return Item(key, frozenset(codes.split()), names, cuts, unit)


ITEMS: dict[str, Item] = {i.key: i for i in [
    _item("a1c", "4548-4", "A1c|HbA1c|Hgb A1c", "hemoglobin A1c", "3-month sugar average", "A1C level|hba1c",
          (5.7, 6.5, 7.0, 8.0)),
    _item("glucose", "2339-0 2345-7", "BG|gluc", "glucose|serum glucose", "sugar|sugar level", "glucse|glucos",
          (70, 100, 126, 200)),
    _item("potassium", "6298-4 2823-3", "K|K+", "potassium|serum potassium", "", "potasium|potassum",
          (3.5, 4.0, 5.0, 5.5)),
    _item("sodium", "2947-0 2951-2", "Na|Na+", "sodium", "", "sodum", (135, 140, 145)),
    _item("creatinine", "38483-4 2160-0", "Cr|creat|SCr", "creatinine", "", "creatinin|creatnine",
          (1.0, 1.2, 1.5, 2.0)),
    _item("bun", "6299-2 3094-0", "BUN", "urea nitrogen", "", "", (10, 20, 25)),
    _item("calcium", "49765-1 17861-6", "Ca", "calcium", "", "calcum", (8.5, 9.5, 10.0)),
    _item("chloride", "2069-3 2075-0", "Cl", "chloride", "", "", (100, 106)),
    _item("co2", "20565-8 2028-9", "CO2|bicarb|HCO3", "bicarbonate", "", "", (22, 26, 29)),
    _item("egfr", "33914-3 98979-8", "eGFR|GFR", "estimated GFR", "", "", (30, 60, 90)),
    _item("cholesterol", "2093-3", "TC|tot chol", "total cholesterol", "cholesterol", "choleterol|cholestrol",
          (150, 200, 240)),
    _item("ldl", "18262-6", "LDL|LDL-C", "LDL cholesterol", "bad cholesterol", "", (70, 100, 130, 160)),
    _item("hdl", "2085-9", "HDL|HDL-C", "HDL cholesterol", "good cholesterol", "", (40, 60)),
    _item("triglycerides", "2571-8", "TG|trigs|TGs", "triglycerides", "", "trigylcerides|triglicerides",
          (150, 200)),
    _item("hemoglobin", "718-7", "Hgb|Hb", "hemoglobin", "", "hemoglobn|hemoglobin level", (10, 12, 13, 14)),
    _item("hematocrit", "4544-3 20570-8", "Hct|crit", "hematocrit", "", "hematocrt", (36, 40, 45)),
    _item("wbc", "6690-2", "WBC", "white blood cell count", "white count", "", (4.0, 10.0, 11.0)),
    _item("platelets", "777-3", "plt|plts", "platelet count", "", "platlets", (150, 250, 400)),
    _item("weight", "29463-7", "wt|body wt", "body weight", "weight", "wieght", (60, 80, 100), "kg"),
    _item("height", "8302-2", "ht", "body height", "height", "", (150, 170), "cm"),
    _item("bmi", "39156-5", "BMI", "body mass index", "", "", (25, 30, 35)),
    _item("sbp", "8480-6", "SBP|sys BP", "systolic blood pressure", "top BP number|top pressure number", "",
          (120, 130, 140, 160), "mmHg"),
    _item("dbp", "8462-4", "DBP|dia BP", "diastolic blood pressure", "bottom BP number|bottom pressure number", "",
          (80, 90), "mmHg"),
    _item("temp", "8331-1 8310-5", "temp|T", "body temperature", "temperature", "", (37.5, 38.0)),
    _item("hr", "8867-4", "HR", "heart rate", "pulse", "", (100, 60)),
    _item("spo2", "59408-5 2708-6", "SpO2|O2 sat|sats", "oxygen saturation", "oxygen level", "", (92, 95)),
    _item("rr", "9279-1", "RR|resp rate", "respiratory rate", "breathing rate", "", (20,)),
    _item("pain", "72514-3", "pain score", "pain severity score", "pain level", "", (4, 7)),
    _item("psa", "2857-1", "PSA", "prostate-specific antigen", "", "", (4.0,)),
    _item("alt", "1742-6", "ALT|SGPT", "alanine aminotransferase", "", "", (40,)),
    _item("albumin", "1751-7", "alb", "albumin", "", "albumen", (3.5, 4.0)),
    _item("troponin", "89579-7", "trop|hs-trop", "troponin", "", "troponn", (14, 50)),
    _item("bnp", "30934-4", "BNP", "B-type natriuretic peptide", "", "", (100, 400)),
    _item("vanc_trough", "4092-3", "vanc trough|vanco trough", "vancomycin trough", "", "", (10, 15, 20)),
    _item("lactate", "2524-7", "lactic|lac", "lactate", "", "", (2.0,)),
    _item("phq9", "44261-6", "PHQ-9", "PHQ-9 depression score", "", "", (10,)),
]}

# Items nobody in the Synthea set has (asked only as no-data), with the words used for them.
ABSENT_SYNTHEA: dict[str, tuple[str, ...]] = {
    "hr": ("pulse", "HR", "heart rate"), "spo2": ("O2 sat", "oxygen level", "sats"), "rr": ("resp rate",),
    "tsh": ("TSH", "thyroid level"), "inr": ("INR", "PT/INR"), "mg": ("Mg", "magnesium"),
    "troponin": ("trop", "troponin"), "b12": ("B12 level",), "ferritin": ("ferritin",), "lipase": ("lipase",),
}
# Items nobody in the synthetic sample has.
ABSENT_SAMPLE: dict[str, tuple[str, ...]] = {
    "tsh": ("TSH", "thyroid level"), "inr": ("INR", "PT/INR"), "psa": ("PSA",), "ferritin": ("ferritin",),
    "lipase": ("lipase",), "b12": ("B12 level",), "d_dimer": ("D-dimer",), "ammonia": ("ammonia level",),
}


@dataclass(frozen=True)
class Concept:
    """A kind of record recognised by its name; ``near`` must also be absent for a "no"."""

    key: str
    kind: str
    pattern: re.Pattern[str]
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    plural: str = ""
    near: re.Pattern[str] | None = None

    def matches(self, name: str) -> bool:
        """True when a record's name is an instance of the concept."""
        return bool(self.pattern.search(name))

    def close(self, name: str) -> bool:
        """True when a record's name is the concept or near it."""
        return self.matches(name) or bool(self.near and self.near.search(name))

    def says(self, register: str) -> tuple[str, ...]:
        """Names in one register."""
        return self.names.get(register, ())


def _c(key: str, kind: str, pattern: str, full: str, abbr: str = "", lay: str = "", typo: str = "",
       plural: str = "", near: str = "") -> Concept:
    def split(text: str) -> tuple[str, ...]:
        return tuple(p.strip() for p in text.split("|") if p.strip())
    names = {k: split(v) for k, v in (("abbr", abbr), ("full", full), ("lay", lay), ("typo", typo)) if v}
    return Concept(key, kind, re.compile(pattern, re.IGNORECASE), names, plural,
                   re.compile(near, re.IGNORECASE) if near else None)


_STATINS = r"(simva|simvi|atorva|rosuva|prava|lova|fluva|pitava)statin|zocor|lipitor|crestor"
_DIURETICS = r"hydrochlorothiazide|furosemide|lasix|chlorthalidone|spironolactone|bumetanide|torsemide"
_THINNERS = r"warfarin|coumadin|clopidogrel|plavix|heparin|enoxaparin|apixaban|rivaroxaban|dabigatran"
_BP_MEDS = (r"hydrochlorothiazide|amlodipine|metoprolol|lisinopril|losartan|captopril|verapamil|atenolol|"
            r"carvedilol|toprol|norvasc")
_CONTRACEPTIVES = (r"28 day pack|91 day pack|nuvaring|intrauterine system|etonogestrel|medroxyprogesterone|"
                   r"norelgestromin|errin|camila|jolivette|yaz|trinessa")

CONCEPTS: dict[str, Concept] = {c.key: c for c in [
    # conditions
    _c("htn", "condition", r"^hypertension$", "hypertension", "HTN", "high blood pressure", "hypertenison",
       near="hypertens"),
    _c("diabetes", "condition", r"\bdiabet", "diabetes", "DM|T2DM", "sugar diabetes", "diabetis",
       near="diabet|hyperglyc"),  # \b: "Prediabetes" is not diabetes
    _c("prediabetes", "condition", r"prediabetes", "prediabetes", "pre-DM", "borderline diabetes"),
    _c("hld", "condition", r"hyperlipidemia", "hyperlipidemia", "HLD", "high cholesterol", "hyperlipidemea"),
    _c("obesity", "condition", r"obes", "obesity"),
    _c("anemia", "condition", r"anemia", "anemia", "", "low blood count", "anaemia"),
    _c("cad", "condition", r"coronary heart disease", "coronary heart disease", "CAD"),
    _c("afib", "condition", r"atrial fibrillation", "atrial fibrillation", "AF|a-fib", "irregular heartbeat"),
    _c("mi", "condition", r"myocardial infarction", "myocardial infarction", "MI", "heart attack"),
    _c("stroke", "condition", r"\bstroke\b", "stroke", "CVA", ""),
    _c("chf", "condition", r"heart failure", "heart failure", "CHF|HF", ""),
    _c("ckd", "condition", r"chronic kidney disease|ckd", "chronic kidney disease", "CKD", "kidney disease"),
    _c("depression", "condition", r"depress", "depression", "MDD", ""),
    _c("osteoporosis", "condition", r"osteoporosis", "osteoporosis", "", "thin bones"),
    _c("oa", "condition", r"osteoarthritis", "osteoarthritis", "OA", "wear-and-tear arthritis"),
    _c("asthma", "condition", r"asthma", "asthma", "", ""),
    _c("sinusitis", "condition", r"sinusitis", "sinusitis", "", "sinus infection"),
    _c("bronchitis", "condition", r"bronchitis", "acute bronchitis", "", "chest cold"),
    _c("strep", "condition", r"streptococcal sore throat", "streptococcal pharyngitis", "strep", "strep throat"),
    _c("pneumonia", "condition", r"pneumonia", "pneumonia", "PNA", ""),
    _c("cellulitis", "condition", r"cellulitis", "cellulitis", "", "skin infection"),
    _c("uti", "condition", r"urinary tract infection", "urinary tract infection", "UTI", "bladder infection"),
    _c("aki", "condition", r"acute kidney injury", "acute kidney injury", "AKI", ""),
    _c("sprain", "condition", r"sprain of ankle|ankle sprain", "ankle sprain", "", "twisted ankle"),
    _c("seizure", "condition", r"seizure|epilep", "seizure disorder", "sz d/o"),
    _c("alzheimers", "condition", r"alzheimer", "Alzheimer's disease", "", "dementia"),
    _c("gout", "condition", r"\bgout\b", "gout"),
    _c("migraine", "condition", r"migraine", "migraine"),
    # drugs and classes
    _c("statin", "medication", _STATINS, "statin", "", "cholesterol pill|cholesterol med", "staten"),
    _c("simvastatin", "medication", r"simvastatin|simvistatin|zocor", "simvastatin", "", "", "simvastin"),
    _c("atorvastatin", "medication", r"atorvastatin|lipitor", "atorvastatin", "Lipitor"),
    _c("diuretic", "medication", _DIURETICS, "diuretic", "", "water pill|fluid pill"),
    _c("hctz", "medication", r"hydrochlorothiazide", "hydrochlorothiazide", "HCTZ", "", "hydrochlorothiazid"),
    _c("furosemide", "medication", r"furosemide|lasix", "furosemide", "Lasix"),
    _c("thinner", "medication", _THINNERS, "anticoagulant", "", "blood thinner", near=r"aspirin|alteplase"),
    _c("warfarin", "medication", r"warfarin|coumadin", "warfarin", "Coumadin"),
    _c("clopidogrel", "medication", r"clopidogrel|plavix", "clopidogrel", "Plavix"),
    _c("bp_med", "medication", _BP_MEDS, "antihypertensive", "", "blood pressure pill|BP pill",
       near=_DIURETICS),
    _c("metformin", "medication", r"metformin|glucophage", "metformin", "Glucophage", "", "metfromin"),
    _c("insulin", "medication", r"insulin|lantus", "insulin", "", "insulin shots"),
    _c("metoprolol", "medication", r"metoprolol|toprol", "metoprolol", "Toprol"),
    _c("amlodipine", "medication", r"amlodipine|norvasc", "amlodipine", "Norvasc"),
    _c("sertraline", "medication", r"sertraline|zoloft", "sertraline", "Zoloft"),
    _c("ibuprofen", "medication", r"ibuprofen|advil|motrin", "ibuprofen", "Advil|Motrin", "", "ibuprofin"),
    _c("naproxen", "medication", r"naproxen", "naproxen", "Aleve"),
    _c("acetaminophen", "medication", r"^acetaminophen [\d.]+ mg oral tablet$|tylenol", "acetaminophen", "APAP|Tylenol",
       "", "acetominophen", near=r"acetaminophen"),
    _c("vancomycin", "medication", r"vancomycin", "vancomycin", "vanc|vanco", "", "vancomyacin"),
    _c("heparin", "medication", r"heparin", "heparin", "SQ heparin"),
    _c("ceftriaxone", "medication", r"ceftriaxone|rocephin", "ceftriaxone", "Rocephin"),
    _c("zosyn", "medication", r"piperacillin", "piperacillin-tazobactam", "Zosyn|pip-tazo"),
    _c("cephalexin", "medication", r"cephalexin|keflex", "cephalexin", "Keflex"),
    _c("cefuroxime", "medication", r"cefuroxime|ceftin", "cefuroxime", "Ceftin"),
    _c("penicillin", "medication", r"penicillin", "penicillin", "PCN|Pen VK"),
    _c("amox_clav", "medication", r"clavulanate", "amoxicillin-clavulanate", "Augmentin|amox-clav"),
    _c("epipen", "medication", r"auto-injector", "epinephrine auto-injector", "EpiPen"),
    _c("inhaler", "medication", r"inhaler", "inhaler", "MDI", "puffer"),
    _c("birth_control", "medication", _CONTRACEPTIVES, "hormonal contraception", "", "birth control"),
    _c("ocp", "medication", r"28 day pack|91 day pack", "oral contraceptive", "OCP", "the pill",
       near=_CONTRACEPTIVES),  # pills only: an IUD, implant, ring or injection is birth control, not "the pill"
    _c("b12", "medication", r"vitamin b 12", "vitamin B12", "B12 shots"),
    _c("digoxin", "medication", r"digoxin", "digoxin", "dig|Lanoxin"),
    _c("levothyroxine", "medication", r"levothyroxine|synthroid", "levothyroxine", "Synthroid|LT4"),
    # procedures
    _c("colonoscopy", "procedure", r"colonoscopy", "colonoscopy", "c-scope", "colon scope", "colonoscapy",
       "colonoscopies"),
    _c("echo", "procedure", r"echocardiogra", "echocardiogram", "TTE|echo", "heart ultrasound", plural="echos"),
    _c("cxr", "procedure", r"chest x-ray", "chest X-ray", "CXR", "chest film", plural="chest X-rays"),
    _c("ecg", "procedure", r"ecg|electrocardiogram", "ECG", "EKG", "heart tracing", plural="ECGs"),
    _c("cardioversion", "procedure", r"cardioversion", "cardioversion", "DCCV", "shock to reset the heart",
       plural="cardioversions"),
    _c("tb_test", "procedure", r"tuberculosis", "tuberculosis skin test", "PPD", "TB test", plural="PPDs"),
    _c("fobt", "procedure", r"fecal occult", "fecal occult blood test", "FOBT", "stool blood test",
       plural="FOBTs"),
    _c("throat_culture", "procedure", r"throat culture", "throat culture", "", "throat swab",
       plural="throat cultures"),
    _c("spirometry", "procedure", r"spirometry", "spirometry", "PFTs", "breathing test",
       plural="spirometry tests"),
    _c("blood_cultures", "procedure", r"blood culture", "blood cultures", "BCx", "", plural="blood cultures"),
    _c("depression_screen", "procedure", r"depression screening", "depression screening", "PHQ screen", "",
       plural="depression screenings"),
    # immunizations
    _c("flu", "immunization", r"influenza", "influenza vaccine", "flu vax", "flu shot|flu jab", plural="flu shots"),
    _c("tetanus", "immunization", r"\btd\b|tdap|dtap", "tetanus vaccine", "Td/Tdap", "tetanus shot",
       plural="tetanus shots"),
    _c("zoster", "immunization", r"zoster|shingrix", "zoster vaccine", "zoster vax", "shingles shot",
       plural="shingles shots"),
    _c("pneumococcal", "immunization", r"pneumococcal", "pneumococcal vaccine", "PCV|Prevnar",
       "pneumonia shot", plural="pneumonia shots"),
    _c("covid", "immunization", r"covid", "COVID-19 vaccine", "COVID vax", "COVID shot", plural="COVID shots"),
    _c("hpv", "immunization", r"\bhpv\b", "HPV vaccine", "Gardasil", "", plural="HPV doses"),
    _c("hepb", "immunization", r"hep b", "hepatitis B vaccine", "HBV vax", "hep B shot", plural="hep B shots"),
]}

# Encounter classes and how they are said (the class, then words by register).
ENCOUNTER_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "EMER": {"abbr": ("ED visits", "ER visits"), "lay": ("trips to the ER", "ER trips"),
             "full": ("emergency department visits",)},
    "IMP": {"abbr": ("admits", "IP stays"), "lay": ("hospital stays", "times admitted to the hospital"),
            "full": ("inpatient admissions", "hospitalizations")},
    "AMB": {"abbr": ("outpt visits", "amb visits"), "lay": ("office visits", "clinic appointments"),
            "full": ("outpatient encounters",)},
    "ALL": {"abbr": ("encounters", "total encounters"), "lay": ("visits of any kind", "times seen"),
            "full": ("encounters of any type",)},
}
