"""``check_note_consistency``: a note's statements against the record as of the question's now, cited."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

import pytest

from fhirqa.agent.asof import AsOf
from fhirqa.agent.engine import codes_by_item, components_by_panel
from fhirqa.agent.patient_rows import StorePatientRows
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import execute
from fhirqa.agent.tools.base import ToolContext
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import note, observation, patient, transaction, write_json

NOTE = """PROGRESS NOTE
Date: 3/2/2024 10:00
S: feels well.
O: Labs: K 5.9 (drawn 3/1/2024); Na 139 (prior 131 on 1/5/2024).
A/P: hyperkalemia - repeat BMP.
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cc")
    write_json(folder / "in" / "p1.json", transaction(
        patient("p1"),
        observation("k1", value=4.1, when="2024-03-01T08:00:00Z"),
        observation("na1", code="2951-2", display="Sodium", value=139, when="2024-03-01T08:00:00Z"),
        observation("na0", code="2951-2", display="Sodium", value=131, when="2024-01-05T08:00:00Z"),
        note("n1", NOTE, "2024-03-02T10:00:00Z"),
        note("n2", "Date: 4/2/2024\nO: K 4.1 (drawn 3/1/2024).", "2024-04-02T10:00:00Z"),
    ))
    ingest([FileSource([folder / "in"])], folder / "db")
    return Store(folder / "db")


def _ctx(store: Store, now: datetime) -> ToolContext:
    rows = AsOf(StorePatientRows(store, "p1"), now)
    resolve = ConceptResolver(codes_of=functools.cache(lambda v: codes_by_item(rows, v)),
                              children_of=functools.cache(lambda v: components_by_panel(rows, v)))
    return ToolContext(patient_id="p1", now=now, data=rows, resolve=resolve)


def test_a_note_value_that_differs_from_the_lab_is_reported_with_both_sources(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    result = execute(ctx, "check_note_consistency", {"item": "potassium", "which": "latest"})
    assert result["agree"] is False and result["inconsistent"] == 1
    (comparison,) = result["comparisons"]
    assert comparison["as_written"].startswith("K 5.9") and comparison["fields"] == ["value"]
    assert comparison["record"][0]["value"] == 4.1 and comparison["record"][0]["ref"] == "Observation/k1"
    assert {"DocumentReference/n1", "Observation/k1"} <= {ref for ref, _ in ctx.evidence}


def test_a_prior_value_in_parentheses_is_not_read_as_todays(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    result = execute(ctx, "check_note_consistency", {"item": "sodium"})
    assert result["agree"] is True and result["inconsistent"] == 0


def test_notes_written_after_now_are_not_checked(store):
    early = execute(_ctx(store, datetime(2024, 3, 10, tzinfo=UTC)), "check_note_consistency", {})
    late = execute(_ctx(store, datetime(2024, 5, 1, tzinfo=UTC)), "check_note_consistency", {"which": "latest"})
    assert [n["ref"] for n in early["notes_checked"]] == ["DocumentReference/n1"]
    assert [n["ref"] for n in late["notes_checked"]] == ["DocumentReference/n2"] and late["agree"] is True


def test_an_item_the_note_does_not_state_has_no_verdict(store):
    result = execute(_ctx(store, datetime(2024, 3, 10, tzinfo=UTC)), "check_note_consistency", {"item": "A1c"})
    assert result["agree"] is None and "nothing about 'A1c'" in result["note"]


def test_the_questions_rows_are_only_read(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    before = [dict(r) for r in ctx.data.rows("note")]
    execute(ctx, "check_note_consistency", {})
    assert ctx.data.rows("note") == before


def test_prior_restricts_the_check_to_quoted_earlier_values(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    result = execute(ctx, "check_note_consistency", {"item": "sodium", "prior": True})
    (comparison,) = result["comparisons"]
    assert comparison["prior"] is True and comparison["as_written"] == "prior 131"
    assert comparison["status"] == "consistent" and comparison["record"][0]["ref"] == "Observation/na0"


def test_without_prior_an_item_is_the_notes_own_value(store):
    result = execute(_ctx(store, datetime(2024, 3, 10, tzinfo=UTC)), "check_note_consistency", {"item": "sodium"})
    assert [c["as_written"] for c in result["comparisons"]] == ["Na 139"]


def test_a_window_on_the_prior_values_date_finds_the_note_that_quotes_it(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    result = execute(ctx, "check_note_consistency", {"prior": True, "start": "2024-01-05", "end": "2024-01-05"})
    assert [n["ref"] for n in result["notes_checked"]] == ["DocumentReference/n1"] and result["agree"] is True
    assert execute(ctx, "check_note_consistency", {"prior": True, "start": "2024-02-01", "end": "2024-02-02"}
                   )["agree"] is None


def test_the_patients_own_names_are_not_an_item(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    result = execute(ctx, "check_note_consistency", {"item": "Ada Lovelace"})
    assert "item" not in result and result["agree"] is False  # every statement of the note: K 5.9 disagrees
    assert execute(ctx, "check_note_consistency", {"item": "Ada's potassium"})["item"] == "potassium"


def test_category_keeps_one_kind_of_statement(store):
    ctx = _ctx(store, datetime(2024, 3, 10, tzinfo=UTC))
    labs = execute(ctx, "check_note_consistency", {"category": "lab", "which": "latest"})
    drugs = execute(ctx, "check_note_consistency", {"category": "medication", "which": "latest"})
    assert {c["category"] for c in labs["comparisons"]} == {"lab"} and labs["agree"] is False
    assert drugs["agree"] is None and "any medication" in drugs["note"]
