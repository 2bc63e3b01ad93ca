"""General mechanisms behind the last error classes: one analyte recorded under two names, a brand of another salt,
lay and clinical names of the patient's diagnoses and procedures, a clock time held to a procedure's start."""

from __future__ import annotations

from typing import Any

import pytest

from fhirqa.consistency import PatientChecker
from fhirqa.consistency.timing import is_clock
from fhirqa.consistency.vocab import lay_aliases
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import observation, patient, transaction, write_json

VISIT = "2024-03-01T14:00:00Z"
SNOMED, RXNORM = "http://snomed.info/sct", "http://www.nlm.nih.gov/research/umls/rxnorm"


def _condition(cid: str, code: str, display: str, onset: str = "2020-05-01") -> dict[str, Any]:
    return {"resourceType": "Condition", "id": cid, "clinicalStatus": {"coding": [{"code": "active"}]},
            "code": {"coding": [{"system": SNOMED, "code": code, "display": display}], "text": display},
            "subject": {"reference": "Patient/p2"}, "onsetDateTime": onset}


def _med(mid: str, code: str, text: str, when: str = "2023-06-01T10:00:00Z") -> dict[str, Any]:
    return {"resourceType": "MedicationRequest", "id": mid, "status": "active", "intent": "order",
            "medicationCodeableConcept": {"coding": [{"system": RXNORM, "code": code, "display": text}], "text": text},
            "subject": {"reference": "Patient/p2"}, "authoredOn": when}


def _resources() -> list[dict[str, Any]]:
    return [
        patient("p2"),
        {"resourceType": "Encounter", "id": "e2", "status": "finished", "class": {"code": "EMER"},
         "subject": {"reference": "Patient/p2"}, "period": {"start": "2024-03-01T13:00:00Z", "end": VISIT}},
        # Synthea's blood count twice: one LOINC code, two names, slightly different values
        observation("rbc1", "p2", "789-8", "Erythrocytes [#/volume] in Blood by Automated count", 4.61, "10*6/uL",
                    "2024-03-01T13:20:00Z"),
        observation("rbc2", "p2", "789-8", "RBC Auto (Bld) [#/Vol]", 5.08, "10*6/uL", "2024-03-01T13:20:00Z"),
        # two codes, one analyte by name
        observation("hct1", "p2", "4544-3", "Hematocrit [Volume Fraction] of Blood by Automated count", 41.2, "%",
                    "2024-03-01T13:20:00Z"),
        observation("hct2", "p2", "20570-8", "Hematocrit [Volume Fraction] of Blood", 43.9, "%", "2024-03-01T13:20:00Z"),
        observation("a1c", "p2", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.1, "%", "2024-03-01T13:20:00Z"),
        observation("hgb", "p2", "718-7", "Hemoglobin [Mass/volume] in Blood", 14.2, "g/dL", "2024-03-01T13:20:00Z"),
        _med("m1", "866412", "24 HR metoprolol succinate 100 MG Extended Release Oral Tablet [Toprol]"),
        _med("m2", "313782", "Acetaminophen 325 MG Oral Tablet"),
        _condition("c1", "65966004", "Fracture of forearm"),
        _condition("c2", "1119298005", "Recurrent rectal polyp"),
        _condition("c3", "241929008", "Acute allergic reaction"),
        _condition("c4", "399211009", "History of myocardial infarction (situation)"),
        _condition("c5", "449868002", "Injury of tendon of the rotator cuff of shoulder"),
        {"resourceType": "Procedure", "id": "pr1", "status": "completed",
         "code": {"coding": [{"system": SNOMED, "code": "305428000", "display": "Admission to orthopedic department"}],
                  "text": "Admission to orthopedic department"},
         "subject": {"reference": "Patient/p2"},
         "performedPeriod": {"start": "2024-03-01T13:11:00Z", "end": "2024-03-01T14:11:00Z"}},
    ]


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("consistency-mechanisms")
    ingest([FileSource([write_json(root / "in" / "bundle.json", transaction(*_resources()))])], root / "db")
    c = PatientChecker(Store(root / "db"), "p2")
    yield c
    c.close()


