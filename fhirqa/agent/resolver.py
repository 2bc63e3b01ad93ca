"""Resolve what a question calls an item ("A1c", "K", "lasix", "sbp") to the record's own item names.

Passes, first hit wins: codes named in the question; exact name; the lexicon (abbreviations,
synonyms, brand → generic, with their codes; a condition's ICD-9-CM / ICD-10-CM code families); word containment on names stripped of specimen and
method qualifiers; character-bigram similarity above a threshold. When nothing matches, the nearest
names come back as candidates so the caller can say what the record does hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from fhirqa.agent.allergens import find_allergies
from fhirqa.agent.tools.base import Resolution

# Words that describe a measurement rather than name it ("potassium level", "a1c result").
_FILLER = frozenset(
    "level levels value values result results reading readings test tests measurement measurements "
    "lab labs number score the a an of my her his their patient patients s".split()
)
# Words that say a drug was used, not which one ("hydromorphone use", "opioid usage"): dropped when no name of
# the view holds them, so the drug itself is found.
_USAGE = frozenset("use usage user exposure therapy treatment".split())
# Specimen / property / method qualifiers in LOINC-style names that do not tell analytes apart.
_QUALIFIERS = re.compile(
    # Blood, serum and plasma are one specimen for a clinician; urine and other fluids are not.
    r"\[[^\]]*\]|\([^)]*\)|\b(?:in|by|from)\s+(?:serum or plasma|serum|plasma|blood|arterial blood|venous blood|"
    r"capillary blood)\b(?!\s+(?:and|or)\s+urine).*$|\bby (?:automated count|calculation|manual count|test strip|cdc|ckd-epi|mdrd)\b.*$"
)
_TOKEN = re.compile(r"[a-z0-9]+")
FUZZY_THRESHOLD = 0.62
TRUNCATABLE_VIEWS = ("medication",)  # clinicians cut drug names short ("simva", "atorva", "metfor")
MIN_TRUNCATION = 4  # letters a cut-short name keeps
ICD_VIEWS = ("condition",)  # views whose codes may be ICD-9-CM / ICD-10-CM diagnosis codes


def tokens(text: str) -> list[str]:
    """Lower-case word tokens with a light plural stem ("platelets" → "platelet")."""
    out = []
    # "b12" and "B 12" are one name: split letters from digits on both sides of every comparison
    text = re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", " ", text.lower())
    for token in _TOKEN.findall(text):
        if len(token) > 4 and token.endswith("ies"):
            token = token[:-3] + "y"  # polypectomies → polypectomy
        elif len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
        out.append(_spellings().get(token, token))  # "mould" = "mold"
    return out


@lru_cache(maxsize=1)
def _spellings() -> dict[str, str]:
    """One spelling for British and American forms of a word (lexicon/spellings.json)."""
    from fhirqa.project import data_dir

    try:
        return dict(json.loads((data_dir("lexicon") / "spellings.json").read_text("utf-8")).get("variants", {}))
    except FileNotFoundError:
        return {}


@lru_cache(maxsize=4096)
def core_name(name: str) -> str:
    """An item name without specimen/method qualifiers: "Glucose [Mass/volume] in Blood" → "glucose"."""
    stripped = _QUALIFIERS.sub(" ", name.lower())
    return " ".join(tokens(stripped)) or " ".join(tokens(name))


def bigrams(text: str) -> set[str]:
    """Character bigrams of a squashed string."""
    squashed = re.sub(r"[^a-z0-9]", "", text.lower())
    return {squashed[i : i + 2] for i in range(len(squashed) - 1)} or {squashed}


def osa_similarity(a: str, b: str) -> float:
    """1 − optimal-string-alignment distance / length: forgives a transposed pair ("metfromin")."""
    a, b = a.lower(), b.lower()
    if not a or not b:
        return 0.0
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return 1 - prev[len(b)] / max(len(a), len(b))


def dice(a: str, b: str) -> float:
    """Dice coefficient of character bigrams, 0..1."""
    x, y = bigrams(a), bigrams(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x and y else 0.0


def _phrase_tokens(phrase: str) -> list[str]:
    words = tokens(phrase)
    # a letter after a name is part of it ("hep a", "vitamin a"), not the article: "hep a" must not be "Hep B"
    return [t for i, t in enumerate(words) if t not in _FILLER or (len(t) == 1 and i > 0 and words[i - 1] not in _FILLER)]


# Word endings that change a word's form, not its meaning ("suturing" = "suture", "vaccination" = "vaccine",
# "excised" = "excision"), longest first; the stem left must keep 4 letters.
_ENDINGS = ("ations", "ation", "ated", "ings", "ing", "ions", "ion", "ied", "ed", "es", "e", "s")


def stem(token: str) -> str:
    """A word without its inflection or -ing/-ion form: suturing, sutured, suture → sutur."""
    for ending in _ENDINGS:
        if token.endswith(ending) and len(token) - len(ending) >= 4:
            return token[: -len(ending)]
    return token


def _coded(expansion: object, held: set[str]) -> bool:
    """Whether an item's codes ``held`` hold one of the lexicon reading's codes."""
    return bool(set(getattr(expansion, "codes", ()) or ()) & held)


def _in_icd_family(expansion: object, held: set[str]) -> bool:
    """Whether an item's codes ``held`` fall in the lexicon reading's ICD-9-CM / ICD-10-CM families (a diagnosis
    coded 410.71, "41071" in MIMIC-III, is a myocardial infarction)."""
    families = (getattr(expansion, "detail", None) or {}).get("icd")
    return families is not None and families.any_match(held)


def _icd_elsewhere(held: set[str]) -> bool:
    """Whether an item is coded in ICD (its reading was checked against the families and none held it)."""
    from fhirqa.agent.lexicon import IcdFamilies

    return any(IcdFamilies.system_of(code) for code in held)


def _named_by_parts(expansion: object, names: Iterable[str]) -> list[str]:
    """Names holding a word part of a class the lexicon defines by its members' words ("-ectomy" for an operation),
    and none of its ``not_parts`` ("referral", "evaluation": about an operation, not one)."""
    detail = getattr(expansion, "detail", None) or {}
    parts, refused = detail.get("name_parts") or (), detail.get("not_parts") or ()
    if not parts:
        return []
    return [n for n in names if any(p in n.lower() for p in parts) and not any(r in n.lower() for r in refused)]


def _containment(phrase_tokens: list[str], names: Iterable[str], lenient: bool = True,
                 form: Callable[[str], str] | None = None) -> list[tuple[float, str]]:
    """Names whose core holds every phrase token (or, ``lenient``, is held by the phrase), scored by tightness.

    ``form`` maps every word before comparing (``stem``: "suturing" holds in "Suture open wound")."""
    def words(text: str) -> set[str]:
        kept = _without_strengths(text.split())
        return {form(w) for w in kept} if form else set(kept)

    want = {form(t) for t in phrase_tokens} if form else set(phrase_tokens)
    scored = []
    for name in names:
        have = words(core_name(name))
        if not have or not want:
            continue
        if want <= have or (lenient and have <= want and len(have & want) >= max(1, len(want) - 1)):
            scored.append((len(want & have) / max(len(have), len(want)), name))
        elif want <= words(" ".join(tokens(name))):
            # "Lantus (insulin glargine) …", "Shingrix (zoster vaccine …)": the generic sits in the parentheses
            # the core drops; a match there counts, a little below a match on the core.
            scored.append((0.9 * len(want) / max(len(have | want), 1), name))
    return sorted(scored, reverse=True)


@lru_cache(maxsize=1)
def _strength_units() -> frozenset[str]:
    """Units that follow a number in a product name (``lexicon/drugs.json`` ``strength_units``)."""
    from fhirqa.project import data_dir

    try:
        data = json.loads((data_dir("lexicon") / "drugs.json").read_text("utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(u.lower() for u in data.get("strength_units", []))


def _without_strengths(words: list[str]) -> list[str]:
    """A name's words without the units of its strengths ("naproxen 500 mg oral tablet" → naproxen, 500, oral,
    tablet): "MG" after a number is milligrams, so "Mg" (magnesium) does not name the product."""
    units = _strength_units()
    kept: list[str] = []
    after_number = False
    for word in words:
        if after_number and word in units:
            continue  # "10 mg ml": every unit of the strength
        after_number = bool(re.fullmatch(r"[\d.,/]+", word))
        kept.append(word)
    return kept


class ConceptResolver:
    """Callable ``(view, phrase, names) -> Resolution`` over one patient's items.

    ``codes_of(view)`` gives ``{item name: {codes}}`` for code matching; ``lexicon`` expands
    clinician words (``expand(phrase) -> [Expansion(term, codes, source)]``) and may be None.
    """

    def __init__(
        self,
        codes_of: Callable[[str], dict[str, set[str]]] | None = None,
        lexicon: object | None = None,
        children_of: Callable[[str], dict[str, list[str]]] | None = None,
    ):
        self.codes_of = codes_of or (lambda view: {})
        self.children_of = children_of or (lambda view: {})
        self.lexicon = lexicon if lexicon is not None else _default_lexicon()

    def __call__(self, view: str, phrase: str, names: list[str]) -> Resolution:
        if view == "allergy":
            # "bee stings", "cats", "milk": allergens in people's words, read against the allergy list only
            found = find_allergies(phrase, names, self.codes_of(view))
            if found is not None:
                return Resolution(found.matched, how=f"allergen:{found.allergen.term}")
        # a phrase the lexicon knows whole ("urine microalbumin") already names its specimen by code
        known_whole = any(len(str(getattr(e, "matched", "")).split()) >= len(phrase.split()) for e in self._expand(phrase))
        if view == "observation" and not known_whole:
            specimen = _specimen(phrase, names)
            if specimen is not None:  # "UA glucose": a urine item only; "urinalysis": every urine item
                narrowed, kept, whole = specimen
                if whole:
                    return Resolution(kept, [], how="specimen")
                resolution = self._resolve(view, narrowed, kept)
                if not resolution.matched:
                    # the lexicon may know the analyte with its specimen ("urine microalbumin creatinine ratio": an alias
                    # holding "urine"), by code; a term found without it ("UA protein" -> serum protein) is not one
                    spoken = any(_specimen(str(getattr(e, "matched", "")), []) is not None for e in self._expand(phrase))
                    coded = self._resolve(view, phrase, names) if spoken else None
                    if coded is not None and coded.how.startswith(("lexicon-code", "code")):
                        return coded
                    return Resolution([], kept[:5], how="specimen")
                phrase, names = narrowed, kept
        resolution = self._resolve(view, phrase, names)
        if not resolution.matched and "/" in phrase and not re.search(r"\d", phrase):
            # "Td/Tdap", "pneumovax/prevnar": either one, when the whole is no name (a drug pair "pip/tazo" is one)
            parts = [self._resolve(view, part, names) for part in phrase.split("/") if len(part.strip()) > 1]
            union = list(dict.fromkeys(n for part in parts if not part.ambiguous for n in part.matched))
            if len(parts) > 1 and union:
                resolution = Resolution(union, how="alternatives")
        if view == "observation" and len(resolution.matched) > 1:
            resolution.matched = _by_property(phrase, resolution.matched)
        # A panel (blood pressure) carries no value of its own: it means its components.
        children = self.children_of(view)
        if resolution.matched and any(children.get(n) for n in resolution.matched):
            expanded: list[str] = []
            for name in resolution.matched:
                expanded.extend(children.get(name) or [name])
            resolution.matched = list(dict.fromkeys(expanded))
            resolution.how += "+components"
        return resolution

    def _resolve(self, view: str, phrase: str, names: list[str], truncated: bool = False) -> Resolution:
        phrase = phrase.strip()
        names = [n for n in dict.fromkeys(names) if n]
        if not phrase or not names:
            return Resolution([], names[:5])
        lowered = phrase.lower()
        codes = self.codes_of(view)

        # 1. codes written in the question (LOINC 4548-4, RxNorm 314076, SNOMED 44054006)
        literal = set(re.findall(r"\b\d{3,9}(?:-\d)?\b", phrase))
        by_code = [n for n in names if literal & codes.get(n, set())]
        if by_code:
            return Resolution(by_code, how="code")
        # 2. exact name, or exact core name
        exact = [n for n in names if n.lower() == lowered or core_name(n) == " ".join(_phrase_tokens(phrase))]
        if exact:
            return Resolution(exact, how="exact")
        # 3. lexicon: codes first, then the canonical terms by containment. A class ("statin") means
        #    every member the record holds; a synonym means the first term that matches.
        expansions = self._expand(phrase)
        members: list[str] = []
        for expansion in expansions:
            source = getattr(expansion, "source", "")
            coded = [n for n in names if _coded(expansion, codes.get(n, set()))]
            # ICD families are read on diagnoses only: a drug's RxNorm code may look like an ICD-9 one (29046)
            in_family = [n for n in names if n not in coded and _in_icd_family(expansion, codes.get(n, set()))] \
                if view in ICD_VIEWS else []
            scored = _containment(_phrase_tokens(getattr(expansion, "term", "")), names, lenient=False)
            hits = coded or [n for _, n in scored] or self._named_by_alias(expansion, names) or _named_by_parts(expansion, names)
            if in_family and not coded:
                # an ICD-coded diagnosis ("41071": Subendocardial infarction) is the condition by its code; rows that
                # name it in words (a rhythm charted "AF (Atrial Fibrillation)") are the same condition too
                # (a name coded in ICD outside the families is another condition: "Old myocardial infarction", 412)
                named = [n for n in (self._best(scored, view) if scored else hits) if not _icd_elsewhere(codes.get(n, set()))]
                return Resolution(list(dict.fromkeys([*in_family, *named])), how=f"lexicon-icd:{source}")
            if not hits:
                continue
            if source.endswith("class") or any(getattr(e, "source", "").endswith("class") for e in expansions):
                members.extend(h for h in hits if h not in members)
                continue
            if coded:
                return Resolution(coded, how=f"lexicon-code:{source}")
            if not scored:
                return Resolution(hits, how=f"lexicon-alias:{source}")
            return Resolution(self._best(scored, view), how=f"lexicon:{source}")
        if members:
            return Resolution(members, how="lexicon:class")
        # 3b. usage words no name holds ("hydromorphone use"): the phrase without them
        words = tokens(phrase)
        usage = [w for w in words if w in _USAGE]
        if usage and len(usage) < len(words) and not truncated:
            held = {w for n in names for w in tokens(n)}
            if not set(usage) & held:
                return self._resolve(view, " ".join(w for w in words if w not in _USAGE), names, truncated)
        # 4. the phrase's own words; when the lexicon knew the phrase but the record lacks it, only an
        #    item holding every word counts ("glycated hemoglobin" must not become plain "Hemoglobin").
        scored_words = _containment(_phrase_tokens(phrase), names, lenient=not expansions)
        if scored_words:
            return Resolution(self._best(scored_words, view), how="words")
        # 4b. the same words in another form: "suturing" is the procedure "Suture open wound"
        scored_words = _containment(_phrase_tokens(phrase), names, lenient=not expansions, form=stem)
        if scored_words:
            return Resolution(self._best(scored_words, view), how="word forms")
        # 4c. a drug name cut short ("simva", "metfor"): the one drug of this patient it can begin
        if not expansions and view in TRUNCATABLE_VIEWS and not truncated:
            completed = self._completion(view, phrase, names)
            if completed is not None:
                return completed
        # 5. spelling: bigram similarity against whole names, cores and single words of names. A phrase
        #    the lexicon knows is spelled right: it is simply not in this record.
        scored = sorted(((self._similarity(phrase, n), n) for n in names), reverse=True)
        if expansions:
            return Resolution([], [n for _, n in scored[:5]], how="none")
        # a phrase of several words is misspelled word by word: every word must be a typo of a word of the name
        # ("sinus bradycardia" is not "Sinus tachycardia": three letters apart)
        close = [(s, n) for s, n in scored if s >= FUZZY_THRESHOLD and _words_typo_close(phrase, n)]
        if close:
            top = close[0][0]
            best = [n for s, n in close if s >= top - 0.02]
            cores = {core_name(n) for n in best}
            if len(cores) > 1 and view == "observation":
                return Resolution([], [n for _, n in scored[:5]], ambiguous=True, how="fuzzy")
            return Resolution(best, how="fuzzy")
        return Resolution([], [n for _, n in scored[:5]], how="none")

    def _completion(self, view: str, phrase: str, names: list[str]) -> Resolution | None:
        """The items a truncated word means, when every word it can begin (in the record's names or the lexicon's
        names for this view) reaches the same items of this patient; None when it begins nothing or is ambiguous."""
        words = _phrase_tokens(phrase)
        if len(words) != 1 or len(words[0]) < MIN_TRUNCATION or not words[0].isalpha():
            return None
        cut = words[0]
        known = {w for n in names for w in tokens(n)}
        words_in = getattr(self.lexicon, "words_in", None)
        if callable(words_in):
            known |= set(words_in(view))
        completions = sorted(w for w in known if w.startswith(cut) and len(w) >= len(cut) + 2)
        reached: dict[frozenset[str], str] = {}
        for word in completions:
            found = self._resolve(view, word, names, truncated=True)
            if found.matched:
                reached.setdefault(frozenset(found.matched), word)
        if len(reached) != 1:
            return None
        matched, word = next(iter(reached.items()))
        return Resolution([n for n in names if n in matched], how=f"prefix:{word}")

    def _named_by_alias(self, expansion: object, names: list[str]) -> list[str]:
        """Names that are one of the term's aliases as a whole ("PLT" for Platelets), for records without codes."""
        aliases_of = getattr(self.lexicon, "aliases_of", None)
        if not callable(aliases_of):
            return []
        aliases = aliases_of(getattr(expansion, "term", ""))
        return [n for n in names if " ".join(tokens(core_name(n))) in aliases or " ".join(tokens(n)) in aliases]

    def _expand(self, phrase: str) -> list[object]:
        if self.lexicon is None:
            return []
        try:
            found = list(self.lexicon.expand(phrase))  # type: ignore[attr-defined]
        except AttributeError:
            return []
        if found or len(phrase) < 5:
            return found
        corrected = closest_term(self.lexicon, phrase.lower())
        return list(self.lexicon.expand(corrected)) if corrected else []  # type: ignore[attr-defined]

    @staticmethod
    def _similarity(phrase: str, name: str) -> float:
        core = core_name(name)
        words = core.split()
        best = max(dice(phrase, name), dice(phrase, core))
        if words and " " not in phrase.strip():
            best = max(best, max(max(dice(phrase, w), osa_similarity(phrase, w) if len(phrase) >= 5 else 0.0)
                                 for w in set(words) | set(tokens(name))) - 0.05)
        return best

    @staticmethod
    def _best(hits: list[tuple[float, str]], view: str) -> list[str]:
        """Every name as tight as the best match; for drugs, every product of the same drug."""
        if view in ("medication", "immunization"):
            return [n for _, n in hits]
        top = hits[0][0]
        return [n for s, n in hits if s >= top - 1e-9]


