"""The clinical domains of a relational schema as canonical rows, one SQL query per FHIR view.

The offline SQL writer asks the same questions of every schema, so each detected schema says once how
its tables read as the canonical views (``observation``, ``medication``, ``condition``, ``procedure``,
``immunization``, ``encounter``, ``allergy``): a ``UNION ALL`` of its tables with these columns:

``tbl`` (source table) · ``row_id`` (its row key) · ``name`` · ``code`` · ``source_code`` · ``value`` ·
``value_text`` · ``unit`` · ``time`` · ``end_time`` · ``kind`` · ``status`` · ``class_code`` · ``alt_class`` ·
``sig`` · ``quantity`` · ``days_supply`` · ``dose`` · ``dose_unit`` · ``category`` · ``parent_name`` (a panel's
components) · ``value_col`` · ``time_col`` · ``name_col`` (the source columns, for evidence) · ``encounter_id``
(the hospital stay a row belongs to: MIMIC ``hadm_id``, OMOP ``visit_occurrence_id``) · ``rank`` (a diagnosis's
place in its stay: MIMIC ``seq_num``; OMOP 1 for a primary condition) · ``arrival`` (when a hospital stay began for
the patient: MIMIC ``edregtime`` when the stay came through the ED before ``admittime``) · ``end_col`` (the source
column of ``end_time``, for evidence of a discharge) · ``route`` (how a drug is given: OMOP ``route_source_value``,
else its concept's name; MIMIC ``prescriptions.route``) and ``route_col`` (its source column)

Besides the FHIR views, ``icu_stay`` reads the ICU stays (MIMIC ``icustays``; OMOP ``visit_detail`` of an ICU
concept), the window of "during the ICU stay".

OMOP CDM: ``measurement`` + ``observation``; ``drug_exposure`` (vaccines, CVX, apart); ``condition_occurrence``;
``procedure_occurrence``; ``visit_occurrence``; names from ``concept``. MIMIC-III: ``labevents``/``d_labitems`` +
``chartevents``/``d_items``; ``prescriptions`` + ``inputevents_cv``/``inputevents_mv``; ``diagnoses_icd``/
``d_icd_diagnoses``; ``procedures_icd``/``d_icd_procedures``; ``admissions``. Columns a database lacks read as
NULL, so a trimmed or older schema still works.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from fhirqa.sql.schema import Schema, builtin

COLUMNS = ("tbl", "row_id", "name", "code", "source_code", "value", "value_text", "unit", "time", "end_time", "kind",
           "status", "class_code", "alt_class", "sig", "quantity", "days_supply", "dose", "dose_unit", "category",
           "parent_name", "value_col", "time_col", "name_col", "encounter_id", "rank", "arrival", "reason", "end_col", "route",
           "route_col")
_NUMERIC = {"row_id", "value", "quantity", "days_supply", "dose", "encounter_id", "rank"}
_TIMES = {"time", "end_time", "arrival"}
VIEWS = ("observation", "medication", "condition", "procedure", "immunization", "encounter", "allergy")
STAY_VIEWS = ("icu_stay",)  # read by window anchors and stay counts, never searched for an item


@dataclass
class Dialect:
    """The few expressions that differ between SQLite, DuckDB and PostgreSQL."""

    name: str

    def ts(self, expr: str) -> str:
        """``expr`` as a timestamp (SQLite: normalised ISO text)."""
        if self.name == "sqlite":
            return f"datetime({expr})"
        if self.name == "duckdb":
            return f"TRY_CAST({expr} AS TIMESTAMP)"
        return f"CAST({expr} AS TIMESTAMP)"

    def num(self, expr: str) -> str:
        """``expr`` as a number when it is one, else NULL."""
        if self.name == "duckdb":
            return f"TRY_CAST({expr} AS DOUBLE)"
        if self.name == "sqlite":
            return f"CASE WHEN trim({expr}) GLOB '[0-9]*' AND trim({expr}) NOT GLOB '*[^0-9.]*' THEN CAST({expr} AS REAL) END"
        return f"CASE WHEN CAST({expr} AS TEXT) ~ '^-?[0-9]+(\\.[0-9]+)?$' THEN CAST(CAST({expr} AS TEXT) AS DOUBLE PRECISION) END"

    def shift(self, expr: str, hours: float) -> str:
        """The timestamp ``expr`` moved by ``hours``."""
        if self.name == "sqlite":
            return f"datetime({expr}, '{hours:+g} hours')"
        return f"({expr} + INTERVAL '{hours:g} hours')" if self.name == "postgres" else f"({expr} + INTERVAL ({hours:g}) HOUR)"

    def text(self, expr: str) -> str:
        """``expr`` as text."""
        return f"CAST({expr} AS {'TEXT' if self.name != 'duckdb' else 'VARCHAR'})"

    def null(self, column: str) -> str:
        """A typed NULL for a canonical column."""
        if column in _TIMES:
            return "CAST(NULL AS TIMESTAMP)" if self.name != "sqlite" else "NULL"
        if column in _NUMERIC:
            return {"duckdb": "CAST(NULL AS DOUBLE)", "postgres": "CAST(NULL AS DOUBLE PRECISION)"}.get(self.name, "NULL")
        return self.text("NULL") if self.name != "sqlite" else "NULL"


class Branch:
    """One source table read as canonical rows: ``SELECT <canonical columns> FROM <table> …``."""

    def __init__(self, schema: Schema, d: Dialect, table: str, alias: str) -> None:
        self.schema, self.d, self.table, self.alias = schema, d, table, alias
        self.values: dict[str, str] = {}
        self.joins: list[str] = []
        self.where: list[str] = []

    def col(self, column: str, alias: str | None = None, table: str | None = None) -> str:
        """``alias.column`` when the table has the column, else NULL."""
        entry = self.schema.tables.get(table or self.table)
        return f"{alias or self.alias}.{column}" if entry is not None and entry.has(column) else "NULL"

    def first(self, *exprs: str) -> str:
        """coalesce of the expressions that exist."""
        present = [e for e in exprs if e != "NULL"]
        if not present:
            return "NULL"
        return present[0] if len(present) == 1 else f"coalesce({', '.join(present)})"

    def join(self, table: str, alias: str, on: str) -> bool:
        """LEFT JOIN ``table`` when it exists."""
        if table not in self.schema.tables or "NULL" in on:
            return False
        self.joins.append(f"LEFT JOIN {table} AS {alias} ON {on}")
        return True

    def lit(self, text: str) -> str:
        """A string literal."""
        return "'" + text.replace("'", "''") + "'"

    def sql(self) -> str:
        """The branch's SELECT."""
        key = self.schema.row_key(self.table)
        values = {"tbl": self.lit(self.table), "row_id": f"{self.alias}.{key}" if key else "NULL", **self.values}
        parts = []
        for column in COLUMNS:
            expr = values.get(column, "NULL")
            if column in _TIMES and expr != "NULL":
                expr = self.d.ts(expr)
            elif column in ("code", "source_code", "name", "value_text", "parent_name", "route") and expr != "NULL":
                expr = self.d.text(expr)
            parts.append(f"{expr if expr != 'NULL' else self.d.null(column)} AS {column}")
        where = f" WHERE {' AND '.join(self.where)}" if self.where else ""
        return f"SELECT {', '.join(parts)} FROM {self.table} AS {self.alias} {' '.join(self.joins)}{where}"


