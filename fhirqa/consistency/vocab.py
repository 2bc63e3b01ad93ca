"""Words that name checkable things in notes: the project lexicon, note shorthand it lacks, the patient's own items.

:class:`Gazetteer` finds every known name in a note, longest first, honouring case where a short alias
would otherwise match ordinary words (``K``, ``Na``, ``T``, ``BS``, ``MI``). Each hit carries its category
(lab, vital, medication, condition, procedure, immunization) and the phrase the item search should use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fhirqa.agent.lexicon import Lexicon
from fhirqa.consistency import terms

MAX_WORDS = 16  # record item names are long ("Assessment using alcohol use disorders identification test …")
_TOKEN = re.compile(r"[A-Za-z0-9&]+")

_DATA = Path(__file__).resolve().parent / "data" / "shorthand.json"


@lru_cache(maxsize=1)
def shorthand_data() -> dict:
    """The shorthand table (``data/shorthand.json``): aliases, ions, word forms, qualifiers, spellings, ambiguous
    acronyms. Kept as data so that it grows without code changes."""
    return json.loads(_DATA.read_text(encoding="utf-8"))


_SH = shorthand_data()
# Note shorthand the project lexicon does not carry: alias → (category, search phrase)
SHORTHAND: dict[str, tuple[str, str]] = {alias: (cat, search) for alias, (cat, search) in _SH["aliases"].items()}
CASE_SENSITIVE = set(_SH["case_sensitive"])
IONS: dict[str, str] = _SH["ions"]  # chemical symbol → analyte ("Na" → sodium)
_WORD_FORMS: dict[str, str] = _SH["word_forms"]
QUALIFIERS = _QUALIFIERS = frozenset(_SH["qualifiers"])  # edge words a lab name may carry (calc, serum, auto)
_SPELLING = [(re.compile(a), b) for a, b in _SH["spelling"]]
AMBIGUOUS: dict[str, list[dict]] = _SH["ambiguous"]
_ITEM_QUALIFIERS = sorted(_SH.get("item_qualifiers", []), key=len, reverse=True)  # longest first
_LAY_TERMS: dict[str, list[str]] = _SH.get("lay_terms", {})
_LAY_ADJECTIVES: dict[str, list[str]] = _SH.get("lay_adjectives", {})
SALTS: dict[str, str] = _SH.get("salts", {})  # salt word of a drug product → the salt ("hcl" → hydrochloride)
SALT_SYMBOLS: dict[str, str] = _SH.get("salt_symbols", {})  # "K" → potassium, only as written
DOSE_FORMS: list[str] = _SH.get("dose_forms", [])  # release and form words between a drug and its dose (ER, tab)
# a charge written after a chemical symbol: Na+, K+, Ca++, Ca2+, Mg2+, Cl-, HCO3-, PO4(3-)
_CHARGE = re.compile(r"(?:\d?[+\-−]{1,2}|\(\d?[+\-−]\))(?![A-Za-z])")
_VALUE_NEXT = re.compile(r"[ \t]*[:=~]?[ \t]*[<>]?\d")
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
    """Lower-case tokens, possessives dropped, light plural stemming (like the lexicon), British spellings and
    truncated word forms of the shorthand table rewritten (``haemoglobin`` → hemoglobin, ``wgt`` → weight)."""
    text = re.sub(r"(?<=\w)['’]s\b", "", text)
    out = []
    for token in _TOKEN.findall(text.lower()):
        for pattern, repl in _SPELLING:
            token = pattern.sub(repl, token)
        if len(token) > 4 and token.endswith("ies"):
            token = token[:-3] + "y"
        elif len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
        out.append(_WORD_FORMS.get(token, token))
    return " ".join(out)


class Gazetteer:
    """Known names indexed by normalized words; :meth:`scan` finds them in a note."""

    def __init__(self) -> None:
        self.terms: dict[str, list[Term]] = {}

    def add(self, alias: str, term: Term) -> None:
        """Index one alias (the first reading of a key per category wins, unless it requires a spelling: then
        "HGB" of the shorthand does not hide "haemoglobin" of the lexicon, both read "hemoglobin")."""
        key = normalize(alias)
        if not key or len(key.split()) > MAX_WORDS:
            return
        readings = self.terms.setdefault(key, [])
        if all(r.category != term.category or (r.spellings and r.spellings != term.spellings) for r in readings):
            readings.append(term)

    def extended(self, extra: Iterable[tuple[str, Term]]) -> Gazetteer:
        """A copy with more aliases (the patient's own item names)."""
        out = Gazetteer()
        out.terms = {k: list(v) for k, v in self.terms.items()}
        for alias, term in extra:
            out.add(alias, term)
        return out

    def scan(self, text: str) -> list[Hit]:
        """Known names in ``text``, longest first, not overlapping. Besides the exact words: a chemical symbol
        with a charge (``Ca++``, ``Mg2+``, ``HCO3-``), a name carrying qualifiers (``LDL calc``, ``creatinine
        (serum)``) or inverted after a comma (``cholesterol, total``), a mixed-case symbol in capitals when a
        value follows (``NA 140``); short ambiguous acronyms are read by their surroundings (:func:`disambiguate`)."""
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)
                  if not (m.group(0) in ("s", "S") and m.start() > 0 and text[m.start() - 1] in "'’")]
        norm = [normalize(text[s:e]) or text[s:e].lower() for s, e in tokens]
        hits: list[Hit] = []
        i = 0
        while i < len(tokens):
            ion = self._ion(text, tokens[i])
            if ion is not None:
                hits.append(ion)
                i += 1
                continue
            for width in range(min(MAX_WORDS, len(tokens) - i), 0, -1):
                start, end = tokens[i][0], tokens[i + width - 1][1]
                if width > 1 and "\n" in text[start:end]:
                    continue
                found = self._lookup(text, tokens[i:i + width], norm[i:i + width])
                if found is None:
                    continue
                hit, key = found
                chosen = disambiguate(text, hit, key)
                if chosen is not None:
                    hits.append(chosen)
                i += width
                break
            else:
                i += 1
        return hits

    def _lookup(self, text: str, toks: list[tuple[int, int]], norm: list[str]) -> tuple[Hit, str] | None:
        start, end = toks[0][0], toks[-1][1]
        lo, hi = 0, len(toks)
        readings = self.terms.get(" ".join(norm))
        if not readings and len(toks) > 1 and re.fullmatch(r"[\s,()/.-]*", _gaps(text, toks)):
            while lo < hi and norm[lo] in _QUALIFIERS:
                lo += 1
            while hi > lo and norm[hi - 1] in _QUALIFIERS:
                hi -= 1
            if lo < hi and (lo, hi) != (0, len(toks)):
                readings = self.terms.get(" ".join(norm[lo:hi]))
        key = " ".join(norm[lo:hi])
        if not readings and hi - lo > 1 and "," in text[start:end]:
            key = self._bag().get(" ".join(sorted(key.split())), key)
            readings = self.terms.get(key)
        if not readings:
            return None
        core = text[toks[lo][0]:toks[hi - 1][1]]
        if hi == len(toks):
            end = end + 1 if end < len(text) and text[end] == "+" and core in ("K", "Na") else end
        elif text[start:end].count("(") > text[start:end].count(")") and text[end:end + 1] == ")":
            end += 1  # "creatinine (serum)"
        usable = [r for r in readings if not r.spellings or _spelled(core, r.spellings)]
        rescued = ""
        if not usable and core.isupper() and _VALUE_NEXT.match(text, end):  # "NA 140", "CA 9.1"
            usable = [r for r in readings if r.category == "lab" and any(sp.upper() == core for sp in r.spellings)]
            rescued = next((sp for r in usable for sp in sorted(r.spellings) if sp.upper() == core), "")
        if not usable:
            return None
        best = usable[0]
        search = best.search or rescued
        if not search and best.source != "record" and key != " ".join(_TOKEN.findall(text[start:end].lower())):
            search = key  # the words as the lexicon writes them ("LDL calc" → ldl, "haemoglobin" → hemoglobin)
        return Hit(start, end, text[start:end], best.category, search, best.source, tuple(usable[1:])), core

    def _ion(self, text: str, token: tuple[int, int]) -> Hit | None:
        """A chemical symbol written with its charge: ``Na+``, ``K+``, ``Ca++``, ``Ca2+``, ``Mg2+``, ``Cl-``,
        ``HCO3-`` → the analyte of :data:`IONS`."""
        charge = _CHARGE.match(text, token[1])
        if charge is None:
            return None
        symbol = _ion_symbol(text[token[0]:token[1]], charge.group(0))
        if symbol is None:
            return None
        return Hit(token[0], charge.end(), text[token[0]:charge.end()], "lab", IONS[symbol], "ion")

    def _bag(self) -> dict[str, str]:
        """Known names by their words in any order → the name ("cholesterol, total" = total cholesterol)."""
        if getattr(self, "_bag_index", None) is None:
            bag: dict[str, str] = {}
            for key in self.terms:
                if " " in key:
                    bag.setdefault(" ".join(sorted(key.split())), key)
            self._bag_index = bag
        return self._bag_index


