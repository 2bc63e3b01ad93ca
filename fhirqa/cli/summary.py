"""A readable one-screen summary of a patient's record, from the canonical views."""

from __future__ import annotations

import duckdb

from fhirqa.cli.output import render
from fhirqa.errors import FhirqaError
from fhirqa.store import Store

# (title, view, columns, filter, order): each a section of the summary. Columns absent from a
# view (an older store) are skipped rather than failing the whole summary.
_SECTIONS = [
    ("Active conditions", "condition", ["name", "onset_time", "clinical_status", "ref"],
     "coalesce(clinical_status, 'active') = 'active' AND abatement_time IS NULL", "onset_time DESC"),
    ("Recent medications", "medication", ["medication_name", "kind", "time", "dose", "dose_unit", "route", "ref"],
     "TRUE", "time DESC"),
    ("Latest observations", "observation", ["name", "value", "value_string", "unit", "time", "ref"],
     "TRUE", "time DESC"),
    ("Encounters", "encounter", ["class_name", "type_name", "start_time", "end_time", "ref"],
     "TRUE", "start_time DESC"),
    ("Notes", "note", ["note_type", "time", "ref"], "TRUE", "time DESC"),
]


def patient_summary(store: Store, patient_id: str, limit: int = 8) -> str:
    """Demographics, counts per view, and the most recent rows of each clinical view."""
    con = store.connect()
    try:
        views = set(store.view_names())
        if "patient" not in views:
            raise FhirqaError("the store has no patient view")
        cur = con.execute("SELECT * FROM patient WHERE patient_id = ?", [patient_id])
        row = cur.fetchone()
        if row is None:
            raise FhirqaError(f"no patient {patient_id!r} in {store.db} (try `fhirqa sql \"SELECT patient_id, name FROM patient\"`)")
        person = dict(zip([d[0] for d in cur.description], row, strict=True))
        lines = [
            f"{person.get('name') or '(no name)'}  ·  {person.get('gender') or '?'}  ·  born {person.get('birth_date') or '?'}"
            f"  ·  Patient/{patient_id}"
        ]
        counts = []
        for view in sorted(views - {"patient"}):
            n = con.execute(f"SELECT count(*) FROM {view} WHERE patient_id = ?", [patient_id]).fetchall()[0][0]
            counts.append(f"{view} {n}")
        lines.append("rows: " + ", ".join(counts))
        for title, view, columns, where, order in _SECTIONS:
            if view not in views:
                continue
            present = {d[0] for d in con.execute(f"SELECT * FROM {view} LIMIT 0").description}
            cols = [c for c in columns if c in present]
            order_col = order.split()[0]
            if not cols or order_col not in present:
                continue
            try:
                rows = con.execute(
                    f"SELECT {', '.join(cols)} FROM {view} WHERE patient_id = ? AND ({where}) "
                    f"ORDER BY {order} NULLS LAST LIMIT {int(limit)}",
                    [patient_id],
                ).fetchall()
            except duckdb.Error:  # a section whose filter columns are missing is left out
                continue
            if rows:
                lines.append("")
                lines.append(render(cols, rows, title=title))
        return "\n".join(lines)
    finally:
        con.close()
