"""Words that name checkable things in notes: the project lexicon, note shorthand it lacks, the patient's own items.

:class:`Gazetteer` finds every known name in a note, longest first, honouring case where a short alias
would otherwise match ordinary words (``K``, ``Na``, ``T``, ``BS``, ``MI``). Each hit carries its category
(lab, vital, medication, condition, procedure, immunization) and the phrase the item search should use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from fhirqa.agent.lexicon import Lexicon
from fhirqa.consistency import terms

MAX_WORDS = 16  # record item names are long ("Assessment using alcohol use disorders identification test …")
_TOKEN = re.compile(r"[A-Za-z0-9&]+")

# Note shorthand the project lexicon does not carry: alias → (category, search phrase)
SHORTHAND: dict[str, tuple[str, str]] = {
    "gluc": ("lab", "glucose"), "BS": ("lab", "glucose"), "FS": ("lab", "glucose"), "FSBS": ("lab", "glucose"),
    "A1C": ("lab", "hemoglobin a1c"), "AlkP": ("lab", "alkaline phosphatase"), "alk p": ("lab", "alkaline phosphatase"),
    "T. bili": ("lab", "bilirubin"), "Trig": ("lab", "triglycerides"), "Tchol": ("lab", "total cholesterol"),
    "microalbumin/Cr ratio": ("lab", "microalbumin creatinine ratio"),
    "urine microalbumin/Cr ratio": ("lab", "microalbumin creatinine ratio"),
    "microalbumin/creatinine ratio": ("lab", "microalbumin creatinine ratio"),
    "Plt ct": ("lab", "platelets"), "WBC count": ("lab", "leukocytes"), "LDL chol": ("lab", "ldl cholesterol"),
    "HDL chol": ("lab", "hdl cholesterol"), "LDL-chol": ("lab", "ldl cholesterol"), "HDL-chol": ("lab", "hdl cholesterol"),
    "XR": ("procedure", "x-ray"), "x-ray": ("procedure", "x-ray"), "radiograph": ("procedure", "x-ray"),
    "CXR": ("procedure", "chest x-ray"), "sutured": ("procedure", "suture open wound"),
    "suture": ("procedure", "suture open wound"), "laceration repaired": ("procedure", "suture open wound"),
    "splint": ("procedure", "bone immobilization"), "splinted": ("procedure", "bone immobilization"),
    "splinting": ("procedure", "bone immobilization"), "immobilization": ("procedure", "bone immobilization"),
    "immobilized": ("procedure", "bone immobilization"), "DRE": ("procedure", "digital examination of rectum"),
    "UCx": ("procedure", "urine culture"), "urine cx": ("procedure", "urine culture"),
    "blood cx": ("procedure", "blood culture"), "blood cultures": ("procedure", "blood culture"),
    "PHQ-9": ("procedure", "depression screening"), "depression screen": ("procedure", "depression screening"),
    "BTL": ("procedure", "tubal ligation"), "polypectomy": ("procedure", "polypectomy"),
    "pRBC": ("procedure", "transfusion of packed cells"), "transfusion": ("procedure", "transfusion"),
    "transfused": ("procedure", "transfusion"), "IM epinephrine": ("procedure", "injection of adrenaline"),
    "epinephrine injection": ("procedure", "injection of adrenaline"), "UA": ("procedure", "urinalysis"),
    "urinalysis": ("procedure", "urinalysis"), "LP": ("procedure", "lumbar puncture"),
    "lumbar puncture": ("procedure", "lumbar puncture"), "paracentesis": ("procedure", "paracentesis"),
    "ablation": ("procedure", "ablation"), "hearing exam": ("procedure", "hearing examination"),
    "H&P": ("ignore", ""), "PCN": ("medication", "penicillin"), "PCN VK": ("medication", "penicillin V"),
    "fx": ("condition", "fracture"), "lac": ("condition", "laceration"),
}
CASE_SENSITIVE = {"BS", "FS", "XR", "UA", "LP", "DRE", "BTL", "PCN", "lac", "fx"}
_KIND = {"vital-signs": "vital", "laboratory": "lab", "survey": "vital"}
_SKIP_TERMS = {"Tobacco smoking status", "Tobacco use"}


@dataclass(frozen=True)
class Term:
    """A name to look for and what it means."""

    category: str
    search: str  # the phrase the item search uses ("" = use the words as written)
    spellings: frozenset[str] = frozenset()  # exact spellings required (case-sensitive aliases)
    source: str = "lexicon"


@dataclass(frozen=True)
class Hit:
    """A name found in the note (``others``: further readings of the same words, e.g. DEXA the test result
    and DEXA the procedure)."""

    start: int
    end: int
    written: str
    category: str
    search: str
    source: str
    others: tuple[Term, ...] = ()


def normalize(text: str) -> str:
    """Lower-case tokens, possessives dropped, light plural stemming (like the lexicon)."""
    text = re.sub(r"(?<=\w)['’]s\b", "", text)
    out = []
    for token in _TOKEN.findall(text.lower()):
        if len(token) > 4 and token.endswith("ies"):
            token = token[:-3] + "y"
        elif len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
        out.append(token)
    return " ".join(out)


class Gazetteer:
    """Known names indexed by normalized words; :meth:`scan` finds them in a note."""

    def __init__(self) -> None:
        self.terms: dict[str, list[Term]] = {}

    def add(self, alias: str, term: Term) -> None:
        """Index one alias (the first reading of a key per category wins)."""
        key = normalize(alias)
        if not key or len(key.split()) > MAX_WORDS:
            return
        readings = self.terms.setdefault(key, [])
        if all(r.category != term.category for r in readings):
            readings.append(term)

    def extended(self, extra: Iterable[tuple[str, Term]]) -> Gazetteer:
        """A copy with more aliases (the patient's own item names)."""
        out = Gazetteer()
        out.terms = {k: list(v) for k, v in self.terms.items()}
        for alias, term in extra:
            out.add(alias, term)
        return out

    def scan(self, text: str) -> list[Hit]:
        """Known names in ``text``, longest first, not overlapping."""
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)
                  if not (m.group(0) in ("s", "S") and m.start() > 0 and text[m.start() - 1] in "'’")]
        norm = [normalize(text[s:e]) or text[s:e].lower() for s, e in tokens]
        hits: list[Hit] = []
        i = 0
        while i < len(tokens):
            for width in range(min(MAX_WORDS, len(tokens) - i), 0, -1):
                start, end = tokens[i][0], tokens[i + width - 1][1]
                if width > 1 and "\n" in text[start:end]:
                    continue
                readings = self.terms.get(" ".join(norm[i:i + width]))
                if not readings:
                    continue
                written = text[start:end]
                end = end + 1 if end < len(text) and text[end] == "+" and written in ("K", "Na") else end
                usable = [r for r in readings if not r.spellings or _spelled(written, r.spellings)]
                if usable:
                    best = usable[0]
                    hits.append(Hit(start, end, text[start:end], best.category, best.search, best.source,
                                    tuple(usable[1:])))
                    i += width
                    break
            else:
                i += 1
        return hits


