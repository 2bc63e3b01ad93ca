"""Compile a SQL-on-FHIR v2 ViewDefinition into a row generator.

A ViewDefinition is validated and every FHIRPath in it compiled once by
:func:`compile_view`; :meth:`CompiledView.rows` then turns one resource into rows.

Row semantics follow the spec: a select node's rows are the cross product of its own
columns, each nested ``select``, and the concatenation of its ``unionAll`` branches, in
that column order; ``forEach``/``forEachOrNull``/``repeat`` evaluate the node once per
item of their collection (``%rowIndex`` being the item's 0-based position).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn

from . import chain as _chain
from .chain import Env, Expr
from .errors import ViewDefinitionError
from .fhirpath import Compiler
from .parser import parse

Gen = Callable[[list, Env, int], list[tuple]]

_SQL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_RESOURCE_NAME = re.compile(r"^[A-Z][A-Za-z]*$")
_ITERATORS = ("forEach", "forEachOrNull", "repeat")
#: The revision of the rows this runner yields for a given ViewDefinition. Bump it with any change to the runner,
#: its FHIRPath or the C helpers that changes rows (a fix included): stores then re-run their canonical maps over
#: the stored resources at the next ingest or ``fhirqa upgrade`` (the map digests include it).
ROWS_REVISION = 1


@dataclass(frozen=True, slots=True)
class Column:
    """One output column: its SQL name, declared FHIR type, collection flag and FHIRPath."""

    name: str
    type: str | None
    collection: bool
    path: str
    description: str | None = None


def _at(where: str, key: str) -> str:
    """Location string for error messages, e.g. ``select[0].column[2]``."""
    return f"{where}.{key}" if where else key


def _product(parts: list[list[tuple]]) -> list[tuple]:
    rows = parts[0]
    for part in parts[1:]:
        if len(part) == 1:
            tail = part[0]
            rows = [r + tail for r in rows]
        else:
            rows = [r + t for r in rows for t in part]
    return rows


class _Builder:
    """Walks the ViewDefinition JSON, validating it and building closures."""

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler
        self.names: dict[str, str] = {}  # column name -> location, to reject duplicates

    def expr(self, source: Any, where: str) -> Expr:
        if not isinstance(source, str):
            raise ViewDefinitionError(f"{where}: FHIRPath must be a string, got {type(source).__name__}")
        try:
            return self.compiler.compile(parse(source))
        except ViewDefinitionError as exc:
            raise ViewDefinitionError(f"{where}: invalid FHIRPath {source!r}: {exc}") from exc

    def column(self, spec: Any, where: str) -> tuple[Column, Expr]:
        if not isinstance(spec, dict):
            raise ViewDefinitionError(f"{where}: a column must be an object")
        name, path = spec.get("name"), spec.get("path")
        if not isinstance(name, str) or not _SQL_NAME.match(name):
            raise ViewDefinitionError(f"{where}: column name {name!r} must match {_SQL_NAME.pattern}")
        where = f"{where} ({name!r})"
        collection = spec.get("collection", False)
        if not isinstance(collection, bool):
            raise ViewDefinitionError(f"{where}: 'collection' must be true or false")
        ctype = spec.get("type")
        if ctype is not None and not isinstance(ctype, str):
            raise ViewDefinitionError(f"{where}: 'type' must be a string")
        expr = self.expr(path, where)  # rejects a non-string path
        return Column(name, ctype, collection, str(path), spec.get("description")), expr

    def register(self, columns: list[Column], where: str) -> None:
        for col in columns:
            if col.name in self.names:
                raise ViewDefinitionError(
                    f"{where or 'select'}: duplicate column name {col.name!r} (also at {self.names[col.name] or 'select'})"
                )
            self.names[col.name] = where

    def select(self, node: Any, where: str) -> tuple[list[Column], Gen]:
        """Compile one select node into (its columns, a row generator)."""
        if not isinstance(node, dict):
            raise ViewDefinitionError(f"{where}: a select must be an object")
        iterators = [k for k in _ITERATORS if k in node]
        if len(iterators) > 1:
            raise ViewDefinitionError(f"{where}: only one of forEach, forEachOrNull, repeat is allowed")

        col_specs = node.get("column", [])
        if not isinstance(col_specs, list):
            raise ViewDefinitionError(f"{_at(where, 'column')}: must be a list")
        own = [self.column(c, _at(where, f"column[{i}]")) for i, c in enumerate(col_specs)]
        columns = [c for c, _ in own]
        self.register(columns, where)
        extractors = [(e, c) for c, e in own]

        children: list[Gen] = []
        for i, child in enumerate(self._list(node, "select", where)):
            child_cols, child_gen = self.select(child, _at(where, f"select[{i}]"))
            # A leading run of plain column-only selects shares our focus: fold it into our columns.
            if not children and getattr(child_gen, "flat_extractors", None) is not None:
                extractors.extend(child_gen.flat_extractors)  # type: ignore[attr-defined]
            else:
                children.append(child_gen)
            columns.extend(child_cols)

        if "unionAll" in node:
            union_cols, union_gen = self.union(self._list(node, "unionAll", where), _at(where, "unionAll"))
            columns.extend(union_cols)
            children.append(union_gen)

        body = _body(extractors, children)
        if iterators:
            gen = self.iterate(node, iterators[0], body, len(columns), where)
        else:
            gen = body
        return columns, gen

    def union(self, branches: list, where: str) -> tuple[list[Column], Gen]:
        if not branches:
            raise ViewDefinitionError(f"{where}: unionAll needs at least one branch")
        saved = dict(self.names)
        compiled = []
        expected: list[str] | None = None
        for i, branch in enumerate(branches):
            self.names = dict(saved)  # each branch declares the same names once
            cols, gen = self.select(branch, f"{where}[{i}]")
            names = [c.name for c in cols]
            if expected is None:
                expected = names
            elif names != expected:
                raise ViewDefinitionError(
                    f"{where}[{i}]: unionAll branches must have the same columns in the same order; "
                    f"expected {expected}, got {names}"
                )
            compiled.append((cols, gen))
        gens = [g for _, g in compiled]
        if _chain.NATIVE is not None:
            return compiled[0][0], _chain.NATIVE.union(tuple(gens))

        def union_rows(focus: list, env: Env, idx: int) -> list[tuple]:
            rows: list[tuple] = []
            for g in gens:
                rows.extend(g(focus, env, idx))
            return rows

        return compiled[0][0], union_rows

    def iterate(self, node: dict, kind: str, body: Gen, width: int, where: str) -> Gen:
        if kind == "repeat":
            paths = node["repeat"]
            if not isinstance(paths, list) or not paths:
                raise ViewDefinitionError(f"{_at(where, 'repeat')}: must be a non-empty list of FHIRPath strings")
            exprs = [self.expr(p, _at(where, f"repeat[{i}]")) for i, p in enumerate(paths)]

            def collect(focus: list, env: Env) -> list:
                out: list = []
                for item in focus:  # depth-first, pre-order, children in path order
                    found = [v for e in exprs for v in e([item], env)]
                    for child in found:
                        out.append(child)
                        out.extend(collect([child], env))
                return out

            items_of: Expr = collect
        else:
            items_of = self.expr(node[kind], _at(where, kind))
        or_null = kind == "forEachOrNull"
        if _chain.NATIVE is not None:
            return _chain.NATIVE.each(items_of, or_null, body)

        def each(focus: list, env: Env, idx: int) -> list[tuple]:
            env.row_index = idx  # a sibling may have left its own index behind
            items = items_of(focus, env)
            if not items:
                # forEachOrNull keeps the parent row: evaluate the body on an empty focus,
                # so paths yield null and %rowIndex is 0.
                return body([], env, 0) if or_null else []
            rows: list[tuple] = []
            for i, item in enumerate(items):
                rows.extend(body([item], env, i))
            return rows

        return each

    @staticmethod
    def _list(node: dict, key: str, where: str) -> list:
        value = node.get(key, [])
        if not isinstance(value, list):
            raise ViewDefinitionError(f"{_at(where, key)}: must be a list")
        return value


def _too_many(col: Column, values: list) -> ViewDefinitionError:
    return ViewDefinitionError(
        f"column {col.name!r} (path {col.path!r}) produced {len(values)} values but 'collection' is not true"
    )


def _shared_prefixes(native: Any, columns: tuple) -> tuple[tuple, tuple]:
    """Columns and shared chain prefixes for the C ``body`` (see ``node_state`` in ``_chain.c``).

    Every chain prefix that starts two or more columns becomes a node, walked once per row: in the canonical
    maps ``code.coding``, ``value.ofType(Quantity)`` or ``referenceRange.first()`` start several columns each,
    and on synthea-r4 the dict lookups are most of a cell's cost. A node continues from its longest shared
    proper prefix (its parent, listed before it); a column from its longest shared prefix, with the rest of
    its chain (None when nothing is left). Columns that are not plain chains keep ``(expr, collection)``.
    """
    steps_of = {i: expr.steps for i, (expr, _) in enumerate(columns) if type(expr) is native.Chain}
    uses: dict[tuple, int] = {}
    for steps in steps_of.values():
        for k in range(1, len(steps) + 1):
            uses[steps[:k]] = uses.get(steps[:k], 0) + 1
    shared = sorted((p for p, n in uses.items() if n > 1), key=len)[:64]  # _chain.c's MAX_NODES
    if not shared:
        return columns, ()
    index = {p: j for j, p in enumerate(shared)}

    def longest(steps: tuple, limit: int) -> tuple[int, int]:
        for k in range(limit, 0, -1):
            if steps[:k] in index:
                return index[steps[:k]], k
        return -1, 0

    nodes = []
    for p in shared:
        parent, k = longest(p, len(p) - 1)
        nodes.append((parent, native.Chain(p[k:], _chain.walk, _chain.reference_key, _chain.CHOICE_SUFFIXES)))
    out: list[tuple] = []
    for i, (expr, collection) in enumerate(columns):
        steps = steps_of.get(i)
        node, k = longest(steps, len(steps)) if steps is not None else (-1, 0)
        if steps is None or node < 0:
            out.append((expr, collection))
            continue
        rest = steps[k:]
        tail = native.Chain(rest, _chain.walk, _chain.reference_key, _chain.CHOICE_SUFFIXES) if rest else None
        out.append((tail, collection, node))
    return tuple(out), tuple(nodes)


def _body(extractors: list[tuple[Expr, Column]], children: list[Gen]) -> Gen:
    """Rows for one focus: own columns x each child's rows (cross product)."""
    # Scalar columns are unwrapped inline rather than through a per-column wrapper
    # function: one Python frame less per cell is a large share of the hot path.
    ex = tuple((expr, col.collection, col) for expr, col in extractors)
    native = _chain.NATIVE  # read when the view is compiled
    native_columns = tuple((expr, bool(col.collection)) for expr, col in extractors)

    def own_row(focus: list, env: Env) -> tuple:
        if native is not None:  # the same loop in C; None: a column broke its cardinality (raised below)
            row_ = native.own_row(native_columns, focus, env)
            if row_ is not None:
                return row_
        row: list[Any] = []
        for expr, collection, col in ex:
            values = expr(focus, env)
            if collection:
                row.append(list(values))
            elif not values:
                row.append(None)
            elif len(values) == 1:
                row.append(values[0])
            else:
                raise _too_many(col, values)
        return tuple(row)

    if native is not None:
        # The row assembly in C (_chain.Gen): per resource, the Python frames of flat/nested/_product and of
        # the union and forEach closures cost about as much as the cells themselves (measured on synthea-r4).
        columns, nodes = _shared_prefixes(native, native_columns)
        return native.body(columns, nodes, tuple(children), own_row, None if children else extractors)

    if not children:

        def flat(focus: list, env: Env, idx: int) -> list[tuple]:
            env.row_index = idx
            return [own_row(focus, env)]

        flat.flat_extractors = extractors  # type: ignore[attr-defined]
        return flat
    kids = tuple(children)

    def nested(focus: list, env: Env, idx: int) -> list[tuple]:
        env.row_index = idx
        parts = [[own_row(focus, env)]] if ex else []
        for kid in kids:
            rows = kid(focus, env, idx)
            if not rows:
                return []
            parts.append(rows)
        return _product(parts)

    return nested


