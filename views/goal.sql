-- Canonical view: goal (one row per Goal target; a goal without targets gives one row whose target columns are
-- empty). A goal's own columns repeat on each of its target rows, so count goals by ref.
-- Source tables: map_goal (mappings/Goal.json; its forEachOrNull over target makes the rows); map_condition for
-- the name of the condition a goal addresses.
-- Goal times are dates (startDate, statusDate, target.dueDate): midnight UTC, so they have no _offset column.
WITH condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
)
SELECT
    g.patient_id,
    g.ref,
    coalesce(g.description_text, g.description_display, g.description_code) AS name,
    g.description_code,
    g.description_system,
    g.lifecycle_status,
    coalesce(g.achievement_text, g.achievement_display, g.achievement_code) AS achievement_status,
    coalesce(g.category_text, g.category_display, g.category_code) AS category,
    coalesce(g.priority_text, g.priority_display, g.priority_code) AS priority,
    TRY_CAST(g.start_date AS TIMESTAMPTZ) AS start_time,
    coalesce(g.start_event_text, g.start_event_display, g.start_event_code) AS start_event,
    TRY_CAST(g.status_date AS TIMESTAMPTZ) AS status_time,
    g.status_reason,
    coalesce(g.target_measure_text, g.target_measure_display, g.target_measure_code) AS target_measure,
    g.target_measure_code,
    g.target_measure_system,
    coalesce(CAST(g.target_quantity AS DOUBLE), CAST(g.target_integer AS DOUBLE)) AS target_value,
    g.target_comparator,
    g.target_low,
    g.target_high,
    coalesce(g.target_unit_text, g.target_unit_code, g.target_low_unit_text, g.target_low_unit_code,
             g.target_high_unit_text, g.target_high_unit_code) AS target_unit,
    coalesce(
        g.target_string,
        g.target_concept_text,
        g.target_concept_display,
        CASE WHEN g.target_boolean THEN 'true' WHEN NOT g.target_boolean THEN 'false' END
    ) AS target_text,
    -- the target as a clinician reads it: '<7 %', '90-130 mm[Hg]', else the text target
    CASE
        WHEN coalesce(g.target_quantity, g.target_integer) IS NOT NULL THEN
            coalesce(g.target_comparator, '')
            || regexp_replace(CAST(coalesce(CAST(g.target_quantity AS DOUBLE), CAST(g.target_integer AS DOUBLE)) AS VARCHAR), '\.0$', '')
            || coalesce(' ' || coalesce(g.target_unit_text, g.target_unit_code), '')
        WHEN g.target_low IS NOT NULL OR g.target_high IS NOT NULL THEN
            CASE
                WHEN g.target_high IS NULL THEN '>=' || regexp_replace(CAST(CAST(g.target_low AS DOUBLE) AS VARCHAR), '\.0$', '')
                WHEN g.target_low IS NULL THEN '<=' || regexp_replace(CAST(CAST(g.target_high AS DOUBLE) AS VARCHAR), '\.0$', '')
                ELSE regexp_replace(CAST(CAST(g.target_low AS DOUBLE) AS VARCHAR), '\.0$', '') || '-'
                    || regexp_replace(CAST(CAST(g.target_high AS DOUBLE) AS VARCHAR), '\.0$', '')
            END
            || coalesce(' ' || coalesce(g.target_low_unit_text, g.target_low_unit_code, g.target_high_unit_text,
                                        g.target_high_unit_code), '')
        ELSE coalesce(
            g.target_string,
            g.target_concept_text,
            g.target_concept_display,
            CASE WHEN g.target_boolean THEN 'true' WHEN NOT g.target_boolean THEN 'false' END
        )
    END AS target_display,
    TRY_CAST(g.due_date AS TIMESTAMPTZ) AS due_time,
    g.addresses_ref,
    coalesce(g.addresses_ref_display, c.condition_name) AS addresses_name,
    g.expressed_by
FROM map_goal AS g
LEFT JOIN condition_names AS c ON c.ref = g.addresses_ref
