-- utc_offset_minutes(t): minutes east of UTC of the offset a FHIR dateTime string was written with
-- (-300 for "2025-06-12T22:10:00-05:00", 0 for "...Z"; NULL for a date, or a time written without one).
-- The views keep it beside each instant (<time>_offset) so a day or a clock time is read as the record wrote it.
-- Registered on every connection that builds views (fhirqa.store.generation.register_view_macros).
-- One regexp_matches tests the form (a 'T', at least one character, then +hh:mm or -hh:mm at the very end; '.' does
-- not cross a line break), and the hours and minutes are read at fixed places from the end. Two regexp_extract
-- calls (one per capture) made this macro the largest cost of building the views: 2.1 us a value against 0.45 us
-- (14,692 Synthea observations, one core), with the same result for every string.
CREATE OR REPLACE MACRO utc_offset_minutes(t) AS
    CASE WHEN t LIKE '%T%Z' THEN 0
        WHEN regexp_matches(t, 'T.+[+-]\d\d:\d\d$')
            THEN 60 * CAST(substr(t, -6, 3) AS INTEGER) + CAST(substr(t, -6, 1) || substr(t, -2, 2) AS INTEGER)
    END
