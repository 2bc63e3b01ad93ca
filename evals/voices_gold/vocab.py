"""Words of the two voices: items, drugs, drug classes, vaccines, conditions (data only)."""

# LOINC -> (pharmacist names, patient names, cut-offs for "ever above/below")
ITEMS = {
    "2339-0": (["glucose", "BG", "serum glucose"], ["blood sugar", "sugar level", "glucose"], [100, 126, 140, 200, 70]),
    "4548-4": (["A1c", "HbA1c"], ["A1c", "hemoglobin A1c"], [5.7, 6.5, 7, 8]),
    "38483-4": (["SCr", "serum creatinine", "Cr"], ["creatinine", "creatinine level"], [1.0, 1.2, 1.5, 2.0]),
    "6298-4": (["K+", "K", "serum potassium"], ["potassium", "potassium level"], [3.5, 4.5, 5.0, 5.5]),
    "2947-0": (["Na", "serum sodium"], ["sodium", "sodium level"], [135, 140, 145]),
    "18262-6": (["LDL", "LDL-C"], ["LDL", "bad cholesterol"], [100, 130, 160]),
    "2085-9": (["HDL"], ["HDL", "good cholesterol"], [40, 60]),
    "2093-3": (["TC", "total cholesterol"], ["total cholesterol", "cholesterol"], [200, 240]),
    "2571-8": (["TG", "trigs"], ["triglycerides"], [150, 200]),
    "29463-7": (["wt", "body weight"], ["weight"], []),
    "39156-5": (["BMI"], ["BMI", "body mass index"], [25, 30, 35]),
    "8480-6": (["SBP", "systolic BP"], ["top blood pressure number", "systolic blood pressure"], [120, 130, 140]),
    "8462-4": (["DBP", "diastolic BP"], ["bottom blood pressure number", "diastolic blood pressure"], [80, 90]),
    "718-7": (["Hgb", "hemoglobin"], ["hemoglobin"], [12, 13.5]),
    "33914-3": (["eGFR"], ["eGFR"], [60, 90]),
    "1742-6": (["ALT"], ["ALT"], [40]),
}
# items other patients have that some patients lack (value questions -> no-data)
NEVER_ITEMS = {"2857-1": (["PSA"], ["PSA"]), "10230-1": (["EF", "ejection fraction"], ["ejection fraction"]),
               "4548-4": (["HbA1c"], ["A1c"]), "33914-3": (["eGFR"], ["eGFR"]), "1742-6": (["ALT"], ["ALT"])}
# items nobody in the set has
ABSENT_ITEMS = [(["INR"], ["INR"]), (["TSH"], ["thyroid level (TSH)"]), (["Mg"], ["magnesium"]),
                (["HR", "heart rate"], ["pulse"]), (["SpO2"], ["oxygen level"])]

# drug key -> (ingredient substrings, pharmacist names, patient names)
DRUGS = {
    "simvastatin": (["simvastatin", "simvistatin"], ["simvastatin", "Zocor", "simvastatin"], ["simvastatin", "Zocor"]),
    "atorvastatin": (["atorvastatin"], ["atorvastatin", "Lipitor"], ["Lipitor"]),
    "hydrochlorothiazide": (["hydrochlorothiazide"], ["HCTZ", "hydrochlorothiazide"], ["hydrochlorothiazide"]),
    "furosemide": (["furosemide", "lasix"], ["furosemide", "Lasix"], ["Lasix"]),
    "clopidogrel": (["clopidogrel"], ["clopidogrel", "Plavix"], ["Plavix"]),
    "naproxen": (["naproxen"], ["naproxen"], ["naproxen"]),
    "ibuprofen": (["ibuprofen"], ["ibuprofen", "Motrin"], ["ibuprofen", "Advil"]),
    "meperidine": (["meperidine"], ["meperidine", "Demerol"], ["Demerol"]),
    "warfarin": (["warfarin"], ["warfarin", "Coumadin"], ["warfarin"]),
    "metoprolol": (["metoprolol"], ["metoprolol", "Toprol XL"], ["metoprolol"]),
    "digoxin": (["digoxin"], ["digoxin"], ["digoxin"]),
    "verapamil": (["verapamil"], ["verapamil"], ["verapamil"]),
    "amlodipine": (["amlodipine"], ["amlodipine", "Norvasc"], ["amlodipine"]),
    "captopril": (["captopril"], ["captopril"], ["captopril"]),
    "metformin": (["metformin"], ["metformin", "Glucophage"], ["metformin"]),
    "levothyroxine": (["levothyroxine"], ["levothyroxine", "Synthroid"], ["Synthroid"]),
    "nitroglycerin": (["nitroglycerin"], ["nitroglycerin", "NTG"], ["nitroglycerin spray"]),
    "sertraline": (["sertraline"], ["sertraline", "Zoloft"], ["Zoloft"]),
    "donepezil": (["donepezil"], ["donepezil", "Aricept"], ["Aricept"]),
    "galantamine": (["galantamine"], ["galantamine"], ["galantamine"]),
    "cefuroxime": (["cefuroxime"], ["cefuroxime", "Ceftin"], ["cefuroxime"]),
    "prednisone": (["prednisone"], ["prednisone"], ["prednisone"]),
    "penicillin": (["penicillin"], ["penicillin VK", "Pen VK"], ["penicillin"]),
    "alteplase": (["alteplase"], ["alteplase", "tPA"], ["alteplase"]),
    "epinephrine": (["epinephrine"], ["epinephrine", "EpiPen"], ["EpiPen"]),
}

