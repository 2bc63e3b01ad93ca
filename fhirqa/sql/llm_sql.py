"""The LLM SQL writer: a model writes one SELECT from the retrieved tables, fixes it from the database's errors.

1. describe the tables (:mod:`fhirqa.sql.describe`) and keep the top-k for the question (:mod:`fhirqa.sql.retrieve`);
2. prompt with those tables, their columns and a sampled row (the patient's own row for patient tables,
   a dictionary row otherwise); the patient filter is not the model's job: every query is scoped to the
   patient by :func:`fhirqa.sql.safe.run_scoped`;
3. run it; on a database error, send the error back and ask again (up to :data:`MAX_RETRIES` times); when the
   result is empty although the patient has rows in the tables it read, ask once more with that fact;
4. the model reads the rows and writes the answer (JSON: answer, unit, status, text); rows that carry a table's
   row key are cited as evidence.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import sqlglot
from sqlglot import exp

from fhirqa.agent.answer import Evidence
from fhirqa.agent.backends.base import Message
from fhirqa.sql.connect import Connection, time_param
from fhirqa.sql.describe import describe
from fhirqa.sql.records import SqlPatient, iso
from fhirqa.sql.retrieve import select_tables
from fhirqa.sql.safe import QueryError, QueryResult, run_scoped
from fhirqa.sql.schema import Schema

MAX_RETRIES = 3
ROWS_SHOWN = 50

SYSTEM = """You write one read-only SQL query ({dialect}) over a {label} database to answer a question about ONE patient.
Rules:
- Exactly one SELECT (WITH … SELECT allowed). No semicolons, no writes, no settings.
- Do not filter by patient: every table is already limited to this patient's rows.
- The question is asked at now = {now}; ignore rows timed after now.
- Select the row key and time columns of the rows the answer rests on, with the values.
- Reply with JSON only: {{"sql": "…"}}."""

ANSWER = """Question: {question}
Now: {now}
The query
{sql}
returned {count} row(s){more}:
{rows}
Reply with JSON only: {{"answer": [values], "unit": "unit or null", "status": "answered" | "no-data",
"text": "one sentence"}}. Counts of nothing are 0 (answered); yes/no questions answer true or false."""


def _tables_block(con: Connection, schema: Schema, data: SqlPatient, tables: list[str], descriptions: dict) -> str:
    blocks = []
    for name in tables:
        table = schema.tables[name]
        described = descriptions.get(name)
        columns = ", ".join(f"{c.name} {c.type}" for c in table.columns)
        sample: list[dict[str, Any]] = table.sample[:1]
        if schema.patient_key(name):
            try:
                sample = run_scoped(con, schema, f"SELECT * FROM {name} LIMIT 1", patient_value=data.patient_value,
                                    limit=1).records()
            except QueryError:
                sample = []
        row = json.dumps(sample[0], default=str)[:600] if sample else "(no rows)"
        blocks.append(f"## {name}\n{described.text if described else ''}\nColumns: {columns}\nSample row: {row}")
    return "\n\n".join(blocks)


def _json(text: str | None) -> dict[str, Any]:
    """The JSON object in a reply (fenced or bare); {} when there is none."""
    if not text:
        return {}
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            value = json.loads(match.group(0))
            return value if isinstance(value, dict) else {}
        except ValueError:
            pass
    return {}


def _sql_of(text: str | None) -> str:
    sql = _json(text).get("sql")
    if isinstance(sql, str) and sql.strip():
        return sql.strip().rstrip(";")
    fenced = re.search(r"```(?:sql)?\s*(.*?)```", text or "", re.DOTALL)
    return (fenced.group(1) if fenced else (text or "")).strip().rstrip(";")


def _tables_read(sql: str, dialect: str) -> list[str]:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return []
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return list(dict.fromkeys(t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes))


def _has_rows(con: Connection, schema: Schema, data: SqlPatient, tables: list[str]) -> list[str]:
    out = []
    for name in tables:
        if schema.patient_key(name):
            try:
                if run_scoped(con, schema, f"SELECT 1 AS x FROM {name} LIMIT 1", patient_value=data.patient_value).rows:
                    out.append(name)
            except QueryError:
                continue
    return out


def _evidence(schema: Schema, tables: list[str], result: QueryResult) -> list[Evidence]:
    """Rows that carry a read table's row key, cited with their first value and time column."""
    columns = [c.lower() for c in result.columns]
    out: list[Evidence] = []
    for name in tables:
        key = schema.row_key(name)
        if not key or key not in columns:
            continue
        timed = next((c for c in columns if re.search(r"(time|date)", c)), None)
        valued = next((c for c in columns if c not in (key, timed) and not c.endswith("_id")), None)
        for row in result.records()[:20]:
            out.append(Evidence(ref=f"{name}/{row[key]}", field=f"{name}.{valued or key}",
                                value=iso(row.get(valued)) if valued else row[key],
                                time=iso(row.get(timed)) if timed else None))
        break
    return out


