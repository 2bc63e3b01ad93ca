"""The gold builder: its building blocks on a hand-made bundle, and determinism on the shared data."""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from .helpers import QUESTIONS, builder, gold_module, need_synthea

UTC = UTC


def _bundle(tmp_path: Path) -> Path:
    pid = "pat-1"

    def entry(resource: dict) -> dict:
        return {"fullUrl": f"urn:uuid:{resource['id']}", "resource": resource}

    subject = {"reference": f"urn:uuid:{pid}"}
    loinc = "http://loinc.org"
    resources = [
        {"resourceType": "Patient", "id": pid, "gender": "female", "birthDate": "1970-05-10",
         "name": [{"use": "official", "given": ["Ann123"], "family": "Lee456"}]},
        {"resourceType": "Observation", "id": "k1", "status": "final", "subject": subject,
         "code": {"coding": [{"system": loinc, "code": "6298-4", "display": "Potassium"}], "text": "Potassium"},
         "effectiveDateTime": "2019-01-05T10:00:00+00:00", "valueQuantity": {"value": 4.1, "unit": "mmol/L"}},
        {"resourceType": "Observation", "id": "k2", "status": "final", "subject": subject,
         "code": {"coding": [{"system": loinc, "code": "6298-4"}], "text": "Potassium"},
         "effectivePeriod": {"start": "2020-01-05T10:00:00-05:00"}, "valueQuantity": {"value": 5.3}},
        {"resourceType": "Observation", "id": "bp", "status": "final", "subject": subject,
         "code": {"coding": [{"system": loinc, "code": "55284-4"}], "text": "Blood Pressure"},
         "effectiveDateTime": "2020-02-01T10:00:00Z",
         "component": [
             {"code": {"coding": [{"system": loinc, "code": "8480-6"}], "text": "Systolic Blood Pressure"},
              "valueQuantity": {"value": 150}},
             {"code": {"coding": [{"system": loinc, "code": "8462-4"}], "text": "Diastolic Blood Pressure"},
              "valueQuantity": {"value": 95}}]},
        {"resourceType": "Observation", "id": "other", "status": "final",
         "subject": {"reference": "urn:uuid:someone-else"},
         "code": {"coding": [{"system": loinc, "code": "6298-4"}]}, "effectiveDateTime": "2020-03-01T00:00:00Z",
         "valueQuantity": {"value": 9.9}},
        {"resourceType": "MedicationRequest", "id": "rx", "status": "active", "subject": subject,
         "authoredOn": "2019-06-01T00:00:00Z",
         "medicationCodeableConcept": {"coding": [{"code": "1", "display": "Meperidine 50 MG"}]},
         "dosageInstruction": [{"timing": {"repeat": {"frequency": 1, "period": 4, "periodUnit": "h"}},
                                "doseAndRate": [{"doseQuantity": {"value": 1}}]}]},
        {"resourceType": "Encounter", "id": "e1", "status": "finished", "subject": subject,
         "class": {"code": "EMER"}, "period": {"start": "2020-02-01T10:00:00Z", "end": "2020-02-01T11:00:00Z"}},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"resourceType": "Bundle", "type": "transaction",
                                "entry": [entry(r) for r in resources]}), encoding="utf-8")
    return path


def test_record_resolves_references_times_components_and_dose(tmp_path: Path) -> None:
    rec = gold_module("record").load_record(_bundle(tmp_path))
    assert (rec.id, rec.given, rec.family, rec.birth_date) == ("pat-1", "Ann", "Lee", date(1970, 5, 10))
    k = [m for m in rec.measurements if "6298-4" in m.codes]
    assert [m.value for m in k] == [4.1, 5.3]  # the other patient's 9.9 is not there
    assert k[1].time == datetime(2020, 1, 5, 15, tzinfo=UTC)  # effectivePeriod.start, offset honoured
    assert {m.name: m.value for m in rec.measurements if m.ref == "Observation/bp"} == {
        "Systolic Blood Pressure": 150.0, "Diastolic Blood Pressure": 95.0}
    (rx,) = rec.of_kind("medication")
    assert rx.name == "Meperidine 50 MG" and rx.daily_dose == pytest.approx(6.0)
    assert rec.of_kind("encounter")[0].klass == "EMER"


def test_calendar_arithmetic() -> None:
    tu = gold_module("timeutil")
    assert tu.add_months(datetime(2021, 3, 31, tzinfo=UTC), -1) == datetime(2021, 2, 28, tzinfo=UTC)
    assert tu.completed_years(date(1970, 5, 10), date(2020, 5, 9)) == 49
    assert tu.completed_years(date(1970, 5, 10), date(2020, 5, 10)) == 50
    start = datetime(2020, 1, 31, 12, tzinfo=UTC)
    assert tu.completed_months(start, datetime(2020, 2, 29, 11, tzinfo=UTC)) == 0
    assert tu.completed_months(start, datetime(2020, 2, 29, 12, tzinfo=UTC)) == 1  # Jan 31 + 1 month = Feb 29
    assert tu.completed_months(start, datetime(2021, 1, 31, 12, tzinfo=UTC)) == 12
    assert tu.completed_days(start, datetime(2020, 2, 1, 11, tzinfo=UTC)) == 0
    window = tu.between(date(2016, 1, 1), date(2017, 6, 30))
    assert window.contains(datetime(2017, 6, 30, 23, 59, 59, tzinfo=UTC))
    assert not window.contains(datetime(2017, 7, 1, tzinfo=UTC))
    assert tu.last(datetime(2021, 3, 15, 12, tzinfo=UTC), 6, "months").start == datetime(2020, 9, 15, 12, tzinfo=UTC)


def test_trend_rule() -> None:
    trend_word = gold_module("gen_values").trend_word
    assert trend_word(100, 107) == "increasing"
    assert trend_word(100, 93) == "decreasing"
    assert trend_word(100, 102) == "stable"
    assert trend_word(100, 105) is None  # too close to the cut-off to be a fair question
    assert trend_word(0, 3) is None


def test_generators_on_a_hand_made_record(tmp_path: Path) -> None:
    b = builder()
    cand = gold_module("candidate")
    rec = gold_module("record").load_record(_bundle(tmp_path))
    now, late = cand.choose_now(rec, random.Random("x"))  # noqa: S311
    assert now > rec.last_event_time() and now.day <= 28 and late > now
    pop = b.population([rec])
    made = []
    for name, gen in b.GENERATORS.items():
        made += gen(cand.Context(rec, now, late, pop, random.Random(name)))  # noqa: S311
    latest = [c for c in made if c.category == "latest_value" and c.gold_refs == ["Observation/k2"]]
    assert latest and latest[0].expected == [5.3]
    dose = [c for c in made if c.category == "daily_dose"]
    assert dose and dose[0].expected == [6.0]


@pytest.mark.shared
def test_builder_is_deterministic(tmp_path: Path) -> None:
    """Two builds over the same bundles give the same bytes (a 12-patient subset keeps this fast)."""
    subset = tmp_path / "subset"
    subset.mkdir()
    for path in sorted(need_synthea().glob("*.json"))[::8]:
        (subset / path.name).symlink_to(path)
    b = builder()
    first = b.render(b.build(subset, per_category=5))
    assert first and b.render(b.build(subset, per_category=5)) == first


@pytest.mark.shared
def test_committed_set_is_up_to_date() -> None:
    """The committed JSONL is exactly what the builder makes from the shared data."""
    b = builder()
    assert QUESTIONS.read_text(encoding="utf-8") == b.render(b.build(need_synthea())), (
        "stale: run python evals/build_synthea_questions.py")
