"""Flattening is lossless: every primitive becomes one fact, and the facts rebuild the resource."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fhirqa.normalize.flatten import FactColumns, flatten, unflatten
from tests.builders import observation

keys = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu")), min_size=1, max_size=8)
primitives = st.one_of(
    st.text(max_size=20), st.booleans(), st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
)
# FHIR JSON never holds empty objects or arrays, so the generator does not either.
json_values = st.recursive(
    primitives,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=4),
        st.dictionaries(keys, children, min_size=1, max_size=4),
    ),
    max_leaves=30,
)
resources = st.dictionaries(keys, json_values, min_size=1, max_size=6).map(
    lambda d: {"resourceType": "Basic", "id": "x", **d}
)


@settings(deadline=None)
@given(resources)
def test_flatten_then_unflatten_returns_the_same_resource(resource):
    assert unflatten(flatten(resource)) == resource


@settings(deadline=None)
@given(resources)
def test_every_primitive_becomes_exactly_one_fact(resource):
    def count(node):
        if isinstance(node, dict):
            return sum(count(v) for v in node.values())
        if isinstance(node, list):
            return sum(count(v) for v in node)
        return 1

    assert len(flatten(resource)) == count(resource)


def test_paths_carry_array_indices_and_types():
    facts = dict((path, (kind, value)) for path, kind, value in flatten(observation(value=5.4)))
    assert facts["code.coding[0].code"] == ("string", "2823-3")
    assert facts["valueQuantity.value"] == ("number", "5.4")


def test_fact_columns_tag_each_fact_with_patient_type_and_id():
    columns = FactColumns()
    columns.add_resource(observation("o7", "p3"), "p3")
    assert set(columns.resource_id) == {"o7"} and set(columns.patient_id) == {"p3"}
    index = columns.path.index("valueQuantity.value")
    assert columns.number[index] == 4.1 and columns.value_type[index] == "number"
