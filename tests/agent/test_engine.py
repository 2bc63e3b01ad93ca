"""End to end on the committed example patients: question in, answer with evidence out."""

from __future__ import annotations

import pytest

from fhirqa.agent.engine import ask
from fhirqa.store import Store

NOW = "2026-06-30T12:00:00Z"


def patient(db, name):
    return Store(db).query("SELECT patient_id FROM patient WHERE name = ?", [name]).rows[0][0]


def direct(db, sql, params):
    """The reference answer, straight from the view with SQL."""
    return Store(db).query(sql, params).rows


def test_latest_value_matches_the_view_and_cites_its_row(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    answer = ask("What was her last potassium?", patient_id=pid, now=NOW, db=sample_db)
    (value, ref), = direct(sample_db, "SELECT value, ref FROM observation WHERE patient_id = ? AND name ILIKE 'potassium%' "
                                      "AND time <= ? ORDER BY time DESC LIMIT 1", [pid, NOW])
    assert answer.status == "answered" and answer.answer == [value]
    assert [e.ref for e in answer.evidence] == [ref] and answer.unit == "mmol/L"
    assert answer.trace["tool_calls"] and answer.backend == "offline" and answer.latency_ms > 0


def test_the_record_is_read_as_of_now(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    early = ask("What was her last potassium?", patient_id=pid, now="2022-01-01T00:00:00Z", db=sample_db)
    latest_then = direct(sample_db, "SELECT max(time) FROM observation WHERE patient_id = ? AND name ILIKE 'potassium%' "
                                    "AND time <= TIMESTAMPTZ '2022-01-01 00:00:00+00'", [pid])[0][0]
    assert early.evidence[0].time.startswith(latest_then.date().isoformat())


def test_an_empty_window_is_no_data_and_says_what_the_record_holds(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    answer = ask("What was her potassium in 2010?", patient_id=pid, now=NOW, db=sample_db)
    assert answer.status == "no-data" and answer.answer == []
    assert "nearest after is from" in answer.text or "most recent one is from" in answer.text


def test_an_item_the_record_lacks_is_no_data_with_nearest_items(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    answer = ask("What was her last PSA?", patient_id=pid, now=NOW, db=sample_db)
    assert answer.status == "no-data" and "closest items" in answer.text


def test_a_true_negative_is_answered_false(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    answer = ask("Has she ever been prescribed warfarin?", patient_id=pid, now=NOW, db=sample_db)
    assert answer.status == "answered" and answer.answer == [False]


def test_counts_encounters_by_class(sample_db):
    pid = patient(sample_db, "Matthew Young")
    answer = ask("How many ER visits has he had?", patient_id=pid, now=NOW, db=sample_db)
    expected = direct(sample_db, "SELECT count(*) FROM encounter WHERE patient_id = ? AND class_code = 'EMER' "
                                 "AND start_time <= ?", [pid, NOW])[0][0]
    assert answer.answer == [expected]


def test_daily_administered_total_is_a_per_day_sum(sample_db):
    day = direct(sample_db, "SELECT patient_id, CAST(time AS DATE) d, sum(dose) FROM medication WHERE kind = 'administration' "
                            "AND medication_name ILIKE '%vancomycin%' GROUP BY ALL ORDER BY 3 DESC LIMIT 1", [])
    if not day:
        pytest.skip("no vancomycin administrations in this sample")
    pid, _, total = day[0]
    answer = ask("Did vancomycin ever exceed 2 g per day?", patient_id=pid, now=NOW, db=sample_db)
    assert answer.answer == [total > 2000]


def test_an_unknown_patient_is_an_error_not_an_empty_answer(sample_db):
    answer = ask("last A1c", patient_id="nobody", now=NOW, db=sample_db)
    assert answer.status == "error" and "No patient" in answer.text


def test_patient_lookup_needs_no_patient_and_finds_one(sample_db):
    pid = patient(sample_db, "Mei Wilson")
    born = direct(sample_db, "SELECT birth_date FROM patient WHERE patient_id = ?", [pid])[0][0]
    answer = ask(f"What is the patient id of Mei Wilson, born {born.isoformat()}?", patient_id=None, now=NOW, db=sample_db)
    assert answer.answer == [pid]


def test_the_answer_object_is_json_ready(sample_db):
    import json

    pid = patient(sample_db, "Linda Taylor")
    data = ask("When was her first A1c?", patient_id=pid, now=NOW, db=sample_db).to_dict()
    json.dumps(data)
    assert set(data) >= {"answer", "unit", "text", "status", "evidence", "trace", "backend", "tokens", "latency_ms"}


def test_a_daily_dose_of_a_drug_the_record_never_holds_is_no_data_not_a_count_of_zero(sample_db):
    pid = patient(sample_db, "Linda Taylor")
    assert not direct(sample_db, "SELECT 1 FROM medication WHERE patient_id = ? AND medication_name ILIKE '%vancomycin%'",
                      [pid])
    answer = ask("What was the total daily dose of vancomycin?", patient_id=pid, now=NOW, db=sample_db)
    assert answer.status == "no-data" and answer.answer == []
