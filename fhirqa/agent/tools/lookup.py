"""``find_patient``: the one tool that looks across patients, so it runs only without a patient context.

A question asked for one patient (a patient-scoped token) can never search the others: the engine
gives this tool a directory only when no patient is set, which the server allows for system scopes.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.agent.tools.base import ToolContext, ToolError


def _fold(text: str) -> str:
    """Lower case without accents, so "Flórez" finds "Florez"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def find_patient(ctx: ToolContext, name: str | None = None, birth_date: str | None = None) -> dict[str, Any]:
    """Patients whose name contains every word of ``name`` and (if given) born on ``birth_date``."""
    if ctx.directory is None:
        raise ToolError("find_patient is not available for a question about one patient; "
                        "ask without a patient (system access) to look patients up")
    if not name and not birth_date:
        raise ToolError("give a name, a birth_date (YYYY-MM-DD), or both")
    words = _fold(name or "").split()
    matches = []
    for person in ctx.directory():
        full = _fold(" ".join(str(person.get(k) or "") for k in ("name", "given", "family", "name_raw")))
        if words and not all(w in full for w in words):
            continue
        if birth_date and str(person.get("birth_date") or "")[:10] != birth_date[:10]:
            continue
        matches.append(person)
    shown = [{"patient_id": p["patient_id"], "name": p.get("name"), "birth_date": str(p.get("birth_date") or "")[:10],
              "gender": p.get("gender")} for p in matches[:20]]
    for p in matches[:20]:
        ctx.cite(Evidence(ref=f"Patient/{p['patient_id']}", field="patient.patient_id", value=p["patient_id"],
                          label=p.get("name")))
    return {"ok": True, "count": len(matches), "patients": shown, "omitted": max(0, len(matches) - 20)}
