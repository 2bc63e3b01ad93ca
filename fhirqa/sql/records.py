"""One patient's rows in a relational database, read through compiled SQL: the offline writer's data layer.

A :class:`Spec` says which rows a question is about (a canonical view, the item names it resolved to, a
medication kind, an encounter class, numbers only, a time window, "after" an instant); :class:`SqlPatient`
turns a spec into one SQL statement over the schema's domain query (:mod:`fhirqa.sql.domains`), always as
of ``now`` (rows timed after it are invisible, as on the FHIR path), runs it through
:func:`fhirqa.sql.safe.run_scoped`, logs it for the trace and cites every row an answer rests on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools.base import Resolution
from fhirqa.sql.connect import Connection, time_param
from fhirqa.sql.domains import domain_sql, supported_views
from fhirqa.sql.safe import DEFAULT_TIMEOUT_S, QueryResult, run_scoped
from fhirqa.sql.schema import Schema

ROW_LIMIT = 100_000
# OMOP CONCEPT.domain_id → the canonical view holding that domain's events
_DOMAIN_VIEWS = {"Drug": "medication", "Condition": "condition", "Procedure": "procedure", "Measurement": "observation",
                 "Observation": "observation", "Visit": "encounter"}


@dataclass(frozen=True)
class Spec:
    """Which rows: a view narrowed by item names, kind, encounter class, numbers only, window, after an instant."""

    view: str
    names: tuple[str, ...] | None = None
    kind: str | None = None
    cls: str | None = None
    category: str | None = None
    numeric: bool = False
    start: datetime | None = None
    end: datetime | None = None
    after: datetime | None = None

    def narrowed(self, **changes: Any) -> Spec:
        """A copy with some fields changed."""
        return replace(self, **changes)


def as_utc(value: Any) -> Any:
    """Database times as aware UTC datetimes (naive values are UTC; SQLite text is parsed)."""
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-" and value[7] == "-":
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value


class SqlPatient:
    """The patient's canonical rows in one database as of ``now``, queried one compiled statement at a time."""

    def __init__(self, con: Connection, schema: Schema, patient_value: Any, now: datetime,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.con, self.schema, self.patient_value, self.now = con, schema, patient_value, now
        self.timeout_s = timeout_s
        self.views = supported_views(schema)
        self.statements: list[dict[str, Any]] = []
        self.evidence: dict[tuple[str, str], Evidence] = {}
        self.resolver = ConceptResolver(codes_of=lambda view: self.items(view)[1], children_of=self.components)

    # -- running ----------------------------------------------------------------------------------------
    def run(self, sql: str, params: dict[str, Any] | None = None, limit: int = ROW_LIMIT) -> list[dict[str, Any]]:
        """Run one statement for this patient; times come back as aware UTC datetimes."""
        result: QueryResult = run_scoped(self.con, self.schema, sql, params, patient_value=self.patient_value,
                                         timeout_s=self.timeout_s, limit=limit)
        self.statements.append({"sql": sql, "params": {k: str(v) for k, v in (params or {}).items()},
                                "rows": len(result.rows), "ms": result.elapsed_ms, "truncated": result.truncated})
        rows = result.records()
        for row in rows:
            for key in ("time", "end_time", "arrival"):
                if key in row:
                    row[key] = as_utc(row[key])
        return rows

    def domain(self, view: str) -> str:
        """The view's canonical rows in this schema."""
        return domain_sql(self.schema, self.con.dialect, view)

    def _where(self, spec: Spec, params: dict[str, Any]) -> str:
        params["now"] = time_param(self.con, self.now)
        where = ["(r.time IS NULL OR r.time <= :now)"]
        if spec.names is not None:
            if not spec.names:
                return "1 = 0"
            keys = [f"n{i}" for i in range(len(spec.names))]
            params.update(zip(keys, spec.names, strict=True))
            where.append(f"r.name IN ({', '.join(':' + k for k in keys)})")
        if spec.kind is not None:
            params["kind"] = spec.kind
            where.append("r.kind = :kind")
        if spec.cls is not None:
            params["cls"] = spec.cls
            where.append("(r.class_code = :cls OR r.alt_class = :cls)")
        if spec.category is not None:
            params["category"] = spec.category.strip().lower().rstrip("s")
            where.append("rtrim(lower(r.category), 's') = :category")
        if spec.numeric:
            where.append(f"r.{'dose' if spec.view == 'medication' else 'value'} IS NOT NULL")
        for key, op, moment in (("wstart", ">=", spec.start), ("wend", "<=", spec.end), ("after", ">=", spec.after)):
            if moment is not None:
                params[key] = time_param(self.con, moment)
                where.append(f"r.time IS NOT NULL AND r.time {op} :{key}")
        if spec.start is not None and spec.view in ("medication", "procedure"):
            # an order or a procedure dated by its day only (MIMIC PRESCRIPTIONS STARTDATE, an OMOP
            # drug_exposure_start_date, MIMIC-IV's OMOP "Arterial line Insertion Date": at midnight) belongs to that
            # whole day: the admission day's heparin order, or line, is in the stay begun at 13:39
            params["wstart_day"] = time_param(self.con, spec.start.replace(hour=0, minute=0, second=0, microsecond=0))
            midnight = "time(r.time) = '00:00:00'" if self.con.dialect == "sqlite" else "r.time = date_trunc('day', r.time)"
            kind = "r.kind = 'request' AND " if spec.view == "medication" else ""
            where[where.index("r.time IS NOT NULL AND r.time >= :wstart")] = (
                f"r.time IS NOT NULL AND (r.time >= :wstart OR ({kind}r.time >= :wstart_day AND {midnight}))")
        return " AND ".join(where)

    def select(self, spec: Spec, columns: str = "r.*", *, order: str = "", limit: int | None = None,
               extra: str = "", params: dict[str, Any] | None = None, group: str = "",
               cap: int = ROW_LIMIT) -> list[dict[str, Any]]:
        """``SELECT columns FROM (domain) AS r WHERE <spec> [extra] [GROUP BY] [ORDER BY] [LIMIT]``.

        ``cap``: the most rows fetched (a cut result is marked ``truncated`` in :attr:`statements`)."""
        bound = dict(params or {})
        where = self._where(spec, bound) + (f" AND {extra}" if extra else "")
        sql = f"SELECT {columns} FROM ({self.domain(spec.view)}) AS r WHERE {where}"
        sql += f" GROUP BY {group}" if group else ""
        sql += f" ORDER BY {order}" if order else ""
        sql += f" LIMIT {int(limit)}" if limit is not None else ""
        return self.run(sql, bound, limit=cap)

    def count(self, spec: Spec, extra: str = "", params: dict[str, Any] | None = None) -> int:
        """How many rows match."""
        rows = self.select(spec, "count(*) AS n", extra=extra, params=params)
        return int(rows[0]["n"]) if rows else 0

    def at(self, spec: Spec, index: int) -> dict[str, Any] | None:
        """The first (0) or last (-1) dated row by time (ties: the lower row key first)."""
        order = "r.time ASC, r.row_id ASC" if index == 0 else "r.time DESC, r.row_id DESC"
        rows = self.select(spec, order=order, limit=1, extra="r.time IS NOT NULL")
        return rows[0] if rows else None

    def extreme(self, spec: Spec, mode: str) -> dict[str, Any] | None:
        """The row with the highest / lowest value; among equal values the earliest."""
        direction = "DESC" if mode == "max" else "ASC"
        rows = self.select(spec, order=f"r.value {direction}, r.time IS NULL, r.time ASC, r.row_id ASC", limit=1,
                           extra="r.value IS NOT NULL")
        return rows[0] if rows else None

    def units(self, spec: Spec) -> list[str]:
        """Distinct units of the numeric rows."""
        return [r["unit"] for r in self.select(spec, "DISTINCT r.unit AS unit", extra="r.value IS NOT NULL")
                if r["unit"] is not None]

    def distinct_names(self, spec: Spec, extra: str = "", params: dict[str, Any] | None = None) -> list[tuple[str, dict]]:
        """Distinct item names in time order, each with its first row."""
        rows = self.select(spec, order="r.time IS NULL, r.time ASC, r.row_id ASC", extra=extra, params=params)
        seen: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row.get("name") is not None:
                seen.setdefault(str(row["name"]), row)
        return list(seen.items())

    # -- items and resolution ---------------------------------------------------------------------------
    @functools.cache  # noqa: B019 - one SqlPatient per question; the cache dies with it
    def items(self, view: str, kind: str | None = None) -> tuple[list[str], dict[str, set[str]]]:
        """The patient's item names in ``view`` (of one ``kind``) as of now (most frequent first) and their codes."""
        if view not in self.views:
            return [], {}
        rows = self.select(Spec(view, kind=kind), "r.name AS name, r.code AS code, r.source_code AS source_code, count(*) AS n",
                           group="r.name, r.code, r.source_code", extra="r.name IS NOT NULL")
        counts: dict[str, int] = {}
        codes: dict[str, set[str]] = {}
        for row in rows:
            name = str(row["name"])
            counts[name] = counts.get(name, 0) + int(row["n"])
            for key in ("code", "source_code"):
                if row.get(key) is not None:
                    codes.setdefault(name, set()).add(str(row[key]).strip())
        return sorted(counts, key=lambda n: (-counts[n], n)), codes

    @functools.cache  # noqa: B019 - per question, like items()
    def components(self, view: str) -> dict[str, list[str]]:
        """``{panel name: [component names]}`` (blood pressure → systolic, diastolic), from linked rows."""
        if view != "observation" or view not in self.views:
            return {}
        rows = self.select(Spec(view), "DISTINCT r.parent_name AS parent_name, r.name AS name",
                           extra="r.parent_name IS NOT NULL AND r.name IS NOT NULL")
        out: dict[str, list[str]] = {}
        for row in sorted(rows, key=lambda r: (str(r["parent_name"]), str(r["name"]))):
            out.setdefault(str(row["parent_name"]), []).append(str(row["name"]))
        return out

    @functools.cache  # noqa: B019 - per question, like items()
    def concept_views(self, phrase: str) -> tuple[str, ...]:
        """The views an item phrase names by what the database's vocabulary says it is: ``CONCEPT.domain_id`` (Drug →
        medication, Condition → condition, Procedure → procedure, Measurement/Observation → observation, Visit →
        encounter) of the concepts (names and ``CONCEPT_SYNONYM`` names) the resolver matches ``phrase`` to, by the
        same rules as the patient's own names (lexicon brands and abbreviations, word containment; spelling-level
        matches left out). Empty without a vocabulary."""
        tables = self.schema.tables
        if self.schema.kind != "omop" or "concept" not in tables or not phrase.strip():
            return ()
        from fhirqa.agent.backends.offline.parser import _lexicon

        lexicon = _lexicon()
        terms = {w for w in re.findall(r"[a-z0-9]{3,}", phrase.lower())}
        for expansion in lexicon.expand(phrase) if lexicon is not None else []:
            terms.update(re.findall(r"[a-z0-9]{3,}", expansion.term.lower()))
        if not terms:
            return ()
        params = {f"t{i}": f"%{t}%" for i, t in enumerate(sorted(terms))}
        domains = ", ".join(f"'{d}'" for d in _DOMAIN_VIEWS)
        like = " OR ".join(f"lower(n) LIKE :{k}" for k in params)
        names = "SELECT c.domain_id AS domain_id, c.concept_name AS n FROM concept AS c"
        if "concept_synonym" in tables:
            names += (" UNION ALL SELECT c.domain_id, s.concept_synonym_name FROM concept_synonym AS s "
                      "JOIN concept AS c ON c.concept_id = s.concept_id")
        rows = self.run(f"SELECT DISTINCT domain_id, n FROM ({names}) AS k WHERE domain_id IN ({domains}) AND ({like})",
                        params, limit=20_000)
        by_view: dict[str, list[str]] = {}
        for row in rows:
            if row.get("n"):
                by_view.setdefault(_DOMAIN_VIEWS[str(row["domain_id"])], []).append(str(row["n"]))
        resolver = ConceptResolver(codes_of=lambda view: {}, children_of=lambda view: {})
        placed = []
        for view, candidates in by_view.items():
            found = resolver(view, phrase, sorted(set(candidates)))
            if (found.matched or found.ambiguous) and not found.how.startswith("fuzzy"):
                placed.append(view)
        return tuple(placed)

    def resolve(self, view: str, phrase: str, kind: str | None = None) -> Resolution:
        """The patient's item names ``phrase`` means in ``view`` (the FHIR path's resolver, same rules), among the
        names of one ``kind`` when given. A phrase that names nothing is tried again as the lexicon's other names for
        it, longest first ("sepsis" → "septicemia": ICD-9 titles name it so); spelling-level matches of these are not
        taken."""
        names, _ = self.items(view, kind)
        return self.resolve_among(view, phrase, names)

    def resolve_among(self, view: str, phrase: str, names: list[str]) -> Resolution:
        """:meth:`resolve` among ``names`` (a tool's record set): the resolver, then the lexicon's other names."""
        found = self.resolver(view, phrase, names)
        if found.matched or found.ambiguous or not names or view == "encounter":
            return found  # encounter words are classes ("appointment" = ambulatory), not names of visits
        for other in self._other_names(phrase):
            again = self.resolver(view, other, names)
            if again.matched and not again.how.startswith("fuzzy") and not again.ambiguous:
                again.how = f"{again.how} (as '{other}')"
                return again
        return found

    def _other_names(self, phrase: str) -> list[str]:
        """The lexicon's aliases of the concept the phrase names (not of a class)."""
        from fhirqa.agent.backends.offline.parser import _lexicon

        lexicon = _lexicon()
        return lexicon.other_names(phrase) if lexicon is not None else []

    # -- evidence ---------------------------------------------------------------------------------------
    def cite(self, row: dict[str, Any], what: str = "value") -> None:
        """Record the row as evidence: ``table/row key``, the column, its value and time."""
        table = str(row.get("tbl") or "?")
        ref = f"{table}/{row.get('row_id')}"
        if what == "value":
            column = row.get("value_col") or f"{table}.value"
            value = next((row[k] for k in ("value", "dose", "value_text") if row.get(k) is not None), None)
        elif what == "time":
            column, value = row.get("time_col") or f"{table}.time", iso(row.get("time"))
        else:
            column, value = row.get("name_col") or f"{table}.name", row.get("name")
        self.evidence[(ref, str(column))] = Evidence(ref=ref, field=str(column), value=value, time=iso(row.get("time")),
                                                      label=row.get("name"), unit=row.get("unit"))

    def evidence_list(self) -> list[Evidence]:
        """Every cited row, in time order."""
        return sorted(self.evidence.values(), key=lambda e: (e.time or "", e.ref, e.field))


def iso(value: Any) -> Any:
    """Dates and times as ISO strings; other values unchanged."""
    return value.isoformat() if isinstance(value, datetime | date) else value