def _concept(b: Branch, column: str, alias: str) -> str:
    """Join concept on ``column`` (0 means no concept); returns the alias or '' when there is no concept table."""
    expr = b.col(column)
    if expr == "NULL" or not b.join("concept", alias, f"{alias}.concept_id = {expr} AND {expr} <> 0"):
        return ""
    return alias


def _omop_named(b: Branch, prefix: str, source_value: str) -> None:
    """name / code / source_code of an OMOP event: the source concept's name (the record's own words), else the
    standard concept's, else the source value."""
    c = _concept(b, f"{prefix}_concept_id", "c")
    s = _concept(b, f"{prefix}_source_concept_id", "sc")
    # a source value read as the name is trimmed (MIMIC-IV's OMOP CSVs pad ICD codes: 'E785   ')
    raw = b.col(source_value)
    b.values["name"] = b.first(f"{s}.concept_name" if s else "NULL", f"{c}.concept_name" if c else "NULL",
                               f"trim({b.d.text(raw)})" if raw != "NULL" else "NULL")
    b.values["code"] = b.first(f"{c}.concept_code" if c else "NULL", f"{s}.concept_code" if s else "NULL")
    b.values["source_code"] = b.col(source_value)
    b.values["name_col"] = b.lit(f"{b.table}.{prefix}_concept_id")


