"""A natural-language description of every table, for table retrieval and for SQL-writing prompts.

Three sources, best first: the **built-in** descriptions of the standard OMOP CDM and MIMIC-III tables
(``fhirqa/sql/data/*.json``); an **LLM** description when a backend is given (for tables the built-ins do
not cover); otherwise a description **derived** from the table's name, columns, keys and (for dictionaries
only) sampled values. Descriptions are cached in ``<database>.fhirqa-tables.json`` beside a database file
(or under the cache folder for servers and read-only folders) and reused while the table's columns are
unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fhirqa.sql.connect import Connection
from fhirqa.sql.load import default_cache_dir
from fhirqa.sql.schema import Schema, Table, builtin

_TIME_TYPES = ("DATE", "TIME", "TIMESTAMP")
_NUMBER_TYPES = ("INT", "DOUBLE", "REAL", "FLOAT", "NUMERIC", "DECIMAL", "BIGINT")


@dataclass
class TableDescription:
    """What a table holds, in a sentence or two, and what its columns mean."""

    table: str
    text: str
    source: str  # builtin | llm | derived
    signature: str = ""
    columns: dict[str, str] = field(default_factory=dict)

    def retrieval_text(self) -> str:
        """Name, description and column names: what table retrieval matches a question against."""
        words = re.sub(r"[_]+", " ", self.table)
        return f"{words}. {self.text} Columns: {', '.join(c.replace('_', ' ') for c in self.columns)}."


def _spec(schema: Schema) -> dict[str, Any]:
    if schema.kind == "omop":
        return builtin("omop_cdm")
    if schema.kind == "mimic-iii":
        return builtin("mimic_iii")
    return {"tables": {}}


def _column_text(table: Table, column: str, kind: str) -> str:
    name = column.lower()
    if name.endswith("_concept_id"):
        return "concept (join concept on concept_id)"
    if name.endswith(("_id", "id")) and name != "id":
        return "identifier"
    if any(t in kind for t in _TIME_TYPES) or re.search(r"(time|date|_dt|_at)$", name):
        return "date/time"
    if any(t in kind for t in _NUMBER_TYPES):
        return "number"
    return kind.lower() or "value"


def derived(schema: Schema, table: Table) -> TableDescription:
    """A description from the table's name, columns, keys and (dictionaries) sampled values."""
    words = " ".join(w for w in re.split(r"[_\W]+", table.name) if w)
    parts = [f"Table {table.name} ({words})."]
    key = schema.patient_key(table.name)
    times = [c.name for c in table.columns if any(t in c.type for t in _TIME_TYPES) or re.search(r"(time|date)$", c.name)]
    numbers = [c.name for c in table.columns if any(t in c.type for t in _NUMBER_TYPES) and not c.name.endswith("id")]
    if key:
        parts.append(f"Patient records (patient key {key}).")
    elif schema.is_dictionary(table.name):
        parts.append("A dictionary (no patient data).")
    if times:
        parts.append(f"Times: {', '.join(times[:4])}.")
    if numbers:
        parts.append(f"Numbers: {', '.join(numbers[:6])}.")
    if table.foreign_keys:
        parts.append("References " + ", ".join(sorted({f"{t}" for _, t, _ in table.foreign_keys})) + ".")
    if table.sample and schema.is_dictionary(table.name):
        texts = [f"{k}={v!r}" for k, v in table.sample[0].items() if isinstance(v, str) and v][:3]
        if texts:
            parts.append("For example " + ", ".join(texts) + ".")
    if table.rows == 0:
        parts.append("Empty.")
    columns = {c.name: _column_text(table, c.name, c.type) for c in table.columns}
    return TableDescription(table.name, " ".join(parts), "derived", table.signature(), columns)


def _builtin(schema: Schema, table: Table) -> TableDescription | None:
    entry = _spec(schema)["tables"].get(table.name)
    if entry is None:
        return None
    known = entry.get("columns", {})
    columns = {c.name: known.get(c.name) or _column_text(table, c.name, c.type) for c in table.columns}
    text = entry["description"] + (" Empty in this database." if table.rows == 0 else "")
    return TableDescription(table.name, text, "builtin", table.signature(), columns)


def _llm(backend: Any, schema: Schema, table: Table) -> TableDescription | None:
    """One or two sentences from a model, given the columns and (dictionaries only) a sampled row."""
    from fhirqa.agent.backends.base import Message

    columns = ", ".join(f"{c.name} {c.type}" for c in table.columns)
    sample = json.dumps(table.sample[:1], default=str) if table.sample else "(patient data: not shown)"
    prompt = (f"Describe in one or two sentences what the table `{table.name}` of a clinical database "
              f"({schema.label}) holds, for someone choosing tables to answer patient questions.\n"
              f"Columns: {columns}\nSample row: {sample}\nReply with the description only.")
    try:
        turn = backend.complete([Message("user", prompt)], [], role="describer")
    except Exception:  # noqa: BLE001 - a failed description falls back to the derived one
        return None
    text = (turn.text or "").strip()
    if not text:
        return None
    base = derived(schema, table)
    return TableDescription(table.name, text[:600], "llm", table.signature(), base.columns)


def cache_path(con: Connection) -> Path:
    """Where descriptions of this database are cached."""
    if con.path is not None:
        return con.path.with_name(con.path.name + ".fhirqa-tables.json")
    digest = hashlib.sha256(f"{con.target}|{con.schema_name}".encode()).hexdigest()[:16]
    return default_cache_dir() / f"tables-{digest}.json"


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    try:
        return dict(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError):
        return {}


def _write_cache(path: Path, entries: dict[str, TableDescription]) -> Path | None:
    data = json.dumps({k: asdict(v) for k, v in entries.items()}, indent=1, default=str)
    for target in (path, default_cache_dir() / f"{path.name}"):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(data, "utf-8")
            return target
        except OSError:
            continue
    return None


def describe(con: Connection, schema: Schema, *, backend: Any = None, use_cache: bool = True) -> dict[str, TableDescription]:
    """A description of every table (cached on the connection and on disk)."""
    if use_cache and "descriptions" in con.cache:
        return con.cache["descriptions"]
    path = cache_path(con)
    cached = _read_cache(path) if use_cache else {}
    if use_cache and not cached:
        cached = _read_cache(default_cache_dir() / path.name)
    out: dict[str, TableDescription] = {}
    changed = False
    llm = backend is not None and getattr(backend, "name", "offline") != "offline"
    for name, table in sorted(schema.tables.items()):
        hit = cached.get(name)
        if hit and hit.get("signature") == table.signature() and (hit.get("source") != "derived" or not llm):
            out[name] = TableDescription(**hit)
            continue
        description = _builtin(schema, table) or (_llm(backend, schema, table) if llm else None) or derived(schema, table)
        out[name] = description
        changed = True
    if changed and use_cache:
        _write_cache(path, out)
    con.cache["descriptions"] = out
    return out
