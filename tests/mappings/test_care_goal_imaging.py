"""The care_plan, goal and imaging views over hand-made resources with the shapes that go wrong.

Fixtures (``tests/mappings/fixtures``): ``careplan.json`` (a US Core plan whose first category is the generic
``assess-plan``, a plan without activities, a plan whose activities are a referenced request and a free-text
description), ``goal.json`` (a coded goal with a quantity target, a text goal with two range targets, a goal
without target) and ``imagingstudy.json`` (a CT study with a series that has no body site, an ultrasound
study without series). All belong to ``pat-1``; ``Condition/cond-1`` is Cellulitis (disorder).
"""

from __future__ import annotations

import datetime as dt

import pytest

from .maptest_helpers import build_tables, load_fixtures, view_sql

UTC = dt.UTC


@pytest.fixture(scope="module")
def con():
    c = build_tables(load_fixtures())
    yield c
    c.close()


def rows(con, view, ref, order="ref"):
    rel = con.sql(f"SELECT * FROM ({view_sql(view)}) AS v WHERE ref = '{ref}' ORDER BY {order}")
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


# --- care_plan: one row per activity, the plan itself when it has none -------------------------------------


def test_a_plan_gives_one_row_per_activity_with_the_plan_repeated(con):
    plan = rows(con, "care_plan", "CarePlan/cp-wound", order="activity")
    assert [r["activity"] for r in plan] == ["Behavior to prevent infection", "Dressing change management"]
    for r in plan:
        assert (r["patient_id"], r["status"], r["intent"]) == ("pat-1", "active", "plan")
        assert r["start_time"] == dt.datetime(2020, 3, 5, 16, 0, tzinfo=UTC) and r["start_time_offset"] == -300
        assert r["end_time"] is None  # still running
        assert r["encounter_ref"] == "Encounter/enc-1"


def test_the_plan_name_skips_the_generic_us_core_category(con):
    [name] = {r["name"] for r in rows(con, "care_plan", "CarePlan/cp-wound")}
    assert name == "Wound care"
    assert {r["category_code"] for r in rows(con, "care_plan", "CarePlan/cp-wound")} == {"225358003"}


def test_an_activity_named_only_by_its_coding_display_and_one_with_a_location(con):
    dressing, behaviour = rows(con, "care_plan", "CarePlan/cp-wound", order="activity DESC")
    assert (dressing["activity_status"], dressing["activity_location"]) == ("in-progress", "Wound clinic")
    assert (behaviour["activity"], behaviour["activity_code"], behaviour["activity_status"]) == (
        "Behavior to prevent infection", "439830001", "scheduled")


def test_the_condition_a_plan_addresses_is_named_from_the_condition(con):
    assert {(r["addresses_ref"], r["addresses_name"]) for r in rows(con, "care_plan", "CarePlan/cp-wound")} == {
        ("Condition/cond-1", "Cellulitis (disorder)")}


def test_the_display_written_on_the_reference_wins_over_the_condition_name(con):
    assert {r["addresses_name"] for r in rows(con, "care_plan", "CarePlan/cp-referral")} == {"Cellulitis of leg"}


def test_a_plan_without_activities_is_one_row_with_an_empty_activity(con):
    [plan] = rows(con, "care_plan", "CarePlan/cp-no-activity")
    assert (plan["name"], plan["status"], plan["intent"]) == ("Post-discharge plan", "draft", "proposal")
    assert plan["description"] == "Follow up in clinic within two weeks."
    assert plan["activity"] is None and plan["activity_status"] is None
    assert plan["start_time"] == dt.datetime(2020, 3, 5, tzinfo=UTC)  # no period: when it was created
    assert plan["start_time_offset"] is None  # a date has no offset


