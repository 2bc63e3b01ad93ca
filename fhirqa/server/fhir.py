"""FHIR shapes the server speaks: reading ``Parameters`` in, writing an answer as ``Parameters`` out.

An answer becomes one ``answer`` parameter per value (typed: boolean, integer, decimal, date,
dateTime or string), ``text``, ``status``, ``unit``, one ``evidence`` parameter per cited value
(parts: a ``reference`` as ``valueReference`` to ``Type/id``, the field, value, time and unit), and
a ``Provenance`` that marks the answer as machine-generated (security label AIAST, an author agent
that is this software) and lists the evidence as its sources.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from fhirqa import __version__
from fhirqa.server.errors import ApiError
from fhirqa.server.ids import new_id

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")
_REF = re.compile(r"([A-Z][A-Za-z]+/[A-Za-z0-9\-.]{1,64})")
#: HL7 v3 ObservationValue "AIAST": artificial-intelligence asserted (the AI transparency label).
AI_LABEL = {"system": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue", "code": "AIAST",
            "display": "Artificial Intelligence asserted"}
#: The JSON type each value[x] (and ``resource``) must have.
VALUE_TYPES: dict[str, tuple[type, ...]] = {
    "valueString": (str,), "valueCode": (str,), "valueUri": (str,), "valueDateTime": (str,), "valueInstant": (str,),
    "valueDate": (str,), "valueBoolean": (bool,), "valueInteger": (int,), "valueDecimal": (int, float),
    "valueReference": (dict,), "resource": (dict,),
}
#: A parameter carries its name and exactly one value; anything else is refused, not ignored.
_ELEMENT_KEYS = {"name"}
#: A Parameters contract: parameter name → the value keys it may use (``resource`` for a resource).
ParamSpec = dict[str, tuple[str, ...]]


def typed_value(value: Any) -> dict[str, Any]:
    """``{"valueX": value}`` with the FHIR type that fits a JSON-native value."""
    if isinstance(value, bool):
        return {"valueBoolean": value}
    if isinstance(value, int) and -(2**31) <= value < 2**31:
        return {"valueInteger": value}
    if isinstance(value, int | float):
        return {"valueDecimal": value}
    if isinstance(value, str) and _DATE.match(value):
        return {"valueDate": value}
    if isinstance(value, str) and _DATETIME.match(value):
        return {"valueDateTime": value}
    if value is None:
        return {"valueString": ""}
    return {"valueString": value if isinstance(value, str) else str(value)}


def read_parameters(body: Any, spec: ParamSpec) -> dict[str, Any]:
    """Values of a ``Parameters`` resource by name (the first of each), checked against ``spec``.

    400 for anything that is not a Parameters resource, an unknown name, a value of another type
    than the spec allows, or members a parameter cannot have.
    """
    if not isinstance(body, dict) or body.get("resourceType") != "Parameters":
        raise ApiError(400, "the body must be a FHIR Parameters resource")
    unknown_top = sorted(set(body) - {"resourceType", "id", "meta", "parameter"})
    if unknown_top:
        raise ApiError(400, f"unexpected member(s) of Parameters: {', '.join(unknown_top[:5])}")
    if not isinstance(body.get("id", ""), str) or not isinstance(body.get("meta", {}), dict):
        raise ApiError(400, "Parameters.id must be a string and Parameters.meta an object")
    params = body.get("parameter", [])
    if not isinstance(params, list):
        raise ApiError(400, "Parameters.parameter must be a list", expression=["Parameters.parameter"])
    found: dict[str, Any] = {}
    for i, param in enumerate(params):
        where = [f"Parameters.parameter[{i}]"]
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            raise ApiError(400, "each parameter needs a name", expression=where)
        name = param["name"]
        if name not in spec:
            raise ApiError(400, f"unknown parameter {name[:40]!r}; this operation takes {', '.join(sorted(spec))}",
                           expression=where)
        keys = [k for k in param if k not in _ELEMENT_KEYS]
        if len(keys) != 1 or keys[0] not in spec[name]:
            raise ApiError(400, f"parameter {name!r} needs exactly one of {', '.join(spec[name])}", expression=where)
        key = keys[0]
        value = param[key]
        types = VALUE_TYPES[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise ApiError(400, f"parameter {name!r}: {key} has the wrong JSON type", expression=where)
        if key == "valueReference":
            assert isinstance(value, dict)
            value = value.get("reference")
            if not isinstance(value, str):
                raise ApiError(400, f"parameter {name!r}: the reference needs a reference string", expression=where)
        found.setdefault(name, value)
    return found


def reference_of(ref: str) -> str | None:
    """``Type/id`` inside an evidence ref (``note:DocumentReference/9#chunk-2`` → ``DocumentReference/9``)."""
    match = _REF.search(ref.split("#", 1)[0])
    return match.group(1) if match else None


def _evidence(item: dict[str, Any]) -> dict[str, Any]:
    ref = str(item.get("ref", ""))
    target = reference_of(ref)
    reference: dict[str, Any] = {"reference": target} if target else {"display": ref}
    if item.get("label"):
        reference["display"] = str(item["label"])
    parts: list[dict[str, Any]] = [{"name": "reference", "valueReference": reference}]
    if target and target != ref:
        parts.append({"name": "source", "valueString": ref})
    for key in ("field", "path", "unit", "label"):
        if item.get(key) is not None:
            parts.append({"name": key, "valueString": str(item[key])})
    if item.get("value") is not None:
        parts.append({"name": "value", **typed_value(item["value"])})
    if item.get("time"):
        parts.append({"name": "time", **typed_value(str(item["time"]))})
    return {"name": "evidence", "part": parts}


def provenance(answer_id: str, patient_id: str | None, answer: dict[str, Any]) -> dict[str, Any]:
    """The Provenance of an answer: machine-generated, by this software, from the cited records."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    sources: list[dict[str, Any]] = []
    for item in answer.get("evidence", []):
        target = reference_of(str(item.get("ref", "")))
        if target and {"reference": target} not in [s["what"] for s in sources]:
            sources.append({"role": "source", "what": {"reference": target}})
    prov: dict[str, Any] = {
        "resourceType": "Provenance",
        "id": new_id(),
        "meta": {"security": [AI_LABEL]},
        "target": [{"reference": f"Parameters/{answer_id}"}],
        "recorded": now,
        "activity": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v3-DataOperation",
                                 "code": "CREATE", "display": "create"}],
                     "text": "answer generated by fhirqa from the patient's record"},
        "agent": [{
            "type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type",
                                 "code": "author", "display": "Author"}]},
            "who": {"display": f"fhirqa {__version__} ({answer.get('backend', 'offline')} backend)"},
        }],
        "entity": sources,
    }
    if patient_id:
        prov["target"].append({"reference": f"Patient/{patient_id}"})
    if not sources:
        del prov["entity"]
    return prov


def answer_parameters(answer: dict[str, Any], patient_id: str | None) -> dict[str, Any]:
    """An :meth:`Answer.to_dict` as the ``$ask`` output Parameters (with its Provenance)."""
    answer_id = new_id()
    params: list[dict[str, Any]] = [{"name": "answer", **typed_value(v)} for v in answer.get("answer", [])]
    params.append({"name": "text", "valueString": str(answer.get("text", ""))})
    params.append({"name": "status", "valueCode": str(answer.get("status", "error"))})
    if answer.get("unit"):
        params.append({"name": "unit", "valueString": str(answer["unit"])})
    params.extend({"name": "candidate", "valueString": str(c)} for c in answer.get("candidates", []))
    params.extend(_evidence(e) for e in answer.get("evidence", []))
    params.append({"name": "backend", "valueString": str(answer.get("backend", ""))})
    params.append({"name": "latencyMs", "valueDecimal": float(answer.get("latency_ms", 0.0))})
    params.append({"name": "provenance", "resource": provenance(answer_id, patient_id, answer)})
    return {"resourceType": "Parameters", "id": answer_id, "meta": {"security": [AI_LABEL]}, "parameter": params}
