"""The C walks (``fhirqa.normalize._walk``) give exactly what their Python reference implementations give.

Same facts (paths, type codes, value texts, numbers, nulls), same verdicts on bad resources, same
reference rewrites and dangling flags: on generated input, on odd values (subclasses, huge integers,
non-ASCII text, deep nesting) and on the example patients. Skipped when the extension is not built.
"""

from __future__ import annotations

import copy
import enum
from array import array
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhirqa.normalize import native
from fhirqa.normalize.flatten import FactColumns
from fhirqa.normalize.references import _rewrite_python, relative_reference, rewrite_references
from fhirqa.normalize.validate import InvalidResource
from fhirqa.store.staging import FACT_SCHEMA

pytestmark = pytest.mark.skipif(not native.available(), reason="the C walks are not built here")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sample"

_KEYS = st.sampled_from(
    ["reference", "subject", "patient", "encounter", "date", "start", "end", "issued", "lastUpdated", "code",
     "value", "display", "valueQuantity", "extension", "url", "_birthDate", "naïve", "ключ"]
)
_DATES = st.sampled_from(["2024", "2024-03", "2024-03-01", "2024-03-01T08:00", "2024-03-01T08:00:00Z",
                          "2024-03-01T08:00:00.123+02:00", "2024-03-01T08:00:00.+02:00", "2024-03-01T08",
                          "２０２４", "2024-03-01\n", "2024-03-01T08:00:00Z ", "yesterday", ""])
_PRIMITIVES = st.one_of(
    st.text(max_size=10), _DATES, st.booleans(), st.integers(-(2**63), 2**63 - 1), st.none(),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.1, 1e-7, 1e16, -0.0, 5.0, 123456789.125]),
)
_JSON = st.recursive(
    _PRIMITIVES,
    lambda children: st.one_of(
        st.lists(children, min_size=0, max_size=3),
        st.dictionaries(_KEYS, children, min_size=0, max_size=4),
    ),
    max_leaves=30,
)
_RESOURCES = st.dictionaries(_KEYS, _JSON, max_size=6).map(lambda d: {"resourceType": "Basic", "id": "x", **d})


def _run(resource: dict, use_native: bool, max_string: int, long_strings: bool) -> tuple:
    columns = FactColumns(use_native=use_native)
    columns.add_resource({"resourceType": "Basic", "id": "before", "code": "kept"}, "p")  # a row already there
    try:
        columns.add_checked(resource, "p", 7, max_string, long_strings=long_strings)
        verdict = None
    except InvalidResource as exc:
        verdict = str(exc)
    return verdict, columns.to_arrow(FACT_SCHEMA).to_pylist()


@settings(max_examples=500, deadline=None)
@given(_RESOURCES, st.integers(min_value=1, max_value=40))
def test_the_c_walk_emits_and_rejects_exactly_what_the_python_walk_does(resource, max_string):
    long_strings = len(orjson.dumps(resource)) > max_string
    assert _run(resource, True, max_string, long_strings) == _run(resource, False, max_string, long_strings)


class Color(enum.IntEnum):
    RED = 1


class Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [2**70, -(2**64), Color.RED, Text("sub"), (1, 2), {"nested": [Text("a"), 2**65]}, float("inf"), 1e300, "é🙂",
     {"ref": {"reference": "Patient/1"}}, [[[]]], {}],
    ids=repr,
)
def test_odd_values_take_the_same_road(value):
    resource = {"resourceType": "Basic", "id": "x", "item": value, "list": [value]}
    for long_strings in (False, True):
        assert _run(resource, True, 10**6, long_strings) == _run(resource, False, 10**6, long_strings)


def test_a_rejected_resource_leaves_nothing_behind_and_names_the_field():
    columns = FactColumns(use_native=True)
    with pytest.raises(InvalidResource, match=r"Basic\.subject must be a Reference object"):
        columns.add_checked({"resourceType": "Basic", "id": "x", "code": "a", "subject": "Patient/1"}, "p",
                            long_strings=False)
    assert len(columns) == 0


def test_deep_nesting_is_refused_as_in_python_not_by_a_crash():
    deep: dict = {}
    node = deep
    for _ in range(100_000):
        node["a"] = {}
        node = node["a"]
    columns = FactColumns(use_native=True)
    with pytest.raises(RecursionError):
        columns.add_resource({"resourceType": "Basic", "id": "x", "deep": deep}, "p")


