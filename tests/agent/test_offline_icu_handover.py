"""Handover questions in the ICU nurse's voice, over hand-made rows (no store needed).

Each section is a class of phrasing found by the ICU handover probe (``evals/probe_icu_nursing``), not a test
question; the gold of each test is computed from the rows below:

1. a state adjective or noun with a window ("hypoxic at all since admission?", "any hypotensive episodes this
   admission?", "spiked above 38.5 this admission?") is the state over the stay's measurements, not a record term;
   a bare "any fever?" is the last 24 hours' temperatures, not a note from days ago;
2. a drug's doses counted or summed without "how many" ("vanco doses so far this stay?", "total heparin units since
   admit"): completed administrations in the window, 0 when none fell in it, the total over the whole window;
3. a drug class asked alone ("abx?", "current antibiotics?") lists the members given in the last 24 hours; a class
   with no member on file is a No ("pressors?"); "drip"/"gtt" asks for a continuous infusion;
4. ICU vocabulary: "lactic" is lactate, "vanc level" the vancomycin trough lab (never the drug's dose), "code
   status" what the notes write ("Code status: Full code"), never codeine.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from .test_tools_helpers import med, obs, offline_answer, t

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
ADMITTED = "2025-06-18T08:00:00"
HEPARIN = "Heparin 5,000 units/mL injection"
VANCO = "Vancomycin 1,000 mg IVPB"
ZOSYN = "Zosyn (piperacillin-tazobactam) 4.5 g IV"
TYLENOL = "Acetaminophen 325 MG Oral Tablet"


def encounter(eid: str, code: str, start: str, end: str | None) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": "Hospital admission", "status": "finished" if end else "in-progress", "start_time": t(start),
            "end_time": t(end) if end else None, "reason_name": None}


def vital(oid: str, name: str, code: str, value: float, when: str, unit: str) -> dict[str, Any]:
    return obs(oid, name, value, when, unit=unit, code=code, category="vital-signs")


ENCOUNTERS = [encounter("s0", "IMP", "2025-01-10T08:00:00", "2025-01-14T10:00:00"), encounter("s1", "IMP", ADMITTED, None)]
SPO2 = ("Oxygen saturation in Arterial blood by Pulse oximetry", "59408-5", "%")
SBP = ("Systolic blood pressure", "8480-6", "mm[Hg]")
TEMP = ("Body temperature", "8310-5", "Cel")
VITALS = [
    (SPO2, [(97, "2025-01-11T08:00:00"), (88, "2025-01-12T08:00:00"),  # the earlier stay's desaturation
            (94, "2025-06-18T09:00:00"), (89, "2025-06-19T03:00:00"), (95, "2025-06-20T07:00:00")]),
    (SBP, [(84, "2025-01-12T08:00:00"), (112, "2025-06-18T09:00:00"), (96, "2025-06-19T03:00:00"),
           (118, "2025-06-20T07:00:00")]),
    (TEMP, [(38.7, "2025-06-18T10:00:00"), (38.2, "2025-06-19T01:00:00"), (37.4, "2025-06-19T20:00:00"),
            (37.1, "2025-06-20T07:00:00")]),
]
OBSERVATIONS = [vital(f"{name[1]}-{i}", name[0], name[1], float(v), when, name[2])
                for name, values in VITALS for i, (v, when) in enumerate(values)]
VIEWS: dict[str, list[dict[str, Any]]] = {"encounter": ENCOUNTERS, "observation": OBSERVATIONS, "medication": []}


def ask(question: str, views: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    return offline_answer(question, views or VIEWS, NOW)


def _in_stay(item: tuple[str, str, str]) -> list[float]:
    return [r["value"] for r in OBSERVATIONS if r["name"] == item[0] and t(ADMITTED) <= r["time"] <= NOW]


# 1. states over a window


def test_a_state_at_all_since_admission_is_read_from_the_stays_measurements() -> None:
    got = ask("has he been hypoxic at all since admission?")
    assert got["answer"] == [min(_in_stay(SPO2)) < 90] == [True]
    assert "Observation/59408-5-3" in got["cited"]
    # the earlier stay's SBP of 84 is not this admission: the lowest now is 96
    assert ask("any hypotensive episodes this admission?")["answer"] == [min(_in_stay(SBP)) < 90] == [False]


def test_a_number_said_with_the_state_is_the_threshold_asked() -> None:
    highest = max(_in_stay(TEMP))
    assert ask("spiked above 38.5 this admission?")["answer"] == [highest > 38.5] == [True]
    assert ask("spiked above 38.9 since admission?")["answer"] == [highest > 38.9] == [False]
    # a number outside the range of temperatures in °C is in °F: 101 °F = 38.3 °C
    got = ask("spiked above 101 this admission?")
    assert got["answer"] == [highest > (101 - 32) * 5 / 9] == [True] and "38.3" in got["text"]


def test_a_bare_any_fever_is_the_last_24_hours_of_temperatures() -> None:
    last_day = [r["value"] for r in OBSERVATIONS if r["name"] == TEMP[0] and (NOW - r["time"]).days < 1]
    got = ask("any fever?")
    assert got["answer"] == [max(last_day) >= 38.0] == [False]
    assert "last 24 hours" in got["text"]


# 2. dose counts and totals asked without "how many" / "how much"

MAR = [
    med("hep-0", HEPARIN, "administration", "2025-01-11T06:00:00", dose=5000, unit="units"),  # the earlier stay
    *[med(f"hep-{i}", HEPARIN, "administration", when, dose=5000, unit="units", route="SC")
      for i, when in enumerate(["2025-06-18T14:00:00", "2025-06-18T22:00:00", "2025-06-19T06:00:00",
                                "2025-06-19T14:00:00", "2025-06-19T22:00:00", "2025-06-20T06:00:00"], start=1)],
    med("hep-x", HEPARIN, "administration", "2025-06-20T06:05:00", dose=5000, unit="units", status="not-done"),
    med("van-1", VANCO, "administration", "2025-06-18T12:00:00", dose=1000),
    med("van-2", VANCO, "administration", "2025-06-19T00:00:00", dose=1250),
    med("van-3", VANCO, "administration", "2025-06-19T12:00:00", dose=1250),
    med("tyl-1", TYLENOL, "administration", "2025-06-18T20:00:00", dose=650, route="PO"),
]
MAR_VIEWS = {**VIEWS, "medication": MAR}


def _given(name: str, since: datetime) -> list[dict[str, Any]]:
    return [r for r in MAR if r["medication_name"] == name and r["status"] == "completed" and since <= r["time"] <= NOW]


def test_doses_with_a_window_are_counted_without_the_not_done_one() -> None:
    assert ask("heparin doses past 24 hrs?", MAR_VIEWS)["answer"] == [len(_given(HEPARIN, t("2025-06-19T12:00:00")))] == [3]
    assert ask("vanco doses so far this stay?", MAR_VIEWS)["answer"] == [len(_given(VANCO, t(ADMITTED)))] == [3]


def test_no_dose_in_the_window_is_a_count_of_zero_not_missing_data() -> None:
    got = ask("tylenol doses past 12 hrs?", MAR_VIEWS)
    assert got["answer"] == [0] and got["status"] == "answered"


def test_a_total_since_admission_sums_every_completed_dose_of_the_stay() -> None:
    units = sum(r["dose"] for r in _given(HEPARIN, t(ADMITTED)))
    got = ask("total heparin units since admit", MAR_VIEWS)
    assert got["answer"] == [units] == [30000]
    assert "MedicationAdministration/hep-0" not in got["cited"]
    assert ask("total vanc given since admission (mg)", MAR_VIEWS)["answer"] == [sum(r["dose"] for r in _given(VANCO, t(ADMITTED)))]


def test_how_much_with_a_cumulative_cue_is_the_total_of_the_current_stay() -> None:
    # "so far", "has he gotten": no window said, the patient is in a stay now: that stay's completed doses
    stay_total = sum(r["dose"] for r in _given(VANCO, t(ADMITTED)))
    for question in ("how much vanc has he gotten so far", "how much vancomycin has he received since admission",
                     "cumulative vanc so far"):
        got = ask(question, MAR_VIEWS)
        assert got["answer"] == [stay_total] == [3500], question
    assert "this admission" in ask("how much vanc has he gotten so far", MAR_VIEWS)["text"]
    # never the vancomycin trough, never the last dose alone
    got = ask("how much heparin has she gotten", MAR_VIEWS)
    assert got["answer"] == [sum(r["dose"] for r in _given(HEPARIN, t(ADMITTED)))] == [30000]
    assert "30,000 units" in got["text"] and "MedicationAdministration/hep-0" not in got["cited"]


def test_an_amount_over_a_window_said_sums_the_doses_in_it_in_the_unit_asked() -> None:
    last_day = sum(r["dose"] for r in _given(VANCO, t("2025-06-19T12:00:00")))
    assert ask("how many mg of vanc in the last 24h", MAR_VIEWS)["answer"] == [last_day] == [1250]
    got = ask("how many grams of vanco in the last 48 hours", MAR_VIEWS)
    assert got["answer"] == [sum(r["dose"] for r in _given(VANCO, t("2025-06-18T12:00:00"))) / 1000] == [3.5]
    assert got["unit"] == "g"
    assert ask("amount of heparin given yesterday", MAR_VIEWS)["answer"] == [
        sum(r["dose"] for r in MAR if r["medication_name"] == HEPARIN and r["status"] == "completed"
            and r["time"].date().isoformat() == "2025-06-19")] == [15000]


def test_how_much_with_no_stay_now_and_no_window_is_the_whole_record() -> None:
    discharged = {**MAR_VIEWS, "encounter": [ENCOUNTERS[0]]}  # only the January stay, long over
    got = ask("how much heparin has she gotten so far", discharged)
    assert got["answer"] == [sum(r["dose"] for r in MAR if r["medication_name"] == HEPARIN and r["status"] == "completed")]
    assert "whole record" in got["text"]


def test_how_much_is_she_getting_is_not_a_total() -> None:
    # the present tense with no window asks for what she is on, not what she has had
    got = ask("how much heparin is she getting", MAR_VIEWS)
    assert got["answer"] != [30000]


# 3. a drug class or a way of giving asked: the members given recently, whether it runs as an infusion

CLASS_MAR = [*MAR,
             med("van-4", VANCO, "administration", "2025-06-20T00:00:00", dose=1250),
             med("zos-1", ZOSYN, "administration", "2025-06-18T09:00:00", dose=4.5, unit="g"),  # over a day ago
             med("cro-q", "Ceftriaxone 1 g IV", "request", "2025-06-18T09:00:00", dose=1, unit="g")]  # ordered only
CLASS_VIEWS = {**VIEWS, "medication": CLASS_MAR}
ANTIBIOTICS = (VANCO, ZOSYN, "Ceftriaxone 1 g IV")


def test_a_class_asked_alone_lists_the_members_given_in_the_last_day() -> None:
    given = sorted({r["medication_name"] for r in CLASS_MAR if r["medication_name"] in ANTIBIOTICS
                    and r["kind"] == "administration" and NOW - r["time"] <= timedelta(hours=24)})
    got = ask("abx?", CLASS_VIEWS)
    assert got["answer"] == given == [VANCO]
    assert "MedicationAdministration/van-4" in got["cited"] and "last 24 hours" in got["text"]
    assert ask("current antibiotics?", CLASS_VIEWS)["answer"] == given
    assert ask("any IV abx?", CLASS_VIEWS)["answer"] == [True]


def test_a_class_with_no_member_on_file_is_a_no() -> None:
    got = ask("pressors?", CLASS_VIEWS)
    assert got["answer"] == [False] and got["status"] == "answered"


def test_a_drip_is_a_continuous_infusion_not_any_dose_of_the_drug() -> None:
    got = ask("heparin drip running?", CLASS_VIEWS)
    assert got["answer"] == [False] and "SC" in got["text"]  # every heparin dose here is 5,000 units SC
    drip = med("hep-d", "Heparin 25,000 units in D5W 250 mL", "administration", "2025-06-20T08:00:00", dose=1200,
               unit="units", rate=12.0, rate_unit="mL/h")
    assert ask("heparin drip running?", {**VIEWS, "medication": [*CLASS_MAR, drip]})["answer"] == [True]


# 4. ICU vocabulary

LABS = [obs("lac-1", "Lactate [Moles/volume] in Serum or Plasma", 2.4, "2025-06-18T09:00:00", unit="mmol/L", code="2524-7"),
        obs("lac-2", "Lactate [Moles/volume] in Serum or Plasma", 1.6, "2025-06-19T06:00:00", unit="mmol/L", code="2524-7"),
        obs("vt-1", "Vancomycin [Mass/volume] in Serum or Plasma --trough", 14.2, "2025-06-19T11:30:00", unit="ug/mL",
            code="4092-3")]
LAB_VIEWS = {**CLASS_VIEWS, "observation": [*OBSERVATIONS, *LABS]}


def test_lactic_is_lactate_and_a_vanc_level_is_the_trough_lab_not_the_dose() -> None:
    assert ask("lactic on admit", LAB_VIEWS)["answer"] == [LABS[0]["value"]]
    assert ask("what was the last lactic", LAB_VIEWS)["answer"] == [LABS[1]["value"]]
    got = ask("vanc level?", LAB_VIEWS)
    assert got["answer"] == [LABS[2]["value"]] and "Observation/vt-1" in got["cited"]
    assert ask("last vanc trough", LAB_VIEWS)["answer"] == [LABS[2]["value"]]
    assert ask("vanc level?", CLASS_VIEWS)["status"] == "no-data"  # doses of vancomycin are no level


H_AND_P = ("HISTORY AND PHYSICAL\nDate: 6/18/2025 10:00\nAssessment and plan:\n1. Sepsis - vanc/zosyn.\n"
           "2. VTE ppx: heparin SC.\n3. Code status: Full code.")


class OneNote:
    """``search_notes``' index over one H&P written on admission."""

    def search(self, patient_id: str, query: str, k: int = 5, since: Any = None, until: Any = None,
               section: Any = None) -> list[Any]:
        from fhirqa.notes.index import Hit

        when = t("2025-06-18T10:00:00")
        if (until is not None and until < when) or (since is not None and since > when):
            return []
        return [Hit(text=H_AND_P, ref="DocumentReference/hp", note_id="hp", chunk_id="hp-1", date="2025-06-18", time=when,
                    note_type="History and physical note", section="assessment and plan", score=1.0, patient_id="p1")]


