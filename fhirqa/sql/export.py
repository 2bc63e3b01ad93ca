"""``fhirqa export omop``: write a store's canonical views as OMOP CDM 5.4 tables (DuckDB file or CSV folder).

person, person_name (fhirqa extension), death, observation_period, visit_occurrence, condition_occurrence,
procedure_occurrence, drug_exposure, measurement, observation, note, plus a minimal ``concept`` table built
from the codes and names present (local concept ids above 2,000,000,000 as the CDM reserves them, standard
ids for visit, gender and type concepts) and ``cdm_source``. The mapping is in :mod:`fhirqa.sql.export_tables`;
the result answers the same questions through :func:`fhirqa.sql.ask_sql` (``evals/cross_schema.py``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from fhirqa.errors import FhirqaError
from fhirqa.sql.export_tables import CODES, OBSERVATION_ROWS, STANDARD_CONCEPTS, TABLES, vocab
from fhirqa.store import Store

BASE_ID = 2_000_000_000  # the CDM reserves concept ids above two billion for local concepts
FORMATS = ("duckdb", "csv")


class ExportError(FhirqaError):
    """The export could not be written."""


@dataclass
class ExportReport:
    """Where the export went and how many rows each table got."""

    out: Path
    format: str
    tables: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One line per table."""
        lines = [f"{self.out} ({self.format}, OMOP CDM 5.4): {len(self.tables)} tables"]
        lines += [f"  {name:<22} {rows:>8,}" for name, rows in self.tables.items()]
        return "\n".join(lines)


def _helpers(con: object) -> None:
    """The id maps every table query joins: persons, visits, concepts (standard and source), observation rows, panels."""
    run = con.execute  # type: ignore[attr-defined]
    run("CREATE TEMP TABLE x_person AS SELECT patient_id, row_number() OVER (ORDER BY patient_id) AS person_id "
        "FROM (SELECT DISTINCT patient_id FROM patient WHERE patient_id IS NOT NULL)")
    run("CREATE TEMP TABLE x_visit AS SELECT ref, row_number() OVER (ORDER BY patient_id, start_time, ref) "
        "AS visit_occurrence_id FROM encounter")
    codes = CODES.format(obs_vocab=vocab("code_system"), cond_vocab=vocab("code_system"), proc_vocab=vocab("code_system"),
                         med_vocab=vocab("medication_system"), imm_vocab=vocab("code_system"),
                         all_vocab=vocab("code_system"), enc_vocab=vocab("type_system"))
    run(f"CREATE TEMP TABLE x_codes AS SELECT domain, class, vocabulary, code, name, count(*) AS n FROM ({codes}) "
        "WHERE code IS NOT NULL GROUP BY ALL")
    columns = ("CAST(NULL AS VARCHAR) AS standard_concept, code AS concept_code, DATE '1970-01-01' AS valid_start_date, "
               "DATE '2099-12-31' AS valid_end_date, CAST(NULL AS VARCHAR) AS invalid_reason")
    # One standard concept per (vocabulary, code), named as the records name it most often.
    run(f"""CREATE TEMP TABLE x_concept AS
        WITH named AS (SELECT vocabulary, code, name, sum(n) AS n, min(domain) AS domain, min(class) AS class
                       FROM x_codes GROUP BY ALL),
        ranked AS (SELECT *, row_number() OVER (PARTITION BY vocabulary, code ORDER BY n DESC, name) AS rk FROM named)
        SELECT CAST({BASE_ID} + row_number() OVER (ORDER BY vocabulary, code) AS BIGINT) AS concept_id,
               name AS concept_name, domain AS domain_id, vocabulary AS vocabulary_id, class AS concept_class_id, {columns}
        FROM ranked WHERE rk = 1""")
    # A source concept for every other name a record gives the same code (answers keep the record's own words).
    run(f"""CREATE TEMP TABLE x_source AS
        SELECT CAST((SELECT max(concept_id) FROM x_concept) + row_number() OVER (ORDER BY vocabulary, code, name) AS BIGINT)
                   AS concept_id, name AS concept_name, min(domain) AS domain_id, vocabulary AS vocabulary_id,
               min(class) AS concept_class_id, {columns}
        FROM x_codes AS q
        WHERE NOT EXISTS (SELECT 1 FROM x_concept AS c WHERE c.vocabulary_id = q.vocabulary AND c.concept_code = q.code
                          AND c.concept_name = q.name)
        GROUP BY vocabulary, code, name""")
    values = ", ".join(f"({cid}, '{name}', '{domain}', '{vocabulary}', '{cls}', 'S', '{code}', DATE '1970-01-01', "
                       f"DATE '2099-12-31', NULL)" for cid, name, domain, vocabulary, cls, code in STANDARD_CONCEPTS)
    run(f"INSERT INTO x_concept VALUES {values}")
    run(f"CREATE TEMP TABLE x_obs AS {OBSERVATION_ROWS}")
    run("CREATE TEMP TABLE x_panel AS SELECT ref, min(observation_id) AS observation_id FROM x_obs "
        "WHERE NOT is_component AND qualifier IS NULL GROUP BY ref")


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_omop(db: str | Path, out: str | Path, fmt: str = "duckdb") -> ExportReport:
    """Export the store at ``db`` to ``out``: a DuckDB file (``fmt="duckdb"``) or a folder of CSV files (``"csv"``)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    store = Store(db)
    out = Path(out)
    con = store.connect(sandbox=False)
    report = ExportReport(out, fmt)
    partial = out.with_name(out.name + ".partial")
    if partial.is_dir():
        shutil.rmtree(partial)
    partial.unlink(missing_ok=True)
    try:
        _helpers(con)
        tables = {"cdm_source": "SELECT 'fhirqa export' AS cdm_source_name, 'fhirqa' AS cdm_source_abbreviation, "
                                "'fhirqa' AS cdm_holder, 'canonical FHIR views exported to OMOP CDM' AS source_description, "
                                "'5.4' AS cdm_version, current_date AS cdm_release_date",
                  "concept": "SELECT * FROM x_concept UNION ALL SELECT * FROM x_source", **TABLES}
        if fmt == "duckdb":
            con.execute(f"ATTACH {_quote(partial)} AS omop")
            for name, sql in tables.items():
                con.execute(f"CREATE TABLE omop.{name} AS {sql}")
                report.tables[name] = int(con.execute(f"SELECT count(*) FROM omop.{name}").fetchall()[0][0])
            con.execute("DETACH omop")
        else:
            partial.mkdir(parents=True)
            for name, sql in tables.items():
                target = partial / f"{name}.csv"
                con.execute(f"COPY ({sql}) TO {_quote(target)} (HEADER, DELIMITER ',')")
                report.tables[name] = int(con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0])
    except Exception as exc:
        raise ExportError(f"export to {out} failed: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()
    if out.is_dir():
        shutil.rmtree(out)
    elif out.exists():
        out.unlink()
    os.replace(partial, out)
    return report
