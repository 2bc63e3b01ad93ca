-- Canonical view: encounter (one row per Encounter).
-- Source tables: map_encounter (mappings/Encounter.json); map_condition for the name of a reasonReference;
-- map_practitioner and map_organization for the names of a participant and of the serviceProvider when the
-- encounter gives only references (Synthea); map_explanation_of_benefit for the payer of the visit.
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
),
practitioner_names AS (
    SELECT ref, min(coalesce(name_text, nullif(trim(coalesce(name_given, '') || ' ' || coalesce(name_family, '')), '')))
        AS practitioner_name
    FROM map_practitioner
    GROUP BY ref
),
organization_names AS (
    SELECT ref, min(name) AS organization_name
    FROM map_organization
    GROUP BY ref
),
-- one payer per encounter (an encounter billed twice keeps the first payer by name), so the view keeps one row
-- per Encounter
payers AS (
    SELECT patient_id, encounter_ref, min(coalesce(coverage_display, any_coverage_display, insurer_display)) AS payer
    FROM map_explanation_of_benefit
    WHERE encounter_ref IS NOT NULL
    GROUP BY patient_id, encounter_ref
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
    -- the organization's name: the encounter's display, else the referenced Organization's name, else the reference
    coalesce(e.service_provider_display, o.organization_name, e.service_provider_ref) AS service_provider,
    e.service_provider_ref,
    e.location,
    -- who saw the patient: the first participant's display, else the referenced Practitioner's given + family name
    coalesce(e.practitioner, pr.practitioner_name) AS practitioner,
    e.practitioner_ref,
    -- who paid: the coverage of the claim adjudication (ExplanationOfBenefit) that bills this encounter
    pay.payer
FROM map_encounter AS e
LEFT JOIN condition_names AS c ON c.ref = e.reason_ref
LEFT JOIN practitioner_names AS pr ON pr.ref = e.practitioner_ref
LEFT JOIN organization_names AS o ON o.ref = e.service_provider_ref
LEFT JOIN payers AS pay ON pay.patient_id = e.patient_id AND pay.encounter_ref = e.ref
LEFT JOIN encounter_class AS k
    ON k.code = upper(e.class_code)
    AND (k.system IS NULL OR e.class_system LIKE '%' || k.system || '%')
