-- Canonical view: immunization (one row per Immunization).
-- Source table: map_immunization (mappings/Immunization.json).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
SELECT
    i.patient_id,
    i.ref,
    coalesce(i.code_text, i.code_display, i.code) AS name,
    -- the CVX coding wherever it sits, else the first coding
    coalesce(i.cvx_code, i.code) AS code,
    CASE WHEN i.cvx_code IS NOT NULL THEN 'http://hl7.org/fhir/sid/cvx' ELSE i.code_system END AS code_system,
    i.status,
    TRY_CAST(i.time AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(i.time) AS time_offset,
    i.occurrence_string,
    i.primary_source,
    i.lot_number,
    i.dose_quantity,
    i.dose_unit,
    i.encounter_ref
FROM map_immunization AS i
