"""Ward-style shorthand end to end through the offline backend, over hand-made rows (no store needed).

Each test names a mechanism, not a test question: counts framed as "total …", yes/no "… on her history?",
drug names cut short or given by brand, word forms of procedures, how long a condition has lasted, complete
list answers, and two-digit years.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.agent.composer import compose
from fhirqa.agent.resolver import ConceptResolver, stem
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext

from .test_tools_helpers import FakeRows, call, make_ctx, med, t

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def condition(cid: str, name: str, onset: str, abatement: str | None = None, status: str = "active") -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Condition/{cid}", "name": name, "code": cid, "code_system": "http://snomed.info/sct",
            "clinical_status": status, "verification_status": "confirmed", "category": "encounter-diagnosis",
            "severity": None, "onset_time": t(onset), "abatement_time": t(abatement) if abatement else None,
            "recorded_time": t(onset), "encounter_ref": None}


def procedure(pid: str, name: str, when: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Procedure/{pid}", "name": name, "code": pid, "code_system": "http://snomed.info/sct",
            "status": "completed", "category": None, "start_time": t(when), "end_time": t(when), "reason_name": None,
            "reason_code": None, "reason_ref": None, "body_site": None, "outcome": None, "encounter_ref": None}


def vaccine(iid: str, name: str, when: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Immunization/{iid}", "name": name, "code": "140", "code_system": "http://hl7.org/fhir/sid/cvx",
            "status": "completed", "time": t(when), "occurrence_string": None, "primary_source": True, "lot_number": None,
            "dose_quantity": None, "dose_unit": None, "encounter_ref": None}


def rx(mid: str, name: str, when: str, status: str = "completed") -> dict[str, Any]:
    return med(mid, name, "request", when, status=status)


CONDITIONS = [
    condition("c1", "Hyperlipidemia", "2001-03-10T10:00:00"),
    condition("c2", "Body mass index 30+ - obesity (finding)", "2023-11-02T10:00:00"),
    condition("c3", "Acute bronchitis (disorder)", "2020-01-05T10:00:00", abatement="2020-01-20T10:00:00", status="resolved"),
] + [condition(f"s{i}", f"Social finding number {i} (finding)", f"2010-0{i}-01T10:00:00") for i in range(1, 10)]
PROCEDURES = [procedure("p1", "Suture open wound", "2018-03-27T15:33:07"),
              procedure("p2", "Medication Reconciliation (procedure)", "2015-02-01T10:00:00"),
              procedure("p3", "Medication Reconciliation (procedure)", "2019-02-01T10:00:00")]
IMMUNIZATIONS = [vaccine("i1", "Influenza, seasonal, injectable, preservative free", "2019-10-01T10:00:00"),
                 vaccine("i2", "Influenza, seasonal, injectable, preservative free", "2021-10-01T10:00:00")]
MEDICATIONS = [rx("r1", "Simvastatin 20 MG Oral Tablet", "1993-11-01T10:00:00"),
               rx("r2", "Simvastatin 20 MG Oral Tablet", "2018-05-01T10:00:00"),
               rx("r3", "Naproxen sodium 220 MG Oral Tablet", "2006-05-13T18:37:35"),
               rx("r4", "Fexofenadine hydrochloride 30 MG Oral Tablet", "2020-12-27T10:00:00", status="active"),
               rx("r5", "Vitamin B12 5 MG/ML Injectable Solution", "2019-06-29T10:00:00", status="active"),
               rx("r6", "Metformin hydrochloride 500 MG Oral Tablet", "2023-01-01T10:00:00", status="active")]
VIEWS = {"condition": CONDITIONS, "procedure": PROCEDURES, "immunization": IMMUNIZATIONS, "medication": MEDICATIONS}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The offline backend's final answer over the fake rows, with the real concept resolver and lexicon."""
    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows(views or VIEWS), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# 1. counts ------------------------------------------------------------------------------------------------

def test_total_before_a_kind_of_record_is_a_count():
    assert ask("total Rx since Aug 2017?")["answer"] == [4]  # r2 (2018), r4, r5, r6
    assert ask("total influenza vaccines given during 2019?")["answer"] == [1]
    assert ask("total meds prescribed past 10 yrs?")["answer"] == [4]


def test_a_count_with_no_matching_records_is_zero_not_no_data():
    got = ask("total Aleve Rx last 10y?")  # naproxen only in 2006
    assert got["status"] == "answered" and got["answer"] == [0]


def test_a_total_of_records_that_carry_no_value_is_their_count():
    got = ask("total medication reconciliation since November 23, 2014?")
    assert got["status"] == "answered" and got["answer"] == [2]


def test_total_of_a_drug_given_on_a_day_is_still_a_sum_of_doses():
    views = {"medication": [med("a1", "Vancomycin 1250 MG Injection", "administration", "2024-03-01T08:00:00", dose=1250),
                            med("a2", "Vancomycin 1250 MG Injection", "administration", "2024-03-01T16:00:00", dose=1250)]}
    assert ask("I need the total vancomycin administered on 2024-03-01.", views)["answer"] == [2500]