_CLASS_CATEGORY = ("CASE {c}.concept_class_id WHEN 'Lab Test' THEN 'laboratory' WHEN 'Survey' THEN 'survey' "
                   "WHEN 'Social History' THEN 'social-history' WHEN 'Clinical Observation' THEN 'vital-signs' END")


def _panel(b: Branch) -> str:
    """A measurement's panel name: the observation row its measurement_event_id points at (OMOP 5.4)."""
    event, field = b.col("measurement_event_id"), b.col("meas_event_field_concept_id")
    if event == "NULL" or field == "NULL" or "observation" not in b.schema.tables or "concept" not in b.schema.tables:
        return "NULL"
    b.join("concept", "fc", f"fc.concept_id = {field} AND {field} <> 0")
    b.join("observation", "po", f"po.observation_id = {event} AND fc.concept_name = 'observation.observation_id'")
    b.join("concept", "pc", "pc.concept_id = po.observation_concept_id AND po.observation_concept_id <> 0")
    b.join("concept", "psc", "psc.concept_id = po.observation_source_concept_id AND po.observation_source_concept_id <> 0")
    return "coalesce(psc.concept_name, pc.concept_name, po.observation_source_value)"


def _vaccine(b: Branch) -> str:
    parts = [f"{a}.vocabulary_id = 'CVX'" for a in ("c", "sc") if any(f" AS {a} " in j for j in b.joins)]
    return "(" + " OR ".join(parts) + ")" if parts else "1 = 0"


