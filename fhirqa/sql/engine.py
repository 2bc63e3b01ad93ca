"""``ask_sql``: one question about one patient in an OMOP CDM or MIMIC-III database → an :class:`Answer`.

The same answer object as the FHIR path (:func:`fhirqa.agent.engine.ask`): values, text, status, unit,
and evidence citing ``table/row key``, the column, the value and its time
(``Evidence(ref="measurement/123", field="measurement.value_as_number", …)``); the trace lists every SQL
statement that ran. Offline, the question is compiled to SQL (:mod:`fhirqa.sql.offline_sql`); with an LLM
backend, a model writes the SQL from the retrieved tables (:mod:`fhirqa.sql.llm_sql`).
"""

from __future__ import annotations

import importlib.util
import threading
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from fhirqa.agent.answer import Answer, Evidence
from fhirqa.agent.backends.base import Backend, get_backend
from fhirqa.agent.engine import parse_now
from fhirqa.errors import FhirqaError
from fhirqa.sql.connect import Connection, connect
from fhirqa.sql.person import Person, find_key, load_person, lookup
from fhirqa.sql.records import SqlPatient
from fhirqa.sql.safe import DEFAULT_TIMEOUT_S, QueryError
from fhirqa.sql.schema import Schema, discover

_STATUSES = {"answered", "no-data", "ambiguous", "refused", "error"}
_OPEN: dict[str, Connection] = {}
_OPEN_LOCK = threading.Lock()


def open_database(target: str | Path | Connection) -> Connection:
    """A connection for ``target`` (an open :class:`Connection` is used as is; paths are opened once per process)."""
    if isinstance(target, Connection):
        return target
    key = str(target)
    path = Path(key)
    if path.is_file():  # a file replaced since it was opened (a new export) is opened again
        stat = path.stat()
        key = f"{key}|{stat.st_mtime_ns}|{stat.st_size}"
    with _OPEN_LOCK:
        con = _OPEN.get(key)
        if con is not None and not _alive(con):  # closed elsewhere (a `with connect(…)` on the same DuckDB file)
            del _OPEN[key]
            con = None
        if con is None:
            for old in [k for k in _OPEN if k.split("|")[0] == str(target)]:
                _OPEN.pop(old).close()
            con = _OPEN[key] = connect(target)
        return con


def _alive(con: Connection) -> bool:
    """The connection still answers (DuckDB hands one shared connection to every open of a file)."""
    try:
        if con.dialect == "postgres":
            return not con.raw.closed
        con.raw.cursor().close()
        return True
    except Exception:  # noqa: BLE001 - any driver's "closed" error means: open it again
        return False


def close_all() -> None:
    """Close the connections :func:`open_database` kept open."""
    with _OPEN_LOCK:
        for con in _OPEN.values():
            con.close()
        _OPEN.clear()