# 2. yes/no on the history ------------------------------------------------------------------------------------

def test_x_on_her_history_is_a_yes_no_question():
    assert ask("obesity on her history?")["answer"] == [True]
    negative = ask("end stage renal disease on his history?")
    assert negative["status"] == "answered" and negative["answer"] == [False]


def test_a_value_asked_on_file_stays_a_value_question():
    from fhirqa.agent.backends.offline.parser import parse

    assert parse("Earliest diastolic blood pressure on file", NOW).intent == "value"
    assert parse("CKD in his hx", NOW).intent == "exists"


# 3. drug names: cut short, by brand, plain --------------------------------------------------------------------

def test_an_unambiguous_truncated_drug_name_means_the_drug_the_patient_has():
    assert ask("count times simva was prescribed on record")["answer"] == [2]
    resolve = ConceptResolver()
    names = ["Metformin hydrochloride 500 MG Oral Tablet", "Simvastatin 20 MG Oral Tablet"]
    assert resolve("medication", "metfor", names).matched == ["Metformin hydrochloride 500 MG Oral Tablet"]


def test_a_truncation_that_begins_several_drugs_of_the_patient_matches_none():
    names = ["Metoprolol succinate 100 MG", "Metolazone 5 MG Oral Tablet", "Metformin hydrochloride 500 MG Oral Tablet"]
    assert not ConceptResolver()("medication", "meto", names).matched  # metoprolol or metolazone: say neither
    assert ConceptResolver()("medication", "metop", names).matched == ["Metoprolol succinate 100 MG"]
    assert ConceptResolver()("medication", "metf", names).matched == ["Metformin hydrochloride 500 MG Oral Tablet"]
    assert not ConceptResolver()("medication", "met", names).matched  # too short to be read as a name


def test_still_active_finds_a_drug_named_by_brand_or_plain_name_without_a_medication_word():
    assert ask("Allegra still active?")["answer"] == [True]
    assert ask("vitamin B12 still active?")["answer"] == [True]
    assert ask("hyperlipidemia still active?")["answer"] == [True]
    assert ask("bronchitis still active?")["answer"] == [False]


# 4. procedure word forms ---------------------------------------------------------------------------------------

def test_a_procedure_word_matches_its_other_forms():
    assert stem("suturing") == stem("suture") == stem("sutured")
    assert stem("vaccination") == stem("vaccine")
    got = ask("date of last suturing")
    assert got["answer"][0].startswith("2018-03-27")


# 5. duration of a condition -----------------------------------------------------------------------------------

def test_how_many_years_has_she_had_x_is_the_time_since_its_first_onset():
    assert ask("how many yrs has she had HLD?")["answer"] == [23]
    assert ask("how many yrs has she had obesity?")["answer"] == [0]
    assert ask("how many mos has she had obesity?")["answer"] == [7]
    assert ask("Could you tell me how long, in years, this patient has had hyperlipidemia?")["answer"] == [23]



def test_time_since_a_drug_was_last_ordered_is_about_the_drug_not_a_value_after_it():
    got = ask("Time since Allegra last ordered, in d")  # ordered 2020-12-27; now 2024-06-15
    assert got["answer"] == [1266]


# 6. complete lists ----------------------------------------------------------------------------------------------

def test_an_active_problem_list_holds_every_item_not_a_preview():
    got = ask("active problems?")
    assert len(got["answer"]) == 11 and "Acute bronchitis (disorder)" not in got["answer"]
    assert all(item in got["text"] for item in got["answer"])  # the plan reads the whole result: words name them all


def test_final_answer_list_from_adds_every_distinct_value_of_a_set():
    ctx = make_ctx()
    handle = call(ctx, "get_resources", view="medication")["handle"]
    result = call(ctx, "final_answer", answer=[], text="all of them", list_from=handle, list_field="medication_name")
    assert result["ok"] and ctx.answer is not None
    assert sorted(ctx.answer["answer"]) == ["Metformin 500 MG Oral Tablet", "Vancomycin 1250 MG Injection"]
    refused = call(make_ctx(), "final_answer", answer=[], text="x", list_field="name")
    assert refused["ok"] is False


# 7. two-digit years -------------------------------------------------------------------------------------------

def test_a_two_digit_year_in_a_slash_date_is_the_last_century_when_this_ones_is_still_ahead():
    window = find_window("from 10/17/93 to 2014-01-14", datetime(2022, 5, 1, tzinfo=UTC)).window
    assert window.start.date().isoformat() == "1993-10-17"
    window = find_window("since 3/4/19", datetime(2022, 5, 1, tzinfo=UTC)).window
    assert window.start.date().isoformat() == "2019-03-04"
    assert ask("total prescriptions from 10/17/93 to 2014-01-14?")["answer"] == [2]  # 1993 and 2006
