"""Write the vendor-shaped FHIR R4 probe data under evals/vendor/data/ (seeded, deterministic).

Ten synthetic patients, each serialised in the style of one kind of EHR export (see README.md):

- ``epic``  (v01, v02): searchset Bundles, absolute ``Patient/id`` references, Observation codings with
  the local (urn:oid) code FIRST and LOINC second and no ``code.text``, ICD-10 before SNOMED on
  Conditions, MedicationRequest -> separate Medication resource (v01) or inline medicationCodeableConcept
  with a local coding first (v02); v01 doses with ``timing.repeat`` + ``doseQuantity``, v02 only
  ``timing.code`` (BID/TID/Q8H/QD) + doseQuantity.
- ``cerner`` (v03, v04): transaction Bundles (PUT Type/id), ``urn:uuid`` fullUrls and references, contained Medication
  (``#med-n``) with coding display only, ``effectivePeriod`` on Observations, ``valueString`` results
  (">60", "Negative"), ``valueQuantity`` with ``comparator``, text-only reference ranges; v04 gives its
  prescriptions only a free-text ``dosageInstruction.text``.
- ``hapi`` (v05, v06, v07): collection Bundles, relative references, Conditions with ``onsetPeriod`` /
  ``onsetAge`` / only ``recordedDate``, ``clinicalStatus`` with a local coding before the HL7 one,
  ``abatementString``, ``valueCodeableConcept`` results, CBC panels through ``hasMember``, BP components
  with ``dataAbsentReason``, Patients with a ``usual`` name before the ``official`` one, ``deceasedBoolean``,
  Immunizations with ``occurrenceString``.
- ``mimic`` (v08, v09, v10): one NDJSON file per resource type, Encounter classes ACUTE/EMER/OBSENC/VR/AMB
  with a ``period`` holding only ``start``, MedicationAdministration with ``effectivePeriod``,
  ``dosage.dose`` and ``dosage.rateQuantity``, MedicationRequest -> Medication resource.

Every random choice comes from an RNG seeded by a string. Run: ``python evals/vendor/build_vendor.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

LOINC = "http://loinc.org"
SCT = "http://snomed.info/sct"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"
RXN = "http://www.nlm.nih.gov/research/umls/rxnorm"
CVX = "http://hl7.org/fhir/sid/cvx"
ACT = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
OBSCAT = "http://terminology.hl7.org/CodeSystem/observation-category"
CLIN = "http://terminology.hl7.org/CodeSystem/condition-clinical"
VER = "http://terminology.hl7.org/CodeSystem/condition-ver-status"
AICLIN = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
UCUM = "http://unitsofmeasure.org"
EPIC_OBS = "urn:oid:1.2.840.114350.1.13.0.1.7.5.737384.14"
EPIC_MED = "urn:oid:1.2.840.114350.1.13.0.1.7.2.698288"
CERNER_OBS = "https://fhir.cerner.com/ec2458f2-1e24-41c8-b71b-0e701af7583d/codeSet/72"
LOCAL_CLIN = "urn:oid:1.2.840.114350.1.13.0.1.7.4.698084.10001"
DAR = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
TIMING = "http://terminology.hl7.org/CodeSystem/v3-GTSAbbreviation"

# key: (loinc, loinc display, unit, low, high, decimals, category, epic local display, cerner local display)
LABS = {
    "potassium": ("2823-3", "Potassium [Moles/volume] in Serum or Plasma", "mmol/L", 3.3, 5.6, 1, "laboratory",
                  "POTASSIUM", "Potassium Lvl"),
    "creatinine": ("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", 0.6, 2.4, 2, "laboratory",
                   "CREATININE", "Creatinine Lvl"),
    "hemoglobin": ("718-7", "Hemoglobin [Mass/volume] in Blood", "g/dL", 8.5, 16.0, 1, "laboratory",
                   "HEMOGLOBIN", "Hgb"),
    "glucose": ("2345-7", "Glucose [Mass/volume] in Serum or Plasma", "mg/dL", 70, 260, 0, "laboratory",
                "GLUCOSE", "Glucose Lvl"),
    "A1c": ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 5.2, 10.8, 1, "laboratory",
            "HEMOGLOBIN A1C", "Hgb A1c"),
    "sodium": ("2951-2", "Sodium [Moles/volume] in Serum or Plasma", "mmol/L", 130, 147, 0, "laboratory",
               "SODIUM", "Sodium Lvl"),
    "platelets": ("777-3", "Platelets [#/volume] in Blood by Automated count", "10*3/uL", 110, 430, 0,
                  "laboratory", "PLATELET COUNT", "Platelet"),
    "WBC": ("6690-2", "Leukocytes [#/volume] in Blood by Automated count", "10*3/uL", 3.2, 14.5, 1, "laboratory",
            "WBC", "WBC"),
    "weight": ("29463-7", "Body weight", "kg", 52, 112, 1, "vital-signs", "WEIGHT/SCALE", "Weight Measured"),
    "heart rate": ("8867-4", "Heart rate", "/min", 52, 118, 0, "vital-signs", "PULSE", "Apical Heart Rate"),
}
BP = ("85354-9", "Blood pressure panel with all children optional")
SBP = ("8480-6", "Systolic blood pressure")
DBP = ("8462-4", "Diastolic blood pressure")
CBC = ("58410-2", "CBC panel - Blood by Automated count")
EGFR = ("33914-3", "Glomerular filtration rate/1.73 sq M.predicted [Volume Rate/Area] in Serum or Plasma by "
        "Creatinine-based formula (MDRD)")
COVID = ("94500-6", "SARS-CoV-2 (COVID-19) RNA [Presence] in Respiratory specimen by NAA with probe detection")
UPROT = ("20454-5", "Protein [Presence] in Urine by Test strip")

# key: (snomed, snomed display, icd10, icd10 display, chronic)
CONDS = {
    "hypertension": ("59621000", "Essential hypertension", "I10", "Essential (primary) hypertension", True),
    "diabetes": ("44054006", "Type 2 diabetes mellitus", "E11.9", "Type 2 diabetes mellitus without complications",
                 True),
    "hyperlipidemia": ("55822004", "Hyperlipidemia", "E78.5", "Hyperlipidemia, unspecified", True),
    "ckd": ("433144002", "Chronic kidney disease stage 3", "N18.30", "Chronic kidney disease, stage 3 unspecified",
            True),
    "afib": ("49436004", "Atrial fibrillation", "I48.91", "Unspecified atrial fibrillation", True),
    "asthma": ("195967001", "Asthma", "J45.909", "Unspecified asthma, uncomplicated", True),
    "hypothyroidism": ("40930008", "Hypothyroidism", "E03.9", "Hypothyroidism, unspecified", True),
    "gout": ("90560007", "Gout", "M10.9", "Gout, unspecified", True),
    "pneumonia": ("385093006", "Community acquired pneumonia", "J18.9", "Pneumonia, unspecified organism", False),
    "uti": ("68566005", "Urinary tract infection", "N39.0", "Urinary tract infection, site not specified", False),
    "bronchitis": ("10509002", "Acute bronchitis", "J20.9", "Acute bronchitis, unspecified", False),
    "cellulitis": ("128045006", "Cellulitis", "L03.90", "Cellulitis, unspecified", False),
}

# key: (rxnorm, rxnorm display, epic-style text, dose value, dose unit, per-day options)
DRUGS = {
    "metformin": ("860975", "metformin hydrochloride 500 MG Oral Tablet", "metFORMIN (GLUCOPHAGE) 500 MG tablet",
                  500, "mg"),
    "lisinopril": ("314076", "lisinopril 10 MG Oral Tablet", "lisinopril (PRINIVIL,ZESTRIL) 10 MG tablet", 10, "mg"),
    "atorvastatin": ("617311", "atorvastatin 40 MG Oral Tablet", "atorvastatin (LIPITOR) 40 MG tablet", 40, "mg"),
    "amlodipine": ("197361", "amlodipine 5 MG Oral Tablet", "amLODIPine (NORVASC) 5 MG tablet", 5, "mg"),
    "furosemide": ("313988", "furosemide 40 MG Oral Tablet", "furosemide (LASIX) 40 MG tablet", 40, "mg"),
    "levothyroxine": ("966222", "levothyroxine sodium 0.05 MG Oral Tablet",
                      "levothyroxine (SYNTHROID) 50 MCG tablet", 50, "ug"),
    "apixaban": ("1364445", "apixaban 5 MG Oral Tablet", "apixaban (ELIQUIS) 5 MG tablet", 5, "mg"),
    "allopurinol": ("197319", "allopurinol 100 MG Oral Tablet", "allopurinol (ZYLOPRIM) 100 MG tablet", 100, "mg"),
    "albuterol": ("745679", "albuterol 0.09 MG/ACTUAT Metered Dose Inhaler",
                  "albuterol (PROVENTIL HFA) 90 mcg/actuation inhaler", 2, "puff"),
    "gabapentin": ("310431", "gabapentin 300 MG Oral Capsule", "gabapentin (NEURONTIN) 300 MG capsule", 300, "mg"),
}
MAR_DRUGS = {
    "vancomycin": ("1807513", "vancomycin 1000 MG Injection", 1, "g", (250, "mL/h")),
    "heparin": ("1361615", "heparin sodium, porcine 5000 UNT/ML Injectable Solution", 5000, "[iU]", None),
    "ceftriaxone": ("1665021", "ceftriaxone 1000 MG Injection", 1000, "mg", (100, "mL/h")),
}
# key: (cvx, display)
VACCINES = {
    "flu": ("158", "Influenza, injectable, quadrivalent, contains preservative"),
    "covid": ("208", "SARS-COV-2 (COVID-19) vaccine, mRNA, spike protein, LNP, preservative free, 30 mcg/0.3mL dose"),
    "tdap": ("115", "Tdap"),
    "pneumo": ("33", "pneumococcal polysaccharide vaccine, 23 valent"),
    "hepb": ("43", "hepatitis B vaccine, adult dosage"),
    "zoster": ("187", "zoster vaccine recombinant"),
}
PROCS = {
    "ecg": ("29303009", "Electrocardiographic procedure"),
    "colonoscopy": ("73761001", "Colonoscopy"),
    "cxr": ("399208008", "Plain chest X-ray"),
    "echo": ("40701008", "Echocardiography"),
}
ALLERGIES = {
    "penicillin": ("7980", RXN, "Penicillin G", ("247472004", "Hives")),
    "sulfa": ("10831", RXN, "sulfamethoxazole", ("271807003", "Skin rash")),
    "peanut": ("256349002", SCT, "Peanut (substance)", ("39579001", "Anaphylaxis")),
    "latex": ("111088007", SCT, "Latex (substance)", ("40275004", "Contact dermatitis")),
}

# The ten patients. style decides the serialisation; the rest the clinical content.
PATIENTS = [
    dict(id="v01", style="epic", given=["Dolores", "Ann"], family="Whitfield", sex="female", birth="1951-04-17",
         labs=["potassium", "creatinine", "glucose", "A1c"], vitals=["weight"], bp=True,
         conds=["hypertension", "diabetes", "ckd", "bronchitis"], drugs=["metformin", "lisinopril", "furosemide"],
         vaccines=["flu", "flu", "covid", "pneumo"], procs=["ecg"], allergy="penicillin",
         classes=["AMB", "AMB", "AMB", "EMER", "IMP", "AMB", "EMER", "AMB", "AMB"], start="2020-02-10"),
    dict(id="v02", style="epic", given=["Marcus"], family="Okafor", sex="male", birth="1966-09-02",
         labs=["potassium", "sodium", "hemoglobin", "creatinine"], vitals=["weight", "heart rate"], bp=True,
         conds=["afib", "hyperlipidemia", "gout", "pneumonia"], drugs=["apixaban", "atorvastatin", "allopurinol",
                                                                      "amlodipine"],
         vaccines=["flu", "tdap", "zoster"], procs=["echo", "ecg"], allergy="sulfa",
         classes=["AMB", "EMER", "AMB", "AMB", "IMP", "AMB", "VR", "AMB"], start="2019-11-04"),
    dict(id="v03", style="cerner", given=["Rosalind"], family="Teague", sex="female", birth="1944-12-09",
         labs=["creatinine", "hemoglobin", "potassium", "platelets"], vitals=["weight"], bp=True, egfr=True,
         conds=["ckd", "hypertension", "uti", "hypothyroidism"], drugs=["amlodipine", "levothyroxine", "furosemide"],
         vaccines=["flu", "covid", "covid"], procs=["cxr"], allergy="latex", mar=["ceftriaxone"],
         classes=["AMB", "EMER", "IMP", "AMB", "AMB", "OBSENC", "AMB", "EMER", "AMB"], start="2020-06-15"),
    dict(id="v04", style="cerner", given=["Tobias"], family="Lindqvist", sex="male", birth="1978-03-21",
         labs=["glucose", "A1c", "sodium", "WBC"], vitals=["weight", "heart rate"], bp=True, egfr=True,
         conds=["diabetes", "asthma", "cellulitis"], drugs=["metformin", "albuterol", "gabapentin"],
         vaccines=["flu", "tdap", "hepb"], procs=["colonoscopy"], allergy="peanut",
         classes=["AMB", "AMB", "EMER", "AMB", "AMB", "EMER", "AMB"], start="2021-01-11"),
    dict(id="v05", style="hapi", given=["Priya"], family="Raman", sex="female", birth="1987-07-30",
         labs=["hemoglobin", "WBC", "platelets", "glucose"], vitals=["weight"], bp=True, cbc=True,
         conds=["asthma", "hypothyroidism", "bronchitis", "uti"], drugs=["albuterol", "levothyroxine"],
         vaccines=["flu", "flu", "covid", "tdap"], procs=["cxr"], allergy="penicillin",
         classes=["AMB", "AMB", "EMER", "AMB", "AMB", "AMB", "VR"], start="2020-09-08"),
    dict(id="v06", style="hapi", given=["Harold", "James"], family="Brennan", sex="male", birth="1949-01-25",
         labs=["creatinine", "potassium", "hemoglobin", "WBC", "platelets"], vitals=["weight", "heart rate"], bp=True,
         cbc=True, qual=True,
         conds=["hypertension", "hyperlipidemia", "ckd", "pneumonia", "gout"],
         drugs=["lisinopril", "atorvastatin", "allopurinol", "furosemide"],
         vaccines=["flu", "pneumo", "covid", "zoster"], procs=["ecg", "echo"], allergy=None,
         classes=["AMB", "EMER", "IMP", "AMB", "AMB", "EMER", "AMB", "AMB", "AMB"], start="2019-08-19"),
    dict(id="v07", style="hapi", given=["Eleanor"], family="Vasquez", sex="female", birth="1939-05-06",
         usual="Nora", deceased_bool=True,
         labs=["sodium", "potassium", "glucose"], vitals=["weight"], bp=True, qual=True,
         conds=["afib", "hypertension", "cellulitis"], drugs=["apixaban", "amlodipine"],
         vaccines=["flu", "pneumo"], procs=["ecg"], allergy="sulfa",
         classes=["AMB", "AMB", "EMER", "IMP", "AMB", "AMB"], start="2020-03-02"),
    dict(id="v08", style="mimic", given=["Walter"], family="Dunmore", sex="male", birth="1958-10-14",
         labs=["creatinine", "potassium", "sodium", "hemoglobin", "WBC"], vitals=["heart rate"], bp=True,
         conds=["pneumonia", "diabetes", "hypertension"], drugs=["metformin", "lisinopril", "atorvastatin"],
         vaccines=["flu", "covid"], procs=["cxr", "ecg"], allergy=None, mar=["vancomycin", "heparin"],
         classes=["EMER", "ACUTE", "AMB", "OBSENC", "EMER", "ACUTE", "AMB", "VR"], start="2021-03-01"),
    dict(id="v09", style="mimic", given=["Agnes"], family="Koval", sex="female", birth="1947-02-11",
         deceased_time="auto",
         labs=["creatinine", "hemoglobin", "platelets", "glucose"], vitals=["weight"], bp=False,
         conds=["ckd", "afib", "uti", "hyperlipidemia"], drugs=["apixaban", "furosemide", "atorvastatin"],
         vaccines=["flu", "flu", "pneumo"], procs=["echo"], allergy="penicillin", mar=["ceftriaxone", "heparin"],
         classes=["AMB", "EMER", "ACUTE", "AMB", "EMER", "ACUTE", "OBSENC"], start="2021-05-17"),
    dict(id="v10", style="mimic", given=["Samuel"], family="Achebe", sex="male", birth="1972-06-08",
         labs=["glucose", "A1c", "potassium", "creatinine"], vitals=["weight", "heart rate"], bp=True,
         conds=["diabetes", "gout", "cellulitis", "hyperlipidemia"], drugs=["metformin", "allopurinol",
                                                                          "atorvastatin", "gabapentin"],
         vaccines=["flu", "tdap", "covid"], procs=["colonoscopy"], allergy="latex", mar=["vancomycin"],
         classes=["AMB", "EMER", "ACUTE", "AMB", "AMB", "VR", "AMB", "EMER"], start="2020-10-05"),
]

TZ = {"epic": timezone(timedelta(hours=-5)), "cerner": UTC, "hapi": timezone(timedelta(hours=-7)), "mimic": UTC}


def rng(*keys: str) -> random.Random:
    return random.Random(hashlib.sha256("|".join(keys).encode()).hexdigest())  # noqa: S311 (not crypto)


def iso(t: datetime, style: str) -> str:
    return t.astimezone(TZ[style]).isoformat(timespec="seconds").replace("+00:00", "Z")


def uid(*keys: str) -> str:
    return str(uuid.UUID(hashlib.sha256("|".join(keys).encode()).hexdigest()[:32]))


def cc(codings: list[tuple[str, str, str]], text: str | None = None) -> dict:
    out: dict = {"coding": [{"system": s, "code": c, "display": d} for s, c, d in codings]}
    if text:
        out["text"] = text
    return out


def quantity(value: float, unit: str, comparator: str | None = None) -> dict:
    q = {"value": value, "unit": unit, "system": UCUM, "code": unit}
    if comparator:
        q = {"value": value, "comparator": comparator, "unit": unit, "system": UCUM, "code": unit}
    return q


class Builder:
    """Builds one patient's resources (references written as 'Type/id'; the writer rewrites them)."""

    def __init__(self, spec: dict) -> None:
        self.s = spec
        self.pid = spec["id"]
        self.style = spec["style"]
        self.r = rng("vendor", self.pid)
        self.res: list[dict] = []
        self.n = 0

    def new_id(self, kind: str) -> str:
        self.n += 1
        if self.style == "mimic":
            return uid("vendor", self.pid, kind, str(self.n))
        return f"{self.pid}-{kind.lower()[:4]}-{self.n:03d}"

    def add(self, res: dict) -> dict:
        self.res.append(res)
        return res

    def subj(self) -> dict:
        return {"reference": f"Patient/{self.pid}"}

    # ---------------------------------------------------------------- patient
    def patient(self) -> None:
        s = self.s
        names = [{"use": "official", "family": s["family"], "given": s["given"]}]
        if s.get("usual"):
            names.insert(0, {"use": "usual", "given": [s["usual"]], "family": s["family"]})
        if self.style == "hapi" and s["sex"] == "female" and not s.get("usual"):
            names.append({"use": "maiden", "family": "Castellanos", "given": s["given"][:1]})
        p = {"resourceType": "Patient", "id": self.pid,
             "identifier": [{"type": cc([("http://terminology.hl7.org/CodeSystem/v2-0203", "MR",
                                         "Medical record number")]),
                             "system": f"urn:oid:1.2.3.4.{self.style}", "value": f"MRN{self.pid.upper()}77"}],
             "name": names, "gender": s["sex"], "birthDate": s["birth"]}
        if s.get("deceased_bool"):
            p["deceasedBoolean"] = True
        elif s.get("deceased_time"):
            p["deceasedDateTime"] = "auto"  # set in build(): 40 days after the last encounter
        elif self.style in ("epic", "hapi"):
            p["deceasedBoolean"] = False
        self.add(p)

    # ---------------------------------------------------------------- encounters
    def encounters(self) -> list[tuple[str, datetime, str]]:
        r = self.r
        t = datetime.fromisoformat(self.s["start"] + "T00:00:00+00:00")
        out = []
        for i, cls in enumerate(self.s["classes"]):
            t = t + timedelta(days=r.randint(45, 140))
            hour = r.choice([13, 14, 15, 16, 17, 18, 19]) if self.style in ("epic", "hapi") else r.randint(8, 17)
            start = t.replace(hour=hour, minute=r.choice([0, 10, 20, 30, 40, 50]))
            eid = self.new_id("Encounter")
            period: dict = {"start": iso(start, self.style)}
            long = cls in ("IMP", "ACUTE", "OBSENC")
            if not (self.style == "mimic" and i % 2 == 1):
                period["end"] = iso(start + (timedelta(days=r.randint(2, 5)) if long else timedelta(minutes=45)),
                                    self.style)
            disp = {"AMB": "ambulatory", "EMER": "emergency", "IMP": "inpatient encounter",
                    "ACUTE": "inpatient acute", "OBSENC": "observation encounter", "VR": "virtual"}[cls]
            enc = {"resourceType": "Encounter", "id": eid, "status": "finished",
                   "class": {"system": ACT, "code": cls, "display": disp},
                   "subject": self.subj(), "period": period}
            if self.style == "epic":
                enc["type"] = [cc([("urn:oid:1.2.840.114350.1.13.0.1.7.10.698084.30", "101", "Office Visit")],
                                  "Office Visit")]
            self.add(enc)
            out.append((eid, start, cls))
        return out

    # ---------------------------------------------------------------- observations
    def obs_code(self, key: str) -> dict:
        loinc, disp = LABS[key][0], LABS[key][1]
        if self.style == "epic":
            return cc([(EPIC_OBS, str(1000 + list(LABS).index(key) * 7), LABS[key][7]), (LOINC, loinc, disp)])
        if self.style == "cerner":
            return cc([(CERNER_OBS, str(2700600 + list(LABS).index(key) * 11), LABS[key][8]), (LOINC, loinc, disp)],
                      LABS[key][8])
        return cc([(LOINC, loinc, disp)], disp if self.style == "mimic" else None)

    def when(self, obs: dict, t: datetime) -> None:
        if self.style == "cerner" or (self.style == "hapi" and self.r.random() < 0.5):
            obs["effectivePeriod"] = {"start": iso(t, self.style), "end": iso(t + timedelta(minutes=20), self.style)}
        else:
            obs["effectiveDateTime"] = iso(t, self.style)
        obs["issued"] = (t + timedelta(hours=3)).astimezone(UTC).isoformat(timespec="milliseconds").replace(
            "+00:00", "Z")

    def obs(self, code: dict, cat: str, t: datetime, enc: str) -> dict:
        o = {"resourceType": "Observation", "id": self.new_id("Observation"), "status": "final",
             "category": [cc([(OBSCAT, cat, "Laboratory" if cat == "laboratory" else "Vital Signs")])],
             "code": code, "subject": self.subj(), "encounter": {"reference": f"Encounter/{enc}"}}
        self.when(o, t)
        return o

    def labs(self, encs: list) -> None:
        r = self.r
        for key in self.s["labs"] + self.s["vitals"]:
            _, _, unit, lo, hi, dec, cat, _, _ = LABS[key]
            k = r.randint(3, min(6, len(encs)))
            chosen = sorted(r.sample(range(len(encs)), k))
            for ix in chosen:
                eid, start, _ = encs[ix]
                if self.s.get("cbc") and key in ("hemoglobin", "WBC", "platelets"):
                    continue
                o = self.obs(self.obs_code(key), cat, start + timedelta(minutes=15 + list(LABS).index(key)), eid)
                v = round(r.uniform(lo, hi), dec)
                o["valueQuantity"] = quantity(int(v) if dec == 0 else v, unit)
                if self.style == "cerner":
                    o["referenceRange"] = [{"text": f"{lo}-{hi} {unit}"}]
                elif cat == "laboratory":
                    o["referenceRange"] = [{"low": quantity(lo, unit), "high": quantity(hi, unit)}]
                self.add(o)
        if self.s.get("cbc"):  # CBC panel through hasMember
            for ix in sorted(r.sample(range(len(encs)), min(4, len(encs)))):
                eid, start, _ = encs[ix]
                t = start + timedelta(minutes=50)
                members = []
                for key in ("hemoglobin", "WBC", "platelets"):
                    if key not in self.s["labs"]:
                        continue
                    _, _, unit, lo, hi, dec, cat, _, _ = LABS[key]
                    o = self.obs(self.obs_code(key), cat, t, eid)
                    v = round(r.uniform(lo, hi), dec)
                    o["valueQuantity"] = quantity(int(v) if dec == 0 else v, unit)
                    self.add(o)
                    members.append({"reference": f"Observation/{o['id']}"})
                panel = self.obs(cc([(LOINC, CBC[0], CBC[1])]), "laboratory", t, eid)
                panel["hasMember"] = members
                self.add(panel)
        if self.s.get("bp"):
            for n, ix in enumerate(sorted(r.sample(range(len(encs)), min(5, len(encs))))):
                eid, start, _ = encs[ix]
                o = self.obs(cc([(LOINC, BP[0], BP[1])], None if self.style == "epic" else "Blood pressure"),
                             "vital-signs", start + timedelta(minutes=5), eid)
                comps = [{"code": cc([(LOINC, SBP[0], SBP[1])]), "valueQuantity": quantity(r.randint(104, 178),
                                                                                          "mm[Hg]")}]
                if self.style == "hapi" and n == 1:
                    comps.append({"code": cc([(LOINC, DBP[0], DBP[1])]),
                                  "dataAbsentReason": cc([(DAR, "not-performed", "Not Performed")])})
                else:
                    comps.append({"code": cc([(LOINC, DBP[0], DBP[1])]),
                                  "valueQuantity": quantity(r.randint(58, 102), "mm[Hg]")})
                o["component"] = comps
                self.add(o)
        if self.s.get("egfr"):  # numeric, comparator and string results
            for n, ix in enumerate(sorted(r.sample(range(len(encs)), 4))):
                eid, start, _ = encs[ix]
                o = self.obs(cc([(CERNER_OBS, "2700777", "eGFR"), (LOINC, EGFR[0], EGFR[1])], "eGFR"),
                             "laboratory", start + timedelta(minutes=40), eid)
                if n == 1:
                    o["valueString"] = ">60"
                elif n == 3:
                    o["valueQuantity"] = quantity(60, "mL/min/{1.73_m2}", ">")
                else:
                    o["valueQuantity"] = quantity(r.randint(28, 58), "mL/min/{1.73_m2}")
                o["referenceRange"] = [{"text": ">60 mL/min/1.73m2"}]
                self.add(o)
            eid, start, _ = encs[r.randrange(len(encs))]
            o = self.obs(cc([(CERNER_OBS, "2700888", "Urine Protein"), (LOINC, UPROT[0], UPROT[1])]),
                         "laboratory", start + timedelta(minutes=45), eid)
            o["valueString"] = "Negative"
            o["referenceRange"] = [{"text": "Negative"}]
            self.add(o)
        if self.s.get("qual"):
            for n, ix in enumerate(sorted(r.sample(range(len(encs)), 2))):
                eid, start, _ = encs[ix]
                o = self.obs(cc([(LOINC, COVID[0], COVID[1])]), "laboratory", start + timedelta(minutes=55), eid)
                pos = n == 0
                o["valueCodeableConcept"] = cc([(SCT, "10828004" if pos else "260385009",
                                                 "Positive" if pos else "Negative")],
                                               "Detected" if pos else "Not detected")
                self.add(o)

    # ---------------------------------------------------------------- conditions
    def conditions(self, encs: list) -> None:
        r = self.r
        for n, key in enumerate(self.s["conds"]):
            sct, sdisp, icd, idisp, chronic = CONDS[key]
            eid, start, _ = encs[r.randrange(len(encs) - 1)]
            codings = [(ICD10, icd, idisp), (SCT, sct, sdisp)] if self.style == "epic" else [(SCT, sct, sdisp),
                                                                                           (ICD10, icd, idisp)]
            c = {"resourceType": "Condition", "id": self.new_id("Condition"),
                 "category": [cc([("http://terminology.hl7.org/CodeSystem/condition-category",
                                   "problem-list-item" if chronic else "encounter-diagnosis",
                                   "Problem List Item" if chronic else "Encounter Diagnosis")])],
                 "code": cc(codings, sdisp if self.style in ("epic", "mimic") else None),
                 "subject": self.subj(), "encounter": {"reference": f"Encounter/{eid}"}}
            status = "active" if chronic else "resolved"
            if self.style == "hapi":
                c["clinicalStatus"] = cc([(LOCAL_CLIN, "A" if chronic else "R", "Active" if chronic else "Resolved"),
                                          (CLIN, status, status.capitalize())])
            else:
                c["clinicalStatus"] = cc([(CLIN, status, status.capitalize())])
            c["verificationStatus"] = cc([(VER, "confirmed", "Confirmed")])
            mode = n % 4 if self.style == "hapi" else (1 if self.style == "cerner" and n % 2 else 0)
            if mode == 0:
                c["onsetDateTime"] = iso(start, self.style)
            elif mode == 1:
                c["onsetPeriod"] = {"start": iso(start, self.style)}
            elif mode == 2 and chronic:
                age = start.year - int(self.s["birth"][:4]) - 6
                c["onsetAge"] = {"value": age, "unit": "years", "system": UCUM, "code": "a"}
            else:
                pass  # only recordedDate
            c["recordedDate"] = iso(start + timedelta(hours=1), self.style)
            if not chronic:
                if self.style == "hapi" and n % 2 == 1:
                    c["abatementString"] = "resolved after treatment"
                else:
                    c["abatementDateTime"] = iso(start + timedelta(days=r.randint(10, 30)), self.style)
            self.add(c)

    # ---------------------------------------------------------------- medications
    def dosage(self, key: str, n: int) -> list[dict]:
        r = self.r
        _, _, _, dv, du = DRUGS[key]
        kind = {"v01": "repeat", "v02": "code", "v03": "repeat", "v04": "text"}.get(self.pid, "repeat")
        if self.style in ("hapi", "mimic"):
            kind = ["repeat", "code", "text"][(n + len(key)) % 3] if self.style == "hapi" else "repeat"
        per_day = r.choice([1, 2, 3]) if key != "levothyroxine" else 1
        dose = {"doseAndRate": [{"type": cc([("http://terminology.hl7.org/CodeSystem/dose-rate-type", "ordered",
                                              "Ordered")]),
                                 "doseQuantity": {"value": dv, "unit": du, "system": UCUM, "code": du}}]}
        words = {1: "once daily", 2: "twice daily", 3: "three times daily"}[per_day]
        text = f"Take {dv} {du} by mouth {words}" if key != "albuterol" else f"Inhale {dv} puffs {words}"
        if kind == "repeat":
            if per_day == 3 and r.random() < 0.5:
                rep = {"frequency": 1, "period": 8, "periodUnit": "h"}
            else:
                rep = {"frequency": per_day, "period": 1, "periodUnit": "d"}
            return [{"text": text, "timing": {"repeat": rep}, **dose}]
        if kind == "code":
            code = {1: "QD", 2: "BID", 3: r.choice(["TID", "Q8H"])}[per_day]
            disp = {"QD": "daily", "BID": "twice a day", "TID": "three times a day", "Q8H": "every 8 hours"}[code]
            return [{"timing": {"code": cc([(TIMING, code, disp)], code)}, **dose}]
        return [{"text": text}]

    def medications(self, encs: list) -> None:
        r = self.r
        for key in self.s["drugs"]:
            rx, rdisp, etext, _, _ = DRUGS[key]
            k = r.randint(1, 3)
            idx = sorted(r.sample(range(len(encs)), k))
            stop_last = r.random() < 0.3
            med_id = None
            if self.style in ("mimic",) or self.pid == "v01":
                med_id = self.new_id("Medication")
                self.add({"resourceType": "Medication", "id": med_id,
                          "code": cc([(RXN, rx, rdisp)], etext if self.style == "epic" else rdisp)})
            for n, ix in enumerate(idx):
                eid, start, _ = encs[ix]
                last = n == len(idx) - 1
                status = ("stopped" if stop_last else "active") if last else "completed"
                mr = {"resourceType": "MedicationRequest", "id": self.new_id("MedicationRequest"),
                      "status": status, "intent": "order", "subject": self.subj(),
                      "encounter": {"reference": f"Encounter/{eid}"},
                      "authoredOn": iso(start + timedelta(minutes=30), self.style)}
                if med_id:
                    mr["medicationReference"] = {"reference": f"Medication/{med_id}"}
                elif self.style == "cerner":
                    mr["contained"] = [{"resourceType": "Medication", "id": f"med-{n}",
                                        "code": cc([(RXN, rx, rdisp)])}]
                    mr["medicationReference"] = {"reference": f"#med-{n}"}
                elif self.style == "epic":
                    mr["medicationCodeableConcept"] = cc([(EPIC_MED, str(10000 + len(key) * 37), etext.upper()),
                                                         (RXN, rx, rdisp)], etext)
                else:
                    mr["medicationCodeableConcept"] = cc([(RXN, rx, rdisp)])
                mr["dosageInstruction"] = self.dosage(key, n)
                mr["dispenseRequest"] = {"numberOfRepeatsAllowed": r.randint(0, 3),
                                         "quantity": {"value": 90, "unit": "tablet"}}
                self.add(mr)
        for key in self.s.get("mar", []):
            rx, rdisp, dv, du, rate = MAR_DRUGS[key]
            stays = [e for e in encs if e[2] in ("IMP", "ACUTE")]
            if not stays:
                continue
            for eid, start, _ in stays:
                mr = {"resourceType": "MedicationRequest", "id": self.new_id("MedicationRequest"),
                      "status": "completed", "intent": "order", "subject": self.subj(),
                      "encounter": {"reference": f"Encounter/{eid}"},
                      "authoredOn": iso(start + timedelta(hours=1), self.style),
                      "category": [cc([("http://terminology.hl7.org/CodeSystem/medicationrequest-category",
                                        "inpatient", "Inpatient")])]}
                every = 12 if key != "heparin" else 8
                if self.style == "mimic":
                    med_id = self.new_id("Medication")
                    self.add({"resourceType": "Medication", "id": med_id, "code": cc([(RXN, rx, rdisp)], rdisp)})
                    mr["medicationReference"] = {"reference": f"Medication/{med_id}"}
                else:
                    mr["contained"] = [{"resourceType": "Medication", "id": "inpt-med",
                                        "code": cc([(RXN, rx, rdisp)])}]
                    mr["medicationReference"] = {"reference": "#inpt-med"}
                mr["dosageInstruction"] = [{"timing": {"repeat": {"frequency": 1, "period": every, "periodUnit": "h"}},
                                            "doseAndRate": [{"doseQuantity": {"value": dv, "unit": du,
                                                                              "system": UCUM, "code": du}}]}]
                self.add(mr)
                t = start + timedelta(hours=2)
                for j in range(r.randint(4, 7)):
                    ma = {"resourceType": "MedicationAdministration", "id": self.new_id("MedicationAdministration"),
                          "status": "not-done" if j == 2 else "completed",
                          "subject": self.subj(), "context": {"reference": f"Encounter/{eid}"},
                          "request": {"reference": f"MedicationRequest/{mr['id']}"}}
                    if "contained" in mr:
                        ma["contained"] = [dict(mr["contained"][0])]
                        ma["medicationReference"] = {"reference": "#inpt-med"}
                    else:
                        ma["medicationReference"] = mr["medicationReference"]
                    if rate:
                        ma["effectivePeriod"] = {"start": iso(t, self.style),
                                                 "end": iso(t + timedelta(hours=1), self.style)}
                    else:
                        ma["effectiveDateTime"] = iso(t, self.style)
                    if j == 2:
                        ma["statusReason"] = [cc([(SCT, "182862001", "Drug not taken - dislike taste")],
                                                 "Patient refused")]
                    dosage: dict = {"route": cc([(SCT, "47625008", "Intravenous route")]),
                                    "dose": {"value": dv, "unit": du, "system": UCUM, "code": du}}
                    if rate:
                        dosage["rateQuantity"] = {"value": rate[0], "unit": rate[1], "system": UCUM, "code": rate[1]}
                    ma["dosage"] = dosage
                    self.add(ma)
                    t += timedelta(hours=every)

    # ---------------------------------------------------------------- others
    def others(self, encs: list) -> None:
        r = self.r
        for n, key in enumerate(self.s["vaccines"]):
            cvx, disp = VACCINES[key]
            eid, start, _ = encs[r.randrange(len(encs))]
            im = {"resourceType": "Immunization", "id": self.new_id("Immunization"), "status": "completed",
                  "vaccineCode": cc([(CVX, cvx, disp)], disp if self.style == "epic" else None),
                  "patient": self.subj()}
            if self.style == "hapi" and key in ("tdap", "pneumo", "zoster"):
                im["occurrenceString"] = "per patient report, several years ago"
                im["primarySource"] = False
            else:
                im["occurrenceDateTime"] = iso(start + timedelta(minutes=35 + n), self.style)
                im["encounter"] = {"reference": f"Encounter/{eid}"}
                im["primarySource"] = True
            self.add(im)
        for key in self.s["procs"]:
            code, disp = PROCS[key]
            eid, start, _ = encs[r.randrange(len(encs))]
            pr = {"resourceType": "Procedure", "id": self.new_id("Procedure"), "status": "completed",
                  "code": cc([(SCT, code, disp)], disp), "subject": self.subj(),
                  "encounter": {"reference": f"Encounter/{eid}"}}
            if self.style in ("cerner", "mimic"):
                pr["performedPeriod"] = {"start": iso(start + timedelta(minutes=20), self.style),
                                         "end": iso(start + timedelta(minutes=50), self.style)}
            else:
                pr["performedDateTime"] = iso(start + timedelta(minutes=20), self.style)
            self.add(pr)
        if self.s.get("allergy"):
            code, system, disp, (mcode, mdisp) = ALLERGIES[self.s["allergy"]]
            eid, start, _ = encs[0]
            self.add({"resourceType": "AllergyIntolerance", "id": self.new_id("AllergyIntolerance"),
                      "clinicalStatus": cc([(AICLIN, "active", "Active")]),
                      "verificationStatus": cc([("http://terminology.hl7.org/CodeSystem/allergyintolerance-verification",
                                                 "confirmed", "Confirmed")]),
                      "type": "allergy", "category": ["food" if system == SCT and code != "111088007" else
                                                      "environment" if code == "111088007" else "medication"],
                      "criticality": "high" if mcode == "39579001" else "low",
                      "code": cc([(system, code, disp)], disp), "patient": self.subj(),
                      "recordedDate": iso(start, self.style),
                      "reaction": [{"manifestation": [cc([(SCT, mcode, mdisp)])], "severity": "moderate"}]})

    def build(self) -> list[dict]:
        self.patient()
        encs = self.encounters()
        self.labs(encs)
        self.conditions(encs)
        self.medications(encs)
        self.others(encs)
        if self.res[0].get("deceasedDateTime") == "auto":
            death = (encs[-1][1] + timedelta(days=40)).replace(hour=6, minute=40)
            self.res[0]["deceasedDateTime"] = iso(death, self.style)
        return self.res


