"""Clinician question frames whose plain reading answered the wrong thing, end to end through the offline backend
over hand-made rows (the real resolver and lexicon):

1. an item relative to a clinical event the record dates by a condition ("aspirin after the stroke?");
2. held, missed or refused doses ("was vanc ever held?"): administrations, never a result named after the drug;
3. "due for" questions: the last time it was given, never a bare Yes because one exists;
4. culture results ("any cultures positive?", "what grew?", "blood cx?");
5. drug-class shorthand ("DVT ppx", "GI ppx", "anticoag"): the class members the record holds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.culture_plan import culture_question
from fhirqa.agent.backends.offline.dose_status_plan import not_given_question
from fhirqa.agent.backends.offline.due_plan import due_question
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_offline_ward_questions import condition, vaccine
from .test_tools_helpers import FakeRows, med, obs

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)

CONDITIONS = [condition("st", "Cerebrovascular accident (disorder)", "2015-04-02T10:00:00"),
              condition("dm", "Diabetes mellitus type 2 (disorder)", "2019-09-01T10:00:00")]
VANC = "Vancomycin 1,000 mg IVPB"
MEDICATIONS = [
    med("s1", "Simvastatin 20 MG Oral Tablet", "request", "2012-01-10T10:00:00"),  # before the stroke only
    med("c1", "Clopidogrel 75 MG Oral Tablet", "request", "2015-04-05T10:00:00", status="active"),  # after it
    med("e1", "Eliquis (apixaban) 5 MG Oral Tablet", "request", "2023-02-01T10:00:00", status="active"),
    med("p1", "Pantoprazole 40 MG DR Oral Tablet", "request", "2023-02-01T10:00:00", status="active"),
    med("vr", VANC, "request", "2024-06-10T08:00:00"),
    med("v1", VANC, "administration", "2024-06-10T09:00:00", dose=1000),
    med("v2", VANC, "administration", "2024-06-10T21:00:00", dose=1000, status="not-done"),
    med("v3", VANC, "administration", "2024-06-11T09:00:00", dose=1000),
    med("zr", "Zosyn 4.5 g IV", "request", "2024-06-10T08:00:00"),
    med("z1", "Zosyn 4.5 g IV", "administration", "2024-06-10T09:00:00", dose=4.5, unit="g"),
]
TROUGH = "Vancomycin [Mass/volume] in Serum or Plasma --trough"
OBSERVATIONS = [
    obs("a0", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.0, "2018-03-01T09:00:00"),
    obs("a1", "Hemoglobin A1c/Hemoglobin.total in Blood", 7.9, "2020-03-01T09:00:00"),
    obs("vt", TROUGH, 14.2, "2024-06-11T08:00:00", unit="ug/mL", code="4092-3"),
    obs("bc", "Bacteria identified in Blood by Culture", None, "2024-06-10T08:30:00", unit=None, code="600-7",
        category="laboratory", value_string="No growth at 5 days"),
    obs("uc", "Bacteria identified in Urine by Culture", None, "2024-06-10T08:40:00", unit=None, code="630-4",
        category="laboratory", value_string="Escherichia coli (organism)"),
]
IMMUNIZATIONS = [vaccine("f1", "Influenza, seasonal, injectable, preservative free", "2024-06-01T10:00:00")]
VIEWS = {"condition": CONDITIONS, "medication": MEDICATIONS, "observation": OBSERVATIONS,
         "immunization": IMMUNIZATIONS, "procedure": []}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The offline backend's final answer over the rows above."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# 1. an item relative to an event dated by a condition --------------------------------------------------------

def test_a_condition_named_after_before_or_since_is_the_window_not_the_item():
    pq = parse("has he ever been on aspirin after the stroke?", NOW)
    assert pq.entity == "aspirin"
    assert pq.window is not None and pq.window.event is not None
    # from the onset on, its own instant included: what was started at the diagnosis visit came after it
    assert (pq.window.event.event, pq.window.event.relation, pq.window.event.name) == ("condition", "since", "stroke")
    assert parse("any A1c since the diabetes dx?", NOW).window.event.relation == "since"
    assert parse("was he on a statin before the CVA?", NOW).window.event.relation == "before"
    # any name works when a diagnosis word follows it, or after "was diagnosed with"
    assert parse("first LDL after the gout diagnosis", NOW).window.event.name == "gout"
    assert parse("A1c since she was diagnosed with diabetes?", NOW).window.event.name == "diabetes"
    assert parse("LDL after he was dx'd with gout", NOW).entity.lower() == "ldl"


def test_words_that_name_no_condition_make_no_event_window():
    for question in ("A1c after the initial dx?", "any A1c since the patient was diagnosed?", "any A1c pre diabetes?"):
        window = parse(question, NOW).window
        assert window is None or window.event is None, question


def test_the_window_is_dated_by_the_conditions_onset_in_the_record():
    # the statin was only ordered before the stroke; clopidogrel after it
    assert ask("was he on simvastatin after the stroke?")["answer"] == [False]
    assert ask("was he on simvastatin before the stroke?")["answer"] == [True]
    assert ask("clopidogrel since his CVA?")["text"].endswith("since his cva (2015-04-02).")
    assert ask("first A1c after the diabetes dx?")["answer"] == [7.9]  # 2020, not the 2018 one
    at_onset = {**VIEWS, "medication": [*MEDICATIONS, med("a1", "Atorvastatin 80 MG Oral Tablet", "request",
                                                           "2015-04-02T10:00:00")]}
    assert ask("any atorvastatin after the stroke?", at_onset)["answer"] == [True]  # ordered at the onset itself


def test_what_was_started_after_an_event_lists_the_starts_in_its_window():
    out = ask("meds started after the stroke")
    assert "Clopidogrel" in out["text"] and "Simvastatin" not in out["text"]  # simvastatin was ordered before it


def test_an_event_the_record_does_not_hold_is_said_missing_never_guessed():
    out = ask("statin since the MI?")
    assert out["status"] == "no-data"
    assert "no mi (no such condition)" in out["text"]


def test_the_time_since_an_event_is_still_asked_of_the_event_itself():
    assert parse("how long since the stroke?", NOW).window is None


# 2. held, missed and refused doses -----------------------------------------------------------------------------

def test_a_held_dose_is_an_administration_not_given_never_a_result_named_after_the_drug():
    for question in ("was vanc ever held?", "any missed doses of vancomycin?", "did she refuse her vanc?"):
        out = ask(question)
        assert out["answer"] == [True], question
        assert "2024-06-10 (not-done)" in out["text"] and "trough" not in out["text"]


def test_a_dose_not_given_is_no_dose_of_the_drug():
    held_last = {**VIEWS, "medication": [*MEDICATIONS, med("v4", VANC, "administration", "2024-06-12T09:00:00",
                                                             dose=1000, status="not-done")]}
    out = ask("last vanc dose?", held_last)
    assert "on 2024-06-11" in out["text"] and "2024-06-12" not in out["text"]  # v3, not the held v4
    assert ask("was vanc ever held?", held_last)["text"].startswith("Yes: 2 of 4")  # the held question sees them all


def test_every_dose_given_is_a_no_and_orders_alone_cannot_tell():
    out = ask("was any zosyn not given?")
    assert out["answer"] == [False] and "none of the 1 charted administrations" in out["text"]
    orders_only = ask("was her eliquis ever held?")
    assert orders_only["status"] == "no-data" and "charts no administrations" in orders_only["text"]


def test_how_many_doses_were_held_is_a_count():
    assert ask("how many vanc doses were held?")["answer"] == [1]
    assert ask("how many zosyn doses were missed?")["answer"] == [0]


def test_a_held_question_about_no_medication_goes_to_the_ordinary_plans():
    # "hold" alone is no held-dose word ("hold parameters"); a non-drug refused is looked up as usual
    assert not_given_question(parse("hold parameters for the vanc?", NOW)) is None
    assert ask("did she refuse the colonoscopy?")["answer"] == [False]  # no such procedure, nor a drug


def test_a_vaccine_not_given_is_an_immunization_marked_not_done():
    assert ask("did she refuse the flu shot?")["answer"] == [False]  # the one on record was given
    refused = {**VIEWS, "immunization": [*IMMUNIZATIONS, {**vaccine("f2", "Influenza, seasonal, injectable, preservative free",
                                                                    "2023-10-01T10:00:00"), "status": "not-done"}]}
    out = ask("did she refuse the flu shot?", refused)
    assert out["answer"] == [True] and "2023-10-01 (not-done)" in out["text"]


def test_held_doses_of_any_drug():
    assert ask("any held meds?")["answer"] == [True]


# 3. "due for" -------------------------------------------------------------------------------------------------

def test_due_for_answers_the_last_date_and_that_no_schedule_decides():
    for question in ("is he due for a flu shot?", "is he overdue for a flu vaccine?"):
        out = ask(question)
        assert str(out["answer"][0]).startswith("2024-06-01"), question
        assert "no schedule" in out["text"] and not out["text"].startswith("Yes")


def test_the_next_ones_time_is_not_in_the_record_but_the_last_one_is_said():
    for question in ("when is his next flu shot due?", "next flu shot due?"):
        out = ask(question)
        assert out["status"] == "no-data" and out["answer"] == [], question
        assert "no schedule" in out["text"] and "2024-06-01" in out["text"]


def test_due_for_a_kind_answers_the_last_of_that_kind():
    for question in ("any shots due?", "is she due for any vaccines?"):
        assert str(ask(question)["answer"][0]).startswith("2024-06-01"), question


def test_up_to_date_asks_what_due_asks():
    for question in ("is he up to date on his flu shot?", "up to date on vaccines?", "is she behind on shots?"):
        out = ask(question)
        assert str(out["answer"][0]).startswith("2024-06-01"), question
        assert "no schedule" in out["text"] and not out["text"].startswith("Yes")
    assert due_question(parse("is the med list up to date?", NOW)) is None


def test_due_to_and_due_date_ask_other_things():
    assert due_question(parse("is the AKI due to vanc?", NOW)) is None
    assert due_question(parse("what is her due date?", NOW)) is None


def test_due_for_something_never_done_is_no_data():
    out = ask("is he due for a colonoscopy?")
    assert out["status"] == "no-data" and "no colonoscopy" in out["text"]


# 4. cultures ---------------------------------------------------------------------------------------------------

def test_a_culture_is_positive_when_its_value_names_an_organism():
    out = ask("any cultures positive?")
    assert out["answer"] == [True]
    assert "Escherichia coli" in out["text"] and "No growth at 5 days" in out["text"]
    assert ask("any positive blood cultures?")["answer"] == [False]
    assert ask("were the blood cultures negative?")["answer"] == [True]


def test_what_grew_lists_the_organisms():
    assert ask("what grew?")["answer"] == ["Escherichia coli (organism)"]
    assert ask("what did the blood cx grow?")["answer"] == []


def test_a_specimen_named_gives_its_cultures_results():
    assert ask("blood cx?")["answer"] == ["No growth at 5 days"]
    assert ask("urine culture results")["answer"] == ["Escherichia coli (organism)"]


def test_whether_or_when_a_culture_was_done_is_read_from_the_culture_results():
    assert ask("any blood cultures on file?")["answer"] == [True]
    assert ask("when was the last urine culture?")["answer"] == ["2024-06-10"]


def test_growth_alone_is_no_culture_question():
    assert culture_question(parse("growth hormone level?", NOW)) is None
    assert culture_question(parse("any positive blood cx?", NOW)) == {"positive": True, "negative": False,
                                                                       "specimen": "blood"}


def test_without_culture_results_the_ordinary_plans_answer():
    no_cultures = {**VIEWS, "observation": OBSERVATIONS[:3]}
    assert ask("any cultures positive?", no_cultures)["answer"] == [False]


# 5. drug-class shorthand ---------------------------------------------------------------------------------------

def test_prophylaxis_shorthand_resolves_to_the_class_members_the_record_holds():
    dvt = ask("is she on DVT ppx?")
    assert dvt["answer"] == [True] and "Eliquis (apixaban)" in dvt["text"]
    assert "prophylaxis or as treatment is not recorded" in dvt["text"]  # the record does not say which, and the answer says so
    assert "Pantoprazole" in ask("on GI ppx?")["text"]
    assert "Eliquis (apixaban)" in ask("is she on anticoag?")["text"]


def test_a_class_with_no_member_in_the_record_is_a_no():
    without = {**VIEWS, "medication": [m for m in MEDICATIONS if not m["medication_name"].startswith("Eliquis")]}
    assert ask("is she on VTE prophylaxis?", without)["answer"] == [False]
