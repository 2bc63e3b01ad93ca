"""Reading one patient's record in an OMOP or MIMIC-III database the way the views read a FHIR store.

A hospital that loads its relational EHR (``fhirqa ingest --omop`` / ``--mimic``) asks questions through
:func:`fhirqa.sql.ask_sql`; this module gives the same patients the other read paths: a view's rows for
``GET /Patient/{id}/views/{view}`` and the summary of ``fhirqa show``. Rows come from the schema's domain
queries (:mod:`fhirqa.sql.domains`, the canonical columns), run through :func:`fhirqa.sql.safe.run_scoped`
(read-only, bounded in time and rows, scoped to the one patient), oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError
from fhirqa.sql.connect import time_param
from fhirqa.sql.domains import STAY_VIEWS
from fhirqa.sql.engine import open_database
from fhirqa.sql.person import Person, find_key, load_person, lookup
from fhirqa.sql.records import Spec, SqlPatient
from fhirqa.sql.safe import run_scoped
from fhirqa.sql.schema import discover

#: Header lists are cut at this many entries, as a FHIR store's are.
HEADER_ROWS = 100

#: Domain columns a reader sees (the rest say where a value came from, for evidence).
SHOWN = ("name", "code", "value", "value_text", "unit", "time", "end_time", "kind", "status", "class_code", "sig",
         "quantity", "dose", "dose_unit", "category", "parent_name", "encounter_id", "rank")
# (title, view, columns, order) of the summary, most recent first as `fhirqa show` prints a FHIR store
_SECTIONS = (
    ("Conditions", "condition", ("name", "code", "time", "end_time", "status")),
    ("Recent medications", "medication", ("name", "kind", "time", "dose", "dose_unit", "sig")),
    ("Latest observations", "observation", ("name", "value", "value_text", "unit", "time")),
    ("Encounters", "encounter", ("name", "class_code", "time", "end_time")),
    ("Procedures", "procedure", ("name", "code", "time")),
)


class UnknownRelationalView(FhirqaError):
    """The database's schema has no such view (a FHIR-only view such as ``note``, or a misspelling)."""


@dataclass
class RelationalRows:
    """A page of one patient's rows of one view, read from a relational database."""

    view: str
    patient: str
    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool
    source: str  # the schema's label, e.g. "OMOP CDM 5.4"

    def as_json(self) -> dict[str, Any]:
        """The body the server returns for a view read (the shape of a FHIR store's, plus ``source``)."""
        return {"view": self.view, "patient": self.patient, "columns": self.columns, "rows": self.rows,
                "count": len(self.rows), "truncated": self.truncated, "source": self.source}


