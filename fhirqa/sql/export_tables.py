"""The SQL that turns fhirqa's canonical views into OMOP CDM 5.4 tables (used by :mod:`fhirqa.sql.export`).

Each query reads the canonical views of a store connection plus three helper tables the exporter builds
first: ``x_person`` (patient_id → person_id), ``x_visit`` (Encounter ref → visit_occurrence_id) and
``x_concept`` (vocabulary, code → concept_id, name). Times are written in UTC. Mapping choices:

- observation rows with a number → ``measurement``; without one (text answers, panels) → ``observation``;
  allergies → ``observation`` with ``qualifier_source_value = 'allergy'``;
- medication orders (and dispenses, administrations, statements, by ``drug_type_concept_id``) and
  immunizations (CVX) → ``drug_exposure``; dose, frequency and period → ``sig`` ("1 dose 2 times per 1 d"); a
  status other than active → ``stop_reason`` (so "currently on" reads the same as the FHIR status);
- encounter class → ``visit_concept_id`` (IMP 9201, AMB 9202, EMER 9203, VR 5083, HH 581476), encounter type →
  ``visit_source_concept_id``;
- the patient's FHIR id → ``person_source_value``; names → ``person_name`` (a fhirqa extension: the CDM keeps none).
"""

from __future__ import annotations

VOCABULARY = """CASE
    WHEN {s} LIKE '%loinc.org%' THEN 'LOINC'
    WHEN {s} LIKE '%snomed%' THEN 'SNOMED'
    WHEN {s} LIKE '%rxnorm%' THEN 'RxNorm'
    WHEN {s} LIKE '%cvx%' THEN 'CVX'
    WHEN {s} LIKE '%unitsofmeasure%' THEN 'UCUM'
    WHEN {s} LIKE '%icd-10-cm%' OR {s} LIKE '%icd10cm%' THEN 'ICD10CM'
    WHEN {s} LIKE '%icd-9%' THEN 'ICD9CM'
    WHEN {s} LIKE '%ndc%' THEN 'NDC'
    WHEN {s} IS NULL THEN 'None'
    ELSE 'Local' END"""

# (domain, vocabulary expression, code, name) of every coded thing the views hold.
CODES = """
SELECT CASE WHEN value IS NOT NULL THEN 'Measurement' ELSE 'Observation' END AS domain,
       CASE lower(coalesce(category, '')) WHEN 'laboratory' THEN 'Lab Test' WHEN 'survey' THEN 'Survey'
           WHEN 'social-history' THEN 'Social History' ELSE 'Clinical Observation' END AS class,
       {obs_vocab} AS vocabulary, coalesce(code, name) AS code, name FROM observation WHERE name IS NOT NULL
UNION ALL SELECT 'Condition', 'Clinical Finding', {cond_vocab}, coalesce(code, name), name FROM condition WHERE name IS NOT NULL
UNION ALL SELECT 'Procedure', 'Procedure', {proc_vocab}, coalesce(code, name), name FROM procedure WHERE name IS NOT NULL
UNION ALL SELECT 'Drug', 'Clinical Drug', {med_vocab}, coalesce(medication_code, medication_name), medication_name FROM medication
    WHERE medication_name IS NOT NULL
UNION ALL SELECT 'Drug', 'CVX', {imm_vocab}, coalesce(code, name), name FROM immunization WHERE name IS NOT NULL
UNION ALL SELECT 'Observation', 'Substance', {all_vocab}, coalesce(code, name), name FROM allergy WHERE name IS NOT NULL
UNION ALL SELECT 'Visit', 'Visit', {enc_vocab}, coalesce(type_code, type_name), type_name FROM encounter WHERE type_name IS NOT NULL
UNION ALL SELECT 'Unit', 'Unit', 'UCUM', unit, unit FROM observation WHERE unit IS NOT NULL
UNION ALL SELECT 'Note', 'Note Type', 'LOINC', note_type_code, note_type FROM note WHERE note_type_code IS NOT NULL
"""