def _verdicts(checker, text: str, kind: str = "ED note"):
    report = checker.check(text, VISIT, kind)
    return [(report.text[c.entity.span[0]:c.entity.span[1]], c.status, c.fields, c.reason) for c in report.checks]


@pytest.mark.parametrize(("text", "status"), [
    ("RBC 5.08", "consistent"),            # held by "RBC Auto (Bld) [#/Vol]"
    ("erythrocytes 4.61", "consistent"),   # held by "Erythrocytes [#/volume] …"
    ("erythrocytes 5.08", "consistent"),   # the same analyte's other item
    ("erythrocytes 5.50", "inconsistent"),  # neither holds it
    ("Hct 43.9", "consistent"),            # two codes, one analyte by name
    ("Hct 41.2", "consistent"),
    ("Hgb 6.1", "inconsistent"),           # the A1c is not hemoglobin
])
def test_a_value_held_by_any_item_of_the_analyte(checker, text, status):
    (written, got, _, reason), = _verdicts(checker, f"Labs: {text}")
    assert got == status, (written, reason)


def test_a_brand_of_another_salt_is_another_drug(checker):
    (_, status, fields, reason), = _verdicts(checker, "Meds: Lopressor 25 mg PO daily.")
    assert (status, fields) == ("inconsistent", ["existence"]) and reason.startswith("wrong drug: Lopressor")
    assert "metoprolol tartrate" in reason
    assert _verdicts(checker, "Meds: metoprolol tartrate.")[0][1:3] == ("inconsistent", ["existence"])
    for same in ("Toprol XL", "metoprolol", "metoprolol succinate", "Toprol"):
        assert _verdicts(checker, f"Meds: {same}.")[0][1] == "consistent", same


def test_a_combination_is_not_a_product_of_one_of_its_ingredients(checker):
    assert _verdicts(checker, "Meds: Norco.")[0][1:3] == ("inconsistent", ["existence"])  # hydrocodone/APAP
    assert _verdicts(checker, "Meds: Tylenol.")[0][1] == "consistent"


@pytest.mark.parametrize("text", ["broken forearm", "fractured forearm", "forearm fracture", "rectal polyps",
                                  "allergic reaction", "rotator cuff injury", "injured rotator cuff", "heart attack",
                                  "myocardial infarction"])
def test_lay_and_record_names_of_the_patients_diagnoses(checker, text):
    verdicts = _verdicts(checker, f"PMH: {text}.")
    assert [(w, s) for w, s, *_ in verdicts] == [(text, "consistent")], verdicts


def test_lay_aliases_are_built_from_the_items_own_words():
    assert "broken forearm" in lay_aliases("Fracture of forearm")
    assert "rectal polyp" in lay_aliases("Recurrent rectal polyp")
    assert "osteoarthritis of the hand" in lay_aliases("Localized, primary osteoarthritis of the hand")
    assert "hand osteoarthritis" in lay_aliases("Localized, primary osteoarthritis of the hand")
    assert "heart attack" in lay_aliases("History of myocardial infarction")
    assert lay_aliases("Acute") == ["Acute"]  # nothing left to name: the qualifier stays


def test_a_clock_time_is_held_to_a_procedures_start(checker):
    # the procedure ran 13:11–14:11: a time to the minute names its start, not any minute of it
    assert _verdicts(checker, "Underwent ortho admission (1311 hrs).")[0][1:3] == ("consistent", [])
    assert _verdicts(checker, "Underwent ortho admission (1411 hrs).")[0][1:3] == ("inconsistent", ["time"])
    assert _verdicts(checker, "Underwent ortho admission on 3/1/2024.")[0][1:3] == ("consistent", [])


def test_clock_windows():
    from datetime import UTC, datetime, timedelta

    t = datetime(2024, 3, 1, 14, tzinfo=UTC)
    assert is_clock((t - timedelta(minutes=20), t + timedelta(minutes=20)))
    assert is_clock((t - timedelta(minutes=40), t + timedelta(minutes=40)))
    assert not is_clock((t, t + timedelta(days=1)))
