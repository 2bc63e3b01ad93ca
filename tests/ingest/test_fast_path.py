"""The fast ingest path decides exactly what the reference implementations decide.

The walk that emits facts also checks the resource; the reference rewrite walks without paths; an
unchanged resource is skipped by hash; large tables are sorted in ranges. Each is checked against the
plain implementation it replaces, on generated input and on the store it produces.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhirqa.errors import IngestAborted
from fhirqa.normalize.flatten import FactColumns, flatten
from fhirqa.normalize.references import relative_reference, rewrite_references
from fhirqa.normalize.validate import InvalidResource, check_resource
from fhirqa.sources import FileSource
from fhirqa.sources.base import Origin, RawRecord
from fhirqa.store import Store, ingest
from fhirqa.store import generation as generation_module
from fhirqa.store.layout import read_manifest
from fhirqa.store.staging import HashIndex
from tests.builders import condition, observation, patient, transaction, write_json, write_ndjson

# Keys the checks care about, mixed with ordinary ones, so generated resources hit every rule.
_KEYS = st.sampled_from(
    ["reference", "subject", "patient", "encounter", "date", "start", "birthDate", "issued", "code", "value",
     "display", "valueQuantity", "extension", "url", "_birthDate"]
)
_DATES = st.sampled_from(["2024", "2024-03", "2024-03-01", "2024-03-01T08:00:00Z", "2024-03-01T08:00:00.5+02:00",
                          "yesterday", "2024-3-1", "", "2024-03-01\n"])
_PRIMITIVES = st.one_of(
    st.text(max_size=8), _DATES, st.booleans(), st.integers(-(10**12), 10**12), st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_JSON = st.recursive(
    _PRIMITIVES,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.dictionaries(_KEYS, children, min_size=1, max_size=4),
    ),
    max_leaves=25,
)
_RESOURCES = st.dictionaries(_KEYS, _JSON, max_size=5).map(lambda d: {"resourceType": "Basic", "id": "x", **d})


def _verdict(call: Any) -> str | None:
    try:
        call()
    except InvalidResource as exc:
        return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(_RESOURCES, st.integers(min_value=1, max_value=12))
def test_the_checked_walk_rejects_exactly_what_check_resource_rejects(resource, max_string):
    columns = FactColumns()
    serialized = len(orjson.dumps(resource))
    expected = _verdict(lambda: check_resource(resource, max_string))
    got = _verdict(lambda: columns.add_checked(resource, "p", 0, max_string, long_strings=serialized > max_string))
    assert got == expected
    if expected is None:
        assert list(zip(columns.path, columns.value_type, columns.value, strict=True)) == flatten(resource)
    else:
        assert len(columns) == 0  # nothing of a rejected resource is kept


def _reference_rewrite(node: Any, full_urls: dict, dangling: list, path: str = "") -> None:
    """The recursive rewrite the fast one replaced: the oracle."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "reference" and isinstance(value, str):
                resolved = full_urls.get(value)
                if resolved is None and not value.startswith(("#", "urn:")) and "?" not in value:
                    resolved = relative_reference(value)
                if resolved is not None:
                    node[key] = resolved
                elif value.startswith("urn:"):
                    dangling.append(f"{path}.reference={value}" if path else f"reference={value}")
            elif isinstance(value, dict | list):
                _reference_rewrite(value, full_urls, dangling, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, dict | list):
                _reference_rewrite(item, full_urls, dangling, f"{path}[{index}]")


_REFERENCES = st.sampled_from(["urn:uuid:a", "urn:uuid:b", "urn:uuid:gone", "Patient/1",
                               "https://x.org/fhir/Encounter/e1/_history/2", "#contained", "Patient?identifier=1"])
_REF_TREE = st.recursive(
    st.one_of(_REFERENCES, st.integers()),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(["reference", "subject", "item", "x"]), children, min_size=1, max_size=3),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_REF_TREE)
def test_the_fast_reference_rewrite_matches_the_recursive_one(tree):
    full_urls = {"urn:uuid:a": "Patient/a", "urn:uuid:b": "Encounter/b"}
    fast, slow = copy.deepcopy(tree), copy.deepcopy(tree)
    fast_dangling: list[str] = []
    slow_dangling: list[str] = []
    rewrite_references(fast, full_urls, fast_dangling)
    _reference_rewrite(slow, full_urls, slow_dangling)
    assert fast == slow
    assert fast_dangling == slow_dangling


def test_hash_index_answers_membership_exactly():
    digests = [hashlib.blake2b(str(i).encode(), digest_size=16) for i in range(500)]
    index = HashIndex([d.hexdigest() for d in digests[:250]] + [None])
    assert len(index) == 250
    assert all(d.digest() in index for d in digests[:250])
    assert not any(d.digest() in index for d in digests[250:])
    assert b"short" not in index and b"x" * 16 not in HashIndex([])


def load(db, *paths, **kwargs):
    return ingest([FileSource(paths)], db, **kwargs)


def rows(db, sql):
    return Store(db).query(sql).rows


