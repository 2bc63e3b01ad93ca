"""Flatten a resource into path–value pairs: the lossless layer under the views.

Every primitive in a resource becomes one fact: its path with array indices
(``component[1].valueQuantity.value``), its JSON type and its value. :func:`unflatten` rebuilds the
resource from the facts, which is how the tests prove nothing is lost.

On the ingest path :meth:`FactColumns.add_checked` does the structural checks of
:mod:`fhirqa.normalize.validate` in the same walk that emits the facts, so each resource is walked once.
That walk runs in C when the optional extension is built (:mod:`fhirqa.normalize.native`); the Python
walks below are its reference implementation and the fallback.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fhirqa.normalize import native
from fhirqa.normalize.validate import DATE_KEYS, MAX_STRING, REFERENCE_KEYS, check_resource, is_date_time

#: value_type codes stored with each fact.
STRING, NUMBER, BOOLEAN, NULL = "string", "number", "boolean", "null"
#: value_type by the small integer the walk records (Arrow builds the strings from a 4-entry dictionary).
VALUE_TYPES = (STRING, NUMBER, BOOLEAN, NULL)
_S, _N, _B, _Z = 0, 1, 2, 3
_VALUE_TYPES = pa.array(VALUE_TYPES, pa.string())
_INDEX = tuple(f"[{i}]" for i in range(512))

# What the walk must notice (then validate.check_resource decides and names the field):
_CHECK_STR = DATE_KEYS | REFERENCE_KEYS  # a string here must be a date, or must not be a string at all
_CHECK_SCALAR = DATE_KEYS | REFERENCE_KEYS | {"reference"}  # a number or boolean here is wrong
_CHECK_NULL = REFERENCE_KEYS | {"reference"}  # null here is wrong
_RULES = (_CHECK_STR, REFERENCE_KEYS, _CHECK_SCALAR, _CHECK_NULL)  # as the C walk takes them


class _Notice(Exception):
    """Raised inside the walk when a field needs :func:`check_resource`'s verdict."""


