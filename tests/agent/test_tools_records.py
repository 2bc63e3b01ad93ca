"""get_resources, filter_by_date, filter_by_value, sort_records, get_by_index, extract_field_value,
combine_evidence on hand-made rows."""

from __future__ import annotations

import json

from fhirqa.agent.tools.base import PREVIEW_ROWS

from .test_tools_helpers import A1C, VANCO, call, fetch, make_ctx, obs


def test_get_resources_resolves_item_and_returns_handle_items_and_time_ordered_preview():
    ctx = make_ctx()
    result = call(ctx, "get_resources", view="observation", item="a1c")
    assert result["handle"] == "r1" and result["count"] == 3 and result["items"] == [A1C]
    assert [row["value"] for row in result["preview"]] == [6.1, 7.4, 6.8]
    assert result["preview"][0]["time"] == "2022-01-10T09:00:00+00:00"
    assert result["time_range"] == {"earliest": "2022-01-10T09:00:00+00:00", "latest": "2024-05-02T09:00:00+00:00"}
    json.dumps(result)  # results are JSON-native


def test_get_resources_drops_entered_in_error_rows_and_says_so():
    result = call(make_ctx(), "get_resources", view="observation", item="a1c")
    assert result["excluded_entered_in_error"] == 1
    assert 9.9 not in [row["value"] for row in result["preview"]]


def test_get_resources_preview_shows_requested_fields_always_with_ref():
    result = call(make_ctx(), "get_resources", view="observation", item="potassium", fields=["value", "unit"])
    assert result["preview"] == [{"ref": "Observation/k1", "value": 4.1, "unit": "mmol/L"}]


def test_get_resources_filters_by_codes_kind_and_category():
    ctx = make_ctx()
    assert call(ctx, "get_resources", view="observation", codes=["2823-3"])["count"] == 1
    assert call(ctx, "get_resources", view="observation", category="vital-signs")["count"] == 2
    assert call(ctx, "get_resources", view="observation", category="vital-sign")["count"] == 2
    assert call(ctx, "get_resources", view="medication", item="vancomycin", kind="administration")["count"] == 4


def test_get_resources_caps_the_preview_and_counts_the_omitted_rows():
    rows = [obs(f"g{i}", "Glucose", 90 + i, f"2024-01-{i + 1:02d}T08:00:00", unit="mg/dL") for i in range(25)]
    result = call(make_ctx({"observation": rows}), "get_resources", view="observation")
    assert result["count"] == 25 and len(result["preview"]) == PREVIEW_ROWS and result["omitted"] == 5


def test_get_resources_with_no_match_gives_count_zero_and_candidates():
    result = call(make_ctx(), "get_resources", view="observation", item="hba1c-ish")
    assert result["ok"] and result["count"] == 0
    assert result["candidates"] == [A1C]


def test_get_resources_with_filters_emptying_the_set_lists_what_is_available():
    result = call(make_ctx(), "get_resources", view="medication", item="metformin", kind="administration")
    assert result["count"] == 0 and result["available"]["kind"] == ["statement"]


def test_get_resources_ambiguous_item_gives_candidates_and_no_handle():
    ctx = make_ctx()
    result = call(ctx, "get_resources", view="observation", item="blood pressure")
    assert result["ambiguous"] is True and "handle" not in result
    assert set(result["candidates"]) == {"Systolic blood pressure", "Diastolic blood pressure"}
    assert ctx.handles == {}


def test_get_resources_errors_name_the_valid_views_and_fields():
    ctx = make_ctx()
    bad_view = call(ctx, "get_resources", view="labs")
    assert not bad_view["ok"] and "observation" in bad_view["error"]
    bad_field = call(ctx, "get_resources", view="observation", fields=["valeu"])
    assert not bad_field["ok"] and "unknown field 'valeu'" in bad_field["error"] and "value_string" in bad_field["error"]
    bad_kind = call(ctx, "get_resources", view="observation", kind="request")
    assert not bad_kind["ok"] and "medication" in bad_kind["error"]


def test_filter_by_date_inclusive_start_and_bare_date_end_covers_the_whole_day():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    result = call(ctx, "filter_by_date", records=r, start="2023-11-20", end="2024-05-02")
    assert [row["value"] for row in result["preview"]] == [7.4, 6.8]
    assert result["window"]["end"] == "2024-05-02T23:59:59.999999"  # no offset: the end of each record's local day


