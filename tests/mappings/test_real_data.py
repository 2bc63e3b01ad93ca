"""(c) Every mapping + view over the shared real data: row counts checked against a direct scan of the raw JSON."""

from __future__ import annotations

import pytest

from .maptest_helpers import build_tables, load_ndjson_dir, load_synthea_bundles, shared_data_dir

pytestmark = pytest.mark.shared

DATA = shared_data_dir()
needs_data = pytest.mark.skipif(
    DATA is None, reason="../shared/data (Synthea samples) is absent in this checkout"
)


def count(con, sql):
    return con.sql(sql).fetchall()[0][0]


@pytest.fixture(scope="module")
def bundles():
    resources = load_synthea_bundles(DATA)
    con = build_tables(resources)
    yield resources, con
    con.close()


@pytest.fixture(scope="module")
def bulk():
    resources = load_ndjson_dir(DATA / "synthea-bulk-10")
    con = build_tables(resources)
    yield resources, con
    con.close()


def by_type(resources, rtype):
    return [r for r in resources if r["resourceType"] == rtype]


@needs_data
def test_synthea_bundles_counts(bundles):
    resources, con = bundles
    obs = by_type(resources, "Observation")
    components = sum(len(o.get("component", [])) for o in obs)
    assert (len(obs), components) == (13020, 1672)  # the shared data as documented
    view = "SELECT * FROM ({}) AS v".format
    from .maptest_helpers import view_sql

    assert count(con, f"SELECT count(*) FROM ({view_sql('observation')})") == len(obs) + components
    assert count(con, f"SELECT count(*) FROM ({view_sql('observation')}) WHERE is_component") == components
    assert (
        count(con, f"SELECT count(*) FROM ({view_sql('condition')})")
        == len(by_type(resources, "Condition"))
        == 665
    )
    assert (
        count(con, f"SELECT count(*) FROM ({view_sql('medication')}) WHERE kind = 'request'")
        == len(by_type(resources, "MedicationRequest"))
        == 571
    )
    assert (
        count(con, f"SELECT count(*) FROM ({view_sql('encounter')})")
        == len(by_type(resources, "Encounter"))
        == 2318
    )
    for name, rtype in [
        ("patient", "Patient"),
        ("procedure", "Procedure"),
        ("immunization", "Immunization"),
        ("allergy", "AllergyIntolerance"),
    ]:
        assert count(con, f"SELECT count(*) FROM ({view_sql(name)})") == len(by_type(resources, rtype)), name
    del view


@needs_data
def test_synthea_bundles_values(bundles):
    from .maptest_helpers import view_sql

    resources, con = bundles
    obs = by_type(resources, "Observation")
    quantities = [o["valueQuantity"]["value"] for o in obs if "valueQuantity" in o]
    quantities += [
        c["valueQuantity"]["value"] for o in obs for c in o.get("component", []) if "valueQuantity" in c
    ]
    o = f"({view_sql('observation')})"
    assert count(con, f"SELECT count(value) FROM {o}") == len(quantities)
    assert count(con, f"SELECT sum(value) FROM {o}") == pytest.approx(sum(quantities), rel=1e-9)
    assert count(con, f"SELECT count(value_string) FROM {o}") == sum(
        1 for x in obs if "valueCodeableConcept" in x or "valueString" in x
    )
    # every row has a patient, a name and a time; component rows name their panel
    assert (
        count(con, f"SELECT count(*) FROM {o} WHERE patient_id IS NULL OR name IS NULL OR time IS NULL") == 0
    )
    assert count(con, f"SELECT count(*) FROM {o} WHERE is_component AND parent_name IS NULL") == 0
    bp = count(con, f"SELECT count(*) FROM {o} WHERE code = '55284-4' AND NOT is_component")
    assert count(con, f"SELECT count(*) FROM {o} WHERE parent_code = '55284-4'") == 2 * bp
    m = f"({view_sql('medication')})"
    assert count(con, f"SELECT count(*) FROM {m} WHERE medication_name IS NULL OR time IS NULL") == 0
    e = f"({view_sql('encounter')})"
    assert count(con, f"SELECT count(*) FROM {e} WHERE class_name IS NULL OR start_time IS NULL") == 0
    pts = con.sql(f"SELECT name FROM ({view_sql('patient')})").fetchall()
    assert len(pts) == 100 and not any(ch.isdigit() for (n,) in pts for ch in n)
    c = f"({view_sql('condition')})"
    assert count(con, f"SELECT count(abatement_time) FROM {c}") == sum(
        1 for x in by_type(resources, "Condition") if "abatementDateTime" in x
    )


@needs_data
def test_bulk_notes(bulk):
    from .maptest_helpers import view_sql

    resources, con = bulk
    docs = by_type(resources, "DocumentReference")
    assert len(docs) == 1215
    n = f"({view_sql('note')})"
    assert count(con, f"SELECT count(*) FROM {n}") == len(docs)
    assert count(con, f"SELECT count(DISTINCT ref) FROM {n}") == len(docs)
    assert (
        count(con, f"SELECT count(*) FROM {n} WHERE text IS NULL OR time IS NULL OR patient_id IS NULL") == 0
    )
    # the decoded text is the attachment, byte for byte
    import base64

    first = min(docs, key=lambda d: d["id"])
    want = base64.b64decode(first["content"][0]["attachment"]["data"]).decode("utf-8")
    got = con.sql(f"SELECT text FROM {n} WHERE ref = 'DocumentReference/{first['id']}'").fetchall()
    assert got == [(want,)]
    assert count(con, f"SELECT count(*) FROM ({view_sql('condition')})") == len(
        by_type(resources, "Condition")
    )
    assert count(con, f"SELECT count(*) FROM ({view_sql('medication')}) WHERE kind = 'request'") == len(
        by_type(resources, "MedicationRequest")
    )
    assert count(con, f"SELECT count(*) FROM ({view_sql('encounter')})") == len(
        by_type(resources, "Encounter")
    )
    assert count(con, f"SELECT count(*) FROM ({view_sql('medication')}) WHERE medication_name IS NULL") == 0