class FactColumns:
    """Column-wise buffers of facts (patient, type, id, path, value_type, value, number, seq), ready for Arrow.

    The walk appends only what differs per fact (path, type code, value, number): into the C walk's
    buffers when it is built (no Python object per fact), else into Python lists. Patient, type, id and
    seq are kept once per resource with its fact count and repeated by Arrow, not by Python.
    """

    __slots__ = ("_counts", "_ids", "_lists", "_patients", "_seqs", "_sink", "_types")

    def __init__(self, *, use_native: bool | None = None) -> None:
        walk = native.WALK if use_native is None or use_native else None
        if use_native and walk is None:
            raise RuntimeError("the C walks are not built (or FHIRQA_PURE_PYTHON is set)")
        self._sink: Any = walk.FactSink() if walk is not None else None
        # path, type code, value, number: the Python walk's columns (unused when the C walk runs)
        self._lists: tuple[list[str], list[int], list[str | None], list[float | None]] = ([], [], [], [])
        self._patients: list[str | None] = []
        self._types: list[str] = []
        self._ids: list[str] = []
        self._seqs: list[int] = []
        self._counts: list[int] = []

    @property
    def native(self) -> bool:
        """True when the C walk fills these columns."""
        return self._sink is not None

    def __len__(self) -> int:
        return len(self._sink) if self._sink is not None else len(self._lists[0])

    def _emit(self, resource: dict[str, Any]) -> None:
        if self._sink is not None:
            self._sink.emit(resource)
        else:
            paths, codes, values, numbers = self._lists
            _emit_dict(resource, "", paths.append, codes.append, values.append, numbers.append)

    def add_resource(self, resource: dict[str, Any], patient_id: str | None, seq: int = 0) -> None:
        """Append the facts of one resource (no checks)."""
        before = len(self)
        self._emit(resource)
        self._close(resource["resourceType"], resource["id"], patient_id, seq, before)

    def add_checked(
        self, resource: dict[str, Any], patient_id: str | None, seq: int = 0, max_string: int = MAX_STRING,
        *, long_strings: bool = True,
    ) -> None:
        """Append the facts of one resource while checking it; raise ``InvalidResource`` (nothing appended).

        ``long_strings=False`` says the caller knows no string can exceed ``max_string`` (its serialized
        form is shorter), which spares a length test per string.
        """
        before = len(self)
        if long_strings:
            check_resource(resource, max_string)
            self._emit(resource)
        elif self._sink is not None:
            if not self._sink.scan(resource, *_RULES):  # noticed a field the checks must judge
                check_resource(resource, max_string)  # raises InvalidResource naming the field
                self._sink.emit(resource)
        else:
            paths, codes, values, numbers = self._lists
            try:
                _scan_dict(resource, "", paths.append, codes.append, values.append, numbers.append)
            except _Notice:
                self._truncate(before)
                check_resource(resource, max_string)  # raises InvalidResource naming the field
                _emit_dict(resource, "", paths.append, codes.append, values.append, numbers.append)
        self._close(resource["resourceType"], resource["id"], patient_id, seq, before)

    def _truncate(self, size: int) -> None:
        if self._sink is not None:
            self._sink.truncate(size)
        else:
            for column in self._lists:
                del column[size:]

    def _close(self, rtype: str, rid: str, patient_id: str | None, seq: int, before: int) -> None:
        self._patients.append(patient_id)
        self._types.append(rtype)
        self._ids.append(rid)
        self._seqs.append(seq)
        self._counts.append(len(self) - before)

    def _fact_arrays(self, ranges: array | None = None) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array]:
        """path (a dictionary array), type code (int8), value and number as Arrow arrays.

        ``ranges`` (int64 pairs: first row, row count) gives the rows to take, in that order; None: all.
        """
        if self._sink is None:
            paths, codes, values, numbers = self._lists
            arrays = (pa.array(paths, pa.string()).dictionary_encode(), pa.array(codes, pa.int8()),
                      pa.array(values, pa.large_string()), pa.array(numbers, pa.float64()))
            if ranges is None:
                return arrays
            rows = pa.array([r for i in range(0, len(ranges), 2) for r in range(ranges[i], ranges[i] + ranges[i + 1])],
                            pa.int64())
            taken = tuple(a.take(rows) for a in arrays)
            return taken[0], taken[1], taken[2], taken[3]
        (rows_out, path_index, dict_offsets, dict_data, codes_, value_valid, value_offsets, value_data, number_valid,
         numbers_) = self._sink.export(ranges)
        buffer = pa.py_buffer
        entries = len(dict_offsets) // 4 - 1
        dictionary = pa.Array.from_buffers(pa.string(), entries, [None, buffer(dict_offsets), buffer(dict_data)])
        return (
            pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), rows_out, [None, buffer(path_index)]),
                                           dictionary),
            pa.Array.from_buffers(pa.int8(), rows_out, [None, buffer(codes_)]),
            pa.Array.from_buffers(pa.large_string(), rows_out, [buffer(value_valid), buffer(value_offsets),
                                                                buffer(value_data)]),
            pa.Array.from_buffers(pa.float64(), rows_out, [buffer(number_valid), buffer(numbers_)]),
        )

    # Per-fact views (tests and debugging; the store reads :meth:`to_arrow`).
    def _repeat(self, column: list) -> list:
        return [value for value, count in zip(column, self._counts, strict=True) for _ in range(count)]

    @property
    def path(self) -> list[str]:
        """Path of each fact."""
        return self._lists[0] if self._sink is None else self._fact_arrays()[0].cast(pa.string()).to_pylist()

    @property
    def value_code(self) -> list[int]:
        """Type code of each fact (index into :data:`VALUE_TYPES`)."""
        return self._lists[1] if self._sink is None else self._fact_arrays()[1].to_pylist()

    @property
    def value(self) -> list[str | None]:
        """Value of each fact as text (``None`` for JSON null)."""
        return self._lists[2] if self._sink is None else self._fact_arrays()[2].to_pylist()

    @property
    def number(self) -> list[float | None]:
        """Numeric value of each number fact."""
        return self._lists[3] if self._sink is None else self._fact_arrays()[3].to_pylist()

    @property
    def patient_id(self) -> list[str | None]:
        """Patient of each fact."""
        return self._repeat(self._patients)

    @property
    def resource_type(self) -> list[str]:
        """Resource type of each fact."""
        return self._repeat(self._types)

    @property
    def resource_id(self) -> list[str]:
        """Resource id of each fact."""
        return self._repeat(self._ids)

    @property
    def value_type(self) -> list[str]:
        """``string``/``number``/``boolean``/``null`` of each fact."""
        return [VALUE_TYPES[code] for code in self.value_code]

    def to_arrow(self, schema: pa.Schema) -> pa.Table:
        """The facts as a table of ``schema`` (patient_id, resource_type, resource_id, path, value_type, value, number, seq)."""
        keep = [i for i, count in enumerate(self._counts) if count]  # a run may not be empty
        run_ends = pa.array(list(accumulate(self._counts[i] for i in keep)), pa.int64())

        def repeat(column: list, arrow_type: pa.DataType) -> pa.Array:
            values = pa.array([column[i] for i in keep], arrow_type)
            return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(run_ends, values))

        paths, codes, values, numbers = self._fact_arrays()
        return pa.Table.from_arrays(
            [
                repeat(self._patients, pa.string()),
                repeat(self._types, pa.string()),
                repeat(self._ids, pa.string()),
                paths.cast(pa.string()),
                _VALUE_TYPES.take(codes),
                values.cast(pa.string()),
                numbers,
                repeat(self._seqs, pa.int64()),
            ],
            schema=schema,
        )

    def part_table(self) -> pa.Table:
        """The facts as the store writes a part: sorted by patient (stable, patientless last), no ``seq``.

        Patient, type, path and value type are dictionary columns: the Parquet writer takes them as they
        are instead of hashing every row's text (815k facts: 0.15 → 0.12 s), and the sort costs nothing,
        because the rows are taken resource by resource, in patient order, as they are copied out.
        """
        patients, counts = self._patients, self._counts
        order = sorted((i for i, count in enumerate(counts) if count),
                       key=lambda i: (patients[i] is None, patients[i] or ""))
        starts = [0, *accumulate(counts)]
        ranges = array("q", [v for i in order for v in (starts[i], counts[i])])
        paths, codes, values, numbers = self._fact_arrays(ranges)
        run_ends = pa.array(list(accumulate(counts[i] for i in order)), pa.int64())

        def repeat(values: pa.Array) -> pa.Array:
            return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(run_ends, values))

        def dictionary(column: list) -> pa.Array:
            distinct: dict[str, int] = {}
            for i in order:
                if column[i] is not None:  # a null is a null index, not a dictionary entry
                    distinct.setdefault(column[i], len(distinct))
            indices = repeat(pa.array([distinct.get(column[i]) for i in order], pa.int32()))
            return pa.DictionaryArray.from_arrays(indices, pa.array(list(distinct), pa.string()))

        return pa.Table.from_arrays(
            [dictionary(patients), dictionary(self._types), repeat(pa.array([self._ids[i] for i in order], pa.string())),
             paths, pa.DictionaryArray.from_arrays(codes, _VALUE_TYPES), values, numbers],
            names=["patient_id", "resource_type", "resource_id", "path", "value_type", "value", "number"],
        )


