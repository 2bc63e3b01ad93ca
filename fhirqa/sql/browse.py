"""Reading one patient's record in an OMOP or MIMIC-III database the way the views read a FHIR store.

A hospital that loads its relational EHR (``fhirqa ingest --omop`` / ``--mimic``) asks questions through
:func:`fhirqa.sql.ask_sql`; this module gives the same patients the other read paths: a view's rows for
``GET /Patient/{id}/views/{view}`` and the summary of ``fhirqa show``. Rows come from the schema's domain
queries (:mod:`fhirqa.sql.domains`, the canonical columns), run through :func:`fhirqa.sql.safe.run_scoped`
(read-only, bounded in time and rows, scoped to the one patient), oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError
from fhirqa.sql.connect import time_param
from fhirqa.sql.domains import STAY_VIEWS
from fhirqa.sql.engine import open_database
from fhirqa.sql.person import Person, find_key, load_person
from fhirqa.sql.records import Spec, SqlPatient
from fhirqa.sql.schema import discover

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


def _ref(row: dict[str, Any]) -> str:
    """Where a row came from: ``table/row key`` (the relational counterpart of ``Type/id``)."""
    return f"{row.get('tbl') or '?'}/{row.get('row_id')}"


def _plain(value: Any) -> Any:
    """JSON-friendly values: times as ISO text, whole floats of a key as they are."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value
