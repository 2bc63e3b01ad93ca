"""(b) The canonical views, run in DuckDB over map tables built from the fixtures, give the expected rows."""

from __future__ import annotations

import datetime as dt

import pytest

from .maptest_helpers import VIEWS, build_tables, load_fixtures, load_mappings, run_view, view_sql

UTC = dt.UTC
TIME_COLUMN = {
    "patient": "birth_date",
    "encounter": "start_time",
    "observation": "time",
    "condition": "onset_time",
    "medication": "time",
    "procedure": "start_time",
    "immunization": "time",
    "allergy": "recorded_time",
    "note": "time",
    "care_plan": "start_time",
    "goal": "start_time",
    "imaging": "time",
    "device": "name",  # no time of use: a Device records none
}


@pytest.fixture(scope="module")
def con():
    c = build_tables(load_fixtures())
    yield c
    c.close()


@pytest.fixture(scope="module")
def empty_con():
    c = build_tables([])
    yield c
    c.close()


def rows(con, view, where="TRUE", order="ref"):
    rel = con.sql(f"SELECT * FROM ({view_sql(view)}) AS v WHERE {where} ORDER BY {order}")
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


@pytest.mark.parametrize("view", VIEWS)
def test_view_runs_as_the_store_runs_it(con, empty_con, view):
    sql = view_sql(view).strip().rstrip(";")
    for c in (con, empty_con):
        c.execute("SET TimeZone='UTC'")
        out = c.sql(f"SELECT * FROM ({sql}) ORDER BY patient_id, {TIME_COLUMN[view]}").fetchall()
        assert c is empty_con or out, f"{view}: no row from the fixtures"
    cols = con.sql(sql).columns
    assert cols[:2] == ["patient_id", "ref"], cols[:2]
    assert len(cols) == len(set(cols))


def test_view_columns_keep_mapping_names_and_are_documented():
    """Provenance: every view column is documented in docs/canonical-model.md."""
    from .maptest_helpers import ROOT

    doc = (ROOT / "docs" / "canonical-model.md").read_text()
    con = build_tables([])
    for view in VIEWS:
        section = doc.split(f"## `{view}`", 1)
        assert len(section) == 2, f"docs: no section for {view}"
        body = section[1].split("\n## ", 1)[0]
        for col in con.sql(view_sql(view)).columns:
            assert f"| `{col}` |" in body, f"docs: {view}.{col} undocumented"


def test_patient(con):
    [p] = rows(con, "patient")
    assert p["patient_id"] == "pat-1" and p["ref"] == "Patient/pat-1"
    assert p["name"] == "Marine Upton"
    assert p["name_raw"] == "Marine542 Upton904"
    assert (p["given"], p["family"], p["prefix"]) == ("Marine542 Ai120", "Upton904", "Mrs.")
    assert p["birth_date"] == dt.date(1957, 3, 2)
    assert p["gender"] == "female"
    assert p["deceased"] is True
    assert p["deceased_time"] == dt.datetime(2021, 6, 1, 12, 0, tzinfo=UTC)
    assert p["mrn"] == "MRN-0001"
    assert (p["city"], p["state"], p["postal_code"]) == ("Boston", "Massachusetts", "02115")
    assert p["marital_status"] == "Married"
    assert (p["race"], p["ethnicity"]) == ("White", "Not Hispanic or Latino")


def test_encounter(con):
    [e] = rows(con, "encounter")
    assert (e["status"], e["class_code"], e["class_name"]) == ("finished", "IMP", "inpatient")
    assert e["type_name"] == "Emergency hospital admission (procedure)"
    assert (e["type_code"], e["type_system"]) == ("183452005", "http://snomed.info/sct")
    assert e["reason_name"] == "Cellulitis (disorder)"  # through reasonReference -> Condition
    assert e["start_time"] == dt.datetime(2020, 3, 1, 15, 0, tzinfo=UTC)
    assert e["end_time"] == dt.datetime(2020, 3, 5, 17, 0, tzinfo=UTC)
    assert e["discharge_disposition"] == "Home"
    assert e["service_provider"] == "General Hospital"


