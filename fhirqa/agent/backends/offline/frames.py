"""The question frames the offline plan tries before its general plans, in order.

A frame reads one kind of question ("is she febrile?", "abx?", "list her weights since 2018") and answers it. Each
is a ``Frame(name, detect, answer, may_pass)``: ``detect`` returns what it read in the question (None: not this
frame's question) and ``answer`` is the plan for it. A frame that ``may_pass`` answers only when its plan returns a
true value, and otherwise passes the question on, having looked at the record (a run of values asked of something
that is not a result); a frame may also only rewrite the question and pass it on (what a drug is taken for becomes
its class).

The order is this table's: a more specific reading comes before a more general one that would also take the
question (a repletion before a drug-class list, a dose tally before a class list, a comparison with a time back
before a listed series), and the consistency check, which reads a note against the tables, comes first. Adding a
frame is one module with its detector and plan, and one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from fhirqa.agent.backends.offline import plans
from fhirqa.agent.backends.offline.abnormal_plan import abnormal_asked, plan_abnormal
from fhirqa.agent.backends.offline.checklist_plan import checklist_parts, plan_checklist
from fhirqa.agent.backends.offline.clinical_state_plan import plan_clinical_states, states_asked
from fhirqa.agent.backends.offline.coded_state_plan import plan_state, state_question
from fhirqa.agent.backends.offline.conjunction_plan import item_parts, plan_parts
from fhirqa.agent.backends.offline.consistency_plan import asks_consistency, plan_consistency
from fhirqa.agent.backends.offline.control_plan import control_asked, plan_control
from fhirqa.agent.backends.offline.culture_plan import culture_question, plan_cultures
from fhirqa.agent.backends.offline.direction_plan import direction_question, plan_direction
from fhirqa.agent.backends.offline.documented_item_plan import documented_item, plan_documented
from fhirqa.agent.backends.offline.dose_status_plan import not_given_question, plan_not_given
from fhirqa.agent.backends.offline.dose_tally_plan import plan_tally, tally_asked
from fhirqa.agent.backends.offline.drug_class_plan import class_asked, plan_drug_class
from fhirqa.agent.backends.offline.due_plan import due_question, plan_due
from fhirqa.agent.backends.offline.duplicate_plan import duplicate_asked, plan_duplicates
from fhirqa.agent.backends.offline.events_plan import events_asked, plan_events, plan_prn, prn_asked
from fhirqa.agent.backends.offline.given_list_plan import given_list_asked, plan_given_list
from fhirqa.agent.backends.offline.growth_plan import growth_question, plan_growth
from fhirqa.agent.backends.offline.indication_plan import indication_asked, plan_indication
from fhirqa.agent.backends.offline.med_changes_plan import changes_asked, plan_medication_changes
from fhirqa.agent.backends.offline.normality_plan import normality_asked, plan_normality
from fhirqa.agent.backends.offline.note_kind_plan import note_kind_question, plan_note_kind
from fhirqa.agent.backends.offline.note_list_plan import notes_asked, plan_note_list
from fhirqa.agent.backends.offline.overview_plan import overview_asked, plan_overview
from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.purpose_plan import ask_as_class, purpose_class
from fhirqa.agent.backends.offline.records_plan import plan_records
from fhirqa.agent.backends.offline.records_plan import route as record_route
from fhirqa.agent.backends.offline.regimen_plan import plan_regimen, regimen_asked
from fhirqa.agent.backends.offline.repletion_plan import plan_repletion, repletion_question
from fhirqa.agent.backends.offline.series_plan import plan_series, series_asked
from fhirqa.agent.backends.offline.summary_plan import (
    any_records_view,
    named_group,
    plan_any_records,
    plan_each_analyte,
    plan_snapshot,
    snapshot_kind,
)
from fhirqa.agent.backends.offline.then_now_plan import plan_then_now, then_now_asked
from fhirqa.agent.backends.offline.therapy_days_plan import plan_therapy_days, therapy_asked
from fhirqa.agent.backends.offline.visit_plan import plan_visit, visit_question

Call = tuple[str, dict[str, Any]]
Answer = Generator[Call, dict[str, Any], bool | None]


@dataclass(frozen=True)
class Frame:
    """One kind of question: how to read it, how to answer it (see the module docstring)."""

    name: str
    detect: Callable[[ParsedQuestion], Any]
    answer: Callable[[ParsedQuestion, Any], Answer]
    may_pass: bool = False  # the plan's result says whether it answered (else every run of it answers)


def _rewrite(change: Callable[[ParsedQuestion, Any], None]) -> Callable[[ParsedQuestion, Any], Answer]:
    """A frame that only rewrites the question (``change``) and passes it on."""
    def answer(pq: ParsedQuestion, found: Any) -> Answer:
        change(pq, found)
        return False
        yield  # a plan: a generator, which this one never needs to be

    return answer


def _always(pq: ParsedQuestion) -> bool:
    return True


def _consistency(pq: ParsedQuestion) -> bool | None:
    return True if asks_consistency(pq.text) else None


def _set_group(pq: ParsedQuestion, group: str) -> None:
    pq.entity = group


def _routed(pq: ParsedQuestion) -> Any:
    """Records whose parts are rows (care plans, goals, imaging) the question routes to, unless a visit's note is
    asked about ("was imaging mentioned in the Jan 7 note?"); "NKDA?" is a yes/no about the allergy list."""
    if pq.intent == "active_list" and pq.aggregate == "absent":
        return None
    routed = record_route(pq)
    if routed is not None and not routed.over_notes and (plans.note_visit(pq) is not None or plans.note_value(pq) is not None):
        return None  # a visit's note is asked about; a coded fact of the visit (its reason, who saw) is not
    return routed


FRAMES: tuple[Frame, ...] = (
    # "does the note's K match the labs?": the note against the record
    Frame("consistency", _consistency, lambda pq, _: plan_consistency(pq)),
    # "pre-op check: any anticoagulants, last K and Cr, allergies?": several questions, each answered as if alone
    Frame("checklist", checklist_parts, plan_checklist),
    # "summarize her notes", "notes since Monday", "who wrote the last note?": the notes as documents
    Frame("notes as documents", notes_asked, plan_note_list),
    # "same med on the active list twice?", "duplicate therapy?": active orders sharing an ingredient
    Frame("duplicate therapy", duplicate_asked, plan_duplicates),
    # "what meds did he get today?", "which drugs has she received today": the doses given in the window, none named
    Frame("given in a window", given_list_asked, plan_given_list),
    # "o/n events", "what happened overnight?", "anything new since 7a?": every kind of event in the window
    Frame("events in a window", events_asked, plan_events),
    # "any abnormal labs?", "were her last labs normal?": every result of a kind judged, none named
    Frame("abnormal results", abnormal_asked, plan_abnormal),
    # "any PRNs overnight?", "how many PRN tylenol doses since admit?": the doses given as needed
    Frame("PRN doses", prn_asked, plan_prn),
    # "summarize her diabetes management", "how is his HTN doing?": the questions a clinician asks in turn
    Frame("condition overview", overview_asked, plan_overview),
    # "is she on anything for pain?": the same question about the class that treats it
    Frame("purpose", purpose_class, _rewrite(ask_as_class), may_pass=True),
    # "how many times was K replaced?", "mag repleted today?": the salts' administrations
    Frame("repletion", repletion_question, plan_repletion),
    # "what's his code status?", "full code?": what the notes write, the views do not hold
    Frame("documented item", documented_item, plan_documented),
    # "is his diabetes controlled?", "HTN controlled?": the condition's measure against the patient's goal, else the usual
    Frame("condition control", control_asked, plan_control),
    # "is she febrile?", "any hypotension in the last 24h?", "febrile or hypoxic o/n?": thresholds on measurements
    Frame("clinical state", states_asked, plan_clinical_states),
    # "last K and Mg?", "any history of MI or stroke?": each item asked, the answers joined
    Frame("several items", item_parts, plan_parts),
    # "is her K normal?", "BP high?", "A1c controlled?": the latest value against a range or goal
    Frame("normality", normality_asked, plan_normality, may_pass=True),
    # "brief summary of this patient", "who is his PCP?": the record as a whole
    Frame("snapshot", snapshot_kind, plan_snapshot),
    # "last set of vitals", "were vitals stable": the group of results is the item
    Frame("named group", named_group, _rewrite(_set_group), may_pass=True),
    # "were vitals stable": each vital sign's own trend
    Frame("each analyte", _always, lambda pq, _: plan_each_analyte(pq), may_pass=True),
    # "how much did she weigh at 11?", "how much has he grown?": the growth chart's reading
    Frame("growth", growth_question, plan_growth),
    # "what did they diagnose me with in the ER?", "checkups since my last ER visit?"
    Frame("visit", visit_question, plan_visit),
    # "did my A1c go up since last time?": two values and the test's polarity
    Frame("direction", direction_question, plan_direction),
    # "date of last d/c summary?", "last CXR impression?": the notes of that kind answer
    Frame("note kind", note_kind_question, plan_note_kind, may_pass=True),
    # "is he due for a flu shot?": the last one given; the record holds no schedule
    Frame("due", due_question, plan_due),
    # "any cultures positive?", "what grew?"
    Frame("cultures", culture_question, plan_cultures, may_pass=True),
    # "was vanc ever held?": its administrations
    Frame("held doses", not_given_question, plan_not_given, may_pass=True),
    # "vanco doses so far this stay?", "total heparin units since admit"
    Frame("dose tally", tally_asked, plan_tally, may_pass=True),
    # "vanc dosing?", "how often is he getting heparin?", "q12 or q8?": the latest order's dose, route and frequency
    Frame("regimen", regimen_asked, plan_regimen, may_pass=True),
    # after the tally ("insulin doses so far this stay?" counts a class's doses): "abx?", "heparin gtt?"
    Frame("drug class", class_asked, plan_drug_class, may_pass=True),
    # "how many days has she been on vanc?": the drug's latest course of doses
    Frame("days of therapy", therapy_asked, plan_therapy_days),
    # "why is she on Eliquis?": the reasons its orders record
    Frame("indication", indication_asked, plan_indication),
    # "any med changes in the last 6 months?", "was metformin stopped?": the orders over time
    Frame("medication changes", changes_asked, lambda pq, found: plan_medication_changes(pq, *found)),
    # "A1c now vs a year ago": the latest value against the one nearest then
    Frame("then and now", then_now_asked, plan_then_now, may_pass=True),
    # "list her weights since 2018", "last 3 BPs": the values themselves
    Frame("series", series_asked, plan_series, may_pass=True),
    # care plans, goals, imaging: records whose parts are rows (a plan is one ref)
    Frame("record parts", _routed, plan_records, may_pass=True),
    # "current smoker?": the latest coded status's value, not that one is charted
    Frame("coded state", state_question, plan_state, may_pass=True),
    # "any allergies?": whether the record holds any of that kind ("No allergies are recorded.")
    Frame("any of a kind", any_records_view, plan_any_records),
)
