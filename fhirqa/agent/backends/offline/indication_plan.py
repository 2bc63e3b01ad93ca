"""Why a drug is given: "why is she on Eliquis?", "what is the metformin for?", "indication for lisinopril?".

The answer is what the drug's orders record as their reason (the medication view's ``reason_name``, from
MedicationRequest.reasonCode or the Condition its reasonReference points to), each reason cited with its order.
An order without a recorded reason is said to have none: the reason is never guessed from the problem list.
Words in ``lexicon/medication_reasons.json``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _spec() -> tuple[re.Pattern[str], frozenset[str]]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("medication_reasons.json")
    return re.compile("|".join(f"(?:{p})" for p in spec["asks"])), frozenset(spec["filler"])


def indication_asked(pq: ParsedQuestion) -> str | None:
    """The drug (or class) whose reason is asked, as the question words it; None for any other question."""
    from fhirqa.agent.lexicon import Lexicon

    asks, filler = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split())
    if not asks.search(text):
        return None
    return Lexicon.load().drug_phrase([w for w in re.findall(r"[a-z0-9][a-z0-9\-/]*", text) if w not in filler])


def plan_indication(pq: ParsedQuestion, drug: str) -> Generator[Call, dict[str, Any], None]:
    """The reasons recorded on ``drug``'s orders (statements too), latest order first."""
    from fhirqa.agent.backends.offline.plans import final

    found = yield ("get_resources", {"view": "medication", "item": drug})
    if found.get("ambiguous"):
        options = ", ".join(map(str, found.get("candidates") or []))
        yield final([], f"'{drug}' matches several drugs: {options}.", status="ambiguous")
        return
    if not found.get("count"):
        yield final([], f"The record has no {drug}.", status="no-data")
        return
    orders = found["handle"]
    for kind in ("request", "statement"):
        narrowed = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": kind, "field": "kind"})
        if narrowed.get("count"):
            orders = narrowed["handle"]
            break
    reasons = yield ("extract_field_value", {"records": orders, "field": "reason_name", "distinct": True})
    values = [v for v in reasons.get("values", []) if isinstance(v, dict) and v.get("value")]
    if not values:
        yield final([], f"The {drug} orders on file record no reason (indication); the record does not say why it "
                        f"was prescribed.", status="no-data")
        return
    names = [str(v["value"]) for v in values]
    shown = "; ".join(f"{v['value']} (order of {str(v.get('time') or '')[:10]}, {v.get('name')})" for v in values)
    yield final(names, f"{drug.capitalize()} is ordered for: {shown}.")
