"""Held, missed and refused doses: "was vanc ever held?", "any missed heparin doses this admission?",
"did she refuse her lovenox?", "any held meds?".

Such a question is about a drug's administrations, never about a result named after the drug (the
vancomycin trough): the drug is looked up among medications only. A dose counts as not given when its
MedicationAdministration status is one of ``doses_not_given.statuses`` of ``lexicon/drugs.json``
(not-done, on-hold, stopped). A drug with orders but no charted administrations cannot say whether a dose
was held: the answer says so instead of a No. Each dose not given is shown with the reason its administration
charts (``status_reason`` of the medication view: MedicationAdministration.statusReason), when it charts one.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("drugs.json").get("doses_not_given") or {}


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def not_given_question(pq: ParsedQuestion) -> str | None:
    """The drug a "held / missed / refused doses" question names ("" for any drug), or None for other questions."""
    words = _words()
    if not words.get("words") or pq.intent not in ("exists", "value", "count", "time_of", "list_items"):
        return None
    text = pq.text.lower().replace("’", "'")
    if not re.search(rf"(?<![\w-])(?:{_alt(words['words'])})(?![\w-])", text):
        return None
    drug = re.sub(rf"(?<![\w-])(?:{_alt(words['words'])})(?![\w-])", " ", pq.entity.lower())
    asks = [*words.get("filler", []), *words.get("reason_asks", []), *words.get("which_asks", [])]
    drug = re.sub(rf"(?<![\w-])(?:{_alt(asks)})(?![\w-])", " ", drug)
    return re.sub(r"\s+", " ", drug).strip()


def plan_not_given(pq: ParsedQuestion, drug: str) -> Generator[Call, dict[str, Any], bool]:
    """Answer whether doses of ``drug`` (any drug when empty) were not given; False when ``drug`` is neither a
    medication nor an immunization of the record (the question then goes to the ordinary plans: "did she refuse
    the colonoscopy?"). A vaccine refused or not given is an immunization marked not-done."""
    from fhirqa.agent.backends.offline.plans import EVERY_RECORD, _ambiguous, final, find_records

    kind, pq.med_kind = pq.med_kind, EVERY_RECORD  # the not-done administrations too (find_records drops them)
    if not drug:
        found = yield ("get_resources", {"view": "medication"})
        if not found.get("count"):
            yield final([], "The record has no medications.", status="no-data")
            return True
        yield from _administrations(pq, found, "any medication")
        return True
    located = yield from find_records(pq, views=["medication", "immunization"], entity=drug)
    if located is None:
        pq.med_kind = kind
        return False
    view, found = located
    if found.get("ambiguous"):
        yield _ambiguous(found, drug)
        return True
    what = (found.get("items") or [drug])[0]
    if view == "immunization":
        yield from _not_given(pq, found["handle"], found.get("count") or 0, what, "recorded immunizations")
    else:
        yield from _administrations(pq, found, what)
    return True


def _administrations(pq: ParsedQuestion, found: dict[str, Any], what: str) -> Generator[Call, dict[str, Any], None]:
    """The not-given doses among a drug's charted administrations (no-data when none are charted)."""
    from fhirqa.agent.backends.offline.plans import final

    admin = yield ("filter_by_value", {"records": found["handle"], "op": "==", "value": "administration", "field": "kind"})
    if not admin.get("count"):
        yield final([], f"The record charts no administrations of {what} (only orders, fills or statements), so "
                        "whether a dose was held or missed cannot be told from it.", status="no-data")
        return
    yield from _not_given(pq, admin["handle"], admin["count"], what, "charted administrations", with_reasons=True)


def _not_given(pq: ParsedQuestion, handle: str, total: int, what: str, records: str,
               with_reasons: bool = False) -> Generator[Call, dict[str, Any], None]:
    """Within the question's window, the records of ``handle`` whose status says not given, listed with their dates
    (and, ``with_reasons``, the reason each one charts: medication administrations)."""
    from fhirqa.agent.backends.offline.plans import _empty_window, _row, final, windowed

    scoped = yield from windowed(pq, handle)
    if scoped.get("count") == 0:
        yield _empty_window(pq, f"{records} of {what}", scoped)
        return
    handle, total = scoped.get("handle") or handle, scoped.get("count") or total
    label = f" {pq.window.label}" if pq.window is not None else ""
    missed: list[str] = []
    for status in _words().get("statuses", []):
        undone = yield ("filter_by_value", {"records": handle, "op": "==", "value": status, "field": "status"})
        if undone.get("count"):
            missed.append(undone["handle"])
    if not missed and pq.intent == "count":
        yield final([0], f"None of the {total} {records} of {what}{label} is marked not given.")
        return
    if not missed:
        last = _row((yield ("get_by_index", {"records": handle, "index": -1})))
        yield final([False], f"No: none of the {total} {records} of {what}{label} is marked not given "
                             f"(held, refused or stopped); the latest was on {str(last.get('time') or '?')[:10]}.")
        return
    combined = missed[0]
    if len(missed) > 1:
        combined = (yield ("combine_evidence", {"handles": missed}))["handle"]
    listed = yield ("extract_field_value", {"records": combined, "field": "status"})
    # why each dose was not given, as charted (MedicationAdministration.statusReason: held for low BP, NPO, refused)
    reasons: dict[str, Any] = {}
    if with_reasons:  # the immunization view carries no reason
        reasons = yield ("extract_field_value", {"records": combined, "field": "status_reason"})
    why = {v.get("ref"): v.get("value") for v in reasons.get("values", []) if isinstance(v, dict)}
    shown = [f"{v.get('name')} on {str(v.get('time') or '?')[:10]} ({v.get('value')}"
             f"{': ' + str(why[v.get('ref')]) if why.get(v.get('ref')) else ''})"
             for v in listed.get("values", []) if isinstance(v, dict)]
    left = int(listed.get("count") or 0) - len(shown)
    more = f" and {left} more" if left > 0 else ""
    # the statuses alone do not tell held from refused or missed: the reason is given where the record charts one
    unexplained = "" if reasons.get("count") else " No reason (held, refused, missed) is recorded for them."
    said = f"{listed.get('count')} of {total} {records}{label} were not given: {'; '.join(shown)}{more}."
    asked = _asked(pq)
    if asked == "reason" and with_reasons:  # "why was the vanco held?": the reasons are the answer
        if not reasons.get("count"):
            yield final([], f"No reason is recorded: {said}", status="no-data")
            return
        yield final([], f"{said}", list_from=combined, list_field="status_reason")
        return
    if asked == "which":  # "which meds were held?": the drugs are the answer
        yield final([], said, list_from=combined, list_field="medication_name" if with_reasons else None)
        return
    yield final([listed.get("count")] if pq.intent == "count" else [True],
                f"{'' if pq.intent == 'count' else 'Yes: '}{said}{unexplained}")


def _asked(pq: ParsedQuestion) -> str | None:
    """"reason" when the question asks why doses were not given, "which" when it asks for the drugs, else None."""
    text = pq.text.lower().replace("’", "'")
    for kind, key in (("reason", "reason_asks"), ("which", "which_asks")):
        words = _words().get(key) or []
        if words and re.search(rf"(?<![\w-])(?:{_alt(words)})(?![\w-])", text):
            return kind
    return None
