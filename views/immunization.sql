-- Canonical view: immunization (one row per Immunization).
-- Source table: map_immunization (mappings/Immunization.json).
SELECT
    i.patient_id,
    i.ref,
    coalesce(i.code_text, i.code_display, i.code) AS name,
    i.code,
    i.code_system,
    i.status,
    TRY_CAST(i.time AS TIMESTAMPTZ) AS time,
    i.occurrence_string,
    i.primary_source,
    i.lot_number,
    i.dose_quantity,
    i.dose_unit,
    i.encounter_ref
FROM map_immunization AS i
