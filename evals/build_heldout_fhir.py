"""Held-out gold, step 1: read one FHIR R4 transaction Bundle into plain facts (no fhirqa code).

References between entries (``urn:uuid:…`` fullUrls or ``Type/id``) are resolved by hand; resources whose
subject is not the bundle's Patient are ignored. Every time is an aware UTC ``datetime`` (offsets honoured),
and ``local`` keeps the wall-clock date as written, for questions that must not depend on the time zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\ufeff]")
_DIGITS = re.compile(r"\d+")
_PERIOD_DAYS = {"s": 1 / 86400, "min": 1 / 1440, "h": 1 / 24, "d": 1.0, "wk": 7.0, "mo": 30.0, "a": 365.0}
_VOID = {"entered-in-error", "cancelled", "not-done"}


def instant(text: str) -> datetime:
    """ISO 8601 date or dateTime → aware UTC datetime (a bare date is 00:00Z)."""
    if len(text) == 4:
        text += "-01-01"
    elif len(text) == 7:
        text += "-01"
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


def local_date(text: str) -> date:
    """The calendar date as written in the timestamp (before any conversion to UTC)."""
    return date.fromisoformat(text[:10]) if len(text) >= 10 else instant(text).date()


def name_of(concept: dict[str, Any] | None) -> str:
    """``text``, else the first ``coding.display``, else the first code; zero-width characters dropped."""
    if not concept:
        return ""
    out = concept.get("text") or next((c["display"] for c in concept.get("coding", []) if c.get("display")),
                                      None) or next((c["code"] for c in concept.get("coding", []) if c.get("code")), "")
    return _ZERO_WIDTH.sub("", str(out))


def codes_of(concept: dict[str, Any] | None) -> frozenset[str]:
    """Every ``coding.code`` of a CodeableConcept."""
    return frozenset(str(c["code"]) for c in (concept or {}).get("coding", []) if c.get("code"))


def status_code(concept: dict[str, Any] | None) -> str | None:
    """The first code of a status CodeableConcept (clinicalStatus, verificationStatus)."""
    for coding in (concept or {}).get("coding", []):
        if coding.get("code"):
            return str(coding["code"])
    return None


@dataclass(frozen=True)
class Value:
    """One numeric value: an Observation's ``valueQuantity`` or one component's."""

    codes: frozenset[str]
    name: str
    value: float
    unit: str
    time: datetime
    ref: str
    category: frozenset[str]


@dataclass(frozen=True)
class Fact:
    """A dated record: encounter, condition, medication (request), statement (MedicationStatement),
    immunization or procedure."""

    kind: str
    name: str
    codes: frozenset[str]
    start: datetime
    ref: str
    end: datetime | None = None
    status: str | None = None
    klass: str | None = None  # Encounter.class.code
    verification: str | None = None  # Condition.verificationStatus
    daily: float | None = None  # MedicationRequest: dose × frequency ÷ period in days
    dose_unit: str | None = None


@dataclass(frozen=True)
class Administration:
    """One MedicationAdministration dose."""

    name: str
    dose: float
    unit: str
    time: datetime
    local_day: date
    ref: str
    status: str


@dataclass
class Record:
    """One patient, as plain facts."""

    id: str
    given: str
    family: str
    gender: str
    birth: date
    deceased: datetime | None
    deceased_flag: bool
    values: list[Value] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    admins: list[Administration] = field(default_factory=list)
    lab_times: list[datetime] = field(default_factory=list)
    cache: dict[Any, list[Any]] = field(default_factory=dict, repr=False, compare=False)

    def of(self, kind: str) -> list[Fact]:
        """Facts of one kind, oldest first (a fresh list; the record is not changed after loading)."""
        if kind not in self.cache:
            self.cache[kind] = [f for f in self.facts if f.kind == kind]
        return list(self.cache[kind])

    def series(self, codes: frozenset[str]) -> list[Value]:
        """Values carrying any of the codes, oldest first."""
        if codes not in self.cache:
            self.cache[codes] = [v for v in self.values if v.codes & codes]
        return list(self.cache[codes])

    def last_time(self) -> datetime:
        """The latest dated fact of the record."""
        times = [v.time for v in self.values] + [f.start for f in self.facts] + [a.time for a in self.admins]
        times += [f.end for f in self.facts if f.end and f.kind != "condition"]
        return max(times + ([self.deceased] if self.deceased else []))


def daily_dose(request: dict[str, Any]) -> tuple[float | None, str | None]:
    """``doseQuantity.value × frequency ÷ period`` in days, from the first dosage that states all three."""
    for dosage in request.get("dosageInstruction", []):
        repeat = (dosage.get("timing") or {}).get("repeat") or {}
        quantity = next((dr["doseQuantity"] for dr in dosage.get("doseAndRate", [])
                         if "value" in dr.get("doseQuantity", {})), None)
        unit = repeat.get("periodUnit")
        if quantity is None or unit not in _PERIOD_DAYS or not repeat.get("period"):
            continue
        per_day = float(repeat.get("frequency", 1)) / (float(repeat["period"]) * _PERIOD_DAYS[unit])
        return float(quantity["value"]) * per_day, quantity.get("unit") or quantity.get("code")
    return None, None


class _Bundle:
    """Entries by resolved reference, and the medication name rule."""

    def __init__(self, bundle: dict[str, Any]) -> None:
        self.entries = [e["resource"] for e in bundle.get("entry", [])]
        self.urls: dict[str, str] = {}
        self.by_ref: dict[str, dict[str, Any]] = {}
        for entry in bundle.get("entry", []):
            res = entry["resource"]
            ref = f"{res['resourceType']}/{res['id']}"
            self.urls[ref] = ref
            if entry.get("fullUrl"):
                self.urls[entry["fullUrl"]] = ref
            self.by_ref[ref] = res

    def resolve(self, reference: dict[str, Any] | None) -> str | None:
        """``Type/id`` a Reference points at, when it is in the bundle."""
        return self.urls.get((reference or {}).get("reference", ""))

    def medication(self, res: dict[str, Any]) -> tuple[str, frozenset[str]]:
        """``medicationCodeableConcept`` name, else the referenced Medication's code name."""
        if "medicationCodeableConcept" in res:
            concept = res["medicationCodeableConcept"]
            return name_of(concept), codes_of(concept)
        target = self.by_ref.get(self.resolve(res.get("medicationReference")) or "")
        if target:
            return name_of(target.get("code")), codes_of(target.get("code"))
        return str((res.get("medicationReference") or {}).get("display", "")), frozenset()


