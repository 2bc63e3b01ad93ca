"""Helpers for the mapping/view tests: run the mappings, build the map_* tables, run the views.

The ViewDefinition runner of the project (`fhirqa.viewdef.run_view`) is used when it is importable;
until then a small reference runner over fhirpathpy (R4 model) stands in for it, so the mappings
can be checked on their own.  The table building mirrors the store contract: every map table gets
two leading meta columns, `patient_id` and `ref`, and exists even when empty.
"""

from __future__ import annotations

import decimal
import functools
import glob
import json
import os
import pathlib
from collections.abc import Iterable, Iterator
from typing import Any

import duckdb
import pyarrow as pa

from fhirqa.store.generation import register_view_macros

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAPPINGS_DIR = ROOT / "mappings"
VIEWS_DIR = ROOT / "views"
FIXTURES_DIR = pathlib.Path(__file__).resolve().parent / "fixtures"

RESOURCE_TYPES = [
    "Patient",
    "Encounter",
    "Observation",
    "Condition",
    "MedicationRequest",
    "Medication",
    "MedicationDispense",
    "MedicationAdministration",
    "MedicationStatement",
    "Procedure",
    "Immunization",
    "AllergyIntolerance",
    "DiagnosticReport",
    "DocumentReference",
    "CarePlan",
    "Goal",
    "ImagingStudy",
    "Device",
    "Practitioner",
    "Organization",
    "ExplanationOfBenefit",
]
VIEWS = [
    "patient",
    "encounter",
    "observation",
    "condition",
    "medication",
    "procedure",
    "immunization",
    "allergy",
    "note",
    "care_plan",
    "goal",
    "imaging",
    "device",
]


def shared_data_dir() -> pathlib.Path | None:
    """`../shared/data` next to the project root (or $FHIRQA_SHARED_DATA), None when absent."""
    for cand in (os.environ.get("FHIRQA_SHARED_DATA"), ROOT.parent / "shared" / "data"):
        if cand and pathlib.Path(cand, "synthea-r4").is_dir():
            return pathlib.Path(cand)
    return None


# --------------------------------------------------------------------------- mappings


def snake(resource_type: str) -> str:
    out = ""
    for i, ch in enumerate(resource_type):
        if ch.isupper() and i:
            out += "_"
        out += ch.lower()
    return out


@functools.cache
def load_mappings() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(MAPPINGS_DIR.glob("*.json"))}


def view_sql(name: str) -> str:
    return (VIEWS_DIR / f"{name}.sql").read_text()


def iter_columns(select: list[dict]) -> Iterator[dict]:
    """Columns of a select list in output order (column, nested select, first unionAll branch)."""
    for sel in select:
        yield from sel.get("column", [])
        yield from iter_columns(sel.get("select", []))
        if sel.get("unionAll"):
            yield from iter_columns([sel["unionAll"][0]])


def output_columns(viewdef: dict) -> list[dict]:
    seen: dict[str, dict] = {}
    for col in iter_columns(viewdef["select"]):
        seen.setdefault(col["name"], col)
    return list(seen.values())


# --------------------------------------------------------------------------- runner


def _project_runner():
    """The project's runner (compiled once per mapping), or None while it is not importable."""
    try:
        from fhirqa.viewdef import compile_view  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not written yet, or broken: use the reference runner
        return None
    compiled: dict[str, Any] = {}

    def run(viewdef: dict, resources: Iterable[dict]) -> list[dict]:
        key = json.dumps(viewdef, sort_keys=True)
        view = compiled.get(key)
        if view is None:
            view = compiled[key] = compile_view(viewdef)
        names = view.column_names
        return [dict(zip(names, row, strict=True)) for res in resources for row in view.rows(res)]

    return run


class ReferenceRunner:
    """Minimal SQL-on-FHIR v2 runner (column, select, forEach, forEachOrNull, unionAll, where,
    constant) on fhirpathpy with the R4 model; compiled expressions are cached."""

    def __init__(self) -> None:
        import fhirpathpy
        import fhirpathpy.models

        self._fp = fhirpathpy
        self._model = fhirpathpy.models.models["r4"]
        self._cache: dict[str, Any] = {}

    def _compiled(self, path: str):
        fn = self._cache.get(path)
        if fn is None:
            fn = self._fp.compile(path, self._model, {"returnRawData": True})
            self._cache[path] = fn
        return fn

    def _eval_nodes(self, node, path, consts):
        return self._compiled(path)(node, consts)

    @staticmethod
    def _plain(v):
        from fhirpathpy.engine.nodes import FP_Type, ResourceNode

        if isinstance(v, ResourceNode):
            v = v.data
        if isinstance(v, decimal.Decimal):
            return float(v)
        if isinstance(v, FP_Type):
            return str(v)
        return v

    def _value(self, node, col, consts):
        vals = [self._plain(v) for v in self._eval_nodes(node, col["path"], consts)]
        if col.get("collection"):
            return vals
        if len(vals) > 1:
            raise ValueError(f"column {col['name']!r}: {col['path']!r} returned {len(vals)} values")
        return vals[0] if vals else None

    def _null_rows(self, sel) -> list[dict]:
        return [{c["name"]: None for c in iter_columns([sel])}]

    def _select(self, sel: dict, node, consts) -> list[dict]:
        if "forEach" in sel or "forEachOrNull" in sel:
            path = sel.get("forEach") or sel.get("forEachOrNull")
            foci = list(self._eval_nodes(node, path, consts))
            if not foci:
                return self._null_rows(sel) if "forEachOrNull" in sel else []
        else:
            foci = [node]
        out: list[dict] = []
        for focus in foci:
            rows = [{c["name"]: self._value(focus, c, consts) for c in sel.get("column", [])}]
            for sub in sel.get("select", []):
                rows = [{**r, **s} for r in rows for s in self._select(sub, focus, consts)]
            if sel.get("unionAll"):
                union = [s for branch in sel["unionAll"] for s in self._select(branch, focus, consts)]
                rows = [{**r, **s} for r in rows for s in union]
            out.extend(rows)
        return out

    def run(self, viewdef: dict, resources: Iterable[dict]) -> list[dict]:
        consts = {}
        for c in viewdef.get("constant", []):
            consts[c["name"]] = next(v for k, v in c.items() if k.startswith("value"))
        out: list[dict] = []
        for res in resources:
            if res.get("resourceType") != viewdef["resource"]:
                continue
            if any(self._eval_nodes(res, w["path"], consts) != [True] for w in viewdef.get("where", [])):
                continue
            rows = [{}]
            for sel in viewdef["select"]:
                rows = [{**r, **s} for r in rows for s in self._select(sel, res, consts)]
            out.extend(rows)
        return out


