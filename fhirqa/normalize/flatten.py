"""Flatten a resource into path–value pairs: the lossless layer under the views.

Every primitive in a resource becomes one fact: its path with array indices
(``component[1].valueQuantity.value``), its JSON type and its value. :func:`unflatten` rebuilds the
resource from the facts, which is how the tests prove nothing is lost.
"""

from __future__ import annotations

from typing import Any

#: value_type codes stored with each fact.
STRING, NUMBER, BOOLEAN, NULL = "string", "number", "boolean", "null"


class FactColumns:
    """Column-wise buffers of facts (patient, type, id, path, value_type, value, number), ready for Arrow."""

    __slots__ = ("patient_id", "resource_type", "resource_id", "path", "value_type", "value", "number")

    def __init__(self) -> None:
        self.patient_id: list[str | None] = []
        self.resource_type: list[str] = []
        self.resource_id: list[str] = []
        self.path: list[str] = []
        self.value_type: list[str] = []
        self.value: list[str | None] = []
        self.number: list[float | None] = []

    def __len__(self) -> int:
        return len(self.path)

    def add_resource(self, resource: dict[str, Any], patient_id: str | None) -> None:
        """Append the facts of one resource."""
        rtype = resource["resourceType"]
        rid = resource["id"]
        paths: list[str] = []
        types: list[str] = []
        values: list[str | None] = []
        numbers: list[float | None] = []
        _walk(resource, "", paths, types, values, numbers)
        count = len(paths)
        self.patient_id.extend([patient_id] * count)
        self.resource_type.extend([rtype] * count)
        self.resource_id.extend([rid] * count)
        self.path.extend(paths)
        self.value_type.extend(types)
        self.value.extend(values)
        self.number.extend(numbers)


def _walk(node: Any, prefix: str, paths: list, types: list, values: list, numbers: list) -> None:
    # Iterative would be marginally faster; recursion keeps the path logic obvious and FHIR is shallow.
    for key, value in node.items():
        path = f"{prefix}.{key}" if prefix else key
        _emit(value, path, paths, types, values, numbers)


def _emit(value: Any, path: str, paths: list, types: list, values: list, numbers: list) -> None:
    if isinstance(value, str):
        paths.append(path)
        types.append(STRING)
        values.append(value)
        numbers.append(None)
    elif isinstance(value, dict):
        _walk(value, path, paths, types, values, numbers)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _emit(item, f"{path}[{index}]", paths, types, values, numbers)
    elif isinstance(value, bool):
        paths.append(path)
        types.append(BOOLEAN)
        values.append("true" if value else "false")
        numbers.append(None)
    elif isinstance(value, int | float):
        paths.append(path)
        types.append(NUMBER)
        values.append(repr(value) if isinstance(value, float) else str(value))
        numbers.append(float(value))
    elif value is None:
        paths.append(path)
        types.append(NULL)
        values.append(None)
        numbers.append(None)


def flatten(resource: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """``(path, value_type, value)`` for every primitive of ``resource``, in document order."""
    paths: list[str] = []
    types: list[str] = []
    values: list[str | None] = []
    numbers: list[float | None] = []
    _walk(resource, "", paths, types, values, numbers)
    return list(zip(paths, types, values, strict=True))


def _parse_value(value_type: str, value: str | None) -> Any:
    if value_type == STRING:
        return value
    if value_type == BOOLEAN:
        return value == "true"
    if value_type == NUMBER:
        assert value is not None
        return float(value) if any(c in value for c in ".eEn") else int(value)
    return None


def unflatten(facts: list[tuple[str, str, str | None]]) -> dict[str, Any]:
    """Rebuild a resource from its facts (inverse of :func:`flatten` for non-empty containers)."""
    root: dict[str, Any] = {}
    for path, value_type, value in facts:
        _assign(root, _split(path), _parse_value(value_type, value))
    return root


def _split(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in path.split("."):
        while "[" in part:
            name, rest = part.split("[", 1)
            if name:
                steps.append(name)
            index, part = rest.split("]", 1)
            steps.append(int(index))
        if part:
            steps.append(part)
    return steps


def _assign(node: Any, steps: list[str | int], value: Any) -> None:
    for step, following in zip(steps, steps[1:], strict=False):
        container: Any = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            while len(node) <= step:
                node.append(None)
            if node[step] is None:
                node[step] = container
            node = node[step]
        else:
            node = node.setdefault(step, container)
    last = steps[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = value
    else:
        node[last] = value