_ION_CASE = {symbol.upper(): symbol for symbol in IONS}


def _ion_symbol(word: str, charge: str) -> str | None:
    """The symbol of ``word`` written before ``charge`` ("Mg2" + "+" → Mg, "NA" + "+" → Na), or None."""
    if word in IONS:
        return word
    if not (charge[:1].isdigit() or charge.startswith("(")) and word[-1:].isdigit() and word[:-1] in IONS and word not in ("CO2", "PO4", "NH4", "HCO3"):
        return word[:-1]  # "Mg2+", "Ca2+"
    if word.isupper() and len(word) > 1:
        return _ION_CASE.get(word)
    return None


def _gaps(text: str, toks: list[tuple[int, int]]) -> str:
    return "".join(text[a[1]:b[0]] for a, b in zip(toks, toks[1:], strict=False))


def disambiguate(text: str, hit: Hit, core: str) -> Hit | None:
    """A short ambiguous acronym (``RA``, ``MS``, ``PE``, ``CA``) read by its surroundings: the readings of
    :data:`AMBIGUOUS` are tried in order; a reading applies when one of its cue words is among the few words
    before or after the acronym on its line (``SpO2 94% on RA``: room air) or, for a lab reading, when a value
    follows (``CA 9.1``: calcium). Category ``ignore`` drops the name. No reading applies: the hit stays."""
    readings = AMBIGUOUS.get(core)
    if not readings:
        return hit
    line_start = text.rfind("\n", 0, hit.start) + 1
    line_end = text.find("\n", hit.end)
    line_end = len(text) if line_end < 0 else line_end
    before = [w.lower() for w in re.findall(r"[A-Za-z0-9]+|%", text[line_start:hit.start])]
    after = [w.lower() for w in re.findall(r"[A-Za-z0-9]+|%", text[hit.end:line_end])]
    for reading in readings:
        n = reading.get("window", 3)
        cued = (set(before[-n:] if n else []) & set(reading["before"])
                or set(after[:n]) & set(reading["after"]))
        numbered = reading.get("number") and _VALUE_NEXT.match(text, hit.end)
        if not (cued or numbered):
            continue
        if reading["category"] == "ignore":
            return None
        return Hit(hit.start, hit.end, hit.written, reading["category"], reading.get("search", ""), "ambiguous")
    return hit


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
            if entry["term"] in _SKIP_TERMS or (name == "conditions" and entry.get("members")):
                # a kind of finding ("rhythm": sinus rhythm, atrial fibrillation …) is a heading in a note
                # ("Rhythm: sinus"), not a finding it claims; its members are named findings of their own
                continue
            for alias in [entry["term"], *entry["aliases"]]:
                g.add(alias, Term(category, "", _case_rule(alias, listed)))
    return g