def test_observation_blood_pressure_gives_three_rows(con):
    bp = rows(con, "observation", "ref = 'Observation/obs-bp'", order="is_component, code")
    assert len(bp) == 3
    panel, dia, sys_ = bp
    assert panel["is_component"] is False and panel["parent_name"] is None
    assert panel["name"] == "Blood Pressure" and panel["value"] is None
    assert (sys_["name"], sys_["code"], sys_["value"], sys_["unit"]) == (
        "Systolic Blood Pressure",
        "8480-6",
        141.0,
        "mm[Hg]",
    )
    assert (dia["name"], dia["value"]) == ("Diastolic Blood Pressure", 82.0)
    for r in bp:
        assert r["patient_id"] == "pat-1"
        assert r["category"] == "vital-signs" and r["status"] == "final"
        assert r["time"] == dt.datetime(2020, 3, 2, 13, 0, tzinfo=UTC)  # effectivePeriod.start
        assert r["encounter_ref"] == "Encounter/enc-1"
    assert {sys_["parent_name"], dia["parent_name"]} == {"Blood Pressure"}
    assert sys_["is_component"] is True


def test_observation_values(con):
    [g] = rows(con, "observation", "ref = 'Observation/obs-glucose'")
    assert (g["name"], g["code"], g["code_system"]) == ("Glucose", "2339-0", "http://loinc.org")
    assert (g["value"], g["unit"], g["value_string"]) == (182.0, "mg/dL", None)
    assert (g["ref_low"], g["ref_high"], g["interpretation"]) == (70.0, 99.0, "H")
    assert g["category"] == "laboratory"
    assert g["time"] == dt.datetime(2020, 3, 2, 12, 30, tzinfo=UTC)
    assert g["issued"] == dt.datetime(2020, 3, 2, 14, 0, tzinfo=UTC)
    [s] = rows(con, "observation", "ref = 'Observation/obs-smoking'")
    assert s["name"] == "Tobacco smoking status NHIS"  # no code.text: first coding.display
    assert (s["value"], s["value_string"], s["value_code"]) == (None, "Never smoker", "266919005")
    assert s["time"] == dt.datetime(2020, 3, 1, 16, 0, tzinfo=UTC)  # no effective[x]: issued
    assert len(rows(con, "observation")) == 5


def test_condition(con):
    [c] = rows(con, "condition")
    assert (c["name"], c["code"], c["code_system"]) == (
        "Cellulitis (disorder)",
        "128045006",
        "http://snomed.info/sct",
    )
    assert (c["clinical_status"], c["verification_status"], c["category"]) == (
        "resolved",
        "confirmed",
        "encounter-diagnosis",
    )
    assert c["onset_time"] == dt.datetime(2020, 3, 1, 14, 0, tzinfo=UTC)
    assert c["abatement_time"] == dt.datetime(2020, 3, 20, tzinfo=UTC)  # a date: midnight UTC
    assert c["recorded_time"] == dt.datetime(2020, 3, 1, 15, 30, tzinfo=UTC)
    assert c["encounter_ref"] == "Encounter/enc-1"


