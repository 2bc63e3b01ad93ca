-- Canonical view: encounter (one row per Encounter).
-- Source tables: map_encounter (mappings/Encounter.json); map_condition for the name of a reasonReference.
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH
-- BEGIN code table encounter_class (generated from views/data/encounter_class.csv: python -m fhirqa.store.codetables)
encounter_class (code, system, class_code, class_name, source) AS (
    VALUES
        ('AMB', NULL, 'AMB', 'ambulatory', 'HL7 v3 ActCode _ActEncounterCode'),
        ('EMER', NULL, 'EMER', 'emergency', 'HL7 v3 ActCode _ActEncounterCode'),
        ('FLD', NULL, 'FLD', 'field', 'HL7 v3 ActCode _ActEncounterCode'),
        ('HH', NULL, 'HH', 'home health', 'HL7 v3 ActCode _ActEncounterCode'),
        ('IMP', NULL, 'IMP', 'inpatient', 'HL7 v3 ActCode _ActEncounterCode'),
        ('ACUTE', NULL, 'IMP', 'inpatient acute', 'HL7 v3 ActCode: specialisation of IMP'),
        ('NONAC', NULL, 'IMP', 'inpatient non-acute', 'HL7 v3 ActCode: specialisation of IMP'),
        ('OBSENC', NULL, 'OBSENC', 'observation', 'HL7 v3 ActCode _ActEncounterCode'),
        ('PRENC', NULL, 'PRENC', 'pre-admission', 'HL7 v3 ActCode _ActEncounterCode'),
        ('SS', NULL, 'SS', 'short stay', 'HL7 v3 ActCode _ActEncounterCode'),
        ('VR', NULL, 'VR', 'virtual', 'HL7 v3 ActCode _ActEncounterCode'),
        ('I', 'v2-0004', 'IMP', 'inpatient', 'HL7 v2 table 0004 patient class'),
        ('E', 'v2-0004', 'EMER', 'emergency', 'HL7 v2 table 0004 patient class'),
        ('O', 'v2-0004', 'AMB', 'outpatient', 'HL7 v2 table 0004 patient class'),
        ('P', 'v2-0004', 'PRENC', 'pre-admission', 'HL7 v2 table 0004 patient class')
),
-- END code table encounter_class
condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
)
SELECT
    e.patient_id,
    e.ref,
    e.status,
    -- the class rolled up to its v3 _ActEncounterCode (ACUTE, NONAC -> IMP; v2-0004 I -> IMP …), else as sent
    coalesce(k.class_code, e.class_code) AS class_code,
    e.class_system,
    -- readable name of the class as sent (ACUTE stays 'inpatient acute')
    coalesce(k.class_name, e.class_display, lower(e.class_code)) AS class_name,
    e.class_code AS class_code_original,
    coalesce(e.type_text, e.type_display, e.type_code) AS type_name,
    e.type_code,
    e.type_system,
    coalesce(e.reason_text, e.reason_display, e.reason_ref_display, c.condition_name) AS reason_name,
    e.reason_code,
    e.reason_ref,
    TRY_CAST(e.start_time AS TIMESTAMPTZ) AS start_time,
    utc_offset_minutes(e.start_time) AS start_time_offset,
    TRY_CAST(e.end_time AS TIMESTAMPTZ) AS end_time,
    utc_offset_minutes(e.end_time) AS end_time_offset,
    coalesce(e.discharge_disposition_text, e.discharge_disposition_display, e.discharge_disposition_code)
        AS discharge_disposition,
    coalesce(e.service_provider_display, e.service_provider_ref) AS service_provider,
    e.location,
    e.practitioner
FROM map_encounter AS e
LEFT JOIN condition_names AS c ON c.ref = e.reason_ref
LEFT JOIN encounter_class AS k
    ON k.code = upper(e.class_code)
    AND (k.system IS NULL OR e.class_system LIKE '%' || k.system || '%')
