"""Question frames the FHIR path reads, answered over a relational patient (OMOP CDM, MIMIC-III).

The frames are recognised by the FHIR path's own readers (the same lexicon files and parser), never by a copy:

- **event windows** ("aspirin after the stroke?", "K after the CABG?", "heparin since the PE?"): the parser's
  event-anchored window is placed by the FHIR plan's own steps (:func:`~fhirqa.agent.backends.offline.plans.
  event_window`: the condition's earliest onset, the procedure, the stay or visit) run over the patient's rows read
  as the views; the window's bounds then narrow the SQL question like any dated window. An event the record does
  not hold answers ``no-data`` and says so, never the question over all time;
- **clinical states** ("is she febrile?", "hypotensive?", "tachycardic in the last 24 h?": ``lexicon/clinical_states.json``):
  a threshold on the state's item, read in SQL, each value compared in the state's unit when the entry names one
  (MIMIC-III charts temperatures in °F: 100.4 °F is 38 °C);
- **several items in one question** ("last K and Mg?": ``lexicon/conjunctions.json``): each item asked through the
  SQL writer, the answers joined as the FHIR path joins them;
- **a result's values** ("is his K normal?", "creatinine now vs a week ago", "list his potassiums"): the FHIR plans
  of :mod:`~fhirqa.agent.backends.offline.normality_plan`, ``then_now_plan`` and ``series_plan`` over the patient's
  rows read as the observation view;
- **medication changes** and **days of therapy** ("any med changes in the last 6 months?", "was the lisinopril dose
  changed?", "how many days on vanc?"): the FHIR plans run unchanged over the ``medication_changes`` and
  ``medication_courses`` tools, whose rows are the patient's DRUG_EXPOSURE / PRESCRIPTIONS and INPUTEVENTS rows read
  as the medication view (:class:`~fhirqa.sql.patient_rows.RelationalPatientRows`);
- **several questions in one** ("pre-op check: any anticoagulants, last K and Cr?") and **abnormal results of a
  kind** ("any abnormal labs?"): each part through the SQL path; every result judged as the FHIR path judges it;
- **what happened in a window** and **PRN doses** ("o/n events", "any PRNs overnight?"): the FHIR plan of
  :mod:`~fhirqa.agent.backends.offline.events_plan` over the ``window_events`` tool and the medication rows, the
  patient's rows read as the views.

Every row these steps read is cited with its table and row key, in the same evidence list as the SQL writer's.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.timephrases import Window
from fhirqa.sql.records import Spec, SqlPatient

Final = dict[str, Any]
Call = tuple[str, dict[str, Any]]


class RowTools:
    """The FHIR path's tools over one relational patient: a tool context whose rows are the patient's domain rows read
    as the views (as of the question's ``now``), for plan steps that run unchanged here. Evidence the tools cite and
    the SQL they ran go to ``data`` (the answer's evidence and trace)."""

    def __init__(self, data: SqlPatient, person: Any) -> None:
        from fhirqa.agent.tools.base import ToolContext
        from fhirqa.sql.patient_rows import RelationalPatientRows

        self.data = data
        self.rows = RelationalPatientRows(data.con, data.schema, person, data.now)
        # names resolve as the SQL writer resolves them (codes from the database, the lexicon's other names)
        self.cited: list[Any] = []  # the evidence the last plan step cited
        self.ctx = ToolContext(patient_id=person.patient_id, now=data.now, data=self.rows, resolve=data.resolve_among)

    def drive(self, steps: Generator[Call, dict[str, Any], Any]) -> Any:
        """Run a plan step to its end: the value it returns, or the arguments of the final answer it yields."""
        from fhirqa.agent.tools.registry import execute

        try:
            call = next(steps)
            while call[0] != "final_answer":
                call = steps.send(execute(self.ctx, call[0], call[1]))
            return dict(call[1])
        except StopIteration as stop:
            return stop.value
        finally:
            self._hand_over()

    def _hand_over(self) -> None:
        self.cited = list(self.ctx.evidence.values())
        for key, evidence in self.ctx.evidence.items():
            self.data.evidence.setdefault(key, evidence)
        self.ctx.evidence.clear()
        self.data.statements.extend(self.rows.data.statements)
        self.rows.data.statements.clear()


def tools_for(data: SqlPatient, person: Any) -> RowTools | None:
    """The tools over ``data``'s patient, or None without the patient's demographics (a patient lookup)."""
    return RowTools(data, person) if person is not None and data.patient_value is not None else None


# -- event windows ------------------------------------------------------------------------------------------
def place_event(pq: ParsedQuestion, data: SqlPatient, person: Any) -> tuple[Final | None, str]:
    """Resolve the question's event-anchored window ("after the stroke", "after the CABG", "since the PE") to dates,
    in place. Returns (the final answer when the event cannot be placed: the record lacks it, else None; the words
    that say which event and date the window was read from, for the answer's text)."""
    from fhirqa.agent.backends.offline.plans import event_bounds, event_window
    from fhirqa.sql.offline_sql import final

    window = pq.window
    if window is None or window.anchor != "event" or window.event is None:
        return None, ""
    tools = tools_for(data, person)
    if tools is None:
        return None, ""
    if pq.now is None:
        pq.now = data.now
    if window.event.event == "stay":  # an inpatient stay: its class as the SQL writer reads it (OMOP 262 is one too)
        dated = _stay_dates(data, window.event)
        placed = event_bounds(pq, dated[0], dated[1]) if isinstance(dated, tuple) else dated
        event = f"{dated[2].get('name')} ({dated[2].get('tbl')}/{dated[2].get('row_id')})" if isinstance(dated, tuple) else ""
    else:
        placed = tools.drive(event_window(pq))
        named = [e for e in tools.cited if e.label]
        event = f"{named[-1].label} ({named[-1].ref})" if named else ""
    if isinstance(placed, Window):
        pq.window = placed
        return None, f" (Window: {placed.label}{', from ' + event if event else ''}.)"
    what = pq.entity or "records"
    return final([], f"No {what} {window.label}: {placed}; the question was not answered over all time.",
                 status="no-data"), ""


def _stay_dates(data: SqlPatient, anchor: Any) -> tuple[datetime, datetime | None, dict[str, Any]] | str:
    """(start, end) of the inpatient stay an anchor names ("during the last admission", "after the admission before
    last", "between the last two admissions": the end of the one before and the start of the last), or why there is
    none, with the stay row (cited). Stays are encounters of ``stay_classes`` (``lexicon/time_anchors.json``) by their class or, for a combined
    visit (OMOP "Emergency Room and Inpatient Visit"), their second class; a stay that came through the ED starts at
    its arrival there (MIMIC ``EDREGTIME``), as the SQL writer's stay windows do."""
    from fhirqa.agent.backends.offline.timephrases import anchor_words

    keys = {f"c{i}": c for i, c in enumerate(anchor_words()["stay_classes"])}
    listed = ", ".join(":" + k for k in keys)
    stays = data.select(Spec("encounter"), order="r.time ASC, r.row_id ASC", params=keys,
                        extra=f"r.time IS NOT NULL AND (r.class_code IN ({listed}) OR r.alt_class IN ({listed}))")
    if anchor.name:  # "the admission for sepsis": the stays with that diagnosis coded
        found = data.resolve("condition", anchor.name)
        if not found.matched or found.ambiguous or found.how.startswith("fuzzy"):
            return f"the record has no {anchor.name} (no such condition)"
        coded = data.select(Spec("condition", names=tuple(found.matched)), extra="r.encounter_id IS NOT NULL")
        ids = {str(r["encounter_id"]) for r in coded}
        stays = [s for s in stays if s.get("encounter_id") is not None and str(s["encounter_id"]) in ids]
        if not stays:
            return f"no inpatient stay has {anchor.name} coded"
        data.cite(next(r for r in coded if str(r["encounter_id"]) == str(stays[-1]["encounter_id"])), "name")
    need = 2 if anchor.relation == "between" or anchor.which == -2 else 1
    if len(stays) < need:
        return (f"the record holds only {len(stays)} inpatient stay" if stays
                else "the patient was never admitted (no inpatient stay)")
    if anchor.relation == "between":
        before, last = stays[-2], stays[-1]
        data.cite(before, "time")
        data.cite(last, "time")
        return before.get("end_time") or before["time"], last.get("arrival") or last["time"], last
    stay = stays[anchor.which] if anchor.which < 0 else stays[0]
    data.cite(stay, "time")
    if anchor.edge == "end" and stay.get("end_time") is None:
        return "the latest stay has no discharge yet"
    return stay.get("arrival") or stay["time"], stay.get("end_time"), stay


# -- clinical states ----------------------------------------------------------------------------------------
def clinical_state(pq: ParsedQuestion, data: SqlPatient, state: dict[str, Any],
                   compiler: Callable[[ParsedQuestion], Any]) -> Final:
    """"is she febrile?": any value of the state's item past its threshold in the window (default: the last
    ``default_hours``), the extreme value cited; each value is compared in the state's unit when the lexicon entry
    names one, and values in a unit that cannot be converted to it are left out and counted in the text."""
    from fhirqa.agent.backends.offline.clinical_state_plan import asked_threshold, state_final
    from fhirqa.agent.units import convert as _convert
    from fhirqa.sql.offline_sql import Compiler, day, final, fmt, parse_question

    asked, said = asked_threshold(pq, state, lambda text: parse_question(text, data.now))
    c: Compiler = compiler(asked)
    got = c.scoped(f"{state['item']} results")
    if not isinstance(got, Spec):
        return state_final(state, got, said)
    rows = data.select(got, extra="r.value IS NOT NULL", order="r.time ASC, r.row_id ASC")
    unit = state.get("unit")
    read: list[tuple[float, dict[str, Any]]] = []
    skipped: list[str] = []
    for row in rows:
        value = float(row["value"])
        if unit:
            converted = _convert(value, row.get("unit"), unit) if row.get("unit") else None
            if converted is None:
                skipped.append(str(row.get("unit") or "no unit"))
                continue
            value = converted
        read.append((value, row))
    window = f" {asked.window.label}" if asked.window else ""
    left_out = f" ({len(skipped)} value(s) in {', '.join(sorted(set(skipped)))} not comparable)" if skipped else ""
    if not read:
        return state_final(state, final([], f"No {state['item']} values{window}{left_out}.", status="no-data"), said)
    op, limit = state["op"], float(state["value"])
    test = {">": lambda v: v > limit, ">=": lambda v: v >= limit, "<": lambda v: v < limit, "<=": lambda v: v <= limit}[op]
    hits = [(v, r) for v, r in read if test(v)]
    pick = max if op.startswith(">") else min
    value, row = pick(hits or read, key=lambda vr: vr[0])
    data.cite(row)
    shown = fmt(row["value"], row.get("unit"))
    if unit and row.get("unit") and row["value"] != value:
        shown += f" ({fmt(value, unit)})"
    word = "the extreme was" if hits else f"the {'highest' if op.startswith('>') else 'lowest'} was"
    head = f"Yes: {len(hits)} value(s) {op} {fmt(limit)}{window}" if hits else f"No: none {op} {fmt(limit)}{window}"
    text = f"{head}; {word} {row.get('name')} {shown} on {day(row.get('time'))}{left_out}."
    return state_final(state, final([bool(hits)], text), said)


# -- several items --------------------------------------------------------------------------------------------
def several_items(pq: ParsedQuestion, data: SqlPatient, answer: Callable[[ParsedQuestion], Final]) -> Final | None:
    """"last K and Mg?": each item's question through the SQL writer, the answers joined as the FHIR path joins them;
    None when the question names one item."""
    from fhirqa.agent.backends.offline.conjunction_plan import item_parts, joined_answer
    from fhirqa.sql.offline_sql import parse_question

    parts = item_parts(pq)
    if parts is None:
        return None
    return joined_answer(parts, [answer(parse_question(q, data.now)) for q in parts.questions])


def checklist(pq: ParsedQuestion, data: SqlPatient, answer: Callable[[ParsedQuestion], Final]) -> Final | None:
    """"pre-op check: any anticoagulants, last K and Cr, allergies?": each part asked alone through the SQL path, the
    answers joined as the FHIR path joins them; None when the question is one question."""
    from fhirqa.agent.backends.offline.checklist_plan import checklist_parts, joined
    from fhirqa.sql.offline_sql import parse_question

    parts = checklist_parts(pq)
    if parts is None:
        return None
    return joined(parts, [answer(parse_question(part + "?", data.now)) for part in parts])


# -- medications over time ------------------------------------------------------------------------------------
def medication_frame(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Final | None:
    """Medication changes ("any med changes in the last 6 months?", "was the lisinopril dose changed?") and days of
    therapy ("how many days on vanc?") by the FHIR plans over the patient's medication rows; None for other
    questions."""
    from fhirqa.agent.backends.offline.med_changes_plan import changes_asked, plan_medication_changes
    from fhirqa.agent.backends.offline.therapy_days_plan import plan_therapy_days, therapy_asked

    therapy = therapy_asked(pq)
    changes = changes_asked(pq) if therapy is None else None
    if therapy is None and changes is None:
        return None
    return _drive(pq, data, person, lambda: plan_therapy_days(pq, therapy) if therapy is not None
                  else plan_medication_changes(pq, *changes))  # type: ignore[misc]


# -- events in a window, PRN doses --------------------------------------------------------------------------------
def events_frame(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Final | None:
    """"o/n events", "what happened overnight?", "any PRNs overnight?": the FHIR plans over the patient's rows (the
    window already placed by the caller); None for other questions."""
    from fhirqa.agent.backends.offline.events_plan import events_asked, plan_events, plan_prn, prn_asked

    events = events_asked(pq)
    drug = prn_asked(pq) if events is None else None
    if events is None and drug is None:
        return None
    return _drive(pq, data, person, lambda: plan_events(pq) if events is not None else plan_prn(pq, drug or ""))


# -- a drug's amount and regimen, a result's direction now --------------------------------------------------------
def clinician_frame(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Final | None:
    """"how much vanc has he gotten so far?", "vanc dosing?", "is his creatinine rising?": the FHIR frames over the
    patient's rows, in the FHIR table's order; None when none of them reads the question (or the drug or result is
    not on file: the SQL reading goes on)."""
    from fhirqa.agent.backends.offline.direction_plan import direction_question, plan_direction
    from fhirqa.agent.backends.offline.dose_tally_plan import plan_tally, tally_asked
    from fhirqa.agent.backends.offline.regimen_plan import plan_regimen, regimen_asked

    return _first_frame(pq, data, person, ((direction_question, plan_direction), (tally_asked, plan_tally),
                                           (regimen_asked, plan_regimen)))


def stay_field_frame(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Final | None:
    """"reason for admission", "why was he admitted?", "admitting dx?": what the stay's own row says (MIMIC-III
    ``admissions.diagnosis``), by the FHIR visit plan over the patient's rows; None for other questions. Read
    before the stay becomes a window, as the FHIR path does."""
    from fhirqa.agent.backends.offline.visit_plan import plan_visit, visit_question

    asked = visit_question(pq)
    if asked is None or asked.kind != "field":
        return None
    return _drive(pq, data, person, partial(plan_visit, replace(pq), asked))


Detector = Callable[[ParsedQuestion], Any]
Planner = Callable[[ParsedQuestion, Any], Any]


def _first_frame(pq: ParsedQuestion, data: SqlPatient, person: Any,
                 frames: tuple[tuple[Detector, Planner], ...]) -> Final | None:
    """The first of ``frames`` (detector, plan), in order, that reads the question and answers it over the patient's
    rows; None when none does (a plan that passes lets the next one try)."""
    if pq.now is None:
        pq.now = data.now
    for detect, plan in frames:
        found = detect(pq)
        if found is None:
            continue
        result = _drive(pq, data, person, partial(plan, replace(pq), found))  # a copy: plans narrow what they read
        if result is not None:
            return result
    return None


def _drive(pq: ParsedQuestion, data: SqlPatient, person: Any, steps: Callable[[], Any]) -> Final | None:
    """Run the FHIR plan ``steps()`` makes over the patient's rows (at the database's now when the question names
    none); its final answer, or None when the patient's rows cannot be read as the views."""
    tools = tools_for(data, person)
    if tools is None:
        return None
    if pq.now is None:
        pq.now = data.now
    result = tools.drive(steps())
    return result if isinstance(result, dict) else None


# -- a result's values ------------------------------------------------------------------------------------------
def result_frame(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Final | None:
    """Whether a result is normal, high or low, the latest against a time back, a listed run of values: the FHIR
    plans over the patient's rows; None for other questions (or a plan that passes: the item is not a result)."""

    from fhirqa.agent.backends.offline.abnormal_plan import abnormal_asked, plan_abnormal
    from fhirqa.agent.backends.offline.normality_plan import normality_asked, plan_normality
    from fhirqa.agent.backends.offline.series_plan import plan_series, series_asked
    from fhirqa.agent.backends.offline.then_now_plan import plan_then_now, then_now_asked

    return _first_frame(pq, data, person, ((abnormal_asked, plan_abnormal), (normality_asked, plan_normality),
                                           (then_now_asked, plan_then_now), (series_asked, plan_series)))
