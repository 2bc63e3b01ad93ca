"""Allergens as people name them (session 18): "allergic to bee stings?" once answered "No" beside an "Allergy to bee
venom", "cats?" beside an animal dander allergy, "milk?" beside a dairy allergy. The allergy list is read through
``lexicon/allergens.json`` first; an allergen the record does not hold is a plain No, and no cross-reactivity is
inferred (a bee venom allergy is no wasp allergy).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.allergens import allergen_named, find_allergies
from fhirqa.agent.resolver import ConceptResolver

from .test_tools_helpers import offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)
ON_FILE = {"bee": "Allergy to bee venom", "dander": "Dander (animal) allergy", "dairy": "Allergy to dairy product",
           "mite": "House dust mite allergy", "nut": "Allergy to nut"}  # Synthea's names


def _allergy(aid: str, name: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"AllergyIntolerance/{aid}", "name": name, "category": "food",
            "clinical_status": "active", "criticality": "low", "recorded_time": "2015-03-17T00:00:00", "reaction": None}


VIEWS = {"allergy": [_allergy(aid, name) for aid, name in ON_FILE.items()]}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


@pytest.mark.parametrize(("question", "aid"), [
    ("allergic to bee stings?", "bee"), ("any insect sting allergy?", "bee"), ("is she allergic to cats?", "dander"),
    ("dog allergy?", "dander"), ("milk allergy?", "dairy"), ("allergic to dust?", "mite"), ("walnut allergy?", "nut"),
])
def test_an_allergen_in_everyday_words_finds_the_recorded_allergy(question: str, aid: str) -> None:
    got = ask(question)
    assert got["answer"] == [True] and f"AllergyIntolerance/{aid}" in got["cited"]
    assert "read as" in got["text"]  # the answer says how the word was read


@pytest.mark.parametrize("question", ["is she allergic to wasps?", "shellfish allergy?", "allergic to peanuts?",
                                      "contrast allergy?"])
def test_an_allergen_the_record_does_not_hold_is_no(question: str) -> None:
    # wasp venom is not bee venom; peanuts are not the tree nuts of "Allergy to nut"
    assert ask(question)["answer"] == [False]


def test_codes_find_an_allergy_whatever_its_name() -> None:
    resolve = ConceptResolver(codes_of=lambda view: {"Hymenoptera hypersensitivity": {"424213003"}})
    assert resolve("allergy", "bee stings", ["Hymenoptera hypersensitivity"]).matched == ["Hymenoptera hypersensitivity"]
    # another view never reads the table: "cat" there is a word like any other
    assert not resolve("procedure", "cat", ["Dander (animal) allergy"]).how.startswith("allergen")


def test_the_longest_allergen_inside_a_phrase_is_the_one_named() -> None:
    bee, nut = allergen_named("any bee sting allergy"), allergen_named("peanut butter")
    assert bee is not None and bee.term == "bee venom"
    assert nut is not None and nut.term == "peanut"
    assert allergen_named("penicillin") is None  # drugs are the general lexicon's
    assert find_allergies("cats", ["Allergy to mould"], {}) is None
