"""Cheap structural checks on the bulk path; full model validation belongs at the edges.

A record that fails is quarantined with the reason; the checks are the ones that would otherwise
corrupt the store or the views: no resource type, an unknown type, a missing or malformed id, a
reference or a date of the wrong JSON type, a string too large to be anything but a mistake.

:func:`check_resource` is the reference implementation and names the offending field. On the ingest
path the same rules run inside the one walk that also emits the facts (``flatten.scan_facts``): it only
*notices* that a field breaks a rule and then calls :func:`check_resource` for the precise message, so
both paths reject exactly the same records.
"""

from __future__ import annotations

import re
from typing import Any

from fhirqa.normalize.references import resource_types

_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
_DATE_TIME = re.compile(
    r"^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$"
)
#: ``match`` of the FHIR date/dateTime/instant pattern, bound once for the hot path.
is_date_time = _DATE_TIME.match
# Keys whose values are FHIR date/dateTime/instant in every resource that has them.
DATE_KEYS = frozenset(
    {
        "birthDate", "authoredOn", "issued", "effectiveDateTime", "onsetDateTime", "abatementDateTime",
        "recordedDate", "occurrenceDateTime", "performedDateTime", "whenHandedOver", "whenPrepared",
        "lastUpdated", "start", "end", "date",
    }
)
#: Keys whose value must be a Reference object (or a list of them).
REFERENCE_KEYS = frozenset({"subject", "patient", "encounter"})
_DATE_KEYS, _REFERENCE_KEYS = DATE_KEYS, REFERENCE_KEYS  # former private names
MAX_STRING = 16 * 1024 * 1024  # bytes; an inline PDF attachment can be large, a 16 MB name cannot be real


class InvalidResource(ValueError):
    """A resource fhirqa will not store; the message names the field and the reason."""


def check_header(resource: Any) -> tuple[str, str]:
    """The ``(resourceType, id)`` of ``resource``, or :class:`InvalidResource` when either is unusable."""
    if not isinstance(resource, dict):
        raise InvalidResource(f"not a JSON object but {type(resource).__name__}")
    rtype = resource.get("resourceType")
    if rtype is None:
        raise InvalidResource("not a FHIR resource: no resourceType")
    if not isinstance(rtype, str) or rtype not in resource_types():
        raise InvalidResource(f"unknown resourceType {rtype!r}")
    rid = resource.get("id")
    if rid is None or rid == "":
        raise InvalidResource(f"{rtype} has no id")
    if not isinstance(rid, str) or not _ID.match(rid):
        raise InvalidResource(f"{rtype}.id {rid!r} is not a valid FHIR id")
    return rtype, rid


def check_resource(resource: Any, max_string: int = MAX_STRING) -> None:
    """Raise :class:`InvalidResource` naming the offending field, or return when the resource is usable."""
    rtype, _ = check_header(resource)
    _check_node(resource, rtype, max_string)


def _check_node(node: Any, path: str, max_string: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in REFERENCE_KEYS and not isinstance(value, dict | list):
                raise InvalidResource(f"{path}.{key} must be a Reference object, found {type(value).__name__}")
            if isinstance(value, str):
                if len(value) > max_string:
                    raise InvalidResource(
                        f"{path}.{key} is a {len(value):,}-character string (limit {max_string:,})"
                    )
                if key in DATE_KEYS and not _DATE_TIME.match(value):
                    raise InvalidResource(f"{path}.{key} = {value[:40]!r} is not a FHIR date/dateTime")
            elif key == "reference" or key in DATE_KEYS:
                if value is not None and not isinstance(value, dict | list):
                    raise InvalidResource(f"{path}.{key} must be a string, found {type(value).__name__}")
                if key == "reference":
                    raise InvalidResource(f"{path}.{key} must be a string, found {type(value).__name__}")
                _check_node(value, f"{path}.{key}", max_string)
            elif isinstance(value, dict | list):
                _check_node(value, f"{path}.{key}", max_string)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, str) and len(item) > max_string:
                raise InvalidResource(f"{path}[{index}] is a {len(item):,}-character string (limit {max_string:,})")
            if isinstance(item, dict | list):
                _check_node(item, f"{path}[{index}]", max_string)