def _typo_distance(word: str) -> int:
    """Edits a misspelling of ``word`` may hold: none under 4 letters, 1 under 8, else 2."""
    return 0 if len(word) < 4 else 1 if len(word) < 8 else 2


def _words_typo_close(phrase: str, name: str) -> bool:
    """Whether every word of a several-word ``phrase`` is a word of ``name``, one cut short, or a typo of one."""
    words = _phrase_tokens(phrase)
    if len(words) < 2:
        return True
    have = set(tokens(name))
    for word in words:
        if word in have or (len(word) >= MIN_TRUNCATION and any(w.startswith(word) for w in have)):
            continue  # the word itself, or cut short ("sinus brady")
        if not any(round((1 - osa_similarity(word, w)) * max(len(word), len(w))) <= _typo_distance(word) for w in have):
            return False
    return True


@lru_cache(maxsize=1024)
def _closest_term_cached(terms: tuple[str, ...], phrase: str) -> str | None:
    limit = 1 if len(phrase) < 8 else 2
    best, best_distance = None, limit + 1
    for term in terms:
        if abs(len(term) - len(phrase)) > limit or term[:1] != phrase[:1]:
            continue
        distance = round((1 - osa_similarity(term, phrase)) * max(len(term), len(phrase)))
        if distance < best_distance:
            best, best_distance = term, distance
    return best


