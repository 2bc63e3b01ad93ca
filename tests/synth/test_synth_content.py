"""Clinical content: vitals, lab interpretation, medication forms, trends, notes quoting real values."""

from __future__ import annotations

import base64
import re
from collections import defaultdict
from datetime import datetime
from typing import Any

from fhirqa.synth import generate_patients

from .conftest import resources

NOTE_LABS = {
    "K": "2823-3",
    "Na": "2951-2",
    "Cr": "2160-0",
    "WBC": "6690-2",
    "Hgb": "718-7",
    "A1c": "4548-4",
    "BUN": "3094-0",
    "Plt": "777-3",
}


def _loinc(r: dict[str, Any]) -> str:
    return str(r["code"]["coding"][0]["code"])


def _obs(bundle: dict[str, Any], loinc: str) -> list[dict[str, Any]]:
    return [o for o in resources(bundle, "Observation") if _loinc(o) == loinc]


def test_blood_pressure_is_one_observation_with_two_components(few: list[dict[str, Any]]) -> None:
    bps = [o for b in few for o in _obs(b, "85354-9")]
    assert bps
    for o in bps:
        codes = [c["code"]["coding"][0]["code"] for c in o["component"]]
        assert codes == ["8480-6", "8462-4"]
        assert all(c["valueQuantity"]["code"] == "mm[Hg]" for c in o["component"])
        assert o["component"][0]["valueQuantity"]["value"] > o["component"][1]["valueQuantity"]["value"]
        assert o["category"][0]["coding"][0]["code"] == "vital-signs"
    assert not [o for b in few for o in resources(b, "Observation") if _loinc(o) in ("8480-6", "8462-4")]


def test_lab_interpretation_matches_reference_range(few: list[dict[str, Any]]) -> None:
    labs = [
        o
        for b in few
        for o in resources(b, "Observation")
        if o["category"][0]["coding"][0]["code"] == "laboratory" and "valueQuantity" in o
    ]
    assert len(labs) > 100
    flags = set()
    for o in labs:
        v = o["valueQuantity"]["value"]
        rr = o["referenceRange"][0]
        flag = o["interpretation"][0]["coding"][0]["code"]
        expected = (
            "H"
            if "high" in rr and v > rr["high"]["value"]
            else "L"
            if "low" in rr and v < rr["low"]["value"]
            else "N"
        )
        assert flag == expected, o
        assert o["valueQuantity"]["system"] == "http://unitsofmeasure.org"
        flags.add(flag)
    assert flags == {"H", "L", "N"}


def test_both_medication_forms_occur(few: list[dict[str, Any]]) -> None:
    reqs = [r for b in few for r in resources(b, "MedicationRequest")]
    assert any("medicationReference" in r for r in reqs)
    assert any("medicationCodeableConcept" in r for r in reqs)
    meds = {f"urn:uuid:{m['id']}": m for b in few for m in resources(b, "Medication")}
    for r in reqs:
        if "medicationReference" in r:
            assert r["medicationReference"]["reference"] in meds
    for r in reqs:
        dose = r["dosageInstruction"][0]
        assert dose["timing"]["repeat"]["periodUnit"] in ("h", "d")
        assert dose["doseAndRate"][0]["doseQuantity"]["unit"]


def test_brand_names_appear(cohort: list[dict[str, Any]]) -> None:
    texts = [
        r.get("medicationCodeableConcept", r.get("medicationReference", {})).get("text", "")
        or r.get("medicationReference", {}).get("display", "")
        for b in cohort
        for r in resources(b, "MedicationRequest")
    ]
    assert any(re.match(r"^[A-Z][a-zA-Z ]+ \([a-z -]+\)", t) for t in texts), texts[:20]


def _daily_mg(bundle: dict[str, Any], name: str) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for ma in resources(bundle, "MedicationAdministration"):
        med = ma.get("medicationReference", {}).get("display", "") + ma.get(
            "medicationCodeableConcept", {}
        ).get("text", "")
        if name in med.lower() and ma["status"] == "completed":
            start = ma.get("effectiveDateTime") or ma["effectivePeriod"]["start"]
            dose = ma["dosage"]["dose"]
            totals[start[:10]] += dose["value"] * (1000 if dose["code"] == "g" else 1)
    return totals


def test_vancomycin_regimens(cohort: list[dict[str, Any]]) -> None:
    days = [v for b in cohort for v in _daily_mg(b, "vancomycin").values()]
    assert days, "no vancomycin administrations in the cohort"
    assert any(v > 2000 for v in days)
    doses = {
        ma["dosage"]["dose"]["value"]
        for b in cohort
        for ma in resources(b, "MedicationAdministration")
        if "ancomycin" in ma.get("medicationReference", {}).get("display", "")
    }
    assert {1000, 1250} <= doses
    admins = [ma for b in cohort for ma in resources(b, "MedicationAdministration")]
    assert all(ma["request"]["reference"].startswith("urn:uuid:") for ma in admins)
    assert any("effectivePeriod" in ma for ma in admins) and any("effectiveDateTime" in ma for ma in admins)