def noted(question: str) -> dict[str, Any]:
    from fhirqa.agent.backends.offline import OfflineBackend
    from fhirqa.agent.composer import compose
    from fhirqa.agent.resolver import ConceptResolver
    from fhirqa.agent.tools import tool_specs
    from fhirqa.agent.tools.base import ToolContext

    from .test_tools_helpers import FakeRows

    ctx = ToolContext(patient_id="p1", now=NOW, data=FakeRows({**CLASS_VIEWS, "medication": [
        *CLASS_MAR, med("cod", "Acetaminophen 300 MG / Codeine Phosphate 30 MG Oral Tablet", "request", "2021-03-01T09:00:00")]}),
        resolve=ConceptResolver(), notes=OneNote())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {NOW.isoformat()}", tool_specs())
    assert out.final is not None
    return {**out.final, "cited": {e.ref for e in ctx.evidence.values()}}


def test_code_status_is_what_the_notes_write_never_codeine() -> None:
    written = H_AND_P.split("Code status: ")[1].rstrip(".")
    got = noted("what's his code status")
    assert got["answer"] == [written] and "DocumentReference/hp" in got["cited"]
    assert noted("is he full code?")["answer"] == [written.lower() == "full code"] == [True]
    assert noted("DNR?")["answer"] == [False]


