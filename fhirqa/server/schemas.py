"""JSON Schemas for the OpenAPI document: what each route accepts and answers.

Routes return Response objects directly (FHIR JSON is serialized with orjson, not through pydantic),
so the schemas here are the contract; the Schemathesis test holds the server to them.
"""

from __future__ import annotations

from typing import Any

from fhirqa.server.errors import FHIR_JSON

_STR = {"type": "string"}
OPERATION_OUTCOME: dict[str, Any] = {
    "type": "object",
    "required": ["resourceType", "issue"],
    "properties": {
        "resourceType": {"type": "string", "enum": ["OperationOutcome"]},
        "issue": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["severity", "code"],
            "properties": {"severity": {"type": "string", "enum": ["fatal", "error", "warning", "information"]},
                           "code": _STR, "diagnostics": _STR, "expression": {"type": "array", "items": _STR}},
        }},
    },
}


def resource_schema(kind: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "required": ["resourceType", *required],
            "properties": {"resourceType": {"type": "string", "enum": [kind]}}}


PARAMETERS_OUT = resource_schema("Parameters", ("parameter",))
PARAMETERS_OUT["properties"]["parameter"] = {"type": "array", "items": {"type": "object", "required": ["name"]}}


#: An instant as fhirqa reads it: a date, or a date and time with a zone (FHIR dateTime/instant).
INSTANT_PATTERN = r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$"
INSTANT = {"type": "string", "pattern": INSTANT_PATTERN}
QUESTION = {"type": "string", "minLength": 1, "maxLength": 2000}
#: A Parameters contract with value schemas: name → {value key → schema}. The routes read bodies with
#: ``fhir.read_parameters(body, spec_of(...))``, so the schema and the server agree by construction.
ParamSchemas = dict[str, dict[str, dict[str, Any]]]


def spec_of(params: ParamSchemas) -> dict[str, tuple[str, ...]]:
    """The value keys each parameter may use (what ``read_parameters`` enforces)."""
    return {name: tuple(values) for name, values in params.items()}


