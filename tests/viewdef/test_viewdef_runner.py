"""ViewDefinition compilation and row generation through the public API."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fhirqa.viewdef import Column, CompiledView, ViewDefinitionError, compile_view, run_view

PATIENTS: list[dict[str, Any]] = [
    {
        "resourceType": "Patient",
        "id": "p1",
        "active": True,
        "name": [{"family": "Smith", "given": ["Ann", "Marie"]}, {"family": "Jones"}],
        "address": [{"city": "Boston"}],
    },
    {"resourceType": "Patient", "id": "p2", "active": False},
    {"resourceType": "Observation", "id": "o1", "status": "final"},
]


def view(*select: dict, **extra: Any) -> dict:
    return {"resourceType": "ViewDefinition", "resource": "Patient", "select": list(select), **extra}


def col(name: str, path: str, **extra: Any) -> dict:
    return {"name": name, "path": path, **extra}


def test_compiled_view_describes_its_columns() -> None:
    cv = compile_view(
        view(
            {"column": [col("id", "getResourceKey()", type="id"), col("given", "name.given", collection=True)]},
            name="patient_names",
        )
    )
    assert isinstance(cv, CompiledView)
    assert cv.resource == "Patient"
    assert cv.name == "patient_names"
    assert cv.columns == [
        Column("id", "id", False, "getResourceKey()"),
        Column("given", None, True, "name.given"),
    ]
    assert cv.column_names == ["id", "given"]


def test_rows_are_tuples_aligned_with_columns() -> None:
    cv = compile_view(view({"column": [col("id", "id"), col("family", "name.family.first()")]}))
    assert cv.rows(PATIENTS[0]) == [("p1", "Smith")]
    assert cv.rows(PATIENTS[1]) == [("p2", None)]
    assert cv.rows(PATIENTS[2]) == []  # another resource type produces nothing


def test_run_view_returns_dicts_for_every_matching_resource() -> None:
    rows = run_view(view({"column": [col("id", "id")]}, where=[{"path": "active"}]), PATIENTS)
    assert rows == [{"id": "p1"}]


def test_matches_applies_type_and_where() -> None:
    cv = compile_view(view({"column": [col("id", "id")]}, where=[{"path": "active = false"}]))
    assert [cv.matches(p) for p in PATIENTS] == [False, True, False]


def test_collection_columns_are_fresh_lists() -> None:
    resource = copy.deepcopy(PATIENTS[0])
    cv = compile_view(view({"column": [col("given", "name.first().given", collection=True)]}))
    [(given,)] = cv.rows(resource)
    given.append("mutated")
    assert resource["name"][0]["given"] == ["Ann", "Marie"]


def test_non_collection_column_with_several_values_is_an_error_naming_it() -> None:
    cv = compile_view(view({"column": [col("family", "name.family")]}))
    with pytest.raises(ViewDefinitionError, match=r"column 'family' \(path 'name.family'\) produced 2 values.*Patient/p1"):
        cv.rows(PATIENTS[0])


def test_where_must_be_boolean() -> None:
    cv = compile_view(view({"column": [col("id", "id")]}, where=[{"path": "name.family.first()"}]))
    with pytest.raises(ViewDefinitionError, match="must evaluate to a single boolean"):
        cv.rows(PATIENTS[0])


def test_for_each_or_null_repeat_and_union() -> None:
    cv = compile_view(
        view(
            {"column": [col("id", "id")]},
            {
                "forEachOrNull": "name",
                "column": [col("i", "%rowIndex"), col("family", "family")],
                "unionAll": [
                    {"forEach": "given", "column": [col("part", "$this")]},
                    {"column": [col("part", "'(family)'")]},
                ],
            },
        )
    )
    assert cv.column_names == ["id", "i", "family", "part"]
    assert cv.rows(PATIENTS[0]) == [
        ("p1", 0, "Smith", "Ann"),
        ("p1", 0, "Smith", "Marie"),
        ("p1", 0, "Smith", "(family)"),
        ("p1", 1, "Jones", "(family)"),
    ]
    # no names: one row, paths evaluated on an empty focus
    assert cv.rows(PATIENTS[1]) == [("p2", 0, None, "(family)")]


def test_repeat_walks_nested_items_depth_first() -> None:
    qr = {
        "resourceType": "QuestionnaireResponse",
        "id": "q",
        "item": [{"linkId": "1", "item": [{"linkId": "1.1"}]}, {"linkId": "2"}],
    }
    cv = compile_view({"resource": "QuestionnaireResponse", "select": [{"repeat": ["item"], "column": [col("l", "linkId")]}]})
    assert cv.rows(qr) == [("1",), ("1.1",), ("2",)]


def test_constants_and_override() -> None:
    definition = view(
        {"column": [col("id", "id")]},
        constant=[{"name": "want", "valueBoolean": True}],
        where=[{"path": "active = %want"}],
    )
    assert [r["id"] for r in run_view(definition, PATIENTS)] == ["p1"]
    cv = compile_view(definition, constants_override={"want": False})
    assert [cv.rows(p) for p in PATIENTS[:2]] == [[], [("p2",)]]


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({}, "resource: must name a FHIR resource type"),
        ({"resource": "Patient"}, "select: a ViewDefinition needs a non-empty list"),
        (view({"column": [col("id", "id"), col("bad name", "id")]}), r"select\[0\]\.column\[1\]: column name 'bad name'"),
        (view({"column": [col("x", "name.(")]}), r"select\[0\]\.column\[0\] \('x'\): invalid FHIRPath"),
        (view({"column": [col("x", "id")]}, {"column": [col("x", "id")]}), "duplicate column name 'x'"),
        (view({"forEach": 1, "column": [col("x", "id")]}), r"select\[0\]\.forEach: FHIRPath must be a string"),
        (view({"forEach": "name", "repeat": ["name"], "column": [col("x", "id")]}), "only one of forEach"),
        (view({"column": [col("x", "id", collection="yes")]}), "'collection' must be true or false"),
        (
            view({"unionAll": [{"column": [col("a", "id")]}, {"column": [col("b", "id")]}]}),
            r"unionAll\[1\]: unionAll branches must have the same columns",
        ),
        (view({"column": [col("x", "id")]}, constant=[{"name": "c"}]), r"constant\[0\] \('c'\): needs exactly one value"),
        (view({"column": [col("x", "%missing")]}), "undefined constant %missing"),
        (view({"column": [col("x", "id.nope()")]}), "unsupported FHIRPath function nope"),
    ],
)
def test_invalid_views_are_rejected_with_a_location(definition: dict, message: str) -> None:
    with pytest.raises(ViewDefinitionError, match=message):
        compile_view(definition)


def test_unexpected_data_is_reported_as_a_view_error() -> None:
    cv = compile_view(view({"column": [col("x", "id.substring('a')")]}))
    with pytest.raises(ViewDefinitionError, match="Patient/p1"):
        cv.rows(PATIENTS[0])


def test_list_constants_from_an_override_are_collections() -> None:
    definition = view({"column": [col("id", "id")]}, where=[{"path": "id in %wanted"}])
    cv = compile_view(definition, constants_override={"wanted": ["p2", "p9"]})
    assert [r for p in PATIENTS for r in cv.rows(p)] == [("p2",)]


def test_row_index_of_a_for_each_is_not_disturbed_by_a_sibling() -> None:
    cv = compile_view(
        view(
            {
                "forEach": "name",
                "select": [
                    {"forEach": "given", "column": [col("g", "$this")]},
                    {"forEach": "%resource.address.where(%rowIndex = 0)", "column": [col("outer", "%rowIndex")]},
                ],
            }
        )
    )
    # the second forEach is evaluated with the name's index (0), not the last `given` index (1)
    assert cv.rows(PATIENTS[0]) == [("Ann", 0), ("Marie", 0)]
