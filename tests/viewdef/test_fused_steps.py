"""Fused chain steps give the rows of the generic functions they replace.

``where(member = 'text' or …)``, ``where(flag = true)``, ``where(<navigation>.exists())`` / ``.empty()`` and
``extension('url')`` compile into chain steps (and ``chain.join('sep')`` into one call with the C extension).
Each is checked against a spelling the compiler cannot fuse (``… or false``, a url built with ``|``), which
runs the generic ``where()`` / ``extension()``. Runs on whichever path is active (C, or Python with
``FHIRQA_PURE_PYTHON=1``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fhirqa.viewdef import ViewDefinitionError, compile_fhirpath, compile_view
from fhirqa.viewdef.chain import EXT, WHERE_CHAIN, WHERE_EQ

_TEXT = st.sampled_from(["x", "y", "z"])
_FLAG = st.one_of(st.booleans(), st.integers(0, 1), st.sampled_from(["true", "x"]), st.none())
_SCALAR = st.one_of(_TEXT, _FLAG, st.lists(st.one_of(_TEXT, st.none(), st.booleans()), max_size=2))
_ITEM = st.fixed_dictionaries(
    {}, optional={"system": _SCALAR, "use": _SCALAR, "focal": _FLAG, "data": st.one_of(_SCALAR, st.just({})),
                  "coding": st.lists(st.fixed_dictionaries({}, optional={"code": _SCALAR}), max_size=2),
                  "url": st.sampled_from(["u", "v", 1]), "value": _TEXT},
)
_EXTENSIONS = st.lists(st.one_of(
    st.fixed_dictionaries({"url": st.sampled_from(["u", "v"])},
                          optional={"valueString": _TEXT, "extension": st.lists(_ITEM, max_size=2)}),
    st.none(), _TEXT), max_size=3)
RESOURCES = st.fixed_dictionaries(
    {"resourceType": st.just("Patient"), "id": st.just("p")},
    optional={"name": st.one_of(st.lists(st.one_of(_ITEM, st.none()), max_size=3), _ITEM),
              "extension": st.one_of(_EXTENSIONS, st.just({"url": "u"}), st.just("u"))},
)

# (fused, generic): the same criterion, once in a shape the compiler fuses and once in one it cannot.
PAIRS = [
    ("name.where(system = 'x').use", "name.where(system = 'x' or false).use"),
    ("name.where('y' = use).first().system", "name.where('y' = use or false).first().system"),
    ("name.where(system = 'x' or use = 'y').system", "name.where(system = 'x' or use = 'y' or false).system"),
    ("name.where(focal = true).use", "name.where(focal = true or false).use"),
    ("name.where(focal = false).use", "name.where(focal = false or false).use"),
    ("name.where(data.exists()).use", "name.where(data.exists() or false).use"),
    ("name.where(coding.where(code = 'x').empty()).use", "name.where(coding.where(code = 'x').empty() or false).use"),
    ("extension('u').value.ofType(string)", "extension('u' | 'u').value.ofType(string)"),
    ("extension('u').extension('v').system", "extension('u' | 'u').extension('v' | 'v').system"),
    ("name.system.join(',')", "name.system.join(',' | ',')"),
    ("name.use.join()", "name.use.join('' | '')"),
]


def _run(path: str, resource: dict) -> Any:
    try:
        return compile_fhirpath(path).evaluate(resource)
    except ViewDefinitionError as exc:
        return ("error", type(exc).__name__)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RESOURCES)
def test_fused_steps_agree_with_the_generic_functions(resource: dict) -> None:
    for fused, generic in PAIRS:
        assert _run(fused, resource) == _run(generic, resource), (fused, resource)


def test_the_fusable_shapes_compile_to_chain_steps() -> None:
    def kinds(path: str) -> list[int]:
        expr = compile_fhirpath(path).expr
        steps = getattr(expr, "steps", None)
        if steps is None:  # the pure-Python walk: a partial over the steps
            steps = expr.keywords["steps"]  # type: ignore[attr-defined]
        return [kind for kind, _, _ in steps]

    assert WHERE_EQ in kinds("name.where(use = 'official' or use = 'usual').family")
    assert WHERE_EQ in kinds("insurance.where(focal = true).coverage")
    assert WHERE_CHAIN in kinds("presentedForm.where(data.exists()).first().url")
    assert EXT in kinds("extension('http://x/race').extension('text').value.ofType(string)")


def test_a_boolean_literal_only_matches_a_json_boolean() -> None:
    resource = {"resourceType": "Patient", "name": [{"focal": 1, "use": "a"}, {"focal": True, "use": "b"},
                                                     {"focal": "true", "use": "c"}, {"focal": [True], "use": "d"}]}
    assert compile_fhirpath("name.where(focal = true).use").evaluate(resource) == ["b", "d"]


def test_a_where_on_an_exists_keeps_items_whose_navigation_is_not_empty() -> None:
    resource = {"resourceType": "DiagnosticReport",
                "presentedForm": [{"url": "u1"}, {"data": "QQ==", "contentType": "text/plain"}, {"data": [None]}]}
    assert compile_fhirpath("presentedForm.where(data.exists()).first().contentType").evaluate(resource) == [
        "text/plain"]
    assert compile_fhirpath("presentedForm.where(data.empty()).url").evaluate(resource) == ["u1"]


def test_join_falls_back_to_the_string_forms_of_other_values() -> None:
    resource = {"resourceType": "Patient", "name": [{"use": 1}, {"use": True}, {"use": "x"}, {"use": 2.5}]}
    assert compile_fhirpath("name.use.join('/')").evaluate(resource) == ["1/true/x/2.5"]
    assert compile_fhirpath("name.family.join('/')").evaluate(resource) == [""]


def test_columns_sharing_a_prefix_see_the_same_items() -> None:
    view = compile_view({"resource": "Observation", "select": [{"column": [
        {"name": "unit", "path": "value.ofType(Quantity).unit"},
        {"name": "value", "path": "value.ofType(Quantity).value"},
        {"name": "codes", "path": "code.coding.code", "collection": True},
        {"name": "first_code", "path": "code.coding.first().code"},
        {"name": "loinc", "path": "code.coding.where(system = 'http://loinc.org').code"},
        {"name": "text", "path": "code.text"},
    ]}]})
    observation = {"resourceType": "Observation", "id": "o", "valueQuantity": {"value": 5.5, "unit": "mg"},
                   "code": {"coding": [{"system": "local", "code": "L1"}, {"system": "http://loinc.org", "code": "1-8"}]}}
    assert view.rows(observation) == [("mg", 5.5, ["L1", "1-8"], "L1", "1-8", None)]