def _start(res: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = res.get(name)
        if isinstance(value, dict):
            value = value.get("start")
        if value:
            return str(value)
    return None


def _add(record: Record, bundle: _Bundle, res: dict[str, Any]) -> None:  # noqa: C901 (one branch per type)
    kind = res["resourceType"]
    ref = f"{kind}/{res['id']}"
    status = res.get("status")
    if kind == "Observation":
        when = _start(res, "effectiveDateTime", "effectivePeriod", "issued")
        if status in _VOID or not when:
            return
        cats = frozenset(c for cc in res.get("category", []) for c in codes_of(cc))
        if "laboratory" in cats:
            record.lab_times.append(instant(when))
        for part in [res, *res.get("component", [])]:
            q = part.get("valueQuantity") or {}
            if "value" in q:
                record.values.append(Value(codes_of(part.get("code")), name_of(part.get("code")), float(q["value"]),
                                           str(q.get("unit") or q.get("code") or ""), instant(when), ref, cats))
    elif kind == "Encounter":
        when = _start(res, "period")
        end = (res.get("period") or {}).get("end")
        if when and status not in _VOID:
            record.facts.append(Fact("encounter", name_of((res.get("type") or [None])[0]),
                                     codes_of((res.get("type") or [None])[0]), instant(when), ref,
                                     instant(end) if end else None, status, (res.get("class") or {}).get("code")))
    elif kind == "Condition":
        when = _start(res, "onsetDateTime", "onsetPeriod", "recordedDate")
        end = res.get("abatementDateTime")
        if when:
            record.facts.append(Fact("condition", name_of(res.get("code")), codes_of(res.get("code")), instant(when),
                                     ref, instant(end) if end else None, status_code(res.get("clinicalStatus")),
                                     verification=status_code(res.get("verificationStatus"))))
    elif kind == "MedicationRequest":
        when = res.get("authoredOn")
        name, codes = bundle.medication(res)
        if when and name and status not in _VOID:
            daily, unit = daily_dose(res)
            record.facts.append(Fact("medication", name, codes, instant(when), ref, status=status, daily=daily,
                                     dose_unit=unit))
    elif kind == "MedicationAdministration":
        when = _start(res, "effectiveDateTime", "effectivePeriod")
        dose = (res.get("dosage") or {}).get("dose") or {}
        name, _ = bundle.medication(res)
        if when and "value" in dose:
            record.admins.append(Administration(name, float(dose["value"]), str(dose.get("unit") or dose.get("code")),
                                                instant(when), local_date(when), ref, str(status)))
    elif kind == "MedicationStatement":  # what the patient reports taking: kept apart from prescriptions
        when = _start(res, "effectiveDateTime", "effectivePeriod", "dateAsserted")
        name, codes = bundle.medication(res)
        if when and name and status not in _VOID:
            record.facts.append(Fact("statement", name, codes, instant(when), ref, status=status))
    elif kind in ("Immunization", "Procedure"):
        when = _start(res, "occurrenceDateTime", "performedDateTime", "performedPeriod")
        concept = res.get("vaccineCode") if kind == "Immunization" else res.get("code")
        if when and status not in _VOID:
            record.facts.append(Fact(kind.lower(), name_of(concept), codes_of(concept), instant(when), ref,
                                     status=status))


def load(path: Path) -> Record:
    """Parse one bundle file into a Record."""
    bundle = _Bundle(orjson.loads(path.read_bytes()))
    patients = [r for r in bundle.entries if r["resourceType"] == "Patient"]
    if len(patients) != 1:
        raise ValueError(f"{path.name}: {len(patients)} Patient resources")
    pat = patients[0]
    names = pat.get("name") or [{}]
    official = next((n for n in names if n.get("use") == "official"), names[0])
    died = pat.get("deceasedDateTime")
    record = Record(id=pat["id"], given=_DIGITS.sub("", (official.get("given") or [""])[0]),
                    family=_DIGITS.sub("", official.get("family", "")), gender=pat.get("gender", "unknown"),
                    birth=date.fromisoformat(pat["birthDate"][:10]), deceased=instant(died) if died else None,
                    deceased_flag=bool(died) or bool(pat.get("deceasedBoolean")))
    me = f"Patient/{pat['id']}"
    for res in bundle.entries:
        subject = res.get("subject") or res.get("patient")
        if res["resourceType"] != "Patient" and bundle.resolve(subject) == me:
            _add(record, bundle, res)
    record.values.sort(key=lambda v: (v.time, v.ref, sorted(v.codes)))
    record.facts.sort(key=lambda f: (f.start, f.kind, f.ref))
    record.admins.sort(key=lambda a: (a.time, a.ref))
    record.lab_times.sort()
    return record


def load_folder(folder: Path) -> list[Record]:
    """Every ``*.json`` bundle of a folder, sorted by patient id."""
    return sorted((load(p) for p in sorted(folder.glob("*.json"))), key=lambda r: r.id)
