"""Code tables kept as data (``views/data/<table>.csv``) and rendered into the view SQL as ``VALUES`` CTEs.

A view that needs a code table (timing abbreviations, the encounter-class hierarchy) holds a block

    -- BEGIN code table <table> (generated from views/data/<table>.csv: python -m fhirqa.store.codetables)
    <table> (col, …) AS (VALUES (…), …),
    -- END code table <table>

The CSV is the single source; the block is its rendering, so the view stays one portable ``SELECT`` (no file
access at query time) and the view's digest changes whenever the table does (the next ingest rebuilds it).
``python -m fhirqa.store.codetables`` rewrites the blocks; ``--check`` exits 1 when one is stale (a test runs it).
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

from fhirqa.project import data_dir

_BLOCK = re.compile(
    r"(?P<indent>[ \t]*)-- BEGIN code table (?P<name>\w+)[^\n]*\n.*?-- END code table (?P=name)[^\n]*",
    re.DOTALL,
)
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


def _literal(value: str, numeric: bool) -> str:
    if value == "":
        return "NULL"
    if numeric:
        return value
    return "'" + value.replace("'", "''") + "'"


def render(csv_path: Path, indent: str = "") -> str:
    """The ``VALUES`` CTE block of one CSV code table (a column is numeric when every non-empty cell is)."""
    with csv_path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    numeric = [all(_NUMBER.match(r[i]) for r in body if r[i] != "") for i in range(len(header))]
    name = csv_path.stem
    lines = [
        f"{indent}-- BEGIN code table {name} (generated from views/data/{csv_path.name}: "
        "python -m fhirqa.store.codetables)",
        f"{indent}{name} ({', '.join(header)}) AS (",
        f"{indent}    VALUES",
    ]
    for i, r in enumerate(body):
        cells = ", ".join(_literal(v, numeric[j]) for j, v in enumerate(r))
        lines.append(f"{indent}        ({cells}){',' if i < len(body) - 1 else ''}")
    lines += [f"{indent}),", f"{indent}-- END code table {name}"]
    return "\n".join(lines)


def refresh(sql: str, tables_dir: Path) -> str:
    """``sql`` with every code-table block re-rendered from its CSV."""

    def sub(m: re.Match[str]) -> str:
        return render(tables_dir / f"{m.group('name')}.csv", m.group("indent"))

    return _BLOCK.sub(sub, sql)


def stale_views(views_dir: Path | None = None, write: bool = False) -> list[Path]:
    """View files whose code-table blocks differ from their CSVs (rewritten when ``write``)."""
    views_dir = views_dir or data_dir("views")
    out = []
    for path in sorted(views_dir.glob("*.sql")):
        sql = path.read_text("utf-8")
        new = refresh(sql, views_dir / "data")
        if new != sql:
            out.append(path)
            if write:
                path.write_text(new, "utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = stale_views(write=not check)
    for path in stale:
        print(f"{path.name}: {'stale' if check else 'rewritten'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
