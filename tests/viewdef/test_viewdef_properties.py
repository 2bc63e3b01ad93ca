"""Property tests: the compiled FHIRPath agrees with a naive reference, and never crashes oddly."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fhirqa.viewdef import ViewDefinitionError, compile_fhirpath, compile_view
from fhirqa.viewdef.chain import CHOICE, FIRST, INDEX, LAST, MEMBER, REFKEY, Env, fast_chain, walk
from fhirqa.viewdef.functions import supported_functions
from fhirqa.viewdef.parser import parse
from fhirqa.viewdef.values import arithmetic, compare

# Element names that are plain (not FHIRPath keywords, not choice-type bases, lower-case).
KEYS = st.sampled_from(["a", "b", "c", "item", "code", "node"])
LEAVES = st.one_of(st.text(max_size=3), st.integers(-5, 5), st.booleans(), st.none())


def json_trees(depth: int = 3) -> st.SearchStrategy[Any]:
    return st.recursive(
        LEAVES,
        lambda children: st.one_of(
            st.dictionaries(KEYS, children, max_size=4),
            st.lists(children, max_size=3),
        ),
        max_leaves=20,
    )


ROOTS = st.dictionaries(KEYS, json_trees(), max_size=4)


def naive_path(root: dict, steps: list[tuple[str, Any]]) -> list:
    """Reference semantics written the obvious way: collections all the way down."""
    coll: list = [root]
    for kind, arg in steps:
        if kind == "member":
            out: list = []
            for item in coll:
                if isinstance(item, dict) and arg in item:
                    v = item[arg]
                    out.extend(v if isinstance(v, list) else [v])
            coll = [v for v in out if v is not None]
        elif kind == "first":
            coll = coll[:1]
        else:
            coll = coll[arg : arg + 1]
    return coll


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("member"), KEYS),
        st.tuples(st.just("first"), st.none()),
        st.tuples(st.just("index"), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=5,
).filter(lambda steps: steps[0][0] == "member")


def render(steps: list[tuple[str, Any]]) -> str:
    text = ""
    for kind, arg in steps:
        if kind == "member":
            text += ("." if text else "") + arg
        elif kind == "first":
            text += ".first()"
        else:
            text += f"[{arg}]"
    return text


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(root=ROOTS, steps=STEPS)
def test_path_extraction_matches_a_naive_walk(root: dict, steps: list) -> None:
    assert compile_fhirpath(render(steps)).evaluate(root) == naive_path(root, steps)


@settings(max_examples=200)
@given(root=ROOTS, steps=STEPS)
def test_exists_and_count_agree_with_the_path(root: dict, steps: list) -> None:
    expected = naive_path(root, steps)
    assert compile_fhirpath(render(steps) + ".exists()").evaluate(root) == [bool(expected)]
    assert compile_fhirpath(render(steps) + ".count()").evaluate(root) == [len(expected)]


FHIRPATH_ALPHABET = st.sampled_from(
    list("abcnmeu .()[]'`%$@,+-*/&|=~<>!{}0123456789T:Z")
    + ["where", "first()", "exists", "and", "or", "div", "is", "as", "ofType(", "$this", "%rowIndex", "true", "'x'"]
)


@settings(max_examples=500)
@given(st.one_of(st.text(max_size=30), st.lists(FHIRPATH_ALPHABET, max_size=15).map("".join)))
def test_parser_raises_only_its_own_errors(text: str) -> None:
    try:
        parse(text)
    except ViewDefinitionError:
        pass


NAMES = ["name", "given", "family", "code", "coding", "value", "id", "extension", "url", "subject", "reference"]
LITERALS = ["'x'", "1", "0", "-2", "2.5", "@2020-01-01", "@T10:00", "true", "false", "{}", "5 'mg'"]
TYPES = ["Quantity", "string", "dateTime", "CodeableConcept", "Patient", "integer", "boolean", "code"]
OPERATORS = ["and", "or", "xor", "implies", "=", "!=", "~", "<", ">=", "+", "-", "*", "/", "div", "mod", "&", "|", "in", "contains"]


def _grow(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    funcs = st.sampled_from(supported_functions())
    return st.one_of(
        st.tuples(children, st.sampled_from(NAMES)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(children, funcs, st.lists(children, max_size=2)).map(lambda t: f"{t[0]}.{t[1]}({', '.join(t[2])})"),
        st.tuples(children, funcs, st.sampled_from(TYPES)).map(lambda t: f"{t[0]}.{t[1]}({t[2]})"),
        st.tuples(children, st.sampled_from(OPERATORS), children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, st.integers(-1, 3)).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(children, st.sampled_from(["is", "as"]), st.sampled_from(TYPES)).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    )


# Well-formed (if mostly meaningless) FHIRPath built from the grammar, so evaluation is reached.
EXPRESSIONS = st.recursive(
    st.sampled_from(NAMES + LITERALS + ["$this", "%resource", "%rowIndex", "getResourceKey()", "$index"]),
    _grow,
    max_leaves=10,
)
SAMPLE_PATIENT = {
    "resourceType": "Patient",
    "id": "p1",
    "name": [{"family": "Smith", "given": ["Ann", "Bo"]}, {"given": ["C"]}],
    "extension": [{"url": "u", "valueCode": "F"}, {"url": "q", "valueQuantity": {"value": 1.5, "code": "mg"}}],
    "managingOrganization": {"reference": "Organization/o1"},
}


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, st.booleans())
def test_compiled_views_raise_only_view_definition_errors(expression: str, collection: bool) -> None:
    """Whatever the expression does to the data, callers only ever see ViewDefinitionError."""
    column = {"name": "c", "path": expression, "collection": collection}
    try:
        compile_view({"resource": "Patient", "select": [{"column": [column]}]}).rows(SAMPLE_PATIENT)
    except ViewDefinitionError:
        pass


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6))
def test_integer_arithmetic_round_trips(a: int, b: int) -> None:
    assert arithmetic("-", arithmetic("+", a, b), b) == a
    assert compare(a, b) == -compare(b, a)  # type: ignore[operator]


@given(st.decimals(-1000, 1000, places=2, allow_nan=False), st.decimals(-1000, 1000, places=2, allow_nan=False))
def test_decimal_addition_is_exact_at_two_places(a: Any, b: Any) -> None:
    assert arithmetic("+", float(a), float(b)) == float(a + b)


@given(st.lists(st.dictionaries(st.just("family"), st.text(max_size=3), max_size=1), max_size=4))
def test_for_each_row_counts(names: list[dict]) -> None:
    patient = {"resourceType": "Patient", "id": "p", "name": names}
    each = compile_view({"resource": "Patient", "select": [{"forEach": "name", "column": [{"name": "f", "path": "family"}]}]})
    or_null = compile_view({"resource": "Patient", "select": [{"forEachOrNull": "name", "column": [{"name": "f", "path": "family"}]}]})
    assert len(each.rows(patient)) == len(names)
    assert len(or_null.rows(patient)) == max(1, len(names))


# The fast chain evaluator must agree with the generic walk on every chain shape, including
# choice elements (value/valueString/valueQuantity), references and JSON nulls in arrays.
CHOICE_KEYS = st.sampled_from(["value", "valueString", "valueQuantity", "reference", "a", "b"])
CHOICE_TREES = st.recursive(
    st.one_of(st.sampled_from(["Patient/1", "urn:uuid:9", "x"]), st.integers(0, 3), st.none()),
    lambda children: st.one_of(st.dictionaries(CHOICE_KEYS, children, max_size=4), st.lists(children, max_size=3)),
    max_leaves=15,
)
CHAIN_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just(MEMBER), st.sampled_from(["value", "a", "b", "reference"]), st.booleans()),
        st.tuples(st.just(CHOICE), st.sampled_from(["valueString", "valueQuantity"]), st.sampled_from([("value", "string"), ("value", "Quantity")])),
        st.tuples(st.sampled_from([FIRST, LAST]), st.none(), st.none()),
        st.tuples(st.just(INDEX), st.integers(0, 2), st.none()),
        st.tuples(st.just(REFKEY), st.sampled_from([None, "Patient"]), st.none()),
    ),
    min_size=1,
    max_size=5,
).map(tuple)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CHOICE_TREES, min_size=0, max_size=2), CHAIN_STEPS)
def test_fast_chain_agrees_with_walk(focus: list, steps: tuple) -> None:
    fast = fast_chain(steps)
    if fast is not None:
        assert fast(focus, Env()) == walk(focus, Env(), steps)