def test_medication_entries(con):
    meds = {r["ref"]: r for r in rows(con, "medication")}
    assert set(meds) == {
        "MedicationRequest/mr-vanc",
        "MedicationRequest/mr-amox",
        "MedicationDispense/md-vanc",
        "MedicationAdministration/ma-vanc-1",
        "MedicationStatement/ms-asa",
    }
    req = meds["MedicationRequest/mr-vanc"]
    # name resolved through medicationReference -> Medication
    assert (req["kind"], req["request_ref"], req["medication_ref"]) == (
        "request",
        "MedicationRequest/mr-vanc",
        "Medication/med-vanc",
    )
    assert (req["medication_name"], req["medication_code"]) == ("Vancomycin 1 g IV", "1807513")
    assert req["medication_system"] == "http://www.nlm.nih.gov/research/umls/rxnorm"
    assert (req["dose"], req["dose_unit"], req["frequency"], req["period"], req["period_unit"]) == (
        1000.0,
        "mg",
        1,
        12.0,
        "h",
    )
    assert req["daily_dose"] == pytest.approx(2000.0)  # 1000 mg q12h
    assert req["route"] == "Intravenous route" and req["as_needed"] is False
    assert req["dosage_text"] == "1000 mg IV every 12 hours"
    assert (req["quantity"], req["quantity_unit"], req["days_supply"]) == (8.0, "vial", 4.0)
    assert req["reason_name"] == "Cellulitis (disorder)"  # reasonReference -> Condition
    assert req["time"] == dt.datetime(2020, 3, 1, 16, 0, tzinfo=UTC)
    assert (req["status"], req["intent"], req["encounter_ref"]) == ("completed", "order", "Encounter/enc-1")
    # name resolved through a contained Medication
    amox = meds["MedicationRequest/mr-amox"]
    assert (
        amox["medication_name"] == "amoxicillin 250 MG Oral Capsule" and amox["medication_code"] == "308182"
    )
    assert amox["medication_ref"] is None  # '#med1' is not a resource reference
    assert amox["daily_dose"] == pytest.approx(1500.0)  # 500 mg tid
    assert amox["dosage_text"] is None  # join() of no text: NULL whatever the engine gives
    assert amox["reason_name"] == "Cellulitis (disorder)"
    disp = meds["MedicationDispense/md-vanc"]
    assert (disp["kind"], disp["request_ref"], disp["medication_name"]) == (
        "dispense",
        "MedicationRequest/mr-vanc",
        "Vancomycin 1 g IV",
    )
    assert disp["time"] == dt.datetime(2020, 3, 1, 17, 0, tzinfo=UTC)  # whenHandedOver
    assert (disp["quantity"], disp["days_supply"], disp["encounter_ref"]) == (8.0, 4.0, "Encounter/enc-1")
    adm = meds["MedicationAdministration/ma-vanc-1"]
    # its Medication was not ingested: the name comes from its request
    assert (adm["kind"], adm["request_ref"], adm["medication_name"]) == (
        "administration",
        "MedicationRequest/mr-vanc",
        "Vancomycin 1 g IV",
    )
    assert adm["medication_code"] == "1807513"
    assert (adm["dose"], adm["dose_unit"], adm["route"], adm["daily_dose"]) == (1000.0, "mg", "IV", None)
    assert adm["time"] == dt.datetime(2020, 3, 1, 18, 0, tzinfo=UTC)
    assert adm["end_time"] == dt.datetime(2020, 3, 1, 19, 0, tzinfo=UTC)
    st = meds["MedicationStatement/ms-asa"]
    assert (st["kind"], st["request_ref"], st["medication_name"], st["daily_dose"]) == (
        "statement",
        None,
        "Aspirin 81 mg",
        81.0,
    )
    assert st["time"] == dt.datetime(2019, 1, 1, tzinfo=UTC)
    grouped = rows(con, "medication", "request_ref = 'MedicationRequest/mr-vanc'")
    assert sorted(r["kind"] for r in grouped) == ["administration", "dispense", "request"]


def test_procedure_immunization_allergy(con):
    [p] = rows(con, "procedure")
    assert (p["name"], p["code"], p["status"]) == ("Incision and drainage", "387713003", "completed")
    assert p["start_time"] == dt.datetime(2020, 3, 2, 19, 0, tzinfo=UTC)
    assert p["end_time"] == dt.datetime(2020, 3, 2, 19, 45, tzinfo=UTC)
    assert p["reason_name"] == "Cellulitis (disorder)" and p["encounter_ref"] == "Encounter/enc-1"
    [i] = rows(con, "immunization")
    assert (i["name"], i["code"], i["code_system"], i["status"]) == (
        "Influenza, seasonal, injectable, preservative free",
        "140",
        "http://hl7.org/fhir/sid/cvx",
        "completed",
    )
    assert i["time"] == dt.datetime(2019, 10, 1, 13, 0, tzinfo=UTC)
    assert i["patient_id"] == "pat-1"
    [a] = rows(con, "allergy")
    assert (a["name"], a["code"], a["type"], a["category"], a["criticality"]) == (
        "Penicillin",
        "7980",
        "allergy",
        "medication",
        "high",
    )
    assert (a["clinical_status"], a["verification_status"], a["reaction"]) == ("active", "confirmed", "Hives")
    assert a["recorded_time"] == dt.datetime(2010, 5, 1, tzinfo=UTC)