def answer_with_llm(model: Any, question: str, now: datetime, con: Connection, schema: Schema, person: Any,
                    data: SqlPatient | None, trace: dict[str, Any]) -> tuple[dict[str, Any], list[Evidence]]:
    """Answer with a model writing the SQL (see the module docstring)."""
    if data is None:
        return {"answer": [], "status": "refused", "text": "The LLM SQL writer answers questions about one patient."}, []
    tokens = {"prompt": 0, "completion": 0}

    def ask(messages: list[Message], role: str) -> str:
        turn = model.complete(messages, [], role=role)
        tokens["prompt"] += turn.prompt_tokens
        tokens["completion"] += turn.completion_tokens
        return turn.text or ""

    descriptions = describe(con, schema, backend=model)
    tables = select_tables(question, descriptions, schema)
    trace["tables"] = tables
    system = SYSTEM.format(dialect=con.dialect, label=schema.label, now=now.isoformat())
    user = (f"Question: {question}\nNow: {now.isoformat()}\n\nTables:\n"
            f"{_tables_block(con, schema, data, tables, descriptions)}")
    messages = [Message("system", system), Message("user", user)]
    attempts: list[dict[str, Any]] = []
    result: QueryResult | None = None
    sql = ""
    nudged = False
    for _ in range(1 + MAX_RETRIES):
        reply = ask(messages, "sql_writer")
        sql = _sql_of(reply)
        messages.append(Message("assistant", reply))
        try:
            result = run_scoped(con, schema, sql, {"now": time_param(con, now)}, patient_value=data.patient_value,
                                timeout_s=data.timeout_s)
        except QueryError as exc:
            attempts.append({"sql": sql, "error": str(exc)})
            messages.append(Message("user", f"The database refused or failed the query: {exc}\nFix it; reply with JSON only."))
            result = None
            continue
        attempts.append({"sql": sql, "rows": len(result.rows)})
        holding = _has_rows(con, schema, data, _tables_read(sql, con.dialect)) if not result.rows else []
        if not result.rows and holding and not nudged:
            nudged = True
            messages.append(Message("user", f"The query returned no rows, but the patient has rows in {', '.join(holding)}. "
                                    "If the data should be there, check names (dictionaries, case, spelling) and revise; "
                                    "if no rows is the right answer, send the same query again."))
            continue
        break
    trace["attempts"] = attempts
    trace["tokens"] = tokens
    if result is None:
        return {"answer": [], "status": "error", "text": f"No valid query after {1 + MAX_RETRIES} attempts: "
                f"{attempts[-1].get('error') if attempts else 'no reply'}"}, []
    rows = [{k: iso(v) for k, v in r.items()} for r in result.records()[:ROWS_SHOWN]]
    more = f" (showing {ROWS_SHOWN})" if len(result.rows) > ROWS_SHOWN else ""
    prompt = ANSWER.format(question=question, now=now.isoformat(), sql=sql, count=len(result.rows), more=more,
                           rows=json.dumps(rows, default=str))
    final = _json(ask([Message("system", "You answer clinical questions from query results."), Message("user", prompt)],
                      "sql_composer"))
    trace["tokens"] = tokens
    answer = final.get("answer", [])
    return ({"answer": answer if isinstance(answer, list) else [answer], "unit": final.get("unit"),
             "status": final.get("status", "answered"), "text": str(final.get("text", ""))},
            _evidence(schema, _tables_read(sql, con.dialect), result))
