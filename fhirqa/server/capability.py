"""What the server says about itself: CapabilityStatement, SMART configuration, OperationDefinitions."""

from __future__ import annotations

from typing import Any

from fhirqa import __version__
from fhirqa.server.config import ServerConfig

_OPS_BASE = "https://fhirqa.dev/OperationDefinition"
SCOPES_SUPPORTED = ["system/*.rs", "system/*.read", "system/*.cu", "system/*.write", "user/*.rs", "user/*.read",
                    "patient/*.rs", "patient/*.read", "patient/Observation.rs", "patient/Observation.read"]


def _param(name: str, use: str, type_: str | None, min_: int, max_: str, doc: str,
           parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "use": use, "min": min_, "max": max_, "documentation": doc}
    if type_:
        param["type"] = type_
    if parts:
        param["part"] = parts
    return param


def operation_definitions() -> dict[str, dict[str, Any]]:
    """fhirqa's operations, by code."""
    ask_in = [
        _param("question", "in", "string", 1, "1", "The question, in a clinician's words"),
        _param("now", "in", "dateTime", 0, "1", "The instant the question is asked at (default: now)"),
        _param("backend", "in", "code", 0, "1", "offline (default) or an LLM backend the server enables"),
    ]
    ask_out = [
        _param("answer", "out", None, 0, "*", "Each answer value (boolean, integer, decimal, date, dateTime, string)"),
        _param("text", "out", "string", 1, "1", "The answer in a sentence"),
        _param("status", "out", "code", 1, "1", "answered | no-data | ambiguous | refused | error"),
        _param("unit", "out", "string", 0, "1", "Unit of numeric answer values"),
        _param("candidate", "out", "string", 0, "*", "With status ambiguous: what the question could mean"),
        _param("evidence", "out", None, 0, "*", "A value the answer rests on", [
            _param("reference", "out", "Reference", 1, "1", "The resource (Type/id)"),
            _param("field", "out", "string", 0, "1", "Canonical field"),
            _param("value", "out", None, 0, "1", "The value"),
            _param("time", "out", "dateTime", 0, "1", "Its clinically relevant time"),
        ]),
        _param("provenance", "out", "Provenance", 1, "1", "Marks the answer as machine-generated"),
    ]
    return {
        "ask": _opdef("ask", "Ask a question about a patient", "Answer a question from the patient's record, "
                      "with the evidence it rests on.", ["Patient"], True, True, ask_in + ask_out),
        "ingest": _opdef("ingest", "Ingest FHIR data", "Store a posted Bundle or NDJSON body (application/fhir+json, "
                         "application/fhir+ndjson); validation and quarantine as in `fhirqa ingest`.",
                         [], True, False, [_param("strict", "in", "boolean", 0, "1", "Abort on the first bad record")]),
        "pull": _opdef("pull", "Pull from a FHIR server", "Read a FHIR server (Patient/$everything or Bulk "
                       "$export) into the store.", [], True, False, [
                           _param("url", "in", "uri", 1, "1", "FHIR base URL (must be allowed by the server)"),
                           _param("patient", "in", "string", 0, "1", "One patient ($everything)"),
                           _param("since", "in", "instant", 0, "1", "Only resources changed since"),
                           _param("bulk", "in", "boolean", 0, "1", "Use Bulk Data $export"),
                           _param("type", "in", "code", 0, "*", "Resource types to read"),
                           _param("token", "in", "string", 0, "1", "Bearer token for that server (never stored)"),
                       ]),
        "check-consistency": _opdef(
            "check-consistency", "Check a note against the record", "Compare the values, units, times and "
            "existence claims of a clinical note with the patient's structured record, entity by entity.",
            ["Patient"], False, True, [
                _param("note", "in", "Reference", 0, "1", "A note of the patient (omit: every note)"),
                _param("text", "in", "string", 0, "1", "A note's text, checked instead of a stored note"),
                _param("time", "in", "dateTime", 0, "1", "The note's time (required with text)"),
                _param("type", "in", "string", 0, "1", "Note type: progress, nursing, admission, discharge…"),
                _param("report", "out", None, 0, "*", "One report per note", [
                    _param("note", "out", "Reference", 0, "1", "The note checked"),
                    _param("inconsistent", "out", "integer", 1, "1", "Entities that disagree with the record"),
                    _param("checked", "out", "integer", 1, "1", "Entities checked"),
                    _param("detail", "out", "string", 1, "1", "The full report (JSON)"),
                ]),
            ]),
        "viewdefinition-run": _opdef(
            "viewdefinition-run", "Run a ViewDefinition", "Run a posted SQL-on-FHIR v2 ViewDefinition over the "
            "store's resources of its type.", [], True, False, [
                _param("viewResource", "in", "ViewDefinition", 1, "1", "The ViewDefinition"),
                _param("patient", "in", "Reference", 0, "1", "Only this patient's resources"),
                _param("_limit", "in", "integer", 0, "1", "Maximum rows (default 1000, at most 10000)"),
                _param("_format", "in", "code", 0, "1", "json (default), ndjson or csv"),
            ]),
    }


def _opdef(code: str, title: str, description: str, resources: list[str], system: bool, instance: bool,
           params: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceType": "OperationDefinition", "id": f"fhirqa-{code}", "url": f"{_OPS_BASE}/fhirqa-{code}",
        "name": "".join(w.capitalize() for w in code.split("-")), "title": title, "status": "active",
        "kind": "operation", "description": description, "code": code, "resource": resources,
        "system": system, "type": False, "instance": instance, "affectsState": code in ("ingest", "pull"),
        "parameter": params,
    }


def smart_configuration(config: ServerConfig) -> dict[str, Any]:
    """``/.well-known/smart-configuration``: the built-in token endpoint and what it supports."""
    return {
        "issuer": config.public_url,
        "jwks_uri": f"{config.public_url}/auth/jwks",
        "token_endpoint": config.token_url,
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["RS384", "ES384"],
        "scopes_supported": SCOPES_SUPPORTED,
        "capabilities": ["client-confidential-asymmetric", "permission-v1", "permission-v2", "context-ehr-patient"],
        "code_challenge_methods_supported": ["S256"],
    }


def capability_statement(config: ServerConfig) -> dict[str, Any]:
    """``/metadata``: the operations and the SMART security of this server."""
    ops = operation_definitions()
    oauth = {"url": "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris",
             "extension": [{"url": "token", "valueUri": config.token_url}]}
    return {
        "resourceType": "CapabilityStatement",
        "status": "active",
        "date": "2026-01-01",
        "kind": "instance",
        "software": {"name": "fhirqa", "version": __version__},
        "implementation": {"description": "fhirqa question answering over FHIR records", "url": config.public_url},
        "fhirVersion": "4.0.1",
        "format": ["application/fhir+json", "json"],
        "rest": [{
            "mode": "server",
            "security": {
                "cors": False,
                "service": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/restful-security-service",
                                         "code": "SMART-on-FHIR"}]}],
                "description": "OAuth2 bearer JWTs (SMART scopes v1 and v2); SMART Backend Services token "
                               "endpoint built in; a token with a patient in context reaches that patient only.",
                "extension": [oauth],
            },
            "resource": [{"type": "Patient", "operation": [
                {"name": "ask", "definition": ops["ask"]["url"]},
                {"name": "check-consistency", "definition": ops["check-consistency"]["url"]}]}],
            "operation": [{"name": code, "definition": op["url"]} for code, op in ops.items() if op["system"]],
        }],
    }