def _omop(schema: Schema, d: Dialect, view: str) -> list[Branch]:
    out: list[Branch] = []
    t = schema.tables
    if view == "observation" and "measurement" in t:
        b = Branch(schema, d, "measurement", "m")
        _omop_named(b, "measurement", "measurement_source_value")
        u = _concept(b, "unit_concept_id", "u")
        v = _concept(b, "value_as_concept_id", "vc")
        b.values.update(value=b.col("value_as_number"), unit=b.first(b.col("unit_source_value"), f"{u}.concept_name" if u else "NULL"),
                        value_text=b.first(f"{v}.concept_name" if v else "NULL", b.col("value_source_value")),
                        time=b.first(b.col("measurement_datetime"), b.col("measurement_date")),
                        value_col=b.lit("measurement.value_as_number"), time_col=b.lit("measurement.measurement_datetime"),
                        category=_CLASS_CATEGORY.format(c="c") if any(" AS c " in j for j in b.joins) else "NULL")
        b.values["parent_name"] = _panel(b)
        out.append(b)
    if view in ("observation", "allergy") and "observation" in t:
        b = Branch(schema, d, "observation", "o")
        _omop_named(b, "observation", "observation_source_value")
        u = _concept(b, "unit_concept_id", "u")
        v = _concept(b, "value_as_concept_id", "vc")
        b.values.update(value=b.col("value_as_number"), unit=b.first(b.col("unit_source_value"), f"{u}.concept_name" if u else "NULL"),
                        value_text=b.first(b.col("value_as_string"), f"{v}.concept_name" if v else "NULL", b.col("value_source_value")),
                        time=b.first(b.col("observation_datetime"), b.col("observation_date")),
                        value_col=b.lit("observation.value_as_number"), time_col=b.lit("observation.observation_datetime"),
                        category=_CLASS_CATEGORY.format(c="c") if any(" AS c " in j for j in b.joins) else "NULL")
        allergy = [f"{b.col('qualifier_source_value')} = 'allergy'"] if b.col("qualifier_source_value") != "NULL" else []
        if any(" AS c " in j for j in b.joins):
            allergy.append("lower(c.concept_name) LIKE 'allergy to%'")
        marker = "(" + " OR ".join(allergy) + ")" if allergy else "1 = 0"
        b.where.append(marker if view == "allergy" else f"NOT coalesce({marker}, 1 = 0)")
        out.append(b)
    if view in ("medication", "immunization") and "drug_exposure" in t:
        b = Branch(schema, d, "drug_exposure", "x")
        _omop_named(b, "drug", "drug_source_value")
        spec = builtin("omop_cdm")
        kinds = " ".join(f"WHEN {b.col('drug_type_concept_id')} IN ({', '.join(str(i) for i in spec[key + '_types'])}) "
                         f"THEN '{kind}'" for key, kind in (("administration", "administration"), ("dispensing", "dispense"),
                                                            ("statement", "statement")))
        kind = f"CASE {kinds} ELSE 'request' END" if b.col("drug_type_concept_id") != "NULL" else "'request'"
        b.values.update(time=b.first(b.col("drug_exposure_start_datetime"), b.col("drug_exposure_start_date")),
                        end_time=b.first(b.col("drug_exposure_end_datetime"), b.col("drug_exposure_end_date")),
                        kind=kind, status=b.col("stop_reason"),
                        dose=f"CASE WHEN {kind} = 'administration' THEN {b.col('quantity')} END" if b.col("quantity") != "NULL" else "NULL",
                        sig=b.col("sig"), quantity=b.col("quantity"), days_supply=b.col("days_supply"),
                        dose_unit=b.col("dose_unit_source_value"),
                        value_col=f"CASE WHEN {kind} = 'administration' THEN 'drug_exposure.quantity' "
                                  "ELSE 'drug_exposure.drug_concept_id' END",
                        time_col=b.lit("drug_exposure.drug_exposure_start_datetime"))
        r = _concept(b, "route_concept_id", "rc")
        route = b.first(b.col("route_source_value"), f"{r}.concept_name" if r else "NULL")
        if route != "NULL":
            b.values.update(route=route, route_col=b.lit("drug_exposure.route_source_value" if b.col("route_source_value") != "NULL"
                                                         else "drug_exposure.route_concept_id"))
        b.where.append(_vaccine(b) if view == "immunization" else f"NOT coalesce({_vaccine(b)}, 1 = 0)")
        if b.col("stop_reason") != "NULL":
            # an administration recorded as not given ('not-done') is no administration, as on the FHIR path
            from fhirqa.sql.reading import words

            listed = ", ".join(b.lit(x) for x in words()["not_given"]["statuses"])
            b.where.append(f"NOT ({kind} = 'administration' AND coalesce(lower({b.col('stop_reason')}), '') IN ({listed}))")
        out.append(b)
    if view == "condition" and "condition_occurrence" in t:
        b = Branch(schema, d, "condition_occurrence", "x")
        _omop_named(b, "condition", "condition_source_value")
        b.values.update(time=b.first(b.col("condition_start_datetime"), b.col("condition_start_date")),
                        end_time=b.first(b.col("condition_end_datetime"), b.col("condition_end_date")),
                        status=b.col("condition_status_source_value"), time_col=b.lit("condition_occurrence.condition_start_datetime"),
                        encounter_id=b.col("visit_occurrence_id"), rank=_omop_primary(b), category=_omop_diagnosis(b))
        out.append(b)
    if view == "procedure" and "procedure_occurrence" in t:
        b = Branch(schema, d, "procedure_occurrence", "x")
        _omop_named(b, "procedure", "procedure_source_value")
        b.values.update(time=b.first(b.col("procedure_datetime"), b.col("procedure_date")),
                        end_time=b.first(b.col("procedure_end_datetime"), b.col("procedure_end_date")),
                        time_col=b.lit("procedure_occurrence.procedure_datetime"))
        out.append(b)
    if view == "encounter" and "visit_occurrence" in t:
        out.append(_omop_visit(schema, d))
    if view == "icu_stay" and "visit_detail" in t:
        icu = _omop_icu(schema, d)
        if icu is not None:
            out.append(icu)
    return out


def _omop_diagnosis(b: Branch) -> str:
    """'encounter-diagnosis' for a condition recorded as a diagnosis of its visit (``diagnosis_types``), else NULL."""
    column = b.col("condition_type_concept_id")
    if column == "NULL":
        return "NULL"
    ids = ", ".join(str(i) for i in builtin("omop_cdm")["diagnosis_types"]["ids"])
    return f"CASE WHEN {column} IN ({ids}) THEN 'encounter-diagnosis' END"


def _omop_primary(b: Branch) -> str:
    """1 for a condition the record marks as the visit's principal one (status or type concept), else NULL."""
    ids = ", ".join(str(i) for i in builtin("omop_cdm")["primary_condition_concepts"]["ids"])
    marks = [f"{col} IN ({ids})" for col in (b.col("condition_status_concept_id"), b.col("condition_type_concept_id"))
             if col != "NULL"]
    return f"CASE WHEN {' OR '.join(marks)} THEN 1 END" if marks else "NULL"