def test_unchanged_resources_are_skipped_and_a_changed_one_replaces(db, tmp_path):
    resources = [patient("p1"), observation("o1", "p1", value=1.0), observation("o2", "p1", value=2.0),
                 condition("c1", "p1")]
    first = load(db, write_json(tmp_path / "a" / "b.json", transaction(*resources)))
    assert first.unchanged == 0
    resources[2] = observation("o2", "p1", value=9.5)
    second = load(db, write_json(tmp_path / "b" / "b.json", transaction(*resources)))
    assert second.unchanged == 3 and second.written == {"Observation": 1} and second.removed == {"Observation": 1}
    assert rows(db, "SELECT ref, value FROM observation ORDER BY ref") == [("Observation/o1", 1.0), ("Observation/o2", 9.5)]
    assert rows(db, "SELECT number FROM facts WHERE resource_id = 'o2' AND path = 'valueQuantity.value'") == [(9.5,)]
    assert rows(db, "SELECT count(*) FROM facts WHERE resource_id = 'o1'") == rows(
        db, "SELECT count(*) FROM facts WHERE resource_id = 'o2'")
    assert rows(db, "SELECT count(*) FROM map_condition") == [(1,)]
    third = load(db, write_json(tmp_path / "b" / "b.json", transaction(*resources)))
    assert third.unchanged == 4 and not third.changed


def test_a_deleted_then_recreated_resource_is_stored_even_when_identical(db, tmp_path):
    load(db, write_json(tmp_path / "o.json", observation("o1")))
    deleted = {"resourceType": "Bundle", "type": "transaction",
               "entry": [{"request": {"method": "DELETE", "url": "Observation/o1"}},
                         {"fullUrl": "urn:uuid:o1", "resource": observation("o1")}]}
    report = load(db, write_json(tmp_path / "d.json", deleted))
    assert rows(db, "SELECT ref FROM observation") == [("Observation/o1",)]
    assert report.unchanged == 1 and not report.changed  # deleting and re-creating the same content: no change


def test_a_copy_repeated_in_later_files_is_stored_once_from_the_last_file(db, tmp_path):
    # Synthea repeats a practitioner in every patient's bundle: one part, one row, the last file's origin.
    doctor = {"resourceType": "Practitioner", "id": "dr1", "name": [{"family": "Osler"}]}
    for name in ("a", "b", "c"):
        write_json(tmp_path / "in" / f"{name}.json", transaction(patient(f"p-{name}"), doctor))
    report = load(db, tmp_path / "in")
    assert report.read["Practitioner"] == 3 and report.written["Practitioner"] == 1
    manifest = read_manifest(db)
    assert len(manifest.parts("resources/Practitioner")) == 1  # the repeats did not cut parts short
    origin = pq.read_table(db / manifest.parts("resources/Practitioner")[0]).column("origin").to_pylist()
    assert origin == [f"{tmp_path / 'in' / 'c.json'} entry[1]"]
    assert rows(db, "SELECT count(*) FROM facts WHERE resource_id = 'dr1' AND path = 'name[0].family'") == [(1,)]


def test_a_copy_repeated_after_its_deletion_in_one_ingest_is_stored(db, tmp_path):
    bundle = {"resourceType": "Bundle", "type": "transaction",
              "entry": [{"fullUrl": "urn:uuid:o1", "resource": observation("o1")},
                        {"request": {"method": "DELETE", "url": "Observation/o1"}},
                        {"fullUrl": "urn:uuid:o1", "resource": observation("o1")}]}
    load(db, write_json(tmp_path / "d.json", bundle))
    assert rows(db, "SELECT ref FROM observation") == [("Observation/o1",)]
    bundle["entry"].pop()  # now the deletion comes last: nothing is left
    load(db, write_json(tmp_path / "e.json", bundle))
    assert rows(db, "SELECT ref FROM observation") == []  # the view is empty, and still there


def _sorted_by(db, parts, keys):
    """Every part of a table is sorted by ``keys``."""
    return all(_file_sorted_by(db / rel, keys) for rel in ([parts] if isinstance(parts, str) else parts))


def _file_sorted_by(path, keys):
    table = pq.read_table(path)
    values = list(zip(*(table.column(k).to_pylist() for k in keys), strict=True))
    as_sortable = [tuple((v is None, v or "") for v in row) for row in values]  # nulls last
    return as_sortable == sorted(as_sortable)


