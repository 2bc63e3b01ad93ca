-- Canonical view: observation (one row per Observation plus one row per component).
-- Source table: map_observation (mappings/Observation.json; its unionAll yields the Observation's own row,
-- is_component = false, and one row per component, is_component = true).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
SELECT
    o.patient_id,
    o.ref,
    o.is_component,
    CASE WHEN o.is_component THEN coalesce(o.panel_text, o.panel_display, o.panel_code) END AS parent_name,
    CASE WHEN o.is_component THEN coalesce(o.panel_loinc_code, o.panel_code) END AS parent_code,
    coalesce(o.code_text, o.code_display, o.code) AS name,
    -- the LOINC coding wherever it sits (a local code may come first), else the first coding
    coalesce(o.loinc_code, o.code) AS code,
    CASE WHEN o.loinc_code IS NOT NULL THEN 'http://loinc.org' ELSE o.code_system END AS code_system,
    o.category,
    coalesce(CAST(o.value_quantity AS DOUBLE), CAST(o.value_integer AS DOUBLE)) AS value,
    o.value_comparator,
    coalesce(
        o.value_str,
        o.value_concept_text,
        o.value_concept_display,
        CASE WHEN o.value_boolean THEN 'true' WHEN NOT o.value_boolean THEN 'false' END
    ) AS value_string,
    o.value_code,
    coalesce(o.value_unit_text, o.value_unit_code) AS unit,
    -- the result as a clinician reads it: comparator + number + unit ('>60 mL/min/{1.73_m2}'), else the text result
    CASE
        WHEN coalesce(o.value_quantity, o.value_integer) IS NOT NULL THEN
            coalesce(o.value_comparator, '')
            || regexp_replace(CAST(coalesce(CAST(o.value_quantity AS DOUBLE), CAST(o.value_integer AS DOUBLE)) AS VARCHAR), '\.0$', '')
            || coalesce(' ' || coalesce(o.value_unit_text, o.value_unit_code), '')
        ELSE coalesce(
            o.value_str,
            o.value_concept_text,
            o.value_concept_display,
            CASE WHEN o.value_boolean THEN 'true' WHEN NOT o.value_boolean THEN 'false' END
        )
    END AS value_display,
    TRY_CAST(o.time_raw AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(o.time_raw) AS time_offset,
    TRY_CAST(o.issued AS TIMESTAMPTZ) AS issued,
    utc_offset_minutes(o.issued) AS issued_offset,
    o.status,
    o.ref_low,
    o.ref_high,
    o.ref_range_text,
    o.interpretation,
    o.data_absent_reason,
    o.encounter_ref
FROM (
    SELECT *, coalesce(effective_datetime, effective_period_start, effective_instant, issued) AS time_raw
    FROM map_observation
) AS o
