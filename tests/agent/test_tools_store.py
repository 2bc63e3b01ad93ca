"""StorePatientRows over a real store built from a small bundle, and the catalog against the real views."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from fhirqa.agent.catalog import UnknownView, load_catalog
from fhirqa.agent.patient_rows import StorePatientRows
from fhirqa.agent.tools import execute
from fhirqa.agent.tools.base import Resolution, ToolContext
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import condition, observation, patient, transaction, write_json


def _medication_request(pid: str = "p1") -> dict:
    return {
        "resourceType": "MedicationRequest", "id": "mr1", "status": "active", "intent": "order",
        "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                                                  "code": "1807516", "display": "Vancomycin 1250 MG Injection"}]},
        "subject": {"reference": f"Patient/{pid}"}, "authoredOn": "2024-03-01T06:00:00Z",
        "dosageInstruction": [{"timing": {"repeat": {"frequency": 1, "period": 8, "periodUnit": "h"}},
                               "doseAndRate": [{"doseQuantity": {"value": 1250, "unit": "mg"}}]}],
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    """Two patients (observations, a condition, a vancomycin order) ingested once for the module."""
    root = tmp_path_factory.mktemp("agent-store")
    bundle = transaction(
        patient("p1"), patient("p2", name=[{"given": ["Bob"], "family": "Stone"}]),
        observation("o1", "p1", value=4.1, when="2024-03-01T07:30:00-05:00"),
        observation("o2", "p1", value=5.3, when="2024-03-05"),
        observation("o3", "p2", value=3.2),
        condition("c1", "p1"),
        _medication_request("p1"),
    )
    ingest([FileSource([write_json(root / "in" / "bundle.json", bundle)])], root / "db")
    return Store(root / "db")


def _resolve(view: str, phrase: str, items: list[str]) -> Resolution:
    return Resolution(matched=[i for i in items if phrase.lower() in i.lower()], how="test")


def test_store_patient_rows_reads_only_the_patients_rows_with_times_in_their_written_offset(store):
    rows = StorePatientRows(store, "p1")
    observations = rows.rows("observation")
    assert sorted(r["ref"] for r in observations) == ["Observation/o1", "Observation/o2"]
    first = next(r for r in observations if r["ref"] == "Observation/o1")
    # the instant of 07:30-05:00, kept on the clock it was written on (its local day is the record's day)
    assert first["time"] == datetime(2024, 3, 1, 12, 30, tzinfo=UTC)
    assert first["time"].isoformat() == "2024-03-01T07:30:00-05:00"
    second = next(r for r in observations if r["ref"] == "Observation/o2")
    assert second["time"] == datetime(2024, 3, 5, tzinfo=UTC) and second["time"].tzinfo is UTC  # a date: UTC
    assert rows.rows("patient")[0]["birth_date"] == date(1970, 1, 2)
    assert rows.items("observation") == ["Potassium"]
    assert rows.items("medication") == ["Vancomycin 1250 MG Injection"]
    assert rows.rows("observation") is observations  # cached per view
    rows.close()


def test_store_patient_rows_accepts_an_open_connection(store):
    con = store.connect()
    try:
        rows = StorePatientRows(con, "p2")
        assert [r["value"] for r in rows.rows("observation")] == [3.2]
        assert rows.rows("medication") == []
    finally:
        con.close()


def test_store_patient_rows_refuses_views_outside_the_catalog(store):
    with pytest.raises(UnknownView):
        StorePatientRows(store, "p1").rows("observation; DROP TABLE x")


def test_catalog_describes_exactly_the_columns_of_every_view(store):
    catalog = load_catalog()
    assert sorted(catalog) == store.view_names()
    for view, info in catalog.items():
        columns = [r["column_name"] for r in store.query(f"DESCRIBE {view}").records()]
        assert set(info.columns) == set(columns) - {"patient_id"}, view


def test_tools_run_end_to_end_over_the_store(store):
    rows = StorePatientRows(store, "p1")
    ctx = ToolContext(patient_id="p1", now=datetime(2024, 3, 10, tzinfo=UTC), data=rows, resolve=_resolve)
    handle = execute(ctx, "get_resources", {"view": "observation", "item": "potassium"})["handle"]
    latest = execute(ctx, "get_by_index", {"records": handle, "index": -1})
    assert latest["evidence"]["value"] == 5.3 and latest["evidence"]["time"] == "2024-03-05T00:00:00+00:00"
    meds = execute(ctx, "get_resources", {"view": "medication", "item": "vancomycin", "kind": "request"})
    daily = execute(ctx, "extract_field_value", {"records": meds["handle"], "field": "daily_dose"})
    assert daily["values"][0]["value"] == 3750 and daily["values"][0]["unit"] == "mg"
    age = execute(ctx, "calculate_time_offset", {"start": rows.rows("patient")[0]["birth_date"].isoformat(),
                                                  "unit": "years"})
    assert age["value"] == 54
    rows.close()
