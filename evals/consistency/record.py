"""One patient's record read straight from a raw Synthea R4 transaction bundle (no fhirqa code).

Only what the note writer needs: observations (components flattened), medication requests, conditions,
procedures, immunizations and encounters, with times as aware UTC datetimes and ``urn:uuid:`` references
reduced to plain ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def when(text: str | None) -> datetime | None:
    """An ISO dateTime (or date) as an aware UTC datetime."""
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _ref(obj: dict[str, Any] | None) -> str | None:
    ref = (obj or {}).get("reference")
    return ref.rsplit(":", 1)[-1].rsplit("/", 1)[-1] if ref else None


def _concept(cc: dict[str, Any] | None) -> tuple[str, str]:
    cc = cc or {}
    coding = (cc.get("coding") or [{}])[0]
    return str(coding.get("code", "")), str(cc.get("text") or coding.get("display") or coding.get("code") or "")


@dataclass(frozen=True)
class Obs:
    """A numeric observation (or one component of a panel)."""

    id: str
    code: str
    name: str
    value: float
    unit: str
    time: datetime
    encounter: str | None


@dataclass(frozen=True)
class Med:
    """A medication request."""

    id: str
    code: str
    name: str
    time: datetime
    encounter: str | None
    status: str
    dose: float | None = None
    frequency: int | None = None
    period: float | None = None
    period_unit: str | None = None
    as_needed: bool = False


@dataclass(frozen=True)
class Event:
    """A condition (time = onset), procedure (time = start) or immunization (time = occurrence)."""

    id: str
    kind: str  # condition, procedure, immunization
    code: str
    name: str
    time: datetime
    encounter: str | None
    end: datetime | None = None  # abatement / performed end


@dataclass(frozen=True)
class Encounter:
    """An encounter."""

    id: str
    cls: str
    type: str
    start: datetime
    end: datetime
    reason: str = ""


@dataclass
class Record:
    """Everything one bundle holds that a note might mention."""

    patient_id: str
    given: str
    family: str
    gender: str
    birth: datetime
    obs: list[Obs] = field(default_factory=list)
    meds: list[Med] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    encounters: list[Encounter] = field(default_factory=list)

    def obs_codes(self) -> set[str]:
        """Every observation code the patient has, ever."""
        return {o.code for o in self.obs}

    def in_encounter(self, enc: Encounter) -> dict[str, list[Any]]:
        """Rows of an encounter by kind (observations, meds, conditions, procedures, immunizations)."""
        out: dict[str, list[Any]] = {"obs": [], "med": [], "condition": [], "procedure": [], "immunization": []}
        for o in self.obs:
            if o.encounter == enc.id:
                out["obs"].append(o)
        for m in self.meds:
            if m.encounter == enc.id:
                out["med"].append(m)
        for e in self.events:
            if e.encounter == enc.id:
                out[e.kind].append(e)
        return out


def _strip_digits(name: str) -> str:
    return "".join(ch for ch in name if not ch.isdigit())


def load_bundle(path: Path) -> Record:
    """Read one Synthea transaction bundle."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    resources = [entry["resource"] for entry in bundle.get("entry", [])]
    patient = next(r for r in resources if r["resourceType"] == "Patient")
    name = (patient.get("name") or [{}])[0]
    record = Record(
        patient_id=patient["id"], given=_strip_digits((name.get("given") or [""])[0]),
        family=_strip_digits(name.get("family", "")), gender=patient.get("gender", "unknown"),
        birth=when(patient.get("birthDate")) or datetime(1970, 1, 1, tzinfo=UTC),
    )
    for r in resources:
        kind = r["resourceType"]
        enc = _ref(r.get("encounter") or r.get("context"))
        if kind == "Observation":
            t = when(r.get("effectiveDateTime") or r.get("issued"))
            if t is None:
                continue
            parts = [(r.get("code"), r.get("valueQuantity"))]
            parts += [(c.get("code"), c.get("valueQuantity")) for c in r.get("component", [])]
            for i, (cc, quantity) in enumerate(parts):
                if quantity and quantity.get("value") is not None:
                    code, text = _concept(cc)
                    record.obs.append(Obs(f"{r['id']}#{i}", code, text, float(quantity["value"]),
                                          str(quantity.get("unit") or quantity.get("code") or ""), t, enc))
        elif kind == "MedicationRequest":
            code, text = _concept(r.get("medicationCodeableConcept"))
            dosage = (r.get("dosageInstruction") or [{}])[0]
            rate = (dosage.get("doseAndRate") or [{}])[0]
            repeat = (dosage.get("timing") or {}).get("repeat") or {}
            record.meds.append(Med(
                r["id"], code, text, when(r.get("authoredOn")) or record.birth, enc, r.get("status", ""),
                (rate.get("doseQuantity") or {}).get("value"), repeat.get("frequency"), repeat.get("period"),
                repeat.get("periodUnit"), bool(dosage.get("asNeededBoolean")),
            ))
        elif kind in ("Condition", "Procedure", "Immunization"):
            cc = r.get("vaccineCode") if kind == "Immunization" else r.get("code")
            code, text = _concept(cc)
            period = r.get("performedPeriod") or {}
            start = when(r.get("onsetDateTime") or r.get("performedDateTime") or period.get("start")
                         or r.get("occurrenceDateTime") or r.get("recordedDate"))
            if start is None:
                continue
            end = when(r.get("abatementDateTime") or period.get("end"))
            record.events.append(Event(r["id"], kind.lower(), code, text, start, enc, end))
        elif kind == "Encounter":
            period = r.get("period") or {}
            start, end = when(period.get("start")), when(period.get("end"))
            if start is None:
                continue
            _, type_text = _concept((r.get("type") or [{}])[0])
            _, reason = _concept((r.get("reasonCode") or [{}])[0])
            record.encounters.append(Encounter(r["id"], (r.get("class") or {}).get("code", ""), type_text,
                                               start, end or start, reason))
    record.encounters.sort(key=lambda e: e.start)
    return record