def test_the_example_patients_flatten_identically():
    for path in sorted(EXAMPLES.glob("*.json")):
        bundle = orjson.loads(path.read_bytes())
        fast, slow = FactColumns(use_native=True), FactColumns(use_native=False)
        for entry in bundle["entry"]:
            fast.add_checked(entry["resource"], "p", long_strings=False)
            slow.add_checked(entry["resource"], "p", long_strings=False)
        assert fast.to_arrow(FACT_SCHEMA).equals(slow.to_arrow(FACT_SCHEMA)), path.name


def _part_rows(resources: list[tuple[dict, str | None]], use_native: bool) -> tuple[list, list]:
    columns = FactColumns(use_native=use_native)
    for resource, patient in resources:
        columns.add_checked(resource, patient, long_strings=False)
    table = columns.part_table()
    return [str(f.type) for f in table.schema], table.to_pylist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_RESOURCES, st.sampled_from(["p2", "p1", None, "p10", "é"])), max_size=6))
def test_a_part_table_is_the_same_from_either_walk_and_sorted_by_patient(batch):
    resources = [({**resource, "id": f"r{i}"}, patient) for i, (resource, patient) in enumerate(batch)]
    valid = []
    for resource, patient in resources:  # the checks reject some generated resources: keep the others
        try:
            FactColumns(use_native=False).add_checked(resource, patient, long_strings=False)
        except InvalidResource:
            continue
        valid.append((resource, patient))
    types, rows = _part_rows(valid, True)
    assert (types, rows) == _part_rows(valid, False)
    # Rows are every resource's facts, resources in patient order (stable; patientless last), facts in document order.
    expected = []
    for resource, patient in sorted(valid, key=lambda rp: (rp[1] is None, rp[1] or "")):
        one = FactColumns(use_native=False)
        one.add_resource(resource, patient)
        expected.extend({k: v for k, v in row.items() if k != "seq"} for row in one.to_arrow(FACT_SCHEMA).to_pylist())
    assert rows == expected


def test_export_refuses_a_range_outside_the_rows():
    columns = FactColumns(use_native=True)
    columns.add_resource({"resourceType": "Basic", "id": "x", "code": "a"}, "p")
    sink = columns._sink
    with pytest.raises(ValueError, match="outside the rows"):
        sink.export(array("q", [0, 5]))
    with pytest.raises(ValueError, match="int64 pairs"):
        sink.export(b"123")


_REFERENCES = st.sampled_from(["urn:uuid:a", "urn:uuid:b", "urn:uuid:gone", "urn:oid:1.2", "Patient/1",
                               "https://x.org/fhir/Encounter/e1/_history/2", "#contained", "Patient?identifier=1",
                               "Unknown/1", "urné", ""])
_REF_TREE = st.recursive(
    st.one_of(_REFERENCES, st.integers(), st.none()),
    lambda children: st.one_of(
        st.lists(children, min_size=0, max_size=3),
        st.dictionaries(st.sampled_from(["reference", "subject", "item", "x"]), children, min_size=0, max_size=3),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_REF_TREE)
def test_the_c_reference_rewrite_matches_the_python_one(tree):
    full_urls = {"urn:uuid:a": "Patient/a", "urn:uuid:b": "Encounter/b"}
    fast, slow = copy.deepcopy(tree), copy.deepcopy(tree)
    dangles = native.WALK.rewrite_references(fast, full_urls, relative_reference) if isinstance(fast, dict | list) \
        else None
    expected = _rewrite_python(slow, full_urls)
    assert fast == slow
    if isinstance(tree, dict | list):
        assert dangles == expected


def test_containers_the_c_rewrite_does_not_handle_go_to_python():
    class Node(dict):
        pass

    tree = {"subject": Node(reference="urn:uuid:a"), "x": [{"reference": "urn:uuid:a"}]}
    assert native.WALK.rewrite_references(tree, {"urn:uuid:a": "Patient/a"}, relative_reference) is None
    dangling: list[str] = []
    rewrite_references(tree, {"urn:uuid:a": "Patient/a"}, dangling)
    assert tree == {"subject": {"reference": "Patient/a"}, "x": [{"reference": "Patient/a"}]} and not dangling
