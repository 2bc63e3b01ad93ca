-- Canonical view: note (decoded clinical text).
-- One row per DocumentReference content attachment with inline text/plain or text/html data (or with a url:
-- then text is NULL and url is kept), and one row per DiagnosticReport with presentedForm data and/or a
-- conclusion. Source tables: map_document_reference, map_diagnostic_report; map_practitioner for the name of an
-- author (DocumentReference.author, DiagnosticReport.performer) given only as a reference (as views/encounter.sql
-- names a visit's clinician).
--
-- DuckDB-specific expression (isolated, repeated in both branches): base64 -> UTF-8 text
--     TRY(decode(from_base64(regexp_replace(data, '\s', '', 'g'))))
-- from_base64 gives a BLOB, decode() reads it as UTF-8; TRY() yields NULL for invalid base64 or UTF-8.
-- Other engines: Spark  CAST(unbase64(data) AS STRING);  Postgres  convert_from(decode(data, 'base64'), 'UTF8').
-- HTML: tags are replaced by spaces (regexp_replace(..., '<[^>]*>', ' ', 'g')).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH practitioner_names AS (
    SELECT ref, min(coalesce(name_text, nullif(trim(coalesce(name_given, '') || ' ' || coalesce(name_family, '')), '')))
        AS practitioner_name
    FROM map_practitioner
    GROUP BY ref
)
SELECT
    d.patient_id,
    d.ref,
    'DocumentReference' AS source,
    coalesce(d.type_text, d.type_display, d.note_type_code) AS note_type,
    d.note_type_code,
    d.category,
    TRY_CAST(d.time_raw AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(d.time_raw) AS time_offset,
    d.status,
    d.doc_status,
    d.content_type,
    CASE
        WHEN d.data IS NULL THEN NULL
        WHEN lower(d.content_type) LIKE 'text/plain%'
            THEN TRY(decode(from_base64(regexp_replace(d.data, '\s', '', 'g'))))
        WHEN lower(d.content_type) LIKE 'text/html%'
            THEN regexp_replace(TRY(decode(from_base64(regexp_replace(d.data, '\s', '', 'g')))), '<[^>]*>', ' ', 'g')
    END AS text,
    d.url,
    d.title,
    d.description,
    CAST(NULL AS VARCHAR) AS conclusion,
    -- who wrote it: the author's display, else the referenced Practitioner's name, else the reference
    coalesce(d.author_display, pd.practitioner_name, d.author_ref) AS author,
    d.encounter_ref
FROM (SELECT *, coalesce(date, context_period_start) AS time_raw FROM map_document_reference) AS d
LEFT JOIN practitioner_names AS pd ON pd.ref = d.author_ref
WHERE (d.data IS NOT NULL
       AND (lower(d.content_type) LIKE 'text/plain%' OR lower(d.content_type) LIKE 'text/html%'))
   OR d.url IS NOT NULL
UNION ALL
SELECT
    r.patient_id,
    r.ref,
    'DiagnosticReport' AS source,
    coalesce(r.code_text, r.code_display, r.code) AS note_type,
    r.code AS note_type_code,
    r.category,
    TRY_CAST(r.time_raw AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(r.time_raw) AS time_offset,
    r.status,
    CAST(NULL AS VARCHAR) AS doc_status,
    r.content_type,
    coalesce(
        CASE
            WHEN r.data IS NULL THEN NULL
            WHEN lower(r.content_type) LIKE 'text/plain%'
                THEN TRY(decode(from_base64(regexp_replace(r.data, '\s', '', 'g'))))
            WHEN lower(r.content_type) LIKE 'text/html%'
                THEN regexp_replace(TRY(decode(from_base64(regexp_replace(r.data, '\s', '', 'g')))), '<[^>]*>', ' ', 'g')
        END,
        r.conclusion
    ) AS text,
    r.url,
    CAST(NULL AS VARCHAR) AS title,
    CAST(NULL AS VARCHAR) AS description,
    r.conclusion,
    coalesce(r.author_display, pr.practitioner_name, r.author_ref) AS author,
    r.encounter_ref
FROM (SELECT *, coalesce(effective_datetime, effective_period_start, issued) AS time_raw FROM map_diagnostic_report) AS r
LEFT JOIN practitioner_names AS pr ON pr.ref = r.author_ref
WHERE r.data IS NOT NULL OR r.conclusion IS NOT NULL
