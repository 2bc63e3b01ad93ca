-- Canonical view: medication (one row per medication event).
-- A MedicationRequest, the Medication it names, and its dispenses, administrations (and statements) read as
-- one entry grouped by request_ref.
-- Source tables: map_medication_request, map_medication_dispense, map_medication_administration,
-- map_medication_statement (one row per resource each), map_medication (referenced Medication resources),
-- map_condition (names of reasonReference conditions).
WITH
medication_resources AS (
    SELECT
        ref,
        min(coalesce(code_text, code_display, code)) AS medication_name,
        min(code) AS medication_code,
        min(code_system) AS medication_system
    FROM map_medication
    GROUP BY ref
),
condition_names AS (
    SELECT ref, min(coalesce(code_text, code_display, code)) AS condition_name
    FROM map_condition
    GROUP BY ref
),
events AS (
    SELECT
        patient_id, ref, 'request' AS kind, ref AS request_ref,
        medication_ref, medication_cc_text, medication_cc_display, medication_cc_code, medication_cc_system,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        status, intent,
        time AS time_raw,
        end_time AS end_time_raw,
        CAST(dose AS DOUBLE) AS dose, dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT) AS frequency, CAST(period AS DOUBLE) AS period, period_unit,
        as_needed, as_needed_reason, dosage_text,
        CAST(NULL AS DOUBLE) AS rate, CAST(NULL AS VARCHAR) AS rate_unit,
        CAST(quantity AS DOUBLE) AS quantity, quantity_unit_text, quantity_unit_code,
        CAST(days_supply AS DOUBLE) AS days_supply,
        CAST(refills AS BIGINT) AS refills,
        category, requester,
        reason_text, reason_display, reason_code, reason_ref, reason_ref_display,
        encounter_ref
    FROM map_medication_request
    UNION ALL
    SELECT
        patient_id, ref, 'dispense' AS kind, request_ref,
        medication_ref, medication_cc_text, medication_cc_display, medication_cc_code, medication_cc_system,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        status, CAST(NULL AS VARCHAR) AS intent,
        coalesce(when_handed_over, when_prepared) AS time_raw,
        CAST(NULL AS VARCHAR) AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT), CAST(period AS DOUBLE), period_unit,
        as_needed, as_needed_reason, dosage_text,
        CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR),
        CAST(quantity AS DOUBLE), quantity_unit_text, quantity_unit_code,
        CAST(days_supply AS DOUBLE),
        CAST(NULL AS BIGINT),
        CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        CAST(NULL AS VARCHAR),
        encounter_ref
    FROM map_medication_dispense
    UNION ALL
    SELECT
        patient_id, ref, 'administration' AS kind, request_ref,
        medication_ref, medication_cc_text, medication_cc_display, medication_cc_code, medication_cc_system,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        status, CAST(NULL AS VARCHAR) AS intent,
        coalesce(effective_datetime, effective_period_start) AS time_raw,
        effective_period_end AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(NULL AS BIGINT), CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR),
        CAST(NULL AS BOOLEAN), CAST(NULL AS VARCHAR), dosage_text,
        CAST(rate AS DOUBLE), rate_unit,
        CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        CAST(NULL AS DOUBLE),
        CAST(NULL AS BIGINT),
        CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        reason_text, reason_display, reason_code, reason_ref, reason_ref_display,
        encounter_ref
    FROM map_medication_administration
    UNION ALL
    SELECT
        patient_id, ref, 'statement' AS kind,
        CASE WHEN based_on_ref LIKE 'MedicationRequest/%' THEN based_on_ref END AS request_ref,
        medication_ref, medication_cc_text, medication_cc_display, medication_cc_code, medication_cc_system,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        status, CAST(NULL AS VARCHAR) AS intent,
        coalesce(effective_datetime, effective_period_start, date_asserted) AS time_raw,
        effective_period_end AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT), CAST(period AS DOUBLE), period_unit,
        as_needed, as_needed_reason, dosage_text,
        CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR),
        CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        CAST(NULL AS DOUBLE),
        CAST(NULL AS BIGINT),
        CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
        reason_text, reason_display, reason_code, reason_ref, reason_ref_display,
        encounter_ref
    FROM map_medication_statement
),
-- The event's own medication: inline CodeableConcept, else the referenced Medication resource, else the
-- contained Medication (reference '#id').
resolved AS (
    SELECT
        e.*,
        coalesce(
            e.medication_cc_text, e.medication_cc_display, e.medication_cc_code,
            m.medication_name,
            CASE WHEN e.medication_ref LIKE '#%' THEN
                coalesce(e.contained_medication_text, e.contained_medication_display, e.contained_medication_code)
            END
        ) AS own_name,
        CASE
            WHEN e.medication_cc_code IS NOT NULL THEN e.medication_cc_code
            WHEN m.medication_code IS NOT NULL THEN m.medication_code
            WHEN e.medication_ref LIKE '#%' THEN e.contained_medication_code
        END AS own_code,
        CASE
            WHEN e.medication_cc_code IS NOT NULL THEN e.medication_cc_system
            WHEN m.medication_code IS NOT NULL THEN m.medication_system
            WHEN e.medication_ref LIKE '#%' THEN e.contained_medication_system
        END AS own_system
    FROM events AS e
    LEFT JOIN medication_resources AS m ON m.ref = e.medication_ref
),
request_medications AS (
    SELECT ref, min(own_name) AS request_name, min(own_code) AS request_code, min(own_system) AS request_system
    FROM resolved
    WHERE kind = 'request'
    GROUP BY ref
),
final AS (
    SELECT
        r.*,
        -- per-day multiplier numerator: dose x frequency per period, period in UCUM time units
        CASE r.period_unit
            WHEN 's' THEN 1.0 WHEN 'min' THEN 60.0 WHEN 'h' THEN 3600.0 WHEN 'd' THEN 86400.0
            WHEN 'wk' THEN 604800.0 WHEN 'mo' THEN 2592000.0 WHEN 'a' THEN 31536000.0
        END AS period_seconds
    FROM resolved AS r
)
SELECT
    f.patient_id,
    f.ref,
    f.kind,
    f.request_ref,
    CASE WHEN f.medication_ref NOT LIKE '#%' THEN f.medication_ref END AS medication_ref,
    coalesce(f.own_name, CASE WHEN f.kind <> 'request' THEN q.request_name END) AS medication_name,
    CASE WHEN f.own_name IS NOT NULL OR f.kind = 'request' THEN f.own_code ELSE q.request_code END AS medication_code,
    CASE WHEN f.own_name IS NOT NULL OR f.kind = 'request' THEN f.own_system ELSE q.request_system END
        AS medication_system,
    f.status,
    f.intent,
    TRY_CAST(f.time_raw AS TIMESTAMPTZ) AS time,
    TRY_CAST(f.end_time_raw AS TIMESTAMPTZ) AS end_time,
    f.dose,
    coalesce(f.dose_unit_text, f.dose_unit_code) AS dose_unit,
    coalesce(f.route_text, f.route_display, f.route_code) AS route,
    f.frequency,
    f.period,
    f.period_unit,
    f.as_needed,
    f.as_needed_reason,
    -- daily dose = dose x frequency per period, converted to per day; NULL unless all parts are present
    CASE
        WHEN f.dose IS NOT NULL AND f.frequency IS NOT NULL AND f.period > 0 AND f.period_seconds IS NOT NULL
        THEN f.dose * f.frequency * 86400.0 / (f.period * f.period_seconds)
    END AS daily_dose,
    NULLIF(f.dosage_text, '') AS dosage_text,  -- join() of no text may give ''
    f.rate,
    f.rate_unit,
    f.quantity,
    coalesce(f.quantity_unit_text, f.quantity_unit_code) AS quantity_unit,
    f.days_supply,
    f.refills,
    f.category,
    f.requester,
    coalesce(f.reason_text, f.reason_display, f.reason_ref_display, c.condition_name) AS reason_name,
    f.reason_code,
    f.reason_ref,
    f.encounter_ref
FROM final AS f
LEFT JOIN request_medications AS q ON q.ref = f.request_ref AND f.kind <> 'request'
LEFT JOIN condition_names AS c ON c.ref = f.reason_ref
