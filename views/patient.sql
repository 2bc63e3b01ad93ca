-- Canonical view: patient (one row per Patient).
-- Source table: map_patient (mappings/Patient.json). Direct copies keep the mapping column's name.
-- Columns filled by FHIRPath join() are read through NULLIF(x, ''): engines differ on join() of nothing ('' or empty).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
SELECT
    p.patient_id,
    p.ref,
    -- name: display-ready "Given Family"; Synthea appends digits to names ("Marine542"): strip digits that
    -- follow a letter. regexp_replace(x, pattern, '\1', 'g') is DuckDB/Postgres syntax (Spark: '$1', no flag).
    NULLIF(TRIM(regexp_replace(p.name_raw, '([^0-9 ])[0-9]+', '\1', 'g')), '') AS name,
    p.name_raw,
    coalesce(NULLIF(p.official_given, ''), NULLIF(p.first_given, '')) AS given,
    coalesce(p.official_family, p.first_family) AS family,
    coalesce(NULLIF(p.official_prefix, ''), NULLIF(p.first_prefix, '')) AS prefix,
    -- FHIR dates may be partial (YYYY or YYYY-MM): complete them to the first day before casting.
    TRY_CAST(
        CASE
            WHEN length(p.birth_date) = 4 THEN p.birth_date || '-01-01'
            WHEN length(p.birth_date) = 7 THEN p.birth_date || '-01'
            ELSE p.birth_date
        END AS DATE) AS birth_date,
    p.gender,
    coalesce(p.deceased_boolean, p.deceased_time IS NOT NULL) AS deceased,
    TRY_CAST(p.deceased_time AS TIMESTAMPTZ) AS deceased_time,
    utc_offset_minutes(p.deceased_time) AS deceased_time_offset,
    p.mrn,
    p.city,
    p.state,
    p.postal_code,
    p.country,
    coalesce(p.marital_status_text, p.marital_status_display, p.marital_status_code) AS marital_status,
    p.marital_status_code,
    coalesce(p.race_text, p.race_display) AS race,
    p.race_code,
    coalesce(p.ethnicity_text, p.ethnicity_display) AS ethnicity,
    p.ethnicity_code,
    p.birth_sex,
    p.language
FROM (
    SELECT
        m.*,
        coalesce(
            NULLIF(TRIM(concat_ws(' ',
                coalesce(m.official_first_given, m.first_first_given),
                coalesce(m.official_family, m.first_family))), ''),
            m.name_text) AS name_raw
    FROM map_patient AS m
) AS p
