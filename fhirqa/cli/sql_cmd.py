"""``fhirqa omop …`` and ``fhirqa export omop``: relational EHR databases (OMOP CDM, MIMIC-III).

- ``fhirqa omop load SRC --out FILE``: OMOP or MIMIC-III CSV files (folder, zip or URL) → a DuckDB file;
- ``fhirqa omop tables DATABASE``: the schema detected, each table's description and row count;
- ``fhirqa omop ask QUESTION --database DATABASE --patient ID``: an answer with evidence (table/row key);
- ``fhirqa export omop --db STORE --out PATH``: the store's canonical views written as OMOP CDM 5.4 tables.

DATABASE is a SQLite or DuckDB file, a CSV folder or zip (loaded once), or a PostgreSQL connection string.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

from fhirqa.cli.output import render


def register(commands: Any, db_default: str) -> None:
    """Add ``omop`` (load, tables, ask) and ``export``."""
    p = commands.add_parser(
        "omop",
        help="question answering over OMOP CDM and MIMIC-III databases (load, tables, ask)",
        description="Relational EHR databases: OMOP CDM 5.3/5.4 and MIMIC-III in SQLite, DuckDB or PostgreSQL. "
        "DATABASE is a database file, a CSV folder or zip, or a postgresql:// connection string.",
    )
    sub = p.add_subparsers(dest="omop_command", metavar="ACTION", required=True)

    load = sub.add_parser("load", help="load OMOP or MIMIC-III CSV files (folder, zip or URL) into a DuckDB file")
    load.add_argument("source", metavar="SRC", help="folder, .zip or http(s) URL of CSV files")
    load.add_argument("--out", required=True, help="DuckDB file to write")
    load.add_argument("--kind", choices=["auto", "omop", "mimic"], default="auto", help="CSV layout (default: detect)")
    load.set_defaults(handler=run_load)

    tables = sub.add_parser("tables", help="the detected schema, table descriptions and row counts")
    tables.add_argument("database", metavar="DATABASE")
    tables.add_argument("--schema", help="PostgreSQL schema (default: the one holding most tables)")
    tables.add_argument("--format", choices=["table", "csv", "json"], default="table")
    tables.set_defaults(handler=run_tables)

    ask = sub.add_parser("ask", help="answer a question about one patient in a relational database, with evidence")
    ask.add_argument("question", metavar="QUESTION")
    ask.add_argument("--database", required=True, metavar="DATABASE", help="database file, CSV folder/zip or connection string")
    ask.add_argument("--patient", help="person_id / subject_id, or an OMOP person_source_value (omit for patient lookup)")
    ask.add_argument("--now", help="the instant the question is asked at (ISO 8601; default: now)")
    ask.add_argument("--backend", default="offline", help="offline (default: compiled SQL), openai or gemini (model-written SQL)")
    ask.add_argument("--model", help="model name for an LLM backend")
    ask.add_argument("--base-url", help="OpenAI-compatible server URL")
    ask.add_argument("--timeout", type=float, default=10.0, help="seconds before a query is stopped (default: %(default)s)")
    ask.add_argument("--json", action="store_true", help="print the answer object as JSON")
    ask.set_defaults(handler=run_ask)

    export = commands.add_parser(
        "export",
        help="write the canonical views in another data model (omop: OMOP CDM 5.4 tables)",
        description="Write the store's canonical views as OMOP CDM 5.4 tables (person, visit_occurrence, measurement, "
        "observation, drug_exposure, condition_occurrence, procedure_occurrence, note, death, concept …) in a "
        "DuckDB file or a folder of CSV files.",
    )
    export.add_argument("model", choices=["omop"], metavar="MODEL", help="target data model: omop")
    export.add_argument("--db", default=db_default, help="store folder (default: %(default)s)")
    export.add_argument("--out", required=True, help="DuckDB file (or folder, with --format csv) to write")
    export.add_argument("--format", choices=["duckdb", "csv"], default="duckdb", help="output format (default: %(default)s)")
    export.set_defaults(handler=run_export)


def run_load(args: argparse.Namespace) -> int:
    """Load CSV files into a DuckDB file."""
    from fhirqa.sql.load import load_csv

    print(load_csv(args.source, Path(args.out), kind=args.kind).summary())
    return 0


def run_tables(args: argparse.Namespace) -> int:
    """Print the schema and table descriptions."""
    from fhirqa.sql.connect import connect
    from fhirqa.sql.describe import describe
    from fhirqa.sql.schema import discover

    with connect(args.database, schema=args.schema) as con:
        schema = discover(con)
        descriptions = describe(con, schema)
        rows = [(name, schema.tables[name].rows, schema.patient_key(name) or ("dictionary" if schema.is_dictionary(name) else ""),
                 d.source, d.text) for name, d in descriptions.items()]
        if args.format == "table":
            print(f"{con.target}: {schema.label}, {len(schema.tables)} tables")
        print(render(["table", "rows", "patient key", "described by", "description"], rows, args.format))
    return 0


def run_ask(args: argparse.Namespace) -> int:
    """Answer one question from a relational database."""
    from fhirqa.sql.engine import ask_sql

    config: dict[str, Any] = {k: v for k, v in (("model", args.model), ("base_url", args.base_url)) if v}
    answer = ask_sql(args.question, patient_id=args.patient, now=args.now, connection=args.database,
                     backend=args.backend, backend_config=config, timeout_s=args.timeout)
    if args.json:
        print(orjson.dumps(answer.to_dict(), option=orjson.OPT_INDENT_2).decode())
        return 0
    print(answer.text)
    print(f"answer: {answer.answer}{(' ' + answer.unit) if answer.unit else ''}   status: {answer.status}   "
          f"{answer.latency_ms:.0f} ms, {answer.trace.get('schema')}, backend {answer.backend}")
    if answer.evidence:
        rows = [(e.time, e.label, e.value, e.unit, e.ref, e.field) for e in answer.evidence[:25]]
        print(render(["time", "item", "value", "unit", "row", "column"], rows, title="Evidence"))
        if len(answer.evidence) > 25:
            print(f"… {len(answer.evidence) - 25} more evidence rows (use --json for all)")
    return 0 if answer.status in ("answered", "no-data") else 1


def run_export(args: argparse.Namespace) -> int:
    """Export the store as OMOP CDM tables."""
    from fhirqa.sql.export import export_omop

    print(export_omop(args.db, args.out, fmt=args.format).summary())
    return 0
