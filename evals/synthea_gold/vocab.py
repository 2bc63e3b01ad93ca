"""What a question may name: measurement items (LOINC codes) and concepts (name patterns), with phrasings.

An **item** is a set of LOINC codes: every Observation (or component) carrying one of them is a value of
the item, whatever its text says (Synthea spells some names with zero-width spaces). A **concept** is a
case-insensitive regular expression over the record's own names (``code.text``, else the first display)
of one resource kind: conditions, prescriptions, procedures or immunizations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Item:
    """A measured item and the ways clinicians say it."""

    key: str
    codes: frozenset[str]
    phrases: tuple[str, ...]
    unit: str = ""  # how a threshold is written after the number ("kg", "mmHg"); empty for labs
    thresholds: tuple[float, ...] = ()  # clinically meaningful cut-offs for "ever above/below X?"
    decimals: int = 1  # how a threshold is printed
    lab: bool = True


def _item(key: str, codes: str, phrases: str, thresholds: tuple[float, ...] = (), unit: str = "",
          decimals: int = 1, lab: bool = True) -> Item:
    return Item(key, frozenset(codes.split()), tuple(p.strip() for p in phrases.split("|")), unit,
                thresholds, decimals, lab)


ITEMS: dict[str, Item] = {i.key: i for i in [
    _item("a1c", "4548-4", "A1c|HbA1c|hemoglobin A1c|glycated hemoglobin", (5.7, 6.0, 6.5, 7.0, 8.0, 9.0)),
    _item("glucose", "2339-0", "glucose|blood glucose|BG|blood sugar", (70, 100, 126, 140, 200), decimals=0),
    _item("bun", "6299-2", "BUN|urea nitrogen|blood urea nitrogen", (7, 10, 15, 20, 25), decimals=0),
    _item("creatinine", "38483-4", "creatinine|Cr|serum creatinine", (0.8, 1.0, 1.2, 1.5, 2.0)),
    _item("calcium", "49765-1", "calcium|Ca|serum calcium", (8.5, 9.0, 9.5, 10.0, 10.5)),
    _item("sodium", "2947-0", "sodium|Na|serum sodium", (135, 138, 140, 142, 145), decimals=0),
    _item("potassium", "6298-4", "potassium|K|serum potassium", (3.5, 4.0, 4.5, 5.0, 5.5)),
    _item("chloride", "2069-3", "chloride|Cl", (98, 100, 103, 106, 110), decimals=0),
    _item("co2", "20565-8", "CO2|bicarbonate|bicarb", (20, 22, 24, 26, 28, 30), decimals=0),
    _item("cholesterol", "2093-3", "total cholesterol|cholesterol|chol|TC", (150, 180, 200, 240, 280), decimals=0),
    _item("triglycerides", "2571-8", "triglycerides|TG|trigs", (100, 150, 200, 300, 500), decimals=0),
    _item("ldl", "18262-6", "LDL|LDL cholesterol|LDL-C", (70, 100, 130, 160, 190), decimals=0),
    _item("hdl", "2085-9", "HDL|HDL cholesterol|HDL-C", (40, 50, 60, 70), decimals=0),
    _item("hemoglobin", "718-7", "hemoglobin|Hgb|Hb", (10, 12, 13, 14, 15, 16)),
    _item("hematocrit", "4544-3 20570-8", "hematocrit|Hct", (30, 36, 40, 45, 50), decimals=0),
    _item("wbc", "6690-2", "WBC|white count|white blood cell count", (4.0, 6.0, 8.0, 10.0, 11.0)),
    _item("platelets", "777-3", "platelets|plt|platelet count", (150, 200, 250, 300, 400), decimals=0),
    _item("egfr", "33914-3", "eGFR|GFR|estimated GFR", (30, 45, 60, 90), decimals=0),
    _item("height", "8302-2", "height|ht", (100, 150, 160, 170, 180), unit="cm", decimals=0, lab=False),
    _item("weight", "29463-7", "weight|wt|body weight", (20, 50, 60, 70, 80, 90, 100, 120), unit="kg",
          decimals=0, lab=False),
    _item("bmi", "39156-5", "BMI|body mass index", (18.5, 25, 30, 35, 40), decimals=1, lab=False),
    _item("sbp", "8480-6", "systolic BP|SBP|systolic blood pressure|systolic", (110, 120, 130, 140, 160),
          unit="mmHg", decimals=0, lab=False),
    _item("dbp", "8462-4", "diastolic BP|DBP|diastolic blood pressure|diastolic", (70, 80, 90, 100),
          unit="mmHg", decimals=0, lab=False),
    _item("temp", "8331-1", "temperature|temp|oral temp", (37.5, 38.0, 38.5), decimals=1, lab=False),
    _item("pain", "72514-3", "pain score|reported pain score", (2, 4, 6, 8), decimals=0, lab=False),
    _item("psa", "2857-1", "PSA|prostate specific antigen", (1.0, 2.0, 4.0)),
    _item("alt", "1742-6", "ALT", (20, 30, 40, 55), decimals=0),
    _item("ast", "1920-8", "AST", (20, 30, 40), decimals=0),
    _item("albumin", "1751-7", "albumin|serum albumin", (3.5, 4.0, 4.5, 5.0)),
    _item("bilirubin", "1975-2", "total bilirubin|T bili", (0.5, 1.0, 1.2)),
    _item("alkphos", "6768-6", "alk phos|alkaline phosphatase", (50, 100, 120), decimals=0),
    _item("uacr", "14959-1", "urine albumin/creatinine ratio|UACR", (10, 30), decimals=0),
    _item("ntprobnp", "33762-6", "NT-proBNP", (125, 300, 900), decimals=0),
    _item("ef", "10230-1", "ejection fraction|EF|LVEF", (40, 50), decimals=0),
    _item("mmse", "72106-8", "MMSE|MMSE score", (20, 24), decimals=0),
    _item("fev1fvc", "19926-5", "FEV1/FVC", (70,), decimals=0),
    _item("tscore", "38265-5", "DXA T-score|bone density T-score", (-2.5, -1.0)),
]}

# Items that no patient of the data set has: asked only as "no data" questions.
ABSENT_ITEMS: dict[str, tuple[str, ...]] = {
    "hr": ("heart rate", "HR", "pulse"),
    "spo2": ("SpO2", "O2 sat", "oxygen saturation"),
    "rr": ("respiratory rate", "RR"),
    "tsh": ("TSH",),
    "inr": ("INR",),
    "magnesium": ("magnesium", "Mg"),
    "vitd": ("vitamin D level", "25-OH vitamin D"),
    "troponin": ("troponin",),
}

# Items that make good value questions (common, numeric, several values per patient).
CORE_ITEMS = ("a1c", "glucose", "bun", "creatinine", "calcium", "sodium", "potassium", "chloride", "co2",
              "cholesterol", "triglycerides", "ldl", "hdl", "hemoglobin", "wbc", "platelets", "egfr",
              "weight", "bmi", "sbp", "dbp", "height", "hematocrit", "albumin", "alt")
TREND_ITEMS = ("a1c", "glucose", "creatinine", "potassium", "sodium", "cholesterol", "ldl", "hdl",
               "triglycerides", "weight", "bmi", "sbp", "dbp", "egfr", "hemoglobin", "bun")


@dataclass(frozen=True)
class Concept:
    """A named thing of one kind, recognised in the record by a pattern over names."""

    key: str
    kind: str  # condition | medication | procedure | immunization
    pattern: re.Pattern[str]
    phrases: tuple[str, ...]  # noun phrases, article included where English needs one ("a colonoscopy")
    plural: str = ""  # for counts ("colonoscopies", "flu shots")
    broad: re.Pattern[str] | None = None  # a true negative must not match this either (ingredient in a combo)

    def matches(self, name: str) -> bool:
        """True when the record's name is an instance of the concept."""
        return bool(self.pattern.search(name))

    def near(self, name: str) -> bool:
        """True when the name is the concept or close to it (never use such a record for a "no" answer)."""
        return self.matches(name) or bool(self.broad and self.broad.search(name))


