""""Any new meds this admission?" is a yes/no whose answer names what was started in the window (a renewal of an
earlier order is no start); before, it answered Yes naming one drug."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .test_tools_helpers import med, offline_answer

NOW = datetime(2025, 7, 25, 8, 0, tzinfo=UTC)
STAY = {"patient_id": "p1", "ref": "Encounter/e1", "class_code": "IMP", "class_name": "inpatient",
        "type_name": "Inpatient admission", "start_time": datetime(2025, 7, 18, 9, 0, tzinfo=UTC), "end_time": None,
        "reason_name": None}
VIEWS: dict[str, list[dict[str, Any]]] = {
    "medication": [med("r0", "Lisinopril 10 MG Oral Tablet", "request", "2024-01-05T00:00:00", status="active"),
                   med("r1", "Lisinopril 10 MG Oral Tablet", "request", "2025-07-19T00:00:00", status="active"),
                   med("r2", "Vancomycin 1,000 mg IVPB", "request", "2025-07-18T12:00:00", status="active"),
                   med("r3", "Heparin 5,000 units/mL injection", "request", "2025-07-18T12:00:00", status="active")],
    "encounter": [STAY],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": "1950-01-01", "gender": "female"}],
}


def test_any_new_meds_names_every_start_and_not_a_renewal() -> None:
    got = offline_answer("any new meds this admission?", VIEWS, NOW)
    assert got["answer"] == [True]
    assert "Vancomycin" in got["text"] and "Heparin" in got["text"]
    assert "renewed" in got["text"]  # lisinopril was ordered before the stay


def test_no_new_meds_is_no() -> None:
    got = offline_answer("any new meds in the last 2 days?", VIEWS, NOW)
    assert got["answer"] == [False]
