"""Clinical lexicon: clinician words → the record's words and codes (data in ``lexicon/*.json``).

- ``abbreviations.json``: lab, vital and score shorthand → canonical observation name and LOINC codes.
- ``drugs.json``: brand and other names → generic, RxNorm product codes; drug classes → member generics.
- ``conditions.json``: condition abbreviations and synonyms → condition name, SNOMED CT codes and ICD-9-CM /
  ICD-10-CM code families (``icd``: a record coded in ICD matches by them, see :class:`IcdFamilies`).
- ``encounters.json``: words for encounter classes (v3 ActCode) and a few encounter types.

Matching ignores case, punctuation, possessives and plurals (``"K+"`` = ``"k"``, ``"statins"`` =
``"statin"``). :meth:`Lexicon.expand` first tries the whole phrase; when that finds nothing it scans the
phrase for the longest known terms, so ``"latest A1c value"`` expands too. Inside a longer phrase, the short
aliases each file lists under ``case_sensitive_in_text`` (``K``, ``Na``, ``PT``, ``ER``…) only count when
written in that case, so "ca" in a sentence or "pt" for patient do not turn into labs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from fhirqa.errors import FhirqaError

FILES = ("abbreviations", "drugs", "conditions", "encounters", "immunizations", "procedures")
SYSTEMS = {
    "abbreviations": "http://loinc.org",
    "drugs": "http://www.nlm.nih.gov/research/umls/rxnorm",
    "drug_class": "http://www.nlm.nih.gov/research/umls/rxnorm",
    "lab_class": "http://loinc.org",
    "conditions": "http://snomed.info/sct",
    "condition_class": "http://snomed.info/sct",
    "encounters": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
    "immunizations": "http://hl7.org/fhir/sid/cvx",
    "vaccine_class": "http://hl7.org/fhir/sid/cvx",
    "procedures": "http://snomed.info/sct",
    "procedure_class": "http://snomed.info/sct",
}
VIEWS = {"abbreviations": "observation", "lab_class": "observation", "drugs": "medication", "drug_class": "medication",
         "conditions": "condition", "condition_class": "condition", "encounters": "encounter", "immunizations": "immunization",
         "vaccine_class": "immunization", "procedures": "procedure", "procedure_class": "procedure"}  # fmt: skip
MAX_WORDS = 6  # longest alias, in words, looked for inside a phrase


class LexiconError(FhirqaError):
    """A lexicon file is missing or malformed."""


@dataclass(frozen=True)
class Expansion:
    """One reading of a phrase: a canonical term, its codes, and which lexicon said so."""

    term: str  # canonical name: "Hemoglobin A1c", "furosemide", "Hypertension", "inpatient"
    codes: tuple[str, ...]  # LOINC / RxNorm / SNOMED CT / ActCode codes
    source: str  # "abbreviations", "drugs", "drug_class", "conditions" or "encounters"
    matched: str = ""  # the alias that matched, normalized ("a1c")
    view: str = ""  # the canonical view the term lives in
    system: str = ""  # the code system of ``codes``
    detail: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # unit, class, members…


#: Words a class name may end with that mean the same ("cholesterol pill" = "cholesterol medicine" = "... med").
_MEDICINE_WORDS = ("medication", "medicine", "med", "pill", "drug", "tablet")
_NOT_A_HEAD = frozenset({"", "the", "a", "an", "any", "my", "her", "his", "their", "this", "that"})
_MEDICINE_WORD = re.compile(rf"\b({'|'.join(_MEDICINE_WORDS)})(s?)$", re.IGNORECASE)


def _medicine_word_variants(alias: str) -> list[str]:
    """``alias`` and, when it ends with a word for medicine, the same alias with each other such word."""
    found = _MEDICINE_WORD.search(alias)
    head = alias[: found.start()] if found else ""
    if found is None or head.strip().lower() in _NOT_A_HEAD:
        return [alias]  # "the pill" (the contraceptive) is no pattern for "the med"
    return [alias, *(head + word + found.group(2) for word in _MEDICINE_WORDS if word != found.group(1).lower())]


def normalize(text: str) -> str:
    """Lower-case, zero-width characters and possessives dropped, punctuation to spaces, plurals singular."""
    return " ".join(_normal_tokens(text))


def _raw_tokens(text: str) -> list[str]:
    text = re.sub(r"[\u200b\u200c\u200d\ufeff]", "", text)
    text = re.sub(r"(?<=\w)['’]s\b", "", text)
    return re.findall(r"[A-Za-z0-9&]+", text)


def _singular(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _normal_tokens(text: str) -> list[str]:
    return [_singular(t.lower()) for t in _raw_tokens(text)]


_ICD_SHAPES = {
    # ICD-9-CM: 3 digits (or V + 2 digits; E000-E030 and E800-E999) and up to 2 more, the dot optional
    "icd9cm": re.compile(r"(?:\d{3}|V\d{2}|E(?:0[0-2]\d|030|[89]\d\d))(?:\.?\d{1,2})?"),
    # ICD-10-CM: a letter, a digit, a digit or letter, then up to 4 more characters after an optional dot
    "icd10cm": re.compile(r"[A-Z]\d[0-9A-Z](?:\.?[0-9A-Z]{1,4})?"),
}


@dataclass(frozen=True)
class IcdFamilies:
    """The ICD-9-CM and ICD-10-CM code families of one condition (``icd`` of ``lexicon/conditions.json``).

    A family is a code prefix (``410`` holds ``410.71``), compared without the dot because MIMIC-III writes codes
    without it (``41071``); ``?`` stands for any one character (``250.?0``: diabetes, type II); ``A-B`` is every
    family from A to B (``401-405``, ``E78.0-E78.5``). A record code is compared with the families of the system its
    shape says (an ICD-9 code is never read as ICD-10); a code whose shape fits both (``E8881``: ICD-9 E888.1, a fall,
    or ICD-10 E88.81) is compared with neither, and SNOMED CT ids (6 digits and more) are neither.
    """

    families: tuple[tuple[str, str], ...]  # (system, normalized family)

    @classmethod
    def of(cls, spec: dict[str, list[str]]) -> IcdFamilies:
        """Families from a lexicon entry's ``icd`` object (``{"icd9cm": [...], "icd10cm": [...]}``)."""
        out: list[tuple[str, str]] = []
        for system, written in spec.items():
            if system not in _ICD_SHAPES:
                raise KeyError(f"icd system {system!r}")
            for family in written:
                out += [(system, f) for f in _icd_range(family)]
        return cls(tuple(out))

    @staticmethod
    def system_of(code: str) -> str | None:
        """``icd9cm`` or ``icd10cm`` when ``code`` is shaped like a code of that system only, else None."""
        written = str(code).strip().upper()
        systems = [s for s, shape in _ICD_SHAPES.items() if shape.fullmatch(written)]
        return systems[0] if len(systems) == 1 else None

    def match(self, code: str) -> bool:
        """Whether the record code ``code`` (with or without its dot) falls in one of the families."""
        system = self.system_of(code)
        if system is None:
            return False
        bare = str(code).strip().upper().replace(".", "")
        return any(system == own and len(bare) >= len(family)
                   and all(f in ("?", c) for f, c in zip(family, bare, strict=False))
                   for own, family in self.families)

    def any_match(self, codes: Iterable[str]) -> bool:
        """Whether any of ``codes`` falls in one of the families."""
        return any(self.match(c) for c in codes)