def test_activities_that_are_requests_or_free_text_still_have_a_name(con):
    referral, walking = rows(con, "care_plan", "CarePlan/cp-referral", order="activity")
    assert (referral["activity"], referral["activity_reference"]) == ("Physical therapy referral", "ServiceRequest/sr-1")
    assert (walking["activity"], walking["activity_status"]) == ("Walk 30 minutes a day", "completed")
    assert {r["name"] for r in (referral, walking)} == {"Physical therapy procedure"}  # category display
    assert referral["end_time"] == dt.datetime(2020, 5, 1, 9, 0, tzinfo=UTC) and referral["end_time_offset"] == 0


# --- goal: one row per target, the goal itself when it has none --------------------------------------------


def test_a_coded_goal_with_a_quantity_target(con):
    [goal] = rows(con, "goal", "Goal/goal-a1c")
    assert (goal["name"], goal["description_code"]) == ("Glycemic control", "698360004")  # no text: the display
    assert (goal["lifecycle_status"], goal["achievement_status"]) == ("active", "Improving")
    assert goal["category"] == "physiotherapy"
    assert (goal["target_measure"], goal["target_measure_code"]) == ("Hemoglobin A1c/Hemoglobin.total in Blood", "4548-4")
    assert (goal["target_comparator"], goal["target_value"], goal["target_unit"]) == ("<", 7.0, "%")
    assert goal["target_display"] == "<7 %"
    assert goal["start_time"] == dt.datetime(2020, 3, 5, tzinfo=UTC)
    assert goal["due_time"] == dt.datetime(2020, 9, 1, tzinfo=UTC)
    assert goal["addresses_name"] == "Cellulitis (disorder)"


def test_a_goal_with_two_range_targets_gives_two_rows(con):
    systolic, diastolic = rows(con, "goal", "Goal/goal-bp", order="target_measure DESC")
    assert {r["name"] for r in (systolic, diastolic)} == {"Maintain blood pressure below 130/80 mmHg"}
    assert (systolic["target_low"], systolic["target_high"], systolic["target_unit"]) == (90.0, 130.0, "mm[Hg]")
    assert systolic["target_display"] == "90-130 mm[Hg]"
    assert diastolic["target_display"] == "<=80 mm[Hg]"  # a range open below
    assert systolic["status_time"] == dt.datetime(2020, 3, 6, tzinfo=UTC) and systolic["start_time"] is None


def test_a_goal_without_target_is_one_row(con):
    [goal] = rows(con, "goal", "Goal/goal-text")
    assert (goal["name"], goal["lifecycle_status"]) == ("Stop smoking", "completed")
    assert goal["target_measure"] is None and goal["target_display"] is None


# --- imaging: one row per series, the study itself when it has none -----------------------------------------


def test_a_study_gives_one_row_per_series_with_modality_and_body_site(con):
    chest, other = rows(con, "imaging", "ImagingStudy/img-ct", order="series_number")
    assert (chest["modality"], chest["modality_code"], chest["body_site"]) == (
        "Computed Tomography", "CT", "Thoracic structure")
    assert chest["name"] == "CT chest with contrast"  # the study's procedure names it
    assert chest["time"] == dt.datetime(2020, 3, 2, 14, 35, tzinfo=UTC) and chest["time_offset"] == -300
    assert chest["started"] == dt.datetime(2020, 3, 2, 14, 30, tzinfo=UTC)
    assert (chest["series_instances"], chest["number_of_series"], chest["number_of_instances"]) == (120, 2, 180)
    assert chest["reason_name"] == "Cellulitis (disorder)" and chest["encounter_ref"] == "Encounter/enc-1"
    # a series without body site, modality without display, start: code, no site, the study's start
    assert (other["modality"], other["body_site"]) == ("SR", None)
    assert other["time"] == chest["started"]


def test_a_study_without_series_takes_the_study_modality(con):
    [study] = rows(con, "imaging", "ImagingStudy/img-us")
    assert (study["name"], study["modality"], study["modality_code"]) == ("Ultrasound", "Ultrasound", "US")
    assert study["body_site"] is None and study["series_uid"] is None
    assert (study["status"], study["description"]) == ("registered", "Abdominal ultrasound")
    assert study["time"] == dt.datetime(2020, 4, 10, tzinfo=UTC) and study["time_offset"] is None
