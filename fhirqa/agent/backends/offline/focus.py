"""The request inside a question that opens with context.

Clinicians write why before what: "Renewing her Lasix today and want to check lytes first - what was her
last K?". Parsed whole, the context's words become the question's (Lasix as the drug, "today" as the
window, "lytes" as the item). :func:`focus` cuts the question into clauses and keeps the request; the
words it relies on are data (``lexicon/question_focus.json``).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from fhirqa.project import data_dir

# A spaced dash ("context - request"), a semicolon, a question or exclamation mark, or a full stop after
# a word of three letters or more (not "Mr." or "Dr.": see ``abbreviations``); never a hyphen inside a
# word ("pip-tazo") or a date (2024-02-25).
_CLAUSE_BREAK = re.compile(r"\s+[-–—]+\s+|\s*;\s+|(?<=[!?])\s+(?=\S)|(?<=\w\w\w\.)\s+(?=\S)")
_WORD = re.compile(r"[#\w'’]+")
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th|s)?")  # a number, a day ("9th"), a part of a date; not "a1c"


@dataclass(frozen=True)
class _Vocabulary:
    min_context_words: int
    min_request_words: int
    openers: frozenset[str]
    phrases: re.Pattern[str]
    context: re.Pattern[str]
    gerund_min_length: int
    symptom_gerunds: frozenset[str]
    filler: frozenset[str]
    bare: frozenset[str]
    anaphors: re.Pattern[str]
    preambles: re.Pattern[str]
    abbreviations: frozenset[str]
    topic: re.Pattern[str] | None


@functools.lru_cache(maxsize=1)
def _vocabulary() -> _Vocabulary:
    data = json.loads((data_dir("lexicon") / "question_focus.json").read_text(encoding="utf-8"))

    def any_of(words: list[str]) -> re.Pattern[str]:
        ordered = sorted(words, key=len, reverse=True)  # the longest preamble is cut, not a prefix of it
        return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in ordered) + r")\b", re.IGNORECASE)

    return _Vocabulary(
        int(data["min_context_words"]),
        int(data["min_request_words"]),
        frozenset(w.lower() for w in data["request_openers"]),
        any_of(data["request_phrases"]),
        any_of(data["context_verbs"] + data["context_phrases"] + data["context_nouns"]),
        int(data["context_gerund_min_length"]),
        frozenset(w.lower() for w in data["symptom_gerunds"]),
        frozenset(w.lower() for w in data["filler"]),
        frozenset(w.lower() for w in data["bare"]),
        any_of(data["anaphors"]),
        any_of(data["preambles"]),
        frozenset(w.lower() for w in data["abbreviations"]),
        re.compile(r"^\s*(?:" + "|".join(re.escape(w) for w in sorted(data["topic_leads"], key=len, reverse=True)) + r")(?!\w)[^,;?]*,\s*",
                   re.IGNORECASE) if data.get("topic_leads") else None,
    )


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def _is_request(clause: str, vocab: _Vocabulary) -> bool:
    words = _words(clause)
    if not words:
        return False
    return clause.rstrip().endswith("?") or words[0] in vocab.openers or bool(vocab.phrases.search(clause))


def _reads_as_context(clause: str, vocab: _Vocabulary) -> bool:
    """A clause about the asker's task ("Renewing her Lasix today", "CHF clinic follow-up"), not the item."""
    if vocab.context.search(clause):
        return True
    words = _words(clause)
    first = words[0] if words else ""
    return first.endswith("ing") and len(first) >= vocab.gerund_min_length and first not in vocab.symptom_gerunds


def _names_nothing(clause: str, vocab: _Vocabulary) -> bool:
    """No word of ``clause`` names an item: only fillers, the question's shape, units, numbers, dates."""
    return all(w in vocab.filler or _NUMBER.fullmatch(w) for w in _words(clause))


def focus(question: str) -> str | None:
    """The request of ``question`` when context comes before it, else ``None`` (parse the question whole).

    >>> focus("Renewing her Lasix today and want to check lytes first - what was her last K?")
    'what was her last K?'
    >>> focus("Sign-out asks for his peak K this admission - what is it?")
    'his peak K this admission'
    >>> focus("K - last value?") is None
    True
    """
    return _changed(_request(question), question)


def _request(question: str) -> str | None:
    vocab = _vocabulary()
    if vocab.topic is not None and (topic := vocab.topic.match(question)):
        # "When it comes to colon cancer screening, has she had a colonoscopy?": the topic opens, the request asks
        request = question[topic.end():].strip()
        if _is_request(request, vocab) and not _names_nothing(request, vocab) and len(_words(request)) >= vocab.min_request_words:
            return request
    clauses: list[str] = []
    start, after_stop = 0, False
    text = question.strip()
    for match in [*_CLAUSE_BREAK.finditer(text), None]:
        piece = text[start:match.start() if match else len(text)].strip()
        words = _words(clauses[-1]) if clauses else []
        if piece and after_stop and words and words[-1] in vocab.abbreviations:
            clauses[-1] += " " + piece  # "… has Mr. Haddad …", "approx. 3 …": a full stop that ends no sentence
        elif piece:
            clauses.append(piece)
        if match:
            start, after_stop = match.end(), match.group().strip() == "" and text[match.start() - 1] == "."
    if len(clauses) < 2:
        return None
    requests = [i for i, clause in enumerate(clauses) if _is_request(clause, vocab)]
    if not requests:
        return None
    at = requests[-1]
    if at == 0:
        return None  # the request comes first: what follows qualifies it ("last K? - she is on spironolactone")
    request, context = clauses[at], clauses[at - 1]
    if context.rstrip().endswith("?"):
        return None  # "which patient is Schmitt, Denis (DOB …)? give the id": two requests, one question
    if not any(_reads_as_context(clause, vocab) for clause in clauses[:at]):
        return None  # "cough ED visit '77 - yes or no?": what comes first is the subject, not context
    if len(_words(context)) < vocab.min_context_words and at == len(clauses) - 1 and len(clauses) == 2:
        return None  # "K - last value?": the short clause is the item, not context
    if _names_nothing(request, vocab):
        # "… his peak K this admission - what is it?": the clause before names what is asked.
        # After the last preamble: "Nephrology wants to know how many …" keeps "how many …".
        cuts = list(vocab.preambles.finditer(context))
        asked = context[cuts[-1].end():].strip(" ,:") if cuts else context
        if not asked:
            return None
        # "… what is it?" adds nothing; "… - date?", "… what's the change from 9/11 to 4/6?" add the question's shape.
        return asked if all(w in vocab.bare for w in _words(request)) else f"{asked} - {request}"
    if vocab.anaphors.search(request):
        return None  # "the 3/28 note lists Gout - is that diagnosis supported …?": it points back at the context
    if len(_words(request)) < vocab.min_request_words:
        return None  # "Reinger, Bill (12/25/1992) - id?": a one-word request asks about the clause before it
    return " ".join(clauses[at:])


def _changed(asked: str | None, question: str) -> str | None:
    return None if asked is None or asked == question.strip() else asked