def ask_sql(
    question: str,
    *,
    patient_id: str | None,
    now: str | datetime | None = None,
    connection: str | Path | Connection,
    backend: str | Backend = "offline",
    backend_config: dict[str, Any] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Answer:
    """Answer ``question`` about ``patient_id`` (a person_id / subject_id, or an OMOP person_source_value) as of ``now``."""
    started = time.perf_counter()
    moment = parse_now(now)
    model = get_backend(backend, **(backend_config or {})) if isinstance(backend, str) else backend
    con = open_database(connection)
    schema = discover(con)
    question = question.strip()
    trace: dict[str, Any] = {"now": moment.isoformat(), "database": con.target, "schema": schema.label}
    if not question:
        return _finish(Answer([], "The question is empty.", status="error", backend=model.name, trace=trace), started)
    person: Person | None = None
    key = None
    if patient_id is not None:
        key = find_key(con, schema, patient_id)
        if key is None:
            return _finish(Answer([], f"No patient {patient_id!r} in this {schema.label} database.", status="error",
                                  backend=model.name, trace=trace), started)
        person = load_person(con, schema, key)
    data = SqlPatient(con, schema, key, moment, timeout_s) if key is not None else None
    try:
        if model.name == "offline":
            result, evidence = _offline(question, moment, con, schema, person, data, trace)
        else:
            from fhirqa.sql.llm_sql import answer_with_llm

            result, evidence = answer_with_llm(model, question, moment, con, schema, person, data, trace)
    except QueryError as exc:
        result, evidence = {"answer": [], "status": "error", "text": f"The query failed: {exc}"}, []
    except FhirqaError as exc:
        result, evidence = {"answer": [], "status": "error", "text": str(exc)}, []
    if data is not None:
        trace["sql"] = data.statements
    status = result.get("status", "answered")
    answer = Answer(
        answer=list(result.get("answer") or []),
        text=str(result.get("text", "")),
        status=status if status in _STATUSES else "error",
        unit=result.get("unit"),
        evidence=evidence,
        backend=model.name,
        tokens=trace.pop("tokens", {"prompt": 0, "completion": 0}),
        candidates=[str(c) for c in result.get("answer") or []] if status == "ambiguous" else [],
        trace=trace,
    )
    return _finish(answer, started)


def _offline(question: str, moment: datetime, con: Connection, schema: Schema, person: Person | None,
             data: SqlPatient | None, trace: dict[str, Any]) -> tuple[dict[str, Any], list[Evidence]]:
    from fhirqa.agent.backends.offline.plans import window_said
    from fhirqa.sql.offline_sql import parse_question

    pq = parse_question(question, moment, names=tuple(person.names) if person else ())
    trace["parse"] = pq.to_trace()
    if pq.intent == "lookup" or data is None:
        return _lookup(pq, con, schema, trace)
    implied = pq.window  # the answer says a window the question only implied ("K this AM?"), as the FHIR path does
    result, evidence = _answer(pq, moment, con, schema, person, data, trace)
    if result.get("text"):
        result = {**result, "text": window_said(implied, str(result["text"]))}
    return result, evidence


def _answer(pq: Any, moment: datetime, con: Connection, schema: Schema, person: Person | None, data: SqlPatient,
            trace: dict[str, Any]) -> tuple[dict[str, Any], list[Evidence]]:
    """The offline answer of a parsed question about a patient: the notes, the tables, then the notes again."""
    from fhirqa.agent.backends.offline.backend import unit_answer
    from fhirqa.agent.backends.offline.plans import notes_answer, plan
    from fhirqa.sql.allergies import NO_STRUCTURED_LIST, allergy_question
    from fhirqa.sql.notes import answer_from_notes, note_table
    from fhirqa.sql.offline_sql import compile_and_answer

    if schema.kind == "unknown":
        return ({"answer": [], "status": "refused", "text": "The offline SQL writer knows OMOP CDM and MIMIC-III; this "
                 "database is neither. Use an LLM backend (--backend openai|gemini) for other schemas."}, [])
    notes = _note_index(con, schema, person)
    if notes is not None and person is not None:  # a note question: the FHIR path's note plans over these notes
        from_notes = answer_from_notes(plan(_in_latest_stay(_copy(pq), data)), person, moment, notes)
        if from_notes is not None:
            trace["source_notes"] = note_table(schema)
            return from_notes
    result = compile_and_answer(pq, data, person)
    empty_allergy_list = bool(result.pop("empty_list", False))
    if result.pop("tables_only", False):  # a missing event, a clinical state: what the tables say is the answer
        return (unit_answer(result) if pq.unit_asked else result), data.evidence_list()
    if notes is not None and person is not None and (empty_allergy_list or (
            result.get("status") == "no-data" and allergy_question(pq))):
        # no allergy coded (MIMIC-III keeps no allergy table): the latest note's Allergies section, when one says
        from fhirqa.sql.notes import allergies_in_notes

        from_notes = allergies_in_notes(pq, person, moment, notes)
        if from_notes is not None:
            trace["source_notes"] = note_table(schema)
            return from_notes
    if result.get("status") == "no-data" and allergy_question(pq) and "allergy" not in data.views:
        result["text"] = f"{NO_STRUCTURED_LIST}, and no note documents allergies."
    if notes is not None and person is not None and _counts_reports(pq, result):
        # "how many CXRs this admission?": no such rows in the tables (MIMIC keeps studies as reports): the reports
        from_notes = answer_from_notes(_returning(notes_answer(_copy(pq))), person, moment, notes)
        if from_notes is not None:
            trace["source_notes"] = note_table(schema)
            return from_notes
    if notes is not None and person is not None and result.get("status") == "no-data":
        # The tables hold nothing: what the notes say, quoted (as the FHIR path falls back), else the no-data.
        from_notes = answer_from_notes(_returning(notes_answer(_copy(pq))), person, moment, notes)
        if from_notes is not None:
            trace["source_notes"] = note_table(schema)
            return from_notes
    return (unit_answer(result) if pq.unit_asked else result), data.evidence_list()


def _note_index(con: Connection, schema: Schema, person: Person | None) -> Any:
    """The database's note index for ``person`` (None without a note table or without the notes extra)."""
    if person is None or importlib.util.find_spec("lancedb") is None:
        return None
    from fhirqa.sql.load import default_cache_dir
    from fhirqa.sql.notes import index_for

    return index_for(con, schema, person, default_cache_dir())


def _counts_reports(pq: Any, result: dict[str, Any]) -> bool:
    """A count the tables answered with 0 of a kind of study whose reports are notes ("# echos?", "CXRs this
    admit?", ``also_a_record`` in ``lexicon/note_kinds.json``): the reports of that kind are what was done."""
    from fhirqa.agent.backends.offline.note_kind_plan import note_kind_question

    return pq.intent == "count" and result.get("status") == "answered" and list(result.get("answer") or []) == [0] \
        and note_kind_question(pq, fallback=True) is not None


def _in_latest_stay(pq: Any, data: SqlPatient | None) -> Any:
    """A note-kind question about the current stay ("# of CXRs this admission?", "d/c summary this admit") with the
    stay resolved as the tables have it: the latest admission in the record (ADMISSIONS, visit_occurrence), not
    the stay of the latest dated note. Other questions are returned unchanged."""
    from fhirqa.agent.backends.offline.note_kind_plan import note_kind_question
    from fhirqa.sql.offline_sql import resolve_stay
    from fhirqa.sql.reading import STAY_ANCHORS

    if data is None or pq.window is None or pq.window.anchor not in STAY_ANCHORS \
            or note_kind_question(pq, fallback=True) is None:
        return pq
    stay = resolve_stay(data, pq.window)
    if stay is not None:
        pq.window = stay
    return pq


def _copy(pq: Any) -> Any:
    """A fresh copy of a parse (plans annotate the one they are given)."""
    return replace(pq, notes=[], views=list(pq.views), hinted=list(pq.hinted))


def _returning(generator: Any) -> Any:
    """A plan step that *returns* its final call (``notes_answer``) as one that yields it."""
    final = yield from generator
    yield final


def _lookup(pq: Any, con: Connection, schema: Schema, trace: dict[str, Any]) -> tuple[dict[str, Any], list[Evidence]]:
    """Patient id from name and birth date (only without a patient in scope)."""
    if pq.intent != "lookup":
        return {"answer": [], "status": "refused", "text": "This question needs a patient (patient_id)."}, []
    if not (pq.lookup_name or pq.lookup_birth):
        return {"answer": [], "status": "refused", "text": "Give the patient's name and birth date to look them up."}, []
    matches = lookup(con, schema, pq.lookup_name, pq.lookup_birth)
    evidence = [Evidence(ref=f"person/{m['person_id']}", field="person.person_source_value", value=m["patient_id"],
                         label=m.get("name")) for m in matches[:20]]
    asked = ", ".join(v for v in (pq.lookup_name, pq.lookup_birth) if v)
    if not matches:
        return {"answer": [], "status": "no-data", "text": f"No patient matches {asked}."}, []
    if len(matches) > 1:
        return ({"answer": [m["patient_id"] for m in matches], "status": "ambiguous",
                 "text": f"{len(matches)} patients match: " + "; ".join(f"{m['name']} ({m['birth_date']}) {m['patient_id']}"
                                                                      for m in matches)}, evidence)
    m = matches[0]
    return ({"answer": [m["patient_id"]], "status": "answered",
             "text": f"{m.get('name') or 'The patient'}, born {m['birth_date']}: person_id {m['person_id']} "
                     f"(source id {m['patient_id']})."}, evidence)


def _finish(answer: Answer, started: float) -> Answer:
    answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
    return answer
