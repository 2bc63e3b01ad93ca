"""Questions about the patient as a whole, and the readings beside them, end to end through the offline backend.

- A summary ("brief summary of this patient", "one-liner", "sign-out summary") is an extractive snapshot of the
  views: age and sex, active problems, current medications, allergies, the latest vitals, the last encounter and
  the last admission, every row it names cited. "discharge summary" or "summary of his labs" name something else.
- "Who is his PCP?" is the clinician named on the most ambulatory encounters, and the answer says where it comes
  from; a record whose encounters name nobody is no-data, saying what was (and was not) read.
- A group of results is an item: "vitals", "last set of vitals", "VS" are the vital signs, each with its time;
  "BMP", "lipids", "lytes" their analytes (lexicon/item_groups.json); a lab group of the lexicon ("CBC") answers
  every member, not only the latest row.
- A visit named by its kind ("last physical", "annual exam", "wellness visit") is found by its encounter type
  codes (lexicon/encounters.json) when no encounter is named with those words.
- Negatives read as a clinician writes them: "No allergies are recorded.", a no-known-allergy entry is NKDA, and a
  term is named as the question wrote it ("I/O", not "/o").
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.summary_plan import named_group, snapshot_kind
from fhirqa.agent.composer import compose
from fhirqa.agent.engine import ask as engine_ask
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext
from fhirqa.store import Store

from .test_offline_ward_questions import condition
from .test_tools_helpers import FakeRows, med, obs, t

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def encounter(eid: str, klass: str, type_name: str, type_code: str, start: str, end: str | None = None,
              practitioner: str | None = None, reason: str | None = None) -> dict[str, Any]:
    """An encounter row as the view gives it."""
    names = {"AMB": "ambulatory", "IMP": "inpatient", "EMER": "emergency"}
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "status": "finished", "class_code": klass,
            "class_name": names.get(klass, klass), "type_name": type_name, "type_code": type_code,
            "type_system": "http://snomed.info/sct", "reason_name": reason, "reason_code": None,
            "start_time": t(start), "end_time": t(end or start), "discharge_disposition": None,
            "practitioner": practitioner, "service_provider": None, "location": None}


def allergy(aid: str, name: str, when: str = "2015-01-01T00:00:00") -> dict[str, Any]:
    """An allergy row as the view gives it."""
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "code": aid, "category": "medication",
            "clinical_status": "active", "verification_status": "confirmed", "criticality": None,
            "recorded_time": t(when), "onset_time": None, "reaction": None}


def vital(oid: str, name: str, value: float, unit: str, code: str, when: str, **extra: Any) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code, category="vital-signs", **extra)


WHEN = "2024-06-10T08:00:00"
OBSERVATIONS = [
    vital("hr0", "Heart rate", 96.0, "/min", "8867-4", "2024-05-01T08:00:00"),
    vital("hr1", "Heart rate", 72.0, "/min", "8867-4", WHEN),
    vital("rr1", "Respiratory rate", 14.0, "/min", "9279-1", WHEN),
    vital("t1", "Body temperature", 36.9, "Cel", "8310-5", WHEN),
    vital("bp1", "Systolic blood pressure", 128.0, "mm[Hg]", "8480-6", WHEN, is_component=True,
          parent_name="Blood pressure panel"),
    vital("bp1", "Diastolic blood pressure", 82.0, "mm[Hg]", "8462-4", WHEN, is_component=True,
          parent_name="Blood pressure panel"),
    vital("o1", "Oxygen saturation in Arterial blood by Pulse oximetry", 97.0, "%", "59408-5", WHEN),
    vital("w0", "Body weight", 82.0, "kg", "29463-7", "2024-05-01T08:00:00"),
    vital("w1", "Body weight", 80.5, "kg", "29463-7", WHEN),
    obs("na", "Sodium [Moles/volume] in Serum or Plasma", 139.0, "2024-06-09T06:00:00", unit="mmol/L", code="2951-2"),
    obs("k", "Potassium [Moles/volume] in Serum or Plasma", 4.2, "2024-06-09T06:00:00", unit="mmol/L", code="2823-3"),
    obs("cr", "Creatinine [Mass/volume] in Serum or Plasma", 1.1, "2024-06-09T06:00:00", unit="mg/dL", code="2160-0"),
    obs("ug", "Glucose [Mass/volume] in Urine by Test strip", 0.0, "2024-06-09T06:00:00", unit="mg/dL", code="5792-7"),
    obs("ldl", "Cholesterol in LDL [Mass/volume] in Serum or Plasma", 101.0, "2024-01-09T06:00:00", unit="mg/dL",
        code="18262-6"),
    obs("tg", "Triglyceride [Mass/volume] in Serum or Plasma", 150.0, "2024-01-09T06:00:00", unit="mg/dL",
        code="2571-8"),
    obs("hb", "Hemoglobin [Mass/volume] in Blood", 13.1, "2024-06-09T06:00:00", unit="g/dL", code="718-7"),
    obs("plt", "Platelets [#/volume] in Blood by Automated count", 250.0, "2024-06-09T06:00:00", unit="10*3/uL",
        code="777-3"),
]
ENCOUNTERS = [
    encounter("e1", "AMB", "Encounter for check up (procedure)", "185349003", "2022-03-01T09:00:00",
              practitioner="Dr. Ana Reyes"),
    encounter("e2", "AMB", "Follow-up encounter", "390906007", "2023-03-01T09:00:00", practitioner="Dr. Ana Reyes"),
    encounter("e3", "IMP", "Inpatient admission", "32485007", "2023-12-15T09:00:00", "2023-12-19T12:00:00",
              practitioner="Dr. Farid Goldberg", reason="Sepsis"),
    encounter("e4", "AMB", "Encounter for check up (procedure)", "185349003", "2024-02-01T09:00:00",
              practitioner="Dr. Ana Reyes"),
    encounter("e5", "AMB", "Acute visit", "185345009", "2024-05-01T09:00:00", practitioner="Dr. Lee Park"),
]
PATIENT = [{"patient_id": "p1", "ref": "Patient/p1", "name": "Ada Lovelace", "birth_date": date(1950, 6, 16),
            "gender": "female", "deceased": False, "deceased_time": None}]
VIEWS: dict[str, list[dict[str, Any]]] = {
    "patient": PATIENT,
    "observation": OBSERVATIONS,
    "encounter": ENCOUNTERS,
    "condition": [condition("c1", "Hypertension", "2010-01-01T00:00:00"),
                  condition("c2", "Acute bronchitis (disorder)", "2020-01-05T00:00:00", "2020-01-20T00:00:00",
                            status="resolved")],
    "medication": [med("m1", "Lisinopril 10 MG Oral Tablet", "request", "2024-02-01T09:00:00", status="active")],
    "allergy": [allergy("a1", "Latex (substance)")],
}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The offline backend's final answer over the rows (with the refs it cites under "cited"), with the real
    concept resolver and lexicon."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return {**out.final, "cited": {ref for ref, _ in ctx.evidence}}


# 1. a summary of the record ------------------------------------------------------------------------------------

def test_a_summary_names_age_problems_meds_allergies_vitals_and_visits_each_cited():
    got = ask("brief summary of this patient")
    text = got["text"]
    assert got["status"] == "answered"
    assert "73-year-old female" in text and "Hypertension" in text and "bronchitis" not in text  # resolved: gone
    assert "Lisinopril 10 MG Oral Tablet" in text and "Latex (substance)" in text
    assert "Heart rate: 72 /min" in text and "(2024-06-10)" in text  # the latest set, its one day said once
    assert "Last encounter: Acute visit" in text and "Last admission: Inpatient admission" in text
    refs = got["cited"]
    assert {"Condition/c1", "MedicationRequest/m1", "AllergyIntolerance/a1", "Observation/hr1", "Encounter/e5",
            "Encounter/e3"} <= refs


def test_a_summary_at_an_instant_inside_a_stay_says_the_stay_is_in_progress_and_no_later_death():
    inside = {**VIEWS, "patient": [{**PATIENT[0], "deceased": True, "deceased_time": t("2024-06-20T00:00:00")}],
              "encounter": [*ENCOUNTERS, encounter("e6", "IMP", "Inpatient admission", "32485007",
                                                   "2024-06-13T09:00:00", "2024-06-18T12:00:00")]}
    text = ask("sign-out summary", inside)["text"]
    assert "Current admission (the last encounter): Inpatient admission (inpatient), since 2024-06-13 (in progress)" in text
    assert "died" not in text and "73-year-old" in text  # the death is after the question's instant


def test_summary_phrasings_are_read_when_nothing_else_is_named():
    now = NOW
    for question in ("one-liner on this pt", "summarize this patient", "pt summary", "give me the rundown",
                     "who is this patient?", "HPI-style summary", "sign-out summary"):
        assert snapshot_kind(parse(question, now)) == "summary", question
    for question in ("discharge summary?", "summary of his labs", "last d/c summary date"):
        assert snapshot_kind(parse(question, now)) is None, question


def test_a_summary_of_an_empty_record_says_none_recorded_rather_than_failing():
    got = ask("pt summary", {"patient": PATIENT})
    assert got["status"] == "answered"
    assert "Active problems: none recorded" in got["text"] and "Allergies: none recorded" in got["text"]


# 2. the primary care clinician --------------------------------------------------------------------------------

def test_the_pcp_is_the_clinician_of_most_ambulatory_visits_and_the_answer_says_so():
    got = ask("who is his PCP?")
    assert got["answer"] == ["Dr. Ana Reyes"]
    assert "3 of the 4 ambulatory encounters" in got["text"] and "Source:" in got["text"]
    assert snapshot_kind(parse("name of her primary care physician", NOW)) == "care_team"
    assert snapshot_kind(parse("when was her last PCP visit?", NOW)) is None  # a visit, not the clinician


def test_no_named_practitioner_is_no_data_that_says_what_was_read():
    unnamed = {**VIEWS, "encounter": [{**e, "practitioner": None} for e in ENCOUNTERS]}
    got = ask("PCP?", unnamed)
    assert got["status"] == "no-data"
    assert "none of the 5 encounters names a practitioner" in got["text"]
    assert "generalPractitioner" in got["text"]


# 3. groups of results -------------------------------------------------------------------------------------------

def test_vitals_are_the_latest_of_each_vital_sign_with_its_time():
    for question in ("what was the last set of vitals?", "vitals", "last vitals", "VS"):
        got = ask(question)
        assert got["status"] == "answered", question
        assert 72.0 in got["answer"] and 96.0 not in got["answer"], question  # the latest heart rate only
        assert {128.0, 82.0, 14.0, 36.9, 97.0, 80.5} <= set(got["answer"]), question
        assert 139.0 not in got["answer"], question  # a lab is no vital sign
        assert "2024-06-10" in got["text"], question


def test_a_word_beside_the_group_is_no_item_but_versus_between_items_stays_a_comparison():
    assert named_group(parse("were vitals stable", NOW)) == "vitals"
    assert named_group(parse("last set of vitals", NOW)) == "vitals"
    assert named_group(parse("K vs Na", NOW)) is None


def test_a_trend_of_a_group_is_each_analytes_own_trend():
    got = ask("were vitals stable")
    assert got["status"] == "answered"
    assert "Heart rate went from 96 /min on 2024-05-01 to 72 /min on 2024-06-10" in got["text"]
    assert "Body weight went from 82 kg" in got["text"]
    assert "Respiratory rate went from 96" not in got["text"]  # never one series across vital signs
    assert got["answer"] == ["decreasing", "stable"]  # heart rate -25 %, weight -2 %


def test_a_group_whose_analytes_cannot_trend_is_no_data_not_one_mixed_series():
    got = ask("were vitals stable today?")  # none charted today
    assert got["status"] == "no-data"
    one_each = {**VIEWS, "observation": [r for r in OBSERVATIONS if r["ref"] not in ("Observation/hr0", "Observation/w0")]}
    got = ask("were vitals stable", one_each)
    assert got["status"] == "no-data" and "Only one Heart rate value" in got["text"]
    assert "/min on 2024-06-10 to" not in got["text"]


def test_panels_are_their_analytes_and_keep_other_specimens_out():
    bmp = ask("last BMP")
    assert {139.0, 4.2, 1.1} <= set(bmp["answer"]) and 0.0 not in bmp["answer"]  # urine glucose is not in a BMP
    assert set(ask("last lipids")["answer"]) == {101.0, 150.0}
    assert set(ask("lytes")["answer"]) == {139.0, 4.2}


def test_a_lexicon_lab_group_answers_each_member():
    assert set(ask("last CBC")["answer"]) >= {13.1, 250.0}


# 4. visits by their kind -----------------------------------------------------------------------------------------

def test_a_visit_kind_is_found_by_its_encounter_type_codes():
    got = ask("when was his last physical?")
    assert got["answer"] == ["2024-02-01T09:00:00+00:00"] and "Encounter for check up" in got["text"]
    assert ask("when was her last annual exam?")["answer"] == ["2024-02-01T09:00:00+00:00"]
    assert ask("date of last wellness visit")["answer"] == ["2024-02-01T09:00:00+00:00"]
    assert ask("how many physicals has she had?")["answer"] == [2]


def test_a_visit_named_by_its_class_words_is_the_last_visit_of_that_class():
    assert ask("when did she last see her PCP?")["answer"] == ["2024-05-01T09:00:00+00:00"]  # a PCP visit: ambulatory
    assert ask("when was her last appointment?")["answer"] == ["2024-05-01T09:00:00+00:00"]


def test_urgent_care_is_an_ambulatory_visit_type_not_an_emergency():
    views = {**VIEWS, "encounter": [*ENCOUNTERS,
                                    encounter("u1", "AMB", "Urgent care clinic (environment)", "702927004", "2023-08-01T09:00:00"),
                                    encounter("x1", "EMER", "Emergency room admission (procedure)", "50849002", "2024-01-05T09:00:00")]}
    assert ask("when was her last urgent care visit?", views)["answer"] == ["2023-08-01T09:00:00+00:00"]
    assert ask("how many urgent care visits?", views)["answer"] == [1]
    assert ask("how many ER visits?", views)["answer"] == [1]


def test_words_that_only_say_visit_are_not_compared_and_a_visit_value_is_its_day():
    got = ask("last sick visit?")  # the parser keeps "sick"; the lexicon writes "sick visit" (Encounter for symptom…)
    assert got["answer"] == ["2024-05-01T09:00:00+00:00"]
    assert got["text"] == "The most recent Acute visit was on 2024-05-01."  # not "Acute visit: None"


# 5. negatives --------------------------------------------------------------------------------------------------

def test_no_allergies_reads_as_a_clinician_writes_it():
    got = ask("any allergies?", {**VIEWS, "allergy": []})
    assert got["answer"] == [False] and got["text"] == "No allergies are recorded."


def test_a_no_known_allergy_entry_is_nkda_not_an_allergy():
    got = ask("any allergies?", {**VIEWS, "allergy": [allergy("n1", "No known drug allergies")]})
    assert got["answer"] == [False] and "No known drug allergies" in got["text"]


def test_allergies_on_record_are_listed():
    got = ask("any allergies?")
    assert got["answer"] == [True] and got["text"] == "Yes: 1 allergy recorded: Latex (substance)."


def test_a_slashed_abbreviation_is_named_as_written():
    got = ask("net I/O?")
    assert got["status"] == "no-data" and "I/O" in got["text"] and " /o " not in got["text"]


# 6. end to end on the committed example patients ----------------------------------------------------------------

SAMPLE_NOW = "2026-06-30T12:00:00Z"


def _rows(db, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    return Store(db).query(sql, params).rows


def test_on_the_sample_store_summary_pcp_and_vitals_agree_with_the_views(sample_db):
    pid = _rows(sample_db, "SELECT patient_id FROM patient WHERE name = ?", ["Linda Taylor"])[0][0]
    summary = engine_ask("brief summary of this patient", patient_id=pid, now=SAMPLE_NOW, db=sample_db)
    (last_visit,), = _rows(sample_db, "SELECT ref FROM encounter WHERE patient_id = ? AND start_time <= ? "
                                      "ORDER BY start_time DESC LIMIT 1", [pid, SAMPLE_NOW])
    assert summary.status == "answered" and "Linda Taylor" in summary.text
    assert last_visit in {e.ref for e in summary.evidence}

    pcp = engine_ask("who is her PCP?", patient_id=pid, now=SAMPLE_NOW, db=sample_db)
    (most,), = _rows(sample_db, "SELECT practitioner FROM encounter WHERE patient_id = ? AND class_code = 'AMB' "
                                "AND practitioner IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1", [pid])
    assert pcp.answer == [most]

    vitals = engine_ask("what was the last set of vitals?", patient_id=pid, now=SAMPLE_NOW, db=sample_db)
    (hr,), = _rows(sample_db, "SELECT value FROM observation WHERE patient_id = ? AND name = 'Heart rate' "
                              "AND time <= ? ORDER BY time DESC LIMIT 1", [pid, SAMPLE_NOW])
    assert vitals.status == "answered" and hr in vitals.answer and "Heart rate" in vitals.text
