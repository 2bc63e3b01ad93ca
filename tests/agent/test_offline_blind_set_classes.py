"""Kinds of phrasing blind sets found misread, each fixed by a general mechanism (not by a question):

filler and punctuation never enter the item; "right after X was started" is the first value after the start;
"X on her problem list ever?" and "has she ever had X done?" are yes/no; the lexicon's multi-word shorthand
survives the stop words; an analyte symbol with no number before it is not a unit; any four-digit year is a
year where the grammar says so; a day's administered doses are summed; a misspelled lab finds a record that
names the lab by one of its aliases; shorthand in the lexicon (BTL, BCx, Ca gluc, med rec, admits).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.agent.lexicon import Lexicon
from fhirqa.agent.resolver import ConceptResolver

from .test_offline_ward_questions import ask
from .test_tools_helpers import med, obs

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


# 1. filler words and stray punctuation ------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "entity"), [
    ("most recent HR pls", "hr"),
    ("latest K please", "k"),
    ("last A1c thx", "a1c"),
    ("kindly pull the last LDL", "ldl"),
    ("first TSH - when?", "tsh"),
])
def test_politeness_and_punctuation_are_not_part_of_the_item(question: str, entity: str) -> None:
    assert parse(question, NOW).entity == entity


def test_a_bare_admit_names_the_inpatient_class() -> None:
    pq = parse("last admit - when?", NOW)
    assert (pq.intent, pq.encounter_class, pq.entity) == ("time_of", "IMP", "")
    assert parse("how many admits since 2019?", NOW).encounter_class == "IMP"


def test_a_usage_word_no_record_name_holds_is_dropped() -> None:
    resolve = ConceptResolver()
    assert resolve("medication", "hydromorphone use", ["Hydromorphone 2 MG/ML Injection"]).matched == ["Hydromorphone 2 MG/ML Injection"]
    assert resolve("condition", "tobacco use", ["Tobacco use (finding)"]).matched == ["Tobacco use (finding)"]


# 2. right after a drug was started --------------------------------------------------------------------------

@pytest.mark.parametrize("question", [
    "hemoglobin right after amlodipine start",
    "K immediately after lisinopril was started",
    "Cr just after she was started on furosemide",
    "INR shortly after warfarin was started",
])
def test_right_after_a_drug_start_is_the_first_value_after_it(question: str) -> None:
    pq = parse(question, NOW)
    assert (pq.intent, pq.position) == ("after_drug", "first")
    assert pq.entity and not {"right", "immediately", "just", "shortly"} & set(pq.entity.split())


def test_after_a_drug_start_without_such_a_word_stays_the_latest_value() -> None:
    assert parse("K after lisinopril was started", NOW).position == "last"


# 3. yes/no questions that look like lists or counts ---------------------------------------------------------

@pytest.mark.parametrize("question", [
    "aflutter on her problem list ever?",
    "sinus bradycardia on his problem list ever?",
    "Is HTN on the problem list?",
])
def test_x_on_the_problem_list_is_an_existence_question(question: str) -> None:
    assert parse(question, NOW).intent == "exists"


def test_the_problem_list_itself_is_still_a_list() -> None:
    assert parse("what's on her problem list?", NOW).intent == "active_list"


def test_ever_done_is_an_existence_question_even_with_count_in_the_item() -> None:
    pq = parse("has she ever had blood count done?", NOW)
    assert (pq.intent, pq.entity) == ("exists", "blood count")
    assert parse("how many times has she had a CBC done?", NOW).intent == "count"


def test_a_group_of_tests_means_any_of_its_members() -> None:
    names = ["Hemoglobin [Mass/volume] in Blood", "Platelets [#/volume] in Blood by Automated count", "Glucose"]
    got = ConceptResolver()("observation", "blood count", names)
    assert set(got.matched) == set(names[:2])


# 4. multi-word shorthand ------------------------------------------------------------------------------------

def test_a_lexicon_phrase_keeps_its_stop_words() -> None:
    pq = parse("med rec count?", NOW)
    assert (pq.intent, pq.entity, pq.views[0]) == ("count", "med rec", "procedure")


@pytest.mark.parametrize(("phrase", "term"), [
    ("BTL", "Bilateral tubal ligation"), ("BCx", "Blood culture"), ("med rec", "Medication reconciliation"),
    ("Ca gluc", "calcium gluconate"), ("calcium gluc", "calcium gluconate"), ("OA", "Osteoarthritis"),
    ("MI", "Myocardial infarction"), ("admits", "inpatient"), ("LFTs", "Liver function tests"),
])
def test_clinician_shorthand_in_the_lexicon(phrase: str, term: str) -> None:
    assert Lexicon.load().expand(phrase)[0].term == term


def test_an_acronym_inside_a_longer_item_keeps_its_capitals() -> None:
    assert parse("Has he ever had knee OA?", NOW).entity == "knee OA"
    assert any(e.term == "Osteoarthritis" for e in Lexicon.load().expand("knee OA"))


# 5. analyte symbols are not units ---------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "entity"), [("Mg result?", "mg"), ("last Mg", "mg"), ("K result", "k")])
def test_an_analyte_symbol_without_a_number_is_the_item(question: str, entity: str) -> None:
    assert parse(question, NOW).entity == entity


def test_a_unit_spoken_of_is_still_a_unit() -> None:
    assert parse("how many mg of heparin were given on 2024-03-01?", NOW).entity == "heparin"
    pq = parse("Vanc total on 2024-03-01, in grams?", NOW)
    assert (pq.entity, pq.unit) == ("vanc", "g")


# 6. years of any century ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("phrase", "start", "end"), [
    ("visits during 2157", "2157-01-01", "2157-12-31"),
    ("visits in 2156", "2156-01-01", "2156-12-31"),
    ("visits cy2157", "2157-01-01", "2157-12-31"),
    ("k since 2157", "2157-01-01", None),
    ("k before 2157", None, "2156-12-31"),
])
def test_a_four_digit_year_is_a_year_where_the_words_say_so(phrase: str, start: str | None, end: str | None) -> None:
    now = datetime(2160, 6, 1, tzinfo=UTC)
    window = find_window(phrase, now).window
    assert (window.start.date().isoformat() if window.start else None) == start
    assert (window.end.date().isoformat() if end else window.end) == (end or now)


def test_a_quantity_is_not_a_year() -> None:
    assert find_window("more than 1500 mg in a day", NOW) is None
    assert find_window("heparin for 2000 units", NOW) is None


def test_a_month_and_day_without_a_year_is_the_latest_such_day() -> None:
    assert find_window("on nov 29", NOW).window.start.date().isoformat() == "2023-11-29"
    assert find_window("on the 3rd of june", NOW).window.start.date().isoformat() == "2024-06-03"


# 7. doses given in a day ------------------------------------------------------------------------------------

HEPARIN = {"medication": [
    med("h1", "Heparin 5000 UNT/ML Injectable Solution", "administration", "2023-11-29T06:00:00", dose=5000, unit="[iU]"),
    med("h2", "Heparin 5000 UNT/ML Injectable Solution", "administration", "2023-11-29T14:00:00", dose=5000, unit="[iU]"),
    med("h3", "Heparin 5000 UNT/ML Injectable Solution", "administration", "2023-11-29T22:00:00", dose=5000, unit="[iU]"),
    med("h4", "Heparin 5000 UNT/ML Injectable Solution", "administration", "2023-11-30T06:00:00", dose=5000, unit="[iU]"),
    med("v1", "Vancomycin 1000 MG Injection", "administration", "2023-11-29T08:00:00", dose=1000),
    med("v2", "Vancomycin 1000 MG Injection", "administration", "2023-11-29T20:00:00", dose=1000),
]}


@pytest.mark.parametrize("question", [
    "How much heparin was given on Nov 29?",
    "heparin in total on 11/29/2023",
    "How much heparin did she receive on 2023-11-29?",
])
def test_what_was_given_on_a_day_is_the_sum_of_that_days_doses(question: str) -> None:
    assert ask(question, HEPARIN)["answer"] == [15000]


def test_a_days_total_in_the_unit_asked_for() -> None:
    assert ask("Vanc total on 2023-11-29, in grams?", HEPARIN)["answer"] == [2.0]


def test_a_threshold_written_with_thousands_separators() -> None:
    assert parse("more than 15,000 units of heparin in a day?", NOW).comparison.value == 15000
    assert ask("Was she ever given more than 10,000 units of heparin in one day?", HEPARIN)["answer"] == [True]
    assert ask("Was she ever given more than 15,000 units of heparin in one day?", HEPARIN)["answer"] == [False]


# 8. misspelled lab names ------------------------------------------------------------------------------------

@pytest.mark.parametrize("phrase", ["platlets", "plateletes", "platelets"])
def test_a_misspelled_lab_finds_a_record_that_names_it_by_an_alias(phrase: str) -> None:
    assert ConceptResolver()("observation", phrase, ["PLT", "HGB", "WBC"]).matched == ["PLT"]


def test_a_misspelled_lab_end_to_end() -> None:
    views = {"observation": [obs("o1", "Plt", 212, "2024-01-02T10:00:00", unit="10*3/uL", code="PLT-LOCAL")]}
    assert ask("platlets last", views)["answer"] == [212]


def test_a_several_word_phrase_is_misspelled_word_by_word() -> None:
    resolve = ConceptResolver()
    assert resolve("condition", "sinus bradycardia", ["ST (Sinus Tachycardia)"]).matched == []  # another word
    assert resolve("condition", "sinus tachycardai", ["ST (Sinus Tachycardia)"]).matched == ["ST (Sinus Tachycardia)"]


@pytest.mark.parametrize(("phrase", "generic"), [("Mg sulfate", "magnesium sulfate"), ("Na bicarb", "sodium bicarbonate"),
                                                 ("Ca gluc", "calcium gluconate"), ("KCl", "potassium chloride")])
def test_an_element_symbol_before_a_salt_names_the_drug(phrase: str, generic: str) -> None:
    assert Lexicon.load().expand(phrase)[0].term == generic


def test_a_dose_charted_as_not_given_is_not_in_the_days_total() -> None:
    views = {"medication": [
        med("c1", "ceftriaxone 1000 MG Injection", "administration", "2021-04-13T08:00:00", dose=1000),
        med("c2", "ceftriaxone 1000 MG Injection", "administration", "2021-04-13T20:00:00", dose=1000, status="not-done"),
    ]}
    assert ask("How much ceftriaxone was given on April 13, 2021?", views)["answer"] == [1000]


def test_a_word_cut_short_still_matches_in_a_several_word_phrase() -> None:
    resolve = ConceptResolver()
    assert resolve("condition", "sinus brady", ["Sinus bradycardia", "Sinus tachycardia"]).matched == ["Sinus bradycardia"]
    assert resolve("condition", "sinus tach", ["Sinus bradycardia", "Sinus tachycardia"]).matched == ["Sinus tachycardia"]


@pytest.mark.parametrize(("question", "intent"), [
    ("Obesity hx?", "exists"), ("Meds now?", "active_list"), ("Has the patient ever had liver tests done?", "exists"),
])
def test_terse_forms(question: str, intent: str) -> None:
    assert parse(question, NOW).intent == intent


def test_expired_alone_asks_whether_the_patient_died() -> None:
    assert parse("Expired?", NOW).demographic == "is_deceased"


def test_a_lexicon_phrase_is_protected_in_its_plural_too() -> None:
    assert parse("Has the patient ever had liver tests done?", NOW).entity == "liver tests"
    assert parse("# of Cl checks since 2019?", NOW).entity == "cl"
