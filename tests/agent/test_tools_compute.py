"""find_extreme, aggregate, count_values, compare_values, calculate_difference, calculate_time_offset,
final_answer on hand-made rows."""

from __future__ import annotations

from .test_tools_helpers import A1C, VANCO, call, fetch, make_ctx, med


def test_find_extreme_returns_the_row_with_value_unit_time_and_cites_it():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    result = call(ctx, "find_extreme", records=r, mode="max")
    assert (result["value"], result["unit"], result["ref"]) == (7.4, "%", "Observation/a2")
    assert result["time"] == "2023-11-20T09:00:00+00:00" and result["name"] == A1C and result["n"] == 3
    assert ("Observation/a2", "observation.value") in ctx.evidence
    assert call(ctx, "find_extreme", records=r, mode="min")["value"] == 6.1


def test_find_extreme_reports_ties_and_picks_the_earliest():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="vancomycin", kind="administration")
    result = call(ctx, "find_extreme", records=r, mode="max")
    assert result["ties"] == 4 and result["ref"] == "MedicationAdministration/v1"


def test_find_extreme_on_text_is_fed_back():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="smoking")
    assert "find_extreme needs a numeric or time field" in call(
        ctx, "find_extreme", records=r, mode="max", field="value_string")["error"]


def test_aggregate_mean_median_sum_with_unit_and_n():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    mean = call(ctx, "aggregate", records=r, op="mean")
    assert round(mean["value"], 6) == round((6.1 + 7.4 + 6.8) / 3, 6) and mean["unit"] == "%" and mean["n"] == 3
    assert call(ctx, "aggregate", records=r, op="median")["value"] == 6.8
    assert call(ctx, "aggregate", records=r, op="last")["value"] == 6.8
    assert call(ctx, "aggregate", records=r, op="first")["value"] == 6.1
    assert {e.ref for e in ctx.evidence.values()} == {"Observation/a1", "Observation/a2", "Observation/a3"}


def test_aggregate_daily_totals_sum_administrations_per_calendar_day():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="vancomycin", kind="administration")
    extra = med("v5", VANCO, "administration", "2024-03-01T23:59:00", dose=1250)
    ctx.handles[r].rows.append(extra)  # q8h: three doses on 1 March
    result = call(ctx, "aggregate", records=r, op="sum", group_by="day")
    assert result["groups"] == [{"day": "2024-03-01", "value": 3750, "n": 3},
                                {"day": "2024-03-02", "value": 2500, "n": 2}]
    assert result["unit"] == "mg" and result["highest_day"]["value"] == 3750 and result["n"] == 5
    assert len([e for e in ctx.evidence.values() if e.field == "medication.dose"]) == 5


def test_aggregate_warns_when_units_differ():
    ctx = make_ctx()
    r = fetch(ctx, "observation", codes=["4548-4", "2823-3"])
    result = call(ctx, "aggregate", records=r, op="sum")
    assert result["unit"] is None and set(result["units"]) == {"%", "mmol/L"} and "not converted" in result["warning"]


def test_aggregate_count_needs_no_value_field_and_numeric_ops_refuse_text():
    ctx = make_ctx()
    r = fetch(ctx, "observation")
    assert call(ctx, "aggregate", records=r, op="count")["value"] == 7
    error = call(ctx, "aggregate", records=r, op="mean", field="value_string")["error"]
    assert "needs numbers" in error
    assert "group_by" in call(ctx, "aggregate", records=r, op="sum", group_by="week")["error"]


def test_aggregate_of_an_empty_set_is_no_value_not_an_error():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    empty = call(ctx, "filter_by_date", records=r, start="2030-01-01")["handle"]
    result = call(ctx, "aggregate", records=empty, op="mean")
    assert result["ok"] and result["value"] is None and result["n"] == 0


def test_count_values_counts_rows_fields_and_distinct_values():
    ctx = make_ctx()
    r = fetch(ctx, "medication")
    assert call(ctx, "count_values", records=r)["count"] == 7
    distinct = call(ctx, "count_values", records=r, distinct=True)
    assert distinct["count"] == 2 and distinct["values"][0] == {"value": VANCO, "rows": 5}
    kinds = call(ctx, "count_values", records=r, field="kind", distinct=True)
    assert kinds["count"] == 3
    assert call(ctx, "count_values", records=r, field="daily_dose")["count"] == 1


