"""``ask``: one question about one patient → an :class:`~fhirqa.agent.answer.Answer`.

planner (which views) → specialists (which fields of each view) → composer (tools, skills, loop)
→ answer with evidence and a trace. The same function serves the CLI, the Python API and the server.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from fhirqa.agent import planner, relational, row_cache, specialists
from fhirqa.agent.answer import Answer, Evidence
from fhirqa.agent.asof import AsOf
from fhirqa.agent.backends.base import Backend, get_backend
from fhirqa.agent.composer import compose
from fhirqa.agent.patient_rows import StorePatientRows
from fhirqa.agent.resolver import ConceptResolver, codes_by_item, components_by_panel
from fhirqa.agent.tools import tool_specs
from fhirqa.agent.tools.base import ToolContext
from fhirqa.errors import FhirqaError
from fhirqa.store import Store

_STATUSES = {"answered", "no-data", "ambiguous", "refused", "error"}


def parse_now(now: str | datetime | None) -> datetime:
    """``now`` as an aware UTC datetime (default: the current time); naive values are taken as UTC."""
    if now is None:
        return datetime.now(UTC)
    if isinstance(now, str):
        try:
            now = datetime.fromisoformat(now.replace("Z", "+00:00"))
        except ValueError as exc:
            raise FhirqaError(f"now={now!r} is not an ISO 8601 date or instant") from exc
    return now if now.tzinfo else now.replace(tzinfo=UTC)


_CONNECTIONS: dict[tuple[str, int], duckdb.DuckDBPyConnection] = {}
_CONNECTIONS_LOCK = threading.Lock()


def shared_connection(store: Store) -> duckdb.DuckDBPyConnection:
    """One sandboxed connection per store generation, reused across questions (take a cursor per question).

    Opening a connection registers every view (tens of ms); reusing it keeps a warm question fast.
    A new generation (after an ingest) gets a new connection; the old one is closed.
    """
    return shared_connection_at(store)[0]


def shared_connection_at(store: Store) -> tuple[duckdb.DuckDBPyConnection, tuple[str, int]]:
    """:func:`shared_connection` and the (store folder, generation) it reads, read together."""
    key = (store.resolved, store.manifest.generation)
    with _CONNECTIONS_LOCK:
        con = _CONNECTIONS.get(key)
        if con is None:
            for old in [k for k in _CONNECTIONS if k[0] == key[0]]:
                _CONNECTIONS.pop(old).close()
            con = _CONNECTIONS[key] = store.connect()
        return con, key


_NOTES: dict[str, Any] = {}


def shared_notes(store: Store) -> Any | None:
    """The store's note index (built per patient on first search), or None without the notes extra."""
    key = store.resolved
    with _CONNECTIONS_LOCK:
        if key not in _NOTES:
            try:
                if importlib.util.find_spec("lancedb") is None:
                    raise ImportError("lancedb")
                from fhirqa.notes import NoteIndex
            except ImportError:  # the notes extra is not installed: questions are answered from the tables only
                _NOTES[key] = None
            else:
                _NOTES[key] = NoteIndex(store)
        return _NOTES[key]


@functools.lru_cache(maxsize=8)
def _prompt(name: str) -> str:
    return (Path(__file__).parent / "prompts" / f"{name}.md").read_text("utf-8")


