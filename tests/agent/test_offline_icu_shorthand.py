"""ICU shorthand through the offline backend, over hand-made rows (no store needed).

Each section is a class of phrasing a clinician on an ICU round uses (found by the MIMIC-III probe,
``evals/probe_mimic3``), not a test question:

1. a time unit with no number ("past hr", "last day", "past wk") is one unit of time; "last HR" with nothing else
   named is the last heart rate (HR is the lexicon's abbreviation), not the last hour;
2. the value "on admit", "at admission", "on arrival", "admission K" is the first one of the stay in question;
3. "<drug> given?", "was <drug> given", "any <drug> given", "did she get <drug>" are yes/no questions about the
   drug's administrations (its orders when none are charted), citing the record that says so;
4. "(units)", "in what units", "units?" ask for the unit of the value;
5. "mean arterial pressure", "MAP", "mean BP" are the mean blood pressure (LOINC 8478-0): "mean" is part of the
   name there, not an average of the blood pressure;
6. ICU drug shorthand is in the lexicon (hep, UFH, vanc, vanco, pip-tazo, Zosyn, norepi, Levophed).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.composer import compose
from fhirqa.agent.lexicon import Lexicon
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
K = "Potassium [Moles/volume] in Serum or Plasma"
MAP = "Mean blood pressure"
HEPARIN = "Heparin 5,000 units/mL injection"


def encounter(eid: str, code: str, start: str, end: str | None, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


def vital(oid: str, name: str, code: str, value: float, when: str, unit: str = "mm[Hg]", **extra: Any) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code, category="vital-signs", **extra)


# A stay in March and the current one, admitted on June 18 (still in hospital at now, June 20 noon).
ENCOUNTERS = [
    encounter("s1", "IMP", "2025-03-02T14:00:00", "2025-03-06T11:00:00", "Hospital admission"),
    encounter("s2", "IMP", "2025-06-18T08:00:00", None, "Hospital admission"),
]
OBSERVATIONS = [
    obs("k1", K, 3.4, "2025-03-02T16:00:00", unit="mmol/L", code="2823-3"),  # first of the March stay
    obs("k2", K, 3.9, "2025-03-04T06:00:00", unit="mmol/L", code="2823-3"),
    obs("k3", K, 5.6, "2025-06-18T09:00:00", unit="mmol/L", code="2823-3"),  # first of the current stay
    obs("k4", K, 4.8, "2025-06-19T06:00:00", unit="mmol/L", code="2823-3"),
    obs("k5", K, 4.2, "2025-06-20T06:00:00", unit="mmol/L", code="2823-3"),
    vital("h1", "Heart rate", "8867-4", 104.0, "2025-06-18T08:30:00", unit="/min"),  # on arrival
    vital("h2", "Heart rate", "8867-4", 88.0, "2025-06-20T09:00:00", unit="/min"),
    vital("h3", "Heart rate", "8867-4", 92.0, "2025-06-20T10:30:00", unit="/min"),  # 1.5 h before now
    vital("m1", MAP, "8478-0", 58.0, "2025-06-19T02:00:00"),
    vital("m2", MAP, "8478-0", 65.0, "2025-06-20T10:30:00"),
    vital("bp", "Systolic blood pressure", "8480-6", 110.0, "2025-06-20T10:30:00", is_component=True,
          parent_name="Blood pressure panel"),
    vital("bp", "Diastolic blood pressure", "8462-4", 70.0, "2025-06-20T10:30:00", is_component=True,
          parent_name="Blood pressure panel"),
]
MEDICATIONS = [
    med("hq", HEPARIN, "request", "2025-06-18T08:30:00", dose=5000, unit="units"),
    med("h1", HEPARIN, "administration", "2025-06-18T10:00:00", dose=5000, unit="units"),
    med("h2", HEPARIN, "administration", "2025-06-19T10:00:00", dose=5000, unit="units"),
    med("v1", "Vancomycin 1,000 mg IVPB", "administration", "2025-06-19T08:00:00", dose=1000),
    med("zq", "Zosyn (piperacillin-tazobactam) 4.5 g IV", "request", "2025-06-18T09:00:00", dose=4.5, unit="g"),
    med("n1", "Norepinephrine 4 mg in 250 mL NS", "administration", "2025-06-19T03:00:00", dose=4, unit="mg"),
]
VIEWS = {"encounter": ENCOUNTERS, "observation": OBSERVATIONS, "medication": MEDICATIONS}


def run(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> tuple[dict[str, Any], ToolContext]:
    """The final answer over the fake rows, and the context holding what it cited."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final, ctx


