"""The offline plan for "does the note agree with the record?" questions.

"Does this note's potassium match the lab table?", "Is the A1c in her January note right?", "Do her notes
and labs disagree anywhere?": one ``check_note_consistency`` call (the consistency checker over the notes
as of now), then an answer that quotes both sides. Which words make such a question is data
(``lexicon/consistency_questions.json``), so are the words stripped to leave the item asked about.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.notes.kinds import asked_kind
from fhirqa.project import lexicon_file

Call = tuple[str, dict[str, Any]]


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return lexicon_file("consistency_questions.json")


@lru_cache(maxsize=1)
def _words() -> dict[str, re.Pattern[str]]:
    return {k: re.compile(v, re.IGNORECASE) for k, v in _data().items()
            if k != "description" and isinstance(v, str)}


def _one_slip(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


@lru_cache(maxsize=512)
def normalise(question: str) -> str:
    """``question`` with one-slip misspellings of the verdict words corrected ("consistant" → "consistent").

    Only words of at least ``slip_min_length`` letters count, so a short word one letter from a verdict word
    ("march" from "match") stays as written; a word that is itself in the vocabulary is never changed.
    """
    data = _data()
    vocabulary = [w.lower() for w in data.get("agreement_vocabulary", [])]
    known = set(vocabulary)
    shortest = int(data.get("slip_min_length", 7))

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if len(low) < shortest or low in known:
            return word
        return next((v for v in vocabulary if _one_slip(low, v)), word)

    return re.sub(r"[A-Za-z]+", fix, question)


def asks_consistency(question: str) -> bool:
    """True when ``question`` asks whether a note agrees with the record (a note word and an agreement word).

    Verdict words are read through :func:`normalise`, so one slip of the pen ("discrepencies") still counts.
    """
    words = _words()
    q = normalise(question.strip())
    return bool(words["note_words"].search(q)) and bool(
        words["agreement_words"].search(q) or words["accuracy_end"].search(q)
    )


def asks_prior(question: str) -> bool:
    """True when the question is about an earlier value a note quotes ("is that prior creatinine right?")."""
    return bool(_words()["prior_words"].search(question))


def consistency_args(pq: ParsedQuestion) -> dict[str, Any]:
    """The ``check_note_consistency`` arguments a question implies: item, kind, which note, window, prior values.

    A speaker's label before a colon ("CDI:") and an aside in parentheses are not the item; in a question
    about a prior value the words that say so ("quotes a prior creatinine from…") are not either.
    """
    words = _words()
    q = normalise(pq.text)
    args: dict[str, Any] = {}
    if asks_prior(q):
        args["prior"] = True
    kinds = [k for k, pattern in _data().get("category_words", {}).items() if re.search(pattern, q, re.IGNORECASE)]
    if len(kinds) == 1:  # "are the meds in her note what was ordered?": every medication statement
        args["category"] = kinds[0]
    if words["latest_words"].search(q):
        args["which"] = "latest"
    elif words["first_words"].search(q):
        args["which"] = "first"
    if pq.window is not None and "which" not in args:
        if pq.window.start is not None:
            args["start"] = pq.window.start.isoformat()
        if pq.window.end is not None:
            args["end"] = pq.window.end.isoformat()
    rest = words["lead_in"].sub(" ", q)  # "CDI: …", "pharm review: …"
    rest = re.sub(r"\([^()]*\)", " ", rest)  # "(wrong dose or never ordered)", "(8/6/2025)"
    rest = words["accuracy_end"].sub(" ", re.sub(r"['’]s\b", " ", rest))  # "this note's potassium"
    for pattern in _data().get("category_words", {}).values():  # first: "A/P" before the article "a" goes
        rest = re.sub(pattern, " ", rest, flags=re.IGNORECASE)
    for key in ("agreement_words", "note_words", "strip") + (("prior_strip",) if args.get("prior") else ()):
        rest = words[key].sub(" ", rest)
    if pq.window is not None and pq.window.label:
        rest = rest.replace(pq.window.label, " ")
    rest = re.sub(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                  r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b|\b\d[\d/\-.]*\b|[^\w\s&+-]", " ", rest,
                  flags=re.IGNORECASE)
    item = " ".join(w for w in rest.split() if re.search(r"\w", w)).strip(" '")  # not a lone "+" or "-"
    if item:
        args["item"] = item
    return args


def plan_consistency(pq: ParsedQuestion) -> Any:
    """Check the chosen notes against the record and answer Yes/No (or list the disagreements), both sides quoted."""
    args = consistency_args(pq)
    kind = asked_kind(pq.text)
    if kind is not None and args.get("which"):  # "the last progress note's K": the last note of that kind
        from fhirqa.agent.backends.offline.note_kind_plan import chosen_note

        last = yield from chosen_note(pq, kind)
        if last.get("no_kind"):  # no note of that kind to check
            yield ("final_answer", {"answer": [], "status": "no-data", "text": str(last.get("text") or "")})
            return
        if last.get("found") and last.get("ref"):
            args["note"] = last["ref"]
            del args["which"]
    result = yield ("check_note_consistency", args)
    negative = bool(_words()["negative_words"].search(normalise(pq.text)))  # "do they disagree?": Yes = mismatch
    agree = result.get("agree")
    item = result.get("item") if result.get("ok") else args.get("item")  # the patient's names are not an item
    what = f" about {'the prior ' if args.get('prior') else ''}{item or 'value'}" if item or args.get("prior") else ""
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
    value = f" {row.get('value')} {row.get('unit') or ''}".rstrip() if row.get("value") is not None else ""
    when = str(row.get("time") or "")[:10]
    return f"{row.get('item')}{value}" + (f" on {when}" if when else "")  # a diagnosis has no value: its onset
