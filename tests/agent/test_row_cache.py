"""The process-wide row cache: bounded, per store generation, and never written into by the tools."""

from __future__ import annotations

import copy
import json

from fhirqa.agent import row_cache
from fhirqa.agent.engine import ask
from fhirqa.agent.patient_rows import StorePatientRows
from fhirqa.agent.row_cache import RowCache
from fhirqa.store import Store

NOW = "2026-06-30T12:00:00Z"


def rows(n: int) -> list[dict]:
    return [{"i": i} for i in range(n)]


def test_eviction_keeps_the_total_number_of_rows_under_the_bound():
    cache = RowCache(max_rows=10)
    cache.put(("db", 1, "observation", "a"), rows(6))
    cache.put(("db", 1, "condition", "a"), rows(3))
    assert cache.get(("db", 1, "observation", "a")) is not None  # now the most recently used
    cache.put(("db", 1, "encounter", "a"), rows(4))
    assert cache.rows_held == 10
    assert cache.get(("db", 1, "condition", "a")) is None  # least recently used went first
    assert cache.get(("db", 1, "observation", "a")) == rows(6)


def test_rows_larger_than_the_whole_cache_are_not_kept():
    cache = RowCache(max_rows=5)
    cache.put(("db", 1, "observation", "a"), rows(3))
    cache.put(("db", 1, "observation", "b"), rows(6))
    assert cache.get(("db", 1, "observation", "b")) is None
    assert cache.get(("db", 1, "observation", "a")) == rows(3)


def test_a_newer_generation_drops_the_older_one_and_a_late_reader_cannot_bring_it_back():
    cache = RowCache()
    cache.put(("db", 1, "observation", "a"), rows(2))
    cache.put(("other", 1, "observation", "a"), rows(2))
    cache.put(("db", 2, "observation", "a"), rows(3))
    assert cache.get(("db", 1, "observation", "a")) is None
    assert cache.get(("other", 1, "observation", "a")) == rows(2)  # another store is untouched
    cache.put(("db", 1, "condition", "a"), rows(1))  # a question that started before the ingest
    assert cache.get(("db", 1, "condition", "a")) is None
    assert cache.rows_held == 5


def snapshot(cache: RowCache) -> str:
    return json.dumps({repr(k): v for k, v in cache._entries.items()}, default=str, sort_keys=True)


def test_answers_read_the_cache_without_writing_into_it(sample_db):
    row_cache.SHARED.clear()
    store = Store(sample_db)
    patients = [r[0] for r in store.query("SELECT patient_id FROM patient ORDER BY 1").rows]
    questions = ["What was the last A1c?", "How did the A1c change over the last 3 years?", "What medications is "
                 "the patient on?", "What is the average LDL?", "What was the last blood pressure?",
                 "When was the last encounter?", "Did potassium ever exceed 5.0 in the last year?"]
    first = {(p, q): ask(q, patient_id=p, now=NOW, db=sample_db, store=store).to_dict() for p in patients
             for q in questions}
    before = snapshot(row_cache.SHARED)
    assert row_cache.SHARED.hits > 0 and row_cache.SHARED.rows_held > 0
    again = {(p, q): ask(q, patient_id=p, now=NOW, db=sample_db, store=store).to_dict() for p in patients
             for q in questions}
    assert snapshot(row_cache.SHARED) == before
    for (_, _, view, patient), cached in list(row_cache.SHARED._entries.items()):  # as read from the store
        assert cached == StorePatientRows(store, patient).rows(view)
    strip = lambda a: {k: v for k, v in copy.deepcopy(a).items() if k != "latency_ms"}  # noqa: E731
    assert {k: strip(v) for k, v in again.items()} == {k: strip(v) for k, v in first.items()}
