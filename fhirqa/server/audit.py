"""The audit log: one FHIR AuditEvent per request, as NDJSON.

Each event says who (issuer, subject, client, network address), which patient, what operation,
when, and the outcome (HTTP status mapped to the AuditEvent outcome codes). The question text of
``$ask`` goes here (as ``entity.query``, base64, as FHIR defines it) when ``audit_questions`` is on,
and nowhere else; tokens and secrets never do.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from fhirqa.server.auth import Principal
from fhirqa.server.errors import dumps
from fhirqa.server.ids import new_id

log = logging.getLogger("fhirqa.server")

_EVENT_TYPE = {"system": "http://terminology.hl7.org/CodeSystem/audit-event-type", "code": "rest",
               "display": "RESTful Operation"}
_LOGIN_TYPE = {"system": "http://dicom.nema.org/resources/ontology/DCM", "code": "110114",
               "display": "User Authentication"}
_OPERATION_SYSTEM = "https://fhirqa.dev/CodeSystem/operation"


@dataclass
class AuditContext:
    """What a route tells the audit log about the request it served (set on ``request.state.audit``)."""

    operation: str = ""
    action: str = "E"  # C create, R read, U update, D delete, E execute
    patient: str | None = None
    principal: Principal | None = None
    question: str | None = None
    detail: dict[str, str] = field(default_factory=dict)  # short, non-sensitive facts (view name, job id)


def _outcome(status: int) -> str:
    """AuditEvent.outcome: 0 success, 4 minor failure (refused, bad request), 8 serious failure."""
    if status < 400:
        return "0"
    return "4" if status < 500 else "8"


class AuditLog:
    """Appends AuditEvents to an NDJSON file (one line each, flushed at once)."""

    def __init__(self, path: Path, include_questions: bool = True) -> None:
        self.path = path
        self.include_questions = include_questions
        self._lock = threading.Lock()
        self._handle: IO[bytes] | None = None

    def open(self) -> None:
        """Open the file for appending (created with owner-only permissions)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch(mode=0o600, exist_ok=True)
        self._handle = self.path.open("ab")

    def close(self) -> None:
        """Flush and close."""
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def event(self, ctx: AuditContext, *, method: str, path: str, status: int, address: str | None,
              request_id: str) -> dict[str, Any]:
        """The AuditEvent for one request."""
        operation = ctx.operation or f"{method} {path}"
        event: dict[str, Any] = {
            "resourceType": "AuditEvent",
            "id": new_id(),
            "type": _LOGIN_TYPE if ctx.operation == "token" else _EVENT_TYPE,
            "subtype": [{"system": _OPERATION_SYSTEM, "code": operation}],
            "action": ctx.action,
            "recorded": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "outcome": _outcome(status),
            "outcomeDesc": f"HTTP {status}",
            "agent": [self._agent(ctx.principal, address)],
            "source": {"observer": {"display": "fhirqa server"},
                       "type": [{"system": "http://terminology.hl7.org/CodeSystem/security-source-type",
                                 "code": "4", "display": "Application Server"}]},
            "entity": [],
            "extension": [{"url": "https://fhirqa.dev/StructureDefinition/request-id", "valueString": request_id}],
        }
        if ctx.patient:
            event["entity"].append({
                "what": {"reference": f"Patient/{ctx.patient}"},
                "type": {"system": "http://terminology.hl7.org/CodeSystem/audit-entity-type", "code": "1",
                         "display": "Person"},
                "role": {"system": "http://terminology.hl7.org/CodeSystem/object-role", "code": "1",
                         "display": "Patient"},
            })
        if ctx.question is not None:
            event["entity"].append(self._question(ctx.question))
        for key, value in ctx.detail.items():
            event["entity"].append({"detail": [{"type": key, "valueString": str(value)[:200]}]})
        if not event["entity"]:
            del event["entity"]
        return event

    def _agent(self, principal: Principal | None, address: str | None) -> dict[str, Any]:
        agent: dict[str, Any] = {"requestor": True}
        if principal is not None:
            agent["who"] = {"identifier": {"system": principal.issuer, "value": principal.subject},
                            "display": principal.display}
            if principal.patient:
                agent["extension"] = [{"url": "https://fhirqa.dev/StructureDefinition/patient-context",
                                       "valueReference": {"reference": f"Patient/{principal.patient}"}}]
        else:
            agent["who"] = {"display": "unauthenticated"}
        if address:
            agent["network"] = {"address": address, "type": "2"}  # 2 = IP address
        return agent

    def _question(self, question: str) -> dict[str, Any]:
        entity: dict[str, Any] = {
            "type": {"system": "http://terminology.hl7.org/CodeSystem/audit-entity-type", "code": "2",
                     "display": "System Object"},
            "description": "question",
            "detail": [{"type": "sha256", "valueString": hashlib.sha256(question.encode()).hexdigest()}],
        }
        if self.include_questions:
            entity["query"] = base64.b64encode(question.encode()).decode()
        return entity

    def write(self, event: dict[str, Any]) -> None:
        """Append one event; a failing audit log is reported in the ordinary log, not to the client."""
        line = dumps(event) + b"\n"
        with self._lock:
            try:
                if self._handle is None:
                    self.open()
                assert self._handle is not None
                self._handle.write(line)
                self._handle.flush()
            except OSError as exc:
                log.error("cannot write the audit log %s: %s", self.path, exc.strerror)