@pytest.mark.parametrize("range_bytes", [1000, 1 << 30])
def test_ranged_sorting_writes_the_same_sorted_tables(tmp_path, range_bytes, monkeypatch):
    resources = [patient(f"p{i}") for i in range(12)]
    resources += [observation(f"o{i}", f"p{i % 12}", value=float(i)) for i in range(60)]
    resources += [{"resourceType": "Practitioner", "id": f"dr{i}"} for i in range(3)]  # no patient: nulls
    source = write_ndjson(tmp_path / "all.ndjson", resources)
    monkeypatch.setattr(generation_module, "SORT_RANGE_BYTES", range_bytes)  # 1000: a dozen ranges per table
    db = tmp_path / f"db-{range_bytes}"
    load(db, source)
    tables = read_manifest(db).tables
    for name, keys in (("resources/Observation", ["patient_id", "id"]), ("facts/Observation", ["patient_id"]),
                       ("resources/Practitioner", ["patient_id", "id"]), ("map/map_observation", ["patient_id", "ref"])):
        assert _sorted_by(db, tables[name], keys), name
    assert rows(db, "SELECT count(*) FROM observation") == [(60,)]
    assert rows(db, "SELECT count(*) FROM resources") == [(75,)]
    expected_facts = sum(len(flatten(r)) for r in resources)
    assert rows(db, "SELECT count(*) FROM facts") == [(expected_facts,)]
    # Re-ingest one changed observation: old rows kept, the replaced one gone, still sorted.
    resources[20] = observation("o8", "p8", value=-1.0)
    load(db, write_ndjson(tmp_path / "change.ndjson", [resources[20]]))
    tables = read_manifest(db).tables
    assert _sorted_by(db, tables["facts/Observation"], ["patient_id"])
    assert rows(db, "SELECT value FROM observation WHERE ref = 'Observation/o8'") == [(-1.0,)]
    assert rows(db, "SELECT count(*) FROM facts") == [(expected_facts,)]


def test_views_that_read_no_changed_table_are_carried_over(db, tmp_path):
    load(db, write_json(tmp_path / "a.json", transaction(patient("p1"), observation("o1", "p1"), condition("c1", "p1"))))
    before = read_manifest(db).tables
    load(db, write_json(tmp_path / "b.json", condition("c2", "p1")))
    after = read_manifest(db).tables
    assert after["view/observation"] == before["view/observation"]
    assert after["view/condition"] != before["view/condition"]
    assert rows(db, "SELECT count(*) FROM condition") == [(2,)]
    assert rows(db, "SELECT count(*) FROM observation") == [(1,)]


def test_an_edited_view_is_rebuilt_at_the_next_change(tmp_path):
    from fhirqa.project import data_dir
    from fhirqa.store.generation import build_generation
    from fhirqa.store.layout import Manifest
    from fhirqa.store.mappings import load_mappings
    from fhirqa.store.staging import Stager

    views = tmp_path / "views"
    views.mkdir()
    (views / "patient.sql").write_text((data_dir("views") / "patient.sql").read_text())
    shutil.copytree(data_dir("views") / "macros", views / "macros")
    db = tmp_path / "db"
    mappings = load_mappings()

    def generation(current, resource, number):
        stager = Stager(db / "tmp" / str(number), mappings)
        stager.add(resource, "p1" if resource["resourceType"] == "Patient" else None, "test", 0, False)
        stager.flush()
        return build_generation(db, current, db / "tmp" / str(number), mappings, views)[0]

    first = generation(Manifest(), patient("p1"), 1)
    (views / "patient.sql").write_text("SELECT patient_id, ref, 'edited' AS marker FROM map_patient")
    second = generation(first, {"resourceType": "Practitioner", "id": "dr1"}, 2)
    assert second.tables["view/patient"] != first.tables["view/patient"]
    assert pq.read_table(db / second.parts("view/patient")[0]).column("marker").to_pylist() == ["edited"]


class _ListSource:
    description = "test records"

    def __init__(self, records: list[RawRecord]) -> None:
        self._records = records

    def records(self) -> Iterator[RawRecord]:
        yield from self._records


def test_a_resource_json_cannot_hold_is_rejected_with_its_origin(db):
    record = RawRecord(Origin("api", 7), resource=observation("o1", valueInteger=2**70))
    good = RawRecord(Origin("api", 8), resource=observation("o2"))
    report = ingest([_ListSource([record, good])], db)
    assert [(r.origin, "cannot be stored as JSON" in r.reason) for r in report.rejected] == [("api:7", True)]
    assert report.read == {"Observation": 1}


@pytest.mark.parametrize(
    ("resource", "message"),
    [
        (observation(subject="Patient/p1"), "Observation.subject must be a Reference object"),
        (observation(subject={"reference": 42}), "Observation.subject.reference must be a string"),
        (observation(effectiveDateTime="yesterday"), "Observation.effectiveDateTime = 'yesterday' is not a FHIR"),
        (observation(note=[{"text": "x" * 17_000_000}]), "Observation.note[0].text is a 17,000,000-character"),
    ],
)
def test_ingest_quarantines_what_the_walk_finds_with_file_and_line(db, tmp_path, resource, message):
    path = write_ndjson(tmp_path / "in.ndjson", [observation("ok"), resource])
    report = load(db, path)
    assert [(r.origin, r.reason.startswith(message)) for r in report.rejected] == [(f"{path}:2", True)]
    quarantined = [json.loads(line) for line in report.quarantine.read_text().splitlines()]
    assert quarantined[0]["origin"] == f"{path}:2" and quarantined[0]["content"]["id"] == "o1"
    with pytest.raises(IngestAborted, match=re.escape(f"in.ndjson:2: {message}")):
        load(tmp_path / "strict-db", path, strict=True)
