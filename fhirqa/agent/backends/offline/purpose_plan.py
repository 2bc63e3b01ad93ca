"""What a patient takes for something: "is she on anything for pain?", "what is he taking for his blood pressure?",
"any meds for sleep?".

The purpose after "for" names the drug class that treats it (``lexicon/medication_purposes.json``: pain →
analgesic, blood pressure → antihypertensive …), and the question becomes one about that class: a yes/no is whether a
member is on the active list ("is she on an analgesic?"), a "what" the class's active members. A purpose the file
does not know leaves the question as it was: the word "pain" alone is a pain score, never a drug.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fhirqa.agent.backends.offline.parser import ParsedQuestion


@lru_cache(maxsize=1)
def _spec() -> tuple[list[re.Pattern[str]], dict[str, str]]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("medication_purposes.json")
    return [re.compile(p) for p in spec["frames"]], {k.lower(): v for k, v in spec["purposes"].items()}


def purpose_class(pq: ParsedQuestion) -> str | None:
    """The drug class a "for <purpose>" question names, or None."""
    frames, purposes = _spec()
    text = " ".join(pq.text.lower().replace("’", "'").split()).strip(" ?.!")
    for frame in frames:
        found = frame.search(text)
        if found is not None:
            purpose = re.sub(r"\s+(?:now|currently|right now|at home|today)$", "", found.group("purpose").strip())
            return purposes.get(purpose)
    return None


def purpose_named(phrase: str) -> str | None:
    """The drug class that treats ``phrase`` when it is a purpose the lexicon knows ("pain": analgesic), else None."""
    return _spec()[1].get(" ".join(phrase.lower().split()))


def ask_as_class(pq: ParsedQuestion, drug_class: str) -> None:
    """Turn ``pq`` into the same question about ``drug_class``: whether one is active, or which are."""
    pq.entity, pq.list_kind, pq.views = drug_class, "medication", ["medication"]
    text = " ".join(pq.text.lower().split()).strip(" ?.!")
    # "what's she on for BP?", and "BP regimen?", "current HTN meds": a list; "is she on anything for pain?": a yes/no
    asks_which = re.match(r"^\s*(?:what|which|list|name)\b", text) is not None or (
        re.search(r"\b(?:regimen|meds|medications|medicines|drugs|rx|therapy|treatment)$", text) is not None
        and re.match(r"^(?:is|are|was|were|does|do|did|has|have|any|on)\b", text) is None)
    pq.intent = "active_list" if asks_which else "active_check"
    pq.notes.append(f"'for …' read as the drug class {drug_class!r} (lexicon/medication_purposes.json)")