def ask(question: str) -> dict[str, Any]:
    return run(question)[0]


# 1. a time unit with no number; "last HR" ------------------------------------------------------------------------

@pytest.mark.parametrize(("phrase", "label"), [
    ("past hr", "in the last 1 hour"), ("last h", "in the last 1 hour"), ("in the last hr", "in the last 1 hour"),
    ("last day", "in the last 1 day"), ("past wk", "in the last 1 week"), ("last mo", "in the last 1 month")])
def test_a_time_unit_without_a_number_is_one_unit(phrase: str, label: str) -> None:
    pq = parse(f"K {phrase}?", NOW)
    assert pq.entity == "k" and pq.window is not None and pq.window.label == label


def test_a_one_hour_window_holds_only_the_last_hour() -> None:
    got = ask("HR in the past hr?")  # the last heart rate is 1.5 h old
    assert got["status"] == "no-data"
    assert ask("max HR last day")["answer"] == [92.0]


@pytest.mark.parametrize("question", ["last HR?", "last hr", "latest HR", "last HR yesterday"])
def test_last_hr_with_nothing_else_named_is_the_last_heart_rate(question: str) -> None:
    pq = parse(question, NOW)
    assert pq.entity in ("heart rate", "hr")
    assert pq.window is None or pq.window.label == "yesterday"


def test_last_hr_answers_the_latest_heart_rate_not_an_empty_hour() -> None:
    got = ask("last HR?")
    assert got["status"] == "answered" and got["answer"] == [92.0]


def test_an_hour_after_an_item_stays_a_window() -> None:
    assert parse("K last hr", NOW).window.label == "in the last 1 hour"  # type: ignore[union-attr]
    assert parse("last 2 hr", NOW).window.label == "in the last 2 hours"  # type: ignore[union-attr]


# 5. mean arterial pressure -------------------------------------------------------------------------------------

@pytest.mark.parametrize("phrase", ["MAP", "mean arterial pressure", "mean BP", "mean arterial BP", "mean blood pressure"])
def test_mean_arterial_pressure_is_the_mean_blood_pressure_item(phrase: str) -> None:
    (expansion,) = Lexicon.load().expand(phrase)
    assert expansion.term == "Mean blood pressure" and expansion.codes == ("8478-0",)


@pytest.mark.parametrize(("question", "answer"), [
    ("last mean arterial pressure?", [65.0]), ("last MAP", [65.0]), ("mean BP", [65.0]),
    ("lowest MAP this admission", [58.0]), ("avg mean arterial pressure", [61.5])])
def test_mean_names_the_item_not_an_average(question: str, answer: list[float]) -> None:
    got = ask(question)
    assert got["status"] == "answered" and got["answer"] == answer


def test_mean_before_another_item_is_still_an_average() -> None:
    pq = parse("mean SBP", NOW)
    assert (pq.intent, pq.aggregate, pq.entity) == ("aggregate", "mean", "sbp")


# 6. ICU drug shorthand -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("phrase", "generic"), [
    ("hep", "heparin"), ("UFH", "heparin"), ("heparin gtt", "heparin"), ("vanc", "vancomycin"), ("vanco", "vancomycin"),
    ("pip-tazo", "piperacillin/tazobactam"), ("pip/tazo", "piperacillin/tazobactam"), ("zosyn", "piperacillin/tazobactam"),
    ("norepi", "norepinephrine"), ("levophed", "norepinephrine")])
