"""Devices on the offline question path (the device view; words in lexicon/record_views.json ``device``).

A nurse or case manager asks whether the patient has a kind of equipment ("uses a CPAP?", "wheelchair?", "on home
oxygen?"), for the list ("list her equipment/devices", "what devices are on file for him?") or whether any is
documented. A named device is a yes/no on the device view: Yes names and cites the rows, No when the view holds
none. The list of no devices is an answer (an empty list), not a lack of data. A device records no date of use, so
"when did she get it?" says so rather than giving the manufacture date. Words also charted as procedures (a
pacemaker, a stent) read the device view first and pass the question on when it holds none, and a question about
the placement itself ("when was the pacemaker placed?") is a procedure's.

"hx of covid?", "ever had covid?", "prior covid infection on record?" ask about the disease: the conditions, never
the immunizations (a COVID-19 vaccine is not a COVID-19 infection); "covid vaccine?" still reads the immunizations.
The rows are hand-made in the shape of the views; every expected answer is computed from them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from .test_tools_helpers import offline_answer

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def device(did: str, name: str, code: str, status: str = "active") -> dict[str, Any]:
    """A device row (Synthea's names; the view has no time of use)."""
    return {"patient_id": "p1", "ref": f"Device/{did}", "name": name, "code": code,
            "code_system": "http://snomed.info/sct", "status": status, "lot_number": "528662", "serial_number": "98660",
            "manufacture_date": datetime(2006, 4, 22, 18, 37, tzinfo=UTC), "manufacture_date_offset": -240}


DEVICES = [
    device("cpap", "Home continuous positive airway pressure unit (physical object)", "702172008"),
    device("chair", "Manual wheelchair (physical object)", "228869008"),
    device("meter", "Blood glucose meter (physical object)", "337414009"),
]
PROCEDURES = [
    {"patient_id": "p1", "ref": "Procedure/pm", "name": "Insertion of permanent cardiac pacemaker", "code": "307280005",
     "status": "completed", "start_time": datetime(2019, 1, 8, 14, 0, tzinfo=UTC)},
]
COVID_VACCINE = {"patient_id": "p1", "ref": "Immunization/v1", "code": "208", "status": "completed",
                 "name": "SARS-COV-2 (COVID-19) vaccine, mRNA, spike protein, LNP, preservative free, 30 mcg/0.3mL dose",
                 "time": datetime(2021, 3, 1, 15, 0, tzinfo=UTC)}
COVID_DISEASE = {"patient_id": "p1", "ref": "Condition/c19", "name": "COVID-19", "code": "840539006",
                 "clinical_status": "resolved", "verification_status": "confirmed",
                 "onset_time": datetime(2020, 11, 2, 9, 0, tzinfo=UTC)}


def ask(question: str, devices: list[dict[str, Any]] | None = None, **views: list[dict[str, Any]]) -> dict[str, Any]:
    return offline_answer(question, {"device": DEVICES if devices is None else devices, "procedure": PROCEDURES,
                                     **views}, NOW)


def refs_named(*words: str) -> set[str]:
    """The device rows whose name holds every one of ``words``."""
    return {d["ref"] for d in DEVICES if all(w in d["name"].lower() for w in words)}


# --- one kind of device: a yes/no on the device view --------------------------------------------------------


@pytest.mark.parametrize(("question", "words"), [
    ("uses a CPAP?", ("continuous positive airway pressure",)),
    ("cpap machine at home?", ("continuous positive airway pressure",)),
    ("uses a wheelchair?", ("wheelchair",)),
    ("does she have a glucometer?", ("glucose meter",)),
])
def test_a_device_she_has_is_yes_naming_and_citing_it(question, words):
    answer = ask(question)
    expected = refs_named(*words)
    assert expected and answer["answer"] == [True] and answer["cited"] == expected
    assert all(d["name"] in answer["text"] for d in DEVICES if d["ref"] in expected)


@pytest.mark.parametrize("question", ["uses a walker?", "hearing aids?", "crutches?", "uses a CPAP?"])
def test_a_device_not_on_file_is_no_not_missing_data(question):
    devices = [d for d in DEVICES if "positive airway" not in d["name"]]  # no CPAP either
    answer = ask(question, devices)
    assert answer["answer"] == [False] and answer["status"] == "answered" and not answer["cited"]
    assert "devices" in answer["text"]


def test_a_device_is_listed_without_a_date_of_use_not_with_its_manufacture_date():
    answer = ask("when did she get her wheelchair?")
    assert answer["status"] == "no-data" and answer["cited"] == refs_named("wheelchair")
    assert "no date of use" in answer["text"] and "2006" not in answer["text"]


# --- the list -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["list her equipment/devices", "list her devices", "what devices are on file for him?"])
def test_the_device_list_names_every_device(question):
    answer = ask(question)
    assert answer["status"] == "answered"
    assert set(answer["answer"]) == {d["name"] for d in DEVICES} and answer["cited"] == {d["ref"] for d in DEVICES}


def test_any_devices_documented_is_yes_and_which_ones_is_the_list():
    answer = ask("any devices documented?")
    assert answer["answer"] == [True] and all(d["name"] in answer["text"] for d in DEVICES)
    assert answer["cited"] == {d["ref"] for d in DEVICES}
    listed = ask("any devices documented? which ones")  # the second half asks for the list itself
    assert sorted(listed["answer"]) == sorted({d["name"] for d in DEVICES})


@pytest.mark.parametrize("question", ["what devices are on file for him?", "list her equipment/devices"])
def test_no_devices_is_an_answered_empty_list(question):
    answer = ask(question, devices=[])
    assert (answer["status"], answer["answer"], answer["cited"]) == ("answered", [], set())
    assert "no devices" in answer["text"]


def test_any_devices_documented_with_none_is_no():
    answer = ask("any devices documented? which ones", devices=[])
    assert (answer["status"], answer["answer"]) == ("answered", [False])


# --- words also charted as procedures -------------------------------------------------------------------------


def test_a_pacemaker_on_the_device_list_answers_from_it_else_from_the_procedures():
    pacemaker = device("pm", "Cardiac pacemaker (physical object)", "14106009")
    with_device = ask("does she have a pacemaker?", [*DEVICES, pacemaker])
    assert with_device["answer"] == [True] and with_device["cited"] == {pacemaker["ref"]}
    without = ask("does she have a pacemaker?")  # no such device: the insertion is charted as a procedure
    assert without["answer"] == [True] and without["cited"] == {p["ref"] for p in PROCEDURES}


def test_home_oxygen_with_no_device_passes_to_the_other_views():
    answer = ask("on home oxygen?")
    assert answer["answer"] == [False] and not any(ref.startswith("Device/") for ref in answer["cited"])


def test_the_placement_of_a_device_is_never_read_from_the_device_view():
    pacemaker = device("pm", "Cardiac pacemaker (physical object)", "14106009")
    answer = ask("pacemaker placement procedure?", [*DEVICES, pacemaker])
    assert not any(ref.startswith("Device/") for ref in answer["cited"])


# --- covid: the disease is a condition, the vaccine an immunization --------------------------------------------


@pytest.mark.parametrize("question", ["hx of covid?", "prior covid infection on record?", "ever had covid?"])
def test_a_covid_vaccine_is_not_a_history_of_covid(question):
    answer = ask(question, immunization=[COVID_VACCINE], condition=[])
    assert answer["answer"] == [False] and COVID_VACCINE["ref"] not in answer["cited"]


@pytest.mark.parametrize("question", ["hx of covid?", "ever had covid?", "prior covid infection on record?"])
def test_a_covid_condition_is_a_history_of_covid(question):
    answer = ask(question, immunization=[COVID_VACCINE], condition=[COVID_DISEASE])
    assert answer["answer"] == [True] and answer["cited"] == {COVID_DISEASE["ref"]}


def test_a_covid_vaccine_question_still_reads_the_immunizations():
    answer = ask("covid vaccine?", immunization=[COVID_VACCINE], condition=[COVID_DISEASE])
    assert answer["cited"] == {COVID_VACCINE["ref"]} and COVID_VACCINE["name"] in answer["answer"]