# -------------------------------------------------------------------- writers
def rewrite_refs(obj, fn):
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k == "reference" and isinstance(v, str) and not v.startswith("#"):
                out[k] = fn(v)
            else:
                out[k] = rewrite_refs(v, fn)
        return out
    if isinstance(obj, list):
        return [rewrite_refs(x, fn) for x in obj]
    return obj


def bundle(style: str, pid: str, resources: list[dict]) -> dict:
    base = {"epic": "https://fhir.example-epic.org/api/FHIR/R4",
            "hapi": "https://hapi.example.org/fhir"}.get(style)
    if style == "cerner":  # transaction, urn:uuid everywhere
        urn = {f"{x['resourceType']}/{x['id']}": f"urn:uuid:{uid('urn', pid, x['resourceType'], x['id'])}"
               for x in resources}
        entries = []
        for x in resources:
            y = rewrite_refs(x, lambda ref: urn.get(ref, ref))
            entries.append({"fullUrl": urn[f"{x['resourceType']}/{x['id']}"], "resource": y,
                            "request": {"method": "PUT", "url": f"{x['resourceType']}/{x['id']}"}})
        return {"resourceType": "Bundle", "id": f"tx-{pid}", "type": "transaction", "entry": entries}
    if style == "epic":
        entries = [{"fullUrl": f"{base}/{x['resourceType']}/{x['id']}", "resource": x,
                    "search": {"mode": "match"}} for x in resources]
        return {"resourceType": "Bundle", "id": f"search-{pid}", "type": "searchset", "total": len(entries),
                "link": [{"relation": "self", "url": f"{base}/Patient/{pid}/$everything"}], "entry": entries}
    entries = [{"fullUrl": f"{base}/{x['resourceType']}/{x['id']}", "resource": x} for x in resources]
    return {"resourceType": "Bundle", "id": f"coll-{pid}", "type": "collection",
            "timestamp": "2025-01-15T12:00:00Z", "entry": entries}


def main() -> None:
    if DATA.exists():
        shutil.rmtree(DATA)
    DATA.mkdir(parents=True)
    ndjson: dict[str, list[dict]] = {}
    for spec in PATIENTS:
        res = Builder(spec).build()
        if spec["style"] == "mimic":
            for x in res:
                ndjson.setdefault(x["resourceType"], []).append(x)
            continue
        name = f"{spec['id']}_{spec['style']}_{spec['family'].lower()}.json"
        (DATA / name).write_text(json.dumps(bundle(spec["style"], spec["id"], res), indent=1) + "\n")
    (DATA / "mimic_ndjson").mkdir()
    for rtype in sorted(ndjson):
        lines = [json.dumps(x, separators=(",", ":")) for x in ndjson[rtype]]
        (DATA / "mimic_ndjson" / f"{rtype}.ndjson").write_text("\n".join(lines) + "\n")
    n = sum(len(b) for b in ndjson.values())
    print(f"wrote {DATA.relative_to(HERE.parent.parent)} (ndjson resources: {n})")


if __name__ == "__main__":
    main()
