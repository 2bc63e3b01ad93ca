"""The tool registry: specs from ``tools/<name>.json`` joined to their functions, and one way to run them."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from fhirqa.agent.tools.abnormal import abnormal_results
from fhirqa.agent.tools.arith import calculate_difference, calculate_time_offset, compare_values
from fhirqa.agent.tools.base import Tool, ToolContext, ToolError, ToolFunction
from fhirqa.agent.tools.compute import aggregate, count_values, find_extreme
from fhirqa.agent.tools.consistency import check_note_consistency
from fhirqa.agent.tools.courses import medication_courses
from fhirqa.agent.tools.events import window_events
from fhirqa.agent.tools.filters import filter_by_date, filter_by_value
from fhirqa.agent.tools.final import final_answer
from fhirqa.agent.tools.lookup import find_patient
from fhirqa.agent.tools.med_changes import medication_changes
from fhirqa.agent.tools.note_finding import find_in_notes
from fhirqa.agent.tools.notes import list_notes, search_notes
from fhirqa.agent.tools.records import (
    combine_evidence,
    extract_field_value,
    get_by_index,
    get_resources,
    sort_records,
)
from fhirqa.agent.tools.validate import check_object
from fhirqa.project import data_dir

FUNCTIONS: dict[str, ToolFunction] = {
    f.__name__: f
    for f in (
        get_resources, filter_by_date, filter_by_value, sort_records, get_by_index, extract_field_value,
        find_extreme, aggregate, count_values, compare_values, calculate_difference, calculate_time_offset,
        combine_evidence, final_answer, find_patient, find_in_notes, search_notes, check_note_consistency,
        medication_changes, medication_courses, list_notes, window_events, abnormal_results,
    )
}


@lru_cache(maxsize=1)
def _load() -> tuple[Tool, ...]:
    folder = data_dir("tools")
    specs = {}
    for path in sorted(folder.glob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        if spec.get("name") != path.stem:
            raise ValueError(f"{path}: spec name {spec.get('name')!r} differs from the file name")
        specs[path.stem] = spec
    # A spec without code, or code without a spec, is a packaging bug: fail loudly, not at call time.
    if set(specs) != set(FUNCTIONS):
        raise ValueError(f"{folder}: specs {sorted(set(specs) - set(FUNCTIONS))} have no function and "
                         f"functions {sorted(set(FUNCTIONS) - set(specs))} have no spec")
    return tuple(Tool(name, specs[name], FUNCTIONS[name]) for name in FUNCTIONS)


def load_tools() -> dict[str, Tool]:
    """Every tool by name, in a stable order (fetch, filter, compute, answer)."""
    return {tool.name: tool for tool in _load()}


def tool_specs() -> list[dict[str, Any]]:
    """The specs for function calling: ``{"name", "description", "parameters"}`` per tool."""
    return [tool.spec for tool in _load()]


def execute(ctx: ToolContext, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Validate ``arguments`` against the tool's spec, run it, and record the call in ``ctx.calls``.

    A caller's mistake (unknown tool, bad arguments, a ``ToolError``) comes back as
    ``{"ok": false, "error": ...}`` for the model to fix; any other exception is our bug and raises.
    """
    tools = load_tools()
    tool = tools.get(name)
    args = {} if arguments is None else arguments
    if tool is None:
        result: dict[str, Any] = {"ok": False, "error": f"unknown tool {name!r}; tools: {', '.join(tools)}"}
    elif not isinstance(args, dict):
        result = {"ok": False, "error": f"arguments must be an object, got {type(args).__name__}"}
    else:
        problems = check_object(tool.spec["parameters"], args)
        if problems:
            result = {"ok": False, "error": f"invalid arguments for {name}: " + "; ".join(problems)}
        else:
            given = _coerce(tool.spec["parameters"], {k: v for k, v in args.items() if v is not None})
            try:
                result = tool.function(ctx, **given)
            except ToolError as exc:
                result = {"ok": False, "error": str(exc)}
    ctx.calls.append({"tool": name, "arguments": args, "result": summarize(result)})
    return result


def _coerce(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    # Some providers send every number as a double (Gemini's Struct); 2.0 for an integer means 2.
    properties = schema.get("properties", {})
    return {k: int(v) if properties.get(k, {}).get("type") == "integer" and isinstance(v, float) else v
            for k, v in args.items()}


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """A compact copy of a result for the trace: long lists are replaced by their length."""
    out: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, list) and (len(value) > 5 or any(isinstance(v, dict) for v in value)):
            out[key] = f"<{len(value)} entries>"
        else:
            out[key] = value
    return out
