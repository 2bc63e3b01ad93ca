-- Canonical view: immunization (one row per Immunization).
-- Source table: map_immunization (mappings/Immunization.json).
SELECT
    i.patient_id,
    i.ref,
    coalesce(i.code_text, i.code_display, i.code) AS name,
    -- the CVX coding wherever it sits, else the first coding
    coalesce(i.cvx_code, i.code) AS code,
    CASE WHEN i.cvx_code IS NOT NULL THEN 'http://hl7.org/fhir/sid/cvx' ELSE i.code_system END AS code_system,
    i.status,
    TRY_CAST(i.time AS TIMESTAMPTZ) AS time,
    i.occurrence_string,
    i.primary_source,
    i.lot_number,
    i.dose_quantity,
    i.dose_unit,
    i.encounter_ref
FROM map_immunization AS i