class RelationalPatient:
    """One patient of one relational database, opened for reading."""

    def __init__(self, database: str | Path, patient_id: str, now: datetime | None = None) -> None:
        self.con = open_database(database)
        self.schema = discover(self.con)
        key = find_key(self.con, self.schema, patient_id)
        if key is None:
            raise FhirqaError(f"no patient {patient_id!r} in {database} ({self.schema.label})")
        self.patient_id = patient_id
        self.person: Person = load_person(self.con, self.schema, key)
        # Everything the database holds, however far in the future its (shifted) dates lie.
        self.data = SqlPatient(self.con, self.schema, key, now or datetime.max.replace(tzinfo=UTC))

    @property
    def views(self) -> list[str]:
        """The canonical views this database can be read as."""
        return sorted(v for v in self.data.views if v not in STAY_VIEWS)

    def rows(self, view: str, *, since: datetime | None = None, until: datetime | None = None,
             name: str | None = None, limit: int = 100, newest_first: bool = False) -> RelationalRows:
        """The patient's rows of ``view`` (times in ``[since, until)``, name containing ``name``), at most ``limit``."""
        if view not in self.views:
            raise UnknownRelationalView(
                f"the {self.schema.label} database has no {view!r} view (it has: {', '.join(self.views)})")
        params: dict[str, Any] = {}
        extra = []
        if until is not None:  # the spec's end is inclusive; a view read's `until` is not
            params["until"] = time_param(self.con, until)
            extra.append("r.time < :until")
        if name:
            escaped = name.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params["name_like"] = f"%{escaped}%"
            extra.append("lower(r.name) LIKE :name_like ESCAPE '\\'")
        order = "r.time DESC NULLS LAST, r.row_id" if newest_first else "r.time NULLS LAST, r.row_id"
        found = self.data.select(Spec(view=view, start=since), order=order, limit=limit + 1,
                                 extra=" AND ".join(extra), params=params)
        columns = [c for c in SHOWN if found and c in found[0]] or list(SHOWN)
        rows = [{c: _plain(row.get(c)) for c in columns} | {"ref": _ref(row)} for row in found[:limit]]
        return RelationalRows(view, self.patient_id, [*columns, "ref"], rows, len(found) > limit, self.schema.label)

    def header(self) -> dict[str, Any]:
        """The UI header of a FHIR store's patient, read from the database: demographics, problems, medications.

        Problems are the conditions without an end (MIMIC-III diagnoses have none: every stay's coded
        diagnoses), newest first, one per name; medications are the orders running at the patient's latest
        order (an ICU database's "now" is its last day, not today's); allergies are not kept by these schemas.
        """
        person = self.person
        until = person.deceased_time.date() if person.deceased_time else self._age_reference()
        patient = {
            "id": self.patient_id, "name": person.name or "(no name)", "gender": person.gender, "mrn": None,
            "birth_date": person.birth_date.isoformat() if person.birth_date else None,
            "age": _age(person.birth_date, until), "deceased": person.deceased,
            "deceased_time": person.deceased_time.isoformat() if person.deceased_time else None,
            "ref": f"{person.table}/{person.key}", "source": self.schema.label,
        }
        problems: dict[str, dict[str, Any]] = {}
        if "condition" in self.views:
            for row in self.data.select(Spec(view="condition"), order="r.time DESC NULLS LAST, r.row_id",
                                        extra="r.end_time IS NULL", limit=HEADER_ROWS * 4):
                if row.get("name") and row["name"] not in problems and len(problems) < HEADER_ROWS:
                    problems[row["name"]] = {"name": row["name"], "ref": _ref(row),
                                             "onset_time": _plain(row.get("time")), "clinical_status": row.get("status")}
        return {"patient": patient, "problems": list(problems.values()), "medications": self._running_orders(),
                "allergies": []}

    def _age_reference(self) -> date:
        """Today, or the record's last day when that is later (research databases shift dates into the future)."""
        today = datetime.now(UTC).date()
        view = next((v for v in ("encounter", "observation") if v in self.views), None)
        last = self.data.select(Spec(view=view), "max(r.time) AS t") if view else []
        moment = last[0]["t"] if last else None
        return max(today, moment.date()) if isinstance(moment, datetime) else today

    def _running_orders(self) -> list[dict[str, Any]]:
        if "medication" not in self.views:
            return []
        orders = Spec(view="medication", kind="request")
        latest = self.data.select(orders, "max(r.time) AS t")
        moment = latest[0]["t"] if latest else None
        if moment is None:
            return []
        running = self.data.select(orders, order="r.time DESC, r.row_id", limit=HEADER_ROWS * 4,
                                   extra="r.time <= :at AND (r.end_time IS NULL OR r.end_time >= :at)",
                                   params={"at": time_param(self.con, moment)})
        seen: dict[str, dict[str, Any]] = {}
        for row in running:
            if row.get("name") and row["name"] not in seen and len(seen) < HEADER_ROWS:
                seen[row["name"]] = {"name": row["name"], "ref": _ref(row), "time": _plain(row.get("time")),
                                     "dosage_text": row.get("sig"), "dose": row.get("dose"),
                                     "dose_unit": row.get("dose_unit"), "status": row.get("status")}
        return list(seen.values())

    def source_row(self, table: str, row_id: str) -> dict[str, Any] | None:
        """The patient's row ``row_id`` of source ``table`` as the database holds it (None when not theirs)."""
        key = self.schema.row_key(table) if table in self.schema.tables else None
        if key is None:
            return None
        rows = run_scoped(self.con, self.schema, f"SELECT * FROM {table} WHERE CAST({key} AS VARCHAR) = :row",
                          {"row": str(row_id)}, patient_value=self.data.patient_value, limit=1).records()
        return {k: _plain(v) for k, v in rows[0].items()} if rows else None

    def notes(self) -> list[dict[str, Any]]:
        """The patient's notes with text (OMOP ``note`` / MIMIC ``noteevents``, rows marked in error left out), newest
        first, shaped as the UI lists a FHIR store's: ref (``noteevents/12``), time, type, title and length."""
        rows = sorted(self._note_rows(), key=lambda r: r["ref"])
        rows.sort(key=lambda r: r["time"] or datetime.min.replace(tzinfo=UTC), reverse=True)  # stable: ties by ref
        return [{"ref": r["ref"], "time": _plain(r["time"]), "note_type": r.get("note_type"), "title": r.get("title"),
                 "length": len(r["text"])} for r in rows]

    def note(self, ref: str) -> dict[str, Any] | None:
        """One note of the patient with its text, as the consistency check reads it (None when not theirs)."""
        row = next((r for r in self._note_rows() if r["ref"] == ref), None)
        if row is None:
            return None
        return {"ref": row["ref"], "time": _plain(row["time"]), "note_type": row.get("note_type"),
                "title": row.get("title"), "text": row["text"]}

    def _note_rows(self) -> list[dict[str, Any]]:
        from fhirqa.sql.patient_rows import RelationalPatientRows

        rows = RelationalPatientRows(self.con, self.schema, self.person, patient_id=self.patient_id).rows("note")
        return [r for r in rows if r.get("text")]

    def summary(self, limit: int = 8) -> str:
        """Demographics, rows per view and the most recent rows of each, as ``fhirqa show`` prints them."""
        from fhirqa.cli.output import render

        person = self.person
        lines = [f"{person.name or '(no name)'}  ·  {person.gender or '?'}  ·  born {person.birth_date or '?'}  ·  {self.schema.label} "
                 f"{person.table} {person.key}  ·  Patient/{self.patient_id}"]
        counts = [f"{view} {self.data.count(Spec(view=view))}" for view in self.views]
        lines.append("rows: " + ", ".join(counts))
        for title, view, columns in _SECTIONS:
            if view not in self.views:
                continue
            page = self.rows(view, limit=limit, newest_first=True)
            if not page.rows:
                continue
            shown = [c for c in columns if c in page.columns] + ["ref"]
            lines.append("")
            lines.append(render(shown, [tuple(row[c] for c in shown) for row in page.rows], title=title))
        return "\n".join(lines)


