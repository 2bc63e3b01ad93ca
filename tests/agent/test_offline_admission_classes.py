"""Question classes the admission probe (``evals/probe_admission``) found broken at first contact, through the offline
parser and backend over hand-made rows (no store needed), each with wordings of its own:

1. a current list named tersely ("home meds?", "active outpatient meds pls", "allergy list?", "What is X allergic
   to?") is the list; "# active meds?" counts it (stopped orders are not on it; none is 0); "NKDA?" asks whether no
   drug allergy is recorded;
2. "PMH X?" / "PMH significant for X?" is a yes/no about the history;
3. "smoker?" is whether the latest status is a current one; "any smoking hx?" whether any status is current or former;
4. "last ED visit?" / "last clinic visit?" and "last Rx for X?" ask for a date; "last creat + date" for the value;
5. "what was started in the last 90 days?" lists the drugs first ordered in the window (a renewal is no start);
6. drug classes: "ACE-I" is the class, "blood thinner(s)" anticoagulants and antiplatelets, and present-tense class
   questions ("is he taking an NSAID now?", "on anticoagulation at home?") are about an active order;
7. "Mg" is magnesium, never the unit in a drug's strength ("Naproxen 500 MG").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


def order(mid: str, name: str, when: str, status: str) -> dict[str, Any]:
    return med(mid, name, "request", when, status=status)


def allergy(aid: str, name: str, category: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "code": None, "category": category,
            "clinical_status": "active", "verification_status": "confirmed", "type": "allergy", "criticality": None,
            "reaction": None, "reaction_severity": None, "onset_time": None, "recorded_time": t("2010-01-01T00:00:00"),
            "last_occurrence": None, "encounter_ref": None}


def condition(cid: str, name: str, onset: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Condition/{cid}", "name": name, "code": None, "clinical_status": "active",
            "verification_status": "confirmed", "onset_time": t(onset), "abatement_time": None,
            "recorded_time": t(onset), "category": "encounter-diagnosis"}


def encounter(eid: str, code: str, start: str, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished", "start_time": t(start), "end_time": t(start),
            "reason_name": None}


def smoking(oid: str, status: str, when: str) -> dict[str, Any]:
    return {**obs(oid, "Tobacco smoking status", None, when, unit="", code="72166-2", category="social-history"),
            "value_string": status}


MEDICATIONS = [
    order("m1", "Naproxen 500 MG Oral Tablet", "2009-04-04T00:00:00", "stopped"),
    order("m2", "Naproxen 500 MG Oral Tablet", "2015-02-01T00:00:00", "stopped"),  # the last Rx for naproxen
    order("m3", "Hydrochlorothiazide 25 MG Oral Tablet", "2020-01-05T00:00:00", "active"),
    order("m4", "Simvastatin 20 MG Oral Tablet", "2019-03-01T00:00:00", "stopped"),
    order("m5", "Simvastatin 20 MG Oral Tablet", "2025-05-01T00:00:00", "active"),  # a renewal, not a start
    order("m6", "Warfarin Sodium 5 MG Oral Tablet", "2025-05-10T00:00:00", "active"),  # started in the window
    order("m7", "Captopril 25 MG Oral Tablet", "1999-01-01T00:00:00", "stopped"),  # an ACE-I, stopped long ago
]
ALLERGIES = [allergy("a1", "Allergy to grass pollen", "environment"), allergy("a2", "Shellfish allergy", "food")]
VIEWS = {
    "medication": MEDICATIONS,
    "allergy": ALLERGIES,
    "condition": [condition("c1", "Stroke", "2012-06-01T00:00:00"), condition("c2", "Hypertension", "2001-01-01T00:00:00")],
    "encounter": [encounter("e1", "EMER", "2016-08-02T10:00:00", "Emergency room admission"),
                  encounter("e2", "AMB", "2024-12-12T09:00:00", "Encounter for check up"),
                  encounter("e3", "AMB", "2025-03-01T09:00:00", "Encounter for symptom")],
    "observation": [smoking("s1", "Never smoker", "2019-01-01T00:00:00"), smoking("s2", "Never smoker", "2024-01-01T00:00:00"),
                    obs("cr", "Creatinine [Mass/volume] in Serum or Plasma", 1.4, "2025-06-01T08:00:00", unit="mg/dL",
                        code="2160-0")],
    "patient": [{"patient_id": "p1", "ref": "Patient/p1", "birth_date": None, "gender": "male"}],
}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# 1. current lists ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", ["home meds?", "active outpatient meds pls", "what meds is he on at home?",
                                      "current outpatient medications please"])
def test_a_terse_current_medication_list_is_the_active_orders(question: str) -> None:
    got = ask(question)
    assert sorted(got["answer"]) == ["Hydrochlorothiazide 25 MG Oral Tablet", "Simvastatin 20 MG Oral Tablet",
                                     "Warfarin Sodium 5 MG Oral Tablet"]


@pytest.mark.parametrize("question", ["# active meds?", "how many active meds?", "number of home meds",
                                      "how many meds is he currently on?", "how many active medications does he have?"])
def test_counting_the_current_list_counts_active_drugs_only(question: str) -> None:
    assert ask(question)["answer"] == [3]
    assert ask(question, {**VIEWS, "medication": MEDICATIONS[:2]})["answer"] == [0]  # none active: 0, not []


@pytest.mark.parametrize("question", ["allergy list?", "allergies?", "What is the patient allergic to?",
                                      "NKDA or does he have allergies listed?"])
def test_the_allergy_list_is_the_allergies_never_other_records(question: str) -> None:
    assert sorted(ask(question)["answer"]) == ["Allergy to grass pollen", "Shellfish allergy"]
    assert ask(question, {**VIEWS, "allergy": []})["answer"] == []


def test_allergic_to_anything_is_a_yes_no() -> None:
    assert ask("allergic to anything?")["answer"] == [True]
    assert ask("allergic to anything?", {**VIEWS, "allergy": []})["answer"] == [False]


def test_nkda_is_whether_no_drug_allergy_is_recorded() -> None:
    for question in ("NKDA?", "no known drug allergies?", "NKDA, correct?"):
        assert ask(question)["answer"] == [True], question  # food and pollen allergies are not drug allergies
    drug = [*ALLERGIES, allergy("a3", "Penicillin V", "medication")]
    assert ask("NKDA?", {**VIEWS, "allergy": drug})["answer"] == [False]
    assert ask("NKDA?", {**VIEWS, "allergy": []})["answer"] == [True]
    assert ask("NKA?")["answer"] == [False]  # no known allergies at all


def test_a_list_word_with_a_period_is_not_the_current_list() -> None:
    assert parse("total meds prescribed past 10 yrs?", NOW).intent == "count"
    assert ask("How many prescriptions does he have on record?")["answer"] == [7]  # every order, stopped ones too
    assert parse("any known allergies?", NOW).intent == "exists"  # a yes/no, not the list


# 2. PMH ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "expected"), [("PMH stroke?", True), ("PMH significant for HTN?", True),
                                                    ("any PMH of stroke?", True), ("PMH include hypertension?", True),
                                                    ("PMH osteoarthritis?", False), ("pmh positive for CKD?", False)])
def test_pmh_asks_whether_the_history_holds_the_diagnosis(question: str, expected: bool) -> None:
    assert parse(question, NOW).intent == "exists"
    assert ask(question)["answer"] == [expected]


# 3. smoking --------------------------------------------------------------------------------------------------------

def test_smoker_is_whether_the_patient_smokes_now_and_hx_whether_ever() -> None:
    assert ask("smoker?")["answer"] == [False]
    assert ask("is he a smoker?")["answer"] == [False]
    assert ask("any smoking hx?")["answer"] == [False]  # every status is Never smoker
    former = [*VIEWS["observation"], smoking("s3", "Former smoker", "2024-06-01T00:00:00")]
    assert ask("any smoking hx?", {**VIEWS, "observation": former})["answer"] == [True]
    assert ask("smoker?", {**VIEWS, "observation": former})["answer"] == [False]


# 4. dates and values -----------------------------------------------------------------------------------------------

def test_the_last_visit_of_a_class_is_its_date() -> None:
    assert str(ask("last ED visit?")["answer"][0]).startswith("2016-08-02")
    assert str(ask("last clinic visit?")["answer"][0]).startswith("2025-03-01")


def test_the_last_rx_for_a_drug_is_the_date_of_its_latest_order() -> None:
    assert str(ask("last Rx for naproxen?")["answer"][0]).startswith("2015-02-01")
    assert parse("latest naproxen order dose?", NOW).intent == "value"  # a dose asked is the order's value


def test_a_value_asked_with_its_date_answers_the_value() -> None:
    got = ask("last creat + date")
    assert got["answer"] == [1.4] and "2025-06-01" in got["text"]


# 5. started in a window --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", ["what was started in the last 90 days?", "meds started in last 90d",
                                      "anything new started in the past 3 months?"])
def test_started_in_a_window_lists_first_orders_not_renewals(question: str) -> None:
    assert ask(question)["answer"] == ["Warfarin Sodium 5 MG Oral Tablet"]


# 6. drug classes ---------------------------------------------------------------------------------------------------

def test_ace_i_hyphenated_is_the_class_and_a_stopped_member_is_history_not_now() -> None:
    assert ask("ever on any ACE-I?")["answer"] == [True]  # captopril, stopped
    assert ask("any hx of ACE-I use?")["answer"] == [True]
    assert ask("on any ACE-I?")["answer"] == [False]


@pytest.mark.parametrize("question", ["is he on anticoagulation at home?", "is he on blood thinners at home?",
                                      "on a blood thinner?", "is he taking a blood thinner now?"])
def test_blood_thinner_questions_are_answered_by_the_class(question: str) -> None:
    assert parse(question, NOW).entity.split()[-1] not in ("home", "now")
    assert ask(question)["answer"] == [True]  # warfarin, active


def test_blood_thinners_include_antiplatelets() -> None:
    plavix = [order("p1", "clopidogrel 75 MG Oral Tablet", "2024-01-01T00:00:00", "active")]
    assert ask("on blood thinners?", {**VIEWS, "medication": plavix})["answer"] == [True]
    assert ask("on anticoagulation?", {**VIEWS, "medication": plavix})["answer"] == [False]


def test_a_present_tense_class_question_is_about_an_active_order() -> None:
    for question in ("is he taking an NSAID now?", "currently taking an NSAID?", "taking an NSAID?"):
        assert parse(question, NOW).intent == "active_check", question
    assert ask("is he taking an NSAID now?")["answer"] == [False]  # naproxen was stopped
    assert ask("ever on NSAIDs?")["answer"] == [True]
    assert ask("NSAID now?")["answer"] == [False] and ask("statin currently?")["answer"] == [True]
    assert parse("K now?", NOW).intent == "value"  # a lab named with "now" is its latest value
    assert parse("is she on dialysis?", NOW).intent == "exists"  # not a drug: whether it is recorded


# 7. Mg -------------------------------------------------------------------------------------------------------------

def test_mg_is_magnesium_never_a_drug_strength() -> None:
    got = ask("most recent Mg on file?")
    assert got["status"] == "no-data" and got["answer"] == []
