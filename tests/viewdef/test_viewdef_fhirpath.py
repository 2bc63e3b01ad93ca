"""The FHIRPath subset, by example.

Each test reads as a small piece of documentation: an expression, a resource, the result.
``ev(expr, resource)`` compiles the expression once and evaluates it with the resource as
focus; results are always collections (Python lists).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from fhirqa.viewdef import FHIRPathError, FHIRPathSyntaxError, ViewDefinitionError, compile_fhirpath
from fhirqa.viewdef.fhirpath import Env
from fhirqa.viewdef.parser import Binary, Call, Invoke, Literal, Member, parse, tokenize

PATIENT: dict[str, Any] = {
    "resourceType": "Patient",
    "id": "p1",
    "active": True,
    "birthDate": "1970-06-15",
    "name": [
        {"use": "official", "family": "Smith", "given": ["Ann", "Marie"]},
        {"use": "nickname", "given": ["Annie"]},
    ],
    "telecom": [{"system": "phone", "value": "555"}],
    "managingOrganization": {"reference": "Organization/o1"},
    "generalPractitioner": [
        {"reference": "http://example.org/fhir/Practitioner/pr1/_history/3"},
        {"reference": "urn:uuid:3f0e", "type": "Practitioner"},
        {"reference": "#contained-1"},
    ],
    "extension": [
        {"url": "http://example.org/birthsex", "valueCode": "F"},
        {"url": "http://example.org/race", "extension": [{"url": "text", "valueString": "Mixed"}]},
    ],
    "deceasedBoolean": False,
}

OBSERVATION: dict[str, Any] = {
    "resourceType": "Observation",
    "id": "o1",
    "status": "final",
    "code": {"coding": [{"system": "http://loinc.org", "code": "8302-2"}], "text": "Height"},
    "valueQuantity": {"value": 1.8, "unit": "m"},
    "effectiveDateTime": "2020-01-02T10:00:00+02:00",
    "component": [
        {"code": {"text": "systolic"}, "valueQuantity": {"value": 120}},
        {"code": {"text": "diastolic"}, "valueQuantity": {"value": 80}},
    ],
}


def ev(expr: str, resource: Any = PATIENT, constants: dict[str, Any] | None = None) -> list:
    return compile_fhirpath(expr, constants).evaluate(resource)


# --------------------------------------------------------------------------- navigation


def test_member_navigation_flattens_repeating_elements() -> None:
    assert ev("name.given") == ["Ann", "Marie", "Annie"]
    assert ev("name.family") == ["Smith"]


def test_missing_elements_give_an_empty_collection() -> None:
    assert ev("address.city") == []
    assert ev("name.prefix") == []


def test_a_leading_resource_type_name_filters_the_context() -> None:
    assert ev("Patient.id") == ["p1"]
    assert ev("Observation.id") == []


def test_first_last_and_indexers() -> None:
    assert ev("name.given.first()") == ["Ann"]
    assert ev("name.given.last()") == ["Annie"]
    assert ev("name[1].given") == ["Annie"]
    assert ev("name.given[1]") == ["Marie"]  # the indexer applies to the flattened collection
    assert ev("name[5].given") == []


def test_choice_types_through_oftype() -> None:
    assert ev("value.ofType(Quantity).value", OBSERVATION) == [1.8]
    assert ev("value.ofType(CodeableConcept)", OBSERVATION) == []
    assert ev("effective.ofType(dateTime)", OBSERVATION) == ["2020-01-02T10:00:00+02:00"]
    assert ev("deceased.ofType(boolean)") == [False]
    assert ev("(value as Quantity).unit", OBSERVATION) == ["m"]
    assert ev("value is Quantity", OBSERVATION) == [True]


def test_well_known_choice_elements_resolve_without_oftype() -> None:
    assert ev("value.unit", OBSERVATION) == ["m"]
    assert ev("deceased") == [False]


def test_this_and_environment_variables() -> None:
    assert ev("name.given.where($this = 'Marie')") == ["Marie"]
    assert ev("%resource.id") == ["p1"]
    assert ev("%ucum") == ["http://unitsofmeasure.org"]
    assert ev("name.where(use = %u).family", constants={"u": "official"}) == ["Smith"]


def test_row_index_comes_from_the_environment() -> None:
    path = compile_fhirpath("%rowIndex")
    assert path.evaluate(PATIENT, Env([PATIENT], row_index=3)) == [3]


# --------------------------------------------------------------------------- functions


def test_existence_functions() -> None:
    assert ev("name.exists()") == [True]
    assert ev("address.exists()") == [False]
    assert ev("address.empty()") == [True]
    assert ev("name.exists(use = 'nickname')") == [True]
    assert ev("name.all(given.exists())") == [True]
    assert ev("name.count()") == [2]


def test_where_and_select() -> None:
    assert ev("name.where(use = 'official').family") == ["Smith"]
    assert ev("name.where(use = 'maiden')") == []
    assert ev("name.select(given.first())") == ["Ann", "Annie"]


def test_join_and_string_functions() -> None:
    assert ev("name.given.join(', ')") == ["Ann, Marie, Annie"]
    assert ev("name.given.join()") == ["AnnMarieAnnie"]
    assert ev("name.family.first().upper()") == ["SMITH"]
    assert ev("birthDate.substring(0, 4)") == ["1970"]
    assert ev("name.family.first().startsWith('Sm')") == [True]


def test_extension_by_url() -> None:
    assert ev("extension('http://example.org/birthsex').value.ofType(code)") == ["F"]
    assert ev("extension('http://example.org/race').extension('text').value.ofType(string)") == ["Mixed"]
    assert ev("extension('http://example.org/none')") == []


def test_resource_and_reference_keys() -> None:
    assert ev("getResourceKey()") == ["p1"]
    assert ev("managingOrganization.getReferenceKey()") == ["o1"]
    assert ev("managingOrganization.getReferenceKey(Organization)") == ["o1"]
    assert ev("managingOrganization.getReferenceKey(Patient)") == []
    # absolute URLs and version suffixes; urn:uuid uses the Reference.type when present;
    # contained references (#id) have no resource key
    assert ev("generalPractitioner.getReferenceKey(Practitioner)") == ["pr1", "3f0e"]


def test_boundaries() -> None:
    assert ev("value.ofType(Quantity).value.lowBoundary()", OBSERVATION) == [1.75]
    assert ev("birthDate.highBoundary()", {"birthDate": "2024-02"}) == ["2024-02-29"]
    assert ev("effective.ofType(dateTime).lowBoundary()", {"effectiveDateTime": "2010-10-10"}) == [
        "2010-10-10T00:00:00.000+14:00"
    ]


def test_iif_and_not() -> None:
    assert ev("iif(active, 'yes', 'no')") == ["yes"]
    assert ev("active.not()") == [False]
    assert ev("gender.not()") == []


# --------------------------------------------------------------------------- operators


def test_equality_with_empty_is_empty() -> None:
    assert ev("gender = 'male'") == []
    assert ev("id = 'p1'") == [True]
    assert ev("name.family = 'Smith'") == [True]
    assert ev("name.given = 'Ann'") == [False]  # three items never equal one


def test_three_valued_boolean_logic() -> None:
    assert ev("gender.exists() and active") == [False]
    assert ev("(gender = 'x') and active") == []  # empty and true -> empty
    assert ev("(gender = 'x') or active") == [True]
    assert ev("(gender = 'x') and false") == [False]
    assert ev("false implies (gender = 'x')") == [True]
    assert ev("true xor false") == [True]


def test_comparison_and_dates() -> None:
    assert ev("birthDate < @2000-01-01") == [True]
    assert ev("birthDate >= '1970-06-15'") == [True]
    # same instant in two time zones
    assert ev("effective.ofType(dateTime) = @2020-01-02T08:00:00Z", OBSERVATION) == [True]
    # different precision: unknown
    assert ev("birthDate = @1970") == []


def test_arithmetic_keeps_decimal_precision() -> None:
    assert ev("0.1 + 0.2") == [0.3]
    assert ev("7 / 2") == [3.5]
    assert ev("7 div 2") == [3]
    assert ev("-7 mod 2") == [-1]
    assert ev("2 * 3 + 1") == [7]
    assert ev("1 / 0") == []
    assert ev("'a' + 'b'") == ["ab"]
    assert ev("'a' & gender & 'b'") == ["ab"]  # & treats empty as ''


def test_union_and_membership() -> None:
    assert ev("name.use | name.use") == ["official", "nickname"]
    assert ev("'Ann' in name.given") == [True]
    assert ev("name.given contains 'Bob'") == [False]


# --------------------------------------------------------------------------- parser


def test_operator_precedence() -> None:
    assert parse("a = b and c") == Binary("and", Binary("=", Member("a"), Member("b")), Member("c"))
    assert parse("1 + 2 * 3") == Binary("+", Literal(1, "integer"), Binary("*", Literal(2, "integer"), Literal(3, "integer")))


def test_invocations_and_literals() -> None:
    assert parse("name.where(use = 'x')") == Invoke(
        Member("name"), Call("where", (Binary("=", Member("use"), Literal("x", "string")),), 5)
    )
    assert parse("@2020-01-01T10:00Z") == Literal("2020-01-01T10:00Z", "dateTime")
    assert parse("@T10:30") == Literal("10:30", "time")
    assert parse("`div`") == Member("div")
    assert parse("5 'mg'") == Literal({"value": 5, "unit": "mg", "code": "mg"}, "quantity")


def test_tokenizer_skips_comments_and_handles_escapes() -> None:
    kinds = [t.kind for t in tokenize("a // note\n + 'it\\'s' /* x */")]
    assert kinds == ["ident", "op", "string", "eof"]
    assert tokenize(r"'\u00e9'")[0].value == "é"


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("", "empty expression"),
        ("name.", "expected a name after '.'"),
        ("name.where(use = 'x'", "expected ')'"),
        ("'unterminated", "unterminated"),
        ("@@", "invalid date/time literal"),
        ("a ! b", "unexpected character"),
        ("and", "no left operand"),
        ("1 +", "no right operand"),
    ],
)
def test_syntax_errors_say_what_and_where(expr: str, fragment: str) -> None:
    with pytest.raises(FHIRPathSyntaxError, match=re.escape(fragment)) as info:
        parse(expr)
    assert isinstance(info.value, ViewDefinitionError)


def test_compile_time_errors() -> None:
    with pytest.raises(FHIRPathError, match="unsupported FHIRPath function frobnicate"):
        compile_fhirpath("name.frobnicate()")
    with pytest.raises(FHIRPathError, match="undefined constant %nope"):
        compile_fhirpath("name.where(use = %nope)")
    with pytest.raises(FHIRPathError, match="takes 1 argument"):
        compile_fhirpath("name.where()")


def test_runtime_errors_are_view_definition_errors() -> None:
    with pytest.raises(ViewDefinitionError, match="single"):
        ev("name.given < 'B'")
    with pytest.raises(ViewDefinitionError, match="cannot compare"):
        ev("id < 3")
