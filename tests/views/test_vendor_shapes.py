"""Vendor-shaped FHIR (Epic, Cerner, HAPI, MIMIC-IV styles) reads right in the canonical views.

Fixtures: ``tests/views/fixtures/*.json`` (one collection Bundle per resource family, one patient born
1950-06-15), ingested once into a store.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from fhirqa.store.codetables import stale_views

FIXTURES = Path(__file__).resolve().parent / "fixtures"
UTC = dt.UTC


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("vendor") / "db"
    report = ingest([FileSource([FIXTURES])], db)
    assert not report.rejected
    return Store(db)


def one(store, view, ref, *cols):
    rows = store.query(f"SELECT {', '.join(cols)} FROM {view} WHERE ref = ?", [ref]).rows
    assert len(rows) == 1, rows
    return rows[0] if len(cols) > 1 else rows[0][0]


def dosing(store, ref):
    return one(store, "medication", f"MedicationRequest/{ref}",
               "dose", "dose_unit", "frequency", "period", "period_unit", "daily_dose", "frequency_source", "dose_source")


# --- code tables are data ---------------------------------------------------------------------------------

def test_the_code_table_blocks_in_the_views_match_their_csv_files():
    assert stale_views() == []


# --- 1. timing.code ---------------------------------------------------------------------------------------

def test_a_bid_timing_code_gives_two_doses_a_day(store):
    assert dosing(store, "mr-bid") == (5.0, "mg", 2, 1.0, "d", 10.0, "timing.code", "structured")
    assert one(store, "medication", "MedicationRequest/mr-bid", "timing_code") == "BID"


def test_a_q8h_timing_code_gives_one_dose_every_eight_hours(store):
    assert dosing(store, "mr-q8h")[2:6] == (1, 8.0, "h", 300.0)


def test_a_timing_code_given_only_as_text_is_looked_up_case_insensitively(store):
    assert dosing(store, "mr-qhs-text")[2:6] == (1, 1.0, "d", 10.0)
    assert one(store, "medication", "MedicationRequest/mr-qhs-text", "timing_code") == "qhs"


def test_an_unknown_timing_code_leaves_frequency_empty(store):
    assert dosing(store, "mr-unknown-code")[2:7] == (None, None, None, None, None)


def test_timing_repeat_wins_over_timing_code(store):
    assert dosing(store, "mr-repeat-wins")[2:7] == (1, 1.0, "d", 5.0, "timing.repeat")


# --- 2. free-text sigs ------------------------------------------------------------------------------------

def test_a_plain_sig_gives_dose_unit_and_frequency(store):
    assert dosing(store, "mr-text-sig") == (300.0, "mg", 2, 1.0, "d", 600.0, "text", "text")


def test_an_abbreviated_sig_with_route_po_is_parsed(store):
    assert dosing(store, "mr-text-tab")[:6] == (1.0, "tab", 2, 1.0, "d", 2.0)


def test_every_eight_hours_in_a_sig_is_one_dose_per_eight_hours(store):
    assert dosing(store, "mr-text-q8")[:6] == (500.0, "mg", 1, 8.0, "h", 1500.0)


def test_a_sig_in_tablets_with_a_full_stop_is_parsed(store):
    assert dosing(store, "mr-text-tablets")[:6] == (2.0, "tablets", 2, 1.0, "d", 4.0)


@pytest.mark.parametrize("ref", ["mr-text-prn", "mr-text-range", "mr-text-taper", "mr-text-unknown"])
def test_a_sig_that_is_not_plain_is_not_guessed(store, ref):
    assert dosing(store, ref) == (None, None, None, None, None, None, None, None)


# --- 3. encounter class hierarchy -------------------------------------------------------------------------

@pytest.mark.parametrize(("ref", "code", "original", "name"), [
    ("e-acute", "IMP", "ACUTE", "inpatient acute"),
    ("e-nonac", "IMP", "NONAC", "inpatient non-acute"),
    ("e-imp", "IMP", "IMP", "inpatient"),
    ("e-amb", "AMB", "AMB", "ambulatory"),
    ("e-v2", "IMP", "I", "inpatient"),
    ("e-other", "XYZ", "XYZ", "xyz"),
])
def test_acute_and_nonacute_stays_read_as_inpatient_and_keep_their_own_code(store, ref, code, original, name):
    assert one(store, "encounter", f"Encounter/{ref}", "class_code", "class_code_original", "class_name") == (
        code, original, name)


# --- 4. the standard coding wherever it sits --------------------------------------------------------------

def test_an_observation_with_a_local_code_first_gets_its_loinc_code(store):
    assert one(store, "observation", "Observation/o-hgb", "name", "code", "code_system") == (
        "Hgb", "718-7", "http://loinc.org")


def test_an_observation_with_only_a_local_code_keeps_it(store):
    assert one(store, "observation", "Observation/o-local-only", "code", "code_system") == (
        "K1", "urn:oid:1.2.840.114350.1")


def test_a_component_and_its_panel_get_their_loinc_codes(store):
    rows = store.query("SELECT is_component, code, parent_code FROM observation WHERE ref = 'Observation/o-bp' "
                       "ORDER BY is_component").rows
    assert rows == [(False, "85354-9", None), (True, "8480-6", "85354-9")]


def test_a_condition_with_icd10_first_gets_its_snomed_code(store):
    assert one(store, "condition", "Condition/c-icd-first", "code", "code_system") == (
        "44054006", "http://snomed.info/sct")


def test_a_condition_without_snomed_gets_its_icd10_code(store):
    assert one(store, "condition", "Condition/c-icd-only", "code", "code_system") == (
        "I10", "http://hl7.org/fhir/sid/icd-10-cm")


def test_a_medication_with_a_local_code_first_gets_its_rxnorm_code(store):
    assert one(store, "medication", "MedicationRequest/mr-local-rxnorm", "medication_code", "medication_system") == (
        "1364445", "http://www.nlm.nih.gov/research/umls/rxnorm")


def test_an_immunization_with_ndc_first_gets_its_cvx_code(store):
    assert one(store, "immunization", "Immunization/i-ndc-first", "code", "code_system") == (
        "150", "http://hl7.org/fhir/sid/cvx")


# --- 5. onset[x] ------------------------------------------------------------------------------------------

def test_an_onset_age_gives_the_onset_time_from_the_birth_date(store):
    onset, age = one(store, "condition", "Condition/c-ckd-age", "onset_time", "onset_age")
    assert (onset, age) == (dt.datetime(2014, 6, 15, tzinfo=UTC), 64.0)


def test_an_onset_period_start_and_an_onset_string_are_kept(store):
    assert one(store, "condition", "Condition/c-icd-first", "onset_time") == dt.datetime(2015, 4, 1, tzinfo=UTC)
    assert one(store, "condition", "Condition/c-icd-only", "onset_time", "onset_string") == (None, "childhood")


# --- 6. clinical status and abatement ---------------------------------------------------------------------

def test_the_hl7_clinical_status_is_read_even_after_a_local_coding(store):
    row = one(store, "condition", "Condition/c-pneu-abated", "clinical_status", "abated", "abatement_string")
    assert row == ("resolved", True, "resolved after treatment")


def test_an_abatement_age_without_an_hl7_status_reads_inactive_with_its_time(store):
    row = one(store, "condition", "Condition/c-local-only-abated", "clinical_status", "abated", "abatement_time")
    assert row == ("inactive", True, dt.datetime(2020, 6, 15, tzinfo=UTC))


def test_a_condition_without_abatement_is_not_abated(store):
    assert one(store, "condition", "Condition/c-ckd-age", "clinical_status", "abated") == ("active", False)


# --- 7. comparator and reference-range text ---------------------------------------------------------------

def test_a_comparator_stays_visible_next_to_the_value(store):
    row = one(store, "observation", "Observation/o-egfr", "value", "value_comparator", "value_display")
    assert row == (60.0, ">", ">60 mL/min/{1.73_m2}")


def test_a_text_only_reference_range_is_kept(store):
    row = one(store, "observation", "Observation/o-hgb", "ref_low", "ref_high", "ref_range_text", "value_display")
    assert row == (None, None, "12.0-16.0 g/dL", "11.8 g/dL")
