-- Canonical view: procedure (one row per Procedure).
-- Source tables: map_procedure (mappings/Procedure.json); map_condition for the name of a reasonReference.
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
)
SELECT
    p.patient_id,
    p.ref,
    coalesce(p.code_text, p.code_display, p.code) AS name,
    -- the SNOMED CT coding wherever it sits, else the first coding
    coalesce(p.snomed_code, p.code) AS code,
    CASE WHEN p.snomed_code IS NOT NULL THEN 'http://snomed.info/sct' ELSE p.code_system END AS code_system,
    p.status,
    p.category,
    TRY_CAST(p.start_raw AS TIMESTAMPTZ) AS start_time,
    utc_offset_minutes(p.start_raw) AS start_time_offset,
    TRY_CAST(p.performed_period_end AS TIMESTAMPTZ) AS end_time,
    utc_offset_minutes(p.performed_period_end) AS end_time_offset,
    coalesce(p.reason_text, p.reason_display, p.reason_ref_display, c.condition_name) AS reason_name,
    p.reason_code,
    p.reason_ref,
    coalesce(p.body_site_text, p.body_site_display) AS body_site,
    p.outcome,
    p.encounter_ref
FROM (SELECT *, coalesce(performed_datetime, performed_period_start) AS start_raw FROM map_procedure) AS p
LEFT JOIN condition_names AS c ON c.ref = p.reason_ref