def test_icu_drug_shorthand_is_in_the_lexicon(phrase: str, generic: str) -> None:
    assert Lexicon.load().drug_generic(phrase) == generic


def test_hep_alone_is_heparin_but_hep_c_is_hepatitis_c_and_hep_b_a_vaccine() -> None:
    lexicon = Lexicon.load()
    assert [e.view for e in lexicon.expand("hep C")] == ["condition"]
    assert {e.view for e in lexicon.expand("hep B")} == {"immunization"}
    resolve = ConceptResolver()
    assert not resolve("medication", "hep C", [HEPARIN]).matched
    assert resolve("medication", "hep", [HEPARIN]).matched == [HEPARIN]


# 2. the value at the start of the stay -------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "K on admit?", "K at admit", "K at admission", "K upon admission", "K on arrival", "K at presentation",
    "admission K?", "admit K", "what was her admission K?", "K at the time of admission", "K when she came in",
    "K when admitted", "K on arrival to the hospital"])
def test_the_value_at_admission_is_the_first_of_the_current_stay(question: str) -> None:
    pq = parse(question, NOW)
    assert (pq.entity, pq.position, pq.window.anchor) == ("k", "first", "admission")  # type: ignore[union-attr]
    got = ask(question)
    assert got["status"] == "answered" and got["answer"] == [5.6]


def test_the_value_on_arrival_can_be_a_vital() -> None:
    assert ask("HR on arrival")["answer"] == [104.0]
    assert ask("admission HR")["answer"] == [104.0]


def test_at_admission_of_a_named_stay_is_the_first_value_of_that_stay() -> None:
    pq = parse("K on admission during the admission before last", NOW)
    assert pq.position == "first" and pq.window is not None and pq.window.label == "during the admission before last"
    assert ask("K on admit during the admission before last")["answer"] == [3.4]


def test_a_dated_admission_value_is_the_first_of_that_day() -> None:
    pq = parse("K on admission on 3/2/2025", NOW)
    assert pq.position == "first" and pq.window is not None and pq.window.label == "on 2025-03-02"


@pytest.mark.parametrize(("question", "intent"), [
    ("when was she admitted", "time_of"), ("admission date?", "time_of"), ("how old was he when admitted?", "age"),
    ("how many admissions", "count")])
def test_questions_about_the_admission_itself_are_not_values_at_admission(question: str, intent: str) -> None:
    pq = parse(question, NOW)
    assert pq.intent == intent and pq.window is None


@pytest.mark.parametrize("question", ["K during the admission", "this admission K", "highest K during the admission before last",
                                      "presenting complaint?", "admitting diagnosis"])
def test_admission_naming_a_stay_or_another_thing_is_not_its_start(question: str) -> None:
    pq = parse(question, NOW)
    assert pq.position == "last" or pq.window is None or pq.window.label != "on admission"
    assert parse("this admission K", NOW).position == "last"  # the latest K of this stay


# 3. was a drug given ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "heparin given?", "hep given?", "was heparin given", "any hep given", "did she get heparin", "did she receive UFH",
    "vanc given?", "was vanco given this admission?", "norepi given?", "levophed given?", "any pressors given?"])
def test_a_drug_given_is_a_yes_no_question_answered_from_its_administrations(question: str) -> None:
    pq = parse(question, NOW)
    assert (pq.intent, pq.med_kind) == ("exists", "administration")
    got, ctx = run(question)
    assert got["status"] == "answered" and got["answer"] == [True]
    assert any(ref.startswith("MedicationAdministration/") for ref, _ in ctx.evidence)  # the dose that says so


def test_a_drug_only_ordered_is_answered_from_its_orders() -> None:
    got, ctx = run("did she get zosyn?")
    assert got["answer"] == [True]
    assert [ref for ref, _ in ctx.evidence] == ["MedicationRequest/zq"]
    assert ask("pip-tazo given?")["answer"] == [True]


