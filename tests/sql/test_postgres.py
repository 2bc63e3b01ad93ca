"""A real PostgreSQL server on 127.0.0.1 (Debian's ``postgresql`` package, started here in a temporary folder).

Skipped, with the reason, when the server binaries (``initdb``, ``pg_ctl``) or psycopg are missing. As root the
server runs as the ``postgres`` (or ``nobody``) user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from fhirqa.sql import ask_sql, connect
from fhirqa.sql.safe import QueryError, QueryTimeout, UnsafeQuery, execute, run_scoped
from fhirqa.sql.schema import discover
from tests.sql.mimic_data import ROWS, TABLES

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'psycopg[binary]')")


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_type(column: str, sqlite_type: str) -> str:
    name = column.upper()
    if sqlite_type == "TEXT" and (name.endswith(("TIME", "DATE")) or name in ("DOB", "DOD", "DOD_HOSP", "DOD_SSN")):
        return "TIMESTAMP(0)"
    return {"INTEGER": "INTEGER", "REAL": "DOUBLE PRECISION", "TEXT": "TEXT"}.get(sqlite_type, sqlite_type)


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A running server with the MIMIC-III test tables in schema ``mimiciii``; yields its connection string."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql")
    # a folder of its own under the system temp dir: pytest's are private to this user, the server runs as another
    base = Path(tempfile.mkdtemp(prefix="fhirqa-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
        if user is None:
            pytest.skip("running as root and no 'postgres' or 'nobody' user to run the server as")
        entry = pwd.getpwnam(user)
        os.chown(base, entry.pw_uid, entry.pw_gid)
        runuser = shutil.which("runuser") or shutil.which("setpriv")
        if runuser is None:
            pytest.skip("running as root without runuser/setpriv to drop privileges for the server")
        prefix = [runuser, "-u", user, "--"] if runuser.endswith("runuser") else \
            [runuser, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    data, port = base / "data", _free_port()
    subprocess.run([*prefix, initdb, "-D", str(data), "-U", "fhirqa", "--auth=trust", "-E", "UTF8"], check=True,
                   capture_output=True)
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"], check=True,
                   capture_output=True)
    url = f"postgresql://fhirqa@127.0.0.1:{port}/postgres"
    try:
        _load(url)
        yield url
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _load(url: str) -> None:
    for _ in range(50):
        try:
            con = psycopg.connect(url, autocommit=True)
            break
        except psycopg.OperationalError:
            time.sleep(0.1)
    else:
        raise RuntimeError("the test server did not accept connections")
    with con:
        con.execute("CREATE SCHEMA mimiciii")
        for table, columns in TABLES.items():
            parts = []
            for column in columns.split(", "):
                name, kind, *rest = column.split(" ")
                parts.append(" ".join([name.lower(), _pg_type(name, kind), *rest]))
            con.execute(f"CREATE TABLE mimiciii.{table.lower()} ({', '.join(parts)})")
            rows = ROWS.get(table, [])
            if rows:
                marks = ", ".join(["%s"] * len(rows[0]))
                with con.cursor() as cursor:
                    cursor.executemany(f"INSERT INTO mimiciii.{table.lower()} VALUES ({marks})", rows)


@pytest.fixture(scope="module")
def pg(postgres):
    con = connect(postgres)
    yield con
    con.close()


def test_the_schema_is_discovered_in_its_postgres_schema(pg):
    schema = discover(pg)
    assert schema.kind == "mimic-iii" and schema.schema_name == "mimiciii"
    assert schema.row_key("labevents") == "row_id" and schema.patient_key("prescriptions") == "subject_id"


def test_questions_are_answered_over_postgres(pg):
    now = "2166-01-01T00:00:00Z"
    last = ask_sql("What was his last potassium?", patient_id="10006", now=now, connection=pg)
    assert last.answer == [4.6] and last.evidence[0].ref == "labevents/3"
    assert ask_sql("How many vancomycin prescriptions does he have?", patient_id="10006", now=now, connection=pg).answer == [2]
    assert ask_sql("Has he been diagnosed with hypertension?", patient_id="10006", now=now, connection=pg).answer == [True]
    assert ask_sql("Was his potassium ever above 5.0?", patient_id="10006", now=now, connection=pg).answer == [True]


def test_postgres_refuses_writes_even_past_the_parser(pg):
    schema = discover(pg)
    for sql in ("DROP TABLE patients", "UPDATE labevents SET valuenum = 0", "SELECT 1; SELECT 2"):
        with pytest.raises(UnsafeQuery):
            run_scoped(pg, schema, sql, patient_value=10006)
    with pytest.raises(QueryError, match="read-only"):
        execute(pg, "DROP TABLE mimiciii.patients")  # the session itself is read-only
    assert execute(pg, "SELECT count(*) FROM mimiciii.patients").rows == [(2,)]


def test_a_slow_postgres_query_is_stopped_at_the_limit(pg):
    schema = discover(pg)
    started = time.perf_counter()
    with pytest.raises(QueryTimeout):
        run_scoped(pg, schema, "SELECT pg_sleep(5)", patient_value=10006, timeout_s=0.5)
    assert time.perf_counter() - started < 3
    assert run_scoped(pg, schema, "SELECT count(*) AS n FROM labevents", patient_value=10006).rows == [(7,)]


def test_another_patients_rows_never_come_back_from_postgres(pg):
    schema = discover(pg)
    result = run_scoped(pg, schema, "SELECT * FROM labevents WHERE subject_id = 10011 OR 1 = 1", patient_value=10006)
    assert len(result.rows) == 7 and all(r["subject_id"] == 10006 for r in result.records())
    rows = run_scoped(pg, schema, "SELECT subject_id, valuenum FROM labevents WHERE CAST(valuenum AS TEXT) LIKE '%.%'",
                      patient_value=10006).records()
    assert rows and all(r["subject_id"] == 10006 for r in rows)
