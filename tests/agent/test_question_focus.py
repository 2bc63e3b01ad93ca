"""The request inside a question that opens with context: the context's words must not become the question's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fhirqa.agent.backends.offline.backend import parse_cached
from fhirqa.agent.backends.offline.focus import focus

NOW = datetime(2026, 6, 15, 21, tzinfo=UTC)


@pytest.mark.parametrize(("question", "expected"), [
    ("Renewing her Lasix today and want to check lytes first - what was her last K?", "what was her last K?"),
    ("Pt seen in clinic tmrw - can you pull her most recent a1c?", "can you pull her most recent a1c?"),
    ("Cardiology asking about anticoagulation history before the ablation consult - has she ever been on Eliquis?",
     "has she ever been on Eliquis?"),
    ("She's complaining of fatigue; can you pull her latest TSH?", "can you pull her latest TSH?"),
    ("Flu season is starting. When did she last get a flu shot?", "When did she last get a flu shot?"),
])
def test_context_before_a_self_contained_request_is_dropped(question, expected):
    assert focus(question) == expected


@pytest.mark.parametrize(("question", "asked"), [
    ("Sign-out asks for his peak K this admission - what is it?", "his peak K this admission"),
    ("Nephrology wants to know how many creatinine checks she has had since she came in - how many?",
     "how many creatinine checks she has had since she came in"),
    ("HF clinic wants to know how her BNP moved - what's the change from 9/11/2024 to 4/6/2026?",
     "how her BNP moved - what's the change from 9/11/2024 to 4/6/2026?"),
])
def test_a_request_that_names_nothing_asks_about_the_clause_before_it(question, asked):
    assert focus(question) == asked


@pytest.mark.parametrize("question", [
    "What was her last potassium?",  # one clause
    "K - last value?",  # the short clause is the item
    "last K? - she is on spironolactone",  # the request first: what follows qualifies it
    "How many times has Mr. Haddad had chest film since the 9th of January 2024?",  # "Mr." ends no sentence
    "pip-tazo doses given on 2024-02-25?",  # hyphens inside words and dates are not clause breaks
    "for the discharge summary I need the highest creatinine this admission",
    "Reinger, Bill (12/25/1992) - id?",  # a one-word request asks about the clause before it
    "last script for Aleve - date?",
    "which patient is Schmitt, Denis (DOB March 23, 2011)? give the id",  # a question before it is no context
    "cough ED visit '77 - yes or no?",  # the clause before is the subject: no context verb
    "A/P in the note from October 29, 1982 - what was she presenting with?",
    "Chart audit: the 3/28 note lists Gout - is that diagnosis supported by the problem list?",  # points back
    "Cleaning up her problem list after the sepsis admission - is it still active?",
])
def test_a_question_without_leading_context_is_parsed_whole(question):
    assert focus(question) is None


def test_the_parse_of_a_question_with_context_is_the_parse_of_its_request():
    parsed = parse_cached("Renewing her Lasix today and want to check lytes first - what was her last K?",
                          NOW.isoformat(), "")
    direct = parse_cached("what was her last K?", NOW.isoformat(), "")
    assert (parsed.intent, parsed.entity, parsed.window, parsed.drug) == (direct.intent, direct.entity, None, None)
    assert parsed.text == "what was her last K?"  # what the plans read is the request


def test_a_lookup_whose_request_does_not_name_the_patient_is_parsed_whole():
    question = "A patient named Charita Adams, born 09/14/2001, is in the system; what is the patient id?"
    parsed = parse_cached(question, NOW.isoformat(), "")
    assert parsed.intent == "lookup" and parsed.lookup_name


def test_a_patient_introducing_themselves_is_a_lookup_not_context():
    parsed = parse_cached("I'm Dannie Schmitt, born July 23, 1981. What's my patient ID?", NOW.isoformat(), "")
    assert parsed.intent == "lookup" and parsed.lookup_name


def test_a_request_whose_parse_finds_no_item_falls_back_to_the_whole_question():
    whole = "Pharmacy is dosing her vanc off levels - total grams given on 2026-03-16?"
    assert "vanc" in parse_cached(whole, NOW.isoformat(), "").entity


_WORDS = st.sampled_from(["what", "was", "her", "last", "K", "-", ";", "Mr.", "Lasix", "today", "?", "how", "many",
                          "is", "it", "2024-02-25", "pip-tazo", ".", "the", "sign-out", "asks", "for"])


@given(st.lists(_WORDS, max_size=14))
def test_the_request_only_ever_holds_words_of_the_question(words):
    question = " ".join(words)
    asked = focus(question)
    if asked is not None:
        assert set(asked.replace(" - ", " ").split()) <= set(question.split()) | {"-"}
