"""What happened in a window ("o/n events", "what happened overnight?") and the doses given as needed ("any PRNs
overnight?"), over hand-made rows of one ICU night (no store needed). The gold of each test is computed from the rows.

1. the events of a window are the results judged abnormal, the clinical states crossed by vital signs, PRN and held
   doses, orders started, procedures, encounters and notes, in time order, each cited; scheduled doses, normal
   results and questionnaire scores are not events;
2. a window with records but no events says what it read; a window with no record at all is no-data; a list longer
   than the lexicon's bound says how many more there are;
3. questions other frames answer better stay theirs: a value in the window, a state, a drug given;
4. PRN is a class of doses recognised by how the record writes it (asNeeded, a PRN reason, "as needed" in the sig,
   or the order the dose names), and a record that marks nothing PRN says so.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline.events_plan import events_asked, prn_asked
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.tools.events import as_needed
from fhirqa.project import lexicon_file

from .test_tools_helpers import med, obs, offline_answer, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
NIGHT = (t("2025-06-19T19:00:00"), t("2025-06-20T07:00:00"))  # overnight asked at 12:00: 19:00–07:00
ADMITTED = "2025-06-18T08:00:00"
APAP = "Acetaminophen 325 MG Oral Tablet"
HEPARIN = "Heparin 5,000 units/mL injection"


def encounter(eid: str, code: str, start: str, end: str | None) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": "Hospital admission", "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None, "discharge_disposition": None}


def vital(oid: str, name: str, code: str, value: float, when: str, unit: str) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code, category="vital-signs")


OBSERVATIONS = [
    obs("k-1", "Potassium", 5.9, "2025-06-20T04:00:00", unit="mmol/L", code="2823-3", ref_low=3.5, ref_high=5.1),
    obs("na-1", "Sodium", 139.0, "2025-06-20T04:00:00", unit="mmol/L", code="2951-2", ref_low=135, ref_high=145),
    obs("hgb-1", "Hemoglobin", 7.1, "2025-06-20T04:00:00", unit="g/dL", code="718-7", interpretation="L"),
    obs("cr-0", "Creatinine", 1.9, "2025-06-19T10:00:00", unit="mg/dL", code="2160-0", interpretation="H"),  # before
    obs("phq", "PHQ-2 total score", 5.0, "2025-06-20T03:00:00", unit="{score}", code="55758-7", category="survey"),
    vital("t-1", "Body temperature", "8310-5", 37.0, "2025-06-19T22:00:00", "Cel"),
    vital("t-2", "Body temperature", "8310-5", 38.6, "2025-06-20T02:00:00", "Cel"),
    vital("hr-1", "Heart rate", "8867-4", 118.0, "2025-06-20T02:00:00", "/min"),
    vital("hr-2", "Heart rate", "8867-4", 124.0, "2025-06-20T03:00:00", "/min"),
    vital("hr-3", "Heart rate", "8867-4", 88.0, "2025-06-20T06:00:00", "/min"),
    vital("sp-1", "Oxygen saturation in Arterial blood by Pulse oximetry", "59408-5", 95.0, "2025-06-20T02:00:00", "%"),
]
MEDICATIONS = [
    med("rq-apap", APAP, "request", "2025-06-18T09:00:00", dose=650, status="active",
        dosage_text="Acetaminophen 650 mg PO every 6 hours as needed for fever or pain"),
    med("apap-0", APAP, "administration", "2025-06-19T10:00:00", dose=650, request_ref="MedicationRequest/rq-apap"),
    med("apap-1", APAP, "administration", "2025-06-20T02:30:00", dose=650, request_ref="MedicationRequest/rq-apap"),
    med("rq-hep", HEPARIN, "request", "2025-06-18T09:00:00", dose=5000, unit="units", status="active",
        dosage_text="Heparin 5,000 units SC every 8 hours"),
    med("hep-1", HEPARIN, "administration", "2025-06-19T22:00:00", dose=5000, unit="units",
        request_ref="MedicationRequest/rq-hep"),  # scheduled: no event
    med("hep-2", HEPARIN, "administration", "2025-06-20T06:00:00", dose=5000, unit="units", status="not-done",
        status_reason="Patient off unit for imaging", request_ref="MedicationRequest/rq-hep"),
    med("rq-lasix", "Furosemide 40 MG Injection", "request", "2025-06-20T01:00:00", dose=40, status="active"),
]
PROCEDURES = [{"patient_id": "p1", "ref": "Procedure/cxr", "name": "Chest x-ray", "code": "399208008", "status": "completed",
               "start_time": t("2025-06-20T03:30:00"), "end_time": None}]
NOTES = [{"patient_id": "p1", "ref": "DocumentReference/rn", "note_type": "Nursing note", "time": t("2025-06-20T05:00:00"),
          "author": "RN Smith", "text": "Febrile overnight, tylenol given."}]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "encounter": [encounter("s1", "IMP", ADMITTED, None)], "observation": OBSERVATIONS, "medication": MEDICATIONS,
    "procedure": PROCEDURES, "note": NOTES,
}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    return offline_answer(question, views or VIEWS, NOW)


def _in(when: datetime, window: tuple[datetime, datetime] = NIGHT) -> bool:
    return window[0] <= when <= window[1]


# 1. the events of a window


def test_overnight_events_are_every_kind_of_event_in_time_order_each_cited() -> None:
    got = ask("o/n events")
    expected = {"Observation/k-1", "Observation/hgb-1",  # outside the record's range, flagged L
                "Observation/t-2", "Observation/hr-2",  # febrile; tachycardic, its highest value cited
                "MedicationAdministration/apap-1", "MedicationAdministration/hep-2",  # PRN by its order; held
                "MedicationRequest/rq-lasix", "Procedure/cxr", "DocumentReference/rn"}
    assert expected <= got["cited"]
    assert len(got["answer"]) == len(expected)
    # scheduled doses, normal results, scores and what came before the night are no events
    for ref in ("MedicationAdministration/hep-1", "Observation/na-1", "Observation/phq", "Observation/cr-0",
                "MedicationAdministration/apap-0"):
        assert ref not in got["text"]
    text = got["text"]
    order = [text.index(f"/{ref})") for ref in ("rq-lasix", "t-2", "apap-1", "cxr", "k-1", "rn", "hep-2")]
    assert order == sorted(order)  # in time order: 01:00, 02:00, 02:30, 03:30, 04:00, 05:00, 06:00
    tachy = [r for r in OBSERVATIONS if r["name"] == "Heart rate" and _in(r["time"]) and r["value"] > 100]
    assert f"{len(tachy)} heart rate values > 100" in text
    assert "Patient off unit for imaging" in text and "overnight" in text


def test_the_same_frame_reads_other_phrasings_and_windows() -> None:
    night = ask("o/n events")["answer"]
    assert ask("what happened overnight?")["answer"] == night
    assert ask("update on bed 12 since last night")["answer"] == night
    assert ask("how was her night?")["answer"] == night  # the night its words name
    # since 03:00 today: only what came after
    after = ask("what did I miss since 3am?")
    assert "Observation/t-2" not in after["text"] and "DocumentReference/rn" in after["text"]


def test_no_window_asked_is_the_last_24_hours_said() -> None:
    got = ask("any events?")
    assert got["answer"] == [True] and "last 24 hours" in got["text"]


# 2. nothing happened, nothing charted, more than the bound


def test_a_window_with_records_but_no_events_says_what_it_read() -> None:
    quiet = {**VIEWS, "observation": [*OBSERVATIONS, obs("na-2", "Sodium", 140.0, "2025-06-20T11:00:00", unit="mmol/L",
                                                       code="2951-2", ref_low=135, ref_high=145)]}
    got = ask("anything new in the last 2 hours?", quiet)
    assert got["answer"] == [False] and got["status"] == "answered"
    assert "1 result, none judged abnormal" in got["text"]


def test_a_window_with_no_record_at_all_is_no_data() -> None:
    got = ask("anything new in the last 2 hours?")
    assert got["status"] == "no-data" and "Nothing is charted" in got["text"]


def test_a_long_list_is_bounded_and_says_how_many_more() -> None:
    bound = int(lexicon_file("window_events.json")["max_events"])
    many = [obs(f"k{i}", "Potassium", 6.0 + i / 10, f"2025-06-20T0{i % 6}:{10 + i:02d}:00", unit="mmol/L", code="2823-3",
                ref_low=3.5, ref_high=5.1) for i in range(bound + 3)]
    got = ask("o/n events", {**VIEWS, "observation": many, "medication": [], "procedure": [], "note": []})
    assert len(got["answer"]) == bound and "and 3 more" in got["text"]


# 3. questions other frames answer better


def test_a_value_a_state_or_a_drug_in_the_window_is_not_an_events_question() -> None:
    for question in ("what was her K overnight", "was she febrile overnight", "what happened to her K overnight?",
                     "any new meds?", "was tylenol given overnight?", "any events in the notes overnight?",
                     "what's new with her labs overnight?", "anything new started overnight?"):
        assert events_asked(parse(question, NOW)) is None, question
    assert ask("what was her K overnight")["answer"] == [5.9]
    febrile = ask("was she febrile overnight")
    assert febrile["answer"] == [True] and "febrile =" in febrile["text"]


# 4. PRN doses


def test_prn_is_read_from_the_row_or_the_order_it_names() -> None:
    orders = {"MedicationRequest/o": {"ref": "MedicationRequest/o", "dosage_text": "2 puffs q4h PRN wheeze"}}
    assert as_needed({"as_needed": True}, {}) is not None
    assert as_needed({"as_needed_reason": "pain"}, {}) == "as needed for pain"
    assert as_needed({"dosage_text": "650 mg PO q6h as needed"}, {}) is not None
    assert as_needed({"request_ref": "MedicationRequest/o"}, orders) is not None
    assert as_needed({"dosage_text": "650 mg PO q6h"}, {}) is None
    assert as_needed({"as_needed": False, "request_ref": "MedicationRequest/o"}, orders) is None  # its own word wins


def test_prns_in_a_window_are_the_doses_given_as_needed() -> None:
    prn = [r for r in MEDICATIONS if r["kind"] == "administration" and r["medication_name"] == APAP]
    got = ask("any PRNs overnight?")
    assert got["answer"] == [any(_in(r["time"]) for r in prn)] == [True]
    assert "MedicationAdministration/apap-1" in got["cited"] and "hep-1" not in got["text"]
    since_admit = [r for r in prn if r["time"] >= t(ADMITTED) and r["status"] == "completed"]
    assert ask("how many PRN tylenol doses since admit?")["answer"] == [len(since_admit)] == [2]
    assert ask("what PRNs has she needed today?")["answer"] == [APAP]


def test_no_prn_given_is_a_no_and_a_record_that_never_marks_prn_says_so() -> None:
    assert ask("any PRNs in the last 2 hours?")["answer"] == [False]
    unmarked = [{**r, "dosage_text": None} for r in MEDICATIONS]
    got = ask("any PRNs overnight?", {**VIEWS, "medication": unmarked})
    assert got["status"] == "no-data" and "does not mark" in got["text"]


def test_a_prn_drug_never_on_file_is_a_no() -> None:
    got = ask("any PRN haldol o/n")
    assert got["answer"] == [False] and got["status"] == "answered" and "haldol" in got["text"]


def test_a_question_about_the_order_sig_is_not_a_prn_doses_question() -> None:
    assert prn_asked(parse("is her tylenol ordered PRN?", NOW)) is None
    assert prn_asked(parse("any PRNs overnight?", NOW)) == ""
    assert prn_asked(parse("how many PRN tylenol doses since admit?", NOW)) == "tylenol"
    assert prn_asked(parse("any PRN for pain overnight?", NOW)) == "analgesic"  # the purpose's class
