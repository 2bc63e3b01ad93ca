"""Specialists: one per view, each keeping only the fields a question needs.

A specialist starts from the view's default fields (``views/catalog.json``) and adds a column only
when the question mentions it ("route", "reference range", "status", "LOINC code"), so metadata and
raw codes stay hidden unless asked for. What it keeps is what the composer's prompt describes, which
is what keeps LLM prompts small.
"""

from __future__ import annotations

import re

from fhirqa.agent.catalog import UnknownView, view_info

# Words in a question that ask for a column the default fields leave out.
_ASKS_FOR = {
    "code": r"\bcodes?\b|\bloinc\b|\brxnorm\b|\bsnomed\b|\bicd\b",
    "code_system": r"\bcode system\b|\bsystem\b",
    "ref_low": r"\breference range\b|\bnormal range\b|\bref(?:erence)? (?:low|interval)\b|\bnormal\b",
    "ref_high": r"\breference range\b|\bnormal range\b|\bref(?:erence)? (?:high|interval)\b|\bnormal\b",
    "status": r"\bstatus\b|\bactive\b|\bstopped\b|\bcompleted\b|\bcancel\w*",
    "route": r"\broute\b|\boral\w*|\biv\b|\bintravenous\w*|\bsubcut\w*|\bpo\b|\bim\b",
    "encounter_ref": r"\bencounter\b|\bvisit\b|\badmission\b|\bduring (?:the|her|his) stay\b",
    "reason_name": r"\bwhy\b|\breason\b|\bfor what\b|\bindicat\w*",
    "status_reason": r"\bheld\b|\bhold\b|\brefus\w*|\bmissed\b|\bnot given\b|\bwhy\b|\breason\b",
    "quantity": r"\bquantity\b|\bhow many (?:pills|tablets|capsules)\b|\bdispensed\b|\bsupply\b",
    "days_supply": r"\bdays? supply\b|\bsupply\b",
    "interpretation": r"\bhigh\b|\blow\b|\babnormal\b|\bflag\w*|\binterpret\w*",
    "abatement_time": r"\bresolved\b|\babate\w*|\bended\b|\bcured\b|\bactive\b|\bcurrent\w*",
    "onset_time": r"\bonset\b|\bstarted\b|\bbegan\b|\bsince when\b|\bwhen\b|\bactive\b",
    "class_code": r"\binpatient\b|\bemergency\b|\ber\b|\bed\b|\bambulatory\b|\boutpatient\b|\bclass\b",
    "discharge_disposition": r"\bdischarg\w*",
    "deceased_time": r"\bdied\b|\bdeath\b|\bdeceased\b|\bold\b|\bage\b",
}


def fields_for(view: str, question: str) -> list[str]:
    """The fields of ``view`` worth showing for ``question`` (defaults plus the ones it asks for)."""
    try:
        info = view_info(view)
    except UnknownView:
        return []
    text = question.lower()
    fields = list(info.default_fields)
    for column, pattern in _ASKS_FOR.items():
        if column in info.columns and column not in fields and re.search(pattern, text):
            fields.append(column)
    return fields


def describe(fields: dict[str, list[str]]) -> str:
    """Prompt text: each routed view, its description and the kept fields with their meanings."""
    blocks = []
    for view, columns in fields.items():
        try:
            info = view_info(view)
        except UnknownView:
            continue
        lines = [f"- {view}: {info.description}"]
        lines += [f"    {c}: {info.columns.get(c, '')}" for c in columns]
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "(no view selected)"
