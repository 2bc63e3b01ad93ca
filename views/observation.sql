-- Canonical view: observation (one row per Observation plus one row per component).
-- Source table: map_observation (mappings/Observation.json; its unionAll yields the Observation's own row,
-- is_component = false, and one row per component, is_component = true).
SELECT
    o.patient_id,
    o.ref,
    o.is_component,
    CASE WHEN o.is_component THEN coalesce(o.panel_text, o.panel_display, o.panel_code) END AS parent_name,
    CASE WHEN o.is_component THEN o.panel_code END AS parent_code,
    coalesce(o.code_text, o.code_display, o.code) AS name,
    o.code,
    o.code_system,
    o.category,
    coalesce(CAST(o.value_quantity AS DOUBLE), CAST(o.value_integer AS DOUBLE)) AS value,
    coalesce(
        o.value_str,
        o.value_concept_text,
        o.value_concept_display,
        CASE WHEN o.value_boolean THEN 'true' WHEN NOT o.value_boolean THEN 'false' END
    ) AS value_string,
    o.value_code,
    coalesce(o.value_unit_text, o.value_unit_code) AS unit,
    TRY_CAST(coalesce(o.effective_datetime, o.effective_period_start, o.effective_instant, o.issued) AS TIMESTAMPTZ)
        AS time,
    TRY_CAST(o.issued AS TIMESTAMPTZ) AS issued,
    o.status,
    o.ref_low,
    o.ref_high,
    o.interpretation,
    o.data_absent_reason,
    o.encounter_ref
FROM map_observation AS o