def _constants(view: dict, override: Mapping[str, Any] | None) -> dict[str, Any]:
    consts: dict[str, Any] = {}
    specs = view.get("constant", [])
    if not isinstance(specs, list):
        raise ViewDefinitionError("constant: must be a list")
    for i, spec in enumerate(specs):
        where = f"constant[{i}]"
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not _SQL_NAME.match(spec["name"]):
            raise ViewDefinitionError(f"{where}: a constant needs a name matching {_SQL_NAME.pattern}")
        values = [k for k in spec if k.startswith("value") and len(k) > 5 and k[5].isupper()]
        if len(values) != 1:
            raise ViewDefinitionError(f"{where} ({spec['name']!r}): needs exactly one value[x], found {len(values)}")
        if spec["name"] in consts:
            raise ViewDefinitionError(f"{where}: duplicate constant {spec['name']!r}")
        consts[spec["name"]] = spec[values[0]]
    consts.update(override or {})
    return consts


class CompiledView:
    """A validated, compiled ViewDefinition. Build with :func:`compile_view`."""

    def __init__(self, view: dict, constants_override: Mapping[str, Any] | None = None) -> None:
        if not isinstance(view, dict):
            raise ViewDefinitionError("a ViewDefinition must be a JSON object")
        resource = view.get("resource")
        if not isinstance(resource, str) or not _RESOURCE_NAME.match(resource):
            raise ViewDefinitionError(f"resource: must name a FHIR resource type, got {resource!r}")
        self.resource: str = resource
        self.name: str | None = view.get("name")
        self.constants = _constants(view, constants_override)
        builder = _Builder(Compiler(self.constants))
        selects = view.get("select")
        if not isinstance(selects, list) or not selects:
            raise ViewDefinitionError("select: a ViewDefinition needs a non-empty list of selects")
        self.columns: list[Column]
        self.columns, self._gen = builder.select({"select": selects}, "")
        if not self.columns:
            raise ViewDefinitionError("select: the view defines no columns")
        wheres = view.get("where", [])
        if not isinstance(wheres, list):
            raise ViewDefinitionError("where: must be a list")
        self._where: list[tuple[str, Expr]] = []
        for i, w in enumerate(wheres):
            if not isinstance(w, dict) or "path" not in w:
                raise ViewDefinitionError(f"where[{i}]: needs a 'path'")
            self._where.append((w["path"], builder.expr(w["path"], f"where[{i}]")))
        native = _chain.NATIVE
        #: ``rows(resource) -> list[tuple]``: the rows one resource produces (none if its type differs or a
        #: ``where`` rejects it). Without where clauses and with the C rows, a C callable: no Python frame per
        #: resource (measured ~10 % of the canonical maps once rows were assembled in C).
        self.rows: Callable[[dict], list[tuple]] = self._rows
        if native is not None and not self._where and type(self._gen) is native.Gen:
            # failed() must not hold the view: the C Rows is not tracked by the garbage collector, so a cycle
            # through it (view -> rows -> bound method -> view) would never be freed.
            self.rows = native.rows(self._gen, self.resource, Env, partial(_failed, self.name or self.resource,
                                                                              self.resource))

    @property
    def column_names(self) -> list[str]:
        """Column names in output order."""
        return [c.name for c in self.columns]

    def matches(self, resource: Any) -> bool:
        """True if ``resource`` has the view's type and passes every ``where`` clause."""
        if type(resource) is not dict or resource.get("resourceType") != self.resource:
            return False
        focus = [resource]
        return self._passes(focus, Env(focus))

    def _passes(self, focus: list, env: Env) -> bool:
        for path, expr in self._where:
            result = expr(focus, env)
            if not result:
                return False
            if len(result) > 1 or type(result[0]) is not bool:
                raise ViewDefinitionError(
                    f"where path {path!r} must evaluate to a single boolean, got {result[:3]!r}"
                )
            if not result[0]:
                return False
        return True

    def _rows(self, resource: dict) -> list[tuple]:
        if type(resource) is not dict or resource.get("resourceType") != self.resource:
            return []
        focus = [resource]
        env = Env(focus)
        try:
            if self._where and not self._passes(focus, env):
                return []
            return self._gen(focus, env, 0)
        except Exception as exc:  # noqa: BLE001 - _failed re-raises what it does not convert
            self._failed(resource, exc)

    def _failed(self, resource: dict, exc: BaseException) -> NoReturn:
        _failed(self.name or self.resource, self.resource, resource, exc)

    def iter_rows(self, resources: Iterable[dict]) -> Iterable[tuple]:
        """Rows of many resources, lazily."""
        for resource in resources:
            yield from self.rows(resource)

    def __repr__(self) -> str:
        return f"CompiledView(resource={self.resource!r}, name={self.name!r}, columns={self.column_names})"


