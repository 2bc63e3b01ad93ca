"""A wider clinical dictionary than the question-answering lexicon: names a note may use for labs, drugs,
diagnoses and procedures that the patient may not have. Recognising a name is what makes an absent item
checkable ("GGT 23" when no GGT was ever measured is an existence inconsistency, not silence).

Each entry is ``alias: search phrase`` ("" = search the alias itself). Words of the lexicon are not repeated.
Short or ambiguous spellings are left out rather than risk reading ordinary words as items.
"""

from __future__ import annotations

LABS: dict[str, str] = {
    "GGT": "gamma glutamyl transferase", "gamma-glutamyl transferase": "", "LDH": "lactate dehydrogenase",
    "lactate dehydrogenase": "", "ammonia": "", "NH3": "ammonia", "haptoglobin": "", "retic count": "reticulocytes",
    "reticulocyte count": "reticulocytes", "reticulocytes": "", "retic": "reticulocytes", "cortisol": "",
    "hCG": "choriogonadotropin", "beta-hCG": "choriogonadotropin", "b-hCG": "choriogonadotropin",
    "quantitative hCG": "choriogonadotropin", "amylase": "", "fibrinogen": "", "folate": "", "TIBC": "iron binding capacity",
    "transferrin saturation": "", "PTH": "parathyrin", "parathyroid hormone": "parathyrin", "anion gap": "",
    "osmolality": "", "pCO2": "carbon dioxide partial pressure", "pO2": "oxygen partial pressure", "base excess": "",
    "prealbumin": "", "CK-MB": "creatine kinase mb", "myoglobin": "", "hs-CRP": "c reactive protein",
    "free T3": "triiodothyronine", "T3": "triiodothyronine", "vitamin B12 level": "cobalamin", "B12 level": "cobalamin",
    "A/G ratio": "albumin globulin ratio", "GCS": "glasgow coma score", "MAP": "mean blood pressure",
    "FiO2": "inhaled oxygen concentration", "zinc": "", "copper": "", "lead level": "lead", "ceruloplasmin": "",
    "C3": "complement c3", "C4": "complement c4", "IgA": "", "IgG": "", "IgM": "", "IgE": "", "selenium": "",
    "vitamin B1": "thiamine level", "RDW-SD": "erythrocyte distribution width", "RDW-CV": "erythrocyte distribution width",
    "glycated Hb": "hemoglobin a1c", "glycosylated Hb": "hemoglobin a1c", "serum K": "potassium", "serum Na": "sodium",
    "serum Cl": "chloride", "total CO2": "carbon dioxide", "BUN level": "urea nitrogen",
}

