"""Item search: the note's name for something → the patient's own record items.

Observations, conditions, procedures and vaccines go through the question-answering resolver
(:class:`~fhirqa.agent.resolver.ConceptResolver`: codes, exact names, the lexicon, word containment, then
character-bigram similarity above a threshold). Drugs are matched by generic: brand → generic through the
lexicon on both sides ("Zocor" and "Simvistatin 10 MG" are simvastatin), else the drug's words, else
bigram similarity ≥ :data:`DRUG_SIMILARITY` with the product's drug words. A drug the medication view does not
hold may be a procedure ("IM epinephrine" → "Injection of adrenaline"). Results say how they matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fhirqa.agent.lexicon import Lexicon, normalize
from fhirqa.agent.resolver import ConceptResolver, codes_by_item, components_by_panel, core_name, dice
from fhirqa.consistency.model import Entity
from fhirqa.consistency.terms import BRANDS

DRUG_SIMILARITY = 0.78
_BRANDS = {normalize(brand): generic for brand, generic in BRANDS.items()}
NAME_FIELDS = {"observation": "name", "medication": "medication_name", "condition": "name", "procedure": "name",
               "immunization": "name"}


@dataclass
class Match:
    """The record items an entity's name stands for."""

    view: str
    names: list[str] = field(default_factory=list)
    how: str = "none"
    candidates: list[str] = field(default_factory=list)


def drug_words(product: str) -> str:
    """The drug part of a product name: "24 HR Metformin hydrochloride 500 MG …" → "metformin hydrochloride"."""
    low = product.lower()
    low = re.sub(r"^\s*[\d.]+\s*(?:hr|ml|actuat|day)\s+", "", low)
    words = re.split(r"\s[\d.]+\s*(?:mg|mcg|unt|ml|g|meq|%)|\[|\s\d", low)[0]
    return re.sub(r"\s+", " ", words).strip()


class ItemIndex:
    """One patient's items per view (``rows`` is a PatientRows: ``rows(view)`` / ``items(view)``)."""

    def __init__(self, rows: Any, lexicon: Lexicon | None = None) -> None:
        self.data = rows
        self.lexicon = lexicon or Lexicon.load()
        self._resolver = ConceptResolver(codes_of=self._codes_of, lexicon=self.lexicon, children_of=self._children_of)
        self._cache: dict[tuple[str, str, str], Match] = {}
        self._drugs: dict[str, str] | None = None
        self._names: dict[str, list[str]] = {}
        self._codes: dict[str, dict[str, set[str]]] = {}
        self._children: dict[str, dict[str, list[str]]] = {}

    def names(self, view: str) -> list[str]:
        """Distinct item names of a view (read once)."""
        if view not in self._names:
            try:
                self._names[view] = list(self.data.items(view))
            except Exception:  # noqa: BLE001 - a view missing from a store means no items
                self._names[view] = []
        return self._names[view]

    def _codes_of(self, view: str) -> dict[str, set[str]]:
        if view not in self._codes:
            self._codes[view] = codes_by_item(self.data, view)
        return self._codes[view]

    def _children_of(self, view: str) -> dict[str, list[str]]:
        if view not in self._children:
            self._children[view] = components_by_panel(self.data, view)
        return self._children[view]

    def find(self, entity: Entity) -> Match:
        """The items an entity names (cached per view, phrase and blood-pressure component)."""
        phrase = entity.search or entity.name
        key = (entity.view, phrase, entity.component)
        if key not in self._cache:
            if entity.view == "medication":
                found = self._drug(phrase)
                if not found.names:
                    found = self._drug_as_procedure(phrase, found)
            else:
                found = self._concept(entity.view, phrase, entity.component)
            self._cache[key] = found
        return self._cache[key]

    def _concept(self, view: str, phrase: str, component: str) -> Match:
        names = self.names(view)
        if not names:
            return Match(view)
        if phrase in names:
            return Match(view, [phrase], "record")
        resolution = self._resolver(view, phrase, names)
        matched = list(resolution.matched)
        if component and matched:
            matched = [n for n in matched if component in n.lower()] or matched
        if view != "observation" and matched and resolution.how.startswith(("words", "lexicon:")):
            # for existence, every item holding the same words counts ("x-ray": ankle and upper arm x-rays)
            want = set(core_name(matched[0]).split()) & set(core_name(phrase).split()) or set(core_name(phrase).split())
            matched += [n for n in names if n not in matched and want and want <= set(core_name(n).split())]
        return Match(view, matched, resolution.how or "none", list(resolution.candidates))

    def _generic(self, name: str) -> str:
        generic = self.lexicon.drug_generic(name) or _BRANDS.get(normalize(name))
        return generic.lower() if generic else normalize(drug_words(name))

    def _drug(self, phrase: str) -> Match:
        names = self.names("medication")
        if not names:
            return Match("medication")
        if phrase in names:
            return Match("medication", [phrase], "record")
        if self._drugs is None:
            self._drugs = {n: self._generic(n) for n in names}
        want = self._generic(phrase)
        hits = [n for n, g in self._drugs.items() if g and (g == want or want in g.split("/") or g in want.split("/"))]
        if hits:
            return Match("medication", hits, "generic")
        first = want.split()[0] if want else ""
        hits = [n for n in names if first and len(first) > 3 and first in normalize(n).split()]
        if hits:
            return Match("medication", hits, "words")
        scored = sorted(((max((dice(want, w) for w in drug_words(n).split()), default=0.0), n) for n in names),
                        reverse=True)
        if scored and scored[0][0] >= DRUG_SIMILARITY:
            return Match("medication", [n for s, n in scored if s >= scored[0][0] - 0.02], "fuzzy")
        return Match("medication", [], "none", [n for _, n in scored[:5]])

    def _drug_as_procedure(self, phrase: str, found: Match) -> Match:
        """A drug given as a procedure ("IM epinephrine" → "Injection of adrenaline")."""
        generic = self.lexicon.drug_generic(phrase) or phrase
        words = {normalize(generic)}
        for drug in self.lexicon.data["drugs"]["drugs"]:
            if drug["generic"] == generic:
                words |= {normalize(a) for a in [*drug["aliases"], *drug["brands"]]}
        hits = [n for n in self.names("procedure") if any(w and w in normalize(n) for w in words)]
        if hits:
            return Match("procedure", hits, "procedure")
        allergies = [n for n in self.names("allergy") if any(w and w in normalize(n) for w in words)]
        if allergies:  # "presenting with mold, sulfamethoxazole / trimethoprim, tree nut": allergens
            return Match("allergy", allergies, "allergy")
        return found
