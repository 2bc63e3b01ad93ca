"""The held-out sets (``evals/heldout-*.jsonl``): format, size, coverage, determinism, and a sample of gold
answers re-derived a second way, with FHIRPath (fhirpathpy) over the raw bundles.

The builder scans JSON in Python; here values, encounters, prescriptions, administrations and demographics
come from FHIRPath expressions, so a parsing bug in the builder (times, components, references, statuses,
medication names through ``medicationReference``) shows up as a mismatch. The Synthea checks skip when
``../shared/data`` is absent; the synthetic sample is committed, so its checks always run.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections import Counter
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "evals"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SYNTHEA = SHARED / "synthea-r4"
SAMPLE_DIR = ROOT / "examples" / "sample"
SETS = {"shorthand": EVALS / "heldout-shorthand.jsonl", "sample": EVALS / "heldout-sample.jsonl"}
KEYS = ["id", "patient_id", "question", "now", "category", "answer_type", "expected", "expected_status",
        "tolerance", "gold_refs", "template"]
BOOLEAN_CATEGORIES = ("threshold", "active_conditions", "active_medications", "demographics")


def builder() -> ModuleType:
    """``evals/build_heldout.py`` (it puts ``evals/`` on ``sys.path`` itself)."""
    if str(EVALS) not in sys.path:
        sys.path.insert(0, str(EVALS))
    return importlib.import_module("build_heldout")


@cache
def rows(name: str) -> tuple[dict[str, Any], ...]:
    """The committed questions of one set."""
    return tuple(json.loads(line) for line in SETS[name].read_text(encoding="utf-8").splitlines() if line.strip())


def need_synthea() -> Path:
    """The Synthea folder, or skip with the reason."""
    if not SYNTHEA.is_dir():
        pytest.skip(f"{SYNTHEA} is absent (a fresh clone has no ../shared/data; CI and developer checkouts do)")
    return SYNTHEA


def folder(name: str) -> Path:
    """Where a set's bundles are."""
    return need_synthea() if name == "shorthand" else SAMPLE_DIR


# ---------------------------------------------------------------- format, size, coverage


@pytest.mark.parametrize("name", sorted(SETS))
def test_format(name: str) -> None:
    """Same keys, in the same order, as evals/synthea-r4.jsonl; ids unique; statuses and types consistent."""
    data = rows(name)
    assert len({r["id"] for r in data}) == len(data)
    cats = set(builder().CATEGORIES)
    for r in data:
        assert list(r) == KEYS, r["id"]
        assert r["category"] in cats and r["id"].startswith(r["category"] + "-")
        assert r["template"].startswith(r["category"] + "/") and r["template"].count("/") == 2
        assert r["expected_status"] in ("answered", "no-data")
        assert (r["expected"] == []) == (r["expected_status"] == "no-data") or r["answer_type"] == "list"
        assert r["answer_type"] in ("number", "count", "date", "boolean", "string", "list")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT12:00:00Z", r["now"])
        assert (r["patient_id"] is None) == (r["category"] == "patient_lookup")


def test_shorthand_size_and_coverage() -> None:
    """≥ 250 questions, every category of the first set with ≥ 10."""
    data = rows("shorthand")
    first = {json.loads(line)["category"] for line in (EVALS / "synthea-r4.jsonl").read_text().splitlines()}
    counts = Counter(r["category"] for r in data)
    assert len(data) >= 250
    assert all(counts[c] >= 10 for c in first), counts


def test_sample_size_and_coverage() -> None:
    """≥ 120 questions; the administration totals, vitals, lists and negatives the brief asks for."""
    data = rows("sample")
    counts = Counter(r["category"] for r in data)
    templates = {r["template"].rsplit("/", 1)[0] for r in data}
    assert len(data) >= 120 and len(counts) >= 20
    assert counts["daily_total_administered"] >= 10
    for needed in ("active_conditions/list-now", "active_medications/list", "latest_value/vital",
                   "after_drug/last-vancomycin"):
        assert needed in templates, needed
    assert {r["now"] for r in data} <= {"2026-06-30T12:00:00Z", "2029-06-30T12:00:00Z"}


