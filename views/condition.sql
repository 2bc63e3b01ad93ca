-- Canonical view: condition (one row per Condition).
-- Source table: map_condition (mappings/Condition.json).
SELECT
    c.patient_id,
    c.ref,
    coalesce(c.code_text, c.code_display, c.code) AS name,
    c.code,
    c.code_system,
    c.clinical_status,
    c.verification_status,
    c.category,
    c.severity,
    TRY_CAST(coalesce(c.onset_datetime, c.onset_period_start) AS TIMESTAMPTZ) AS onset_time,
    TRY_CAST(coalesce(c.abatement_datetime, c.abatement_period_start) AS TIMESTAMPTZ) AS abatement_time,
    TRY_CAST(c.recorded_time AS TIMESTAMPTZ) AS recorded_time,
    c.encounter_ref
FROM map_condition AS c