# The walks. ``pa``/``ta``/``va``/``na`` are the bound ``append`` of the path, type-code, value and
# number columns; recursion is in document order. Types are tested with ``is`` (JSON from orjson holds
# exactly dict, list, str, int, float, bool, None); anything else takes the generic branch.


def _scan_dict(node: dict, prefix: str, pa: Any, ta: Any, va: Any, na: Any) -> None:
    """Emit the facts under ``node`` and raise :class:`_Notice` at a field the checks must look at."""
    for key, value in node.items():
        path = prefix + key
        kind = type(value)
        if kind is str:
            if key in _CHECK_STR and (key in REFERENCE_KEYS or not is_date_time(value)):
                raise _Notice
            pa(path)
            ta(_S)
            va(value)
            na(None)
        elif kind is dict:
            if key == "reference":
                raise _Notice
            _scan_dict(value, path + ".", pa, ta, va, na)
        elif kind is list:
            if key == "reference":
                raise _Notice
            _scan_list(value, path, pa, ta, va, na)
        elif kind is int:
            if key in _CHECK_SCALAR:
                raise _Notice
            pa(path)
            ta(_N)
            va(str(value))
            na(float(value))
        elif kind is float:
            if key in _CHECK_SCALAR:
                raise _Notice
            pa(path)
            ta(_N)
            va(repr(value))
            na(value)
        elif kind is bool:
            if key in _CHECK_SCALAR:
                raise _Notice
            pa(path)
            ta(_B)
            va("true" if value else "false")
            na(None)
        elif value is None:
            if key in _CHECK_NULL:
                raise _Notice
            pa(path)
            ta(_Z)
            va(None)
            na(None)
        else:
            raise _Notice