def _c(key: str, kind: str, pattern: str, phrases: str, plural: str = "", broad: str = "") -> Concept:
    return Concept(key, kind, re.compile(pattern, re.IGNORECASE), tuple(p.strip() for p in phrases.split("|")),
                   plural, re.compile(broad, re.IGNORECASE) if broad else None)


CONCEPTS: dict[str, Concept] = {c.key: c for c in [
    # conditions
    _c("hypertension", "condition", r"^hypertension$", "hypertension|high blood pressure|HTN",
       broad="hypertension"),
    _c("diabetes", "condition", r"\bdiabet", "diabetes|DM|type 2 diabetes", broad="diabet|hyperglyc"),
    _c("prediabetes", "condition", r"\bprediabetes", "prediabetes"),
    _c("hyperlipidemia", "condition", r"hyperlipidemia", "hyperlipidemia|high cholesterol|HLD"),
    _c("hypertriglyceridemia", "condition", r"hypertriglyceridemia", "hypertriglyceridemia"),
    _c("cad", "condition", r"coronary heart disease", "coronary heart disease|CAD|coronary artery disease"),
    _c("afib", "condition", r"atrial fibrillation", "atrial fibrillation|afib|AF"),
    _c("mi", "condition", r"myocardial infarction", "a heart attack|an MI|a myocardial infarction"),
    _c("stroke", "condition", r"\bstroke\b", "a stroke|a CVA"),
    _c("chf", "condition", r"heart failure", "heart failure|CHF|congestive heart failure"),
    _c("asthma", "condition", r"asthma", "asthma"),
    _c("emphysema", "condition", r"emphysema", "emphysema"),
    _c("osteoporosis", "condition", r"osteoporosis", "osteoporosis"),
    _c("osteoarthritis", "condition", r"osteoarthritis", "osteoarthritis|OA"),
    _c("anemia", "condition", r"anemia", "anemia"),
    _c("obesity", "condition", r"obesity", "obesity"),
    _c("alzheimers", "condition", r"alzheimer", "Alzheimer's disease|Alzheimer's"),
    _c("seizures", "condition", r"seizure|epilepsy", "seizures|a seizure disorder"),
    _c("colon_cancer", "condition", r"malignant .*colon", "colon cancer"),
    _c("colon_polyps", "condition", r"polyp of colon|rectal polyp", "colon polyps"),
    _c("appendicitis", "condition", r"appendicitis", "appendicitis"),
    _c("sinusitis", "condition", r"sinusitis", "sinusitis|a sinus infection"),
    _c("strep", "condition", r"streptococcal sore throat", "strep throat"),
    _c("bronchitis", "condition", r"bronchitis", "bronchitis"),
    _c("otitis", "condition", r"otitis media", "otitis media|an ear infection"),
    _c("gout", "condition", r"\bgout\b", "gout"),
    _c("metabolic_syndrome", "condition", r"metabolic syndrome", "metabolic syndrome"),
    _c("chronic_pain", "condition", r"chronic pain", "chronic pain"),
    _c("migraine", "condition", r"migraine", "migraines|migraine"),
    _c("concussion", "condition", r"concussion", "a concussion"),
    _c("overdose", "condition", r"overdose", "a drug overdose"),
    _c("hip_fracture", "condition", r"fracture of hip", "a hip fracture"),
    _c("allergic_rhinitis", "condition", r"allergic rhinitis", "allergic rhinitis"),
    _c("ankle_sprain", "condition", r"sprain of ankle", "an ankle sprain|a sprained ankle"),
    # prescriptions (generic and brand names)
    _c("simvastatin", "medication", r"simvastatin|simvistatin", "simvastatin|Zocor"),
    _c("atorvastatin", "medication", r"atorvastatin", "atorvastatin|Lipitor"),
    _c("statin", "medication", r"(simva|simvi|atorva|rosuva|prava|lova)statin", "a statin|statin therapy"),
    _c("hctz", "medication", r"hydrochlorothiazide", "hydrochlorothiazide|HCTZ"),
    _c("clopidogrel", "medication", r"clopidogrel", "clopidogrel|Plavix"),
    _c("warfarin", "medication", r"warfarin", "warfarin|Coumadin"),
    _c("digoxin", "medication", r"digoxin", "digoxin|Lanoxin"),
    _c("metoprolol", "medication", r"metoprolol", "metoprolol|Toprol XL"),
    _c("amlodipine", "medication", r"amlodipine", "amlodipine|Norvasc"),
    _c("verapamil", "medication", r"verapamil", "verapamil"),
    _c("furosemide", "medication", r"furosemide|lasix", "furosemide|Lasix"),
    _c("nitroglycerin", "medication", r"nitroglycerin", "nitroglycerin|nitro spray"),
    _c("aspirin", "medication", r"aspirin", "aspirin|baby aspirin"),
    _c("metformin", "medication", r"metformin", "metformin"),
    _c("insulin", "medication", r"insulin", "insulin"),
    _c("alendronate", "medication", r"alendron", "alendronate|Fosamax"),
    _c("acetaminophen", "medication", r"^acetaminophen \d+ mg oral tablet$", "acetaminophen|Tylenol",
       broad="acetaminophen"),
    _c("ibuprofen", "medication", r"ibuprofen", "ibuprofen|Advil|Motrin"),
    _c("naproxen", "medication", r"naproxen", "naproxen|Aleve"),
    _c("augmentin", "medication", r"clavulanate", "Augmentin|amoxicillin-clavulanate"),
    _c("penicillin", "medication", r"penicillin", "penicillin|Pen VK"),
    _c("cefuroxime", "medication", r"cefuroxime", "cefuroxime|Ceftin"),
    _c("meperidine", "medication", r"meperidine", "meperidine|Demerol"),
    _c("percocet", "medication", r"oxycodone", "Percocet|oxycodone-acetaminophen"),
    _c("norco", "medication", r"hydrocodone", "hydrocodone-acetaminophen|Norco"),
    _c("epipen", "medication", r"auto-injector", "an EpiPen|an epinephrine auto-injector"),
    _c("albuterol", "medication", r"albuterol", "albuterol|an albuterol inhaler"),
    _c("loratadine", "medication", r"loratadine", "loratadine|Claritin"),
    _c("fexofenadine", "medication", r"fexofenadine", "fexofenadine|Allegra"),
    _c("levothyroxine", "medication", r"levothyroxine", "levothyroxine|Synthroid"),
    _c("sertraline", "medication", r"sertraline", "sertraline|Zoloft"),
    _c("prednisone", "medication", r"prednisone", "prednisone"),
    _c("clonazepam", "medication", r"clonazepam", "clonazepam|Klonopin"),
    _c("donepezil", "medication", r"donepezil", "donepezil|Aricept"),
    _c("galantamine", "medication", r"galantamine", "galantamine"),
    _c("amiodarone", "medication", r"amiodarone", "amiodarone"),
    _c("methotrexate", "medication", r"methotrexate", "methotrexate"),
    _c("b12", "medication", r"vitamin b 12", "vitamin B12 injections|B12 shots"),
    _c("iron", "medication", r"ferrous sulfate", "ferrous sulfate|iron tablets"),
    _c("amoxicillin_plain", "medication", r"^amoxicillin \d+ mg oral (capsule|tablet)$", "amoxicillin",
       broad="amoxicillin"),
    _c("captopril", "medication", r"captopril", "captopril"),
    # procedures
    _c("colonoscopy", "procedure", r"colonoscopy", "a colonoscopy", "colonoscopies"),
    _c("cardioversion", "procedure", r"cardioversion", "a cardioversion|an electrical cardioversion",
       "cardioversions"),
    _c("echo", "procedure", r"echocardiogra", "an echocardiogram|an echo", "echocardiograms"),
    _c("chest_xray", "procedure", r"chest x-ray", "a chest X-ray|a CXR", "chest X-rays"),
    _c("spirometry", "procedure", r"spirometry", "spirometry", "spirometry tests"),
    _c("depression_screen", "procedure", r"depression screening", "a depression screening",
       "depression screenings"),
    _c("appendectomy", "procedure", r"^appendectomy", "an appendectomy", "appendectomies"),
    _c("cabg", "procedure", r"coronary artery bypass", "a CABG|bypass surgery", "CABGs"),
    _c("pci", "procedure", r"percutaneous coronary intervention", "a PCI|a percutaneous coronary intervention",
       "PCIs"),
    _c("throat_culture", "procedure", r"throat culture", "a throat culture", "throat cultures"),
    _c("iud", "procedure", r"insertion of intrauterine", "an IUD insertion", "IUD insertions"),
    _c("tb_test", "procedure", r"skin test for tuberculosis", "a TB skin test|a PPD", "TB skin tests"),
    _c("dexa", "procedure", r"bone density", "a bone density scan|a DEXA scan", "bone density scans"),
    _c("fobt", "procedure", r"fecal occult", "a fecal occult blood test|an FOBT", "FOBTs"),
    _c("polypectomy", "procedure", r"polypectomy", "a polypectomy", "polypectomies"),
    _c("pregnancy_test", "procedure", r"pregnancy test", "a pregnancy test", "pregnancy tests"),
    _c("transfusion", "procedure", r"transfusion", "a blood transfusion", "transfusions"),
    _c("eeg", "procedure", r"electroencephalogram", "an EEG", "EEGs"),
    _c("ablation", "procedure", r"catheter ablation", "a cardiac ablation", "ablations"),
    _c("cesarean", "procedure", r"cesarean", "a C-section|a cesarean section", "C-sections"),
    _c("sutures", "procedure", r"suture open wound", "a sutured wound repair|a laceration repair", "laceration repairs"),
    _c("throat_swab_strep", "procedure", r"streptococcus pneumoniae group b antigen", "a group B strep test",
       "group B strep tests"),
    # immunizations
    _c("flu", "immunization", r"influenza", "a flu shot|the flu vaccine|an influenza vaccine", "flu shots"),
    _c("tdap", "immunization", r"\btdap\b", "a Tdap|the Tdap vaccine", "Tdap shots", broad=r"\btd\b|dtap"),
    _c("tetanus", "immunization", r"\btd\b|\btdap\b|\bdtap\b", "a tetanus shot|a tetanus vaccine",
       "tetanus shots"),
    _c("zoster", "immunization", r"zoster", "the shingles vaccine|a shingles shot", "shingles shots"),
    _c("pneumococcal", "immunization", r"pneumococcal", "a pneumonia vaccine|the pneumococcal vaccine",
       "pneumococcal vaccines"),
    _c("hpv", "immunization", r"\bhpv\b", "the HPV vaccine|Gardasil", "HPV doses"),
    _c("hepb", "immunization", r"\bhep b\b", "the hepatitis B vaccine|a hep B shot", "hepatitis B doses"),
    _c("hepa", "immunization", r"\bhep a\b", "the hepatitis A vaccine|a hep A shot", "hepatitis A doses"),
    _c("mmr", "immunization", r"\bmmr\b", "the MMR vaccine|an MMR shot", "MMR doses"),
    _c("varicella", "immunization", r"varicella", "the chickenpox vaccine|a varicella vaccine",
       "varicella doses"),
    _c("meningococcal", "immunization", r"meningococcal", "the meningococcal vaccine|a meningitis shot",
       "meningococcal doses"),
    _c("polio", "immunization", r"\bipv\b", "the polio vaccine|IPV", "polio doses"),
    _c("hib", "immunization", r"\bhib\b", "the Hib vaccine", "Hib doses"),
    _c("rotavirus", "immunization", r"rotavirus", "the rotavirus vaccine", "rotavirus doses"),
]}

