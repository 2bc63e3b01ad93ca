"""Per-patient physiology: baselines plus time-varying effects for every measured signal.

A *signal* is anything we measure (``potassium``, ``sbp``, ``weight``, ``phq9`` ...).
Its true value at time ``t`` is the patient's baseline plus the sum of active
:class:`Effect` objects (diseases, drugs, acute illness). A measurement adds
visit-to-visit noise. Because labs, vitals, notes and medication changes are all
derived from these signals, the record stays internally consistent: potassium
really does rise after lisinopril starts, A1c really does fall on metformin.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

from . import catalog
from .clock import age_on, days_between


@dataclass
class Effect:
    """A change of ``delta`` in one signal from ``start``.

    ``ramp`` days to reach full effect (drugs), optional exponential decay with
    ``half_life`` days (acute illness), and an optional ``end`` after which the
    effect fades out over ``max(ramp, 3)`` days (drug stopped).
    """

    signal: str
    start: datetime
    delta: float
    ramp: float = 0.0
    half_life: float | None = None
    end: datetime | None = None

    def at(self, t: datetime) -> float:
        """Contribution of this effect at time ``t``."""
        if t < self.start:
            return 0.0
        d = days_between(self.start, t)
        if self.ramp > 0 and d < self.ramp:
            v = self.delta * d / self.ramp
        else:
            v = self.delta
            if self.half_life:
                v *= 0.5 ** ((d - self.ramp) / self.half_life)
        if self.end is not None and t > self.end:
            v *= max(0.0, 1.0 - days_between(self.end, t) / max(self.ramp, 3.0))
        return v


def sex_value(value: Any, sex: str) -> Any:
    """Resolve a ``{"male": x, "female": y}`` object for ``sex``; plain values pass through."""
    if isinstance(value, dict):
        return value["male" if sex == "male" else "female"]
    return value


@cache
def signal_defs() -> dict[str, dict[str, Any]]:
    """All signals that have a baseline: non-derived labs, vitals and PHQ-9."""
    out: dict[str, dict[str, Any]] = {}
    for key, d in catalog.labs().items():
        if "mean" in d and "signal" not in d:
            out[key] = d
    for key, d in catalog.vitals().items():
        if "mean" in d:
            out[key] = d
    out["phq9"] = catalog.clinical()["surveys"]["phq9"]
    out["pain"] = {"mean": 0.3, "sd": 0.6, "psd": 0.3, "min": 0, "max": 10}
    return out


def egfr_ckd_epi_2021(creatinine: float, age: int, sex: str) -> float:
    """eGFR (mL/min/1.73 m2) from serum creatinine by the race-free CKD-EPI 2021 equation."""
    female = sex == "female"
    kappa = 0.7 if female else 0.9
    alpha = -0.241 if female else -0.302
    ratio = creatinine / kappa
    value = 142 * min(ratio, 1.0) ** alpha * max(ratio, 1.0) ** -1.200 * 0.9938**age
    return value * (1.012 if female else 1.0)


def interpret(value: float, low: float | None, high: float | None) -> str:
    """HL7 v3 interpretation code (H/L/N) of a reported value against its reference range."""
    if high is not None and value > high:
        return "H"
    if low is not None and value < low:
        return "L"
    return "N"


class Physiology:
    """Baselines and effects of one patient; :meth:`measure` draws a noisy reading."""

    def __init__(self, rng: random.Random, sex: str, birth: date, height_cm: float, weight_kg: float):
        self.rng = rng
        self.sex = sex
        self.birth = birth
        self.height_cm = height_cm
        self.effects: dict[str, list[Effect]] = defaultdict(list)
        self.base: dict[str, float] = {}
        # Draw every baseline up front, in a fixed order, so that which labs happen
        # to be drawn later does not change anybody's baseline.
        for key, d in signal_defs().items():
            mean = float(sex_value(d["mean"], sex))
            self.base[key] = mean + rng.gauss(0.0, float(d.get("psd", 0.0)))
        self.base["weight"] = weight_kg

    def add(self, effect: Effect) -> Effect:
        """Register an effect and return it (callers keep it to set ``end`` later)."""
        self.effects[effect.signal].append(effect)
        return effect

    def add_all(self, specs: list[dict[str, Any]], start: datetime, scale: float = 1.0) -> list[Effect]:
        """Register effects described in the data files (``signal``, ``delta``, ``ramp``, ``half_life``)."""
        return [
            self.add(
                Effect(
                    s["signal"],
                    start,
                    float(s["delta"]) * scale,
                    float(s.get("ramp", 0.0)),
                    s.get("half_life"),
                )
            )
            for s in specs
        ]

    def add_illness(self, specs: list[dict[str, Any]], onset: datetime, peak: datetime) -> list[Effect]:
        """Acute illness: effects build from ``onset`` to ``peak`` (presentation), then decay."""
        ramp = max(days_between(onset, peak), 0.1)
        return [
            self.add(Effect(s["signal"], onset, float(s["delta"]), ramp, s.get("half_life", 2.0)))
            for s in specs
        ]

    def true_value(self, signal: str, t: datetime) -> float:
        """Noise-free value of a signal at ``t``."""
        return self.base[signal] + sum(e.at(t) for e in self.effects.get(signal, ()))

    def measure(self, signal: str, t: datetime, sd: float | None = None) -> float:
        """Noisy reading clamped to the physiological limits of the signal (unrounded)."""
        defs = signal_defs()
        d = defs[signal] if signal in defs else catalog.vitals()[signal]
        noise = float(d.get("sd", 0.0)) if sd is None else sd
        value = self.true_value(signal, t) + self.rng.gauss(0.0, noise)
        lo, hi = d.get("min"), d.get("max")
        if lo is not None:
            value = max(float(lo), value)
        if hi is not None:
            value = min(float(hi), value)
        if not math.isfinite(value):  # pragma: no cover - defensive
            value = float(lo or 0.0)
        return value

    def age(self, t: datetime) -> int:
        """Age in years at ``t``."""
        return age_on(self.birth, t)
