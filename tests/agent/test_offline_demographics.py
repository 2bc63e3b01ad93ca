"""The patient's other facts: marital status, language, race, ethnicity, sex at birth, MRN, where they live.

Each is the patient view's column as the record writes it, with words for a code ("M" is married, "en-US" is
English), and a yes/no ("is she married?") says whether the value is one the question names. A fact the record
does not state is no-data, never a guess. The gold of each test is computed from the row below.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from .test_tools_helpers import offline_answer

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
PATIENT = {"patient_id": "p1", "ref": "Patient/p1", "name": "Ana Reyes", "birth_date": date(1960, 1, 5),
           "gender": "female", "deceased_time": None, "marital_status": "M", "marital_status_code": "M",
           "language": "es-MX", "race": "White", "ethnicity": "Hispanic or Latino", "birth_sex": "F",
           "mrn": "MRN-0042", "city": "Lawrence", "state": "Massachusetts"}


def ask(question: str, patient: dict[str, Any] | None = None) -> dict[str, Any]:
    return offline_answer(question, {"patient": [patient or PATIENT]}, NOW)


def test_a_coded_fact_is_said_in_words_with_the_records_own_code() -> None:
    got = ask("marital status?")
    assert got["answer"] == ["married"] and "(M)" in got["text"] and "Patient/p1" in got["cited"]
    assert ask("preferred language?")["answer"] == ["Spanish"]
    assert ask("what language does she speak?")["answer"] == ["Spanish"]


def test_a_yes_no_asks_whether_the_value_is_the_one_named() -> None:
    assert ask("is she married?")["answer"] == [True]
    assert ask("is she married?", {**PATIENT, "marital_status": "Never Married"})["answer"] == [False]
    assert ask("does she speak English?")["answer"] == [False]


def test_facts_written_as_text_are_given_as_written() -> None:
    assert ask("race?")["answer"] == [PATIENT["race"]]
    assert ask("ethnicity?")["answer"] == [PATIENT["ethnicity"]]
    assert ask("sex at birth?")["answer"] == [PATIENT["birth_sex"]]
    assert ask("MRN?")["answer"] == [PATIENT["mrn"]]
    got = ask("where does she live?")
    assert got["answer"] == [PATIENT["city"]] and PATIENT["state"] in got["text"]


def test_a_fact_not_stated_is_no_data_and_the_built_in_facts_keep_their_reading() -> None:
    got = ask("marital status?", {**PATIENT, "marital_status": None})
    assert got["status"] == "no-data" and got["answer"] == []
    assert ask("gender?")["answer"] == ["female"]
    assert ask("DOB?")["answer"] == [PATIENT["birth_date"].isoformat()]
