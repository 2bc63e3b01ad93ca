"""Clinical timeline planning: which conditions a patient has and when encounters happen.

The planner only decides *what happens when*; the encounter builders then chart
each event against the evolving physiology.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import catalog as cat
from .clock import DAY, age_on
from .sim import Person

MIN_GAP = timedelta(days=4)


@dataclass
class Plan:
    """One planned encounter."""

    kind: str  # wellness | followup | sick | emergency | inpatient | screening
    time: datetime
    reason: str | None = None
    dx: list[str] = field(default_factory=list)
    los: int = 0
    dies: bool = False
    after_discharge: bool = False


@dataclass
class Timeline:
    """The planned life of one patient inside the record window."""

    start: datetime
    chronic: dict[str, datetime]
    new_dx: set[str]
    plans: list[Plan]
    allergies: list[str]
    death: datetime | None = None


def _prevalence(steps: list[list[float]], age: int) -> float:
    p = 0.0
    for min_age, prob in steps:
        if age >= min_age:
            p = prob
    return p


def _clinic_time(rng: random.Random, day: datetime) -> datetime:
    """A weekday clinic slot between 08:00 and 16:30."""
    while day.weekday() >= 5:
        day += DAY
    return day.replace(hour=rng.randint(8, 16), minute=rng.choice([0, 15, 30]), second=0, microsecond=0)


def _random_day(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = max(1, int((end - start).total_seconds() // 86400))
    return start + DAY * rng.randint(0, span - 1)


def _pick(rng: random.Random, keys: list[str], age: int) -> str:
    """Weighted choice of an acute reason; some are commoner in older patients."""
    w = cat.settings()["weights"]
    older = cat.settings()["older_weights"] if age >= 65 else {}
    return rng.choices(keys, weights=[w.get(k, 1.0) * older.get(k, 1.0) for k in keys])[0]


def choose_chronic(rng: random.Random, who: Person, now: datetime) -> list[str]:
    """Draw chronic conditions by age-specific prevalence with comorbidity boosts."""
    age = age_on(who.birth, now)
    chosen: list[str] = []
    for key in sorted(cat.chronic(), key=lambda k: k != "obesity"):
        d = cat.chronic()[key]
        p = _prevalence(d["prevalence"], age)
        for other, factor in d.get("boost", {}).items():
            if other in chosen or (other == "smoker" and who.smoking != "never"):
                p *= factor
        if who.gender == "female":
            p *= d.get("female_factor", 1.0)
        if key == "asthma" and "copd" in chosen:
            p = 0.0
        if rng.random() < min(p, 0.9):
            chosen.append(key)
    return chosen


def choose_allergies(rng: random.Random) -> list[str]:
    """Zero to two allergies, weighted towards common drug allergies."""
    table = cat.clinical()["allergies"]
    n = rng.choices([0, 1, 2], weights=[0.55, 0.33, 0.12])[0]
    keys = list(table)
    out: list[str] = []
    while len(out) < n:
        k = rng.choices(keys, weights=[table[k]["weight"] for k in keys])[0]
        if k not in out:
            out.append(k)
    return out


def plan_timeline(rng: random.Random, who: Person, now: datetime) -> Timeline:
    """Plan a 2-5 year record ending at ``now`` (or at death)."""
    start = now - DAY * rng.randint(730, 1826)
    chronic_keys = choose_chronic(rng, who, now)
    age = age_on(who.birth, now)
    adult = datetime(who.birth.year + 18, 6, 1, tzinfo=now.tzinfo)
    chronic: dict[str, datetime] = {}
    new_dx: set[str] = set()
    for key in chronic_keys:
        if rng.random() < cat.chronic()[key].get("new_dx", 0.0):
            new_dx.add(key)
        else:
            chronic[key] = max(adult, start - DAY * rng.randint(200, 365 * 12))

    plans: list[Plan] = []
    # Hospital admissions: more likely with more chronic disease.
    # The cohort is drawn from a hospital-affiliated practice, so most records include a stay.
    p_admit = min(0.45 + 0.1 * len(chronic_keys) + (0.1 if age >= 65 else 0.0), 0.9)
    inpatient_reasons = [
        k for k in cat.settings()["inpatient"] if cat.acute()[k].get("requires") in (None, *chronic_keys)
    ]
    n_admit = 0 if rng.random() >= p_admit else (2 if rng.random() < 0.25 else 1)
    for _ in range(n_admit):
        reason = _pick(rng, inpatient_reasons, age)
        lo, hi = cat.acute()[reason]["los"]
        t = _random_day(rng, start + DAY * 60, now - DAY * 20)
        plans.append(
            Plan(
                "inpatient",
                t.replace(hour=rng.randint(9, 22), minute=rng.randint(0, 59)),
                reason,
                los=rng.randint(lo, hi),
            )
        )
    for _ in range(rng.choices([0, 1, 2], weights=[0.35, 0.45, 0.2])[0]):
        reason = _pick(
            rng, [k for k in cat.settings()["emergency"] if k != "uti" or who.gender == "female"], age
        )
        t = _random_day(rng, start + DAY * 20, now - DAY * 3)
        plans.append(Plan("emergency", t.replace(hour=rng.randint(0, 23), minute=rng.randint(0, 59)), reason))
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        reason = _pick(rng, [k for k in cat.settings()["sick"] if k != "uti" or who.gender == "female"], age)
        plans.append(
            Plan("sick", _clinic_time(rng, _random_day(rng, start + DAY * 10, now - DAY * 3)), reason)
        )
    plans = _drop_overlaps(sorted(plans, key=lambda p: p.time))

    # Routine primary care around the acute events.
    busy = [(p.time - MIN_GAP, p.time + DAY * (p.los + 4)) for p in plans]
    chronic_care = bool(chronic_keys)
    t = _clinic_time(rng, start + DAY * rng.randint(0, 45))
    last_wellness: datetime | None = None
    routine: list[Plan] = []
    while t < now - DAY * 7:
        if not any(a <= t <= b for a, b in busy):
            wellness = last_wellness is None or (t - last_wellness).days >= 330
            routine.append(Plan("wellness" if wellness else "followup", t))
            if wellness:
                last_wellness = t
        t = _clinic_time(rng, t + DAY * (rng.randint(85, 170) if chronic_care else rng.randint(160, 330)))
    for p in [p for p in plans if p.kind == "inpatient"]:
        f = _clinic_time(rng, p.time + DAY * (p.los + rng.randint(7, 14)))
        if f < now - DAY:
            routine.append(Plan("followup", f, after_discharge=True))
    if age >= 45 and rng.random() < 0.3:
        routine.append(
            Plan("screening", _clinic_time(rng, _random_day(rng, start, now - DAY * 5)), "colonoscopy")
        )
    if who.gender == "female" and 50 <= age <= 75 and rng.random() < 0.6:
        routine.append(
            Plan("screening", _clinic_time(rng, _random_day(rng, start, now - DAY * 5)), "mammogram")
        )
    if "copd" in chronic_keys:
        routine.append(
            Plan("screening", _clinic_time(rng, _random_day(rng, start, now - DAY * 5)), "spirometry")
        )
    if "heart_failure" in chronic_keys:
        routine.append(Plan("screening", _clinic_time(rng, _random_day(rng, start, now - DAY * 5)), "echo"))
    plans = _drop_overlaps(sorted(plans + routine, key=lambda p: p.time))
    if not plans or plans[0].kind not in ("wellness", "followup"):
        first = _clinic_time(rng, start)
        plans.insert(0, Plan("wellness", first))
        plans = _drop_overlaps(plans)
    plans = _relabel(plans)

    # New diagnoses are made at a clinic visit with enough follow-up left to show a trend.
    clinic = [p for p in plans if p.kind in ("wellness", "followup") and not p.after_discharge]
    for key in sorted(new_dx):
        candidates = clinic[: max(1, len(clinic) - 2)] if len(clinic) >= 3 else []
        if not candidates:
            new_dx.discard(key)
            chronic[key] = max(adult, start - DAY * rng.randint(200, 2000))
            continue
        visit = rng.choice(candidates)
        visit.dx.append(key)
        chronic[key] = visit.time - DAY * rng.randint(120, 300)

    death = _death(rng, age, len(chronic_keys), plans, now)
    if death is not None:
        plans = [p for p in plans if p.time < death or (p.dies)]
    return Timeline(
        start,
        dict(sorted(chronic.items(), key=lambda kv: kv[1])),
        new_dx,
        plans,
        choose_allergies(rng),
        death,
    )


def _relabel(plans: list[Plan]) -> list[Plan]:
    """Space routine visits at least 45 days apart and make roughly yearly ones wellness exams.

    The first encounter is always a wellness visit: it establishes care and the problem list.
    """
    out: list[Plan] = []
    last_routine: datetime | None = None
    last_wellness: datetime | None = None
    for p in plans:
        routine = p.kind in ("wellness", "followup") and not p.after_discharge
        if routine and out and last_routine is not None and (p.time - last_routine).days < 45:
            continue
        if not out:
            p.kind = "wellness"
        elif routine:
            p.kind = (
                "wellness" if last_wellness is None or (p.time - last_wellness).days >= 330 else "followup"
            )
        if p.kind == "wellness":
            last_wellness = p.time
        if routine or not out:
            last_routine = p.time
        out.append(p)
    return out


def _drop_overlaps(plans: list[Plan]) -> list[Plan]:
    """Keep plans in time order, dropping any that start during or right after a previous one."""
    out: list[Plan] = []
    for p in plans:
        if out:
            prev = out[-1]
            busy_until = (
                prev.time + DAY * prev.los + (MIN_GAP if prev.kind in ("inpatient", "emergency") else DAY)
            )
            if p.time < busy_until:
                continue
        out.append(p)
    return out


def _death(rng: random.Random, age: int, n_chronic: int, plans: list[Plan], now: datetime) -> datetime | None:
    """Decide whether (and when) the patient dies; in-hospital deaths end the last admission."""
    p = 0.03 + 0.03 * n_chronic + (0.15 if age >= 75 else 0.0)
    if rng.random() >= p:
        return None
    admissions = [i for i, pl in enumerate(plans) if pl.kind == "inpatient"]
    if admissions and rng.random() < 0.6:
        i = admissions[-1]
        plans[i].dies = True
        del plans[i + 1 :]
        stay = plans[i]
        return stay.time + DAY * stay.los
    last = plans[-1].time + DAY * (plans[-1].los + 10) if plans else now - DAY * 30
    if last >= now - DAY * 2:
        return None
    return (last + (now - last) * rng.uniform(0.1, 0.9)).replace(second=0, microsecond=0)