def ask(
    question: str,
    *,
    patient_id: str | None,
    now: str | datetime | None = None,
    db: str | Path,
    backend: str | Backend = "offline",
    backend_config: dict[str, Any] | None = None,
    store: Store | None = None,
) -> Answer:
    """Answer ``question`` about ``patient_id`` from the store at ``db``, as of ``now``."""
    started = time.perf_counter()
    moment = parse_now(now)
    model = get_backend(backend, **(backend_config or {})) if isinstance(backend, str) else backend
    store = store or Store(db)
    question = question.strip()
    if not question:
        return _finish(Answer([], "The question is empty.", status="error", backend=model.name), started)
    if not store.exists() and (database := relational.database_for(store.db, patient_id)) is not None:
        return _ask_relational(question, patient_id, moment, database, model)
    con, generation = shared_connection_at(store)
    rows = AsOf(StorePatientRows(con.cursor(), patient_id or "", cache=row_cache.SHARED, generation=generation),
                moment)
    moment = rows.local_now()  # the same instant on the record's clock: "today", "on Monday" are its local days
    if patient_id is not None and not rows.rows("patient"):
        if (database := relational.database_for(store.db, patient_id)) is not None:
            return _ask_relational(question, patient_id, moment, database, model)
        return _finish(Answer([], f"No patient {patient_id!r} in this store.", status="error", backend=model.name), started)
    resolver = ConceptResolver(
        codes_of=functools.cache(lambda view: codes_by_item(rows, view)),
        children_of=functools.cache(lambda view: components_by_panel(rows, view)),
    )
    ctx = ToolContext(patient_id=patient_id, now=moment, data=rows, resolve=resolver,
                      directory=None if patient_id is not None else _directory(store),
                      notes=shared_notes(store) if patient_id is not None else None)

    label = _patient_label(rows, patient_id)
    routing = planner.route(model, question, moment, label)
    fields = {view: specialists.fields_for(view, question) for view in routing.views}
    skills = planner.retrieve_skills(question, model.name)
    system = _prompt("composer").format(views=specialists.describe(fields), skills=planner.skills_text(skills))
    user = f"Question: {question}\nPatient: {label}\nNow: {moment.isoformat()}"
    offered = planner.tools_for(skills, tool_specs(), model.name, question, lookup=patient_id is None,
                                views=routing.views)
    result = compose(model, ctx, system, user, offered)

    final = result.final or {"answer": [], "status": "error", "text": f"No answer: {result.stop_reason}."}
    status = final.get("status", "answered")
    answer = Answer(
        answer=list(final.get("answer") or []),
        text=str(final.get("text", "")),
        status=status if status in _STATUSES else "error",
        unit=final.get("unit"),
        evidence=_evidence(ctx),
        backend=model.name,
        tokens={"prompt": result.prompt_tokens + routing.prompt_tokens,
                "completion": result.completion_tokens + routing.completion_tokens},
        candidates=[str(c) for c in final.get("answer") or []] if status == "ambiguous" else [],
        trace={
            "now": moment.isoformat(),
            "views": routing.views,
            "fields": fields,
            "plan": routing.detail,
            "tool_calls": ctx.calls,
            "rounds": result.rounds,
            "stop": result.stop_reason,
            "notes": result.thoughts[:3],
            "skills": [s.name for s in skills],
            "tools_offered": [t["name"] for t in offered],
        },
    )
    return _finish(answer, started)


def _ask_relational(question: str, patient_id: str | None, moment: datetime, database: Path, model: Backend) -> Answer:
    """The question answered from a relational database beside the store (the trace names it)."""
    from fhirqa.sql import ask_sql

    answer = ask_sql(question, patient_id=patient_id, now=moment, connection=database, backend=model)
    answer.trace["source"] = database.name
    return answer


def _directory(store: Store) -> Any:
    """Every patient's demographics, read on first use (only for questions without a patient)."""

    @functools.cache
    def load() -> list[dict[str, Any]]:
        return store.query("SELECT patient_id, name, name_raw, given, family, birth_date, gender FROM patient",
                           con=shared_connection(store).cursor(), limit=1_000_000).records()

    return load


def _patient_label(rows: AsOf, patient_id: str | None) -> str:
    """``id (Given Family)``: the name lets a parser tell "What was Trey's last A1c?" from an item name."""
    if patient_id is None:
        return "(none: patient lookup)"
    person = rows.rows("patient")[0]
    names = " ".join(str(person.get(k) or "") for k in ("given", "family")).strip()
    return f"{patient_id} ({names})" if names else patient_id


def _evidence(ctx: ToolContext) -> list[Evidence]:
    return sorted(ctx.evidence.values(), key=lambda e: (e.time or "", e.ref, e.field))


def _finish(answer: Answer, started: float) -> Answer:
    answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
    return answer


__all__ = ["ask", "parse_now", "shared_connection", "shared_notes"]
