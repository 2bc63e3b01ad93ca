"""Fixtures for the synthetic patient generator tests: patients are generated once per session."""

from __future__ import annotations

from typing import Any

import pytest

from fhirqa.synth import generate_patients

NOW = "2026-06-30T12:00:00Z"


@pytest.fixture(scope="session")
def few() -> list[dict[str, Any]]:
    """Four patients (seed 7), validated resource by resource."""
    return list(generate_patients(4, seed=7, now=NOW))


@pytest.fixture(scope="session")
def cohort() -> list[dict[str, Any]]:
    """Sixty patients (seed 11): enough for statistical/clinical pattern checks."""
    return list(generate_patients(60, seed=11, now=NOW))


def resources(bundle: dict[str, Any], rtype: str | None = None) -> list[dict[str, Any]]:
    """Resources of a bundle, optionally of one type."""
    return [e["resource"] for e in bundle["entry"] if rtype is None or e["resource"]["resourceType"] == rtype]