def test_filter_by_date_last_months_is_calendar_arithmetic_back_from_now():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    result = call(ctx, "filter_by_date", records=r, last_amount=7, last_unit="months")
    assert result["window"]["start"] == "2023-11-15T12:00:00+00:00"
    assert [row["value"] for row in result["preview"]] == [7.4, 6.8]
    assert call(ctx, "filter_by_date", records=r, last_amount=6, last_unit="months")["count"] == 1
    assert call(ctx, "filter_by_date", records=r, last_amount=1, last_unit="years")["count"] == 2
    assert call(ctx, "filter_by_date", records=r, last_amount=2, last_unit="weeks")["count"] == 0


def test_filter_by_date_empty_window_reports_input_range_and_nearest_rows():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    result = call(ctx, "filter_by_date", records=r, last_amount=30, last_unit="days")
    assert result["count"] == 0
    assert result["input_time_range"]["latest"] == "2024-05-02T09:00:00+00:00"
    assert result["nearest_before"]["ref"] == "Observation/a3" and "nearest_after" not in result
    assert ("Observation/a3", "observation.value") in ctx.evidence


def test_filter_by_date_counts_undated_rows():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="metformin")
    result = call(ctx, "filter_by_date", records=r, start="2020-01-01")
    assert result["count"] == 1 and result["undated"] == 1


def test_filter_by_date_mistakes_are_fed_back():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    assert "cannot read 'last spring'" in call(ctx, "filter_by_date", records=r, start="last spring")["error"]
    assert "go together" in call(ctx, "filter_by_date", records=r, last_amount=3)["error"]
    assert "either" in call(ctx, "filter_by_date", records=r, start="2024-01-01", last_amount=3,
                            last_unit="days")["error"]
    assert "after end" in call(ctx, "filter_by_date", records=r, start="2024-02-01", end="2024-01-01")["error"]
    assert "known handles: r1" in call(ctx, "filter_by_date", records="r9", start="2024-01-01")["error"]


def test_filter_by_value_compares_numbers_on_the_value_field():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    assert call(ctx, "filter_by_value", records=r, op=">", value=6.5)["count"] == 2
    assert call(ctx, "filter_by_value", records=r, op="<=", value="6.1")["count"] == 1
    assert call(ctx, "filter_by_value", records=r, op="==", value="H", field="interpretation")["count"] == 1


def test_filter_by_value_contains_is_case_insensitive_on_text():
    ctx = make_ctx()
    r = fetch(ctx, "observation")
    result = call(ctx, "filter_by_value", records=r, op="contains", value="NEVER")
    assert result["count"] == 1 and result["preview"][0]["value_string"] == "Never smoker"
    by_name = call(ctx, "filter_by_value", records=r, op="contains", value="pressure", field="name")
    assert by_name["count"] == 2


def test_filter_by_value_on_dates_treats_a_bare_date_as_its_day():
    ctx = make_ctx()
    r = fetch(ctx, "observation")
    assert call(ctx, "filter_by_value", records=r, op="==", value="2024-06-01", field="time")["count"] == 3


def test_filter_by_value_mistakes_are_fed_back():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    assert "op" in call(ctx, "filter_by_value", records=r, op="~", value=1)["error"]
    assert "number or an ISO date" in call(ctx, "filter_by_value", records=r, op=">", value="high")["error"]
    assert "cannot be compared" in call(ctx, "filter_by_value", records=r, op="==", value="x")["error"]
    enc = fetch(ctx, "encounter")
    assert "no default value field" in call(ctx, "filter_by_value", records=enc, op=">", value=1)["error"]


def test_sort_records_puts_missing_values_last_in_either_direction():
    ctx = make_ctx()
    r = fetch(ctx, "observation")
    up = call(ctx, "sort_records", records=r, field="value")
    down = call(ctx, "sort_records", records=r, field="value", descending=True)
    assert up["preview"][0]["value"] == 4.1 and up["preview"][-1]["value"] is None
    assert down["preview"][0]["value"] == 128.0 and down["preview"][-1]["value"] is None
    assert up["handle"] != r


