"""A sample of gold answers re-derived by a different route: FHIRPath (fhirpathpy) over the raw bundles.

The gold builder scans JSON in Python; here the same facts come from FHIRPath expressions, so a
bug in the builder's parsing (times, components, references, classes, statuses) shows up as a mismatch.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

from .helpers import committed_questions, need_synthea

fhirpathpy = pytest.importorskip("fhirpathpy", reason="fhirpathpy is a test extra (pip install -e .[test])")

PER_PATTERN = 4
pytestmark = pytest.mark.shared


def _instant(text: Any) -> datetime:
    value = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


_HEAD_ID = re.compile(rb'"resourceType": "Patient", "id": "([^"]+)"')


@cache
def _paths() -> dict[str, Path]:
    """Patient.id → bundle file (Synthea writes the Patient first; otherwise the whole file is read)."""
    out = {}
    for path in sorted(Path(need_synthea()).glob("*.json")):
        with path.open("rb") as handle:
            m = _HEAD_ID.search(handle.read(4096))
        if m:
            out[m.group(1).decode()] = path
        else:
            bundle = orjson.loads(path.read_bytes())
            for e in bundle["entry"]:
                if e["resource"]["resourceType"] == "Patient":
                    out[e["resource"]["id"]] = path
    return out


@cache
def _bundle(pid: str) -> dict:
    return orjson.loads(_paths()[pid].read_bytes())


def fp(pid: str, expression: str, **env: Any) -> list[Any]:
    return fhirpathpy.evaluate(_bundle(pid), expression, dict(env))


def sample(pattern: str) -> list[dict]:
    """Up to PER_PATTERN answered questions whose template starts with ``pattern``."""
    rows = [r for r in committed_questions() if r["template"].startswith(pattern)
            and r["expected_status"] == "answered"]
    assert rows, pattern
    return rows[:PER_PATTERN]


@cache
def _series(pid: str, ref_id: str, expected: float) -> list[tuple[datetime, float]]:
    """All (time, value) of the item the referenced Observation (or its matching component) measures."""
    (obs,) = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and id = %rid)", rid=ref_id)
    code = None
    for part in [obs, *obs.get("component", [])]:
        value = part.get("valueQuantity", {}).get("value")
        if value is not None and abs(float(value) - expected) < 1e-9:
            code = part["code"]["coding"][0]["code"]
    assert code is not None, f"Observation/{ref_id} holds no value {expected}"
    top = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and code.coding.code = %c)"
             ".select(effectiveDateTime | valueQuantity.value)", c=code)
    comp = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and component.where(code.coding.code = %c).exists())"
              ".select(effectiveDateTime | component.where(code.coding.code = %c).valueQuantity.value)", c=code)
    flat = top + comp
    return [(_instant(flat[i]), float(flat[i + 1])) for i in range(0, len(flat), 2)]


@pytest.mark.parametrize("category,latest", [("latest_value", True), ("first_value", False)])
def test_latest_and_first_values(category: str, latest: bool) -> None:
    for row in sample(category):
        ref_id = row["gold_refs"][0].split("/")[1]
        series = sorted(_series(row["patient_id"], ref_id, row["expected"][0]))
        now = _instant(row["now"])
        series = [s for s in series if s[0] <= now]
        assert (series[-1] if latest else series[0])[1] == pytest.approx(row["expected"][0]), row["id"]


def test_min_max_over_the_whole_record() -> None:
    for side in ("max", "min"):
        for row in sample(f"min_max/{side}-all"):
            ref_id = row["gold_refs"][0].split("/")[1]
            values = [v for _, v in _series(row["patient_id"], ref_id, row["expected"][0])]
            assert (max if side == "max" else min)(values) == pytest.approx(row["expected"][0]), row["id"]


def test_encounter_counts_over_the_whole_record() -> None:
    names = {"EMER": "EMER", "IMP": "IMP", "AMB": "AMB"}
    rows = [r for r in committed_questions() if re.match(r"count_encounters/[A-Z]+-all/", r["template"])]
    assert rows
    for row in rows:
        klass = row["template"].split("/")[1].split("-")[0]
        starts = fp(row["patient_id"], "Bundle.entry.resource.where(resourceType = 'Encounter'"
                    + (" and class.code = %k" if klass in names else "") + ").period.start", k=klass)
        now = _instant(row["now"])
        assert sum(_instant(s) <= now for s in starts) == row["expected"][0], row["id"]


def test_active_medication_lists() -> None:
    for row in sample("active_medications/list"):
        names = fp(row["patient_id"], "Bundle.entry.resource.where(resourceType = 'MedicationRequest' and "
                   "status = 'active').medicationCodeableConcept.text")
        assert sorted(set(names)) == row["expected"], row["id"]


def test_current_problem_lists() -> None:
    for row in sample("active_conditions/now"):
        now = _instant(row["now"])
        conds = fp(row["patient_id"], "Bundle.entry.resource.where(resourceType = 'Condition')")
        active = {c["code"]["text"] for c in conds if _instant(c["onsetDateTime"]) <= now
                  and ("abatementDateTime" not in c or _instant(c["abatementDateTime"]) > now)}
        assert sorted(active) == row["expected"], row["id"]


def test_demographics_and_age() -> None:
    for row in sample("demographics/dob") + sample("demographics/gender"):
        field = "birthDate" if "/dob/" in row["template"] else "gender"
        got = fp(row["patient_id"], f"Bundle.entry.resource.where(resourceType = 'Patient').{field}")
        assert [str(g) for g in got] == row["expected"], row["id"]
    for row in sample("age/now") + sample("age/at-death"):
        (birth,) = fp(row["patient_id"], "Bundle.entry.resource.where(resourceType = 'Patient').birthDate")
        died = fp(row["patient_id"], "Bundle.entry.resource.where(resourceType = 'Patient').deceasedDateTime")
        end = min([_instant(row["now"])] + [_instant(d) for d in died]).date()
        b = date.fromisoformat(str(birth))
        assert end.year - b.year - ((end.month, end.day) < (b.month, b.day)) == row["expected"][0], row["id"]


def test_patient_lookup_names_the_right_patient() -> None:
    rows = sample("patient_lookup")
    by_id: dict[str, tuple[str, str, str]] = {}
    for pid in [r["expected"][0] for r in rows]:
        assert pid in _paths(), pid
        given = fp(pid, "Bundle.entry.resource.where(resourceType = 'Patient').name.where(use = 'official')"
                   ".given.first()")[0]
        family = fp(pid, "Bundle.entry.resource.where(resourceType = 'Patient').name.where(use = 'official')"
                    ".family.first()")[0]
        birth = str(fp(pid, "Bundle.entry.resource.where(resourceType = 'Patient').birthDate")[0])
        by_id[pid] = (re.sub(r"\d", "", given), re.sub(r"\d", "", family), birth)
    for row in rows:
        given, family, birth = by_id[row["expected"][0]]
        assert f"{given} {family}" in row["question"], row["id"]
        d = date.fromisoformat(birth)
        forms = {birth, f"{d.month}/{d.day}/{d.year}", f"{d.strftime('%B')} {d.day}, {d.year}",
                 f"{d.strftime('%b')} {d.day}, {d.year}"}
        assert any(f in row["question"] for f in forms), row["id"]


def test_last_dates_of_labs() -> None:
    rows = sample("first_last_time/lab-last")
    by_pid: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_pid[row["patient_id"]].append(row)
    for pid, items in by_pid.items():
        for row in items:
            ref_id = row["gold_refs"][0].split("/")[1]
            (when,) = fp(pid, "Bundle.entry.resource.where(resourceType = 'Observation' and id = %rid)"
                         ".effectiveDateTime", rid=ref_id)
            assert _instant(when).date().isoformat() == row["expected"][0], row["id"]
