"""One patient of an OMOP or MIMIC-III database read as the canonical views (implements ``PatientRows``).

Code written against the views of a FHIR store (the note–table consistency checker, the question tools) reads
rows by view name and view column: ``observation.value``, ``medication.medication_name``, ``note.text``…
:class:`RelationalPatientRows` gives it a relational patient the same way, so that code runs unchanged: each
view's rows are the schema's domain rows (:mod:`fhirqa.sql.domains`, read through
:class:`~fhirqa.sql.records.SqlPatient`: patient-scoped, read-only, as of ``now``) with their columns renamed
to the view's (``data/view_columns.json``), ``ref`` the source row (``labevents/238``, as
:mod:`fhirqa.sql.browse` cites it) and ``encounter_ref`` the ref of the stay the row belongs to. ``note`` is the
patient's OMOP ``note`` / MIMIC ``noteevents`` rows (rows marked in error left out, :mod:`fhirqa.sql.notes`),
``patient`` their demographics. Views the schema cannot read are empty.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.agent.tools.base import names_by_frequency
from fhirqa.errors import FhirqaError
from fhirqa.sql.connect import Connection
from fhirqa.sql.person import Person, find_key, load_person
from fhirqa.sql.records import Spec, SqlPatient
from fhirqa.sql.schema import Schema

DATA = Path(__file__).parent / "data" / "view_columns.json"
#: Rows of one view for one patient; beyond this the read is refused rather than cut (as a store's is).
ROWS_PER_VIEW = 1_000_000
_NAME_FIELDS = {"medication": "medication_name", "encounter": "type_name", "note": "note_type"}


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return dict(json.loads(DATA.read_text("utf-8")))


def view_columns() -> dict[str, dict[str, str]]:
    """``{view: {view column: domain column}}`` from the data file."""
    return dict(_data()["views"])


@lru_cache(maxsize=1)
def _sig_pattern() -> re.Pattern[str]:
    words = _data()["sig_dose"]
    alternation = lambda items: "|".join(re.escape(w) for w in sorted(items, key=len, reverse=True))  # noqa: E731
    return re.compile(rf"^\s*(?:(?:{alternation(words['verbs'])})\s+)?(\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)\s*"
                      rf"({alternation(words['units'])})\b", re.IGNORECASE)


def sig_dose(sig: str | None) -> tuple[float, str] | None:
    """The dose a sig starts with, as a plain sig writes it ("500.0 mg 2 times per 1.0 d" → (500.0, "mg"))."""
    match = _sig_pattern().match(sig or "")
    return (float(match.group(1).replace(",", "")), match.group(2)) if match else None


def _key(value: Any) -> str | None:
    """A row key as text (a key read back as 7.0 is "7")."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


