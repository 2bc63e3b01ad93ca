"""A condition coded in ICD-9-CM or ICD-10-CM is the lexicon's condition on the FHIR path too.

``lexicon/conditions.json`` gives each condition its ICD code families beside its SNOMED CT codes (``icd``): a prefix
holds the codes it begins, with or without the dot ("410" holds 410.71 and MIMIC's "41071"), "?" is any one character
("250.?0": type II diabetes), "A-B" every family between. A Condition a server coded in ICD only (no SNOMED coding)
answers "did she have an MI?" by its code, whatever its title says.
"""

from __future__ import annotations

import pytest

from fhirqa.agent.engine import ask
from fhirqa.agent.lexicon import IcdFamilies, Lexicon
from fhirqa.sources import FileSource
from fhirqa.store import ingest
from tests.builders import condition, observation, patient, transaction, write_json

ICD9 = "http://hl7.org/fhir/sid/icd-9-cm"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"


def families(term: str) -> IcdFamilies:
    (entry,) = [e for e in Lexicon.load().expand(term) if e.source == "conditions"]
    return entry.detail["icd"]


def test_a_family_holds_its_codes_with_or_without_the_dot():
    mi = families("myocardial infarction")
    assert mi.match("410.71") and mi.match("41071") and mi.match("I21.4") and mi.match("I214")
    assert not mi.match("412")  # old MI: another code
    assert not mi.match("410429000")  # a SNOMED CT id (cardiac arrest) that begins with 410 is no ICD code


def test_ranges_and_wildcards():
    htn = families("HTN")
    assert [c for c in ("4019", "40390", "405.01", "406", "I10", "I16.0", "I17") if htn.match(c)] == \
        ["4019", "40390", "405.01", "I10", "I16.0"]
    t2, t1 = families("type 2 diabetes"), families("type 1 diabetes")
    assert t2.match("25000") and t2.match("25062") and not t2.match("25001")
    assert t1.match("25001") and t1.match("25013") and not t1.match("25000")


def test_a_code_shaped_like_both_systems_matches_neither():
    # E888.1 (ICD-9, a fall) and E88.81 (ICD-10, metabolic syndrome) are both "E8881" without their dots
    assert IcdFamilies.system_of("E8881") is None
    assert not families("metabolic syndrome").match("E8881")
    assert families("metabolic syndrome").match("E88.81")


def test_every_family_in_the_lexicon_is_shaped_like_its_system():
    for entry in Lexicon.load().data["conditions"]["entries"]:
        for system, written in (entry.get("icd") or {}).items():
            assert IcdFamilies.of({system: written}).families  # ranges parse
            for family in written:
                for end in family.split("-"):  # as written, with its dot: "E88.81" can only be ICD-10
                    assert IcdFamilies.system_of(end.replace("?", "0")) == system, (entry["term"], family)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("icd")
    icd = lambda system, code, text: {"coding": [{"system": system, "code": code, "display": text}], "text": text}  # noqa: E731
    write_json(folder / "in" / "p1.json", transaction(
        patient("p1"),
        condition("mi", display="", code=icd(ICD9, "410.71", "Subendocardial infarction, initial episode of care"),
                  onsetDateTime="2024-03-02T10:00:00Z"),
        condition("aki", display="", code=icd(ICD10, "N17.9", "Acute kidney failure, unspecified"),
                  onsetDateTime="2024-03-03T10:00:00Z"),
        {"resourceType": "MedicationRequest", "id": "acei", "status": "active", "intent": "order",
         "subject": {"reference": "Patient/p1"}, "authoredOn": "2024-03-01T09:00:00Z",
         "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                                   "code": "29046", "display": "lisinopril"}], "text": "lisinopril"}},
        observation("k1", value=4.4, when="2024-03-01T08:00:00Z"),
        observation("k2", value=5.2, when="2024-03-04T08:00:00Z"),
    ))
    ingest([FileSource([folder / "in"])], folder / "db")
    return folder / "db"


def test_an_icd9_coded_condition_is_the_mi(store):
    answer = ask("did she have an MI?", patient_id="p1", now="2024-06-01T00:00:00Z", db=store)
    assert answer.answer == [True]
    assert "Condition/mi" in {e.ref for e in answer.evidence}


def test_an_icd10_coded_condition_is_the_aki(store):
    answer = ask("hx of AKI?", patient_id="p1", now="2024-06-01T00:00:00Z", db=store)
    assert answer.answer == [True]
    assert "Condition/aki" in {e.ref for e in answer.evidence}


def test_a_window_before_an_icd_coded_event(store):
    answer = ask("last K before the MI?", patient_id="p1", now="2024-06-01T00:00:00Z", db=store)
    assert answer.answer == [4.4]  # k1 (3/1) is before the MI's onset (3/2); k2 (3/4) after
    assert "Observation/k1" in {e.ref for e in answer.evidence}


def test_a_drug_code_shaped_like_an_icd9_code_is_no_diagnosis(store):
    # RxNorm 29046 (lisinopril) reads like ICD-9 290.46 (a dementia code): families are read on diagnoses only
    answer = ask("hx of dementia?", patient_id="p1", now="2024-06-01T00:00:00Z", db=store)
    assert answer.answer == [False]
    assert "MedicationRequest/acei" not in {e.ref for e in answer.evidence}