# class -> (members, near words that make a "no" unsafe, pharmacist words, patient words)
CLASSES = {
    "statin": (["simvastatin", "simvistatin", "atorvastatin", "rosuvastatin", "pravastatin", "lovastatin"], [],
               ["statin", "HMG-CoA reductase inhibitor"], ["cholesterol pill", "statin"]),
    "ace": (["captopril", "lisinopril", "enalapril", "ramipril", "benazepril", "quinapril"], [],
            ["ACE inhibitor", "ACEi"], ["ACE inhibitor"]),
    "bb": (["metoprolol", "atenolol", "propranolol", "carvedilol", "bisoprolol"], [],
           ["beta blocker", "beta-blocker"], ["beta blocker"]),
    "nsaid": (["ibuprofen", "naproxen", "diclofenac", "meloxicam", "celecoxib"], ["aspirin"],
              ["NSAID"], ["anti-inflammatory painkiller (NSAID)"]),
    "opioid": (["oxycodone", "hydrocodone", "meperidine", "morphine", "fentanyl", "codeine", "tramadol"], [],
               ["opioid", "narcotic"], ["opioid painkiller", "narcotic pain medicine"]),
    "anticoag": (["warfarin", "heparin", "apixaban", "rivaroxaban", "dabigatran", "enoxaparin"],
                 ["clopidogrel", "aspirin", "alteplase"], ["anticoagulant", "anticoag"], ["blood thinner"]),
    "diuretic": (["hydrochlorothiazide", "furosemide", "lasix", "chlorthalidone", "spironolactone"], [],
                 ["diuretic", "thiazide or loop diuretic"], ["water pill"]),
}

# vaccine key -> (name substrings, pharmacist words, patient words)
VACCINES = {
    "flu": (["influenza"], ["influenza vaccine", "flu vaccine"], ["flu shot"]),
    "tetanus": (["td ", "td (", "tdap", "dtap"], ["Td/Tdap", "tetanus vaccine"], ["tetanus shot"]),
    "zoster": (["zoster"], ["zoster vaccine", "shingles vaccine"], ["shingles shot"]),
    "hpv": (["hpv"], ["HPV vaccine"], ["HPV shot"]),
    "pneumo": (["pneumococcal"], ["pneumococcal vaccine"], ["pneumonia shot"]),
    "hepb": (["hep b"], ["hepatitis B vaccine"], ["hepatitis B shot"]),
}

# condition key -> (name substrings, exclusion substrings for a safe "no", pharmacist words, patient words)
CONDITIONS = {
    "htn": (["hypertension"], ["hypertension"], ["HTN", "hypertension"], ["high blood pressure"]),
    "prediabetes": (["prediabetes"], ["diabet"], ["prediabetes"], ["prediabetes"]),
    "diabetes": (["diabetes"], ["diabet", "prediabetes", "metabolic syndrome"], ["diabetes", "DM"], ["diabetes"]),
    "anemia": (["anemia"], ["anemia"], ["anemia"], ["anemia"]),
    "hld": (["hyperlipidemia"], ["lipid", "hypertriglyceridemia", "cholesterol"], ["hyperlipidemia", "HLD"],
            ["high cholesterol (hyperlipidemia)"]),
    "sinusitis": (["sinusitis"], ["sinusitis"], ["sinusitis"], ["sinusitis"]),
    "bronchitis": (["bronchitis"], ["bronchitis"], ["acute bronchitis"], ["bronchitis"]),
    "strep": (["streptococcal sore throat"], ["pharyngitis", "sore throat"], ["strep pharyngitis"], ["strep throat"]),
    "ankle": (["sprain of ankle"], ["ankle"], ["ankle sprain"], ["sprained ankle"]),
    "osteoporosis": (["osteoporosis"], ["osteoporosis", "osteopenia"], ["osteoporosis"], ["osteoporosis"]),
    "afib": (["atrial fibrillation"], ["atrial fibrillation", "arrhythmia"], ["AFib", "atrial fibrillation"],
             ["atrial fibrillation"]),
    "chd": (["coronary heart disease"], ["coronary", "myocardial", "heart"], ["CAD", "coronary heart disease"],
            ["coronary heart disease"]),
    "asthma": (["asthma"], ["asthma"], ["asthma"], ["asthma"]),
    "obesity": (["obesity"], ["obesity"], ["obesity"], ["obesity"]),
}