def test_the_next_troughs_time_is_a_schedule_the_record_does_not_hold() -> None:
    for question in ("next vanc trough time?", "when is the next vanc trough due?"):
        got = ask(question, LAB_VIEWS)
        assert got["status"] == "no-data" and "no schedule" in got["text"], question
        assert LABS[2]["time"].date().isoformat() in got["text"]  # the last trough is said


def test_a_class_named_with_doses_and_a_window_is_a_count_not_a_list() -> None:
    assert ask("antibiotic doses so far this stay?", CLASS_VIEWS)["answer"] == [
        len([r for r in CLASS_MAR if r["medication_name"] in ANTIBIOTICS and r["kind"] == "administration"
             and r["status"] == "completed" and r["time"] >= t(ADMITTED)])]


def test_code_status_in_a_window_or_a_named_note_reads_only_those_notes() -> None:
    written = H_AND_P.split("Code status: ")[1].rstrip(".")
    assert noted("code status on admission?")["answer"] == [written]
    assert noted("code status per the H&P?")["answer"] == [written]
    assert noted("was code status mentioned in the Jun 18, 2025 H&P?")["answer"] == [True]
    assert noted("was code status mentioned in the Jun 19, 2025 progress note?")["answer"] == [False]  # no such note
    assert noted("code status per the progress note?")["status"] == "no-data"


def test_whether_any_dose_fell_in_the_window_stays_a_yes_no() -> None:
    assert ask("any heparin doses in the last 12 hrs?", MAR_VIEWS)["answer"] == [bool(_given(HEPARIN, t("2025-06-20T00:00:00")))]
