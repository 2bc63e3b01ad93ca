"""A value the lab reports with a comparator (">60") is answered with it, never as a bare number."""

from __future__ import annotations

import json

from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import ingest


def test_the_latest_value_keeps_its_comparator_in_the_answer_text(tmp_path):
    egfr = {"resourceType": "Observation", "id": "egfr-1", "status": "final",
            "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2022-02-12T08:00:00Z",
            "code": {"coding": [{"system": "http://loinc.org", "code": "33914-3", "display": "eGFR"}]},
            "valueQuantity": {"value": 60, "comparator": ">", "unit": "mL/min/{1.73_m2}"}}
    bundle = {"resourceType": "Bundle", "type": "collection", "entry": [
        {"resource": {"resourceType": "Patient", "id": "p1", "birthDate": "1950-01-01"}}, {"resource": egfr}]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle), "utf-8")
    ingest([FileSource([path])], tmp_path / "db")
    answer = ask("most recent eGFR?", patient_id="p1", now="2022-03-01", db=tmp_path / "db")
    assert answer.status == "answered" and answer.answer == [60]
    assert ">60 mL/min" in answer.text