def _icd_range(family: str) -> list[str]:
    """A written family as normalized prefixes: "401-405" → 401 … 405, "E78.0-E78.5" → E780 … E785, "250.?0" →
    250?0."""
    bare = family.strip().upper().replace(".", "")
    if "-" not in bare:
        return [bare]
    low, high = bare.split("-", 1)
    head = re.match(r"\D*", low).group(0)  # type: ignore[union-attr]
    if not high.startswith(head) or len(low) != len(high) or not (low[len(head):] + high[len(head):]).isdigit():
        raise ValueError(f"ICD range {family!r}: both ends need the same letters and as many digits")
    width = len(low) - len(head)
    return [f"{head}{n:0{width}d}" for n in range(int(low[len(head):]), int(high[len(head):]) + 1)]


class Lexicon:
    """The four lexicon files, indexed by normalized alias."""

    def __init__(self, data: dict[str, dict[str, Any]]) -> None:
        self.data = data
        self._index: dict[str, list[Expansion]] = {}
        self._case_sensitive: dict[str, set[str]] = {}  # normalized alias → spellings required in text
        self._generic: dict[str, str] = {}  # normalized drug name → generic
        self._classes: dict[str, tuple[str, list[str]]] = {}  # normalized class alias → (name, members)
        self._encounter: dict[str, str] = {}  # normalized phrase → class code
        self._combinations: list[str] = []  # generics of several ingredients, most ingredients first
        self._words_by_view: dict[str, frozenset[str]] = {}  # view → one-word aliases (words_in)
        self._aliases: dict[str, frozenset[str]] | None = None  # term → its aliases (aliases_of), built on first use
        self._build()

    # --- loading -------------------------------------------------------------------------------------

    @classmethod
    def load(cls, folder: Path | str | None = None) -> Lexicon:
        """The lexicon from ``folder`` (default: the project's ``lexicon/``); cached per folder."""
        if folder is None:
            from fhirqa.project import data_dir

            return _load_default(data_dir("lexicon"))
        return _load_cached(str(Path(folder).resolve()))

    def _add(self, alias: str, expansion: Expansion) -> None:
        key = normalize(alias)
        if not key:
            return
        readings = self._index.setdefault(key, [])
        if all((e.term, e.source) != (expansion.term, expansion.source) for e in readings):
            readings.append(expansion)

    def _build(self) -> None:
        for name in FILES:
            for spelling in self.data[name].get("case_sensitive_in_text", []):
                self._case_sensitive.setdefault(normalize(spelling), set()).add(spelling)
        lab_codes = {e["term"]: tuple(c["code"] for c in e["codes"]) for e in self.data["abbreviations"]["entries"]}
        for entry in self.data["abbreviations"]["entries"]:
            codes = tuple(c["code"] for c in entry["codes"])
            detail = {k: entry[k] for k in ("kind", "unit", "components") if k in entry}
            for alias in [entry["term"], *entry["aliases"]]:
                self._add(alias, self._expansion(entry["term"], codes, "abbreviations", alias, detail))
                # A group of tests ("blood count", "LFTs") means each of its member tests, unioned by the
                # resolver like a drug class: one reading per member, with the member's own codes.
                for member in entry.get("members", []):
                    self._add(alias, self._expansion(member, lab_codes.get(member, ()), "lab_class", alias,
                                                     {"group": entry["term"]}))
        for drug in self.data["drugs"]["drugs"]:
            generic = drug["generic"]
            codes = tuple(c["code"] for c in drug["codes"])
            for alias in [generic, *drug["brands"], *drug["aliases"]]:
                self._generic.setdefault(normalize(alias), generic)
                self._add(alias, self._expansion(generic, codes, "drugs", alias, {"brands": drug["brands"]}))
        combos = [d["generic"] for d in self.data["drugs"]["drugs"] if "/" in d["generic"]]
        self._combinations = sorted(combos, key=lambda g: -g.count("/"))
        for group in self.data["drugs"]["classes"]:
            for alias in [group["name"], *group["aliases"]]:
                for variant in _medicine_word_variants(alias):
                    self._classes.setdefault(normalize(variant), (group["name"], list(group["members"])))
        for entry in self.data["conditions"]["entries"]:
            codes = tuple(c["code"] for c in entry["codes"])
            # ICD families beside the SNOMED codes: MIMIC-III and many FHIR servers code diagnoses in ICD only
            detail = {"icd": IcdFamilies.of(entry["icd"])} if entry.get("icd") else {}
            for alias in [entry["term"], *entry["aliases"]]:
                self._add(alias, self._expansion(entry["term"], codes, "conditions", alias, detail))
                # A kind of finding charted under many names ("rhythm": sinus rhythm, sinus tachycardia, atrial
                # fibrillation …): each member is one more reading, unioned by the resolver like a drug class.
                for member in entry.get("members", []):
                    self._add(alias, self._expansion(member, (), "condition_class", alias, {"group": entry["term"]}))
        for entry in self.data["procedures"]["entries"]:
            codes = tuple(c["code"] for c in entry.get("codes", []))
            for alias in [entry["term"], *entry["aliases"]]:
                self._add(alias, self._expansion(entry["term"], codes, "procedures", alias, {}))
                # Records name procedures many ways ("12-lead ECG", "Electrocardiogram"): each member name
                # fragment is one more reading, unioned by the resolver like a drug class.
                for member in entry.get("members", []):
                    if member != entry["term"]:
                        self._add(alias, self._expansion(member, (), "procedure_class", alias, {"group": entry["term"]}))
                if entry.get("name_parts"):
                    # A class named by the parts of its members' words ("-ectomy", "repair": an operation): the
                    # resolver unions every name holding one, save those holding a part of ``not_parts``.
                    parts = {"group": entry["term"], "name_parts": list(entry["name_parts"]),
                             "not_parts": list(entry.get("not_parts", []))}
                    self._add(alias, self._expansion(entry["term"], (), "procedure_class", alias, parts))
        for entry in self.data["immunizations"]["entries"]:
            # A vaccine word may mean several products (a tetanus shot: Td, Tdap or DTaP): each member
            # is one reading of source "vaccine_class", which the resolver unions.
            for alias in [entry["term"], *entry["aliases"]]:
                for member in entry.get("members", [entry["term"]]):
                    self._add(alias, self._expansion(member, (), "vaccine_class", alias, {"group": entry["term"]}))
        for group in self.data["encounters"]["classes"]:
            codes = (group["code"], *group.get("related_codes", []))
            for alias in [group["name"], *group["aliases"]]:
                self._encounter.setdefault(normalize(alias), group["code"])
                self._add(
                    alias,
                    self._expansion(group["name"], codes, "encounters", alias, {"class": group["code"]}),
                )
        for kind in self.data["encounters"].get("types", []):
            for alias in [kind["term"], *kind["aliases"]]:
                self._encounter.setdefault(normalize(alias), kind["class"])
                detail = {"class": kind["class"], "type_codes": kind["type_codes"]}
                self._add(alias, self._expansion(kind["term"], (kind["class"],), "encounters", alias, detail))

    @staticmethod
    def _expansion(
        term: str, codes: tuple[str, ...], source: str, alias: str, detail: dict[str, Any]
    ) -> Expansion:
        return Expansion(term, codes, source, normalize(alias), VIEWS[source], SYSTEMS[source], detail)

    # --- queries -------------------------------------------------------------------------------------

    def expand(self, phrase: str) -> list[Expansion]:
        """Every reading of ``phrase``: the whole phrase if known, else the known terms found inside it."""
        key = normalize(phrase)
        if not key:
            return []
        whole = self._lookup(key)
        if whole:
            return whole
        found: list[Expansion] = []
        for key in self._scan(phrase):
            for expansion in self._lookup(key):
                if expansion not in found:
                    found.append(expansion)
        return found

    def lookup(self, phrase: str) -> list[Expansion]:
        """The readings of ``phrase`` as a whole (an alias as written, case rules included), never of words inside it."""
        key = normalize(phrase)
        if not key or not self._allowed(key, phrase.strip()):
            return []
        return self._lookup(key)

    def _lookup(self, key: str) -> list[Expansion]:
        out = list(self._index.get(key, []))
        group = self._classes.get(key)
        if group:
            name, members = group
            named = {e.term for e in out}
            for member in members:
                if member in named:
                    continue
                codes = next(
                    (e.codes for e in self._index.get(normalize(member), []) if e.source == "drugs"), ()
                )
                out.append(
                    Expansion(
                        member, codes, "drug_class", key, "medication", SYSTEMS["drug_class"], {"class": name}
                    )
                )
        return out

    def _scan(self, phrase: str) -> list[str]:
        """Known aliases inside ``phrase``, longest first and not overlapping."""
        raw = _raw_tokens(phrase)
        norm = [_singular(t.lower()) for t in raw]
        keys: list[str] = []
        i = 0
        while i < len(norm):
            longer = self._respelt_longer(norm, i)
            if longer is not None:
                # "hemoglobn a1c": a slip the lexicon corrects ("hemoglobn" = hemoglobin) that, corrected, begins a
                # longer known term ("hemoglobin a1c") reads as that term, not as two
                keys.append(longer[0])
                i += longer[1]
                continue
            for width in range(min(MAX_WORDS, len(norm) - i), 0, -1):
                key = " ".join(norm[i : i + width])
                if (key in self._index or key in self._classes) and self._allowed(
                    key, " ".join(raw[i : i + width])
                ):
                    keys.append(key)
                    i += width
                    break
            else:
                i += 1
        return keys

    def _respelt_longer(self, norm: list[str], i: int) -> tuple[str, int] | None:
        """(key, words) when ``norm[i]`` is a one-word alias whose term, written out, starts a longer known alias
        with the words after it; None otherwise."""
        if i + 1 >= len(norm) or norm[i] not in self._index:
            return None
        for expansion in self._index[norm[i]]:
            term = normalize(expansion.term)
            if term == norm[i] or " " in term:
                continue
            for width in range(min(MAX_WORDS, len(norm) - i), 1, -1):
                key = " ".join([term, *norm[i + 1 : i + width]])
                if key in self._index:
                    return key, width
        return None

    def _allowed(self, key: str, written: str) -> bool:
        spellings = self._case_sensitive.get(key)
        return spellings is None or written in spellings or written.replace(" ", "") in spellings

    def aliases_of(self, term: str) -> frozenset[str]:
        """Every normalized alias that reads as ``term`` ("Platelets" → plt, plts, platelet count…)."""
        if self._aliases is None:
            by_term: dict[str, set[str]] = {}
            for key, readings in self._index.items():
                for expansion in readings:
                    by_term.setdefault(expansion.term, set()).add(key)
            self._aliases = {t: frozenset(keys) for t, keys in by_term.items()}
        return self._aliases.get(term, frozenset())

    def other_names(self, phrase: str) -> list[str]:
        """Other names of the concept ``phrase`` names (not of a class nor an encounter kind), longest first.

        A record may hold a diagnosis only under one of them ("sepsis" → "septicemia": ICD-9 titles name it
        so); names shorter than five letters are left out (abbreviations match too much when read alone).
        """
        lowered = phrase.lower().strip()
        out: list[str] = []
        for expansion in self.expand(phrase):
            if str(getattr(expansion, "source", "")).endswith("class") or expansion.source == "encounters":
                continue
            aliases = sorted(self.aliases_of(expansion.term), key=lambda a: (-len(a), a))
            out += [a for a in aliases if len(a) >= 5 and a != lowered and a not in out]
        return out

    def drug_generic(self, name: str) -> str | None:
        """The generic for a brand, other name or product string (``"Lasix 40mg"`` → ``"furosemide"``).

        A product naming several ingredients ("Amoxicillin 250 MG / Clavulanate 125 MG Oral Tablet") gives
        the combination ("amoxicillin/clavulanate") when the lexicon has it. ``None`` when nothing is known.
        """
        key = normalize(name)
        if key in self._generic:
            return self._generic[key]
        words = key.split()
        for combination in self._combinations:
            parts = [normalize(part).split() for part in combination.split("/")]
            if all(any(words[i : i + len(p)] == p for i in range(len(words))) for p in parts):
                return combination
        for width in range(min(MAX_WORDS, len(words)), 0, -1):  # longest known name inside the string
            for start in range(len(words) - width + 1):
                hit = self._generic.get(" ".join(words[start : start + width]))
                if hit:
                    return hit
        return None

    def drug_phrase(self, words: list[str], max_words: int = 4) -> str | None:
        """The longest run of ``words`` (at most ``max_words``) naming a drug or a drug class, first one wins."""
        for width in range(min(max_words, len(words)), 0, -1):
            for start in range(len(words) - width + 1):
                phrase = " ".join(words[start:start + width])
                if self.drug_generic(phrase) or self.class_members(phrase):
                    return phrase
        return None

    def class_members(self, name: str) -> list[str]:
        """Generic members of a drug class (``"statins"`` → atorvastatin, simvastatin…); ``[]`` if unknown."""
        group = self._classes.get(normalize(name))
        return list(group[1]) if group else []

    def drug_classes(self, generic: str) -> list[str]:
        """Names of the classes a generic belongs to."""
        target = self.drug_generic(generic) or generic
        return [g["name"] for g in self.data["drugs"]["classes"] if target in g["members"]]

    def encounter_class(self, phrase: str) -> str | None:
        """The v3 ActCode class for an encounter word (``"ER visit"`` → ``"EMER"``); ``None`` if unknown."""
        key = normalize(phrase)
        if key in self._encounter:
            return self._encounter[key]
        for key in self._scan(phrase):
            if key in self._encounter:
                return self._encounter[key]
        return None

    def terms(self) -> list[str]:
        """Every normalized alias the lexicon knows (drug classes included)."""
        return sorted(set(self._index) | set(self._classes))

    def words_in(self, view: str) -> frozenset[str]:
        """The one-word aliases whose readings live in ``view`` ("simvastatin", "zocor" for medications)."""
        cached = self._words_by_view.get(view)
        if cached is None:
            cached = frozenset(key for key, readings in self._index.items()
                               if " " not in key and any(e.view == view for e in readings))
            self._words_by_view[view] = cached
        return cached


@lru_cache(maxsize=4)
def _load_default(folder: Path) -> Lexicon:
    # Every question loads the default lexicon: skip resolving the path (a few syscalls) each time.
    return _load_cached(str(folder.resolve()))


@lru_cache(maxsize=4)
def _load_cached(folder: str) -> Lexicon:
    data: dict[str, dict[str, Any]] = {}
    for name in FILES:
        path = Path(folder) / f"{name}.json"
        try:
            data[name] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LexiconError(f"lexicon file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise LexiconError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    try:
        return Lexicon(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise LexiconError(f"lexicon in {folder} is malformed: missing or wrong field {exc}") from None