def closest_term(lexicon: object, phrase: str) -> str | None:
    """The lexicon term a misspelled phrase most likely meant ("staten" → "statin"), within 1–2 edits."""
    terms = getattr(lexicon, "_terms_tuple", None)
    if terms is None:
        terms = tuple(t for t in lexicon.terms() if len(t) >= 4)  # type: ignore[attr-defined]
        try:
            lexicon._terms_tuple = terms  # type: ignore[attr-defined]
        except AttributeError:
            return None
    return _closest_term_cached(terms, phrase)


@lru_cache(maxsize=1)
def _specimen_data() -> dict[str, Any]:
    from fhirqa.project import data_dir

    try:
        return json.loads((data_dir("lexicon") / "item_groups.json").read_text("utf-8"))
    except FileNotFoundError:
        return {}


def _word_pattern(word: str) -> str:
    return rf"(?<![\w/]){re.escape(word)}(?![\w/])"


def _specimen(phrase: str, names: list[str]) -> tuple[str, list[str], bool] | None:
    """A phrase naming a group of results, a specimen or a kind of test (lexicon/item_groups.json): (the phrase with
    the group's own word, the names of that group, whether the group is all it names); None when it names none."""
    lowered = phrase.lower()
    for specimen, spec in (_specimen_data().get("groups") or {}).items():
        words = sorted(spec.get("words", []), key=len, reverse=True)
        if not any(re.search(_word_pattern(w), lowered) for w in words):
            continue
        rest = lowered
        for word in words:
            rest = re.sub(_word_pattern(word), " ", rest)
        aliases = spec.get("aliases") or {}
        rest_words = [aliases.get(w, w) for w in rest.split()]
        kept = [n for n in names if re.search(spec["name_pattern"], n, re.IGNORECASE)]
        remaining = [w for w in rest_words if w not in _FILLER and w not in spec.get("filler", [])]
        rest_words = [w for w in rest_words if w not in spec.get("filler", [])]
        return " ".join([specimen, *rest_words]).strip(), kept, not remaining
    return None


