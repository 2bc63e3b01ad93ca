-- Canonical view: allergy (one row per AllergyIntolerance).
-- Source table: map_allergy_intolerance (mappings/AllergyIntolerance.json).
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
    TRY_CAST(coalesce(a.onset_datetime, a.onset_period_start) AS TIMESTAMPTZ) AS onset_time,
    TRY_CAST(a.recorded_time AS TIMESTAMPTZ) AS recorded_time,
    TRY_CAST(a.last_occurrence AS TIMESTAMPTZ) AS last_occurrence,
    a.encounter_ref
FROM map_allergy_intolerance AS a