STANDARD_CONCEPTS = [  # (concept_id, name, domain, vocabulary, class, code)
    (9201, "Inpatient Visit", "Visit", "Visit", "Visit", "IP"),
    (9202, "Outpatient Visit", "Visit", "Visit", "Visit", "OP"),
    (9203, "Emergency Room Visit", "Visit", "Visit", "Visit", "ER"),
    (5083, "Telehealth", "Visit", "Visit", "Visit", "TELE"),
    (581476, "Home Visit", "Visit", "Visit", "Visit", "HE"),
    (581385, "Observation Room", "Visit", "Visit", "Visit", "OBS"),
    (8507, "MALE", "Gender", "Gender", "Gender", "M"),
    (8532, "FEMALE", "Gender", "Gender", "Gender", "F"),
    (8521, "OTHER", "Gender", "Gender", "Gender", "O"),
    (8551, "UNKNOWN", "Gender", "Gender", "Gender", "U"),
    (32817, "EHR", "Type Concept", "Type Concept", "Type Concept", "OMOP4976890"),
    (32818, "EHR administration record", "Type Concept", "Type Concept", "Type Concept", "OMOP4976891"),
    (32825, "EHR dispensing record", "Type Concept", "Type Concept", "Type Concept", "OMOP4976898"),
    (32838, "EHR prescription", "Type Concept", "Type Concept", "Type Concept", "OMOP4976911"),
    (32865, "Patient self-report", "Type Concept", "Type Concept", "Type Concept", "OMOP4976938"),
    (2100000001, "observation.observation_id", "Metadata", "CDM", "Field", "observation.observation_id"),
]

VISIT_CONCEPT = """CASE upper(e.class_code) WHEN 'IMP' THEN 9201 WHEN 'ACUTE' THEN 9201 WHEN 'NONAC' THEN 9201
    WHEN 'AMB' THEN 9202 WHEN 'SS' THEN 9202 WHEN 'EMER' THEN 9203 WHEN 'VR' THEN 5083 WHEN 'HH' THEN 581476
    WHEN 'OBSENC' THEN 581385 ELSE 0 END"""

FIELD_CONCEPT_ID = 2100000001  # local concept "observation.observation_id" (CDM field), see STANDARD_CONCEPTS

# Rows of the OMOP observation table: observation rows without a number (text answers, panels) and allergies.
OBSERVATION_ROWS = """
SELECT row_number() OVER (ORDER BY patient_id, time, ref, code) AS observation_id, * FROM (
SELECT o.patient_id, o.ref, o.code, o.code_system, o.name, o.time, o.time_offset, o.value_string AS value_as_string, o.unit,
       CAST(NULL AS VARCHAR) AS qualifier, o.value_code, o.encounter_ref, o.is_component
FROM observation AS o WHERE o.value IS NULL AND coalesce(o.status, '') <> 'entered-in-error'
UNION ALL
SELECT a.patient_id, a.ref, a.code, a.code_system, a.name, coalesce(a.recorded_time, a.onset_time),
       CASE WHEN a.recorded_time IS NOT NULL THEN a.recorded_time_offset ELSE a.onset_time_offset END, a.reaction, NULL, 'allergy',
       a.criticality, a.encounter_ref, false
FROM allergy AS a)"""

UTC = "CAST(({t}) AT TIME ZONE 'UTC' AS TIMESTAMP)"
LOCAL = "CAST(({t}) AT TIME ZONE 'UTC' + to_minutes(CAST(coalesce({o}, 0) AS BIGINT)) AS TIMESTAMP)"


def utc(expr: str) -> str:
    """A TIMESTAMPTZ view column as the local wall-clock TIMESTAMP it was written in (OMOP keeps local times;
    the view's ``<column>_offset``, UTC when the time had none)."""
    return LOCAL.format(t=expr, o=expr + "_offset")


def concept(alias: str, vocab: str, code: str, name: str = "NULL") -> str:
    """LEFT JOIN the standard concept (``alias``) of a (vocabulary, code) pair, and (``s``) its source concept when the
    record names it differently from the standard concept's name."""
    return (f"LEFT JOIN x_concept AS {alias} ON {alias}.vocabulary_id = {vocab} AND {alias}.concept_code = {code} "
            f"LEFT JOIN x_source AS s ON s.vocabulary_id = {vocab} AND s.concept_code = {code} AND s.concept_name = {name}")


def vocab(system: str) -> str:
    """The vocabulary expression for a code-system column."""
    return VOCABULARY.format(s=system)