def _omop_visit(schema: Schema, d: Dialect) -> Branch:
    b = Branch(schema, d, "visit_occurrence", "x")
    c = _concept(b, "visit_concept_id", "c")
    s = _concept(b, "visit_source_concept_id", "sc")
    visits = builtin("omop_cdm")["visit_concepts"]
    concept_id = b.col("visit_concept_id")
    names = " ".join(f"WHEN {k} THEN {b.lit(v[0])}" for k, v in visits.items())
    classes = " ".join(f"WHEN {k} THEN {b.lit(v[1])}" for k, v in visits.items())
    # a combined visit ("Emergency Room and Inpatient Visit") is of both classes: its second class from the data file
    alts = " ".join(f"WHEN {concept_id} = {k} THEN {b.lit(v[2])}" for k, v in visits.items() if len(v) > 2)
    # a visit of another class that records where the patient was admitted from is a hospital stay too (MIMIC-IV's
    # OMOP codes admissions by admission type: an "Emergency Room Visit" of 8 days with ward transfers)
    admitted = _admitted(b)
    inpatient = ", ".join(k for k, v in visits.items() if v[1] == "IMP")
    if admitted and concept_id != "NULL":
        alts += f" WHEN {concept_id} NOT IN ({inpatient}) AND ({admitted}) THEN 'IMP'"
    builtin_name = f"CASE {concept_id} {names} END" if concept_id != "NULL" else "NULL"
    b.values.update(name=b.first(f"{s}.concept_name" if s else "NULL", f"{c}.concept_name" if c else "NULL", builtin_name),
                    code=b.first(f"{s}.concept_code" if s else "NULL", b.col("visit_source_value")),
                    source_code=b.col("visit_source_value"),
                    class_code=f"CASE {concept_id} {classes} END" if concept_id != "NULL" else "NULL",
                    alt_class=f"CASE {alts} END" if concept_id != "NULL" and alts else "NULL",
                    time=b.first(b.col("visit_start_datetime"), b.col("visit_start_date")),
                    end_time=b.first(b.col("visit_end_datetime"), b.col("visit_end_date")),
                    name_col=b.lit("visit_occurrence.visit_concept_id"), time_col=b.lit("visit_occurrence.visit_start_datetime"),
                    end_col=b.lit("visit_occurrence.visit_end_datetime"), encounter_id=b.col("visit_occurrence_id"))
    return b


def _admitted(b: Branch) -> str:
    """SQL true when the visit records where the patient was admitted from (``admission_sources`` of
    ``data/omop_cdm.json``), '' when the table has none of those columns."""
    marks = []
    for column in builtin("omop_cdm")["admission_sources"]["columns"]:
        expr = b.col(column)
        if expr == "NULL":
            continue
        if column.endswith("_concept_id"):
            marks.append(f"coalesce({expr}, 0) <> 0")
        else:
            marks.append(f"coalesce(trim({b.d.text(expr)}), '') <> ''")
    return " OR ".join(marks)


