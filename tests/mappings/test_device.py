"""The device view over hand-made Device resources (``tests/mappings/fixtures/device.json``, all of ``pat-1``).

``dev-cpap`` is a Synthea-shaped device (UDI carrier, lot and serial numbers, manufacture and expiration dates,
a SNOMED CT type with its own text); ``dev-local-first`` writes a local coding before the SNOMED CT one and has no
text, no UDI and no dates; ``dev-named-only`` has no type at all, only a manufacturer's deviceName.
"""

from __future__ import annotations

import datetime as dt

import pytest

from .maptest_helpers import build_tables, load_fixtures, load_mappings, run_mapping, view_sql

UTC = dt.UTC


@pytest.fixture(scope="module")
def con():
    c = build_tables(load_fixtures())
    yield c
    c.close()


def device(con, ref):
    rel = con.sql(f"SELECT * FROM ({view_sql('device')}) AS v WHERE ref = '{ref}'")
    [row] = rel.fetchall()
    return dict(zip(rel.columns, row, strict=True))


def test_a_device_is_one_row_named_by_its_type_text(con):
    cpap = device(con, "Device/dev-cpap")
    assert (cpap["patient_id"], cpap["name"], cpap["status"]) == ("pat-1", "Home CPAP unit", "active")
    assert (cpap["code"], cpap["code_system"]) == ("702172008", "http://snomed.info/sct")
    assert con.sql(f"SELECT count(*) FROM ({view_sql('device')})").fetchall() == [(3,)]


def test_udi_lot_and_serial_numbers_are_kept(con):
    cpap = device(con, "Device/dev-cpap")
    assert cpap["udi_device_identifier"] == cpap["distinct_identifier"] == "61539706474526"
    assert cpap["udi_carrier_hrf"].startswith("(01)61539706474526")
    assert (cpap["lot_number"], cpap["serial_number"]) == ("88123", "7702")


def test_manufacture_and_expiration_dates_are_the_devices_own_and_the_view_has_no_time_of_use(con):
    cpap = device(con, "Device/dev-cpap")
    assert cpap["manufacture_date"] == dt.datetime(2019, 3, 1, 15, 15, tzinfo=UTC)
    assert cpap["manufacture_date_offset"] == -300
    assert cpap["expiration_date"] == dt.datetime(2044, 3, 16, tzinfo=UTC) and cpap["expiration_date_offset"] is None
    assert not {"time", "start_time", "end_time"} & set(cpap)  # R4 Device records no period of use


def test_the_snomed_code_is_preferred_wherever_it_sits_and_the_display_names_the_device(con):
    chair = device(con, "Device/dev-local-first")
    assert (chair["code"], chair["code_system"]) == ("228869008", "http://snomed.info/sct")
    assert chair["name"] == "Manual wheelchair"  # no text: the first coding's display
    assert (chair["status"], chair["manufacturer"], chair["model_number"], chair["location"]) == (
        "inactive", "Acme Mobility", "WC-200", "Patient home")
    assert chair["udi_device_identifier"] is None and chair["manufacture_date"] is None


def test_a_device_without_a_type_is_named_by_its_device_name(con):
    meter = device(con, "Device/dev-named-only")
    assert (meter["name"], meter["code"], meter["device_name"]) == ("Freestyle glucose meter", None,
                                                                    "Freestyle glucose meter")


def test_the_map_gives_one_row_per_device_whatever_its_shape():
    vd = load_mappings()["Device"]
    for resource in (r for r in load_fixtures() if r["resourceType"] == "Device"):
        assert len(run_mapping(vd, resource)) == 1, resource["id"]
