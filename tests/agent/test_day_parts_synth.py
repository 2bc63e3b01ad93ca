"""Parts of the day and shifts over the synthetic hospital, end to end: synth → ingest → ask.

The bundles come from ``fhirqa.cli synth`` run as a user would type it; each question is asked at a ward
handover inside a stay (07:30 and 19:30 on the stay's own clock, hospital day 3). The gold is read here from the
raw FHIR JSON (each Observation's LOINC code, its ``effectiveDateTime`` as written, with its offset, and its
value), with the clock bounds written in this file: overnight and the night shift 19:00–07:00, the day shift
07:00–19:00, the morning 00:00–12:00, the afternoon 12:00–18:00. Nothing of fhirqa's window code is used for it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest

from fhirqa.agent.engine import ask

HR, SPO2, TEMP, K = "8867-4", "59408-5", "8310-5", "2823-3"


def _cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "fhirqa.cli", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def ward(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """The store and the raw bundles of three synthetic patients (two of them admitted)."""
    root = tmp_path_factory.mktemp("day_parts_synth")
    _cli("synth", "--patients", "3", "--seed", "5150", "--now", "2026-03-15T10:00:00Z", "--out", str(root / "data"))
    _cli("ingest", str(root / "data"), "--db", str(root / "db"))
    bundles = [json.loads(p.read_text("utf-8")) for p in sorted((root / "data").glob("*.json"))]
    return root / "db", bundles


def _patient(bundle: dict[str, Any]) -> str:
    return next(e["resource"]["id"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient")


def _values(bundle: dict[str, Any], code: str, now: datetime) -> list[tuple[datetime, float]]:
    """(time as written, value) of the bundle's final Observations with LOINC ``code`` up to ``now``."""
    out = []
    for entry in bundle["entry"]:
        r = entry["resource"]
        if r["resourceType"] != "Observation" or r.get("status") in ("entered-in-error", "cancelled"):
            continue
        if not any(c.get("code") == code for c in r["code"].get("coding", [])) or "valueQuantity" not in r:
            continue
        when = datetime.fromisoformat(r["effectiveDateTime"])
        if when <= now:
            out.append((when, float(r["valueQuantity"]["value"])))
    return sorted(out)


def _handovers(bundles: list[dict[str, Any]]) -> list[tuple[dict[str, Any], datetime]]:
    """(bundle, now) at 07:30 and 19:30 on hospital day 3 of each stay long enough to hold them."""
    moments = []
    for bundle in bundles:
        for e in bundle["entry"]:
            r = e["resource"]
            if r["resourceType"] != "Encounter" or r.get("class", {}).get("code") not in ("IMP", "ACUTE"):
                continue
            start, end = (datetime.fromisoformat(r["period"][k]) for k in ("start", "end"))
            day3 = start.date() + timedelta(days=2)
            for clock in (time(7, 30), time(19, 30)):
                now = datetime.combine(day3, clock, tzinfo=start.tzinfo)
                if now < end:
                    moments.append((bundle, now))
    return moments


def _local(now: datetime, back: int, hour: int) -> datetime:
    """``hour``:00 on the day ``back`` days before now's, on the record's clock (now's offset)."""
    return datetime.combine(now.date() - timedelta(days=back), time(hour), tzinfo=now.tzinfo)


# question, LOINC code, the window as [first, last] on the record's clock given now, how the gold is read
Window = Callable[[datetime], tuple[datetime, datetime]]


def _overnight(now: datetime) -> tuple[datetime, datetime]:
    back = 0 if now.hour >= 7 else 1
    return _local(now, back + 1, 19), _local(now, back, 7)


def _last_shift(now: datetime) -> tuple[datetime, datetime]:
    # at 07:30 the night shift before; at 19:30 today's day shift (both end just before their end clock)
    if now.hour >= 19:
        return _local(now, 0, 7), _local(now, 0, 19) - timedelta(microseconds=1)
    return _local(now, 1, 19), _local(now, 0, 7) - timedelta(microseconds=1)


def _since_midnight(now: datetime) -> tuple[datetime, datetime]:
    return _local(now, 0, 0), now


def _this_morning(now: datetime) -> tuple[datetime, datetime]:
    return _local(now, 0, 0), min(now, _local(now, 0, 12) - timedelta(microseconds=1))


CASES: list[tuple[str, str, Window, str]] = [
    ("max HR overnight", HR, _overnight, "max"),
    ("lowest SpO2 last shift", SPO2, _last_shift, "min"),
    ("Tmax since midnight", TEMP, _since_midnight, "max"),
    ("K this AM?", K, _this_morning, "latest"),
    ("how many HR readings since midnight?", HR, _since_midnight, "count"),
]


def test_questions_over_a_part_of_the_day_match_the_raw_bundles(ward: tuple[Path, list[dict[str, Any]]]) -> None:
    db, bundles = ward
    moments = _handovers(bundles)
    assert moments, "the synthetic hospital admits someone"
    checked = empty = 0
    for bundle, now in moments:
        for question, code, window, read in CASES:
            first, last = window(now)
            inside = [v for t, v in _values(bundle, code, now) if first <= t <= last]
            got = ask(question, patient_id=_patient(bundle), now=now, db=db)
            where = f"{question!r} at {now.isoformat()}: {got.text}"
            if read == "count":
                assert got.answer == [len(inside)], where
            elif not inside:
                empty += 1
                assert got.status == "no-data" and got.answer == [], where
            else:
                gold = {"max": max(inside), "min": min(inside), "latest": inside[-1]}[read]
                assert got.status == "answered" and got.answer == [pytest.approx(gold)], where
            checked += 1
    assert checked >= 10 and empty < checked
