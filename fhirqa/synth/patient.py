"""Assemble one synthetic patient: plan the timeline, chart every encounter, emit a transaction Bundle."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from . import catalog as cat
from . import clinic, clinical, hospital, inpatient, meds, people, planner
from .clock import DAY, iso, local_tz, parse_now
from .physiology import Effect, Physiology
from .sim import Chart, Sim

DEFAULT_NOW = "2026-06-30T12:00:00Z"


def _body(rng: random.Random, gender: str, obese: bool) -> tuple[float, float]:
    height = rng.gauss(176.0, 7.0) if gender == "male" else rng.gauss(162.0, 6.5)
    bmi = rng.uniform(30.5, 41.0) if obese else rng.uniform(19.5, 29.5)
    return round(height, 1), bmi * (height / 100.0) ** 2


def _chronic_effects(sim: Sim, chronic: dict[str, datetime], new_dx: set[str]) -> None:
    for key, onset in chronic.items():
        # Newly diagnosed disease creeps up before diagnosis; established disease is simply present.
        ramp = 150.0 if key in new_dx else 0.0
        for spec in cat.chronic()[key].get("effects", []):
            sim.physio.add(Effect(spec["signal"], onset, float(spec["delta"]), ramp))
        if key == "diabetes":
            # Slow glycaemic drift: some diabetics need insulin later in the record.
            sim.physio.add(Effect("a1c", onset, sim.rng.uniform(0.3, 1.6), ramp=1100.0))


def _pharmacy_flu_shots(sim: Sim, start: datetime) -> None:
    """Seasons without a clinic flu shot sometimes have a pharmacy-reported one (no encounter)."""
    for year in range(start.year, sim.end.year + 1):
        day = datetime(year, 10, 1, tzinfo=sim.now.tzinfo) + DAY * sim.rng.randint(0, 55)
        t = day.replace(hour=sim.rng.randint(10, 18), minute=sim.rng.randint(0, 59))
        season = [v for v in sim.vaccines.get("flu", []) if abs((v - t).days) < 120]
        if start <= t <= sim.end and not season and sim.rng.random() < 0.45:
            clinical.immunization(sim, "flu", t, None, None)
            sim.vaccines.setdefault("flu", []).append(t)


def build_patient(patient_seed: int, pool: dict[str, Any], now_utc: datetime) -> dict[str, Any]:
    """Simulate one patient and return their FHIR R4 transaction Bundle."""
    rng = random.Random(patient_seed)  # noqa: S311 - reproducible synthetic data, not crypto
    who, facts = people.person(rng, now_utc)
    now = now_utc.astimezone(local_tz(who.tz_hours))
    tl = planner.plan_timeline(rng, who, now)
    height, weight = _body(rng, who.gender, "obesity" in tl.chronic)
    physio = Physiology(rng, who.gender, who.birth, height, weight)
    chart = Chart(rng)
    pcp = rng.choice(pool["pcp"])
    sim = Sim(
        rng,
        chart,
        who,
        physio,
        now,
        tl.death or now,
        pool,
        pcp,
        chronic_keys=list(tl.chronic),
        mg_variant=rng.randint(0, 1),
        onsets=dict(tl.chronic),
        pending_dx=set(tl.new_dx),
    )
    patient = people.patient_resource(who, facts, pcp, pool["clinic"])
    chart.add(patient)
    sim.use(pool["clinic"])
    sim.use(pcp)
    _chronic_effects(sim, tl.chronic, tl.new_dx)
    if tl.death and not any(p.dies for p in tl.plans):
        who.deceased = tl.death
    for i, plan in enumerate(tl.plans):
        if plan.kind == "inpatient":
            inpatient.run_stay(sim, plan)
        elif plan.kind == "emergency":
            hospital.emergency_visit(sim, plan)
        else:
            clinic.clinic_visit(sim, plan, tl, first=i == 0)
        if who.deceased:
            sim.end = who.deceased
    _pharmacy_flu_shots(sim, tl.start)
    meds.finalize(sim)
    if who.deceased:
        patient["deceasedDateTime"] = iso(who.deceased)
    return to_bundle(chart.entries)


def to_bundle(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """Wrap resources in a transaction Bundle, Synthea style (POST with ``urn:uuid`` fullUrls)."""
    return {
        "resourceType": "Bundle",
        "type": "transaction",
        "entry": [
            {
                "fullUrl": f"urn:uuid:{r['id']}",
                "resource": r,
                "request": {"method": "POST", "url": r["resourceType"]},
            }
            for r in resources
        ],
    }


def generate_patients(n: int, seed: int = 7, now: str = DEFAULT_NOW) -> Iterator[dict[str, Any]]:
    """Yield ``n`` synthetic patients as FHIR R4 transaction Bundles, deterministically for ``seed``.

    Each patient draws from its own RNG seeded by a master ``random.Random(seed)``,
    so the first k patients are identical whatever ``n`` is. ``now`` (ISO-8601)
    is the end of every record; records span roughly 2-5 years before it.
    """
    master = random.Random(seed)  # noqa: S311 - reproducible synthetic data, not crypto
    pool = people.make_pool(seed)
    now_utc = parse_now(now)
    for _ in range(n):
        yield build_patient(master.getrandbits(64), pool, now_utc)