def _spelled(written: str, spellings: frozenset[str]) -> bool:
    squashed = written.replace(" ", "")
    return written in spellings or squashed in spellings or written.rstrip("+") in spellings


def _case_rule(alias: str, listed: set[str]) -> frozenset[str]:
    """Spellings a short alias must be written in (empty: any case)."""
    if alias in listed or alias in CASE_SENSITIVE:
        return frozenset({alias, alias + "+"})
    core = alias.replace("+", "")
    if len(core) <= 2:
        if core.islower():
            return frozenset({core, core.capitalize(), core.upper()})
        return frozenset({alias})
    return frozenset()


@lru_cache(maxsize=4)
def base_gazetteer(lexicon_folder: str | None = None) -> Gazetteer:
    """Lexicon aliases (labs, vitals, drugs, conditions, procedures, vaccines) plus :data:`SHORTHAND`."""
    lex = Lexicon.load(lexicon_folder)
    g = Gazetteer()
    listed = set()
    for name in ("abbreviations", "drugs", "conditions", "procedures", "immunizations"):
        listed |= set(lex.data[name].get("case_sensitive_in_text", []))
    for alias, (category, search) in SHORTHAND.items():
        g.add(alias, Term(category, search, _case_rule(alias, listed), "shorthand"))
    for table, category in ((terms.LABS, "lab"), (terms.CONDITIONS, "condition"), (terms.PROCEDURES, "procedure")):
        for alias, search in table.items():
            g.add(alias, Term(category, search, _case_rule(alias, listed), "dictionary"))
    for alias in terms.DRUGS:
        g.add(alias, Term("medication", "", _case_rule(alias, listed), "dictionary"))
    for brand, generic in terms.BRANDS.items():
        g.add(brand, Term("medication", "", _case_rule(brand, listed), "dictionary"))
        g.add(generic, Term("medication", "", frozenset(), "dictionary"))
    for entry in lex.data["abbreviations"]["entries"]:
        if entry["term"] in _SKIP_TERMS:
            continue
        category = _KIND.get(entry.get("kind", ""), "lab")
        for alias in [entry["term"], *entry["aliases"]]:
            g.add(alias, Term(category, "", _case_rule(alias, listed)))
    for drug in lex.data["drugs"]["drugs"]:
        for alias in [drug["generic"], *drug["brands"], *drug["aliases"]]:
            g.add(alias, Term("medication", "", _case_rule(alias, listed)))
    for name, category in (("conditions", "condition"), ("procedures", "procedure"), ("immunizations", "immunization")):
        for entry in lex.data[name]["entries"]:
            if entry["term"] in _SKIP_TERMS:
                continue
            for alias in [entry["term"], *entry["aliases"]]:
                g.add(alias, Term(category, "", _case_rule(alias, listed)))
    return g


def record_terms(names: dict[str, Iterable[str]]) -> list[tuple[str, Term]]:
    """Aliases from the patient's own items: ``{category: names}`` → names, qualifiers stripped, "ankle sprain"
    for "Sprain of ankle", the drug words of a product ("metformin hydrochloride")."""
    out: list[tuple[str, Term]] = []
    for category, items in names.items():
        for name in items:
            for alias in _record_aliases(category, name):
                if len(alias) >= 4:
                    out.append((alias, Term(category, name, frozenset(), "record")))
    return out


def _record_aliases(category: str, name: str) -> list[str]:
    base = re.sub(r"\s*\((?:disorder|finding|procedure|situation|regime/therapy|observable entity)\)\s*$", "",
                  name, flags=re.I).strip()
    aliases = [base]
    if category == "medication":
        words = re.split(r"\s\d|\[", base)[0].strip()
        words = re.sub(r"^\d+\s*(?:hr|ml|actuat)\s+", "", words, flags=re.I)
        aliases.append(words)
    m = re.fullmatch(r"(?P<a>[\w' -]+?) of (?:the )?(?P<b>[\w' -]+)", base, flags=re.I)
    if m and category in ("condition", "procedure"):
        aliases.append(f"{m.group('b')} {m.group('a')}")
    return [a for a in dict.fromkeys(aliases) if a]