@pytest.mark.parametrize("name", sorted(SETS))
def test_true_false_and_no_data(name: str) -> None:
    """Boolean categories hold both answers; negatives (false, no-data) are there."""
    data = rows(name)
    cats = BOOLEAN_CATEGORIES + (("daily_total_administered",) if name == "sample" else ())
    for cat in cats:
        seen = {r["expected"][0] for r in data if r["category"] == cat and r["answer_type"] == "boolean"
                and r["expected"]}
        assert seen == {True, False}, cat
    assert {r["expected"][0] for r in data if r["category"] == "existence_positive"} == {True}
    negatives = [r for r in data if r["category"] == "existence_negative"]
    assert any(r["expected_status"] == "no-data" for r in negatives)
    assert any(r["expected"] == [False] for r in negatives)
    assert sum(r["expected_status"] == "no-data" for r in data) >= 5


def test_wording_styles() -> None:
    """Shorthand, requests and narrative; lay words; a few misspellings (not most); new date formats."""
    data = rows("shorthand")
    forms = Counter(r["template"].rsplit("/", 1)[1].split(".")[0] for r in data)
    registers = Counter(r["template"].rsplit(".", 1)[1].split("+")[0] for r in data)
    assert all(forms[f] >= 50 for f in ("short", "ask", "narr")), forms
    assert registers["lay"] >= 30 and 5 <= registers["typo"] <= len(data) // 10, registers
    text = " ".join(r["question"] for r in data)
    assert re.search(r"[A-Z][a-z]{2} '\d\d", text) and re.search(r"\b\d\d/\d{4}\b", text)
    assert re.search(r"the \d+(st|nd|rd|th) of [A-Z][a-z]+ \d{4}", text)


def test_builders_do_not_import_fhirqa() -> None:
    """Gold comes from the raw JSON, never from the engine."""
    for path in EVALS.glob("build_heldout*.py"):
        assert not re.search(r"^\s*(from|import)\s+fhirqa\b", path.read_text(), re.MULTILINE), path.name


def test_sample_set_is_deterministic() -> None:
    """Rebuilding from the committed sample gives the committed bytes."""
    b = builder()
    assert b.render(b.build(b.SAMPLE)) == SETS["sample"].read_text(encoding="utf-8")


@pytest.mark.shared
def test_shorthand_set_is_deterministic() -> None:
    """Rebuilding from ../shared/data gives the committed bytes."""
    need_synthea()
    b = builder()
    assert b.render(b.build(b.SHORTHAND)) == SETS["shorthand"].read_text(encoding="utf-8")


# ---------------------------------------------------------------- second route: FHIRPath

fhirpathpy = pytest.importorskip("fhirpathpy", reason="fhirpathpy is a test extra (pip install -e .[test])")


@cache
def _paths(name: str) -> dict[str, Path]:
    """Patient.id → bundle file (read from the file's head when the Patient comes first)."""
    out = {}
    for path in sorted(folder(name).glob("*.json")):
        with path.open("rb") as handle:
            m = re.search(rb'"resourceType": ?"Patient", ?"id": ?"([^"]+)"', handle.read(4096))
        if m:
            out[m.group(1).decode()] = path
        else:
            bundle = orjson.loads(path.read_bytes())
            out.update({e["resource"]["id"]: path for e in bundle["entry"]
                        if e["resource"]["resourceType"] == "Patient"})
    return out


@cache
def bundle_of(name: str, pid: str) -> tuple[dict, dict[str, dict]]:
    """A patient's bundle and its resources by ``Type/id``."""
    bundle = orjson.loads(_paths(name)[pid].read_bytes())
    return bundle, {f"{e['resource']['resourceType']}/{e['resource']['id']}": e["resource"] for e in bundle["entry"]}


class _Bundles:
    """``bundles(name)[pid]`` → (bundle, index), loaded on first use."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, pid: str) -> tuple[dict, dict[str, dict]]:
        return bundle_of(self.name, pid)


def bundles(name: str) -> _Bundles:
    """Lazy access to a set's bundles by patient id."""
    return _Bundles(name)


def fp(resource: dict, expression: str, **env: Any) -> list[Any]:
    """Evaluate FHIRPath."""
    return fhirpathpy.evaluate(resource, expression, dict(env))


def instant(text: Any) -> datetime:
    """FHIR dateTime → aware UTC datetime."""
    value = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


def now_of(r: dict) -> datetime:
    return instant(r["now"])