def _series(bundle: dict[str, Any], loinc: str) -> list[tuple[datetime, float]]:
    return sorted(
        (datetime.fromisoformat(o["effectiveDateTime"]), o["valueQuantity"]["value"])
        for o in _obs(bundle, loinc)
    )


def _started(bundle: dict[str, Any], rxnorm: str) -> datetime | None:
    times = [
        datetime.fromisoformat(r["authoredOn"])
        for r in resources(bundle, "MedicationRequest")
        if r.get("medicationCodeableConcept", {}).get("coding", [{}])[0].get("code") == rxnorm
        and "Continued home" not in str(r.get("note", ""))
        and "priorPrescription" not in r
    ]
    return min(times) if times else None


def test_a1c_falls_after_metformin(cohort: list[dict[str, Any]]) -> None:
    drops = []
    for b in cohort:
        start = _started(b, "861007")
        a1c = _series(b, "4548-4")
        # The diagnostic A1c is drawn at the visit where metformin is prescribed.
        before = [v for t, v in a1c if (t - start).days < 1] if start else []
        after = [v for t, v in a1c if start and (t - start).days > 80]
        if before and after:
            drops.append(before[-1] - min(after))
    assert drops and sum(d > 0.5 for d in drops) >= len(drops) / 2


def test_potassium_rises_after_lisinopril(cohort: list[dict[str, Any]]) -> None:
    rises = []
    for b in cohort:
        start = _started(b, "314076")
        k = _series(b, "2823-3")
        before = [v for t, v in k if start and t <= start]
        after = [v for t, v in k if start and 20 < (t - start).days < 400]
        if before and after:
            rises.append(sum(after) / len(after) - sum(before) / len(before))
    assert rises and sum(rises) / len(rises) > 0.15


def _notes(bundle: dict[str, Any]) -> list[str]:
    return [
        base64.b64decode(d["content"][0]["attachment"]["data"]).decode()
        for d in resources(bundle, "DocumentReference")
    ]


def test_notes_quote_charted_values(few: list[dict[str, Any]]) -> None:
    checked = 0
    for b in few:
        values: dict[str, set[float]] = defaultdict(set)
        for o in resources(b, "Observation"):
            if "valueQuantity" in o:
                values[_loinc(o)].add(float(o["valueQuantity"]["value"]))
        bps = {
            (o["component"][0]["valueQuantity"]["value"], o["component"][1]["valueQuantity"]["value"])
            for o in _obs(b, "85354-9")
        }
        for text in _notes(b):
            for abbr, value in re.findall(r"\b(K|Na|Cr|WBC|Hgb|A1c|BUN|Plt) (\d+(?:\.\d+)?)\b", text):
                assert float(value) in values[NOTE_LABS[abbr]], (abbr, value)
                checked += 1
            for s, d in re.findall(r"\bBP (\d+)/(\d+)", text):
                assert (int(s), int(d)) in bps
                checked += 1
    assert checked > 50


def test_notes_use_shorthand_and_types(few: list[dict[str, Any]], cohort: list[dict[str, Any]]) -> None:
    docs = [d for b in few + cohort[:15] for d in resources(b, "DocumentReference")]
    types = {d["type"]["coding"][0]["code"] for d in docs}
    assert {"34117-2", "11506-3", "18842-5", "34108-1", "34111-5"} <= types
    text = "\n".join(t for b in few for t in _notes(b))
    for token in ("y/o", "hx", "BP ", "HR ", "SpO2", " PO ", "K "):
        assert token in text
    assert all(d["context"]["encounter"][0]["reference"].startswith("urn:uuid:") for d in docs)


def test_inpatient_encounters_have_disposition_and_days(cohort: list[dict[str, Any]]) -> None:
    imp = [e for b in cohort for e in resources(b, "Encounter") if e["class"]["code"] == "IMP"]
    assert imp
    for e in imp:
        assert e["hospitalization"]["dischargeDisposition"]["coding"][0]["code"]
        days = (
            datetime.fromisoformat(e["period"]["end"]) - datetime.fromisoformat(e["period"]["start"])
        ).days
        assert days >= 1
    classes = {e["class"]["code"] for b in cohort for e in resources(b, "Encounter")}
    assert classes == {"AMB", "EMER", "IMP"}


def test_counts_scale_with_n() -> None:
    small = list(generate_patients(2, seed=9))
    large = list(generate_patients(8, seed=9))
    n_small = sum(len(b["entry"]) for b in small)
    n_large = sum(len(b["entry"]) for b in large)
    assert len(small) == 2 and len(large) == 8
    assert n_large > 2.5 * n_small