def test_note(con):
    notes = rows(con, "note", order="ref, url NULLS FIRST")
    assert [(n["ref"], n["source"]) for n in notes] == [
        ("DiagnosticReport/dr-1", "DiagnosticReport"),
        ("DiagnosticReport/dr-2", "DiagnosticReport"),
        ("DocumentReference/doc-1", "DocumentReference"),
        ("DocumentReference/doc-1", "DocumentReference"),
    ]  # dr-3 has neither presentedForm nor conclusion; doc-1's inline PDF has no readable text and no url
    dr1, dr2, text_note, url_note = notes
    assert text_note["text"].startswith(
        "Assessment: cellulitis of the left leg improving on vancomycin.\nPotassium 4.1"
    )
    assert "café" in text_note["text"]  # decoded as UTF-8
    assert (text_note["note_type"], text_note["note_type_code"], text_note["category"]) == (
        "Discharge summary",
        "18842-5",
        "clinical-note",
    )
    assert text_note["time"] == dt.datetime(2020, 3, 5, 17, 30, tzinfo=UTC)
    assert (text_note["status"], text_note["author"], text_note["encounter_ref"]) == (
        "current",
        "Dr. Ada Lovelace",
        "Encounter/enc-1",
    )
    assert text_note["content_type"] == "text/plain; charset=utf-8" and text_note["url"] is None
    assert url_note["text"] is None and url_note["url"] == "Binary/bin-1"
    assert dr1["text"] == "No acute cardiopulmonary process." and dr1["note_type"] == "Chest X-ray"
    assert dr1["time"] == dt.datetime(2020, 3, 1, 20, 0, tzinfo=UTC) and dr1["category"] == "RAD"
    assert " ".join(dr2["text"].split()) == "Glucose 182 mg/dL"  # html tags dropped
    assert dr2["time"] == dt.datetime(2020, 3, 2, 15, 0, tzinfo=UTC)  # issued


def test_every_map_table_exists_even_when_empty(empty_con):
    for vd in load_mappings().values():
        assert empty_con.sql(f"SELECT count(*) FROM {vd['name']}").fetchall() == [(0,)]
    for view in VIEWS:
        assert run_view(empty_con, view) == []


def test_views_are_plain_selects():
    for view in VIEWS:
        sql = view_sql(view)
        code = "\n".join(line.split("--", 1)[0] for line in sql.splitlines()).strip()
        assert code.upper().startswith(("SELECT", "WITH")), view
        assert ";" not in code and "CREATE " not in code.upper(), view
        assert not sql.rstrip().splitlines()[-1].lstrip().startswith("--"), f"{view}: ends in a comment"


REQUIRED_COLUMNS = {
    "patient": "patient_id ref name name_raw given family prefix birth_date gender deceased deceased_time mrn city "
    "state postal_code marital_status race ethnicity",
    "encounter": "patient_id ref status class_code class_name type_name type_code type_system reason_name reason_code "
    "start_time end_time discharge_disposition service_provider",
    "observation": "patient_id ref is_component parent_name name code code_system category value value_string unit "
    "time issued status ref_low ref_high interpretation encounter_ref",
    "condition": "patient_id ref name code code_system clinical_status verification_status category onset_time "
    "abatement_time recorded_time encounter_ref",
    "medication": "patient_id ref kind request_ref medication_ref medication_name medication_code medication_system "
    "status intent time end_time dose dose_unit route frequency period period_unit as_needed daily_dose dosage_text "
    "quantity quantity_unit days_supply reason_name encounter_ref",
    "procedure": "patient_id ref name code code_system status start_time end_time reason_name encounter_ref",
    "immunization": "patient_id ref name code code_system status time encounter_ref",
    "allergy": "patient_id ref name code code_system clinical_status verification_status type category criticality "
    "reaction onset_time recorded_time",
    "note": "patient_id ref source note_type note_type_code category time status content_type text url author "
    "encounter_ref",
    "care_plan": "patient_id ref name category_code status intent start_time end_time addresses_ref addresses_name "
    "activity activity_code activity_status encounter_ref",
    "goal": "patient_id ref name lifecycle_status achievement_status start_time target_measure target_value "
    "target_unit target_display due_time addresses_name",
    "imaging": "patient_id ref name modality modality_code body_site status time started number_of_series "
    "number_of_instances series_uid reason_name encounter_ref",
    "device": "patient_id ref name code code_system status udi_device_identifier distinct_identifier lot_number "
    "serial_number manufacture_date expiration_date",
}


@pytest.mark.parametrize("view", VIEWS)
def test_contract_columns_present(empty_con, view):
    """The question-answering engine codes against these names: they may be added to, never removed."""
    rel = empty_con.sql(view_sql(view))
    types = dict(zip(rel.columns, (str(t) for t in rel.types), strict=True))
    missing = [c for c in REQUIRED_COLUMNS[view].split() if c not in types]
    assert not missing, f"{view}: {missing}"
    for col, typ in types.items():
        if col.endswith("_time") or col in ("time", "issued"):
            assert typ == "TIMESTAMP WITH TIME ZONE", (view, col, typ)
    if view == "patient":
        assert types["birth_date"] == "DATE" and types["deceased"] == "BOOLEAN"
    if view == "observation":
        assert types["value"] == "DOUBLE" and types["is_component"] == "BOOLEAN"
    if view == "medication":
        assert types["daily_dose"] == "DOUBLE" and types["dose"] == "DOUBLE"