# Concepts a daily-dose question may name: one drug each (never a class such as "a statin").
DOSE_CONCEPTS = ("simvastatin", "metoprolol", "furosemide", "amoxicillin_plain", "cefuroxime", "meperidine",
                 "percocet", "norco", "levothyroxine", "sertraline", "prednisone", "penicillin")

ENCOUNTER_CLASSES: dict[str, tuple[str, ...]] = {
    "EMER": ("ER visits", "ED visits", "emergency department visits", "emergency room visits"),
    "IMP": ("inpatient admissions", "hospital admissions", "hospitalizations", "inpatient stays"),
    "AMB": ("outpatient visits", "ambulatory visits", "ambulatory encounters", "clinic visits"),
    "ALL": ("encounters", "visits of any kind", "healthcare encounters"),
}
ENCOUNTER_SINGULAR: dict[str, tuple[str, ...]] = {
    "EMER": ("ER visit", "ED visit", "emergency department visit", "trip to the emergency room"),
    "IMP": ("inpatient admission", "hospital admission", "hospitalization"),
    "AMB": ("outpatient visit", "ambulatory visit", "clinic visit"),
    "ALL": ("encounter", "visit"),
}

# Labs worth asking about after a drug was started: drug concept → items it plausibly affects.
DRUG_EFFECTS: dict[str, tuple[str, ...]] = {
    "simvastatin": ("ldl", "cholesterol", "triglycerides", "hdl", "alt"),
    "atorvastatin": ("ldl", "cholesterol"),
    "statin": ("ldl", "cholesterol"),
    "hctz": ("potassium", "sodium", "sbp", "dbp", "glucose", "creatinine"),
    "clopidogrel": ("hemoglobin", "platelets", "sbp"),
    "warfarin": ("hemoglobin", "sbp"),
    "digoxin": ("potassium", "creatinine", "sbp"),
    "metoprolol": ("sbp", "dbp"),
    "amlodipine": ("sbp", "dbp"),
    "verapamil": ("sbp", "dbp"),
    "furosemide": ("potassium", "sodium", "creatinine", "weight"),
    "alendronate": ("calcium",),
    "metformin": ("a1c", "glucose"),
    "captopril": ("potassium", "creatinine", "sbp"),
    "nitroglycerin": ("sbp",),
    "aspirin": ("hemoglobin", "sbp"),
}


def item_values(record: Any, item: Item) -> list:
    """The measurements of one item (any of its codes) in a PatientRecord, oldest first."""
    return record.values_of(item.codes)