def _omop_icu(schema: Schema, d: Dialect) -> Branch | None:
    """ICU stays: ``visit_detail`` rows of an ICU concept (``icu_concepts``), or whose care site or source concept
    names an ICU (the ``units`` words of ``sql_reading.json``); named by the care site ("Medical Intensive Care Unit
    (MICU)"), else the source concept, the concept, the source value.

    Transfers inside the ICU are one ICU stay (as MIMIC's ICUSTAYS counts them): an ICU row that begins within
    ``icu_concepts.contiguous_hours`` of the end of another is part of that stay, so the stay is read from its first row
    (its start and unit) to the end of its last."""
    b = Branch(schema, d, "visit_detail", "x")
    is_icu = _icu_test(schema, d)
    if is_icu is None:
        return None
    c = _concept(b, "visit_detail_concept_id", "c")
    s = _concept(b, "visit_detail_source_concept_id", "sc")
    site = b.col("care_site_id")
    cs = "cs" if site != "NULL" and "care_site" in schema.tables and schema.tables["care_site"].has("care_site_name") \
        and b.join("care_site", "cs", f"cs.care_site_id = {site}") else ""
    start = lambda a: d.ts(b.first(b.col("visit_detail_start_datetime", a), b.col("visit_detail_start_date", a)))  # noqa: E731
    end = lambda a: d.ts(b.first(b.col("visit_detail_end_datetime", a), b.col("visit_detail_end_date", a)))  # noqa: E731
    hours = builtin("omop_cdm")["icu_concepts"].get("contiguous_hours", 1)
    key, person = schema.row_key("visit_detail"), schema.patient_key("visit_detail") or "person_id"
    last_end = end("x")
    if key:
        # gaps and islands: an ICU row opens a stay unless an earlier ICU row ended within the hours before it; the
        # stay ends with the last end of its rows
        earlier_end = (f"max({end('v')}) OVER (PARTITION BY v.{person} ORDER BY {start('v')}, v.{key} "
                       "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)")
        rows = (f"SELECT v.{key} AS k, v.{person} AS p, {start('v')} AS s, {end('v')} AS e, "
                f"CASE WHEN {earlier_end} >= {d.shift(start('v'), -hours)} THEN 0 ELSE 1 END AS opens "
                f"FROM visit_detail AS v WHERE {is_icu('v')}")
        grouped = (f"SELECT k, p, e, opens, sum(opens) OVER (PARTITION BY p ORDER BY s, k ROWS BETWEEN UNBOUNDED "
                   f"PRECEDING AND CURRENT ROW) AS stay FROM ({rows}) AS t")
        runs = f"SELECT k, opens, max(e) OVER (PARTITION BY p, stay) AS stay_end FROM ({grouped}) AS g"
        b.joins.append(f"LEFT JOIN ({runs}) AS icu_run ON icu_run.k = x.{key}")
        b.where.append("icu_run.opens = 1")
        last_end = "icu_run.stay_end"
    else:
        b.where.append(is_icu("x"))
    named = [e for e in (f"{cs}.care_site_name" if cs else "NULL", f"{s}.concept_name" if s else "NULL") if e != "NULL"]
    b.values.update(name=b.first(*named, f"{c}.concept_name" if c else "NULL", b.col("visit_detail_source_value")),
                    time=b.first(b.col("visit_detail_start_datetime"), b.col("visit_detail_start_date")),
                    end_time=last_end,
                    encounter_id=b.col("visit_occurrence_id"),
                    name_col=b.lit("care_site.care_site_name" if cs else "visit_detail.visit_detail_concept_id"),
                    time_col=b.lit("visit_detail.visit_detail_start_datetime"),
                    end_col=b.lit("visit_detail.visit_detail_end_datetime"))
    return b


def _icu_test(schema: Schema, d: Dialect) -> Callable[[str], str] | None:
    """SQL test that the ``visit_detail`` row of an alias is an ICU stay (its concept, its care site's name, its source
    concept's name), or None when the table has nothing to tell it by."""
    from fhirqa.sql.reading import words

    table = schema.tables["visit_detail"]
    units = words()["icu_stay"]["units"]
    has_site = table.has("care_site_id") and "care_site" in schema.tables and schema.tables["care_site"].has("care_site_name")
    has_source = table.has("visit_detail_source_concept_id") and "concept" in schema.tables
    if not table.has("visit_detail_concept_id") and not has_site and not has_source:
        return None
    ids = ", ".join(str(i) for i in builtin("omop_cdm")["icu_concepts"]["ids"])

    def test(a: str) -> str:
        parts = [f"{a}.visit_detail_concept_id IN ({ids})"] if table.has("visit_detail_concept_id") else []
        if has_site:
            site = f"(SELECT cs_.care_site_name FROM care_site AS cs_ WHERE cs_.care_site_id = {a}.care_site_id)"
            parts.extend(_names_a_unit(d, site, units))
        if has_source:
            source = (f"(SELECT k_.concept_name FROM concept AS k_ WHERE k_.concept_id = {a}.visit_detail_source_concept_id "
                      f"AND {a}.visit_detail_source_concept_id <> 0)")
            parts.extend(_names_a_unit(d, source, units))
        return "(" + " OR ".join(parts) + ")"

    return test


def _names_a_unit(d: Dialect, expr: str, units: list[str]) -> list[str]:
    """SQL tests that the name ``expr`` holds one of ``units`` as whole words ("Trauma SICU (TSICU)" holds "sicu";
    "Occupational Health" does not hold "ccu"): the name lower-cased, its punctuation made spaces, padded."""
    padded = f"lower({d.text(expr)})"
    for mark in "()/-,.":
        padded = f"replace({padded}, '{mark}', ' ')"
    padded = f"(' ' || {padded} || ' ')"
    return [f"{padded} LIKE '% {unit} %'" for unit in units]