DRUGS: tuple[str, ...] = (
    "nadolol", "bisoprolol", "nebivolol", "hydralazine", "clonidine", "isosorbide mononitrate", "isosorbide dinitrate",
    "doxazosin", "terazosin", "prazosin", "minoxidil", "eplerenone", "sacubitril/valsartan", "Entresto", "ranolazine",
    "glimepiride", "pioglitazone", "dapagliflozin", "canagliflozin", "liraglutide", "dulaglutide", "exenatide",
    "linagliptin", "saxagliptin", "cefdinir", "cefpodoxime", "cefepime", "ceftazidime", "meropenem", "ertapenem",
    "imipenem", "linezolid", "daptomycin", "gentamicin", "tobramycin", "amikacin", "clarithromycin", "erythromycin",
    "moxifloxacin", "fluconazole", "nystatin", "acyclovir", "valacyclovir", "oseltamivir", "Tamiflu", "hydroxyzine",
    "cyclobenzaprine", "Flexeril", "methocarbamol", "tizanidine", "baclofen", "oxybutynin", "tolterodine", "topiramate",
    "lamotrigine", "divalproex", "valproic acid", "oxcarbazepine", "lacosamide", "quetiapine", "olanzapine",
    "risperidone", "aripiprazole", "haloperidol", "lithium", "venlafaxine", "duloxetine", "mirtazapine",
    "amitriptyline", "nortriptyline", "buspirone", "zolpidem", "Ambien", "temazepam", "melatonin", "prochlorperazine",
    "promethazine", "metoclopramide", "Reglan", "docusate", "Colace", "senna", "polyethylene glycol", "MiraLAX",
    "bisacodyl", "lactulose", "loperamide", "sucralfate", "ranitidine", "simethicone", "magnesium oxide",
    "calcium carbonate", "cholecalciferol", "vitamin D3", "folic acid", "thiamine", "multivitamin", "colchicine",
    "febuxostat", "prednisolone", "naloxone", "Narcan", "buprenorphine", "methadone", "codeine", "lidocaine",
    "bupivacaine", "propofol", "midazolam", "ketamine", "dexmedetomidine", "norepinephrine", "Levophed", "vasopressin",
    "dopamine", "dobutamine", "phenylephrine", "nitroprusside", "esmolol", "adenosine", "fondaparinux", "argatroban",
    "tranexamic acid", "phytonadione", "vitamin K", "protamine", "sodium bicarbonate", "magnesium sulfate",
    "calcium gluconate", "sildenafil", "tadalafil", "guaifenesin", "benzonatate", "pseudoephedrine", "mometasone",
    "triamcinolone", "clobetasol", "mupirocin", "silver sulfadiazine", "bacitracin", "latanoprost", "timolol",
    "prasugrel", "Effient", "cilostazol", "ezetimibe", "Zetia", "fenofibrate", "gemfibrozil", "niacin", "ropinirole",
    "pramipexole", "carbidopa/levodopa", "Sinemet", "sumatriptan", "rizatriptan", "methylphenidate", "atomoxetine",
    "varenicline", "Chantix", "naltrexone", "acamprosate", "estradiol", "progesterone", "testosterone", "raloxifene",
    "denosumab", "zoledronic acid", "ibandronate", "risedronate", "methimazole", "propylthiouracil", "liothyronine",
    "desmopressin", "octreotide", "meclizine", "scopolamine", "glycopyrrolate", "bethanechol", "dicyclomine",
    "mesalamine", "sulfasalazine", "pregabalin", "tirzepatide", "evolocumab", "alirocumab", "solifenacin",
    "dutasteride", "insulin degludec", "azathioprine", "mycophenolate", "cyclosporine", "hydroxychloroquine",
    "Plaquenil", "adalimumab", "Humira", "etanercept", "infliximab", "rituximab", "pembrolizumab", "tamoxifen",
    "anastrozole", "letrozole", "capecitabine", "fluorouracil", "gemcitabine", "carboplatin", "cyclophosphamide",
    "doxorubicin", "vincristine", "filgrastim", "iron sucrose", "diclofenac", "etodolac", "nabumetone", "indomethacin",
    "tapentadol", "oxymorphone", "lisdexamfetamine", "escitalopram", "desvenlafaxine", "trazodone",
)

CONDITIONS: dict[str, str] = {
    "cellulitis": "", "BPH": "benign prostatic hyperplasia", "benign prostatic hyperplasia": "", "diverticulosis": "",
    "diverticulitis": "", "hypokalemia": "", "hyperkalemia": "", "hyponatremia": "", "hypernatremia": "",
    "hypoglycemia": "", "pancreatitis": "", "cholecystitis": "", "cholelithiasis": "", "gallstones": "cholelithiasis",
    "glaucoma": "", "cataract": "", "macular degeneration": "", "sciatica": "", "psoriasis": "", "eczema": "",
    "rosacea": "", "lupus": "", "SLE": "systemic lupus erythematosus", "sarcoidosis": "", "cirrhosis": "",
    "hepatitis": "", "fatty liver": "", "NAFLD": "fatty liver", "GI bleed": "gastrointestinal hemorrhage",
    "peptic ulcer": "", "IBS": "irritable bowel syndrome", "Crohn's disease": "", "ulcerative colitis": "",
    "celiac disease": "", "hemorrhoids": "", "bipolar disorder": "", "schizophrenia": "", "PTSD": "",
    "ADHD": "", "insomnia": "", "Parkinson's disease": "", "multiple sclerosis": "", "neuropathy": "", "vertigo": "",
    "syncope": "", "dehydration": "", "hyperthyroidism": "", "adrenal insufficiency": "", "nephrolithiasis": "",
    "kidney stones": "nephrolithiasis", "pyelonephritis": "", "prostatitis": "", "endometriosis": "", "PCOS": "",
    "PAD": "peripheral arterial disease", "peripheral artery disease": "", "aortic stenosis": "",
    "mitral regurgitation": "", "cardiomyopathy": "", "SVT": "supraventricular tachycardia", "bradycardia": "",
    "pericarditis": "", "endocarditis": "", "thrombocytopenia": "", "leukocytosis": "", "neutropenia": "",
    "lymphoma": "", "leukemia": "", "melanoma": "", "pneumothorax": "", "pleural effusion": "", "bronchiectasis": "",
    "abscess": "", "osteomyelitis": "", "back pain": "", "low back pain": "", "neck pain": "",
    "fibromyalgia": "", "carpal tunnel syndrome": "", "plantar fasciitis": "", "tendinitis": "", "bursitis": "",
    "malnutrition": "", "alcohol use disorder": "", "T1DM": "diabetes mellitus type 1", "Bell's palsy": "",
    "restless legs syndrome": "", "RLS": "restless legs syndrome", "thyroid disease": "thyroid", "kidney disease": "kidney",
    "arthritis": "", "iron deficiency": "", "borderline DM": "prediabetes", "impaired fasting glucose": "prediabetes",
}

