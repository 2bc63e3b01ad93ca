-- Canonical view: encounter (one row per Encounter).
-- Source tables: map_encounter (mappings/Encounter.json); map_condition for the name of a reasonReference.
WITH condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
)
SELECT
    e.patient_id,
    e.ref,
    e.status,
    e.class_code,
    e.class_system,
    -- readable name of the v3 ActCode encounter class
    CASE upper(e.class_code)
        WHEN 'AMB' THEN 'ambulatory'
        WHEN 'EMER' THEN 'emergency'
        WHEN 'IMP' THEN 'inpatient'
        WHEN 'ACUTE' THEN 'inpatient acute'
        WHEN 'NONAC' THEN 'inpatient non-acute'
        WHEN 'OBSENC' THEN 'observation'
        WHEN 'PRENC' THEN 'pre-admission'
        WHEN 'SS' THEN 'short stay'
        WHEN 'VR' THEN 'virtual'
        WHEN 'HH' THEN 'home health'
        WHEN 'FLD' THEN 'field'
        ELSE coalesce(e.class_display, lower(e.class_code))
    END AS class_name,
    coalesce(e.type_text, e.type_display, e.type_code) AS type_name,
    e.type_code,
    e.type_system,
    coalesce(e.reason_text, e.reason_display, e.reason_ref_display, c.condition_name) AS reason_name,
    e.reason_code,
    e.reason_ref,
    TRY_CAST(e.start_time AS TIMESTAMPTZ) AS start_time,
    TRY_CAST(e.end_time AS TIMESTAMPTZ) AS end_time,
    coalesce(e.discharge_disposition_text, e.discharge_disposition_display, e.discharge_disposition_code)
        AS discharge_disposition,
    coalesce(e.service_provider_display, e.service_provider_ref) AS service_provider,
    e.location,
    e.practitioner
FROM map_encounter AS e
LEFT JOIN condition_names AS c ON c.ref = e.reason_ref