def _mimic(schema: Schema, d: Dialect, view: str) -> list[Branch]:
    out: list[Branch] = []
    t = schema.tables
    if view == "observation":
        for table, alias, items in (("labevents", "l", "d_labitems"), ("chartevents", "ch", "d_items")):
            if table not in t:
                continue
            b = Branch(schema, d, table, alias)
            joined = b.join(items, "di", f"di.itemid = {b.col('itemid')}")
            code = b.first(b.col("loinc_code", "di", items) if joined else "NULL",
                           _item_loinc(b) if table == "chartevents" else "NULL")
            b.values.update(name=b.first(b.col("label", "di", items) if joined else "NULL", d.text(b.col("itemid"))),
                            code=code, source_code=b.col("itemid"),
                            value=b.col("valuenum"), value_text=b.col("value"), unit=b.col("valueuom"), time=b.col("charttime"),
                            value_col=b.lit(f"{table}.valuenum"), time_col=b.lit(f"{table}.charttime"),
                            name_col=b.lit(f"{table}.itemid"),
                            category="'laboratory'" if table == "labevents" else "'vital-signs'")
            if b.col("error") != "NULL":
                b.where.append(f"coalesce({b.col('error')}, 0) <> 1")
            out.append(b)
    if view == "medication":
        if "prescriptions" in t:
            b = Branch(schema, d, "prescriptions", "p")
            b.values.update(name=b.first(b.col("drug"), b.col("drug_name_generic"), b.col("drug_name_poe")), code=b.col("ndc"),
                            source_code=b.col("formulary_drug_cd"), time=b.col("startdate"), end_time=b.col("enddate"),
                            kind="'request'", dose=d.num(b.col("dose_val_rx")) if b.col("dose_val_rx") != "NULL" else "NULL",
                            dose_unit=b.col("dose_unit_rx"), value_col=b.lit("prescriptions.dose_val_rx"),
                            time_col=b.lit("prescriptions.startdate"), name_col=b.lit("prescriptions.drug"),
                            route=b.col("route"), route_col=b.lit("prescriptions.route") if b.col("route") != "NULL" else "NULL")
            out.append(b)
        for table, time_column, end_column in (("inputevents_cv", "charttime", None), ("inputevents_mv", "starttime", "endtime")):
            if table not in t:
                continue
            b = Branch(schema, d, table, "ie")
            joined = b.join("d_items", "di", f"di.itemid = {b.col('itemid')}")
            b.values.update(name=b.first(b.col("label", "di", "d_items") if joined else "NULL", d.text(b.col("itemid"))),
                            source_code=b.col("itemid"), time=b.col(time_column), end_time=b.col(end_column) if end_column else "NULL",
                            kind="'administration'", status=b.col("statusdescription"), dose=b.col("amount"),
                            dose_unit=b.col("amountuom"), value=b.col("amount"), unit=b.col("amountuom"),
                            value_col=b.lit(f"{table}.amount"), time_col=b.lit(f"{table}.{time_column}"),
                            name_col=b.lit(f"{table}.itemid"))
            if b.col("statusdescription") != "NULL":
                b.where.append(f"coalesce({b.col('statusdescription')}, '') <> 'Rewritten'")
            out.append(b)
    for wanted, table, names in (("condition", "diagnoses_icd", "d_icd_diagnoses"), ("procedure", "procedures_icd", "d_icd_procedures")):
        if view == wanted and table in t:
            b = Branch(schema, d, table, "dx")
            code = d.text(b.col("icd9_code")) if b.col("icd9_code") != "NULL" else "NULL"
            # codes compared and named as text: a loader may have typed an all-digit code column as a number
            joined = b.join(names, "dn", f"{d.text('dn.icd9_code')} = {code}") if code != "NULL" else False
            b.join("admissions", "a", f"a.hadm_id = {b.col('hadm_id')}")
            title = b.first(b.col("long_title", "dn", names), b.col("short_title", "dn", names)) if joined else "NULL"
            b.values.update(name=b.first(title, code), code=code, source_code=code,
                            encounter_id=b.col("hadm_id"), rank=b.col("seq_num"),
                            time=b.col("admittime", "a", "admissions") if "admissions" in t else "NULL",
                            time_col=b.lit("admissions.admittime"), name_col=b.lit(f"{table}.icd9_code"))
            out.append(b)
    if view == "procedure" and "procedureevents_mv" in t:
        b = Branch(schema, d, "procedureevents_mv", "pe")
        joined = b.join("d_items", "di", f"di.itemid = {b.col('itemid')}")
        b.values.update(name=b.first(b.col("label", "di", "d_items") if joined else "NULL", d.text(b.col("itemid"))),
                        source_code=b.col("itemid"), time=b.col("starttime"), end_time=b.col("endtime"),
                        time_col=b.lit("procedureevents_mv.starttime"), name_col=b.lit("procedureevents_mv.itemid"))
        out.append(b)
    if view == "encounter" and "admissions" in t:
        b = Branch(schema, d, "admissions", "a")
        emer = [f"{b.col('edregtime')} IS NOT NULL"] if b.col("edregtime") != "NULL" else []
        if b.col("admission_type") != "NULL":
            emer.append(f"{b.col('admission_type')} = 'EMERGENCY'")
        b.values.update(name=b.first(b.col("admission_type"), "'admission'"), code=b.col("admission_type"), class_code="'IMP'",
                        alt_class=f"CASE WHEN {' OR '.join(emer)} THEN 'EMER' END" if emer else "NULL",
                        time=b.col("admittime"), end_time=b.col("dischtime"), name_col=b.lit("admissions.admission_type"),
                        time_col=b.lit("admissions.admittime"), end_col=b.lit("admissions.dischtime"),
                        status=b.col("discharge_location"), encounter_id=b.col("hadm_id"),
                        reason=b.col("diagnosis"))  # the admitting diagnosis as written ("SEPSIS", "CHEST PAIN")
        if b.col("edregtime") != "NULL":
            # labs drawn in the ED before ADMITTIME belong to the stay ("K on admission" is often an ED draw)
            ed, admit = d.ts(b.col("edregtime")), d.ts(b.col("admittime"))
            b.values["arrival"] = f"CASE WHEN {ed} < {admit} THEN {b.col('edregtime')} ELSE {b.col('admittime')} END"
        out.append(b)
    if view == "icu_stay" and "icustays" in t:
        b = Branch(schema, d, "icustays", "ic")
        b.values.update(name=b.first(b.col("first_careunit"), "'ICU stay'"), code=b.col("icustay_id"), time=b.col("intime"),
                        end_time=b.col("outtime"), encounter_id=b.col("hadm_id"), name_col=b.lit("icustays.first_careunit"),
                        time_col=b.lit("icustays.intime"))
        out.append(b)
    return out


