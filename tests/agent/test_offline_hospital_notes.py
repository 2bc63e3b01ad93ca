"""Offline plans and note extraction for hospital-note questions: which note a question names, and which number.

"on arrival" is "on admission"; a year-less day before a note kind ("the 10/7 DC summary") names that day;
"Tmax" and "T" in one vitals line are different numbers; a drug with a measurement noun ("vanc trough") is a
value; "BP at ED discharge" is read from that day's ED note; "per the H&P of the <month> admission" is that
stay's H&P; a "how many days was the LOS" question reads the note, not a count of encounters.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.backends.offline.parser import parse
from fhirqa.agent.backends.offline.plans import note_value, note_visit, plan
from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.notes.extract import answer_from_notes, parse_target
from fhirqa.notes.index import Hit
from fhirqa.notes.sources import Note

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)

PROGRESS = ("HOSPITALIST PROGRESS NOTE - HD#3\nDate: 5/10/2024 09:00\nS: Afebrile overnight.\n"
            "O: Tmax 38.9 (24h). Vitals (08:00): BP 121/70, HR 84, RR 18, T 37.0, SpO2 96% RA.\n"
            "Labs this AM: Na 136, K 4.1, Digoxin level 1.4.\nInpatient meds: digoxin 0.125 mg PO daily.")
ED = ("ED PROVIDER NOTE\nDate: 5/12/2024 03:00\nTriage vitals (01:10): BP 162/95, HR 110.\n"
      "Disposition: discharged home in stable condition at 05:30, BP 138/84, HR 90.")


def _hits(text: str, when: datetime, note_type: str) -> list[Hit]:
    return [Hit(text=text, ref="DocumentReference/n", note_id="n", chunk_id="n", date=str(when.date()), time=when,
                note_type=note_type, section="", score=1.0, patient_id="p1")]


def test_on_arrival_is_on_admission():
    assert parse("pulse on arrival?", NOW).window.anchor == "admission"
    assert parse("lactate upon arrival?", NOW).position == "first"


def test_a_year_less_day_before_a_note_kind_names_that_day_but_a_fraction_does_not():
    match = find_window("cr at discharge per the 10/7 discharge summary?", NOW)
    assert match is not None and match.window.start.date().isoformat() == "2023-10-07"
    assert find_window("in the 5/12 ed note", NOW).window.start.date().isoformat() == "2024-05-12"
    assert find_window("take the 1/2 tab", NOW) is None


def test_tmax_and_the_vitals_t_are_different_numbers():
    when = datetime(2024, 5, 10, 14, tzinfo=UTC)
    hits = _hits(PROGRESS, when, "Progress note")
    assert answer_from_notes("Tmax in the 5/10/2024 progress note?", hits).value == 38.9
    assert answer_from_notes("temp in the 5/10/2024 progress note?", hits).value == 37.0
    # a summary name asked from a named note is read there, not computed from the charted temperatures
    assert note_value(parse("Tmax in the 5/10/2024 progress note?", NOW)) is not None


def test_a_drug_with_a_measurement_noun_is_a_value_read_by_its_other_names():
    target = parse_target("vancomycin trough in the progress note?")
    assert target.kind == "value" and "vanc trough" in target.names
    when = datetime(2024, 5, 10, 14, tzinfo=UTC)
    assert answer_from_notes("digoxin level in the 5/10/2024 progress note?", _hits(PROGRESS, when, "Progress note")
                             ).value == 1.4
    args = note_value(parse("vancomycin trough in the 2024-05-10 progress note?", NOW))
    assert args is not None and args["start"].startswith("2024-05-10")  # that note's value, or no-data


def test_a_vital_at_ed_discharge_is_read_from_that_days_ed_note():
    args = note_value(parse("BP at ED discharge on 5/12?", NOW))
    assert args is not None and args["start"].startswith("2024-05-12")
    when = datetime(2024, 5, 12, 8, tzinfo=UTC)
    assert answer_from_notes("BP at ED discharge on 5/12?", _hits(ED, when, "Emergency department Note")).value \
        == "138/84"


def test_a_value_per_the_h_and_p_of_a_months_admission_is_that_stays_first_h_and_p():
    args = note_value(parse("resp rate on admission per the H&P of the May 2024 admission?", NOW))
    assert args is not None and args["which"] == "first" and args["start"].startswith("2024-05-01")
    # a progress note is not one per stay: a month does not say which
    assert note_value(parse("K per the progress note of the May 2024 admission?", NOW)) is None


def test_find_in_notes_takes_the_stays_h_and_p_among_that_months_notes():
    from fhirqa.agent.tools.base import ToolContext
    from fhirqa.agent.tools.note_finding import find_in_notes

    ed = Note("DocumentReference/ed", "p1", "DocumentReference/ed", "ED NOTE\nTriage vitals: RR 26, HR 120.",
              datetime(2024, 5, 3, 1, tzinfo=UTC), "Emergency department Note")
    hp = Note("DocumentReference/hp", "p1", "DocumentReference/hp", "H&P\nVitals on arrival: RR 22, HR 112.",
              datetime(2024, 5, 3, 4, tzinfo=UTC), "History and physical note")

    class Notes:
        def notes(self, patient_id):
            return [ed, hp]

        def search(self, *args, **kwargs):
            return []

    ctx = ToolContext.__new__(ToolContext)
    ctx.notes, ctx.patient_id, ctx.now, ctx.cite = Notes(), "p1", NOW, lambda evidence: None
    found = find_in_notes(ctx, "resp rate on admission per the H&P of the May 2024 admission?",
                          start="2024-05-01T00:00:00+00:00", end="2024-05-31T23:59:59+00:00", which="first")
    assert found["value"] == 22 and found["ref"] == "DocumentReference/hp"


def test_a_how_many_days_los_question_reads_the_note_not_a_count_of_stays():
    visit = note_visit(parse("How many days was the length of stay in the 5/20/2024 DC summary?", NOW))
    assert visit is not None and visit[2] == "length of stay"
    assert next(plan(parse("How many days was the length of stay in the 5/20/2024 DC summary?", NOW)))[0] \
        == "find_in_notes"
    # without a note anchor it stays a question for the encounter tables
    assert note_visit(parse("how many days was her last hospitalization?", NOW)) is None