def item_codes(name: str, r: dict) -> list[tuple[str, ...]]:
    """Candidate code sets of the item: those of the gold Observation's parts whose value equals the expected
    value (for an average, of every part of the first gold Observation)."""
    vocab = importlib.import_module("build_heldout_vocab")
    out = []
    for ref in r["gold_refs"]:
        obs = bundles(name)[r["patient_id"]][1][ref]
        for part in [obs, *obs.get("component", [])]:
            value = part.get("valueQuantity", {}).get("value")
            every = r["category"] in ("average", "count_measurements")
            if value is None or (not every and abs(float(value) - float(r["expected"][0])) > 1e-9):
                continue
            code = fp(part, "code.coding.code")[0]
            out += [tuple(sorted(i.codes)) for i in vocab.ITEMS.values() if code in i.codes]
        if out:
            return out
    raise AssertionError(f"{r['id']}: no gold Observation holds {r['expected']}")


@cache
def _series(name: str, pid: str, codes: tuple[str, ...]) -> list[tuple[datetime, float]]:
    bundle = bundles(name)[pid][0]
    has = "coding.where(code in %codes).exists()"
    found = fp(bundle, f"Bundle.entry.resource.where(resourceType = 'Observation' and status != 'entered-in-error'"
                       f" and (code.{has} or component.code.{has}))", codes=list(codes))
    out = []
    for obs in found:
        when = (fp(obs, "effectiveDateTime") or fp(obs, "effectivePeriod.start") or fp(obs, "issued"))[0]
        values = fp(obs, f"where(code.{has}).valueQuantity.value | component.where(code.{has}).valueQuantity.value",
                    codes=list(codes))
        out += [(instant(when), float(v)) for v in values]
    return sorted(out)


def series(name: str, r: dict, codes: tuple[str, ...] | None = None) -> list[tuple[datetime, float]]:
    """(time, value) of the item of a value question, up to the question's now."""
    values = _series(name, r["patient_id"], codes or item_codes(name, r)[0])
    return [(t, v) for t, v in values if t <= now_of(r)]


def close(got: float, r: dict) -> bool:
    expected = float(r["expected"][0])
    return abs(got - expected) <= (r["tolerance"] or 0) * abs(expected) + 1e-6


def chosen(name: str, prefixes: tuple[str, ...], limit: int) -> list[dict]:
    """Up to ``limit`` answered questions per template prefix."""
    out = []
    for prefix in prefixes:
        hits = [r for r in rows(name) if r["template"].startswith(prefix) and r["expected_status"] == "answered"]
        out += hits[:limit]
    return out


def _value_gold(name: str, r: dict) -> float | int:
    pattern = r["template"].split("/")[1]
    if r["category"] == "average":
        means = [sum(v for _, v in s) / len(s) for codes in item_codes(name, r) if (s := series(name, r, codes))]
        return min(means, key=lambda m: abs(m - r["expected"][0]))
    values = series(name, r)
    if r["category"] == "latest_value":
        return max(values)[1]
    if r["category"] == "first_value":
        return min(values)[1]
    return (max if pattern.startswith("max") else min)(v for _, v in values)


VALUE_PREFIXES = ("latest_value/lab", "latest_value/vital", "first_value/", "min_max/max-all", "min_max/min-all",
                  "average/all")


