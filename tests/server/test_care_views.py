"""care_plan, goal and imaging over the server: a patient-scoped token reads them for its own patient only.

Two patients (``pa`` and ``pb``) each have a Condition, a CarePlan addressing it, a Goal and an ImagingStudy.
The views join Condition names, so reading them needs read scope on Condition as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import fhirqa
from tests.builders import condition, patient, transaction, write_json
from tests.server.conftest import Keys, Server, make_config, run_server

VIEWS = ("care_plan", "goal", "imaging")


def _records(pid: str) -> list[dict]:
    subject = {"reference": f"Patient/{pid}"}
    return [
        patient(pid),
        condition(f"{pid}-c", pid, display="Acute bronchitis (disorder)"),
        {"resourceType": "CarePlan", "id": f"{pid}-plan", "status": "active", "intent": "order", "subject": subject,
         "category": [{"text": "Respiratory therapy"}], "period": {"start": "2020-01-01T10:00:00Z"},
         "addresses": [{"reference": f"Condition/{pid}-c"}],
         "activity": [{"detail": {"code": {"text": "Deep breathing and coughing exercises"}, "status": "in-progress"}}]},
        {"resourceType": "Goal", "id": f"{pid}-goal", "lifecycleStatus": "active", "subject": subject,
         "description": {"text": "Maintain blood pressure below 140/90 mmHg"}},
        {"resourceType": "ImagingStudy", "id": f"{pid}-img", "status": "available", "subject": subject,
         "started": "2020-02-01T09:00:00Z",
         "series": [{"uid": f"1.2.{len(pid)}", "modality": {"code": "US", "display": "Ultrasound"},
                     "bodySite": {"display": "Abdomen"}}]},
    ]


@pytest.fixture(scope="module")
def care_server(keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("care")
    source = write_json(root / "in" / "bundle.json", transaction(*_records("pa"), *_records("pb")))
    fhirqa.ingest([fhirqa.FileSource([source])], root / "db")
    with run_server(make_config(root / "db", root / "state", keys, "pa"), keys) as running:
        yield running


def test_a_patient_token_reads_its_own_care_plan_goal_and_imaging_rows(care_server: Server):
    with care_server.client(care_server.token("patient/*.rs", "pa")) as http:
        for view in VIEWS:
            response = http.get(f"/Patient/pa/views/{view}")
            assert response.status_code == 200, (view, response.text)
            rows = response.json()["rows"]
            assert rows and all(r["ref"].split("/", 1)[1].startswith("pa-") for r in rows), (view, rows)
        plan = http.get("/Patient/pa/views/care_plan").json()["rows"][0]
        assert (plan["name"], plan["activity"], plan["addresses_name"]) == (
            "Respiratory therapy", "Deep breathing and coughing exercises", "Acute bronchitis (disorder)")
        assert http.get("/Patient/pa/views/imaging").json()["rows"][0]["modality"] == "Ultrasound"


def test_a_patient_token_never_reads_another_patients_rows(care_server: Server):
    with care_server.client(care_server.token("patient/*.rs", "pa")) as http:
        for view in VIEWS:
            response = http.get(f"/Patient/pb/views/{view}")
            assert response.status_code == 403, (view, response.text)
            assert "pb-" not in response.text


def test_reading_a_view_needs_its_resource_type_and_condition(care_server: Server):
    with care_server.client(care_server.token("patient/CarePlan.rs", "pa")) as http:
        assert http.get("/Patient/pa/views/care_plan").status_code == 403  # it names the addressed Condition
    with care_server.client(care_server.token("patient/CarePlan.rs patient/Condition.rs", "pa")) as http:
        assert http.get("/Patient/pa/views/care_plan").status_code == 200
        assert http.get("/Patient/pa/views/goal").status_code == 403
        assert http.get("/Patient/pa/views/imaging").status_code == 403
    with care_server.client(care_server.token("system/*.rs")) as http:
        listed = {v["name"]: v["resource_types"] for v in http.get("/views").json()["views"]}
    assert listed["care_plan"] == ["CarePlan", "Condition"]
    assert listed["goal"] == ["Goal", "Condition"]
    assert listed["imaging"] == ["ImagingStudy", "Condition"]


def test_the_store_holds_both_patients(care_server: Server):
    # the 403s above are the token's doing, not an empty record
    rows = fhirqa.Store(Path(care_server.config.db)).query("SELECT patient_id, count(*) FROM care_plan GROUP BY 1").rows
    assert sorted(rows) == [("pa", 1), ("pb", 1)]
