"""Clinical lexicon: expansions of shorthand, brands, classes and encounter words; data integrity; the codes
marked as Synthea's really occur in the shared Synthea samples."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from fhirqa.agent.lexicon import Expansion, Lexicon, LexiconError, normalize

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LEXICON_DIR = Path(__file__).resolve().parents[2] / "lexicon"


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon.load()


def terms(expansions: list[Expansion]) -> list[str]:
    return [e.term for e in expansions]


# --- expansions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "phrase", ["A1c", "a1c", "HbA1c", "HgbA1c", "Hgb A1c", "glycated hemoglobin", "A1C's"]
)
def test_a1c(lexicon: Lexicon, phrase: str) -> None:
    (expansion,) = lexicon.expand(phrase)
    assert expansion.term == "Hemoglobin A1c"
    assert "4548-4" in expansion.codes
    assert (expansion.source, expansion.view, expansion.system) == (
        "abbreviations",
        "observation",
        "http://loinc.org",
    )


@pytest.mark.parametrize(
    ("phrase", "term", "code"),
    [
        ("K", "Potassium", "2823-3"),
        ("K+", "Potassium", "6298-4"),
        ("potassium levels", "Potassium", "6298-4"),
        ("Na", "Sodium", "2947-0"),
        ("bicarb", "Carbon Dioxide", "20565-8"),
        ("BUN", "Urea Nitrogen", "6299-2"),
        ("creat", "Creatinine", "38483-4"),
        ("eGFR", "Estimated Glomerular Filtration Rate", "33914-3"),
        ("FSBG", "Glucose", "2339-0"),
        ("Hgb", "Hemoglobin", "718-7"),
        ("plts", "Platelets", "777-3"),
        ("T. bili", "Bilirubin total", "1975-2"),
        ("alk phos", "Alkaline phosphatase", "6768-6"),
        ("LDL-C", "Low Density Lipoprotein Cholesterol", "18262-6"),
        ("trop", "Troponin", "10839-9"),
        ("SBP", "Systolic Blood Pressure", "8480-6"),
        ("DBP", "Diastolic Blood Pressure", "8462-4"),
        ("O2 sat", "Oxygen saturation", "59408-5"),
        ("wt", "Body Weight", "29463-7"),
        ("BMI", "Body Mass Index", "39156-5"),
        ("pain score", "Pain severity", "72514-3"),
    ],
)
def test_lab_and_vital_shorthand(lexicon: Lexicon, phrase: str, term: str, code: str) -> None:
    expansions = lexicon.expand(phrase)
    assert terms(expansions) == [term]
    assert code in expansions[0].codes


def test_blood_pressure_panel_has_its_components(lexicon: Lexicon) -> None:
    (bp,) = lexicon.expand("BP")
    assert {"85354-9", "8480-6", "8462-4"} <= set(bp.codes)
    assert bp.detail["components"] == ["Systolic Blood Pressure", "Diastolic Blood Pressure"]


@pytest.mark.parametrize(
    ("brand", "generic"),
    [
        ("Lasix", "furosemide"),
        ("Coumadin", "warfarin"),
        ("Glucophage", "metformin"),
        ("Zocor", "simvastatin"),
        ("Lipitor", "atorvastatin"),
        ("Norvasc", "amlodipine"),
        ("Zestril", "lisinopril"),
        ("Prinivil", "lisinopril"),
        ("Tylenol", "acetaminophen"),
        ("Advil", "ibuprofen"),
        ("Motrin", "ibuprofen"),
        ("Vanc", "vancomycin"),
        ("Vancocin", "vancomycin"),
        ("Zosyn", "piperacillin/tazobactam"),
        ("Lantus", "insulin glargine"),
        ("Eliquis", "apixaban"),
        ("Xarelto", "rivaroxaban"),
        ("Plavix", "clopidogrel"),
        ("Synthroid", "levothyroxine"),
        ("Protonix", "pantoprazole"),
        ("Keflex", "cephalexin"),
        ("Augmentin", "amoxicillin/clavulanate"),
        ("ProAir", "albuterol"),
        ("Ventolin", "albuterol"),
        ("HCTZ", "hydrochlorothiazide"),
    ],
)
def test_brand_to_generic(lexicon: Lexicon, brand: str, generic: str) -> None:
    assert lexicon.drug_generic(brand) == generic
    assert lexicon.drug_generic(brand.upper()) == generic
    assert terms(lexicon.expand(brand)) == [generic]


@pytest.mark.parametrize(
    ("product", "generic"),
    [
        ("Lasix 40mg", "furosemide"),
        ("Simvistatin 10 MG", "simvastatin"),  # Synthea's own spelling
        ("Amoxicillin 250 MG / Clavulanate 125 MG Oral Tablet", "amoxicillin/clavulanate"),
        ("Acetaminophen 325 MG / oxyCODONE Hydrochloride 5 MG Oral Tablet", "oxycodone/acetaminophen"),
        ("24 HR metoprolol succinate 100 MG Extended Release Oral Tablet [Toprol]", "metoprolol"),
        ("Acetaminophen 325 MG Oral Tablet", "acetaminophen"),
    ],
)
def test_generic_of_record_product_names(lexicon: Lexicon, product: str, generic: str) -> None:
    assert lexicon.drug_generic(product) == generic


def test_unknown_names(lexicon: Lexicon) -> None:
    assert lexicon.drug_generic("unobtainium") is None
    assert lexicon.expand("unobtainium level") == []
    assert lexicon.expand("") == [] and lexicon.expand("?!") == []
    assert lexicon.class_members("not a class") == []
    assert lexicon.encounter_class("picnic") is None


@pytest.mark.parametrize(
    ("name", "member"),
    [
        ("statin", "atorvastatin"),
        ("statins", "simvastatin"),
        ("ACE inhibitors", "lisinopril"),
        ("beta-blocker", "metoprolol"),
        ("blood thinners", "warfarin"),
        ("anticoagulant", "apixaban"),
        ("insulin", "insulin glargine"),
        ("antibiotics", "vancomycin"),
        ("PPI", "pantoprazole"),
    ],
)
def test_drug_classes(lexicon: Lexicon, name: str, member: str) -> None:
    assert member in lexicon.class_members(name)
    expanded = lexicon.expand(name)
    assert member in terms(expanded)
    assert all(e.view == "medication" for e in expanded)


def test_class_members_carry_codes_and_classes_of_a_drug(lexicon: Lexicon) -> None:
    simvastatin = next(e for e in lexicon.expand("statins") if e.term == "simvastatin")
    assert simvastatin.source == "drug_class" and "316672" in simvastatin.codes
    assert "statin" in lexicon.drug_classes("Zocor")
    assert "penicillin class" in lexicon.drug_classes("Augmentin")


@pytest.mark.parametrize(
    ("phrase", "term", "code"),
    [
        ("HTN", "Hypertension", "38341003"),
        ("high blood pressure", "Hypertension", "59621000"),
        ("T2DM", "Diabetes mellitus type 2", "44054006"),
        ("CKD", "Chronic kidney disease", "709044004"),
        ("CHF", "Heart failure", "88805009"),
        ("CAD", "Coronary artery disease", "53741008"),
        ("COPD", "Chronic obstructive pulmonary disease", "13645005"),
        ("AFib", "Atrial fibrillation", "49436004"),
        ("MI", "Myocardial infarction", "22298006"),
        ("CVA", "Stroke", "230690007"),
        ("UTI", "Urinary tract infection", "68566005"),
        ("PNA", "Pneumonia", "233604007"),
        ("OSA", "Obstructive sleep apnea", "78275009"),
        ("GERD", "Gastroesophageal reflux disease", "235595009"),
        ("HLD", "Hyperlipidemia", "55822004"),
        ("hyperlipidemia", "Hyperlipidemia", "55822004"),
    ],
)
def test_condition_abbreviations(lexicon: Lexicon, phrase: str, term: str, code: str) -> None:
    expansions = [e for e in lexicon.expand(phrase) if e.source == "conditions"]
    assert terms(expansions) == [term]
    assert code in expansions[0].codes and expansions[0].view == "condition"


@pytest.mark.parametrize(
    ("phrase", "code"),
    [
        ("ER", "EMER"),
        ("ED visit", "EMER"),
        ("emergency room", "EMER"),
        ("inpatient", "IMP"),
        ("admission", "IMP"),
        ("hospitalizations", "IMP"),
        ("hospital stay", "IMP"),
        ("outpatient", "AMB"),
        ("clinic visit", "AMB"),
        ("office visit", "AMB"),
        ("ambulatory", "AMB"),
        ("wellness visit", "AMB"),
        ("telehealth", "VR"),
        ("virtual visit", "VR"),
        ("during the last admission", "IMP"),
        ("ER visits last year", "EMER"),
    ],
)
def test_encounter_classes(lexicon: Lexicon, phrase: str, code: str) -> None:
    assert lexicon.encounter_class(phrase) == code


def test_er_expands_to_the_emergency_class(lexicon: Lexicon) -> None:
    (er,) = lexicon.expand("ER")
    assert (er.term, er.codes, er.source, er.view) == ("emergency", ("EMER",), "encounters", "encounter")
    wellness = lexicon.expand("annual physical")[0]
    assert wellness.detail["class"] == "AMB" and "185349003" in wellness.detail["type_codes"]


def test_terms_inside_longer_phrases(lexicon: Lexicon) -> None:
    assert terms(lexicon.expand("latest A1c value")) == ["Hemoglobin A1c"]
    assert terms(lexicon.expand("What was the last K?")) == ["Potassium"]
    assert terms(lexicon.expand("hx of MI")) == ["Myocardial infarction"]
    assert terms(lexicon.expand("Is pt on coumadin?")) == ["warfarin"]
    assert terms(lexicon.expand("creatinine and BUN trend")) == ["Creatinine", "Urea Nitrogen"]
    # Short aliases that are also ordinary words only count inside a sentence when written as abbreviations.
    assert lexicon.expand("what is the pt's ca level") == []
    assert lexicon.expand("the pt was seen today") == []
    assert terms(lexicon.expand("pt")) == ["Prothrombin time"]  # a phrase of its own is read as given


def test_normalize() -> None:
    assert normalize("  HbA1c's  ") == "hba1c"
    assert normalize("K+") == "k"
    assert normalize("Statins") == "statin"
    assert normalize("Hemoglobin [Mass/\u200bvolume] in Blood") == "hemoglobin mass volume in blood"
    assert normalize("pip-tazo") == normalize("pip/tazo") == "pip tazo"


# --- data integrity ------------------------------------------------------------------------------------


def test_files_are_consistent(lexicon: Lexicon) -> None:
    data = lexicon.data
    generics = {d["generic"] for d in data["drugs"]["drugs"]}
    assert len(generics) == len(data["drugs"]["drugs"]) >= 80
    for group in data["drugs"]["classes"]:
        assert group["members"] and set(group["members"]) <= generics, group["name"]
    assert len(data["abbreviations"]["entries"]) >= 60
    assert len(data["conditions"]["entries"]) >= 40
    for entry in data["abbreviations"]["entries"] + data["conditions"]["entries"]:
        assert entry["term"] and entry["aliases"] and entry["codes"], entry
        for code in entry["codes"]:
            assert code["code"] and code["system"].startswith("http"), entry["term"]
    for name in ("abbreviations", "drugs", "conditions"):  # within a file an alias has one reading
        readings: dict[str, set[str]] = defaultdict(set)
        for key, expansions in lexicon._index.items():
            readings[key] |= {e.term for e in expansions if e.source == name}
        assert not {k: v for k, v in readings.items() if len(v) > 1}, name


def test_load_is_cached_and_errors_name_the_file(tmp_path: Path) -> None:
    assert Lexicon.load() is Lexicon.load(LEXICON_DIR)
    with pytest.raises(LexiconError, match="not found"):
        Lexicon.load(tmp_path)
    for path in LEXICON_DIR.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "drugs.json").write_text("{ broken")
    with pytest.raises(LexiconError, match=r"drugs\.json:1"):
        Lexicon.load(tmp_path)
    (tmp_path / "drugs.json").write_text(json.dumps({"drugs": [{"brands": []}], "classes": []}))
    with pytest.raises(LexiconError, match="malformed"):
        Lexicon.load(tmp_path / ".")


# --- against the shared Synthea data -------------------------------------------------------------------


def _synthea_codes() -> dict[str, dict[str, set[str]]]:
    """Codes (and their displays) by resource kind in synthea-r4 and synthea-bulk-10."""
    found: dict[str, dict[str, set[str]]] = {"observation": defaultdict(set), "condition": defaultdict(set),
                                             "medication": defaultdict(set)}  # fmt: skip

    def add(kind: str, concept: dict | None) -> None:
        for coding in (concept or {}).get("coding", []):
            found[kind][coding.get("code", "")].add(coding.get("display", "").replace("\u200b", ""))

    def visit(resource: dict) -> None:
        kind = resource.get("resourceType")
        if kind == "Observation":
            add("observation", resource.get("code"))
            for component in resource.get("component", []):
                add("observation", component.get("code"))
        elif kind == "Condition":
            add("condition", resource.get("code"))
        elif kind == "MedicationRequest":
            add("medication", resource.get("medicationCodeableConcept"))

    for path in sorted((SHARED / "synthea-r4").glob("*.json")):
        for entry in json.loads(path.read_bytes()).get("entry", []):
            visit(entry.get("resource", {}))
    for path in sorted((SHARED / "synthea-bulk-10").glob("*.ndjson")):
        if path.name.split(".")[0] in {"Observation", "Condition", "MedicationRequest"}:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    visit(json.loads(line))
    return found


@pytest.fixture(scope="module")
def synthea() -> dict[str, dict[str, set[str]]]:
    if not (SHARED / "synthea-r4").is_dir():
        pytest.skip(
            f"shared Synthea data absent at {SHARED / 'synthea-r4'} (CI and developer checkouts have it)"
        )
    return _synthea_codes()


def test_synthea_lab_and_vital_codes_occur_in_the_data(lexicon: Lexicon, synthea: dict) -> None:
    claimed = [
        (e["term"], c)
        for e in lexicon.data["abbreviations"]["entries"]
        for c in e["codes"]
        if c.get("synthea")
    ]
    assert len(claimed) >= 40
    for term, code in claimed:
        assert code["code"] in synthea["observation"], f"{term}: {code['code']} not in Synthea data"
        assert code["display"] in synthea["observation"][code["code"]], f"{term}: display {code['display']!r}"
    # The brief's examples, spelled as Synthea spells them.
    displays = {c["display"] for _, c in claimed}
    assert {"Hemoglobin A1c/Hemoglobin.total in Blood", "Body Weight", "Systolic Blood Pressure"} <= displays


def test_synthea_condition_and_drug_codes_occur_in_the_data(lexicon: Lexicon, synthea: dict) -> None:
    conditions = [
        (e["term"], c["code"])
        for e in lexicon.data["conditions"]["entries"]
        for c in e["codes"]
        if c.get("synthea")
    ]
    drugs = [
        (d["generic"], c["code"])
        for d in lexicon.data["drugs"]["drugs"]
        for c in d["codes"]
        if c.get("synthea")
    ]
    assert len(conditions) >= 40 and len(drugs) >= 60
    assert [(t, c) for t, c in conditions if c not in synthea["condition"]] == []
    assert [(t, c) for t, c in drugs if c not in synthea["medication"]] == []


def test_synthea_drug_names_resolve_to_their_generic(lexicon: Lexicon, synthea: dict) -> None:
    by_code = {c["code"]: d["generic"] for d in lexicon.data["drugs"]["drugs"] for c in d["codes"]}
    wrong = []
    for code, displays in synthea["medication"].items():
        for display in displays:
            generic = lexicon.drug_generic(display)
            if code in by_code and generic != by_code[code]:
                wrong.append((display, generic, by_code[code]))
    assert wrong == []


def test_pressors_are_the_vasopressor_class_not_a_misspelt_pressure(lexicon: Lexicon) -> None:
    # "pressors" is two edits from "pressure": without the class the typo tolerance read "any pressors?" as a BP.
    terms = {e.term for e in lexicon.expand("pressors")}
    assert {"norepinephrine", "vasopressin", "phenylephrine"} <= terms and "blood pressure" not in terms