def record_terms(names: Mapping[str, Iterable[str]]) -> list[tuple[str, Term]]:
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
    if category in ("condition", "procedure"):
        aliases += lay_aliases(base)
    return [a for a in dict.fromkeys(aliases) if a]


def _strip_item_qualifiers(name: str) -> str:
    """A diagnosis or procedure name without the leading words that do not change the item (``item_qualifiers``):
    "Recurrent rectal polyp" → "rectal polyp", "Localized, primary osteoarthritis of the hand" → "osteoarthritis
    of the hand", "History of myocardial infarction" → "myocardial infarction"."""
    out = name.strip()
    while True:
        low = out.lower()
        word = next((q for q in _ITEM_QUALIFIERS if low.startswith(q + " ") or low.startswith(q + ",")), None)
        if word is None or len(out) - len(word) < 4:
            return out
        out = out[len(word):].lstrip(" ,")


def lay_aliases(name: str) -> list[str]:
    """Other names a note may give the patient's diagnosis or procedure ``name`` (its own words, from the
    shorthand table): without leading qualifiers; "forearm fracture" for "Fracture of forearm"; lay phrases
    (``lay_terms``: heart attack for myocardial infarction) and lay adjectives before the site (``lay_adjectives``:
    "broken forearm"). Plurals need nothing: names are compared singular ("rectal polyps")."""
    forms = list(dict.fromkeys([name, _strip_item_qualifiers(name)]))
    out: list[str] = []
    for form in forms:
        out.append(form)
        m = re.fullmatch(r"(?P<a>[\w' -]+?) of (?:the )?(?P<b>[\w' -]+)", form, flags=re.I)
        if m:
            head, site = m.group("a"), m.group("b")
            # the site and the named parts of a nested one ("tendon of the rotator cuff of shoulder": rotator cuff)
            parts = [re.sub(r"^the ", "", p, flags=re.I) for p in re.split(r" of ", site, flags=re.I)]
            for where in dict.fromkeys([site, *(p for p in parts if len(p.split()) > 1)]):
                out.append(f"{where} {head}")
                for adjective in _LAY_ADJECTIVES.get(_strip_item_qualifiers(head).lower(), ()):
                    out.append(f"{adjective} {where}")
    for alias in list(out):
        low = alias.lower()
        for clinical, lay in _LAY_TERMS.items():
            if re.search(rf"\b{re.escape(clinical)}\b", low):
                out += [re.sub(rf"\b{re.escape(clinical)}\b", phrase, low) for phrase in lay]
    return [a for a in dict.fromkeys(out) if a]
