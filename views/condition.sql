-- Canonical view: condition (one row per Condition).
-- Source tables: map_condition (mappings/Condition.json); map_patient (birth date, for onsetAge/abatementAge).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH
births AS (
    -- full birth dates only: an age on a partial date (YYYY, YYYY-MM) would place the instant up to a year off
    SELECT patient_id, min(TRY_CAST(birth_date AS DATE)) AS birth_date
    FROM map_patient
    WHERE length(birth_date) = 10
    GROUP BY patient_id
),
-- BEGIN code table age_units (generated from views/data/age_units.csv: python -m fhirqa.store.codetables)
age_units (unit, months, days) AS (
    VALUES
        ('a', 12, NULL),
        ('y', 12, NULL),
        ('yr', 12, NULL),
        ('yrs', 12, NULL),
        ('year', 12, NULL),
        ('years', 12, NULL),
        ('mo', 1, NULL),
        ('month', 1, NULL),
        ('months', 1, NULL),
        ('wk', NULL, 7),
        ('week', NULL, 7),
        ('weeks', NULL, 7),
        ('d', NULL, 1),
        ('day', NULL, 1),
        ('days', NULL, 1)
),
-- END code table age_units
ages AS (
    -- an Age in UCUM units (a, mo, wk, d) or common unit words: years and months as months, weeks and days as days
    SELECT
        c.*,
        b.birth_date AS patient_birth_date,
        c.onset_age * onset_unit.months AS onset_age_months,
        c.onset_age * onset_unit.days AS onset_age_days,
        c.abatement_age * abatement_unit.months AS abatement_age_months,
        c.abatement_age * abatement_unit.days AS abatement_age_days
    FROM map_condition AS c
    LEFT JOIN births AS b ON b.patient_id = c.patient_id
    LEFT JOIN age_units AS onset_unit ON onset_unit.unit = coalesce(c.onset_age_unit_code, lower(c.onset_age_unit_text))
    LEFT JOIN age_units AS abatement_unit
        ON abatement_unit.unit = coalesce(c.abatement_age_unit_code, lower(c.abatement_age_unit_text))
),
derived AS (
    SELECT
        a.*,
        -- the instant an Age names: birth date + the age (whole months, else whole days)
        CAST(CAST(coalesce(
            a.patient_birth_date + INTERVAL '1 month' * CAST(round(a.onset_age_months) AS INTEGER),
            a.patient_birth_date + INTERVAL '1 day' * CAST(round(a.onset_age_days) AS INTEGER)
        ) AS TIMESTAMP) AS TIMESTAMPTZ) AS onset_from_age,
        CAST(CAST(coalesce(
            a.patient_birth_date + INTERVAL '1 month' * CAST(round(a.abatement_age_months) AS INTEGER),
            a.patient_birth_date + INTERVAL '1 day' * CAST(round(a.abatement_age_days) AS INTEGER)
        ) AS TIMESTAMP) AS TIMESTAMPTZ) AS abatement_from_age,
        coalesce(a.onset_datetime, a.onset_period_start) AS onset_raw,
        coalesce(a.abatement_datetime, a.abatement_period_start) AS abatement_raw
    FROM ages AS a
)
SELECT
    c.patient_id,
    c.ref,
    coalesce(c.code_text, c.code_display, c.code) AS name,
    -- the standard coding wherever it sits: SNOMED CT, else ICD-10(-CM), else the first coding
    coalesce(c.snomed_code, c.icd10_code, c.code) AS code,
    CASE
        WHEN c.snomed_code IS NOT NULL THEN 'http://snomed.info/sct'
        WHEN c.icd10_code IS NOT NULL THEN c.icd10_system
        ELSE c.code_system
    END AS code_system,
    -- the HL7 condition-clinical coding wherever it sits; without one, any abatement[x] reads 'inactive'
    -- (con-4: an abated condition is inactive, resolved or in remission); else the first coding
    coalesce(c.clinical_status_hl7, CASE WHEN c.abatement_exists THEN 'inactive' END, c.clinical_status)
        AS clinical_status,
    coalesce(c.verification_status_hl7, c.verification_status) AS verification_status,
    c.category,
    c.severity,
    coalesce(TRY_CAST(c.onset_raw AS TIMESTAMPTZ), c.onset_from_age) AS onset_time,
    utc_offset_minutes(c.onset_raw) AS onset_time_offset,
    -- onsetAge in years (months, weeks, days converted); NULL for every other onset[x]
    coalesce(c.onset_age_months / 12.0, c.onset_age_days / 365.25) AS onset_age,
    c.onset_string,
    coalesce(TRY_CAST(c.abatement_raw AS TIMESTAMPTZ), c.abatement_from_age) AS abatement_time,
    utc_offset_minutes(c.abatement_raw) AS abatement_time_offset,
    c.abatement_string,
    coalesce(c.abatement_exists, false) AS abated,
    TRY_CAST(c.recorded_time AS TIMESTAMPTZ) AS recorded_time,
    utc_offset_minutes(c.recorded_time) AS recorded_time_offset,
    c.encounter_ref
FROM derived AS c
