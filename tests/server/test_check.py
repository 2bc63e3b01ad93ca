"""$check-consistency over HTTP: a note's values against the patient's record, per entity."""

from __future__ import annotations

import fhirqa
from tests.server.conftest import NAME_A, NAME_B

FHIR = {"Content-Type": "application/fhir+json"}


def _latest_potassium(db, patient):
    return fhirqa.Store(db).query(
        "SELECT value, time FROM observation WHERE patient_id = ? AND name ILIKE 'potassium%' ORDER BY time DESC LIMIT 1",
        [patient]).rows[0]


def test_a_note_value_that_matches_the_record_is_consistent_and_a_changed_one_is_not(server, ids):
    patient = ids[NAME_A]
    value, when = _latest_potassium(server.config.db, patient)
    day = when.isoformat()
    with server.client(server.token("patient/*.rs", patient)) as http:
        good = http.post(f"/api/patients/{patient}/check-consistency",
                         json={"text": f"Labs today: K {value:g}.", "time": day, "type": "progress"})
        bad = http.post(f"/api/patients/{patient}/check-consistency",
                        json={"text": f"Labs today: K {value + 2:g}.", "time": day, "type": "progress"})
    assert good.status_code == 200, good.text
    statuses = [c["status"] for c in good.json()["reports"][0]["entities"]]
    assert "consistent" in statuses and "inconsistent" not in statuses
    flagged = [c for c in bad.json()["reports"][0]["entities"] if c["status"] == "inconsistent"]
    assert flagged and "value" in flagged[0]["fields"]


def test_the_fhir_operation_answers_parameters(server, ids):
    patient = ids[NAME_A]
    value, when = _latest_potassium(server.config.db, patient)
    body = {"resourceType": "Parameters", "parameter": [
        {"name": "text", "valueString": f"K {value + 2:g} this morning."}, {"name": "time", "valueDateTime": when.isoformat()}]}
    with server.client(server.token("patient/*.rs", patient)) as http:
        response = http.post(f"/Patient/{patient}/$check-consistency", json=body, headers=FHIR)
    assert response.status_code == 200, response.text
    report = response.json()["parameter"][0]["part"]
    assert next(p for p in report if p["name"] == "inconsistent")["valueInteger"] >= 1


def test_another_patients_token_is_refused(server, ids):
    with server.client(server.token("patient/*.rs", ids[NAME_B])) as http:
        response = http.post(f"/api/patients/{ids[NAME_A]}/check-consistency", json={})
    assert response.status_code == 403
