"""Allergens as people name them, read against the allergy list only (``lexicon/allergens.json``).

"Allergic to bee stings?" is an allergy to bee venom, "cats?" one to animal dander, "milk?" one to dairy: words the
general lexicon either lacks or reads as something else ("cat" scans, "dye" in a lab's name). The resolver asks this
table first when it looks for an item in the allergy view; a phrase it does not know, or an allergen the record does
not hold, goes on to the general search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Allergen:
    """One allergen of the table: what it is called, how records code and name it, what else it covers."""

    term: str
    codes: frozenset[str]
    names: re.Pattern[str]
    members: tuple[str, ...]
    note: str | None


@dataclass(frozen=True)
class AllergenMatch:
    """The allergies of the record an allergen word found, and the allergen it was read as."""

    matched: list[str]
    allergen: Allergen


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, Allergen], dict[str, str]]:
    """(term → allergen, alias → term) from the lexicon file."""
    from fhirqa.project import lexicon_file

    allergens: dict[str, Allergen] = {}
    aliases: dict[str, str] = {}
    for entry in lexicon_file("allergens.json")["entries"]:
        names = "|".join(re.escape(n.lower()) for n in entry["names"])
        allergens[entry["term"]] = Allergen(entry["term"], frozenset(entry.get("codes", ())),
                                            re.compile(rf"(?<![a-z])(?:{names})(?:e?s)?(?![a-z])"),
                                            tuple(entry.get("members", ())), entry.get("note"))
        for alias in [entry["term"], *entry["aliases"]]:
            aliases.setdefault(_words(alias), entry["term"])
    return allergens, aliases


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower().replace("’", "'")))


def allergen_named(phrase: str) -> Allergen | None:
    """The allergen a phrase names: the phrase itself, else the longest alias inside it ("any bee sting allergy")."""
    allergens, aliases = _table()
    words = _words(phrase)
    if words in aliases:
        return allergens[aliases[words]]
    tokens = words.split()
    for size in range(min(len(tokens), 4), 0, -1):
        for start in range(len(tokens) - size + 1):
            term = aliases.get(" ".join(tokens[start:start + size]))
            if term is not None:
                return allergens[term]
    return None


def find_allergies(phrase: str, names: list[str], codes_of: dict[str, set[str]]) -> AllergenMatch | None:
    """The allergy names (of ``names``) the allergen ``phrase`` names covers, by code or by name; None when the phrase
    names no allergen of the table or the record holds none of it."""
    allergen = allergen_named(phrase)
    if allergen is None:
        return None
    allergens, _ = _table()
    covered = [allergen, *(allergens[m] for m in allergen.members if m in allergens)]
    matched = [n for n in names if any(a.codes & codes_of.get(n, set()) or a.names.search(n.lower()) for a in covered)]
    return AllergenMatch(matched, allergen) if matched else None


def reading_said(how: str, asked: str | None) -> str:
    """" (cats read as animal dander: …)": how an allergen word was read, from a resolution's ``how``
    ("allergen:<term>"); "" when it was not read through this table or was asked by its own name."""
    if not how.startswith("allergen:"):
        return ""
    allergen = _table()[0].get(how.split(":", 1)[1])
    if allergen is None or _words(asked or "") == _words(allergen.term):
        return ""
    note = f", {allergen.note}" if allergen.note else ""
    return f" ({asked} read as {allergen.term}{note})"
