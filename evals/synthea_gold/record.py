"""Read one Synthea transaction bundle into plain facts, resolving ``urn:uuid:`` references by hand."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson

UTC = UTC
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\ufeff]")
_DIGITS = re.compile(r"\d+")


def parse_instant(text: str) -> datetime:
    """ISO 8601 date or dateTime → aware UTC datetime (a bare date is midnight UTC)."""
    if len(text) == 4:
        text += "-01-01"
    elif len(text) == 7:
        text += "-01"
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def concept_name(concept: dict[str, Any] | None) -> str | None:
    """``CodeableConcept.text``, else the first ``coding.display``, else the first code."""
    if not concept:
        return None
    if concept.get("text"):
        return str(concept["text"])
    for coding in concept.get("coding", []):
        if coding.get("display"):
            return str(coding["display"])
    for coding in concept.get("coding", []):
        if coding.get("code"):
            return str(coding["code"])
    return None


def concept_codes(concept: dict[str, Any] | None) -> tuple[str, ...]:
    """Every ``coding.code`` of a CodeableConcept."""
    return tuple(str(c["code"]) for c in (concept or {}).get("coding", []) if c.get("code"))


def clean_name(text: str) -> str:
    """A name without zero-width characters (Synthea writes ``Mass/\\u200bvolume`` sometimes)."""
    return _ZERO_WIDTH.sub("", text)


@dataclass(frozen=True)
class Measurement:
    """One numeric value of one item (an Observation value or one of its components)."""

    codes: tuple[str, ...]
    name: str
    value: float
    unit: str | None
    time: datetime
    ref: str


@dataclass(frozen=True)
class Event:
    """A dated clinical fact: encounter, condition, prescription, immunization or procedure."""

    kind: str  # encounter | condition | medication | immunization | procedure
    name: str
    codes: tuple[str, ...]
    start: datetime
    end: datetime | None
    ref: str
    status: str | None = None
    klass: str | None = None  # Encounter.class.code
    daily_dose: float | None = None  # doseQuantity × frequency ÷ period in days, when stated


@dataclass
class PatientRecord:
    """Everything the gold builder needs about one patient."""

    id: str
    given: str  # first given name, Synthea digits removed
    family: str
    gender: str
    birth_date: date
    deceased: datetime | None
    measurements: list[Measurement] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    path: Path | None = None
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def of_kind(self, kind: str) -> list[Event]:
        """Events of one kind, oldest first."""
        key = ("kind", kind)
        if key not in self.cache:
            self.cache[key] = [e for e in self.events if e.kind == kind]
        return list(self.cache[key])

    def values_of(self, codes: frozenset[str]) -> list[Measurement]:
        """Measurements carrying any of the codes, oldest first."""
        key = ("codes", codes)
        if key not in self.cache:
            self.cache[key] = [m for m in self.measurements if codes.intersection(m.codes)]
        return list(self.cache[key])

    def last_event_time(self) -> datetime:
        """The latest dated fact of the record (measurements and events)."""
        times = [m.time for m in self.measurements] + [e.start for e in self.events]
        times += [e.end for e in self.events if e.end is not None and e.kind != "condition"]
        if self.deceased:
            times.append(self.deceased)
        return max(times)


_PERIOD_DAYS = {"s": 1 / 86400, "min": 1 / 1440, "h": 1 / 24, "d": 1.0, "wk": 7.0, "mo": 30.0, "a": 365.0}


def daily_dose(request: dict[str, Any]) -> float | None:
    """doseQuantity.value × timing.repeat.frequency ÷ period (in days) of the first dosage that has them."""
    for dosage in request.get("dosageInstruction", []):
        repeat = (dosage.get("timing") or {}).get("repeat") or {}
        dose = None
        for dr in dosage.get("doseAndRate", []):
            if "doseQuantity" in dr and "value" in dr["doseQuantity"]:
                dose = float(dr["doseQuantity"]["value"])
                break
        unit = repeat.get("periodUnit")
        if dose is None or unit not in _PERIOD_DAYS or not repeat.get("period"):
            continue
        frequency = float(repeat.get("frequency", 1))
        return dose * frequency / (float(repeat["period"]) * _PERIOD_DAYS[unit])
    return None


def _observation_time(obs: dict[str, Any]) -> datetime | None:
    text = obs.get("effectiveDateTime") or (obs.get("effectivePeriod") or {}).get("start") or obs.get("issued")
    return parse_instant(text) if text else None


def _start_of(resource: dict[str, Any], *fields: str) -> datetime | None:
    for name in fields:
        value = resource.get(name)
        if isinstance(value, dict):
            value = value.get("start")
        if value:
            return parse_instant(value)
    return None


def load_record(path: Path) -> PatientRecord:
    """Parse one bundle; resources whose subject does not resolve to the bundle's Patient are ignored."""
    bundle = orjson.loads(path.read_bytes())
    entries = bundle.get("entry", [])
    by_url: dict[str, str] = {}
    for entry in entries:
        res = entry["resource"]
        ref = f"{res['resourceType']}/{res['id']}"
        by_url[entry.get("fullUrl", ref)] = ref
        by_url[ref] = ref
    patients = [e["resource"] for e in entries if e["resource"]["resourceType"] == "Patient"]
    if len(patients) != 1:
        raise ValueError(f"{path.name}: expected one Patient, found {len(patients)}")
    pat = patients[0]
    pat_ref = f"Patient/{pat['id']}"
    name = next((n for n in pat.get("name", []) if n.get("use") == "official"), (pat.get("name") or [{}])[0])
    record = PatientRecord(
        id=pat["id"],
        given=_DIGITS.sub("", (name.get("given") or [""])[0]),
        family=_DIGITS.sub("", name.get("family", "")),
        gender=pat.get("gender", "unknown"),
        birth_date=parse_instant(pat["birthDate"]).date(),
        deceased=parse_instant(pat["deceasedDateTime"]) if pat.get("deceasedDateTime") else None,
        path=path,
    )
    medications = {by_url.get(e.get("fullUrl", "")): e["resource"] for e in entries
                   if e["resource"]["resourceType"] == "Medication"}
    for entry in entries:
        res = entry["resource"]
        kind = res["resourceType"]
        subject = (res.get("subject") or res.get("patient") or {}).get("reference")
        if kind == "Patient" or subject is None or by_url.get(subject) != pat_ref:
            continue
        ref = f"{kind}/{res['id']}"
        if kind == "Observation":
            _add_observation(record, res, ref)
        elif kind == "Encounter":
            start = _start_of(res, "period")
            end = (res.get("period") or {}).get("end")
            if start:
                record.events.append(Event("encounter", concept_name((res.get("type") or [None])[0]) or "",
                                           concept_codes((res.get("type") or [None])[0]), start,
                                           parse_instant(end) if end else None, ref, res.get("status"),
                                           (res.get("class") or {}).get("code")))
        elif kind == "Condition":
            start = _start_of(res, "onsetDateTime", "onsetPeriod", "recordedDate")
            end = res.get("abatementDateTime")
            if start:
                record.events.append(Event("condition", concept_name(res.get("code")) or "",
                                           concept_codes(res.get("code")), start,
                                           parse_instant(end) if end else None, ref))
        elif kind == "MedicationRequest":
            concept = res.get("medicationCodeableConcept")
            if concept is None and "medicationReference" in res:
                med = medications.get(by_url.get(res["medicationReference"].get("reference", "")))
                concept = (med or {}).get("code")
            start = _start_of(res, "authoredOn")
            if start and concept:
                record.events.append(Event("medication", concept_name(concept) or "", concept_codes(concept),
                                           start, None, ref, res.get("status"), daily_dose=daily_dose(res)))
        elif kind == "Immunization":
            start = _start_of(res, "occurrenceDateTime")
            if start:
                record.events.append(Event("immunization", concept_name(res.get("vaccineCode")) or "",
                                           concept_codes(res.get("vaccineCode")), start, None, ref,
                                           res.get("status")))
        elif kind == "Procedure":
            start = _start_of(res, "performedDateTime", "performedPeriod")
            if start:
                end = (res.get("performedPeriod") or {}).get("end")
                record.events.append(Event("procedure", concept_name(res.get("code")) or "",
                                           concept_codes(res.get("code")), start,
                                           parse_instant(end) if end else None, ref, res.get("status")))
    record.measurements.sort(key=lambda m: (m.time, m.ref, m.codes))
    record.events.sort(key=lambda e: (e.start, e.kind, e.ref))
    return record


def _add_observation(record: PatientRecord, obs: dict[str, Any], ref: str) -> None:
    if obs.get("status") in {"entered-in-error", "cancelled"}:
        return
    time = _observation_time(obs)
    if time is None:
        return
    parts = [obs] + list(obs.get("component", []))
    for part in parts:
        quantity = part.get("valueQuantity")
        if not quantity or "value" not in quantity:
            continue
        record.measurements.append(Measurement(
            codes=concept_codes(part.get("code")),
            name=clean_name(concept_name(part.get("code")) or ""),
            value=float(quantity["value"]),
            unit=quantity.get("unit") or quantity.get("code"),
            time=time,
            ref=ref,
        ))


def load_all(folder: Path) -> list[PatientRecord]:
    """Every bundle of a folder, sorted by patient id (deterministic)."""
    records = [load_record(p) for p in sorted(folder.glob("*.json"))]
    return sorted(records, key=lambda r: r.id)
