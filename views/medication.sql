-- Canonical view: medication (one row per medication event).
-- A MedicationRequest, the Medication it names, and its dispenses, administrations (and statements) read as
-- one entry grouped by request_ref.
-- Source tables: map_medication_request, map_medication_dispense, map_medication_administration,
-- map_medication_statement (one row per resource each), map_medication (referenced Medication resources),
-- map_condition (names of reasonReference conditions).
-- status_reason: administrations only, why a dose was not given (MedicationAdministration.statusReason).
-- <time>_offset: minutes east of UTC of the offset <time> was written with (-300 for -05:00, 0 for Z; NULL for a
-- date or a time written without one). <time> itself is the UTC instant; the offset gives the record's local
-- calendar day and clock (2025-06-12T22:10:00-05:00 is June 12 there, June 13 in UTC).
WITH
-- BEGIN code table dosage_frequency (generated from views/data/dosage_frequency.csv: python -m fhirqa.store.codetables)
dosage_frequency (term, frequency, period, period_unit, source) AS (
    VALUES
        ('QD', 1, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('BID', 2, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('TID', 3, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('QID', 4, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('AM', 1, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('PM', 1, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('QOD', 1, 2, 'd', 'HL7 v3 GTSAbbreviation'),
        ('Q1H', 1, 1, 'h', 'HL7 v3 GTSAbbreviation'),
        ('Q2H', 1, 2, 'h', 'HL7 v3 GTSAbbreviation'),
        ('Q3H', 1, 3, 'h', 'HL7 v3 GTSAbbreviation'),
        ('Q4H', 1, 4, 'h', 'HL7 v3 GTSAbbreviation'),
        ('Q6H', 1, 6, 'h', 'HL7 v3 GTSAbbreviation'),
        ('Q8H', 1, 8, 'h', 'HL7 v3 GTSAbbreviation'),
        ('BED', 1, 1, 'd', 'HL7 v3 GTSAbbreviation'),
        ('WK', 1, 1, 'wk', 'HL7 v3 GTSAbbreviation'),
        ('MO', 1, 1, 'mo', 'HL7 v3 GTSAbbreviation'),
        ('Q12H', 1, 12, 'h', 'common sig'),
        ('Q24H', 1, 24, 'h', 'common sig'),
        ('Q48H', 1, 48, 'h', 'common sig'),
        ('Q72H', 1, 72, 'h', 'common sig'),
        ('DAILY', 1, 1, 'd', 'common sig'),
        ('QDAY', 1, 1, 'd', 'common sig'),
        ('QHS', 1, 1, 'd', 'common sig'),
        ('HS', 1, 1, 'd', 'common sig'),
        ('QAM', 1, 1, 'd', 'common sig'),
        ('QPM', 1, 1, 'd', 'common sig'),
        ('QWK', 1, 1, 'wk', 'common sig'),
        ('WEEKLY', 1, 1, 'wk', 'common sig'),
        ('MONTHLY', 1, 1, 'mo', 'common sig'),
        ('ONCE DAILY', 1, 1, 'd', 'common sig'),
        ('ONCE A DAY', 1, 1, 'd', 'common sig'),
        ('EVERY DAY', 1, 1, 'd', 'common sig'),
        ('EVERY MORNING', 1, 1, 'd', 'common sig'),
        ('EVERY EVENING', 1, 1, 'd', 'common sig'),
        ('EVERY NIGHT', 1, 1, 'd', 'common sig'),
        ('AT BEDTIME', 1, 1, 'd', 'common sig'),
        ('NIGHTLY', 1, 1, 'd', 'common sig'),
        ('TWICE DAILY', 2, 1, 'd', 'common sig'),
        ('TWICE A DAY', 2, 1, 'd', 'common sig'),
        ('TWO TIMES DAILY', 2, 1, 'd', 'common sig'),
        ('TWO TIMES A DAY', 2, 1, 'd', 'common sig'),
        ('THREE TIMES DAILY', 3, 1, 'd', 'common sig'),
        ('THREE TIMES A DAY', 3, 1, 'd', 'common sig'),
        ('FOUR TIMES DAILY', 4, 1, 'd', 'common sig'),
        ('FOUR TIMES A DAY', 4, 1, 'd', 'common sig'),
        ('EVERY OTHER DAY', 1, 2, 'd', 'common sig'),
        ('ONCE WEEKLY', 1, 1, 'wk', 'common sig'),
        ('ONCE A WEEK', 1, 1, 'wk', 'common sig')
),
-- END code table dosage_frequency
medication_resources AS (
    SELECT
        ref,
        min(coalesce(code_text, code_display, code)) AS medication_name,
        -- the RxNorm coding wherever it sits, else the first coding
        min(coalesce(rxnorm_code, code)) AS medication_code,
        min(CASE WHEN rxnorm_code IS NOT NULL THEN 'http://www.nlm.nih.gov/research/umls/rxnorm' ELSE code_system END) AS medication_system
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
        medication_cc_rxnorm,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        contained_medication_rxnorm,
        status, CAST(NULL AS VARCHAR) AS status_reason, intent,
        time AS time_raw,
        end_time AS end_time_raw,
        CAST(dose AS DOUBLE) AS dose, dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT) AS frequency, CAST(period AS DOUBLE) AS period, period_unit,
        timing_code, timing_code_text,
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
        medication_cc_rxnorm,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        contained_medication_rxnorm,
        status, CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR) AS intent,
        coalesce(when_handed_over, when_prepared) AS time_raw,
        CAST(NULL AS VARCHAR) AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT), CAST(period AS DOUBLE), period_unit,
        timing_code, timing_code_text,
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
        medication_cc_rxnorm,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        contained_medication_rxnorm,
        status,
        -- why the dose was not given (held for low BP, NPO, refused): text, else coding display, else code
        coalesce(status_reason_text, status_reason_display, status_reason_code),
        CAST(NULL AS VARCHAR) AS intent,
        coalesce(effective_datetime, effective_period_start) AS time_raw,
        effective_period_end AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(NULL AS BIGINT), CAST(NULL AS DOUBLE), CAST(NULL AS VARCHAR),
        CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR),
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
        medication_cc_rxnorm,
        contained_medication_text, contained_medication_display, contained_medication_code, contained_medication_system,
        contained_medication_rxnorm,
        status, CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR) AS intent,
        coalesce(effective_datetime, effective_period_start, date_asserted) AS time_raw,
        effective_period_end AS end_time_raw,
        CAST(dose AS DOUBLE), dose_unit_text, dose_unit_code,
        route_text, route_display, route_code,
        CAST(frequency AS BIGINT), CAST(period AS DOUBLE), period_unit,
        timing_code, timing_code_text,
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
        -- codes: the RxNorm coding wherever it sits, else the first coding
        CASE
            WHEN e.medication_cc_code IS NOT NULL THEN coalesce(e.medication_cc_rxnorm, e.medication_cc_code)
            WHEN m.medication_code IS NOT NULL THEN m.medication_code
            WHEN e.medication_ref LIKE '#%' THEN coalesce(e.contained_medication_rxnorm, e.contained_medication_code)
        END AS own_code,
        CASE
            WHEN e.medication_cc_code IS NOT NULL THEN
                CASE WHEN e.medication_cc_rxnorm IS NOT NULL THEN 'http://www.nlm.nih.gov/research/umls/rxnorm' ELSE e.medication_cc_system END
            WHEN m.medication_code IS NOT NULL THEN m.medication_system
            WHEN e.medication_ref LIKE '#%' THEN
                CASE WHEN e.contained_medication_rxnorm IS NOT NULL THEN 'http://www.nlm.nih.gov/research/umls/rxnorm' ELSE e.contained_medication_system END
        END AS own_system,
        -- timing.code (coding, else text) looked up in the code table
        coalesce(e.timing_code, e.timing_code_text) AS timing_code_any,
        coalesce(tc.frequency, tt.frequency) AS code_frequency,
        coalesce(tc.period, tt.period) AS code_period,
        coalesce(tc.period_unit, tt.period_unit) AS code_period_unit,
        -- free text of a request/dispense/statement, lower-cased, blanks collapsed, for the sig parser below
        CASE WHEN e.kind <> 'administration' THEN
            regexp_replace(lower(trim(e.dosage_text)), '\s+', ' ', 'g')
        END AS sig_text
    FROM events AS e
    LEFT JOIN medication_resources AS m ON m.ref = e.medication_ref
    LEFT JOIN dosage_frequency AS tc ON tc.term = upper(trim(e.timing_code))
    LEFT JOIN dosage_frequency AS tt ON tt.term = upper(trim(e.timing_code_text)) AND tc.term IS NULL
),
request_medications AS (
    SELECT ref, min(own_name) AS request_name, min(own_code) AS request_code, min(own_system) AS request_system
    FROM resolved
    WHERE kind = 'request'
    GROUP BY ref
),
-- A plain sig and nothing else: [verb] <number> <unit> [route] <frequency>[.], e.g. 'take 300 mg by mouth twice
-- daily', '1 tab po bid', '500 mg every 8 hours' -> dose, unit, frequency words; the words must then be a term of
-- dosage_frequency or 'every|q <n> hours|days', else nothing is parsed. (Patterns are literals: DuckDB compiles a
-- constant pattern once, a pattern read from a column once per row.)
sig_parts AS (
    SELECT
        r.*,
        regexp_extract(
            r.sig_text,
            '^(?:take|give|inject|inhale|apply|use|administer|instill|chew|dissolve)? ?([0-9]+(?:\.[0-9]+)?) ?(mg|mcg|ug|µg|g|ml|units?|iu|meq|mmol|tabs?|tablets?|caps?|capsules?|puffs?|sprays?|drops?|patch(?:es)?)(?: (?:by mouth|orally|oral|po|sublingually|sl|iv|intravenously|im|intramuscularly|sc|sq|subq|subcutaneously|topically|inhaled|by inhalation|via inhalation|pr|rectally))? ([a-z0-9 ]+?)\.?$',
            ['dose', 'unit', 'words']
        ) AS sig
    FROM resolved AS r
),
sig_parsed AS (
    SELECT
        p.*,
        TRY_CAST(NULLIF(p.sig.dose, '') AS DOUBLE) AS sig_dose,
        NULLIF(p.sig.unit, '') AS sig_unit,
        -- the frequency words: a known term, else 'every <n> hours|days'
        coalesce(CAST(w.frequency AS BIGINT), CASE WHEN p.every.n <> '' THEN CAST(1 AS BIGINT) END) AS sig_frequency,
        coalesce(CAST(w.period AS DOUBLE), TRY_CAST(NULLIF(p.every.n, '') AS DOUBLE)) AS sig_period,
        coalesce(w.period_unit, CASE left(p.every.unit, 1) WHEN 'h' THEN 'h' WHEN 'd' THEN 'd' END) AS sig_period_unit
    FROM (
        SELECT
            q.*,
            regexp_extract(NULLIF(q.sig.words, ''), '^(?:every|q) ?([0-9]+) ?(hours?|hrs?|h|days?|d)$', ['n', 'unit']) AS every
        FROM sig_parts AS q
    ) AS p
    LEFT JOIN dosage_frequency AS w ON w.term = upper(NULLIF(p.sig.words, ''))
),
dosing AS (
    SELECT
        s.*,
        -- where the frequency comes from: timing.repeat, else timing.code, else the parsed free text
        CASE
            WHEN s.frequency IS NOT NULL OR s.period IS NOT NULL THEN 'timing.repeat'
            WHEN s.code_frequency IS NOT NULL THEN 'timing.code'
            WHEN s.sig_frequency IS NOT NULL AND s.sig_period IS NOT NULL THEN 'text'
        END AS frequency_source,
        CASE
            WHEN s.dose IS NOT NULL THEN 'structured'
            WHEN s.sig_dose IS NOT NULL AND s.sig_frequency IS NOT NULL AND s.sig_period IS NOT NULL THEN 'text'
        END AS dose_source
    FROM sig_parsed AS s
),
final AS (
    SELECT
        d.*,
        CASE d.frequency_source
            WHEN 'timing.repeat' THEN d.frequency WHEN 'timing.code' THEN CAST(d.code_frequency AS BIGINT)
            WHEN 'text' THEN d.sig_frequency
        END AS eff_frequency,
        CASE d.frequency_source
            WHEN 'timing.repeat' THEN d.period WHEN 'timing.code' THEN CAST(d.code_period AS DOUBLE)
            WHEN 'text' THEN d.sig_period
        END AS eff_period,
        CASE d.frequency_source
            WHEN 'timing.repeat' THEN d.period_unit WHEN 'timing.code' THEN d.code_period_unit
            WHEN 'text' THEN d.sig_period_unit
        END AS eff_period_unit,
        CASE d.dose_source WHEN 'structured' THEN d.dose WHEN 'text' THEN d.sig_dose END AS eff_dose,
        CASE d.dose_source
            WHEN 'structured' THEN coalesce(d.dose_unit_text, d.dose_unit_code) WHEN 'text' THEN d.sig_unit
        END AS eff_dose_unit
    FROM dosing AS d
),
final_seconds AS (
    SELECT
        f.*,
        -- per-day multiplier numerator: dose x frequency per period, period in UCUM time units
        CASE f.eff_period_unit
            WHEN 's' THEN 1.0 WHEN 'min' THEN 60.0 WHEN 'h' THEN 3600.0 WHEN 'd' THEN 86400.0
            WHEN 'wk' THEN 604800.0 WHEN 'mo' THEN 2592000.0 WHEN 'a' THEN 31536000.0
        END AS period_seconds
    FROM final AS f
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
    f.status_reason,
    f.intent,
    TRY_CAST(f.time_raw AS TIMESTAMPTZ) AS time,
    utc_offset_minutes(f.time_raw) AS time_offset,
    TRY_CAST(f.end_time_raw AS TIMESTAMPTZ) AS end_time,
    utc_offset_minutes(f.end_time_raw) AS end_time_offset,
    f.eff_dose AS dose,
    -- the dose unit of a structured dose even when its value is missing (as before); else the parsed sig's
    coalesce(f.eff_dose_unit, f.dose_unit_text, f.dose_unit_code) AS dose_unit,
    coalesce(f.route_text, f.route_display, f.route_code) AS route,
    f.eff_frequency AS frequency,
    f.eff_period AS period,
    f.eff_period_unit AS period_unit,
    f.timing_code_any AS timing_code,
    f.frequency_source,
    f.dose_source,
    f.as_needed,
    f.as_needed_reason,
    -- daily dose = dose x frequency per period, converted to per day; NULL unless all parts are present
    CASE
        WHEN f.eff_dose IS NOT NULL AND f.eff_frequency IS NOT NULL AND f.eff_period > 0 AND f.period_seconds IS NOT NULL
        THEN f.eff_dose * f.eff_frequency * 86400.0 / (f.eff_period * f.period_seconds)
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
FROM final_seconds AS f
LEFT JOIN request_medications AS q ON q.ref = f.request_ref AND f.kind <> 'request'
LEFT JOIN condition_names AS c ON c.ref = f.reason_ref
