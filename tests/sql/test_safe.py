"""Safe execution: only one read-only SELECT, a real time limit, a reported row cap, one patient's rows only."""

from __future__ import annotations

import time

import pytest

from fhirqa.sql.connect import connect
from fhirqa.sql.safe import QueryError, QueryTimeout, UnsafeQuery, check, execute, run_scoped
from fhirqa.sql.schema import discover

REFUSED = [
    "DROP TABLE labevents",
    "UPDATE labevents SET valuenum = 0",
    "DELETE FROM labevents",
    "INSERT INTO labevents (row_id) VALUES (99)",
    "ATTACH DATABASE '/tmp/other.db' AS other",
    "PRAGMA table_info(labevents)",
    "SELECT 1; DROP TABLE labevents",
    "SELECT * FROM labevents; SELECT * FROM patients",
    "CREATE TABLE x AS SELECT * FROM labevents",
    "WITH gone AS (DELETE FROM labevents RETURNING *) SELECT * FROM gone",
    "SELECT * INTO copy FROM labevents",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT load_extension('evil')",
    "COPY labevents TO '/tmp/out.csv'",
    "SET threads = 1",
    "VACUUM",
]


@pytest.fixture(scope="module")
def mimic(mimic_db):
    con = connect(mimic_db)
    yield con, discover(con)
    con.close()


@pytest.mark.parametrize("sql", REFUSED)
def test_anything_but_one_select_is_refused_before_it_runs(mimic, sql):
    con, schema = mimic
    with pytest.raises(UnsafeQuery):
        run_scoped(con, schema, sql, patient_value=10006)
    rows = execute(con, "SELECT count(*) FROM labevents").rows
    assert rows == [(10,)]


@pytest.mark.parametrize("sql", ["DROP TABLE labevents", "ATTACH DATABASE ':memory:' AS x", "PRAGMA writable_schema = 1",
                                 "DELETE FROM labevents"])
def test_the_sqlite_connection_itself_refuses_writes_attach_and_pragma(mimic, sql):
    con, _ = mimic
    with pytest.raises(QueryError):
        execute(con, sql)  # no sqlglot check here: the read-only connection and its authorizer refuse


def test_the_duckdb_connection_is_read_only(sample_omop):
    with connect(sample_omop) as con:
        for sql in ("DROP TABLE person", "CREATE TABLE x (a INT)", "SELECT * FROM read_csv('/etc/passwd')"):
            with pytest.raises(QueryError):
                execute(con, sql)


def test_check_accepts_plain_selects_and_unions():
    for sql in ("SELECT 1", "WITH a AS (SELECT 1 AS x) SELECT x FROM a", "SELECT 1 UNION ALL SELECT 2", "SELECT 1;"):
        check(sql, "sqlite")


def test_a_slow_sqlite_query_is_stopped_at_the_limit(mimic):
    con, schema = mimic
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    started = time.perf_counter()
    with pytest.raises(QueryTimeout):
        run_scoped(con, schema, endless, patient_value=10006, timeout_s=0.5)
    assert time.perf_counter() - started < 3
    assert execute(con, "SELECT count(*) FROM patients").rows == [(2,)]  # the connection still works


def test_a_slow_duckdb_query_is_stopped_at_the_limit(sample_omop):
    with connect(sample_omop) as con:
        schema = discover(con)
        slow = "SELECT count(*) FROM range(100000000) AS a(x), range(100000) AS b(y) WHERE a.x + b.y = -1"
        started = time.perf_counter()
        with pytest.raises(QueryTimeout):
            run_scoped(con, schema, slow, patient_value=1, timeout_s=0.5)
        assert time.perf_counter() - started < 5


def test_the_row_cap_is_reported(mimic):
    con, schema = mimic
    result = run_scoped(con, schema, "SELECT * FROM d_labitems", patient_value=10006, limit=2)
    assert len(result.rows) == 2 and result.truncated and "first 2 rows" in result.notes[0]


@pytest.mark.parametrize("sql", [
    "SELECT * FROM labevents",
    "SELECT * FROM labevents WHERE subject_id = 10011",
    "SELECT * FROM labevents WHERE subject_id = 10011 OR 1 = 1",
    "SELECT l.* FROM labevents AS l JOIN patients AS p ON 1 = 1",
    "SELECT * FROM labevents WHERE row_id IN (SELECT row_id FROM labevents WHERE subject_id <> 10006)",
    "WITH everyone AS (SELECT * FROM labevents) SELECT * FROM everyone",
    "SELECT * FROM labevents UNION ALL SELECT * FROM main.labevents",
    "SELECT subject_id, max(valuenum) AS v FROM labevents GROUP BY subject_id",
])
def test_another_patients_rows_are_never_returned(mimic, sql):
    con, schema = mimic
    result = run_scoped(con, schema, sql, patient_value=10006)
    records = result.records()
    assert all(r["subject_id"] == 10006 for r in records)
    assert not any(r.get("valuenum") in (6.9, 7.2, 4.8) or r.get("v") in (6.9, 7.2) for r in records)


def test_a_with_name_may_not_shadow_a_table(mimic):
    con, schema = mimic
    with pytest.raises(UnsafeQuery, match="shadow"):
        run_scoped(con, schema, "WITH labevents AS (SELECT * FROM labevents) SELECT * FROM labevents", patient_value=10006)


def test_unknown_tables_and_other_databases_are_refused(mimic):
    con, schema = mimic
    for sql in ("SELECT * FROM secrets", "SELECT * FROM other.labevents", "SELECT * FROM sqlite_master"):
        with pytest.raises(UnsafeQuery):
            run_scoped(con, schema, sql, patient_value=10006)


def test_dictionaries_are_readable_whole(mimic):
    con, schema = mimic
    assert len(run_scoped(con, schema, "SELECT label FROM d_labitems", patient_value=10006).rows) == 4


def test_patient_data_without_a_patient_key_is_refused(sample_omop, tmp_path):
    import duckdb

    path = tmp_path / "omop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE person (person_id BIGINT, year_of_birth INT)")
    con.execute("CREATE TABLE concept (concept_id BIGINT, concept_name VARCHAR)")
    con.execute("CREATE TABLE cost (cost_id BIGINT, cost_event_id BIGINT, total_charge DOUBLE)")
    con.close()
    with connect(path) as db:
        schema = discover(db)
        assert schema.kind == "omop"
        with pytest.raises(UnsafeQuery, match="without a patient key"):
            run_scoped(db, schema, "SELECT * FROM cost", patient_value=1)