def _item_loinc(b: Branch) -> str:
    """The LOINC code of a chart item (D_ITEMS has none): ``item_loinc`` of ``fhirqa/sql/data/mimic_iii.json``."""
    itemid = b.col("itemid")
    if itemid == "NULL":
        return "NULL"
    return f"CASE {b.d.text(itemid)} {_item_loinc_cases()} END"


@functools.lru_cache(maxsize=1)
def _item_loinc_cases() -> str:
    codes = builtin("mimic_iii")["item_loinc"]["codes"]
    return " ".join(f"WHEN '{item}' THEN '{code}'" for item, code in codes.items())


def domain_sql(schema: Schema, dialect: str, view: str) -> str:
    """The canonical rows of ``view`` in this schema as one SELECT (no rows when the schema lacks the domain)."""
    d = Dialect(dialect)
    if schema.kind == "omop":
        branches = _omop(schema, d, view)
    elif schema.kind == "mimic-iii":
        branches = _mimic(schema, d, view)
    else:
        branches = []
    if not branches:
        return "SELECT " + ", ".join(f"{d.null(c)} AS {c}" for c in COLUMNS) + " WHERE 1 = 0"
    return " UNION ALL ".join(b.sql() for b in branches)


def supported_views(schema: Schema) -> list[str]:
    """Views this schema has at least one source table for."""
    d = Dialect(schema.dialect)
    reader = _omop if schema.kind == "omop" else _mimic if schema.kind == "mimic-iii" else None
    return [v for v in VIEWS if reader is not None and reader(schema, d, v)]


def domain_tables(schema: Schema, view: str) -> list[str]:
    """The tables a view reads in this schema (event tables first, then the dictionaries they join)."""
    d = Dialect(schema.dialect)
    reader = _omop if schema.kind == "omop" else _mimic if schema.kind == "mimic-iii" else None
    if reader is None:
        return []
    branches = reader(schema, d, view)
    joined = [j.split()[2] for b in branches for j in b.joins if not j.split()[2].startswith("(")]
    return list(dict.fromkeys([b.table for b in branches] + joined))