def test_a_drug_never_charted_is_no_not_no_data() -> None:
    got = ask("ceftriaxone given?")
    assert got["status"] == "answered" and got["answer"] == [False]


def test_a_drug_given_outside_the_window_is_no() -> None:
    got = ask("hep given in March?")
    assert got["status"] == "answered" and got["answer"] == [False]


@pytest.mark.parametrize(("question", "intent"), [
    ("last heparin given?", "value"), ("heparin dose given?", "value"), ("when was heparin given", "time_of"),
    ("how many doses of heparin given", "count"), ("how much heparin given on 6/19", "daily_dose")])
def test_a_word_asking_for_a_value_keeps_the_value_question(question: str, intent: str) -> None:
    assert parse(question, NOW).intent == intent


def test_get_is_a_dose_only_for_a_drug() -> None:
    assert parse("did she get an MRI?", NOW).med_kind is None
    assert parse("did she get vanc?", NOW).med_kind == "administration"


# 4. the unit of a value ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "K units?", "in what units is K reported", "what units is the K in", "units of the last K", "what unit is K measured in"])
def test_a_question_about_the_unit_is_answered_with_the_unit(question: str) -> None:
    pq = parse(question, NOW)
    assert (pq.intent, pq.entity, pq.unit_asked, pq.unit) == ("value", "k", True, None)
    got = ask(question)
    assert got["answer"] == ["mmol/L"] and got["unit"] == "mmol/L"
    assert "4.2" in got["text"]  # the value the unit was read from


def test_units_in_parentheses_ask_for_the_value_with_its_unit_not_a_conversion() -> None:
    pq = parse("last K (units)?", NOW)
    assert (pq.entity, pq.unit, pq.unit_asked) == ("k", None, False)
    got = ask("last K (units)?")
    assert got["answer"] == [4.2] and got["unit"] == "mmol/L"
    assert ask("total hep given on 6/19 (units)?")["answer"] == [5000.0]


@pytest.mark.parametrize(("question", "unit"), [("insulin in units", "u"), ("weight in lbs", "lb"), ("K (mmol/L)?", "mmol/l")])
def test_a_unit_named_is_still_the_unit_to_answer_in(question: str, unit: str) -> None:
    pq = parse(question, NOW)
    assert (pq.unit, pq.unit_asked) == (unit, False)


@pytest.mark.parametrize("question", ["total insulin units", "how many units of insulin"])
def test_units_after_a_drug_are_its_dose_unit_not_a_question(question: str) -> None:
    assert parse(question, NOW).unit_asked is False


@pytest.mark.parametrize(("question", "unit"), [
    ("Tmax this admit (F)?", "degf"), ("max temp this admission, in F?", "degf"), ("temp in degrees Fahrenheit", "degf"),
    ("temp in C", "degc")])
def test_a_temperature_unit_may_be_one_letter_or_in_degrees(question: str, unit: str) -> None:
    assert parse(question, NOW).unit == unit


def test_one_letter_is_a_unit_only_where_nothing_else_is_meant() -> None:
    assert parse("f/u in C clinic", NOW).unit is None


@pytest.mark.parametrize(("question", "unit", "answer"), [
    ("how many units of heparin were given on 6/19?", "u", [5000.0]),
    ("total grams of vanc given on 6/19?", "g", [1.0]),
])
def test_a_dose_unit_counted_asks_the_amount_in_that_unit(question: str, unit: str, answer: list[float]) -> None:
    pq = parse(question, NOW)
    assert (pq.intent, pq.aggregate, pq.unit) == ("daily_dose", "sum", unit)
    assert ask(question)["answer"] == answer


@pytest.mark.parametrize("question", ["how high did her fever get this admission?", "highest fever", "max fever in F"])
def test_the_extreme_of_a_finding_named_alone_is_the_extreme_of_its_item(question: str) -> None:
    assert parse(question, NOW).entity == "temperature"


def test_a_finding_beside_another_item_stays_a_word_of_the_question() -> None:
    assert parse("max HR during the fever", NOW).entity != "hr temperature"
