"""Minimal FHIR resources with sensible defaults, so a test states only what it is about."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any


def patient(pid: str = "p1", **extra: Any) -> dict[str, Any]:
    """A Patient."""
    return {"resourceType": "Patient", "id": pid, "name": [{"given": ["Ada"], "family": "Lovelace"}],
            "gender": "female", "birthDate": "1970-01-02", **extra}


def observation(
    oid: str = "o1", pid: str = "p1", code: str = "2823-3", display: str = "Potassium", value: float = 4.1,
    unit: str = "mmol/L", when: str = "2024-03-01T08:00:00Z", **extra: Any,
) -> dict[str, Any]:
    """A laboratory Observation with a valueQuantity."""
    return {
        "resourceType": "Observation", "id": oid, "status": "final",
        "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                  "code": "laboratory"}]}],
        "code": {"coding": [{"system": "http://loinc.org", "code": code, "display": display}], "text": display},
        "subject": {"reference": f"Patient/{pid}"},
        "effectiveDateTime": when,
        "valueQuantity": {"value": value, "unit": unit, "system": "http://unitsofmeasure.org", "code": unit},
        **extra,
    }


def condition(cid: str = "c1", pid: str = "p1", display: str = "Hypertension", **extra: Any) -> dict[str, Any]:
    """An active Condition."""
    return {
        "resourceType": "Condition", "id": cid,
        "clinicalStatus": {"coding": [{"code": "active"}]},
        "code": {"coding": [{"system": "http://snomed.info/sct", "code": "38341003", "display": display}]},
        "subject": {"reference": f"Patient/{pid}"}, "onsetDateTime": "2020-05-01", **extra,
    }


def note(nid: str, text: str, when: str, pid: str = "p1", kind: str = "Progress note") -> dict[str, Any]:
    """A DocumentReference holding ``text`` as a base64 text/plain attachment, written at ``when``."""
    return {"resourceType": "DocumentReference", "id": nid, "status": "current", "type": {"text": kind},
            "subject": {"reference": f"Patient/{pid}"}, "date": when,
            "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(text.encode()).decode()}}]}


def transaction(*resources: dict[str, Any]) -> dict[str, Any]:
    """A Synthea-style transaction Bundle: fullUrls are urn:uuid and references point at them."""
    full = {f"{r['resourceType']}/{r['id']}": f"urn:uuid:{r['id']}" for r in resources}
    entries = []
    for resource in resources:
        text = json.dumps(resource)
        for ref, urn in full.items():
            text = text.replace(f'"{ref}"', f'"{urn}"')
        entries.append({"fullUrl": full[f"{resource['resourceType']}/{resource['id']}"],
                        "resource": json.loads(text),
                        "request": {"method": "POST", "url": resource["resourceType"]}})
    return {"resourceType": "Bundle", "type": "transaction", "entry": entries}


def write_json(path: Path, obj: Any) -> Path:
    """Write ``obj`` as JSON and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def write_ndjson(path: Path, lines: list[Any]) -> Path:
    """Write NDJSON: dicts are dumped, strings written as they are (to make bad lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path
