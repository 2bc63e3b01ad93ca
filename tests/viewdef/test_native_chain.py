"""The C chains (``fhirqa.viewdef._chain``) produce exactly the rows of the Python closures they mirror.

Checked on the canonical maps over the example patients, over generated resources that hit every
branch (repeating elements, JSON nulls in lists, missing and present choice types, references), and
on the SQL-on-FHIR conformance suite. Skipped when the extension is not built.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
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


def test_the_c_chain_numbers_its_step_kinds_like_chain_py():
    assert chain._compiled.STEP_KINDS == chain.WHERE_CHAIN + 1


# Every step kind, over JSON with repeating elements, nulls in lists, choice elements present and absent,
# odd data (a non-list extension, a string where a dict is expected): the C chain equals chain.walk.
_KEYS = st.sampled_from(["value", "valueString", "valueQuantity", "reference", "a", "extension", "url", "resourceType"])
_TREES = st.recursive(
    st.one_of(st.sampled_from(["Patient/1", "urn:uuid:9", "x", "u", "Patient"]), st.integers(0, 2), st.booleans(),
              st.none()),
    lambda children: st.one_of(st.dictionaries(_KEYS, children, max_size=5), st.lists(children, max_size=3)),
    max_leaves=18,
)
_STEP = st.one_of(
    st.tuples(st.just(chain.MEMBER), st.sampled_from(["value", "a", "reference", "extension", "url"]), st.booleans()),
    st.tuples(st.just(chain.CHOICE), st.sampled_from(["valueString", "valueQuantity"]),
              st.sampled_from([("value", "string"), ("value", "Quantity")])),
    st.tuples(st.sampled_from([chain.FIRST, chain.LAST]), st.none(), st.none()),
    st.tuples(st.just(chain.INDEX), st.integers(-1, 2), st.none()),
    st.tuples(st.just(chain.REFKEY), st.sampled_from([None, "Patient"]), st.none()),
    st.tuples(st.just(chain.TYPE), st.just("Patient"), st.none()),
    st.tuples(st.just(chain.OFTYPE), st.sampled_from(["string", "integer", "boolean"]), st.none()),
    st.tuples(st.just(chain.WHERE_EQ),
              st.lists(st.tuples(st.sampled_from(["url", "a", "value"]), st.sampled_from(["u", "x", True, False])),
                       min_size=1, max_size=2).map(tuple), st.none()),
    st.tuples(st.just(chain.EXT), st.sampled_from(["u", "x"]), st.none()),
    st.tuples(st.just(chain.WHERE_CHAIN),
              st.lists(st.tuples(st.just(chain.MEMBER), st.sampled_from(["a", "url", "value"]), st.booleans()),
                       min_size=1, max_size=2).map(tuple), st.booleans()),
)


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - both paths must fail alike
        return ("error", type(exc).__name__)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_TREES, max_size=3), st.lists(_STEP, min_size=1, max_size=5).map(tuple))
def test_the_c_chain_equals_walk_on_every_step_kind(focus, steps):
    native = chain._compiled.Chain(steps, chain.walk, chain.reference_key, chain.CHOICE_SUFFIXES)
    env = chain.Env()
    assert _outcome(native, focus, env) == _outcome(chain.walk, focus, env, steps)
    assert _outcome(native, focus, focus, env) == _outcome(chain.walk, focus, env, steps)  # as an invocation


# Views that exercise the C row assembly: shared prefixes, forEach / forEachOrNull / unionAll / nested selects,
# collection columns, joins and fused where() / extension() steps, on generated patients.
_NAME = st.fixed_dictionaries({}, optional={
    "use": st.sampled_from(["official", "usual", 3]), "family": st.one_of(st.text(max_size=2), st.integers(0, 2)),
    "given": st.lists(st.one_of(st.text(max_size=2), st.none(), st.integers(0, 1)), max_size=3),
    "period": st.fixed_dictionaries({}, optional={"start": st.just("2020"), "end": st.just("2021")}),
})
_PATIENTS = st.fixed_dictionaries({"resourceType": st.just("Patient"), "id": st.just("p")}, optional={
    "name": st.lists(st.one_of(_NAME, st.none()), max_size=3),
    "telecom": st.lists(st.fixed_dictionaries({}, optional={"system": st.sampled_from(["phone", "email"]),
                                                            "value": st.text(max_size=2)}), max_size=2),
    "extension": st.lists(st.fixed_dictionaries({"url": st.sampled_from(["r", "e"])}, optional={
        "valueString": st.text(max_size=2),
        "extension": st.lists(st.fixed_dictionaries({"url": st.sampled_from(["text", "omb"])},
                                                    optional={"valueCoding": st.fixed_dictionaries(
                                                        {}, optional={"code": st.sampled_from(["1", "2"])})}),
                              max_size=2)}), max_size=2),
    "deceasedBoolean": st.booleans(),
    "managingOrganization": st.fixed_dictionaries({}, optional={"reference": st.sampled_from(["Organization/o", "x"])}),
})
_VIEW = {"resource": "Patient", "select": [
    {"column": [
        {"name": "id", "path": "getResourceKey()"},
        {"name": "family", "path": "name.where(use = 'official' or use = 'usual').first().family"},
        {"name": "given", "path": "name.where(use = 'official' or use = 'usual').first().given.join(' ')"},
        {"name": "first_given", "path": "name.first().given.first()"},
        {"name": "all_given", "path": "name.given", "collection": True},
        {"name": "race", "path": "extension('r').extension('omb').value.ofType(Coding).code.first()"},
        {"name": "race_text", "path": "extension('r').value.ofType(string).first()"},
        {"name": "dead", "path": "deceased.ofType(boolean)"},
        {"name": "org", "path": "managingOrganization.getReferenceKey(Organization)"},
        {"name": "phones", "path": "telecom.where(system = 'phone').value.join(',')"},
        {"name": "has_period", "path": "name.where(period.exists()).exists()"},
    ]},
    {"forEachOrNull": "name", "column": [
        {"name": "row", "path": "%rowIndex"},
        {"name": "n_family", "path": "family"},
        {"name": "n_start", "path": "period.start"}],
     "select": [{"forEach": "given", "column": [{"name": "g", "path": "$this"}]}]},
    {"unionAll": [
        {"forEach": "telecom", "column": [{"name": "kind", "path": "system"}, {"name": "v", "path": "value"}]},
        {"forEach": "extension", "column": [{"name": "kind", "path": "url"}, {"name": "v", "path": "value.ofType(string)"}]},
    ]},
]}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PATIENTS)
def test_generated_views_assemble_the_same_rows_in_c(resource):
    assert _rows(_VIEW, [resource], True) == _rows(_VIEW, [resource], False)


def test_an_evaluation_error_is_reported_alike_on_both_paths():
    definition = {"resourceType": "ViewDefinition", "resource": "Patient", "name": "v",
                  "select": [{"column": [{"name": "m", "path": "name.family.matches('(')"},
                                         {"name": "w", "path": "name.where(use)"}]}]}
    # a FHIRPath error (a where() criterion of two booleans) and a Python one (re.error of a bad pattern)
    for patient in ({"resourceType": "Patient", "id": "p", "name": [{"use": [True, False]}]},
                    {"resourceType": "Patient", "id": "q", "name": [{"family": "a"}]}):
        native, python = _rows(definition, [patient], True), _rows(definition, [patient], False)
        assert native == python
        assert native[0][0] == "error" and f"Patient/{patient['id']}" in native[0][1]


def test_a_compiled_view_is_freed():
    import gc
    import weakref

    view = _compiled(load_mappings()["Observation"].definition, True)
    ref = weakref.ref(view)
    del view
    gc.collect()
    assert ref() is None
