-- utc_offset_minutes(t): minutes east of UTC of the offset a FHIR dateTime string was written with
-- (-300 for "2025-06-12T22:10:00-05:00", 0 for "...Z"; NULL for a date, or a time written without one).
-- The views keep it beside each instant (<time>_offset) so a day or a clock time is read as the record wrote it.
-- Registered on every connection that builds views (fhirqa.store.generation.register_view_macros).
CREATE OR REPLACE MACRO utc_offset_minutes(t) AS
    CASE WHEN t LIKE '%T%Z' THEN 0
        ELSE 60 * TRY_CAST(regexp_extract(t, 'T.+([+-]\d\d):\d\d$', 1) AS INTEGER)
            + TRY_CAST(regexp_extract(t, 'T.+([+-])\d\d:\d\d$', 1) || right(t, 2) AS INTEGER)
    END