def _failed(label: str, resource_type: str, resource: dict, exc: BaseException) -> NoReturn:
    """Raise the error of a failed evaluation of ``resource``: a view error naming it."""
    if isinstance(exc, ViewDefinitionError):
        raise ViewDefinitionError(f"{exc} (in {resource_type}/{resource.get('id')})") from exc
    if isinstance(exc, (TypeError, ValueError, ArithmeticError, IndexError, KeyError, re.error)):
        # Data the expression did not anticipate (e.g. substring() on a number): report it
        # as a view error naming the resource instead of leaking a bare Python exception.
        raise ViewDefinitionError(
            f"evaluating view {label!r} failed on {resource_type}/{resource.get('id')}: {type(exc).__name__}: {exc}"
        ) from exc
    raise exc


def compile_view(viewdef: dict, constants_override: dict | None = None) -> CompiledView:
    """Validate and compile a ViewDefinition; raises :class:`ViewDefinitionError` naming the bad part.

    ``constants_override`` maps constant names to values that replace (or add to) the
    view's ``constant`` entries, e.g. ``{"patient_id": "123"}``; a list value becomes a
    collection (``code in %codes``) and None the empty collection.
    """
    return CompiledView(viewdef, constants_override)


def run_view(viewdef: dict, resources: Iterable[dict]) -> list[dict]:
    """Compile ``viewdef`` and run it over ``resources``; rows come back as dicts."""
    view = compile_view(viewdef)
    names = view.column_names
    return [dict(zip(names, row, strict=True)) for row in view.iter_rows(resources)]
