"""Medication administrations as the ICU nurse reads them: electrolyte replacement, "is she on X?" by the doses
given, and the reason a dose was not given.

Fixture: ``fixtures/icu_medication_administrations.json``, one ICU patient (hand-made FHIR, times in UTC) with
potassium runs and pills, a potassium phosphate rider, magnesium sulfate and oxide, a calcium order never given, a
heparin order marked completed while doses ran until the night before, and a vancomycin order still active three
days after its last dose. Every expected value is computed here from the fixture's JSON, not from fhirqa.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "icu_medication_administrations.json"
NOW = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)
PATIENT = "icu-1"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("icu_admin") / "db"
    report = ingest([FileSource([FIXTURE])], path)
    assert not report.rejected
    return path


def answer(db, question):
    return ask(question, patient_id=PATIENT, now=NOW.isoformat(), db=db)


# --- gold from the raw resources ----------------------------------------------------------------------------

RESOURCES = [e["resource"] for e in json.loads(FIXTURE.read_text())["entry"]]


def med_name(resource):
    concept = resource["medicationCodeableConcept"]
    return (concept.get("text") or concept["coding"][0]["display"]).lower()


def when(resource):
    raw = resource.get("effectiveDateTime") or resource["effectivePeriod"]["start"]
    return datetime.fromisoformat(raw.replace("Z", "+00:00"))


def administrations(*words, status="completed", start=None, end=None):
    """MedicationAdministrations whose medication names one of ``words``, with ``status``, given in [start, end]."""
    return [r for r in RESOURCES if r["resourceType"] == "MedicationAdministration" and r["status"] == status
            and any(w in med_name(r) for w in words)
            and (start is None or when(r) >= start) and (end is None or when(r) <= end)]


def refs(resources):
    return {f"{r['resourceType']}/{r['id']}" for r in resources}


# --- 1. electrolyte replacement -----------------------------------------------------------------------------

def test_how_many_times_k_was_replaced_counts_every_potassium_salt_given(db):
    given = administrations("potassium")  # potassium chloride runs and pills, the potassium phosphate rider
    out = answer(db, "how many times was K replaced?")
    assert out.status == "answered" and out.answer == [len(given)] == [7]
    assert refs(given) <= {e.ref for e in out.evidence}
    assert all(ref in out.text for ref in refs(given))  # each dose with its resource


def test_a_dose_not_given_is_listed_apart_with_its_charted_reason(db):
    held = administrations("potassium", status="not-done")
    out = answer(db, "how many times was K replaced?")
    reason = held[0]["statusReason"][0]["coding"][0]["display"]  # no text: the coding's display
    assert out.answer == [len(administrations("potassium"))]  # the held dose is not counted
    assert "Not given" in out.text and reason in out.text and refs(held) <= {e.ref for e in out.evidence}


def test_the_latest_lab_value_is_given_as_context_with_its_resource(db):
    labs = [r for r in RESOURCES if r["resourceType"] == "Observation" and r["code"]["coding"][0]["code"] == "2823-3"]
    latest = max(labs, key=lambda r: r["effectiveDateTime"])
    out = answer(db, "how many times was K replaced?")
    assert f"{latest['valueQuantity']['value']:g} mmol/L" in out.text and f"Observation/{latest['id']}" in out.text


def test_mag_repleted_today_reads_todays_magnesium_doses_not_the_lab(db):
    day = datetime(2025, 3, 10, tzinfo=UTC)
    today = administrations("magnesium", "mag-ox", start=day, end=day + timedelta(days=1))
    out = answer(db, "was mag repleted today?")
    assert out.answer == [True] and len(today) == 1
    assert refs(today) <= {e.ref for e in out.evidence} and "Observation/mg-1" in out.text


def test_how_much_kcl_is_the_total_of_its_doses_in_their_one_unit(db):
    kcl = administrations("potassium chloride")
    assert {r["dosage"]["dose"]["unit"] for r in kcl} == {"mEq"}
    out = answer(db, "how much KCl did he get?")
    assert out.answer == [sum(r["dosage"]["dose"]["value"] for r in kcl)] == [90]
    assert out.unit == "mEq" and "phosphate" not in out.text.lower()  # KCl named: the other salt is not asked


def test_doses_in_different_units_are_never_added(db):
    potassium = administrations("potassium")
    by_unit: dict[str, float] = {}
    for r in potassium:
        by_unit[r["dosage"]["dose"]["unit"]] = by_unit.get(r["dosage"]["dose"]["unit"], 0) + r["dosage"]["dose"]["value"]
    out = answer(db, "how much potassium did he get?")
    assert by_unit == {"mEq": 90, "mmol": 15}
    assert out.answer == ["90 mEq potassium chloride", "15 mmol potassium phosphate"]
    assert "105" not in out.text


def test_potassium_runs_overnight_are_the_doses_between_evening_and_morning(db):
    night = administrations("potassium", start=datetime(2025, 3, 9, 19, tzinfo=UTC), end=datetime(2025, 3, 10, 7, tzinfo=UTC))
    out = answer(db, "any potassium runs overnight?")
    assert out.answer == [True] and len(night) == 3
    assert all(ref in out.text for ref in refs(night))
    assert not any(ref in out.text for ref in refs(administrations("potassium")) - refs(night))


def test_calcium_with_only_an_order_is_answered_from_the_order_and_says_so(db):
    assert not administrations("calcium", status="completed")
    orders = [r for r in RESOURCES if r["resourceType"] == "MedicationRequest" and "calcium" in med_name(r)]
    out = answer(db, "calcium given?")
    assert out.answer == [True] and "no administration of calcium products is charted" in out.text
    assert all(ref in out.text for ref in refs(orders))


def test_phos_repletion_reads_the_phosphate_salts(db):
    phos = administrations("phosphate")
    out = answer(db, "phos repletion?")
    assert out.answer == [True] and refs(phos) <= {e.ref for e in out.evidence}


def test_when_k_was_last_replaced_is_the_last_dose_given(db):
    last = max(administrations("potassium"), key=when)
    out = answer(db, "when was K last replaced?")
    assert datetime.fromisoformat(out.answer[0]) == when(last)


def test_more_doses_than_rounds_to_read_them_still_count_and_add_them(db, monkeypatch):
    from fhirqa.agent.backends.offline import repletion_plan

    monkeypatch.setattr(repletion_plan, "_rounds", lambda: 20)  # too few rounds to read each dose
    kcl = administrations("potassium chloride")
    counted = answer(db, "how many times was KCl given?")
    assert counted.answer == [len(kcl)] and "too many to list" in counted.text
    total = answer(db, "how much KCl did he get?")
    assert total.answer == [sum(r["dosage"]["dose"]["value"] for r in kcl)] and total.unit == "mEq"
    mixed = answer(db, "how much potassium did he get?")  # mEq and mmol: no total
    assert mixed.status == "no-data" and mixed.answer == [] and "not added" in mixed.text


@pytest.mark.parametrize("question", [
    "last K?", "K level after repletion?", "was vitamin K given?", "2 mg of morphine given?",
    "total vanco given on Mar 9 (mg)?", "did we get a mag this morning?", "is she on calcium channel blockers?",
])
def test_questions_about_the_lab_or_other_drugs_are_not_replacement_questions(question):
    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.agent.backends.offline.repletion_plan import repletion_question

    assert repletion_question(parse(question, NOW)) is None


# --- 2. on a drug now: orders and administrations -----------------------------------------------------------

def test_an_order_marked_completed_with_doses_given_until_last_night_is_on_board(db):
    order = next(r for r in RESOURCES if r["resourceType"] == "MedicationRequest" and r["id"] == "mr-hep")
    last = max(administrations("heparin"), key=when)
    assert order["status"] == "completed" and NOW - when(last) < timedelta(hours=48)
    out = answer(db, "is she on heparin?")
    assert out.answer == [True]
    assert "completed" in out.text and f"MedicationAdministration/{last['id']}" in out.text and "48 h" in out.text


def test_dvt_ppx_reads_the_class_members_doses(db):
    out = answer(db, "on DVT ppx?")
    assert out.answer == [True] and "heparin" in out.text.lower()


def test_an_active_order_with_no_dose_for_days_says_when_it_was_last_given(db):
    last = max(administrations("vancomycin"), key=when)
    assert NOW - when(last) > timedelta(hours=48)
    out = answer(db, "still on vanc?")
    assert out.answer == [True] and "no dose is charted in the 48 h" in out.text
    assert f"MedicationAdministration/{last['id']}" in out.text


# --- 3. why a dose was not given ----------------------------------------------------------------------------

def test_a_held_dose_answer_gives_the_reason_charted(db):
    held = administrations("heparin", status="not-done")
    out = answer(db, "was heparin held?")
    assert out.answer == [True] and held[0]["statusReason"][0]["text"] in out.text


def not_given_reason(resource):
    reason = resource["statusReason"][0]
    return reason.get("text") or reason["coding"][0].get("display") or reason["coding"][0]["code"]


@pytest.mark.parametrize(("question", "drug"), [("why was heparin held?", "heparin"),
                                                ("reason the KCl dose was held?", "potassium chloride")])
def test_why_a_dose_was_held_is_answered_with_the_reasons_charted(db, question, drug):
    held = administrations(drug, status="not-done")
    out = answer(db, question)
    assert out.status == "answered" and out.answer == sorted({not_given_reason(r) for r in held})


def test_which_meds_were_held_is_answered_with_the_drugs(db):
    held = [r for r in RESOURCES if r["resourceType"] == "MedicationAdministration" and r["status"] == "not-done"]
    names = {r["medicationCodeableConcept"].get("text") for r in held}
    out = answer(db, "which meds were held?")
    assert set(out.answer) == names and len(out.answer) == len(names) == 2


def test_the_medication_view_carries_status_reason_text_then_display(db):
    rows = dict(Store(db).query("SELECT ref, status_reason FROM medication WHERE status_reason IS NOT NULL").rows)
    gold = {f"MedicationAdministration/{r['id']}": r["statusReason"][0].get("text") or r["statusReason"][0]["coding"][0]["display"]
            for r in RESOURCES if r.get("statusReason")}
    assert rows == gold
