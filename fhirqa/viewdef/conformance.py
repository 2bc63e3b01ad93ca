"""Run the official SQL-on-FHIR v2 conformance suite against this runner.

Usage::

    python -m fhirqa.viewdef.conformance [TESTS_DIR] [--json REPORT.json]

Prints a per-file table and totals, and exits non-zero if any ``shareable`` case fails.
Rows are compared as in the suite's reference runner: order-insensitive, every column
compared exactly (collection values in order), with ``expectColumns`` checked in order.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .errors import ViewDefinitionError
from .runner import compile_view

DEFAULT_TESTS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sql-on-fhir-v2" / "tests"


@dataclass(frozen=True)
class CaseResult:
    """Outcome of one test case of one suite file."""

    file: str
    title: str
    tags: tuple[str, ...]
    passed: bool
    reason: str = ""

    @property
    def shareable(self) -> bool:
        return "shareable" in self.tags

    @property
    def experimental(self) -> bool:
        return "experimental" in self.tags


@dataclass
class FileResult:
    """All case outcomes of one suite file."""

    name: str
    title: str
    cases: list[CaseResult] = field(default_factory=list)


@dataclass
class SuiteReport:
    """Per-file, per-case results with totals; see :meth:`format_text`."""

    tests_dir: Path
    files: list[FileResult] = field(default_factory=list)

    @property
    def cases(self) -> list[CaseResult]:
        return [c for f in self.files for c in f.cases]

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cases)

    @property
    def shareable_total(self) -> int:
        return sum(c.shareable for c in self.cases)

    @property
    def shareable_passed(self) -> int:
        return sum(c.shareable and c.passed for c in self.cases)

    @property
    def experimental_total(self) -> int:
        return sum(c.experimental for c in self.cases)

    @property
    def experimental_passed(self) -> int:
        return sum(c.experimental and c.passed for c in self.cases)

    @property
    def failures(self) -> list[CaseResult]:
        return [c for c in self.cases if not c.passed]

    @property
    def ok(self) -> bool:
        """True when every shareable case passed (the conformance bar)."""
        return self.shareable_passed == self.shareable_total

    def to_test_report(self) -> dict[str, Any]:
        """The upstream ``test_report.json`` structure: file -> {"tests": [{name, result}]}."""
        out: dict[str, Any] = {}
        for f in self.files:
            tests = []
            for c in f.cases:
                result: dict[str, Any] = {"passed": c.passed}
                if c.reason:
                    result["reason"] = c.reason
                tests.append({"name": c.title, "result": result})
            out[f.name] = {"tests": tests}
        return out

    def format_text(self) -> str:
        """A per-file table, the failing cases with reasons, and the totals."""
        lines = [f"{'file':<24} {'passed':>8} {'shareable':>10} {'experimental':>13}"]
        for f in self.files:
            sh = [c for c in f.cases if c.shareable]
            ex = [c for c in f.cases if c.experimental]
            lines.append(f"{f.name:<24} {_frac(f.cases):>8} {_frac(sh):>10} {_frac(ex):>13}")
        lines.append(
            f"{'TOTAL':<24} {_frac(self.cases):>8} {_frac([c for c in self.cases if c.shareable]):>10}"
            f" {_frac([c for c in self.cases if c.experimental]):>13}"
        )
        if self.failures:
            lines.append("")
            lines.append("failures:")
            for c in self.failures:
                lines.append(f"  {c.file} :: {c.title} [{', '.join(c.tags)}]: {c.reason}")
        lines.append("")
        lines.append(
            f"shareable {self.shareable_passed}/{self.shareable_total}, "
            f"experimental {self.experimental_passed}/{self.experimental_total}, "
            f"all {self.passed}/{self.total}"
        )
        return "\n".join(lines)


def _frac(cases: list[CaseResult]) -> str:
    return f"{sum(c.passed for c in cases)}/{len(cases)}"


def _canon(value: Any) -> Any:
    """A hashable, type-strict form of a cell so True != 1 and 5 == 5.0."""
    if value is None or type(value) is bool or type(value) is str:
        return (type(value).__name__, value)
    if type(value) in (int, float):
        return ("num", round(float(value), 9))
    if type(value) is list:
        return ("list", tuple(_canon(v) for v in value))
    if type(value) is dict:
        return ("obj", tuple(sorted((k, _canon(v)) for k, v in value.items())))
    return ("other", repr(value))


def _row_key(row: dict) -> tuple:
    return tuple(sorted((k, _canon(v)) for k, v in row.items()))


def compare_rows(actual: list[dict], expected: list[dict]) -> str:
    """Order-insensitive comparison; returns "" when equal, else a short explanation."""
    if len(actual) != len(expected):
        return f"expected {len(expected)} rows, got {len(actual)}: {_show(actual)}"
    missing = Counter(map(_row_key, expected)) - Counter(map(_row_key, actual))
    if missing:
        row = next(iter(missing))
        return f"expected row {dict((k, v[1]) for k, v in row)} not produced; got {_show(actual)}"
    return ""


def _show(rows: list[dict], limit: int = 3) -> str:
    text = ", ".join(orjson.dumps(r).decode() for r in rows[:limit])
    return f"[{text}{', ...' if len(rows) > limit else ''}]"


def run_case(test: dict, resources: list[dict], file: str = "") -> CaseResult:
    """Run one test object of a suite file and judge it."""
    title = str(test.get("title", "?"))
    tags = tuple(test.get("tags", ()))

    def result(passed: bool, reason: str = "") -> CaseResult:
        return CaseResult(file, title, tags, passed, reason)

    try:
        view = compile_view(test["view"])
        rows = [dict(zip(view.column_names, r, strict=True)) for r in view.iter_rows(resources)]
    except ViewDefinitionError as exc:
        if test.get("expectError"):
            return result(True)
        return result(False, f"unexpected ViewDefinitionError: {exc}")
    except Exception as exc:  # a crash is a failure we want reported, not a traceback
        return result(False, f"crashed with {type(exc).__name__}: {exc}")
    if test.get("expectError"):
        return result(False, f"expected an error, got {len(rows)} rows: {_show(rows)}")
    if "expectColumns" in test and view.column_names != list(test["expectColumns"]):
        return result(False, f"expected columns {test['expectColumns']}, got {view.column_names}")
    if "expectCount" in test and len(rows) != test["expectCount"]:
        return result(False, f"expected {test['expectCount']} rows, got {len(rows)}")
    if "expect" in test:
        problem = compare_rows(rows, test["expect"])
        if problem:
            return result(False, problem)
    return result(True)


def run_file(path: Path) -> FileResult:
    """Run every case of one suite file."""
    suite = orjson.loads(path.read_bytes())
    resources = suite.get("resources", [])
    fr = FileResult(path.name, str(suite.get("title", path.stem)))
    for test in suite.get("tests", []):
        fr.cases.append(run_case(test, resources, path.name))
    return fr


def run_suite(tests_dir: Path | str = DEFAULT_TESTS_DIR) -> SuiteReport:
    """Run every ``*.json`` file in ``tests_dir`` (the suite's ``tests`` folder)."""
    tests_dir = Path(tests_dir)
    if not tests_dir.is_dir():
        raise FileNotFoundError(f"conformance tests directory not found: {tests_dir}")
    report = SuiteReport(tests_dir)
    for path in sorted(tests_dir.glob("*.json")):
        report.files.append(run_file(path))
    return report


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m fhirqa.viewdef.conformance", description=__doc__.split("\n")[0])
    parser.add_argument("tests_dir", nargs="?", default=str(DEFAULT_TESTS_DIR), help="the suite's tests/ folder")
    parser.add_argument("--json", metavar="FILE", help="also write the upstream test_report.json format")
    args = parser.parse_args(argv)
    try:
        report = run_suite(Path(args.tests_dir))
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(report.format_text())
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(report.to_test_report(), option=orjson.OPT_INDENT_2))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
