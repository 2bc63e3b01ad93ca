"""Per-patient simulation state: the growing chart (list of resources) and clinical state."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from .physiology import Effect, Physiology


def ref(resource_id: str, display: str | None = None) -> dict[str, str]:
    """Reference to a resource of the same transaction bundle (``urn:uuid:``)."""
    out = {"reference": f"urn:uuid:{resource_id}"}
    if display:
        out["display"] = display
    return out


@dataclass
class Result:
    """One reported measurement, kept so notes can quote exactly what was charted."""

    key: str
    value: float
    text: str
    unit: str
    time: datetime
    obs_id: str
    encounter_id: str | None
    interp: str | None = None


class Chart:
    """Collects the resources of one patient bundle in creation order."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.entries: list[dict[str, Any]] = []
        self.results: list[Result] = []
        self._included: set[str] = set()

    def new_id(self) -> str:
        """A random (version 4) UUID drawn from the patient's seeded RNG."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def add(self, resource: dict[str, Any]) -> str:
        """Append a resource (assigning an id if it has none) and return its id."""
        if "id" not in resource:
            resource = {"resourceType": resource["resourceType"], "id": self.new_id(), **resource}
        self.entries.append(resource)
        return str(resource["id"])

    def include(self, resource: dict[str, Any]) -> str:
        """Add a shared resource (practitioner, organization) once per bundle."""
        rid = str(resource["id"])
        if rid not in self._included:
            self._included.add(rid)
            self.entries.append(resource)
        return rid

    def record(self, result: Result) -> Result:
        """Remember a charted measurement for later notes."""
        self.results.append(result)
        return result

    def latest(
        self, key: str, before: datetime | None = None, encounter_id: str | None = None
    ) -> Result | None:
        """Most recent result for ``key`` (optionally before a time / within an encounter)."""
        best: Result | None = None
        for r in self.results:
            if r.key != key or (before is not None and r.time > before):
                continue
            if encounter_id is not None and r.encounter_id != encounter_id:
                continue
            if best is None or r.time >= best.time:
                best = r
        return best

    def first(self, key: str, encounter_id: str) -> Result | None:
        """Earliest result for ``key`` within an encounter."""
        found = [r for r in self.results if r.key == key and r.encounter_id == encounter_id]
        return min(found, key=lambda r: r.time) if found else None


@dataclass
class Person:
    """Demographics of the simulated patient."""

    id: str
    gender: str
    birth: date
    given: str
    family: str
    prefix: str | None
    tz_hours: int
    smoking: str
    deceased: datetime | None = None

    @property
    def he(self) -> str:
        return "he" if self.gender == "male" else "she"

    @property
    def sex_short(self) -> str:
        return "M" if self.gender == "male" else "F"


@dataclass
class CondRec:
    """A condition instance already written to the chart."""

    key: str
    id: str
    onset: datetime
    abated: datetime | None = None
    recorded: datetime | None = None


@dataclass
class MedOrder:
    """A medication order (MedicationRequest) and the physiology effects it causes."""

    drug: str
    id: str
    start: datetime
    encounter_id: str | None
    requester_id: str
    setting: str  # community | inpatient | discharge
    dose: float
    timing: tuple[int, float, str]
    medication_id: str | None = None
    end: datetime | None = None
    status: str = "active"
    reason_id: str | None = None
    effects: list[Effect] = field(default_factory=list)
    resource: dict[str, Any] | None = None
    text: str = ""

    def active_at(self, t: datetime) -> bool:
        """True if the order covers time ``t``."""
        return self.start <= t and (self.end is None or t < self.end)


@dataclass
class Sim:
    """Everything the encounter builders need for one patient."""

    rng: random.Random
    chart: Chart
    person: Person
    physio: Physiology
    now: datetime
    end: datetime
    pool: dict[str, Any]
    pcp: dict[str, Any]
    conditions: dict[str, CondRec] = field(default_factory=dict)
    orders: list[MedOrder] = field(default_factory=list)
    allergies: dict[str, str] = field(default_factory=dict)  # key -> reaction text
    medications: dict[str, str] = field(default_factory=dict)
    mg_variant: int = 0
    chronic_keys: list[str] = field(default_factory=list)
    vaccines: dict[str, list[datetime]] = field(default_factory=dict)
    last_stay: str | None = None
    otc: list[str] = field(default_factory=list)
    pending_dx: set[str] = field(default_factory=set)
    onsets: dict[str, datetime] = field(default_factory=dict)

    @property
    def patient_ref(self) -> dict[str, str]:
        return ref(self.person.id)

    def use(self, resource: dict[str, Any]) -> dict[str, str]:
        """Reference to a pooled practitioner/organization, adding it to this bundle."""
        rid = self.chart.include(resource)
        name = resource.get("name")
        if isinstance(name, list):
            n = name[0]
            display = " ".join([*n.get("prefix", []), *n.get("given", []), n.get("family", "")]).strip()
        else:
            display = str(name)
        return ref(rid, display)

    def active_orders(self, t: datetime, setting: str | None = None) -> list[MedOrder]:
        """Orders active at ``t`` (optionally only of one setting)."""
        return [o for o in self.orders if o.active_at(t) and (setting is None or o.setting == setting)]

    def on_drug(self, drug: str, t: datetime) -> MedOrder | None:
        """The active order for a drug at ``t``, if any."""
        for o in self.orders:
            if o.drug == drug and o.active_at(t):
                return o
        return None

    def has(self, key: str) -> bool:
        """True once the condition is on the chart (diagnosed), not merely planned."""
        return key in self.conditions

    def timeline_onset(self, key: str) -> datetime:
        """Planned onset of a chronic condition (before its diagnosis)."""
        return self.onsets[key]
