-- Canonical view: allergy (one row per AllergyIntolerance).
-- Source table: map_allergy_intolerance (mappings/AllergyIntolerance.json).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
SELECT
    a.patient_id,
    a.ref,
    coalesce(a.code_text, a.code_display, a.code) AS name,
    a.code,
    a.code_system,
    a.clinical_status,
    a.verification_status,
    a.type,
    NULLIF(a.category, '') AS category,  -- join() of no category may give ''
    a.criticality,
    coalesce(a.reaction_text, a.reaction_display, a.reaction_code) AS reaction,
    a.reaction_severity,
    TRY_CAST(a.onset_raw AS TIMESTAMPTZ) AS onset_time,
    utc_offset_minutes(a.onset_raw) AS onset_time_offset,
    TRY_CAST(a.recorded_time AS TIMESTAMPTZ) AS recorded_time,
    utc_offset_minutes(a.recorded_time) AS recorded_time_offset,
    TRY_CAST(a.last_occurrence AS TIMESTAMPTZ) AS last_occurrence,
    utc_offset_minutes(a.last_occurrence) AS last_occurrence_offset,
    a.encounter_ref
FROM (SELECT *, coalesce(onset_datetime, onset_period_start) AS onset_raw FROM map_allergy_intolerance) AS a