def _by_property(phrase: str, matched: list[str]) -> list[str]:
    """Of several matched items, those of the property the phrase names ("glucose presence": the coded result)."""
    lowered = phrase.lower()
    for spec in (_specimen_data().get("properties") or {}).values():
        if any(re.search(_word_pattern(w), lowered) for w in spec.get("words", [])):
            kept = [n for n in matched if re.search(spec["name_pattern"], n, re.IGNORECASE)]
            return kept or matched
    return matched


def _default_lexicon() -> object | None:
    try:
        from fhirqa.agent.lexicon import Lexicon
    except ImportError:
        return None
    try:
        return Lexicon.load()
    except Exception:  # noqa: BLE001 - a missing lexicon degrades matching; it must not stop answering
        return None


def codes_by_item(data: object, view: str) -> dict[str, set[str]]:
    """``{item name: {codes}}`` of one patient's view (``data`` is a PatientRows)."""
    from fhirqa.agent.catalog import UnknownView, view_info

    try:
        info = view_info(view)
    except UnknownView:
        return {}
    out: dict[str, set[str]] = {}
    if not info.code_field:
        return out
    for row in data.rows(view):  # type: ignore[attr-defined]
        name, code = row.get(info.name_field), row.get(info.code_field)
        if name and code:
            out.setdefault(str(name), set()).add(str(code))
    return out


def components_by_panel(data: object, view: str) -> dict[str, list[str]]:
    """``{panel name: [component names]}`` for observation panels such as blood pressure."""
    if view != "observation":
        return {}
    out: dict[str, list[str]] = {}
    for row in data.rows(view):  # type: ignore[attr-defined]
        if row.get("is_component") and row.get("parent_name") and row.get("name"):
            names = out.setdefault(str(row["parent_name"]), [])
            if row["name"] not in names:
                names.append(str(row["name"]))
    return out