TABLES: dict[str, str] = {
    "person": """
SELECT x.person_id,
       CASE lower(p.gender) WHEN 'male' THEN 8507 WHEN 'female' THEN 8532 WHEN 'other' THEN 8521 ELSE 8551 END
           AS gender_concept_id,
       year(p.birth_date) AS year_of_birth, month(p.birth_date) AS month_of_birth, day(p.birth_date) AS day_of_birth,
       CAST(p.birth_date AS TIMESTAMP) AS birth_datetime, 0 AS race_concept_id, 0 AS ethnicity_concept_id,
       CAST(NULL AS BIGINT) AS location_id, CAST(NULL AS BIGINT) AS provider_id, CAST(NULL AS BIGINT) AS care_site_id,
       p.patient_id AS person_source_value, p.gender AS gender_source_value, 0 AS gender_source_concept_id,
       p.race AS race_source_value, 0 AS race_source_concept_id, p.ethnicity AS ethnicity_source_value,
       0 AS ethnicity_source_concept_id
FROM patient AS p JOIN x_person AS x USING (patient_id)""",
    "person_name": """
SELECT x.person_id, p.given AS given_name, p.family AS family_name, p.name AS full_name, p.name_raw AS source_name
FROM patient AS p JOIN x_person AS x USING (patient_id)""",
    "death": """
SELECT x.person_id, CAST({death} AS DATE) AS death_date, {death} AS death_datetime, 32817 AS death_type_concept_id,
       0 AS cause_concept_id, CAST(NULL AS VARCHAR) AS cause_source_value, 0 AS cause_source_concept_id
FROM patient AS p JOIN x_person AS x USING (patient_id) WHERE p.deceased_time IS NOT NULL""".replace(
        "{death}", utc("p.deceased_time")),
    "visit_occurrence": """
SELECT v.visit_occurrence_id, x.person_id, {visit} AS visit_concept_id,
       CAST({start} AS DATE) AS visit_start_date, {start} AS visit_start_datetime,
       CAST({end} AS DATE) AS visit_end_date, {end} AS visit_end_datetime, 32817 AS visit_type_concept_id,
       CAST(NULL AS BIGINT) AS provider_id, CAST(NULL AS BIGINT) AS care_site_id, e.type_code AS visit_source_value,
       coalesce(s.concept_id, c.concept_id, 0) AS visit_source_concept_id, 0 AS admitted_from_concept_id,
       CAST(NULL AS VARCHAR) AS admitted_from_source_value, 0 AS discharged_to_concept_id,
       e.discharge_disposition AS discharged_to_source_value, CAST(NULL AS BIGINT) AS preceding_visit_occurrence_id
FROM encounter AS e JOIN x_person AS x USING (patient_id) JOIN x_visit AS v ON v.ref = e.ref
{concept}""".replace("{visit}", VISIT_CONCEPT).replace("{start}", utc("e.start_time")).replace("{end}", utc("e.end_time"))
        .replace("{concept}", concept("c", vocab("e.type_system"), "coalesce(e.type_code, e.type_name)", "e.type_name")),
    "condition_occurrence": """
SELECT row_number() OVER (ORDER BY x.person_id, o.onset_time, o.ref) AS condition_occurrence_id, x.person_id,
       coalesce(c.concept_id, 0) AS condition_concept_id, CAST({start} AS DATE) AS condition_start_date,
       {start} AS condition_start_datetime, CAST({end} AS DATE) AS condition_end_date, {end} AS condition_end_datetime,
       32817 AS condition_type_concept_id, 0 AS condition_status_concept_id, CAST(NULL AS VARCHAR) AS stop_reason,
       CAST(NULL AS BIGINT) AS provider_id, v.visit_occurrence_id, CAST(NULL AS BIGINT) AS visit_detail_id,
       o.code AS condition_source_value, coalesce(s.concept_id, c.concept_id, 0) AS condition_source_concept_id,
       o.clinical_status AS condition_status_source_value
FROM condition AS o JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = o.encounter_ref
{concept}
WHERE coalesce(o.verification_status, '') <> 'entered-in-error'""".replace("{start}", utc("o.onset_time"))
        .replace("{end}", utc("o.abatement_time")).replace("{concept}", concept("c", vocab("o.code_system"), "coalesce(o.code, o.name)", "o.name")),
    "procedure_occurrence": """
SELECT row_number() OVER (ORDER BY x.person_id, o.start_time, o.ref) AS procedure_occurrence_id, x.person_id,
       coalesce(c.concept_id, 0) AS procedure_concept_id, CAST({start} AS DATE) AS procedure_date,
       {start} AS procedure_datetime, CAST({end} AS DATE) AS procedure_end_date, {end} AS procedure_end_datetime,
       32817 AS procedure_type_concept_id, 0 AS modifier_concept_id, CAST(NULL AS BIGINT) AS quantity,
       CAST(NULL AS BIGINT) AS provider_id, v.visit_occurrence_id, CAST(NULL AS BIGINT) AS visit_detail_id,
       o.code AS procedure_source_value, coalesce(s.concept_id, c.concept_id, 0) AS procedure_source_concept_id,
       CAST(NULL AS VARCHAR) AS modifier_source_value
FROM procedure AS o JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = o.encounter_ref
{concept}
WHERE coalesce(o.status, '') <> 'entered-in-error'""".replace("{start}", utc("o.start_time")).replace("{end}", utc("o.end_time"))
        .replace("{concept}", concept("c", vocab("o.code_system"), "coalesce(o.code, o.name)", "o.name")),
    "measurement": """
SELECT row_number() OVER (ORDER BY x.person_id, o.time, o.ref, o.code) AS measurement_id, x.person_id,
       coalesce(c.concept_id, 0) AS measurement_concept_id, CAST({t} AS DATE) AS measurement_date,
       {t} AS measurement_datetime, strftime({t}, '%H:%M:%S') AS measurement_time, 32817 AS measurement_type_concept_id,
       0 AS operator_concept_id, o.value AS value_as_number, 0 AS value_as_concept_id,
       coalesce(u.concept_id, 0) AS unit_concept_id, o.ref_low AS range_low, o.ref_high AS range_high,
       CAST(NULL AS BIGINT) AS provider_id, v.visit_occurrence_id, CAST(NULL AS BIGINT) AS visit_detail_id,
       o.code AS measurement_source_value, coalesce(s.concept_id, c.concept_id, 0) AS measurement_source_concept_id,
       o.unit AS unit_source_value, 0 AS unit_source_concept_id, CAST(o.value AS VARCHAR) AS value_source_value,
       p.observation_id AS measurement_event_id,
       CASE WHEN p.observation_id IS NOT NULL THEN {field} ELSE 0 END AS meas_event_field_concept_id
FROM observation AS o JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = o.encounter_ref
LEFT JOIN x_panel AS p ON o.is_component AND p.ref = o.ref
{concept}
LEFT JOIN x_concept AS u ON u.vocabulary_id = 'UCUM' AND u.concept_code = o.unit
WHERE o.value IS NOT NULL AND coalesce(o.status, '') <> 'entered-in-error'""".replace("{t}", utc("o.time"))
        .replace("{field}", str(FIELD_CONCEPT_ID))
        .replace("{concept}", concept("c", vocab("o.code_system"), "coalesce(o.code, o.name)", "o.name")),
    "observation": """
SELECT o.observation_id, x.person_id, coalesce(c.concept_id, 0) AS observation_concept_id, CAST({t} AS DATE) AS observation_date,
       {t} AS observation_datetime, 32817 AS observation_type_concept_id, CAST(NULL AS DOUBLE) AS value_as_number,
       o.value_as_string, 0 AS value_as_concept_id, 0 AS qualifier_concept_id, 0 AS unit_concept_id,
       CAST(NULL AS BIGINT) AS provider_id, v.visit_occurrence_id, CAST(NULL AS BIGINT) AS visit_detail_id,
       o.code AS observation_source_value, coalesce(s.concept_id, c.concept_id, 0) AS observation_source_concept_id,
       o.unit AS unit_source_value, o.qualifier AS qualifier_source_value, o.value_code AS value_source_value,
       CAST(NULL AS BIGINT) AS observation_event_id, 0 AS obs_event_field_concept_id
FROM x_obs AS o JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = o.encounter_ref
{concept}""".replace("{t}", utc("o.time")).replace("{concept}", concept("c", vocab("o.code_system"), "coalesce(o.code, o.name)", "o.name")),
    "drug_exposure": """
SELECT row_number() OVER (ORDER BY person_id, drug_exposure_start_datetime, src) AS drug_exposure_id, * EXCLUDE (src) FROM (
SELECT x.person_id, coalesce(c.concept_id, 0) AS drug_concept_id, CAST({t} AS DATE) AS drug_exposure_start_date,
       {t} AS drug_exposure_start_datetime, CAST({e} AS DATE) AS drug_exposure_end_date, {e} AS drug_exposure_end_datetime,
       CAST({e} AS DATE) AS verbatim_end_date,
       CASE m.kind WHEN 'administration' THEN 32818 WHEN 'dispense' THEN 32825 WHEN 'statement' THEN 32865 ELSE 32838 END
           AS drug_type_concept_id,
       CASE WHEN m.status IS DISTINCT FROM 'active' THEN coalesce(m.status, 'unknown') END AS stop_reason,
       m.refills AS refills, CASE WHEN m.kind = 'administration' THEN m.dose ELSE m.quantity END AS quantity, CAST(m.days_supply AS INTEGER) AS days_supply,
       coalesce(CASE WHEN m.dose IS NOT NULL AND m.frequency IS NOT NULL AND m.period IS NOT NULL
                     THEN concat_ws(' ', CAST(m.dose AS VARCHAR), coalesce(m.dose_unit, 'dose'), CAST(m.frequency AS VARCHAR),
                                    'times per', CAST(m.period AS VARCHAR), m.period_unit) END, m.dosage_text) AS sig,
       0 AS route_concept_id, CAST(NULL AS VARCHAR) AS lot_number, CAST(NULL AS BIGINT) AS provider_id,
       v.visit_occurrence_id, CAST(NULL AS BIGINT) AS visit_detail_id, m.medication_code AS drug_source_value,
       coalesce(s.concept_id, c.concept_id, 0) AS drug_source_concept_id, m.route AS route_source_value,
       m.dose_unit AS dose_unit_source_value, m.ref AS src
FROM medication AS m JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = m.encounter_ref
{concept}
WHERE coalesce(m.status, '') <> 'entered-in-error'
UNION ALL
SELECT x.person_id, coalesce(c.concept_id, 0), CAST({it} AS DATE), {it}, NULL, NULL, NULL, 32818,
       CASE WHEN i.status NOT IN ('completed') THEN i.status END, NULL, i.dose_quantity, NULL, NULL, 0, i.lot_number, NULL,
       v.visit_occurrence_id, NULL, i.code, coalesce(s.concept_id, c.concept_id, 0), NULL, i.dose_unit, i.ref
FROM immunization AS i JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = i.encounter_ref
{iconcept}
WHERE coalesce(i.status, '') <> 'entered-in-error')""".replace("{t}", utc("m.time")).replace("{e}", utc("m.end_time"))
        .replace("{it}", utc("i.time"))
        .replace("{concept}", concept("c", vocab("m.medication_system"), "coalesce(m.medication_code, m.medication_name)", "m.medication_name"))
        .replace("{iconcept}", concept("c", vocab("i.code_system"), "coalesce(i.code, i.name)", "i.name")),
    "note": """
SELECT row_number() OVER (ORDER BY x.person_id, n.time, n.ref) AS note_id, x.person_id, CAST({t} AS DATE) AS note_date,
       {t} AS note_datetime, 32817 AS note_type_concept_id, coalesce(c.concept_id, 0) AS note_class_concept_id,
       coalesce(n.title, n.note_type) AS note_title, n.text AS note_text, 0 AS encoding_concept_id,
       0 AS language_concept_id, CAST(NULL AS BIGINT) AS provider_id, v.visit_occurrence_id,
       CAST(NULL AS BIGINT) AS visit_detail_id, n.ref AS note_source_value, CAST(NULL AS BIGINT) AS note_event_id,
       0 AS note_event_field_concept_id
FROM note AS n JOIN x_person AS x USING (patient_id) LEFT JOIN x_visit AS v ON v.ref = n.encounter_ref
LEFT JOIN x_concept AS c ON c.vocabulary_id = 'LOINC' AND c.concept_code = n.note_type_code""".replace("{t}", utc("n.time")),
    "observation_period": """
SELECT row_number() OVER (ORDER BY x.person_id) AS observation_period_id, x.person_id,
       CAST(min({s}) AS DATE) AS observation_period_start_date, CAST(max(coalesce({e}, {s})) AS DATE) AS observation_period_end_date,
       32817 AS period_type_concept_id
FROM encounter AS e JOIN x_person AS x USING (patient_id) GROUP BY x.person_id""".replace("{s}", utc("e.start_time"))
        .replace("{e}", utc("e.end_time")),
}
