"""Offline plans: questions about one visit's note go to that note first, with the visit as the anchor."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.plans import plan

NOW = datetime(2023, 1, 1, 12, tzinfo=UTC)


def _first_call(question: str):
    return next(plan(parse(question, NOW)))


def _answer(question: str, found: dict):
    steps = plan(parse(question, NOW))
    next(steps)
    return steps.send(found)


def test_a_section_question_at_a_named_visit_reads_that_days_note():
    name, args = _first_call("what did she c/o at the 11/18/2008 visit?")
    assert name == "find_in_notes" and args["start"].startswith("2008-11-18") and args["item"] == ""
    name, args = _first_call("what insurance did she have in the note from 10/06/1971?")
    assert args["start"].startswith("1971-10-06") and args["end"].startswith("1971-10-06")  # "from" a note's day


def test_the_latest_note_and_an_ed_visit_of_a_year_are_anchors():
    assert _first_call("NKDA in the latest note?")[1]["which"] == "latest"
    args = _first_call("chief complaint at the ED visit in 1964")[1]
    assert args["encounter_class"] == "EMER" and args["start"].startswith("1964-01-01")


def test_a_section_reading_becomes_the_answer_list_value_or_yes_no():
    found = {"ok": True, "found": True, "kind": "section", "field": "chief complaint", "answer_kind": "list",
             "value": ["Cough"], "quote": "Cough", "ref": "DocumentReference/x", "time": "1985-07-15T10:00:00+00:00"}
    assert _answer("CC in the 07/15/1985 note?", found) == ("final_answer", {
        "answer": ["Cough"], "text": 'Cough, per the note of 1985-07-15 (chief complaint): "Cough"', "status": "answered"})
    no = {**found, "field": "mention", "answer_kind": "yes_no", "value": [False], "quote": ""}
    assert _answer("was hospice mentioned in the 9/18/1963 note?", no)[1]["answer"] == [False]


def test_a_plan_item_not_in_the_note_is_checked_in_the_records_of_that_day():
    found = {"ok": True, "found": True, "kind": "section", "field": "plan", "answer_kind": "yes_no", "value": [False],
             "quote": "", "structured_too": True}
    name, args = _answer("influenza vaccine on 1/22/2019?", found)
    assert name == "get_resources" and args["view"] == "immunization"


def test_questions_without_a_note_anchor_or_section_keep_their_table_plans():
    assert _first_call("what was her last potassium?")[0] == "get_resources"
    assert _first_call("how much heparin was given on Nov 29?")[0] != "find_in_notes"
    assert _first_call("Heparin doses given 9/12/2025?")[0] == "get_resources"  # a count, not a plan item
    assert _first_call("K at the 10/08/2014 visit?")[0] == "get_resources"  # a value, not a mention


def test_a_generic_any_x_on_a_day_asks_the_tables_first_then_that_days_note():
    steps = plan(parse("any chest pressure on 09/22/2020?", NOW))
    call = next(steps)
    while call[0] != "find_in_notes" or "item" not in call[1]:
        assert call[0] != "final_answer"
        call = steps.send({"ok": True, "count": 0, "candidates": [], "found": False})
    assert call[1]["item"] == "chest pressure" and call[1]["start"].startswith("2020-09-22")


def test_a_lab_or_vital_named_at_a_dated_note_is_that_notes_value_or_no_data():
    name, args = _first_call("hemoglobin per the progress note from 10/15/2022")
    assert name == "find_in_notes" and args["start"].startswith("2022-10-15") and "item" not in args
    assert _first_call("Na on admission per the 2022-11-08 H&P?")[0] == "find_in_notes"
    found = {"ok": True, "found": True, "anchored": True, "kind": "value", "value": 14.6, "unit": None,
             "quote": "Hgb 14.6", "ref": "DocumentReference/pn", "time": "2022-10-15T16:00:00+00:00",
             "note_type": "Progress note"}
    assert _answer("hemoglobin per the progress note from 10/15/2022", found)[1]["answer"] == [14.6]
    absent = {"ok": True, "found": False, "anchored": True, "note": "that day's note does not state it"}
    assert _answer("BNP in the 2022-10-15 progress note?", absent)[1]["status"] == "no-data"
    # yes/no and mention questions about a note keep their readings
    assert "item" in _first_call("Was lactate mentioned in the 2022-10-15 progress note?")[1]


def test_find_in_notes_reads_a_value_from_the_whole_dated_note():
    from fhirqa.agent.tools.base import ToolContext
    from fhirqa.agent.tools.note_finding import find_in_notes
    from fhirqa.notes.sources import Note

    text = ("HOSPITALIST PROGRESS NOTE\nDate: 10/15/2022 10:40\nS: feels better\n"
            "O: T 37.1, HR 64, BP 113/86, SpO2 94% RA\nLabs: WBC 8.6, Hgb 14.6, K 5.3\nA/P: continue ceftriaxone")
    note = Note("DocumentReference/pn", "p1", "DocumentReference/pn", text, datetime(2022, 10, 15, 16, tzinfo=UTC),
                "Progress note")

    class Notes:
        def notes(self, patient_id):
            return [note]

        def search(self, *args, **kwargs):
            return []

    ctx = ToolContext.__new__(ToolContext)
    ctx.notes, ctx.patient_id, ctx.now, ctx.cite = Notes(), "p1", NOW, lambda evidence: None
    day = {"start": "2022-10-15T00:00:00+00:00", "end": "2022-10-15T23:59:59+00:00"}
    assert find_in_notes(ctx, "hemoglobin per the progress note from 10/15", **day)["value"] == 14.6
    assert find_in_notes(ctx, "HR in the 10/15 progress note?", **day)["value"] == 64
    missing = find_in_notes(ctx, "BNP in the 10/15 progress note?", **day)
    assert missing["found"] is False and missing["anchored"] is True


def test_a_dose_asked_at_a_dated_note_is_the_strength_as_that_note_writes_it():
    from fhirqa.agent.tools.base import ToolContext
    from fhirqa.agent.tools.note_finding import find_in_notes
    from fhirqa.notes.sources import Note

    text = ("ADMISSION HISTORY AND PHYSICAL\nDate: 1/4/2022 17:39\nA/P:\n1. CAP - Start vancomycin 1,000 mg IV q12h\n"
            "2. VTE ppx: heparin 5,000 units SC q8h")
    note = Note("DocumentReference/hp", "p1", "DocumentReference/hp", text, datetime(2022, 1, 4, 23, 39, tzinfo=UTC),
                "History and physical")

    class Notes:
        def notes(self, patient_id):
            return [note]

        def search(self, *args, **kwargs):
            return []

    assert _first_call("heparin dose for VTE ppx in the Jan 4, 2022 H&P?")[0] == "find_in_notes"
    ctx = ToolContext.__new__(ToolContext)
    ctx.notes, ctx.patient_id, ctx.now, ctx.cite = Notes(), "p1", NOW, lambda evidence: None
    day = {"start": "2022-01-04T00:00:00+00:00", "end": "2022-01-04T23:59:59+00:00"}
    assert find_in_notes(ctx, "heparin dose for VTE ppx in the Jan 4, 2022 H&P?", **day)["value"] == "5,000 units"
    assert find_in_notes(ctx, "What vanc dose was started per the Jan 4, 2022 H&P?", **day)["value"] == "1,000 mg"


def test_a_note_kind_from_a_day_anchors_that_day_so_an_absent_term_is_no():
    name, args = _first_call("BNP documented in the H&P from 2022-10-15?")
    assert name == "find_in_notes" and args["start"].startswith("2022-10-15") and args["end"].startswith("2022-10-15")
    args = _first_call("acetaminophen documented in the discharge summary from 10/15/2022?")[1]
    assert args["start"].startswith("2022-10-15") and args["end"].startswith("2022-10-15")
    no = {"ok": True, "found": True, "kind": "section", "field": "mention", "answer_kind": "yes_no", "value": [False],
          "quote": "", "ref": "DocumentReference/hp", "time": "2022-10-15T23:00:00+00:00"}
    assert _answer("BNP documented in the H&P from 2022-10-15?", no)[1]["answer"] == [False]