@functools.cache
def runner():
    """(name, callable(viewdef, resources) -> rows)."""
    rv = _project_runner()
    if rv is not None:
        return "fhirqa.viewdef.compile_view", rv
    ref = ReferenceRunner()
    return "reference runner (fhirpathpy)", ref.run


def run_mapping(viewdef: dict, resource: dict) -> list[dict]:
    return runner()[1](viewdef, [resource])


# --------------------------------------------------------------------------- meta columns


def patient_id_of(resource: dict) -> str | None:
    if resource.get("resourceType") == "Patient":
        return resource.get("id")
    for key in ("subject", "patient"):
        ref = (resource.get(key) or {}).get("reference") or ""
        if ref.startswith("Patient/"):
            return ref.split("/", 1)[1]
    return None


_ARROW = {
    "decimal": pa.float64(),
    "integer": pa.int64(),
    "positiveInt": pa.int64(),
    "unsignedInt": pa.int64(),
    "integer64": pa.int64(),
    "boolean": pa.bool_(),
}


def arrow_type(col: dict) -> pa.DataType:
    base = _ARROW.get(col.get("type", "string"), pa.string())
    return pa.list_(base) if col.get("collection") else base


def build_tables(resources: Iterable[dict], con: duckdb.DuckDBPyConnection | None = None):
    """Run every mapping over `resources` and load one `map_*` table per mapping into DuckDB."""
    con = con or duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    register_view_macros(con, VIEWS_DIR)  # the views' SQL calls them, as the store's builder defines them
    maps = load_mappings()
    by_type: dict[str, list[dict]] = {t: [] for t in maps}
    for res in resources:
        if res.get("resourceType") in by_type:
            by_type[res["resourceType"]].append(res)
    for rtype, vd in maps.items():
        cols = output_columns(vd)
        data: dict[str, list] = {"patient_id": [], "ref": [], **{c["name"]: [] for c in cols}}
        for res in by_type[rtype]:
            pid, ref = patient_id_of(res), f"{rtype}/{res.get('id')}"
            for row in run_mapping(vd, res):
                data["patient_id"].append(pid)
                data["ref"].append(ref)
                for c in cols:
                    data[c["name"]].append(row.get(c["name"]))
        schema = pa.schema(
            [("patient_id", pa.string()), ("ref", pa.string())] + [(c["name"], arrow_type(c)) for c in cols]
        )
        table = pa.table(data, schema=schema)
        con.register("_tmp_arrow", table)
        con.execute(f'CREATE OR REPLACE TABLE "{vd["name"]}" AS SELECT * FROM _tmp_arrow')
        con.unregister("_tmp_arrow")
    return con


def run_view(con: duckdb.DuckDBPyConnection, name: str) -> list[dict]:
    rel = con.sql(view_sql(name))
    cols = rel.columns
    return [dict(zip(cols, r, strict=True)) for r in rel.fetchall()]


# --------------------------------------------------------------------------- data loading


def resolve_bundle(bundle: dict) -> list[dict]:
    """Resources of a (transaction) bundle, `urn:uuid:` references rewritten to Type/id."""
    full = {}
    for e in bundle.get("entry", []):
        r = e.get("resource") or {}
        if e.get("fullUrl") and r.get("id"):
            full[e["fullUrl"]] = f"{r['resourceType']}/{r['id']}"

    def fix(x):
        if isinstance(x, dict):
            return {
                k: (full.get(v, v) if k == "reference" and isinstance(v, str) else fix(v))
                for k, v in x.items()
            }
        if isinstance(x, list):
            return [fix(v) for v in x]
        return x

    return [fix(e["resource"]) for e in bundle.get("entry", []) if e.get("resource")]


def load_fixtures() -> list[dict]:
    out = []
    for p in sorted(FIXTURES_DIR.glob("*.json")):
        d = json.loads(p.read_text())
        if d.get("resourceType") == "Bundle":
            out.extend(resolve_bundle(d))
        else:
            out.append(d)
    return out


def load_synthea_bundles(data_dir: pathlib.Path) -> list[dict]:
    import orjson

    out: list[dict] = []
    for f in sorted(glob.glob(str(data_dir / "synthea-r4" / "*.json"))):
        out.extend(resolve_bundle(orjson.loads(pathlib.Path(f).read_bytes())))
    return out


def load_ndjson_dir(path: pathlib.Path) -> list[dict]:
    import orjson

    out: list[dict] = []
    for f in sorted(path.glob("*.ndjson")):
        if f.name == "log.ndjson":
            continue
        out.extend(orjson.loads(line) for line in f.read_bytes().splitlines() if line.strip())
    return out