def test_compare_values_numbers_and_dates():
    ctx = make_ctx()
    assert call(ctx, "compare_values", a=7.4, op=">", b=7)["result"] is True
    assert call(ctx, "compare_values", a="6.5", op="<=", b=6.5)["result"] is True
    assert call(ctx, "compare_values", a="2024-03-01", op="<", b="2024-05-02T00:00:00Z")["result"] is True
    assert call(ctx, "compare_values", a="2024-03-01", op="==", b="2024-03-01T18:00:00Z")["result"] is True
    assert "compare numbers with numbers" in call(ctx, "compare_values", a=1, op="<", b="2024-01-01")["error"]


def test_calculate_difference_numbers_and_dates_with_breakdown():
    ctx = make_ctx()
    assert call(ctx, "calculate_difference", a=7.4, b=6.1)["difference"] == 1.3  # not 1.2999999999999998
    assert call(ctx, "calculate_difference", a=10, b=4)["difference"] == 6
    dates = call(ctx, "calculate_difference", a="2024-05-02", b="2023-02-01")
    assert dates["difference_days"] == 456 and dates["text"] == "1 year, 3 months, 1 day"
    half = call(ctx, "calculate_difference", a="2024-01-01T12:00:00Z", b="2024-01-01")
    assert half["difference_days"] == 0.5
    assert call(ctx, "calculate_difference", a="2023-01-01", b="2024-01-01")["breakdown"]["negative"] is True
    assert "cannot read" in call(ctx, "calculate_difference", a="yesterday", b="2024-01-01")["error"]


def test_calculate_time_offset_age_is_completed_years_and_defaults_to_now():
    ctx = make_ctx()  # now = 2024-06-15
    assert call(ctx, "calculate_time_offset", start="1970-06-16", unit="years")["value"] == 53
    assert call(ctx, "calculate_time_offset", start="1970-06-15", unit="years")["value"] == 54
    assert call(ctx, "calculate_time_offset", start="2024-01-31", end="2024-02-29", unit="months")["value"] == 1
    assert call(ctx, "calculate_time_offset", start="2024-01-31", end="2024-02-28", unit="months")["value"] == 0


def test_calculate_time_offset_days_and_weeks_count_calendar_days():
    ctx = make_ctx()
    days = call(ctx, "calculate_time_offset", start="2024-06-14T23:00:00Z")
    assert days["value"] == 1 and days["unit"] == "days" and days["end_is_now"] is True
    assert call(ctx, "calculate_time_offset", start="2024-06-01", unit="weeks")["value"] == 2
    assert call(ctx, "calculate_time_offset", start="2024-07-01", unit="days")["value"] == -16
    assert "unit" in call(ctx, "calculate_time_offset", start="2024-06-01", unit="fortnights")["error"]


def test_final_answer_sets_the_answer_and_cites_the_evidence_rows():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    latest = call(ctx, "get_by_index", records=r, index=-1)["handle"]
    ctx.evidence.clear()
    result = call(ctx, "final_answer", answer=[6.8], text="The latest A1c was 6.8 % on 2 May 2024.",
                  unit="%", evidence=[latest])
    assert result["ok"] and result["cited_rows"] == 1
    assert ctx.answer == {"answer": [6.8], "text": "The latest A1c was 6.8 % on 2 May 2024.",
                          "status": "answered", "unit": "%", "evidence": [latest]}
    assert list(ctx.evidence) == [("Observation/a3", "observation.value")]


def test_final_answer_mistakes_are_fed_back_and_leave_no_answer():
    ctx = make_ctx()
    assert "status" in call(ctx, "final_answer", answer=[], text="x", status="maybe")["error"]
    assert "known handles" in call(ctx, "final_answer", answer=[1], text="x", evidence=["r4"])["error"]
    assert "text is empty" in call(ctx, "final_answer", answer=[1], text="  ")["error"]
    assert ctx.answer is None
