"""Hospital stays over an OMOP CDM that codes admissions by admission type, as MIMIC-IV's OMOP does.

MIMIC-IV's ETL gives an emergency admission the visit concept 8870 "Emergency Room Visit" (an observation admission
581385, a same-day surgery admission 8883), so the visit concept alone does not say the patient was admitted. The
visit that records where the patient was admitted from (``admitting_source_*`` in CDM 5.3, ``admitted_from_*`` in 5.4)
is a hospital stay beside its own class; its ICU transfers are ``visit_detail`` rows whose care site names an ICU
(or of a SNOMED ICU place concept), transfers inside the ICU being one ICU stay. Every gold below is computed from the
rows of this file.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql
from tests.sql.sqlite_tables import write_sqlite

AFTER = "2023-05-01T12:00:00Z"  # everything below is over
DURING = "2023-03-02T12:00:00Z"  # inside the emergency admission, in the MICU
TABLES = {
    "person": "person_id INTEGER PRIMARY KEY, gender_concept_id INTEGER, year_of_birth INTEGER, birth_datetime TEXT, "
              "person_source_value TEXT",
    "concept": "concept_id INTEGER PRIMARY KEY, concept_name TEXT, domain_id TEXT, vocabulary_id TEXT, "
               "concept_class_id TEXT, concept_code TEXT",
    "care_site": "care_site_id INTEGER PRIMARY KEY, care_site_name TEXT",
    "visit_occurrence": "visit_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, visit_concept_id INTEGER, "
                        "visit_start_datetime TEXT, visit_end_datetime TEXT, admitting_source_concept_id INTEGER, "
                        "admitting_source_value TEXT",
    "visit_detail": "visit_detail_id INTEGER PRIMARY KEY, person_id INTEGER, visit_detail_concept_id INTEGER, "
                    "visit_detail_start_datetime TEXT, visit_detail_end_datetime TEXT, care_site_id INTEGER, "
                    "visit_occurrence_id INTEGER",
    "condition_occurrence": "condition_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, condition_concept_id INTEGER, "
                            "condition_start_datetime TEXT, condition_type_concept_id INTEGER, condition_source_value TEXT, "
                            "visit_occurrence_id INTEGER",
    "drug_exposure": "drug_exposure_id INTEGER PRIMARY KEY, person_id INTEGER, drug_concept_id INTEGER, "
                     "drug_exposure_start_datetime TEXT, drug_exposure_end_datetime TEXT, drug_type_concept_id INTEGER, "
                     "drug_source_value TEXT, route_source_value TEXT",
    "procedure_occurrence": "procedure_occurrence_id INTEGER PRIMARY KEY, person_id INTEGER, procedure_concept_id INTEGER, "
                            "procedure_datetime TEXT, procedure_source_value TEXT",
    "death": "person_id INTEGER, death_date TEXT",
}
SITES = [(1, "Medical Intensive Care Unit (MICU)"), (2, "Medicine"), (3, "Trauma SICU (TSICU)"),
         (4, "Occupational Health"), (5, "Emergency Department")]
VISITS = [  # (id, person, concept, start, end, admitting source concept, admitting source value)
    (10, 1, 9201, "2022-01-03 10:00:00", "2022-01-09 10:00:00", 0, "PHYSICIAN REFERRAL"),  # coded inpatient
    (11, 1, 8870, "2023-03-01 10:00:00", "2023-03-08 15:00:00", 0, "EMERGENCY ROOM"),  # an emergency admission
    (12, 1, 8870, "2023-04-02 09:00:00", "2023-04-02 13:00:00", 0, None),  # an ER visit, sent home
    (13, 1, 9202, "2021-05-05 09:00:00", "2021-05-05 10:00:00", 0, None),  # a clinic visit
]
DETAILS = [  # (id, person, concept, start, end, care site, visit)
    (100, 1, 0, "2022-01-04 00:00:00", "2022-01-05 00:00:00", 3, 10),  # an ICU named by its care site only
    (101, 1, 8870, "2023-03-01 10:00:00", "2023-03-01 18:00:00", 5, 11),
    (102, 1, 40481392, "2023-03-01 18:00:00", "2023-03-02 20:00:00", 1, 11),  # MICU (SNOMED medical ICU) ...
    (103, 1, 40481392, "2023-03-02 20:00:00", "2023-03-04 08:00:00", 1, 11),  # ... a bed move inside it: one stay
    (104, 1, 0, "2023-03-04 08:00:00", "2023-03-08 15:00:00", 2, 11),  # the ward
    (105, 1, 0, "2023-04-02 09:00:00", "2023-04-02 13:00:00", 4, 12),  # "Occupational" holds the letters "ccu"
]
CONDITIONS = [  # the stay's ICD codes (type 32821 billing record, padded as MIMIC's CSVs are) and charted rhythms
    (1, 1, 0, "2023-03-01 10:00:00", 32821, "A419   ", 11),
    (2, 1, 0, "2023-03-01 10:00:00", 32821, "I4891  ", 11),
    (3, 1, 0, "2023-03-02 08:00:00", 32817, "SR (Sinus Rhythm)", 11),
    (4, 1, 0, "2023-03-03 08:00:00", 32817, "AF (Atrial Fibrillation)", 11),
    (5, 1, 0, "2023-03-03 09:00:00", 32817, "SR (Sinus Rhythm)", 11),
    (6, 1, 0, "2022-01-03 10:00:00", 32821, "J189   ", 10),
]
DRUGS = [  # orders (type 32838): name, route
    (1, 1, 0, "2023-03-01 12:00:00", "2023-03-06 12:00:00", 32838, "Pantoprazole Send Vial", "IV"),
    (2, 1, 0, "2023-03-01 14:00:00", "2023-03-03 14:00:00", 32838, "CefePIME Send Vial", "IV"),
    (3, 1, 0, "2023-03-01 14:00:00", "2023-03-08 14:00:00", 32838, "Sodium Chloride 0.9% Flush", "IV"),
    (4, 1, 0, "2022-01-04 14:00:00", "2022-01-06 14:00:00", 32838, "Vancomycin Bag", "IV"),
]
PROCEDURES = [
    (1, 1, 0, "2023-03-01 00:00:00", "Arterial line Insertion Date"),
    (2, 1, 0, "2023-03-03 06:00:00", "Arterial Line Dressing Change"),
    (3, 1, 0, "2023-03-02 00:00:00", "Multi Lumen Insertion Date"),
]


@pytest.fixture(scope="module")
def omop(tmp_path_factory) -> Path:
    rows = {"person": [(1, 8532, 1950, "1950-02-02", "p1")], "care_site": SITES, "visit_occurrence": VISITS,
            "visit_detail": DETAILS, "condition_occurrence": CONDITIONS, "drug_exposure": DRUGS,
            "procedure_occurrence": PROCEDURES}
    return write_sqlite(tmp_path_factory.mktemp("omop-admissions") / "admissions.sqlite", TABLES, rows)


def ask(omop: Path, question: str, now: str = AFTER):
    return ask_sql(question, patient_id="1", now=now, connection=omop)


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text)


# the hospital stays: a visit coded inpatient, or one that records where the patient was admitted from
STAYS = [v for v in VISITS if v[2] in (9201, 262) or v[5] or v[6]]
LAST = max(STAYS, key=lambda v: v[3])
# ICU rows: of a SNOMED ICU concept, or at a care site that names an ICU
ICU_SITES = {site for site, name in SITES if "Intensive Care" in name or "ICU" in name}
ICU_ROWS = [d for d in DETAILS if d[2] == 40481392 or d[5] in ICU_SITES]


def test_a_visit_that_records_an_admission_source_is_a_hospital_stay(omop):
    assert ask(omop, "how many hospitalizations?").answer == [len(STAYS)]
    assert ask(omop, "when was she last admitted?").answer[0][:10] == LAST[3][:10]
    # an emergency admission is still an emergency visit: the ER visits are both 8870 visits
    assert ask(omop, "how many ER visits?").answer == [sum(1 for v in VISITS if v[2] == 8870)]


def test_length_and_discharge_of_the_last_stay_are_the_stays_own_dates(omop):
    los = (_t(LAST[4]).date() - _t(LAST[3]).date()).days
    assert ask(omop, "LOS of the last admission?").answer == [los]
    assert ask(omop, "last d/c date?").answer[0][:10] == LAST[4][:10]  # not the last order or procedure of any kind


def test_when_she_came_in_is_the_start_of_the_stay_she_is_in(omop):
    current = next(v for v in STAYS if v[3] <= DURING.replace("T", " ")[:19] <= v[4])
    assert ask(omop, "when did she come in?", DURING).answer[0][:10] == current[3][:10]
    assert ask(omop, "adm date this admission?", DURING).answer[0][:10] == current[3][:10]


def test_icu_stays_are_icu_transfers_and_a_bed_move_inside_the_icu_is_one_stay(omop):
    # 102 and 103 follow one another in the MICU: one ICU stay; 100 is an ICU by its care site's name only
    stays = [d for d in ICU_ROWS if not any(o[4] == d[3] for o in ICU_ROWS)]
    assert ask(omop, "how many ICU stays?").answer == [len(stays)] == [2]
    assert ask(omop, "which ICU was she in last admission?").answer == ["Medical Intensive Care Unit (MICU)"]
    first_in_last = min((d for d in ICU_ROWS if d[6] == LAST[0]), key=lambda d: d[3])
    assert ask(omop, "when did she go to the ICU last admission?").answer[0][:10] == first_in_last[3][:10]
    assert ask(omop, "is she in the unit now?", DURING).answer == [True]  # "the unit" is the ICU
    assert ask(omop, "is she in the ICU?", DURING).answer == [True]  # the present tense asks about now
    assert ask(omop, "is she in the ICU right now?").answer == [False]
    assert ask(omop, "when was she transferred to the ICU?").answer[0][:10] == first_in_last[3][:10]


def test_the_length_of_an_icu_stay_runs_over_its_bed_moves(omop):
    micu = [d for d in ICU_ROWS if d[6] == LAST[0]]
    days = (_t(max(d[4] for d in micu)).date() - _t(min(d[3] for d in micu)).date()).days
    assert ask(omop, "how long was she in the ICU?").answer == [days] == [3]
    assert ask(omop, "ICU LOS?").answer == [days]


def test_a_drugs_route_and_the_antibiotics_of_the_stay(omop):
    pantoprazole = next(d for d in DRUGS if d[6].startswith("Pantoprazole"))
    assert ask(omop, "route of the pantoprazole?").answer == [pantoprazole[7]]
    assert ask(omop, "pt on pantoprazole?", DURING).answer == [True]  # a yes/no, not the order's name
    assert ask(omop, "abx this admission?", DURING).answer == ["CefePIME Send Vial"]  # the last stay's, not vancomycin


def test_the_diagnoses_of_a_stay_are_its_coded_diagnoses_not_the_rhythms_charted_in_it(omop):
    coded = [c[5].strip() for c in CONDITIONS if c[6] == LAST[0] and c[4] == 32821]
    assert sorted(ask(omop, "diagnoses of the last admission?").answer) == sorted(coded)
    assert sorted(ask(omop, "discharge diagnoses (last stay)?").answer) == sorted(coded)


def test_the_last_charted_rhythm_is_the_latest_rhythm_of_any_name(omop):
    rhythms = [c for c in CONDITIONS if c[4] == 32817 and c[3] <= "2023-03-03 08:30:00"]
    latest = max(rhythms, key=lambda c: c[3])
    answer = ask(omop, "last charted rhythm?", "2023-03-03T08:30:00Z")
    assert answer.answer == [latest[5]] == ["AF (Atrial Fibrillation)"], answer.text


def test_lines_in_clinicians_words_and_when_they_went_in(omop):
    art = next(p for p in PROCEDURES if p[4] == "Arterial line Insertion Date")
    assert ask(omop, "A-line insertion date last stay?").answer[0][:10] == art[3][:10]
    cvc = next(p for p in PROCEDURES if p[4] == "Multi Lumen Insertion Date")
    assert ask(omop, "date the central line went in last admit?").answer[0][:10] == cvc[3][:10]
    assert ask(omop, "trialysis catheter last admit?").answer == [False]


def test_a_living_patients_date_of_death_is_no_data(omop):
    answer = ask(omop, "DOD?")
    assert answer.status == "no-data" and answer.answer == []
    assert ask(omop, "did she die?").answer == [False]
