-- Canonical view: care_plan (one row per CarePlan activity; a plan without activities gives one row whose
-- activity columns are empty). A plan's own columns repeat on each of its activity rows, so count plans by ref.
-- Source tables: map_care_plan (mappings/CarePlan.json; its forEachOrNull over activity makes the rows);
-- map_condition for the name of the condition a plan addresses.
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
    -- the plan's own title, else its named category (the generic US Core 'assess-plan' category is skipped)
    coalesce(p.title, p.category_text, p.category_display, p.category_code) AS name,
    p.title,
    p.category_code,
    p.category_system,
    p.description,
    p.status,
    p.intent,
    TRY_CAST(p.start_raw AS TIMESTAMPTZ) AS start_time,
    utc_offset_minutes(p.start_raw) AS start_time_offset,
    TRY_CAST(p.period_end AS TIMESTAMPTZ) AS end_time,
    utc_offset_minutes(p.period_end) AS end_time_offset,
    p.addresses_ref,
    coalesce(p.addresses_ref_display, c.condition_name) AS addresses_name,
    coalesce(p.activity_text, p.activity_display, p.activity_code, p.activity_description,
             p.activity_reference_display) AS activity,
    p.activity_code,
    p.activity_system,
    p.activity_status,
    p.activity_location,
    p.activity_reference,
    p.encounter_ref
FROM (SELECT *, coalesce(period_start, created) AS start_raw FROM map_care_plan) AS p
LEFT JOIN condition_names AS c ON c.ref = p.addresses_ref
