"""A note's report: every entity with its verdict, mismatching fields, note span and the rows compared."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fhirqa.consistency.model import Check


@dataclass
class NoteReport:
    """The consistency report of one note."""

    patient_id: str
    note_time: datetime
    note_type: str
    note_ref: str | None = None
    encounter: str | None = None
    text: str = ""
    checks: list[Check] = field(default_factory=list)
    elapsed_ms: float = 0.0

    @property
    def inconsistent(self) -> list[Check]:
        """The entities that disagree with the record."""
        return [c for c in self.checks if c.status == "inconsistent"]

    def counts(self) -> dict[str, int]:
        """Entities by status."""
        counts = Counter(c.status for c in self.checks)
        return {s: counts.get(s, 0) for s in ("consistent", "inconsistent", "unverifiable")}

    def to_dict(self, with_text: bool = False) -> dict[str, Any]:
        """The report as JSON-able data."""
        out: dict[str, Any] = {
            "patient_id": self.patient_id, "note_ref": self.note_ref, "note_type": self.note_type,
            "note_time": self.note_time.isoformat(), "encounter": self.encounter, "counts": self.counts(),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "entities": [{**c.to_json(), "text": self.text[c.entity.span[0]:c.entity.span[1]]} for c in self.checks],
        }
        if with_text:
            out["text"] = self.text
        return out

    def to_json(self, with_text: bool = False) -> str:
        """The report as a JSON string."""
        return json.dumps(self.to_dict(with_text), ensure_ascii=False, indent=1)

    def to_table(self, show: str = "all") -> str:
        """A readable table (``show``: all, inconsistent, checked)."""
        head = (f"{self.note_ref or 'note'} · {self.note_type} · {self.note_time:%Y-%m-%d %H:%M} · "
                + ", ".join(f"{v} {k}" for k, v in self.counts().items()))
        rows = [("status", "span", "as written", "kind", "when", "fields", "record")]
        for c in self.checks:
            if show == "inconsistent" and c.status != "inconsistent":
                continue
            if show == "checked" and c.status == "unverifiable":
                continue
            e = c.entity
            written = self.text[e.span[0]:e.span[1]].replace("\n", " ")
            when = e.time.text or e.time.kind if e.time else ""
            rows.append((c.status, f"{e.span[0]}-{e.span[1]}", written[:34], f"{e.cls} {e.category}", when[:16],
                         ",".join(c.fields) or ("-" if c.status != "unverifiable" else c.reason.removeprefix("not checked: ")),
                         _record_text(c)[:60]))
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
        lines = [head, ""]
        for i, row in enumerate(rows):
            lines.append("  ".join(str(v).ljust(widths[j]) for j, v in enumerate(row)).rstrip())
            if i == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _record_text(check: Check) -> str:
    if not check.rows:
        return check.reason if check.status == "inconsistent" else ""
    row = check.rows[0]
    name = row.get("name") or row.get("medication_name") or ""
    value = row.get("value", row.get("dose"))
    unit = row.get("unit") or row.get("dose_unit") or ""
    moment = next((row[k] for k in ("time", "onset_time", "start_time") if row.get(k) is not None), None)
    shown = f"{value:.4g} {unit}".strip() if isinstance(value, float) else ""
    when = moment.strftime("%Y-%m-%d %H:%M") if isinstance(moment, datetime) else ""
    return " ".join(p for p in (name, shown, when) if p)
