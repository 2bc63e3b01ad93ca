"""Questions found by asking as clinicians do (session 17), over hand-made rows; each gold is computed from the rows.

1. an organ asked about as a whole ("how are his kidneys doing?") is the results and medications checked for it,
   each part answered as if asked alone and cited;
2. ICU drug classes: "sedation?" is the sedatives, "any nephrotoxins?" the drugs known to harm the kidneys;
3. "what changed since …?" with no item named is the window's events, never one item's first value against
   another's last; a summary beside a clock window is that window's events, without one the patient snapshot.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .test_tools_helpers import med, obs, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
CR = [obs("cr-1", "Creatinine", 1.0, "2025-06-18T06:00:00", unit="mg/dL", code="2160-0"),
      obs("cr-2", "Creatinine", 1.6, "2025-06-20T06:00:00", unit="mg/dL", code="2160-0")]
OTHERS = [obs("bun-1", "Urea nitrogen", 31.0, "2025-06-20T06:00:00", unit="mg/dL", code="3094-0"),
          obs("k-1", "Potassium", 5.4, "2025-06-20T06:00:00", unit="mmol/L", code="2823-3"),
          obs("ht-1", "Body height", 170.0, "2025-06-18T06:00:00", unit="cm", code="8302-2", category="vital-signs")]
MEDS = [med("rq-vanc", "Vancomycin 1 G Injection", "request", "2025-06-18T09:00:00", dose=1000, status="active"),
        med("adm-vanc", "Vancomycin 1 G Injection", "administration", "2025-06-20T09:00:00", dose=1000,
            request_ref="MedicationRequest/rq-vanc"),
        med("rq-prop", "Propofol 10 MG/ML Injectable Suspension", "request", "2025-06-19T09:00:00", dose=20, status="active")]
VIEWS: dict[str, list[dict[str, Any]]] = {"observation": CR + OTHERS, "medication": MEDS}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def test_how_are_his_kidneys_doing_is_each_renal_result_and_the_nephrotoxic_drugs() -> None:
    got = ask("how are his kidneys doing?")
    text = got["text"]
    for label in ("Creatinine:", "BUN:", "Potassium:", "Nephrotoxic medications:"):
        assert label in text
    first, last = CR[0]["value"], CR[-1]["value"]
    assert f"from {first:g} mg/dL" in text and f"to {last:g} mg/dL" in text and "Increasing" in text  # +60 %
    assert {"Observation/cr-1", "Observation/cr-2", "Observation/bun-1", "Observation/k-1"} <= got["cited"]
    assert "Vancomycin" in text


def test_icu_drug_classes_read_as_their_members() -> None:
    sedation = ask("sedation?")
    assert sedation["answer"] == [True] and "Propofol" in sedation["text"]
    nephro = ask("any nephrotoxins?")
    assert nephro["answer"] == [True] and "Vancomycin" in nephro["text"]


def test_what_changed_with_no_item_is_the_events_never_two_items_compared() -> None:
    got = ask("what changed since yesterday?")
    assert "went from" not in got["text"]  # no first value of one item against the last of another
    # since 2025-06-19 00:00: the propofol order started, K and BUN above the usual adult range
    assert got["cited"] == {"MedicationRequest/rq-prop", "Observation/k-1", "Observation/bun-1"}
    assert got["text"].startswith("3 events since yesterday")
    summary = ask("summary of the last 24 hours")  # from 06-19 12:00: the order started before it is not an event
    assert summary["cited"] == {"Observation/k-1", "Observation/bun-1"}
    assert ask("brief summary of this patient")["text"].startswith("Summary")


def test_a_threshold_in_another_unit_is_compared_in_the_records_unit() -> None:
    doses = [r["dose"] for r in MEDS if r["ref"] == "MedicationAdministration/adm-vanc"]  # mg
    over = ask("any doses of vanc over 1.5 g?")
    assert over["answer"] == [any(d > 1500 for d in doses)] == [False]
    assert "1.5 g = 1500 mg" in over["text"]
    assert ask("any doses of vanc over 0.9 g?")["answer"] == [any(d > 900 for d in doses)] == [True]
    # a unit that cannot describe the analyte is said, never compared as if it were the record's
    assert ask("any creatinine over 2 mEq/L?")["status"] == "no-data"


def test_when_a_result_or_visit_was_last_is_said_with_what_it_found_or_why() -> None:
    got = ask("when was his creatinine last checked?")
    assert str(got["answer"][0]).startswith(CR[-1]["time"].date().isoformat())
    assert f": {CR[-1]['value']:g} mg/dL" in got["text"]
    visit = {"patient_id": "p1", "ref": "Encounter/v1", "class_code": "AMB", "class_name": "ambulatory",
             "type_name": "Follow-up encounter", "status": "finished", "start_time": CR[0]["time"],
             "end_time": CR[0]["time"], "reason_name": "Hyperlipidemia", "discharge_disposition": None}
    seen = offline_answer("when did he last see a doctor and why?", {**VIEWS, "encounter": [visit]}, NOW)
    assert "(reason: Hyperlipidemia)" in seen["text"] and "Encounter/v1" in seen["cited"]


def _allergy(aid: str, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "category": "medication",
            "clinical_status": "active", "criticality": "high", "recorded_time": None, "reaction": "Hives"}


def test_an_allergy_to_another_member_of_an_allergy_class_is_a_yes_by_class() -> None:
    views = {**VIEWS, "allergy": [_allergy("pcn", "penicillin"), _allergy("sulfa", "sulfamethoxazole")]}
    amox = offline_answer("is he allergic to amoxicillin?", views, NOW)
    assert amox["answer"] == [True] and "AllergyIntolerance/pcn" in amox["cited"]
    assert "by class" in amox["text"] and "penicillin class" in amox["text"]
    assert offline_answer("is he allergic to bactrim?", views, NOW)["answer"] == [True]  # sulfamethoxazole in it
    # a broad class is no allergy class: penicillin says nothing of vancomycin; cephalosporins are not inferred
    for drug in ("vancomycin", "cephalexin"):
        assert offline_answer(f"is he allergic to {drug}?", views, NOW)["answer"] == [False], drug


def test_a_question_asking_when_and_what_is_answered_with_both_in_its_order() -> None:
    last, high = CR[-1], max(CR, key=lambda r: r["value"])
    assert ask("when was his last creatinine and what was it?")["answer"][1] == last["value"]
    got = ask("date and result of the most recent creatinine?")
    assert str(got["answer"][0]).startswith(last["time"].date().isoformat()) and got["answer"][1] == last["value"]
    both = ask("highest creatinine ever and when?")["answer"]
    assert both[0] == high["value"] and str(both[1]).startswith(high["time"].date().isoformat())
    # the time of an extreme, asked alone, is the date alone: of the highest, not of the last
    alone = ask("when was his lowest creatinine?")["answer"]
    low = min(CR, key=lambda r: r["value"])
    assert len(alone) == 1 and str(alone[0]).startswith(low["time"].date().isoformat())


def test_a_temperature_threshold_in_fahrenheit_is_compared_with_celsius_values() -> None:
    temps = [obs("t-1", "Body temperature", 38.9, "2025-06-19T08:00:00", unit="Cel", code="8310-5", category="vital-signs")]
    views = {**VIEWS, "observation": [*VIEWS["observation"], *temps]}
    # 101.5 °F = 38.61 °C: 38.9 °C is above it; 102.5 °F = 39.17 °C is above 38.9
    assert offline_answer("any temp > 101.5 °F?", views, NOW)["answer"] == [True]
    assert offline_answer("any temp > 102.5 F?", views, NOW)["answer"] == [False]


def test_an_allergy_named_with_its_substance_is_a_yes_no() -> None:
    views = {**VIEWS, "allergy": [_allergy("latex", "Latex allergy")]}
    assert offline_answer("latex allergy?", views, NOW)["answer"] == [True]
    assert offline_answer("codeine allergy?", views, NOW)["answer"] == [False]