class RelationalPatientRows:
    """``PatientRows`` over one patient of a relational database, each view read once (on first use)."""

    def __init__(self, con: Connection, schema: Schema, person: Person, now: datetime | None = None,
                 patient_id: str | None = None) -> None:
        """``now``: rows timed after it are hidden (None: the whole record, however far its dates were shifted);
        ``patient_id``: the id rows and notes are filed under (default: the person's own)."""
        self.con, self.schema, self.person = con, schema, person
        self.patient_id = patient_id or person.patient_id
        self.now = now or datetime.max.replace(tzinfo=UTC)
        self.data = SqlPatient(con, schema, person.key, self.now)
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._stay_refs: dict[str, str] | None = None

    @classmethod
    def open(cls, database: str | Path, patient_id: str, now: datetime | None = None) -> RelationalPatientRows:
        """The patient ``patient_id`` (a key, or an OMOP ``person_source_value``) of the database at ``database``."""
        from fhirqa.sql.engine import open_database
        from fhirqa.sql.schema import discover

        con = open_database(database)
        schema = discover(con)
        key = find_key(con, schema, patient_id)
        if key is None:
            raise FhirqaError(f"no patient {patient_id!r} in {database} ({schema.label})")
        return cls(con, schema, load_person(con, schema, key), now, patient_id=patient_id.removeprefix("Patient/"))

    @property
    def source(self) -> str:
        """The schema's label ("OMOP CDM 5.4", "MIMIC-III")."""
        return self.schema.label

    def views(self) -> list[str]:
        """The views this patient can be read as."""
        return ["patient", "note", *[v for v in view_columns() if v in self.data.views]]

    def rows(self, view: str) -> list[dict[str, Any]]:
        """All rows of ``view`` for the patient, oldest first (times aware UTC); [] for a view the schema lacks."""
        if view not in self._rows:
            if view == "patient":
                self._rows[view] = [self._patient()]
            elif view == "note":
                self._rows[view] = self._notes()
            elif view in view_columns() and view in self.data.views:
                self._rows[view] = self._domain(view)
            else:
                self._rows[view] = []
        return self._rows[view]

    def items(self, view: str) -> list[str]:
        """Distinct item names of ``view``, most frequent first (the view's name column, as a store's)."""
        field = _NAME_FIELDS.get(view, "name")
        return names_by_frequency(self.rows(view), field)

    def close(self) -> None:
        """Nothing to release: the database connection is the engine's, shared by the process."""

    # -- reading ------------------------------------------------------------------------------------------
    def _domain(self, view: str) -> list[dict[str, Any]]:
        found = self.data.select(Spec(view=view), order="r.time NULLS LAST, r.row_id", cap=ROWS_PER_VIEW)
        if self.data.statements and self.data.statements[-1].get("truncated"):
            raise FhirqaError(f"patient {self.patient_id} has more than {ROWS_PER_VIEW} {view} rows; "
                              "fhirqa cannot answer over part of a record")
        stays = self._stays() if view != "encounter" else {}
        columns = view_columns()[view]
        refs: dict[str, str] = {}
        out = []
        for row in found:
            ref = f"{row.get('tbl') or '?'}/{_key(row.get('row_id'))}"
            shaped = {column: row.get(source) for column, source in columns.items()}
            shaped["patient_id"], shaped["ref"] = self.patient_id, ref
            if view == "observation":
                shaped["is_component"] = row.get("parent_name") is not None
            elif view == "medication" and shaped.get("dose") is None and (dose := sig_dose(shaped.get("dosage_text"))):
                shaped["dose"], shaped["dose_unit"] = dose
            stay = _key(row.get("encounter_id"))
            if view == "encounter":
                shaped["encounter_ref"] = ref
                if stay is not None:
                    refs.setdefault(stay, ref)
            else:
                shaped["encounter_ref"] = stays.get(stay) if stay else None
            out.append(shaped)
        if view == "encounter":
            self._stay_refs = refs
        return out

    def _stays(self) -> dict[str, str]:
        """``{encounter id: ref of its encounter row}`` (MIMIC ``hadm_id`` → ``admissions/<row>``)."""
        if self._stay_refs is None:
            self.rows("encounter")
        return self._stay_refs or {}

    def _patient(self) -> dict[str, Any]:
        person = self.person
        return {"patient_id": self.patient_id, "ref": f"{person.table}/{_key(person.key)}", "name": person.name,
                "name_raw": " ".join(person.names) or None, "birth_date": person.birth_date, "gender": person.gender,
                "deceased": person.deceased, "deceased_time": person.deceased_time}

    def _notes(self) -> list[dict[str, Any]]:
        from fhirqa.sql.notes import relational_notes

        stays = self._stays()
        out = []
        for note in relational_notes(self.con, self.schema, self.person):
            if note.time is not None and note.time > self.now:
                continue  # as of now, like every other row
            stay = note.encounter_ref.rsplit("/", 1)[-1] if note.encounter_ref else None
            out.append({"patient_id": self.patient_id, "ref": note.ref, "source": note.ref.split("/", 1)[0],
                        "note_type": note.note_type, "title": None, "time": note.time, "text": note.text,
                        "author": note.author, "content_type": note.content_type,
                        "encounter_ref": stays.get(stay) if stay else None})
        return out


def store_holds(db: str | Path, patient_id: str) -> bool:
    """True when the FHIR views of the store at ``db`` hold ``patient_id``."""
    from fhirqa.store import Store

    store = Store(Path(db))
    if not store.exists():
        return False
    try:
        return bool(store.query("SELECT 1 FROM patient WHERE patient_id = ?", [patient_id], limit=1).rows)
    except Exception:  # noqa: BLE001 - a store without a patient view holds nobody
        return False


def record_beside(db: str | Path, patient_id: str, *, in_store: bool | None = None,
                  now: datetime | None = None) -> RelationalPatientRows | None:
    """The patient's record from the OMOP/MIMIC database loaded beside the store at ``db`` (``fhirqa ingest
    --omop/--mimic``), when the store's views do not hold them; None when they do, or when no database does.

    ``in_store``: whether the views hold the patient, when the caller already knows (the server keeps the ids).
    """
    from fhirqa.agent.relational import database_for

    patient_id = patient_id.removeprefix("Patient/")
    if in_store if in_store is not None else store_holds(db, patient_id):
        return None
    database = database_for(Path(db), patient_id)
    return RelationalPatientRows.open(database, patient_id, now) if database is not None else None
