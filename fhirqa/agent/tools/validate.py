"""A small JSON-Schema checker for tool arguments: the subset our specs use.

Supported: ``type`` (one or a list), ``enum``, ``properties``/``required`` with no unknown names,
``items``, ``minItems``, ``minimum``/``maximum``. Messages name the parameter and what it accepts,
so a model can fix its call.
"""

from __future__ import annotations

from typing import Any

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if kind is None:
        return []
    return [kind] if isinstance(kind, str) else list(kind)


def check(schema: dict[str, Any], value: Any, where: str) -> list[str]:
    """Problems with ``value`` against ``schema`` (empty when it conforms)."""
    kinds = _types(schema)
    if kinds and not any(_TYPES[k](value) for k in kinds):
        return [f"{where} must be {' or '.join(kinds)}, got {type(value).__name__} {value!r}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where} must be one of {schema['enum']}, got {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where} must be ≥ {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where} must be ≤ {schema['maximum']}, got {value}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{where} needs at least {schema['minItems']} element(s)")
        if "items" in schema:
            for i, element in enumerate(value):
                problems.extend(check(schema["items"], element, f"{where}[{i}]"))
    if isinstance(value, dict) and "properties" in schema:
        problems.extend(check_object(schema, value, where))
    return problems


def check_object(schema: dict[str, Any], value: dict[str, Any], where: str = "arguments") -> list[str]:
    """Problems with an object: missing required names, unknown names, and each property's value."""
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [f"missing required parameter {name!r}" for name in schema.get("required", []) if name not in value]
    unknown = [name for name in value if name not in properties]
    if unknown:
        problems.append(f"unknown parameter(s) {', '.join(map(repr, unknown))}; parameters are: "
                        f"{', '.join(properties)}")
    for name, element in value.items():
        if name in properties and not (element is None and name not in schema.get("required", [])):
            # An optional parameter sent as null means "not given", as models often do.
            problems.extend(check(properties[name], element, name))
    return problems