def _scan_list(node: list, prefix: str, pa: Any, ta: Any, va: Any, na: Any) -> None:
    for index, value in enumerate(node):
        path = prefix + (_INDEX[index] if index < 512 else f"[{index}]")
        kind = type(value)
        if kind is dict:
            _scan_dict(value, path + ".", pa, ta, va, na)
        elif kind is str:
            pa(path)
            ta(_S)
            va(value)
            na(None)
        elif kind is list:
            _scan_list(value, path, pa, ta, va, na)
        elif kind is int:
            pa(path)
            ta(_N)
            va(str(value))
            na(float(value))
        elif kind is float:
            pa(path)
            ta(_N)
            va(repr(value))
            na(value)
        elif kind is bool:
            pa(path)
            ta(_B)
            va("true" if value else "false")
            na(None)
        elif value is None:
            pa(path)
            ta(_Z)
            va(None)
            na(None)
        else:
            raise _Notice


def _emit_dict(node: dict, prefix: str, pa: Any, ta: Any, va: Any, na: Any) -> None:
    """Emit the facts under ``node`` (any mapping/sequence types, no checks)."""
    for key, value in node.items():
        _emit(value, prefix + key, pa, ta, va, na)


def _emit(value: Any, path: str, pa: Any, ta: Any, va: Any, na: Any) -> None:
    if isinstance(value, str):
        pa(path)
        ta(_S)
        va(value)
        na(None)
    elif isinstance(value, dict):
        _emit_dict(value, path + ".", pa, ta, va, na)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _emit(item, path + (_INDEX[index] if index < 512 else f"[{index}]"), pa, ta, va, na)
    elif isinstance(value, bool):
        pa(path)
        ta(_B)
        va("true" if value else "false")
        na(None)
    elif isinstance(value, int | float):
        pa(path)
        ta(_N)
        va(repr(value) if isinstance(value, float) else str(value))
        na(float(value))
    elif value is None:
        pa(path)
        ta(_Z)
        va(None)
        na(None)


def flatten(resource: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """``(path, value_type, value)`` for every primitive of ``resource``, in document order."""
    paths: list[str] = []
    codes: list[int] = []
    values: list[str | None] = []
    numbers: list[float | None] = []
    _emit_dict(resource, "", paths.append, codes.append, values.append, numbers.append)
    return [(path, VALUE_TYPES[code], value) for path, code, value in zip(paths, codes, values, strict=True)]


def _parse_value(value_type: str, value: str | None) -> Any:
    if value_type == STRING:
        return value
    if value_type == BOOLEAN:
        return value == "true"
    if value_type == NUMBER:
        assert value is not None
        return float(value) if any(c in value for c in ".eEn") else int(value)
    return None


def unflatten(facts: list[tuple[str, str, str | None]]) -> dict[str, Any]:
    """Rebuild a resource from its facts (inverse of :func:`flatten` for non-empty containers)."""
    root: dict[str, Any] = {}
    for path, value_type, value in facts:
        _assign(root, _split(path), _parse_value(value_type, value))
    return root


def _split(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in path.split("."):
        while "[" in part:
            name, rest = part.split("[", 1)
            if name:
                steps.append(name)
            index, part = rest.split("]", 1)
            steps.append(int(index))
        if part:
            steps.append(part)
    return steps


def _assign(node: Any, steps: list[str | int], value: Any) -> None:
    for step, following in zip(steps, steps[1:], strict=False):
        container: Any = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            while len(node) <= step:
                node.append(None)
            if node[step] is None:
                node[step] = container
            node = node[step]
        else:
            node = node.setdefault(step, container)
    last = steps[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = value
    else:
        node[last] = value