def parameters_in(params: ParamSchemas, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Schema of an input Parameters resource following ``params``."""
    variants = []
    for name, values in params.items():
        for key, value in values.items():
            variants.append({"type": "object", "required": ["name", key], "additionalProperties": False,
                             "properties": {"name": {"type": "string", "enum": [name]}, key: value}})
    schema = resource_schema("Parameters", ("parameter",))
    schema["additionalProperties"] = False
    schema["properties"].update({"id": {"type": "string"}, "meta": {"type": "object"}})
    schema["properties"]["parameter"] = {"type": "array", "items": {"anyOf": variants},
                                         "minItems": 1 if required else 0}
    if required:
        schema["properties"]["parameter"]["allOf"] = [
            {"contains": {"type": "object", "required": ["name"], "properties": {"name": {"enum": [name]}}}}
            for name in required]
    return schema


ASK_PARAMS: ParamSchemas = {
    "question": {"valueString": QUESTION},
    "now": {"valueDateTime": INSTANT, "valueInstant": INSTANT, "valueDate": INSTANT},
    "backend": {"valueCode": {"type": "string", "maxLength": 40}},
}
ASK_IN = parameters_in(ASK_PARAMS, required=("question",))

ASK_JSON_IN: dict[str, Any] = {
    "type": "object", "required": ["question"], "additionalProperties": False,
    "properties": {"question": QUESTION,
                   "now": {"anyOf": [INSTANT, {"type": "null"}]},
                   "backend": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]}},
}

ANSWER: dict[str, Any] = {
    "type": "object",
    "required": ["answer", "text", "status", "evidence", "backend"],
    "properties": {
        "answer": {"type": "array"},
        "text": _STR,
        "status": {"type": "string", "enum": ["answered", "no-data", "ambiguous", "refused", "error"]},
        "unit": {"type": ["string", "null"]},
        "evidence": {"type": "array", "items": {"type": "object", "required": ["ref", "field"],
                                                "properties": {"ref": _STR, "field": _STR}}},
        "trace": {"type": "object"},
        "backend": _STR,
        "tokens": {"type": "object"},
        "latency_ms": {"type": "number"},
        "candidates": {"type": "array", "items": _STR},
    },
}

JOB: dict[str, Any] = {
    "type": "object",
    "required": ["id", "kind", "status", "created", "url"],
    "properties": {
        "id": _STR, "kind": {"type": "string", "enum": ["ingest", "pull", "ask"]},
        "status": {"type": "string", "enum": ["queued", "running", "completed", "failed", "interrupted"]},
        "created": _STR, "started": {"type": ["string", "null"]}, "finished": {"type": ["string", "null"]},
        "url": _STR, "request": {"type": "object"}, "progress": {"type": "integer"},
        "attempts": {"type": "integer"}, "notes": {"type": "array", "items": _STR},
        "error": {"anyOf": [{"type": "null"}, OPERATION_OUTCOME]},
    },
}
JOB_LIST = {"type": "object", "required": ["jobs"], "properties": {"jobs": {"type": "array", "items": JOB}}}

VIEW_ROWS: dict[str, Any] = {
    "type": "object",
    "required": ["view", "patient", "columns", "rows", "count", "truncated"],
    "properties": {"view": _STR, "patient": _STR, "columns": {"type": "array", "items": _STR},
                   "rows": {"type": "array", "items": {"type": "object"}}, "count": {"type": "integer"},
                   "truncated": {"type": "boolean"}},
}
VIEW_LIST = {"type": "object", "required": ["views"], "properties": {"views": {"type": "array", "items": {
    "type": "object", "required": ["name", "columns"],
    "properties": {"name": _STR, "description": _STR, "columns": {"type": "object"}}}}}}

_ID = {"type": "string", "pattern": "^[A-Za-z0-9\\-.]{1,64}$"}
_TYPE = {"type": "string", "pattern": "^[A-Z][A-Za-z]{1,40}$"}
RUN_PARAMS: ParamSchemas = {
    "viewResource": {"resource": {"type": "object"}},
    "patient": {"valueReference": {"type": "object", "required": ["reference"], "properties": {"reference": _STR}}},
    "_limit": {"valueInteger": {"type": "integer", "minimum": 1, "maximum": 10000}},
    "_format": {"valueCode": {"type": "string", "enum": ["json", "ndjson", "csv"]}},
}
VIEWDEF_IN: dict[str, Any] = {
    "anyOf": [
        {"type": "object", "required": ["resourceType", "resource", "select"],
         "properties": {"resourceType": {"type": "string", "enum": ["ViewDefinition"]}, "resource": _TYPE,
                        "select": {"type": "array", "minItems": 1, "items": {"type": "object"}}}},
        parameters_in(RUN_PARAMS, required=("viewResource",)),
    ]
}

PULL_PARAMS: ParamSchemas = {
    "url": {"valueUri": {"type": "string", "format": "uri"}},
    "patient": {"valueString": _ID},
    "since": {"valueInstant": INSTANT, "valueDateTime": INSTANT},
    "bulk": {"valueBoolean": {"type": "boolean"}},
    "type": {"valueCode": _TYPE},
    "token": {"valueString": {"type": "string"}},
}
PULL_IN = parameters_in(PULL_PARAMS, required=("url",))

BUNDLE_IN: dict[str, Any] = {"type": "object", "required": ["resourceType"],
                             "properties": {"resourceType": _STR, "entry": {"type": "array", "items": {"type": "object"}}}}

TOKEN_IN = {"type": "object", "required": ["grant_type", "client_assertion_type", "client_assertion"],
            "properties": {"grant_type": {"type": "string", "enum": ["client_credentials"]},
                           "client_assertion_type": _STR, "client_assertion": _STR, "scope": _STR}}
TOKEN_OUT = {"type": "object", "required": ["access_token", "token_type", "expires_in", "scope"],
             "properties": {"access_token": _STR, "token_type": _STR, "expires_in": {"type": "integer"},
                            "scope": _STR, "patient": _STR}}
TOKEN_ERROR = {"type": "object", "required": ["error"], "properties": {"error": _STR, "error_description": _STR}}
JWKS = {"type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": {"type": "object"}}}}
STATUS = {"type": "object", "required": ["status"], "properties": {"status": _STR}}


def body(schema: dict[str, Any], *media: str, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` describing a request body read by hand (FHIR JSON is not parsed by pydantic)."""
    return {"requestBody": {"required": required, "content": {m: {"schema": schema} for m in media}}}


def ok(schema: dict[str, Any], media: str = FHIR_JSON, description: str = "OK",
       headers: dict[str, Any] | None = None) -> dict[str, Any]:
    """A documented success response."""
    response: dict[str, Any] = {"description": description, "content": {media: {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


ERROR_DESCRIPTIONS = {
    400: "Bad request (OperationOutcome)", 401: "Missing or invalid access token", 403: "Not allowed for this token",
    404: "Not found", 413: "Request body too large", 415: "Unsupported media type", 422: "Not processable",
    429: "Rate limit exceeded (see Retry-After)", 500: "Internal error", 503: "Store unavailable",
    504: "Took too long",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """Error responses, each an OperationOutcome (every route gets 400, 401, 403, 413, 429 and 500)."""
    wanted = sorted({400, 401, 403, 413, 429, 500, *codes})
    return {code: {"description": ERROR_DESCRIPTIONS[code], "content": {FHIR_JSON: {"schema": OPERATION_OUTCOME}}}
            for code in wanted}


ASYNC_ACCEPTED = {"description": "Accepted: poll the job at Content-Location",
                  "headers": {"Content-Location": {"schema": _STR, "description": "the job's status URL"}},
                  "content": {"application/json": {"schema": JOB}}}
