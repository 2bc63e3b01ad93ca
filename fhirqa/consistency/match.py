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
from fhirqa.consistency.vocab import QUALIFIERS, SALTS, SHORTHAND
from fhirqa.consistency.vocab import normalize as note_normalize

DRUG_SIMILARITY = 0.78
_BRANDS = {normalize(brand): generic for brand, generic in BRANDS.items()}
_SHORTHAND_LABS = {note_normalize(alias): search for alias, (category, search) in SHORTHAND.items()
                   if category in ("lab", "vital")}
NAME_FIELDS = {"observation": "name", "medication": "medication_name", "condition": "name", "procedure": "name",
               "immunization": "name"}


@dataclass
class Match:
    """The record items an entity's name stands for."""

    view: str
    names: list[str] = field(default_factory=list)
    how: str = "none"
    candidates: list[str] = field(default_factory=list)
    reason: str = ""  # why nothing matched, when it is more than "no such item" (another salt of the drug)


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
        self._forms: dict[str, str] | None = None
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
                if not found.names and found.how != "other salt":
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
        if view != "observation" and not resolution.matched and not resolution.ambiguous:
            for other in self.other_names(phrase):
                again = self._resolver(view, other, names)
                if again.matched and not again.ambiguous and not again.how.startswith("fuzzy"):
                    again.how = f"{again.how} (as '{other}')"
                    resolution = again
                    break
        matched = list(resolution.matched)
        if component and matched:
            matched = [n for n in matched if component in n.lower()] or matched
        if view == "observation" and matched:
            matched = self.same_analyte(matched)
        if view != "observation" and matched and resolution.how.startswith(("words", "lexicon:")):
            # for existence, every item holding the same words counts ("x-ray": ankle and upper arm x-rays)
            want = set(core_name(matched[0]).split()) & set(core_name(phrase).split()) or set(core_name(phrase).split())
            matched += [n for n in names if n not in matched and want and want <= set(core_name(n).split())]
        return Match(view, matched, resolution.how or "none", list(resolution.candidates))

    def other_names(self, phrase: str) -> list[str]:
        """The lexicon's other names of the concept ``phrase`` names (``Lexicon.other_names``)."""
        return self.lexicon.other_names(phrase)

    def analyte(self, name: str) -> str:
        """The analyte an observation name stands for: its core ("Erythrocytes [#/volume] in Blood by Automated
        count" → erythrocyte) without the shorthand table's qualifier words (auto, calc, serum…), read through the
        shorthand aliases and the lexicon's whole-name aliases ("RBC Auto (Bld) [#/Vol]" → rbc → erythrocyte).
        Only a whole name is read: "Hemoglobin A1c" is not hemoglobin."""
        words = [w for w in note_normalize(core_name(name)).split() if w not in QUALIFIERS]
        phrase = " ".join(words)
        if not phrase:
            return ""
        alias = _SHORTHAND_LABS.get(phrase)
        if alias:
            return note_normalize(alias)
        for expansion in self.lexicon.expand(phrase):
            if expansion.source == "abbreviations" and expansion.matched == normalize(phrase):
                return note_normalize(core_name(expansion.term))
        return phrase

    def same_analyte(self, matched: list[str]) -> list[str]:
        """``matched`` plus the patient's other observation items of the same analyte: Synthea records some
        blood counts twice under two names ("Erythrocytes [#/volume] in Blood by Automated count" and "RBC Auto
        (Bld) [#/Vol]"); a note's value is consistent when any of them holds it. Same analyte: a LOINC code in
        common, or names that read as the same analyte (:meth:`analyte`)."""
        codes = self._codes_of("observation")
        wanted = set().union(*(codes.get(n, set()) for n in matched))
        keys = {self.analyte(n) for n in matched} - {""}
        extra = [n for n in self.names("observation") if n not in matched
                 and (wanted & codes.get(n, set()) or self.analyte(n) in keys)]
        return matched + extra

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
        # the note's drug is the product's or one of its ingredients ("acetaminophen" for Percocet); a combination
        # named in the note (Norco: hydrocodone/acetaminophen) is not a product of one of its ingredients
        hits = [n for n, g in self._drugs.items() if g and (g == want or want in g.split("/"))]
        if hits:
            return self._same_salt(phrase, want, hits)
        first = want.split()[0] if want else ""
        hits = [n for n in names if first and len(first) > 3 and first in normalize(n).split()]
        if hits:
            return Match("medication", hits, "words")
        scored = sorted(((max((dice(want, w) for w in drug_words(n).split()), default=0.0), n) for n in names),
                        reverse=True)
        if scored and scored[0][0] >= DRUG_SIMILARITY:
            return Match("medication", [n for s, n in scored if s >= scored[0][0] - 0.02], "fuzzy")
        return Match("medication", [], "none", [n for _, n in scored[:5]])

    def salts(self, text: str, generic: str = "") -> frozenset[str]:
        """The salt words of a drug name (``SALTS`` of the shorthand table), not counting the generic's own words:
        "24 HR metoprolol succinate 100 MG …" → {succinate}; "potassium chloride" → {} (the generic itself)."""
        own = set(re.findall(r"[a-z]+", generic.lower()))
        return frozenset(SALTS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in SALTS and w not in own)

    def brand_form(self, phrase: str) -> str:
        """The salt a brand names, from ``brand_forms`` of the drug lexicon ("Lopressor" → metoprolol tartrate)."""
        if self._forms is None:
            self._forms = {normalize(brand): form for drug in self.lexicon.data["drugs"]["drugs"]
                           for brand, form in (drug.get("brand_forms") or {}).items()}
        return self._forms.get(normalize(phrase), "")

    def _same_salt(self, phrase: str, generic: str, hits: list[str]) -> Match:
        """Products of the drug ``hits`` that are the salt the note names. A brand of one salt (Lopressor:
        metoprolol tartrate) or a salt written out is another drug than a product of another salt of the same
        ingredient (24 HR metoprolol succinate, Toprol XL); a name or product without a salt matches any."""
        form = self.brand_form(phrase)
        want = self.salts(form or phrase, generic)
        if not want:
            return Match("medication", hits, "generic")
        same = [n for n in hits if not (have := self.salts(n, self._drugs.get(n, "") if self._drugs else "")) or have == want]
        if same:
            return Match("medication", same, "generic")
        named = f"{phrase} ({form})" if form and normalize(form) != normalize(phrase) else phrase
        return Match("medication", [], "other salt", hits,
                     f"wrong drug: {named} is another salt than the record's {', '.join(hits[:3])}")

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
