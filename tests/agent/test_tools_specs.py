"""The registry: specs in tools/*.json match their functions, arguments are validated, calls are traced."""

from __future__ import annotations

import inspect
import json

import pytest

from fhirqa.agent.tools import FUNCTIONS, execute, load_tools, tool_specs
from fhirqa.agent.tools.base import ToolContext
from fhirqa.agent.tools.validate import check_object
from fhirqa.project import data_dir

from .test_tools_helpers import call, fetch, make_ctx

TOOL_NAMES = [
    "get_resources", "filter_by_date", "filter_by_value", "sort_records", "get_by_index", "extract_field_value",
    "find_extreme", "aggregate", "count_values", "compare_values", "calculate_difference",
    "calculate_time_offset", "combine_evidence", "final_answer", "find_patient", "find_in_notes", "search_notes",
    "check_note_consistency", "medication_changes", "medication_courses", "list_notes", "window_events", "abnormal_results",
]


def test_registry_has_exactly_the_listed_tools_each_with_a_spec_file():
    assert list(load_tools()) == TOOL_NAMES
    assert sorted(p.stem for p in data_dir("tools").glob("*.json")) == sorted(TOOL_NAMES)
    assert [spec["name"] for spec in tool_specs()] == TOOL_NAMES


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_spec_parameters_match_the_function_signature_exactly(name):
    tool = load_tools()[name]
    params = list(inspect.signature(tool.function).parameters.values())
    assert params[0].name == "ctx"
    names = [p.name for p in params[1:]]
    required = [p.name for p in params[1:] if p.default is inspect.Parameter.empty]
    schema = tool.spec["parameters"]
    assert list(schema["properties"]) == names
    assert sorted(schema.get("required", [])) == sorted(required)  # none required: no empty list
    assert schema["type"] == "object" and schema["additionalProperties"] is False


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_spec_is_written_for_a_model(name):
    spec = load_tools()[name].spec
    assert set(spec) == {"name", "description", "parameters"}
    assert len(spec["description"]) > 80
    for prop, schema in spec["parameters"]["properties"].items():
        assert schema.get("description"), f"{name}.{prop} has no description"
        assert "type" in schema, f"{name}.{prop} has no type"
    json.dumps(spec)


def test_functions_map_is_the_registry():
    assert {name: tool.function for name, tool in load_tools().items()} == FUNCTIONS


def test_validator_reports_missing_unknown_wrong_type_and_enum():
    schema = load_tools()["aggregate"].spec["parameters"]
    problems = check_object(schema, {"op": "average", "recs": "r1", "group_by": 3})
    text = " | ".join(problems)
    assert "missing required parameter 'records'" in text
    assert "unknown parameter(s) 'recs'" in text and "parameters are: records, op, field, group_by" in text
    assert "op must be one of" in text
    assert "group_by must be string" in text


def test_execute_feeds_validation_errors_back_and_traces_the_call():
    ctx = make_ctx()
    result = execute(ctx, "get_by_index", {"records": "r1", "index": "last"})
    assert result == {"ok": False, "error": "invalid arguments for get_by_index: index must be integer, got str 'last'"}
    assert ctx.calls[-1]["tool"] == "get_by_index" and ctx.calls[-1]["result"]["ok"] is False


def test_execute_unknown_tool_lists_the_tools():
    result = execute(make_ctx(), "get_lab", {})
    assert not result["ok"] and "get_resources" in result["error"]


def test_execute_treats_null_optional_arguments_as_absent_and_integral_floats_as_integers():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    result = execute(ctx, "get_by_index", {"records": r, "index": -1.0, "order_by": None})
    assert result["ok"] and result["row"]["value"] == 6.8


def test_execute_trace_summarizes_long_lists():
    ctx = make_ctx()
    call(ctx, "get_resources", view="observation")
    traced = ctx.calls[-1]
    assert traced["arguments"] == {"view": "observation"}
    assert traced["result"]["preview"] == "<7 entries>" and traced["result"]["handle"] == "r1"


def test_execute_lets_our_own_bugs_raise():
    class Broken:
        def rows(self, view):
            raise RuntimeError("bug")

        def items(self, view):
            return []

    ctx = ToolContext(patient_id="p1", now=make_ctx().now, data=Broken(), resolve=make_ctx().resolve)
    with pytest.raises(RuntimeError):
        execute(ctx, "get_resources", {"view": "observation"})


def test_every_result_of_a_chain_is_json_native():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="vancomycin")
    results = [
        call(ctx, "filter_by_date", records=r, last_amount=1, last_unit="years"),
        call(ctx, "sort_records", records=r, descending=True),
        call(ctx, "aggregate", records=r, op="sum", group_by="day"),
        call(ctx, "find_extreme", records=r, mode="min", field="time"),
        call(ctx, "count_values", records=r, field="time", distinct=True),
    ]
    for result in results:
        assert result["ok"], result
        json.dumps(result)
