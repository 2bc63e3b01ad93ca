"""Paraphrase classes through the offline parser and backend, over hand-made rows (no store needed).

Each section is a class of wording the paraphrase probe (``evals/probe_phrasing``) found broken at first contact,
tested with wordings of its own:

1. "last admit" is a stay window with or without a preposition ("lowest SpO2 last admit", "first K of her last
   admission"); a value computed over a view without values (encounters) moves to the view that holds the item;
2. slips in the words around the item ("vists", "durign", "stey", "hw", "hav") are respelt as frame words, never a
   real word ("weak", "may", "he") nor a name;
3. terse history questions ("hx COPD?", "prior colonoscopy?") are yes/no; "last flu shot?" asks the date;
4. a stay's end ("last d/c date?", "when did her last hospitalization end?") is its discharge date;
5. lay and indirect wordings: "how heavy ... at her last weigh-in", "hyperkalemic (K > 5.0)", "sugar control at the
   last A1c", "at what age did she die", "how old was he when admitted", "which of her prescriptions are still
   active", "active medical conditions", a topic before the request ("When it comes to X, has she had Y?").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.focus import focus
from fhirqa.agent.backends.offline.parser import _proper_names, _respell, _typing_slip, parse
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
SPO2 = "Oxygen saturation in Arterial blood by Pulse oximetry"
K = "Potassium [Moles/volume] in Serum or Plasma"
CEF = "Ceftriaxone 1 g IV"


def encounter(eid: str, code: str, start: str, end: str | None, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": name, "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


# Two finished stays; the last one (May) is the "last admission". The lowest SpO2 of the record is in January.
ENCOUNTERS = [
    encounter("s1", "IMP", "2025-01-10T10:00:00", "2025-01-14T11:00:00", "Hospital admission"),
    encounter("a1", "AMB", "2025-04-02T09:00:00", "2025-04-02T09:30:00", "Office visit"),
    encounter("s2", "IMP", "2025-05-03T14:00:00", "2025-05-07T12:00:00", "Hospital admission"),
]
OBSERVATIONS = [
    obs("o1", SPO2, 84.0, "2025-01-11T08:00:00", code="59408-5", category="vital-signs"),
    obs("o2", SPO2, 91.0, "2025-05-03T15:00:00", code="59408-5", category="vital-signs"),
    obs("o3", SPO2, 89.0, "2025-05-05T08:00:00", code="59408-5", category="vital-signs"),
    obs("o4", SPO2, 97.0, "2025-06-01T08:00:00", code="59408-5", category="vital-signs"),
    obs("k1", K, 4.9, "2025-01-10T12:00:00", unit="mmol/L", code="2823-3"),
    obs("k2", K, 3.6, "2025-05-03T16:00:00", unit="mmol/L", code="2823-3"),  # first of the last stay
    obs("k3", K, 4.1, "2025-05-06T06:00:00", unit="mmol/L", code="2823-3"),
]
MEDICATIONS = [
    med("c0", CEF, "administration", "2025-01-11T09:00:00", dose=1, unit="g"),
    med("c1", CEF, "administration", "2025-05-04T09:00:00", dose=1, unit="g"),
    med("c2", CEF, "administration", "2025-05-05T09:00:00", dose=1, unit="g"),
    med("c3", CEF, "administration", "2025-05-06T09:00:00", dose=1, unit="g"),
]
VIEWS = {"encounter": ENCOUNTERS, "observation": OBSERVATIONS, "medication": MEDICATIONS}


def ask(question: str) -> dict[str, Any]:
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# 1. "last admit" as a stay window ---------------------------------------------------------------------------------

@pytest.mark.parametrize("question", ["lowest SpO2 last admit?", "lowest SpO2 of her last admission",
                                      "min o2 sat during the patient last hospital admission"])
def test_the_last_admission_without_a_preposition_is_a_stay_window(question: str) -> None:
    pq = parse(question, NOW)
    assert pq.window is not None and pq.window.event is not None and pq.window.event.event == "stay"
    assert pq.encounter_class is None  # the stay words placed the item; they are not the question's records
    assert ask(question)["answer"] == [89.0]  # not January's 84


def test_a_value_at_admission_of_the_last_admission_is_the_first_of_that_stay() -> None:
    assert ask("K at admit last admission")["answer"] == [3.6]
    assert ask("first K of her last admission")["answer"] == [3.6]


def test_doses_counted_over_the_last_admit_are_that_stays_administrations() -> None:
    assert ask("# ceftriaxone doses last admit?")["answer"] == [3]


@pytest.mark.parametrize("question", ["last admission?", "when was her last admission?", "last admit date?"])
def test_the_last_admission_named_alone_is_the_stay_itself(question: str) -> None:
    pq = parse(question, NOW)
    assert pq.window is None and pq.encounter_class == "IMP"


def test_an_extreme_over_encounters_moves_to_the_view_holding_the_item() -> None:
    # the stay words left as a class of encounters ("admits"): encounters carry no value, never an error
    got = ask("lowest SpO2 in admits")
    assert got["status"] == "answered" and got["answer"] == [84.0]


# 2. slips in the frame words --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "read"), [
    ("how many vists did she hav in 2025", "how many visits did she have in 2025"),
    ("doses durign her last hospital stey", "doses during her last hospital stay"),
    ("hw old is he", "how old is he"),
    ("lowest o2 sat durring her last stay", "lowest o2 sat during her last stay"),
])
def test_a_slip_in_a_frame_word_is_respelt(typed: str, read: str) -> None:
    assert _respell(typed) == read


@pytest.mark.parametrize("text", ["feeling weak this week", "how long was he in for", "resp rate in may 2024",
                                  "any cold sores", "is it him", "what did she say", "log of doses", "a skill",
                                  "timed doses", "dated notes"])
def test_real_words_near_a_frame_word_are_kept(text: str) -> None:
    assert _respell(text) == text


@pytest.mark.parametrize(("typed", "word", "short", "slip"), [
    ("durign", "during", False, True), ("durring", "during", False, True), ("curent", "current", False, True),
    ("takin", "taking", False, True), ("stey", "stay", True, True), ("hw", "how", True, True),
    ("skill", "still", False, False), ("timed", "times", False, False), ("say", "stay", True, False),
    ("log", "long", True, False), ("docs", "does", True, False)])
def test_only_a_slip_that_rarely_makes_another_word_counts(typed: str, word: str, short: bool, slip: bool) -> None:
    assert _typing_slip(typed, word, short) is slip


def test_a_name_is_never_respelt() -> None:
    # a word capitalised inside the sentence is a name ("Mary" is one slip from "many")
    assert _proper_names("Is Mary on a statin?") == {"mary"}
    assert _respell("is mary on a statin", _proper_names("Is Mary on a statin?")) == "is mary on a statin"


# 3. terse history questions and event dates ----------------------------------------------------------------------

@pytest.mark.parametrize("question", ["hx COPD?", "hx DM?", "h/o CAD?", "hx colonoscopy?", "prior colonoscopy?",
                                      "previous appendectomy?"])
def test_a_terse_history_question_is_yes_no(question: str) -> None:
    assert parse(question, NOW).intent == "exists"


def test_a_prior_result_still_asks_its_value() -> None:
    assert parse("prior A1c?", NOW).intent == "value"


@pytest.mark.parametrize("question", ["last flu shot?", "last Td/Tdap?", "first colonoscopy?", "latest pneumovax"])
def test_the_last_record_of_a_kind_without_values_asks_its_date(question: str) -> None:
    assert parse(question, NOW).intent == "time_of"


def test_a_word_asking_the_name_keeps_the_name() -> None:
    assert parse("what was her last flu shot?", NOW).intent == "value"
    assert parse("diagnoses of the last admission?", NOW).intent != "time_of"  # a stay is not a record without values


# 4. a stay's end -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("question", ["last d/c date?", "On what date did her last hospitalization end?",
                                      "when did his last admission end"])
def test_a_stays_end_is_its_discharge(question: str) -> None:
    pq = parse(question, NOW)
    assert pq.stay_event == "discharge" and pq.window is None
    assert ask(question)["answer"][0].startswith("2025-05-07")


# 5. lay and indirect wordings ------------------------------------------------------------------------------------

def test_how_heavy_at_a_weigh_in_is_the_weight() -> None:
    pq = parse("How heavy was she at her last weigh-in, in lb?", NOW)
    assert pq.entity == "weight" and pq.unit == "lb" and pq.intent == "value"


def test_sugar_control_read_at_an_a1c_is_the_a1c() -> None:
    pq = parse("How was her sugar control at the last A1c check - what did it read?", NOW)
    assert pq.entity == "a1c" and pq.intent == "value"


def test_an_adjective_of_a_finding_with_a_number_is_a_threshold() -> None:
    pq = parse("Has she been hyperkalemic (K > 5.0) at any time in 2025?", NOW)
    assert pq.intent == "threshold" and pq.entity.startswith("potassium")
    assert pq.comparison is not None and pq.comparison.value == 5.0
    assert ask("Has she been hyperkalemic (K > 5.0) at any time in 2025?")["answer"] == [False]  # 4.9 at most
    assert ask("was he ever hypokalemic (<3.8)?")["answer"] == [True]  # 3.6 in May


def test_a_when_clause_before_the_question_places_it_in_time() -> None:
    pq = parse("When her potassium was last drawn, what did it come back as?", NOW)
    assert pq.intent == "value" and pq.entity == "potassium"


@pytest.mark.parametrize("question", ["at what age did she die?", "how old was he when he passed away", "age at death?"])
def test_age_at_death_is_the_age_question(question: str) -> None:
    assert parse(question, NOW).intent == "age"


def test_age_when_admitted_is_the_age_at_the_latest_stay() -> None:
    pq = parse("how old was he when admitted", NOW)
    assert pq.intent == "age" and pq.encounter_class == "IMP" and pq.position == "last"
    assert parse("how old was he at his first admission", NOW).position == "first"
    at_stay = parse("how old was she at her last admission", NOW)  # a stay window read as the stay asked about
    assert at_stay.intent == "age" and at_stay.encounter_class == "IMP" and at_stay.window is None


def test_weigh_as_a_verb_keeps_the_unit_asked() -> None:
    pq = parse("how much does she weigh in lb", NOW)
    assert pq.unit == "lb"


@pytest.mark.parametrize(("question", "kind"), [("Which of her prescriptions are still active?", "medication"),
                                                ("What are her active medical conditions?", "condition")])
def test_active_lists_in_other_words(question: str, kind: str) -> None:
    pq = parse(question, NOW)
    assert pq.intent == "active_list" and pq.list_kind == kind


def test_a_topic_before_a_comma_is_context_when_the_request_names_the_item() -> None:
    asked = "When it comes to colon cancer screening, has she had a colonoscopy at any point?"
    assert focus(asked) == "has she had a colonoscopy at any point?"
    assert focus("Regarding her potassium, what was the last value?") is None  # the topic is the item
