-- Canonical view: imaging (one row per ImagingStudy series: its modality and body site; a study without series
-- gives one row whose series columns are empty). A study's own columns repeat on each of its series rows, so
-- count studies by ref.
-- Source tables: map_imaging_study (mappings/ImagingStudy.json; its forEachOrNull over series makes the rows);
-- map_condition for the name of a reasonReference.
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
)
SELECT
    s.patient_id,
    s.ref,
    -- what was done: the ordered procedure when the study names one, else the kind of imaging (modality)
    coalesce(s.procedure_text, s.procedure_display, s.series_modality_display, s.study_modality_display,
             s.series_modality_code, s.study_modality_code, s.procedure_code, s.description) AS name,
    -- the series' modality, else the study's first modality
    coalesce(s.series_modality_display, s.series_modality_code, s.study_modality_display, s.study_modality_code) AS modality,
    coalesce(s.series_modality_code, s.study_modality_code) AS modality_code,
    CASE WHEN s.series_modality_code IS NOT NULL THEN s.series_modality_system ELSE s.study_modality_system END AS modality_system,
    coalesce(s.body_site_display, s.body_site_code) AS body_site,
    s.body_site_code,
    s.body_site_system,
    coalesce(s.laterality_display, s.laterality_code) AS laterality,
    s.procedure_code,
    s.procedure_system,
    s.status,
    TRY_CAST(s.time_raw AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(s.time_raw) AS time_offset,
    TRY_CAST(s.started AS TIMESTAMPTZ) AS started,
    utc_offset_minutes(s.started) AS started_offset,
    s.number_of_series,
    s.number_of_instances,
    s.series_uid,
    s.series_number,
    s.series_description,
    s.series_instances,
    s.description,
    coalesce(s.reason_text, s.reason_display, s.reason_ref_display, c.condition_name, s.reason_code) AS reason_name,
    s.reason_code,
    s.reason_ref,
    s.location,
    s.encounter_ref
FROM (SELECT *, coalesce(series_started, started) AS time_raw FROM map_imaging_study) AS s
LEFT JOIN condition_names AS c ON c.ref = s.reason_ref
