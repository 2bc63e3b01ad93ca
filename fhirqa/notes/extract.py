"""Offline extraction: a value, a dose or a mentioned finding (with negation) from retrieved note text.

Supported question shapes, each answered from the sentences of the hits (never from outside them):

- **value**: a lab or vital the lexicon knows ("What was her potassium on admission?" → ``K 5.0`` → 5.0);
- **dose**: "What dose of metformin…?", "How much furosemide…?" → ``metformin 500 mg PO BID`` → ``500 mg``;
- **finding**: "Did she report chest pain…?", "Was there fever…?" → a sentence mentioning it, negated when a
  negation trigger governs the mention in its clause ("Denies chest pain, SOB…", "no fever", "afebrile").

Which mention wins: the question's qualifier (on admission → the admission note or a sentence saying
admission, at discharge, last/latest/current → the newest note, first → the oldest), else the best-ranked
hit. Nothing found → ``None``: "not documented in the notes retrieved".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from fhirqa.notes.chunking import sentences
from fhirqa.notes.index import Hit
from fhirqa.notes.retrieve import aliases_in, find_phrase, lexicon, question_window

Kind = Literal["value", "dose", "finding"]
_NUMBER = r"-?\d[\d,]*(?:\.\d+)?"
_DOSE_UNIT = r"(?:mg/ml|mg/kg|mcg/hr|mg|mcg|µg|ug|g|meq|units?|unt|iu|ml|l|%|puffs?|tablets?|tabs?|caps?)"
_TEXT_UNIT = re.compile(r"\s*(%|mg/dl|mmol/l|meq/l|g/dl|kg|lbs?|bpm|mmhg|mm hg|°c|°f|u/l|ng/ml|pg/ml)(?![a-z])", re.I)
_NEGATIONS = ("denies", "denied", "deny", "denying", "no", "not", "without", "negative for", "free of", "absence of",
              "absent", "never had", "no evidence of", "no signs of", "no history of", "resolved", "ruled out", "nor")
_HYPOTHETICAL = re.compile(r"\b(?:return (?:for|if)|call (?:for|if)|watch for|monitor for|precautions|if (?:she|he|"
                           r"the patient|pt) (?:develops|has)|risk of|screen(?:ed|ing)? for)\b", re.I)
_WEAK_NEGATIONS = {"no", "not", "without", "nor", "absent", "resolved"}
_WEAK_REACH = 5  # words a weak trigger reaches forward
_SCOPE_END = re.compile(r"[;.]|\b(?:but|however|although|except|though|which|who)\b", re.I)
_POST_NEGATION = re.compile(r"^\s*(?::\s*)?(?:none|negative|absent|denied|resolved|was ruled out|ruled out)\b", re.I)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "fever": ("fever", "fevers", "febrile", "pyrexia", "temperature elevation"),
    "shortness of breath": ("shortness of breath", "SOB", "dyspnea", "short of breath", "dyspneic"),
    "chest pain": ("chest pain", "CP", "chest discomfort", "chest pressure"),
    "nausea": ("nausea", "nauseated", "nauseous"),
    "vomiting": ("vomiting", "emesis", "vomited"),
    "abdominal pain": ("abdominal pain", "abd pain", "belly pain", "stomach pain"),
    "headache": ("headache", "headaches", "HA"),
    "dizziness": ("dizziness", "dizzy", "lightheaded", "lightheadedness", "vertigo"),
    "confusion": ("confusion", "confused", "altered mental status", "AMS", "disoriented"),
    "chills": ("chills", "rigors"),
    "cough": ("cough", "coughing"),
    "fatigue": ("fatigue", "fatigued", "tired", "malaise"),
    "dysuria": ("dysuria", "painful urination", "burning with urination"),
    "palpitations": ("palpitations", "palpitation"),
    "swelling": ("swelling", "edema", "oedema"),
    "polyuria": ("polyuria", "frequent urination"),
}
_NEGATED_FORMS = {"fever": ("afebrile",)}
_LEAD_WORDS = set("""did does do was were is are has had have she he they the patient patient's pt her his report presenting
complaining reporting
reported reports complain complained complains of present presented presents with experience experienced any
there mention mentioned mentions note noted notes document documented deny denied evidence signs sign symptoms
symptom a an any at all ever feel felt feeling suffer suffered from show showed describe described""".split())
# A drug or analyte named with a measurement noun is a value ("vancomycin trough", "digoxin level"), not a finding.
MEASUREMENT = re.compile(r"\s(?:trough|peak|random)?\s*(?:trough|peak|level|titer|titre|concentration)s?$", re.I)
_VALUE_QUESTION = re.compile(r"^(?:what|what's|how high|how low|which value)\b", re.I)
_VALUE_WORDS = set("what what's how high low which value level result reading measured her his their".split())
_TAIL = re.compile(r"\s+(?:on|at|in|during|before|after|by|since|according|per|as)\s+(?:the\s+)?(?:admission|arrival|"
                   r"discharge|visit|\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|last|first|most|latest|notes?|"
                   r"record|chart|her|his|ed|er|hospital|clinic|(?:19|20)\d\d|today|yesterday|that|this|\w+\s+notes?)"
                   r".*$", re.I)


@dataclass
class NoteFinding:
    """What the notes say, with the sentence that says it and where it is."""

    kind: Kind
    target: str  # the item asked about, as the question or lexicon names it
    value: Any  # number, "124/85", "500 mg", or True (mentioned) / False (negated)
    unit: str | None
    negated: bool
    sentence: str
    ref: str
    note_id: str
    date: str
    time: datetime | None
    note_type: str | None

    @property
    def answer(self) -> list[Any]:
        """The answer as a JSON list, as :class:`~fhirqa.agent.answer.Answer` holds it."""
        return [self.value]

    @property
    def text(self) -> str:
        """A one-line answer quoting the note."""
        where = f"{self.note_type or 'note'} of {self.date}" if self.date else (self.note_type or "a note")
        if self.kind == "finding":
            said = f"{self.target}: {'documented as absent (negated)' if self.negated else 'documented'}"
        else:
            said = f"{self.target}: {self.value}{' ' + self.unit if self.unit and self.kind == 'value' else ''}"
        return f'{said}, per the {where} ({self.ref}): "{self.sentence}"'


@dataclass
class _Target:
    kind: Kind
    name: str
    names: list[str]
    strict: frozenset[str]  # names matched only in their own case
    unit: str | None = None


def _order(question: str) -> str | None:
    q = question.lower()
    if re.search(r"\b(admission|admitted|arrival|presentation|presented)\b", q):
        return "admission"
    if re.search(r"\b(discharge|discharged)\b", q):
        return "discharge"
    if re.search(r"\b(last|latest|most recent|current|currently|now|recent)\b", q):
        return "latest"
    if re.search(r"\b(first|earliest|initial|initially)\b", q):
        return "earliest"
    return None


def parse_target(question: str) -> _Target | None:
    """What the question asks for: a dose, a value or a finding, and the names it may be written as."""
    strict = lexicon().strict
    q = question.strip()
    mentioned = aliases_in(q)
    if re.search(r"\b(dose|dosage|dosing|how much|strength|how many (?:mg|units))\b", q, re.I):
        drug = next(((t, n) for t, n in mentioned if not _is_lab(t)), None)
        if drug:
            return _Target("dose", drug[0], drug[1], strict)
        m = re.search(r"\b(?:dose|dosage|dosing|much|strength)\s+(?:of\s+)?(?:her\s+|his\s+|the\s+)?([A-Za-z][\w-]+)", q,
                      re.I)
        if m and m[1].lower() not in _LEAD_WORDS:
            return _Target("dose", m[1], [m[1]], strict)
    phrase = _TAIL.sub("", re.sub(r"[?!.]+$", "", q)).strip()
    asks_value = bool(_VALUE_QUESTION.match(phrase))
    words = phrase.split()
    while words and words[0].lower().strip(",") in _LEAD_WORDS | _VALUE_WORDS:
        words.pop(0)
    phrase = " ".join(words).strip(" ,")
    symptom = next((k for k, v in SYNONYMS.items() if any(find_phrase(s, phrase) for s in v)), None)
    lab = next(((t, n) for t, n in mentioned if _is_lab(t)), None)
    if lab and not (symptom and not asks_value):
        return _Target("value", lab[0], _summary_names(q, lab[1]), strict, lexicon().units.get(lab[0]))
    if not phrase:
        return None
    measured = MEASUREMENT.search(phrase)
    if measured and not symptom:  # "vancomycin trough", "digoxin level": a number the note writes after the name
        head = phrase[:measured.start()].strip()
        heads = next((n for t, n in mentioned if any(find_phrase(a, head) for a in n)), [head])
        names = list(dict.fromkeys([phrase, *(f"{h} {measured[0].strip()}" for h in heads)]))
        return _Target("value", phrase, names, frozenset())
    if asks_value and not symptom:
        return _Target("value", phrase, [phrase], frozenset())
    names = list(SYNONYMS[symptom]) if symptom else [phrase]
    return _Target("finding", symptom or phrase, names, frozenset(n for n in names if n.isupper()))


def aggregate_terms() -> list[str]:
    """Names that are a summary of an item, not its reading ("Tmax" = the highest temperature; lexicon data)."""
    return _aggregate_terms()


@lru_cache(maxsize=1)
def _aggregate_terms() -> list[str]:
    try:
        from fhirqa.project import data_dir

        data = json.loads((data_dir("lexicon") / "abbreviations.json").read_text("utf-8"))
    except Exception:  # noqa: BLE001 - without the lexicon no name is a summary
        return []
    return [e["phrase"] for e in data.get("aggregate_terms", {}).get("entries", []) if e.get("phrase")]


def written_summary(question: str) -> str | None:
    """The summary name the question writes ("Tmax in the progress note?" → "Tmax"), else None."""
    return next((t for t in aggregate_terms() if find_phrase(t, question)), None)


def _summary_names(question: str, names: list[str]) -> list[str]:
    """An item's names for this question: a summary name ("Tmax") only when the question asks for it.

    A note writes "Tmax 37.6 (24h)" beside the vitals' "T 37.2": they are different numbers. "Tmax" asked
    reads only "Tmax"; "temp" asked never reads "Tmax".
    """
    summaries = {t.lower() for t in aggregate_terms()}
    asked = written_summary(question)
    if asked:
        return [n for n in names if n.lower() == asked.lower()] or [asked]
    return [n for n in names if n.lower() not in summaries] or names


def _is_lab(term: str) -> bool:
    return term in lexicon().units


def _mentions(target: _Target, sentence: str) -> list[re.Match[str]]:
    found = []
    for name in sorted(target.names, key=len, reverse=True):
        match = find_phrase(name, sentence, case_sensitive=name in target.strict or (len(name) <= 3 and name.isupper()))
        if match:
            found.append(match)
    return sorted(found, key=lambda m: m.start())


def _value_after(target: _Target, sentence: str, later: bool = False) -> tuple[Any, str | None] | None:
    """The number written right after a mention; with ``later``, the right side of ``5.0 on admission -> 4.3``."""
    for match in _mentions(target, sentence):
        rest = sentence[match.end():]
        m = re.match(r"\s*(?:\([^)]{0,20}\)\s*)?(?:[:=]\s*|(?:of|was|is|at|were)\s+)?(" + _NUMBER + r"(?:/\d+)?)", rest)
        if m:
            trend = re.match(r"[^;,\d]{0,30}?(?:->|→|to)\s*(" + _NUMBER + r")", rest[m.end():]) if later else None
            raw = (trend or m)[1].replace(",", "")
            unit = _TEXT_UNIT.match(rest[m.end():])
            value: Any = raw if "/" in raw else float(raw)
            return value, unit[1] if unit else target.unit
    return None


def _dose_after(target: _Target, sentence: str) -> tuple[str, str] | None:
    for match in _mentions(target, sentence):
        m = re.search(r"(" + _NUMBER + r")\s*(" + _DOSE_UNIT + r")(?![a-z])", sentence[match.end():match.end() + 80], re.I)
        if m:
            return f"{m[1]} {m[2]}", m[2]
    return None


def negated(sentence: str, start: int, end: int) -> bool:
    """True when a negation trigger governs the mention at ``sentence[start:end]`` (NegEx-style).

    Strong triggers ("denies", "negative for", "free of"…) reach over the whole clause, so every item of
    "Denies chest pain, SOB, palpitations" is negated; weak ones ("no", "not", "without") only the next
    few words, so a listed finding named "not in labor force" does not negate the items after it.
    """
    clause = _SCOPE_END.split(sentence[:start])[-1].lower()
    near = " ".join(clause.split()[-_WEAK_REACH:])
    for trigger in _NEGATIONS:
        scope = near if trigger in _WEAK_NEGATIONS else clause
        if re.search(r"(?<![a-z])" + re.escape(trigger) + r"(?![a-z])", scope):
            return True
    return bool(_POST_NEGATION.match(sentence[end:]))


def _finding(target: _Target, sentence: str) -> bool | None:
    """True: mentioned as present; False: negated; None: not mentioned."""
    for form in _NEGATED_FORMS.get(target.name, ()):
        if find_phrase(form, sentence):
            return False
    mentions = [m for m in _mentions(target, sentence) if not _HYPOTHETICAL.search(_SCOPE_END.split(sentence[:m.start()])[-1])]
    if not mentions:
        return None
    return not all(negated(sentence, m.start(), m.end()) for m in mentions)


def written_forms(target: _Target) -> list[str]:
    """Every string a sentence must contain (case aside) for :func:`answer_from_notes` to read ``target`` in it."""
    return [*target.names, *_NEGATED_FORMS.get(target.name, ())]


def answer_from_notes(question: str, hits: list[Hit]) -> NoteFinding | None:
    """The value, dose or finding the question asks for, from the hits' sentences; ``None``: not documented."""
    target = parse_target(question)
    if target is None or not hits:
        return None
    order = _order(question)
    candidates: list[tuple[int, int, Hit, str, Any, str | None, bool]] = []
    for rank, hit in enumerate(hits):
        body = hit.text.split("\n", 1)[1] if hit.text.startswith("[") and "\n" in hit.text else hit.text
        for position, sentence in enumerate(sentences(body)):
            if target.kind == "value":
                found = _value_after(target, sentence, later=order in ("discharge", "latest"))
                if found:
                    candidates.append((rank, position, hit, sentence, found[0], found[1], False))
            elif target.kind == "dose":
                dose = _dose_after(target, sentence)
                if dose:
                    candidates.append((rank, position, hit, sentence, dose[0], dose[1], False))
            else:
                present = _finding(target, sentence)
                if present is not None:
                    candidates.append((rank, position, hit, sentence, present, None, not present))
    if not candidates:
        return None
    since, until = question_window(question)
    if since and until and until - since < timedelta(days=3):  # one day named: the note closest to it
        noon = since + (until - since) / 2 + timedelta(hours=6)  # US local noon, in UTC
        timed = [c for c in candidates if c[2].time and since <= c[2].time <= until]
        if timed and order is None:
            candidates = [min(timed, key=lambda c: (abs((c[2].time or noon) - noon), c[0], c[1]))]
        elif timed:
            candidates = timed
    best = _choose(order, candidates)
    _, _, hit, sentence, value, unit, is_negated = best
    return NoteFinding(target.kind, target.name, value, unit, is_negated, sentence, hit.ref, hit.note_id, hit.date,
                       hit.time, hit.note_type)


def _choose(order: str | None, candidates: list[Any]) -> Any:
    def when(c: Any) -> str:
        return c[2].time.isoformat() if c[2].time else c[2].date

    if order == "admission":
        marked = [c for c in candidates if re.search(r"admission|arrival|admit|triage|presents|presented", c[3], re.I)
                  or "history and physical" in (c[2].note_type or "").lower()]
        pool = marked or candidates
        return min(pool, key=lambda c: (when(c), c[0], c[1]))
    if order == "discharge":
        said = [c for c in candidates if re.search(r"discharge|last labs|last vitals", c[3], re.I)]
        typed = [c for c in candidates if "discharge" in (c[2].note_type or "").lower()]
        pool = said or typed or candidates
        return max(pool, key=lambda c: (when(c), -c[0], -c[1]))
    if order == "latest":
        return max(candidates, key=lambda c: (when(c), -c[0], -c[1]))
    if order == "earliest":
        return min(candidates, key=lambda c: (when(c), c[0], c[1]))
    return min(candidates, key=lambda c: (c[0], c[1]))