PROCEDURES: dict[str, str] = {
    "EEG": "electroencephalogram", "EMG": "electromyography", "ultrasound": "", "renal ultrasound": "ultrasound",
    "renal US": "ultrasound", "abdominal ultrasound": "ultrasound", "CT head": "computed tomography",
    "head CT": "computed tomography", "CTA": "computed tomography", "CT abd/pelvis": "computed tomography",
    "MRI brain": "magnetic resonance", "bronchoscopy": "", "thoracentesis": "", "PICC placement": "catheter",
    "PICC": "catheter", "central line": "catheter", "arterial line": "catheter", "intubation": "", "intubated": "intubation",
    "mechanical ventilation": "", "cardiac catheterization": "", "heart cath": "cardiac catheterization",
    "stress test": "", "Holter": "", "ERCP": "", "biopsy": "", "Pap smear": "", "hysterectomy": "", "hernia repair": "",
    "vasectomy": "", "cataract surgery": "", "I&D": "incision and drainage", "incision and drainage": "",
    "debridement": "", "cast": "", "physical therapy": "", "occupational therapy": "", "Foley": "urinary catheter",
    "NG tube": "nasogastric tube", "pacemaker": "", "angiogram": "", "tonsillectomy": "", "hearing exam": "",
    "PET scan": "positron emission tomography", "PET": "positron emission tomography", "Doppler": "doppler",
    "nerve conduction study": "nerve conduction", "NCS": "nerve conduction", "cystoscopy": "", "skin biopsy": "biopsy",
    "mammogram": "mammography", "x-ray films": "x-ray", "films": "x-ray",
}

# Brand names → generic (the lexicon knows the commonest; these are more)
BRANDS: dict[str, str] = {
    "Farxiga": "dapagliflozin", "Invokana": "canagliflozin", "Trulicity": "dulaglutide", "Victoza": "liraglutide",
    "Byetta": "exenatide", "Mounjaro": "tirzepatide", "Livalo": "pitavastatin", "Tresiba": "insulin degludec", "Amaryl": "glimepiride",
    "Actos": "pioglitazone", "Tradjenta": "linagliptin", "Repatha": "evolocumab", "Praluent": "alirocumab",
    "Zetia": "ezetimibe", "Tricor": "fenofibrate", "Valtrex": "valacyclovir", "Zovirax": "acyclovir",
    "Diflucan": "fluconazole", "Omnicef": "cefdinir", "Cymbalta": "duloxetine", "Effexor": "venlafaxine",
    "Lyrica": "pregabalin", "Seroquel": "quetiapine", "Abilify": "aripiprazole", "Risperdal": "risperidone",
    "Zyprexa": "olanzapine", "Lamictal": "lamotrigine", "Depakote": "divalproex", "Topamax": "topiramate",
    "Adderall": "amphetamine", "Ritalin": "methylphenidate", "Suboxone": "buprenorphine", "Ambien": "zolpidem",
    "Viagra": "sildenafil", "Cialis": "tadalafil", "Symbicort": "budesonide/formoterol", "Imdur": "isosorbide mononitrate",
    "Ranexa": "ranolazine", "Entresto": "sacubitril/valsartan", "Uloric": "febuxostat", "Colcrys": "colchicine",
    "Carafate": "sucralfate", "Reglan": "metoclopramide", "Colace": "docusate", "MiraLAX": "polyethylene glycol",
    "Imodium": "loperamide", "Flexeril": "cyclobenzaprine", "Robaxin": "methocarbamol", "Zanaflex": "tizanidine",
    "Boniva": "ibandronate", "Prolia": "denosumab", "Evista": "raloxifene", "Premarin": "conjugated estrogens",
    "Estrace": "estradiol", "Detrol": "tolterodine", "Ditropan": "oxybutynin", "Vesicare": "solifenacin",
    "Avodart": "dutasteride", "Requip": "ropinirole", "Mirapex": "pramipexole", "Imitrex": "sumatriptan",
    "Maxalt": "rizatriptan", "Chantix": "varenicline", "Antabuse": "disulfiram", "Campral": "acamprosate",
    "Vivitrol": "naltrexone", "Tamiflu": "oseltamivir", "Narcan": "naloxone", "Plaquenil": "hydroxychloroquine",
    "Humira": "adalimumab", "Enbrel": "etanercept", "Remicade": "infliximab", "Sinemet": "carbidopa/levodopa",
    "Effient": "prasugrel", "Levophed": "norepinephrine", "Bactrim DS": "trimethoprim/sulfamethoxazole",
}