def test_get_by_index_picks_first_and_last_by_time_and_cites_it():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    last = call(ctx, "get_by_index", records=r, index=-1)
    assert last["row"]["value"] == 6.8 and last["of"] == 3
    assert last["evidence"] == {"ref": "Observation/a3", "field": "value", "value": 6.8,
                                "time": "2024-05-02T09:00:00+00:00", "name": A1C, "unit": "%"}
    assert ctx.evidence[("Observation/a3", "observation.value")].label == A1C
    assert call(ctx, "get_by_index", records=r, index=0)["row"]["value"] == 6.1
    assert call(ctx, "get_by_index", records=r, index=0, order_by="value")["row"]["value"] == 6.1
    assert ctx.handles[last["handle"]].rows[0]["ref"] == "Observation/a3"


def test_get_by_index_out_of_range_is_fed_back_with_the_valid_range():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    assert "use 0..2 or -1..-3" in call(ctx, "get_by_index", records=r, index=3)["error"]


def test_extract_field_value_lists_values_with_ref_and_time_and_cites_them():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="vancomycin")
    result = call(ctx, "extract_field_value", records=r, field="route")
    assert result["count"] == 5 and result["values"][0]["value"] == "intravenous"
    assert result["values"][0]["time"] == "2024-03-01T07:00:00+00:00" and result["values"][0]["name"] == VANCO
    assert ("MedicationRequest/req", "medication.route") in ctx.evidence
    missing = call(ctx, "extract_field_value", records=r, field="daily_dose")
    assert missing["count"] == 1 and missing["missing"] == 4 and missing["values"][0]["unit"] == "mg"


def test_extract_field_value_unknown_field_lists_valid_fields():
    ctx = make_ctx()
    r = fetch(ctx, "medication")
    error = call(ctx, "extract_field_value", records=r, field="drug")["error"]
    assert "unknown field 'drug'" in error and "medication_name" in error


def test_combine_evidence_unions_sets_and_drops_duplicates_by_ref_and_name():
    ctx = make_ctx()
    a1c = fetch(ctx, "observation", item="a1c")
    latest = call(ctx, "get_by_index", records=a1c, index=-1)["handle"]
    k = fetch(ctx, "observation", item="potassium")
    bp = fetch(ctx, "observation", category="vital-signs")
    result = call(ctx, "combine_evidence", handles=[a1c, latest, k, bp])
    assert result["count"] == 6 and result["view"] == "observation"  # both BP components share one ref


def test_combine_evidence_across_views_keeps_each_rows_view():
    ctx = make_ctx()
    a1c = fetch(ctx, "observation", item="a1c")
    metformin = fetch(ctx, "medication", item="metformin")
    result = call(ctx, "combine_evidence", handles=[a1c, metformin])
    assert result["view"] == "mixed" and result["count"] == 5
    assert {row["view"] for row in result["preview"]} == {"observation", "medication"}
    assert result["preview"][-1]["ref"] == "MedicationStatement/m2"  # undated last
    count = call(ctx, "count_values", records=result["handle"], distinct=True)
    assert count["count"] == 2


def test_filter_by_date_include_missing_keeps_rows_without_the_time():
    ctx = make_ctx()
    r = fetch(ctx, "medication", item="metformin")
    result = call(ctx, "filter_by_date", records=r, start="2020-01-01", include_missing=True)
    assert result["count"] == 2 and result["kept_undated"] == 1


def test_extract_field_value_distinct_lists_each_value_once_with_its_row_count():
    ctx = make_ctx()
    r = fetch(ctx, "medication")
    result = call(ctx, "extract_field_value", records=r, field="medication_name", distinct=True)
    assert [(v["value"], v["rows"]) for v in result["values"]] == [("Metformin 500 MG Oral Tablet", 2), (VANCO, 5)]
    assert result["count"] == 2 and result["rows"] == 7


def test_get_by_index_and_find_extreme_show_the_whole_row():
    ctx = make_ctx()
    r = fetch(ctx, "observation", item="a1c")
    picked = call(ctx, "get_by_index", records=r, index=-1)["row"]
    assert picked["interpretation"] == "H" and "ref_low" in picked and "patient_id" not in picked
    extreme = call(ctx, "find_extreme", records=r, mode="max")["row"]
    assert extreme["ref"] == "Observation/a2" and extreme["time"] == "2023-11-20T09:00:00+00:00"
