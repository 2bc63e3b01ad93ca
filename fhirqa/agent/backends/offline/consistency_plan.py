"""The offline plan for "does the note agree with the record?" questions.

"Does this note's potassium match the lab table?", "Is the A1c in her January note right?", "Do her notes
and labs disagree anywhere?": one ``check_note_consistency`` call (the consistency checker over the notes
as of now), then an answer that quotes both sides. Which words make such a question is data
(``lexicon/consistency_questions.json``), so are the words stripped to leave the item asked about.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.project import data_dir

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _words() -> dict[str, re.Pattern[str]]:
    data = json.loads((data_dir("lexicon") / "consistency_questions.json").read_text("utf-8"))
    return {k: re.compile(v, re.IGNORECASE) for k, v in data.items() if k != "description"}


def asks_consistency(question: str) -> bool:
    """True when ``question`` asks whether a note agrees with the record (a note word and an agreement word)."""
    words = _words()
    q = question.strip()
    return bool(words["note_words"].search(q)) and bool(
        words["agreement_words"].search(q) or words["accuracy_end"].search(q)
    )


def consistency_args(pq: ParsedQuestion) -> dict[str, Any]:
    """The ``check_note_consistency`` arguments a question implies: item, which note, window."""
    words = _words()
    q = pq.text
    args: dict[str, Any] = {}
    if words["latest_words"].search(q):
        args["which"] = "latest"
    elif words["first_words"].search(q):
        args["which"] = "first"
    if pq.window is not None and "which" not in args:
        if pq.window.start is not None:
            args["start"] = pq.window.start.isoformat()
        if pq.window.end is not None:
            args["end"] = pq.window.end.isoformat()
    rest = words["accuracy_end"].sub(" ", re.sub(r"['’]s\b", " ", q))  # "this note's potassium"
    for key in ("agreement_words", "note_words", "strip"):
        rest = words[key].sub(" ", rest)
    if pq.window is not None and pq.window.label:
        rest = rest.replace(pq.window.label, " ")
    rest = re.sub(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                  r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b|\b\d[\d/\-.]*\b|[^\w\s&+-]", " ", rest,
                  flags=re.IGNORECASE)
    item = " ".join(rest.split()).strip(" '")
    if item:
        args["item"] = item
    return args


def plan_consistency(pq: ParsedQuestion) -> Any:
    """Check the chosen notes against the record and answer Yes/No (or list the disagreements), both sides quoted."""
    args = consistency_args(pq)
    result = yield ("check_note_consistency", args)
    negative = bool(_words()["negative_words"].search(pq.text))  # "do they disagree?": Yes means a mismatch
    agree = result.get("agree")
    what = f" about {args['item']}" if args.get("item") else ""
    if not result.get("ok"):
        yield ("final_answer", {"answer": [], "text": result.get("error", "The check could not run."),
                                "status": "error"})
        return
    if agree is None:
        note = result.get("note") or "nothing to compare"
        yield ("final_answer", {"answer": [], "status": "no-data",
                                "text": f"No verdict: {note}{'' if what in note else what}."})
        return
    comparisons = result.get("comparisons", [])
    if agree:
        first = next((c for c in comparisons if c["status"] == "consistent"), None)
        said = (f" The note's \"{first['as_written']}\" ({first['note_time'][:10]}) matches the record: "
                f"{_record(first)}.") if first else ""
        yield ("final_answer", {"answer": [not negative],
                                "text": f"{'No' if negative else 'Yes'}: what the note says{what} agrees with the "
                                        f"record ({result.get('consistent')} statement(s) checked).{said}"})
        return
    bad = [c for c in comparisons if c["status"] == "inconsistent"]
    lines = "; ".join(f"the {c['note_type'] or 'note'} of {c['note_time'][:10]} says \"{c['as_written']}\" "
                      f"but the record has {_record(c)}" for c in bad[:5])
    more = f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""
    yield ("final_answer", {"answer": [negative],
                            "text": f"{'Yes' if negative else 'No'}: {result.get('inconsistent')} statement(s){what} "
                                    f"disagree with the record: {lines}{more}."})


def _record(comparison: dict[str, Any]) -> str:
    """The record side of a comparison, in words: "Potassium 4.1 mmol/L on 2024-03-01", or what is missing."""
    rows = comparison.get("record") or []
    if not rows:
        return "no such item" if "existence" in comparison.get("fields", []) else "no row to compare"
    row = rows[0]
    value = f"{row.get('value')} {row.get('unit') or ''}".strip()
    when = str(row.get("time") or "")[:10]
    return f"{row.get('item')} {value}" + (f" on {when}" if when else "")