@pytest.mark.parametrize("name", sorted(SETS))
def test_values_by_fhirpath(name: str) -> None:
    """Latest, first, extremes and averages over the whole record, re-derived with FHIRPath."""
    if name == "shorthand":
        need_synthea()
    for r in chosen(name, VALUE_PREFIXES, 2 if name == "shorthand" else 6):
        assert close(_value_gold(name, r), r), r["id"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_counts_by_fhirpath(name: str) -> None:
    """Counts of values ever, and of encounters of a class ever, re-derived with FHIRPath."""
    if name == "shorthand":
        need_synthea()
    for r in chosen(name, ("count_measurements/all",), 3):
        counts = [len(series(name, r, codes)) for codes in item_codes(name, r)]
        assert r["expected"][0] in counts, r["id"]
    for r in chosen(name, ("count_encounters/EMER-all", "count_encounters/IMP-all", "count_encounters/AMB-all",
                           "count_encounters/ALL-all"), 3):
        klass = r["template"].split("/")[1].split("-")[0]
        bundle = bundles(name)[r["patient_id"]][0]
        where = "" if klass == "ALL" else " and class.code = %k"
        starts = fp(bundle, f"Bundle.entry.resource.where(resourceType = 'Encounter'{where}).period.start", k=klass)
        assert sum(instant(s) <= now_of(r) for s in starts) == r["expected"][0], r["id"]


def _medication_name(bundle: dict, request: dict) -> str:
    text = fp(request, "medicationCodeableConcept.text | medicationCodeableConcept.coding.first().display")
    if text:
        return str(text[0])
    (url,) = fp(request, "medicationReference.reference")
    med = fp(bundle, "Bundle.entry.where(fullUrl = %u).resource.code", u=url)[0]
    return str((fp(med, "text") or fp(med, "coding.first().display"))[0])


@pytest.mark.parametrize("name", sorted(SETS))
def test_current_medications_by_fhirpath(name: str) -> None:
    """Active MedicationRequests (names through medicationReference) equal the gold lists."""
    if name == "shorthand":
        need_synthea()
    for r in chosen(name, ("active_medications/list",), 4):
        bundle = bundles(name)[r["patient_id"]][0]
        active = fp(bundle, "Bundle.entry.resource.where(resourceType = 'MedicationRequest' and status = 'active')")
        names = {_medication_name(bundle, m).replace("\u200b", "") for m in active
                 if instant(fp(m, "authoredOn")[0]) <= now_of(r)}
        assert sorted(names) == r["expected"], r["id"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_people_by_fhirpath(name: str) -> None:
    """Birth date, gender, age now, and patient lookup, from Patient by FHIRPath."""
    if name == "shorthand":
        need_synthea()
    for r in rows(name):
        pattern = r["template"].split("/")[1]
        if r["category"] == "patient_lookup":
            bundle = bundles(name)[r["expected"][0]][0]
            (family,) = fp(bundle, "Bundle.entry.resource.where(resourceType = 'Patient').name.where("
                                   "use = 'official').family")
            assert re.sub(r"\d", "", family) in r["question"], r["id"]
            continue
        if r["category"] not in ("demographics", "age") or pattern not in ("dob", "gender", "now"):
            continue
        bundle = bundles(name)[r["patient_id"]][0]
        patient = fp(bundle, "Bundle.entry.resource.where(resourceType = 'Patient')")[0]
        birth = date.fromisoformat(str(fp(patient, "birthDate")[0]))
        if pattern == "dob":
            assert r["expected"] == [birth.isoformat()], r["id"]
        elif pattern == "gender":
            assert r["expected"] == fp(patient, "gender"), r["id"]
        else:
            day = now_of(r).date()
            assert r["expected"] == [day.year - birth.year - ((day.month, day.day) < (birth.month, birth.day))]


def test_daily_totals_by_fhirpath() -> None:
    """Daily administration totals: completed doses of the drug summed over the UTC day of the gold doses."""
    checked = 0
    for r in rows("sample"):
        pattern = r["template"].split("/")[1]
        if r["category"] != "daily_total_administered" or not pattern.startswith(("total-", "doses-")):
            continue
        bundle, index = bundles("sample")[r["patient_id"]]
        first = index[r["gold_refs"][0]]
        drug = _medication_name(bundle, first)
        day = instant(fp(first, "effectiveDateTime | effectivePeriod.start")[0]).date()
        doses = []
        for admin in fp(bundle, "Bundle.entry.resource.where(resourceType = 'MedicationAdministration' and "
                                "status = 'completed')"):
            when = instant(fp(admin, "effectiveDateTime | effectivePeriod.start")[0])
            if when.date() == day and _medication_name(bundle, admin) == drug:
                doses.append(float(fp(admin, "dosage.dose.value")[0]))
        got = len(doses) if pattern.startswith("doses-") else sum(doses)
        if "in grams" in r["question"]:
            got /= 1000
        assert abs(got - r["expected"][0]) < 1e-6, r["id"]
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("name", sorted(SETS))
def test_gold_refs_resolve(name: str) -> None:
    """Every gold reference names a resource of the patient's bundle."""
    if name == "shorthand":
        need_synthea()
    for r in rows(name):
        pid = r["patient_id"] or r["expected"][0]
        index = bundles(name)[pid][1]
        assert all(ref in index for ref in r["gold_refs"]), r["id"]
