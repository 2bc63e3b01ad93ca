"""The C chains (``fhirqa.viewdef._chain``) produce exactly the rows of the Python closures they mirror.

Checked on the canonical maps over the example patients, over generated resources that hit every
branch (repeating elements, JSON nulls in lists, missing and present choice types, references), and
on the SQL-on-FHIR conformance suite. Skipped when the extension is not built.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhirqa.store.mappings import load_mappings
from fhirqa.viewdef import ViewDefinitionError, chain, compile_view
from fhirqa.viewdef.conformance import run_suite

pytestmark = pytest.mark.skipif(chain._compiled is None, reason="the C chains are not built here")

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT.parent / "shared" / "data" / "sql-on-fhir-v2" / "tests"


def _compiled(definition: dict, native: bool):
    with pytest.MonkeyPatch.context() as patch:  # the choice is made when the view is compiled
        patch.setattr(chain, "NATIVE", chain._compiled if native else None)
        return compile_view(definition)


def _rows(definition: dict, resources: list[dict], native: bool) -> list:
    view = _compiled(definition, native)
    out: list = []
    for resource in resources:
        try:
            out.append(view.rows(resource))
        except ViewDefinitionError as exc:
            out.append(("error", str(exc)))
    return out


def _example_resources() -> list[dict]:
    return [entry["resource"] for path in sorted((ROOT / "examples" / "sample").glob("*.json"))
            for entry in orjson.loads(path.read_bytes())["entry"]]


def test_every_canonical_map_gives_the_same_rows_on_the_example_patients():
    resources = _example_resources()
    for mapping in load_mappings().values():
        mine = [r for r in resources if r["resourceType"] == mapping.resource_type]
        assert _rows(mapping.definition, mine, True) == _rows(mapping.definition, mine, False)


_CODING = st.fixed_dictionaries({}, optional={"system": st.sampled_from(["http://loinc.org", "http://snomed.info/sct"]),
                                              "code": st.sampled_from(["1", "2"]), "display": st.text(max_size=3)})
_CONCEPT = st.fixed_dictionaries({}, optional={"text": st.text(max_size=3),
                                               "coding": st.lists(st.one_of(_CODING, st.none()), max_size=3)})
_QUANTITY = st.fixed_dictionaries({}, optional={"value": st.one_of(st.integers(), st.floats(allow_nan=False)),
                                                "unit": st.text(max_size=3), "comparator": st.just("<")})
_OBSERVATIONS = st.fixed_dictionaries(
    {"resourceType": st.just("Observation"), "id": st.just("o1")},
    optional={
        "status": st.sampled_from(["final", "amended"]),
        "code": _CONCEPT,
        "category": st.lists(_CONCEPT, max_size=2),
        "valueQuantity": _QUANTITY,
        "valueCodeableConcept": _CONCEPT,
        "valueString": st.text(max_size=3),
        "value": st.just({"weird": True}),  # a base name present: the choice fallback must run
        "effectiveDateTime": st.just("2024-01-02"),
        "effectivePeriod": st.fixed_dictionaries({}, optional={"start": st.just("2024-01-01")}),
        "encounter": st.fixed_dictionaries({}, optional={"reference": st.sampled_from(["Encounter/e1", "urn:uuid:x"])}),
        "component": st.lists(st.fixed_dictionaries({"code": _CONCEPT}, optional={"valueQuantity": _QUANTITY}),
                              max_size=3),
        "referenceRange": st.lists(st.fixed_dictionaries({}, optional={"low": _QUANTITY, "text": st.text(max_size=2)}),
                                   max_size=2),
    },
)


@settings(max_examples=300, deadline=None)
@given(_OBSERVATIONS)
def test_generated_observations_map_identically(resource):
    definition = load_mappings()["Observation"].definition
    assert _rows(definition, [resource], True) == _rows(definition, [resource], False)


def test_a_column_with_too_many_values_is_still_named():
    definition = {"resourceType": "ViewDefinition", "resource": "Patient",
                  "select": [{"column": [{"name": "given", "path": "name.given"}]}]}
    patient = {"resourceType": "Patient", "id": "p", "name": [{"given": ["A", "B"]}]}
    for native in (True, False):
        view = _compiled(definition, native)
        with pytest.raises(ViewDefinitionError, match="'given'.*2 values"):
            view.rows(patient)


@pytest.mark.shared
def test_the_conformance_suite_passes_on_both_paths(monkeypatch):
    if not SUITE.is_dir():
        pytest.skip("../shared/data/sql-on-fhir-v2 is absent")
    totals = []
    for native in (True, False):
        monkeypatch.setattr(chain, "NATIVE", chain._compiled if native else None)
        report = run_suite(SUITE)
        totals.append((report.shareable_passed, report.shareable_total))
    assert totals[0] == totals[1] == (123, 123)
