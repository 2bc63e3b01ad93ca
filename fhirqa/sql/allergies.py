"""Allergy questions over a relational record: "NKDA?", "any drug allergies?", "allergic to penicillin?", "allergies?".

A clinician asking wants the patient's allergy list, whatever form the record keeps it in:

- OMOP CDM keeps allergies as ``observation`` rows (the ``allergy`` view of :mod:`fhirqa.sql.domains`); the rows
  active now answer, as the FHIR path's allergy list does. An allergen of a category asked about ("drug
  allergies", "NKDA") is one the row's category names, or, for drugs, one the lexicon or the vocabulary files as a
  drug (OMOP observation rows carry no allergy category).
- MIMIC-III keeps no structured allergy list: the latest note with an Allergies section answers
  (:func:`fhirqa.sql.notes.allergies_in_notes`); without one the answer says plainly that the record holds no
  structured allergy list and no note documents allergies (no-data, never a "No").

An OMOP record whose list holds nothing for the patient is read the same way: the notes, when they document
allergies, come first (a list with no rows may only mean allergies were never coded).
"""

from __future__ import annotations

import re
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.sql.offline_sql import Compiler, Final, day, final
from fhirqa.sql.reading import tokens, words
from fhirqa.sql.records import Spec

#: The text of a record that has no allergy table at all (MIMIC-III).
NO_STRUCTURED_LIST = "The record holds no structured allergy list (this database has no allergy table)"


def allergy_question(pq: ParsedQuestion) -> bool:
    """Whether the question asks about the allergy list (its words point at allergies, or it is the list's name)."""
    if pq.list_kind == "allergy":
        return True
    return "allergy" in pq.hinted and pq.intent in ("value", "exists", "active_check", "list_items")


def asked_category(pq: ParsedQuestion) -> tuple[str | None, str]:
    """``(category, substance)``: the category words of the question ("drug", "food") and the substance named
    ("penicillin"), either empty. "NKDA" asks about the parser's category (medication)."""
    categories = words()["allergies"]["categories"]
    category = pq.list_category
    substance: list[str] = []
    for word in tokens(pq.entity or ""):
        named = next((name for name, spec in categories.items() if word in spec["words"]), None)
        if named is not None:
            category = category or named
        elif word not in ("any", "known", "allergy", "allergies", "allergic", "to"):
            substance.append(word)
    if category is None:  # "any drug allergies?": the parser read "drug" as a pointer to medications, not the item
        category = next((name for word in tokens(pq.text) for name, spec in categories.items()
                         if word in spec["words"]), None)
    return category, " ".join(substance)


def answer(c: Compiler) -> Final:
    """The allergy question over the structured record (see the module docstring)."""
    pq, data = c.pq, c.data
    if "allergy" not in data.views:
        return final([], f"{NO_STRUCTURED_LIST}.", status="no-data")
    from fhirqa.sql.offline_intents import _active

    extra, params = _active(c, "allergy", pq.at_time)
    when = f"on {pq.at_time.date()}" if pq.at_time else "currently"
    rows = data.select(Spec("allergy"), extra=extra, params=params, order="r.time ASC, r.row_id ASC")
    category, substance = asked_category(pq)
    named: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row.get("name") is not None:
            named.setdefault(str(row["name"]), row)
    for row in named.values():
        data.cite(row, "name")
    listed = "; ".join(named)
    if not named:
        result = _empty(pq, category, substance, when)
        result["empty_list"] = True  # the notes may document what was never coded
        return result
    if substance:
        found = c.find(["allergy"], entity=substance)
        hits = [n for n in (found.items if found and not found.ambiguous else []) if n in named]
        if hits:
            return final([True], f"Yes: allergy to {'; '.join(hits)} recorded (since {day(named[hits[0]].get('time'))}).")
        return final([False], f"No: no allergy to {substance} is recorded {when} (allergies on file: {listed}).")
    if category:
        coded = [_of_category(c, n, row, category) for n, row in named.items()]
        if None in coded:  # OMOP rows carry no category: the list, saying so, rather than a guess
            return final(list(named), f"Allergies {when}: {listed} (the record does not code which are {category} "
                         "allergies).")
        hits = [n for n, hit in zip(named, coded, strict=True) if hit]
        what = f"{category} allerg{'y' if pq.aggregate == 'absent' else 'ies'}"
        if pq.aggregate == "absent":  # "NKDA?": Yes when no allergy of the category is on the list
            if hits:
                return final([False], f"No: {what} recorded {when}: {'; '.join(hits)}.")
            return final([True], f"Yes: no {what} is recorded {when} (other allergies on file: {listed}).")
        if hits:
            return final([True], f"Yes: {what} recorded {when}: {'; '.join(hits)}.")
        return final([False], f"No {what} recorded {when} (other allergies on file: {listed}).")
    if pq.aggregate == "absent":
        return final([False], f"No: allergies recorded {when}: {listed}.")
    if pq.intent in ("exists", "active_check"):
        return final([True], f"Yes: allergies recorded {when}: {listed}.")
    if pq.aggregate == "count":
        return final([len(named)], f"{len(named)} allergies recorded {when}: {listed}.")
    return final(list(named), f"Allergies {when}: {listed}.")


def _empty(pq: ParsedQuestion, category: str | None, substance: str, when: str) -> Final:
    """The answer when the patient's allergy list holds nothing."""
    what = f"allergy to {substance}" if substance else f"{category} allergy" if category else "allergy"
    if pq.aggregate == "absent":
        return final([True], f"Yes: no {what} is recorded {when} (the allergy list is empty).")
    if pq.aggregate == "count":
        return final([0], f"0 allergies recorded {when}.")
    if substance or category or pq.intent in ("exists", "active_check"):
        return final([False], f"No: no {what} is recorded {when} (the allergy list is empty).")
    return final([], f"No allergies recorded {when} (the allergy list is empty).")


def _of_category(c: Compiler, name: str, row: dict[str, Any], category: str) -> bool | None:
    """Whether the allergen ``name`` is of ``category``: the row's own category says so, or (drugs) the lexicon or
    the database's vocabulary files the name as a drug; None when nothing tells (a food asked, no category coded)."""
    spec = words()["allergies"]["categories"].get(category) or {}
    own = str(row.get("category") or "").lower()
    if own:
        return category in own or any(w in own for w in spec.get("words", []))
    if not spec.get("is_drug"):
        return None
    from fhirqa.agent.backends.offline.parser import _lexicon_views

    return "medication" in _lexicon_views(name.lower())[:1] or "medication" in c.data.concept_views(name)


def list_split() -> re.Pattern[str]:
    """The separators of a note's allergy line ("Penicillins / Codeine")."""
    return re.compile(words()["allergies"]["list_split"], re.I)
