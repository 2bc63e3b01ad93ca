"""Reference normalization: every reference becomes relative ``Type/id`` so views can join.

Bundles from Synthea and from transactions refer to each other by ``fullUrl`` (``urn:uuid:…``);
servers return absolute URLs (``https://host/fhir/Patient/1``). Both are rewritten at ingest.

The rewrite is on the bulk path (every nested object of every resource), so it walks with an explicit
stack and no path strings; only when a reference dangles does a second, path-keeping walk name where.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources as _resources
from typing import Any

from fhirqa.normalize import native

_ABSOLUTE = re.compile(r"^(?:https?://[^?#]*/)?([A-Z][A-Za-z]+)/([A-Za-z0-9\-.]{1,64})(?:/_history/[^/]+)?$")
_LOCAL = ("#", "urn:")


@lru_cache(maxsize=1)
def resource_types() -> frozenset[str]:
    """The FHIR R4/R4B resource type names fhirqa accepts (data file ``normalize/data/resource_types.txt``)."""
    text = _resources.files("fhirqa.normalize").joinpath("data/resource_types.txt").read_text("utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


@lru_cache(maxsize=65536)  # the same patient, encounter and practitioner are referred to again and again
def relative_reference(reference: str) -> str | None:
    """``Type/id`` for a relative or absolute literal reference to a known resource type, else None.

    >>> relative_reference("https://example.org/fhir/Patient/123/_history/2")
    'Patient/123'
    >>> relative_reference("urn:uuid:0f3b") is None
    True
    """
    match = _ABSOLUTE.match(reference)
    if match and match.group(1) in resource_types():
        return f"{match.group(1)}/{match.group(2)}"
    return None


def _resolve(value: str, full_urls: Mapping[str, str]) -> str | None:
    resolved = full_urls.get(value)
    if resolved is None and not value.startswith(_LOCAL) and "?" not in value:
        resolved = relative_reference(value)
    return resolved


def rewrite_references(node: Any, full_urls: Mapping[str, str], dangling: list[str], path: str = "") -> None:
    """Rewrite, in place, every ``reference`` under ``node`` to ``Type/id``.

    ``full_urls`` maps a bundle's fullUrls to ``Type/id``. References that look local to a bundle
    (``urn:uuid:``/``urn:oid:``) but are not in it are left as they are and reported in ``dangling``
    with their path, so the caller can warn without losing the record.
    """
    if _rewrite_fast(node, full_urls):
        _find_dangling(node, full_urls, dangling, path)


def _rewrite_fast(node: Any, full_urls: Mapping[str, str]) -> bool:
    """Rewrite without tracking paths; True when a bundle-local reference was left dangling.

    The C walk does the common case (plain dicts and lists); it hands anything else back, and the Python
    walk below (its reference implementation) redoes the whole node, which is idempotent.
    """
    walk = native.WALK
    if walk is not None and type(full_urls) is dict:
        dangles = walk.rewrite_references(node, full_urls, relative_reference)
        if dangles is not None:
            return bool(dangles)
    return _rewrite_python(node, full_urls)


def _rewrite_python(node: Any, full_urls: Mapping[str, str]) -> bool:
    """The Python rewrite: an explicit stack, no path strings."""
    dict_, list_, str_ = dict, list, str
    get = full_urls.get
    dangles = False
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        current = pop()
        if type(current) is dict_:
            for key, value in current.items():
                kind = type(value)
                if kind is str_:
                    if key == "reference":
                        resolved = get(value)
                        if resolved is None and not value.startswith(_LOCAL) and "?" not in value:
                            resolved = relative_reference(value)
                        if resolved is not None:
                            current[key] = resolved
                        elif value.startswith("urn:"):
                            dangles = True
                elif kind is dict_ or kind is list_:
                    push(value)
                elif isinstance(value, dict | list):  # subclasses (callers outside the sources)
                    push(value)
        elif isinstance(current, dict):
            for key, value in current.items():
                if key == "reference" and isinstance(value, str):
                    resolved = _resolve(value, full_urls)
                    if resolved is not None:
                        current[key] = resolved
                    elif value.startswith("urn:"):
                        dangles = True
                elif isinstance(value, dict | list):
                    push(value)
        elif isinstance(current, list):
            for item in current:
                if isinstance(item, dict | list):
                    push(item)
    return dangles


def _find_dangling(node: Any, full_urls: Mapping[str, str], dangling: list[str], path: str) -> None:
    """The paths of the references the fast pass left dangling (rare: it runs only when there are some)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "reference" and isinstance(value, str):
                if value.startswith("urn:") and _resolve(value, full_urls) is None:
                    dangling.append(f"{path}.reference={value}" if path else f"reference={value}")
            elif isinstance(value, dict | list):
                _find_dangling(value, full_urls, dangling, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, dict | list):
                _find_dangling(item, full_urls, dangling, f"{path}[{index}]")