def search_people(database: str | Path, query: str, limit: int = 25) -> list[dict[str, Any]]:
    """People of a relational database matching ``query``: an exact id, or (OMOP with names) every word of a name.

    Shaped as a FHIR store's patient search rows, with the schema's label as ``source``.
    """
    con = open_database(database)
    schema = discover(con)
    found: dict[str, dict[str, Any]] = {}
    words = query.split()
    if len(words) == 1 and find_key(con, schema, words[0]) is not None:
        person = load_person(con, schema, find_key(con, schema, words[0]))
        found[words[0]] = {"id": words[0], "name": person.name or "(no name)", "gender": person.gender,
                           "birth_date": person.birth_date.isoformat() if person.birth_date else None,
                           "mrn": None, "deceased": person.deceased, "source": schema.label}
    names = [w for w in words if not any(ch.isdigit() for ch in w)]
    if names:
        for row in lookup(con, schema, " ".join(names), None)[:limit]:
            found.setdefault(row["patient_id"], {"id": row["patient_id"], "name": row.get("name") or "(no name)",
                                                 "gender": None, "birth_date": row.get("birth_date"), "mrn": None,
                                                 "deceased": False, "source": schema.label})
    return list(found.values())[:limit]


def _age(birth: Any, until: Any = None) -> int | None:
    if birth is None:
        return None
    until = until or datetime.now(UTC).date()
    return int(until.year - birth.year - ((until.month, until.day) < (birth.month, birth.day)))


def _ref(row: dict[str, Any]) -> str:
    """Where a row came from: ``table/row key`` (the relational counterpart of ``Type/id``)."""
    return f"{row.get('tbl') or '?'}/{row.get('row_id')}"


def _plain(value: Any) -> Any:
    """JSON-friendly values: times as ISO text, whole floats of a key as they are."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value
