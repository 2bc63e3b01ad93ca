"""Skills: short procedure documents (``skills/*.md``) retrieved per question for the composer's prompt.

A skill file is Markdown with a small YAML-like front matter::

    ---
    name: temporal-reasoning
    description: one line, used for retrieval
    tags: [time, window]
    views: [observation, medication]
    ---
    # Title
    ## When to use
    ## Steps
    ## Success indicators
    ## Failure indicators

:class:`SkillIndex` ranks skills for a question by cosine similarity of sentence embeddings (the shared
MiniLM of :mod:`fhirqa.agent.embeddings`) over name + description + "When to use", blended with BM25
over the same text plus tags; with embeddings unavailable or ``FHIRQA_EMBEDDINGS=off`` it uses BM25 alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fhirqa.agent.embeddings import Embedder, get_embedder
from fhirqa.errors import FhirqaError

REQUIRED_SECTIONS = ("When to use", "Steps", "Success indicators", "Failure indicators")
EMBEDDING_WEIGHT = 0.6  # share of the (min-max scaled) cosine in the blended score; BM25 has the rest


class SkillError(FhirqaError):
    """A skill file is malformed (no front matter, missing name/description or a required section)."""


@dataclass(frozen=True)
class Skill:
    """One procedure document."""

    name: str
    description: str
    tags: tuple[str, ...]
    views: tuple[str, ...]
    body: str  # the Markdown after the front matter
    sections: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    path: Path | None = None

    @property
    def when_to_use(self) -> str:
        """The "When to use" section's text."""
        return self.sections.get("When to use", "")

    def retrieval_text(self) -> str:
        """What embeddings are computed over: name, description and "When to use"."""
        return f"{self.name.replace('-', ' ')}. {self.description}\n{self.when_to_use}"

    def prompt_text(self) -> str:
        """The skill as it goes into a prompt (its Markdown body)."""
        return self.body.strip()


def load_skills(folder: Path | str | None = None) -> list[Skill]:
    """All skills in ``folder`` (default: the project's ``skills/``), sorted by name."""
    if folder is None:
        from fhirqa.project import data_dir

        folder = data_dir("skills")
    folder = Path(folder)
    if not folder.is_dir():
        raise SkillError(f"skills folder not found: {folder}")
    skills = [parse_skill(p.read_text(encoding="utf-8"), p) for p in sorted(folder.glob("*.md"))]
    names = Counter(s.name for s in skills)
    duplicates = sorted(n for n, c in names.items() if c > 1)
    if duplicates:
        raise SkillError(f"duplicate skill names in {folder}: {', '.join(duplicates)}")
    return sorted(skills, key=lambda s: s.name)


def parse_skill(text: str, path: Path | None = None) -> Skill:
    """Parse one skill document; a :class:`SkillError` names the file and what is missing."""
    where = str(path) if path else "<skill>"
    match = re.match(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n(.*)\Z", text.lstrip("\ufeff"), re.S)
    if not match:
        raise SkillError(f"{where}: no front matter (a '---' block at the top)")
    meta = _parse_front_matter(match.group(1), where)
    body = match.group(2)
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise SkillError(f"{where}: front matter needs a '{key}'")
    sections = _sections(body)
    missing = [s for s in REQUIRED_SECTIONS if not sections.get(s, "").strip()]
    if missing:
        raise SkillError(f"{where}: missing or empty section(s): {', '.join(missing)}")
    return Skill(
        name=str(meta["name"]),
        description=str(meta["description"]),
        tags=tuple(_as_list(meta.get("tags"))),
        views=tuple(_as_list(meta.get("views"))),
        body=body,
        sections=sections,
        path=path,
    )


def _parse_front_matter(block: str, where: str) -> dict[str, str | list[str]]:
    """``key: value``, ``key: [a, b]`` and ``key:`` followed by ``- item`` lines."""
    meta: dict[str, str | list[str]] = {}
    current: str | None = None
    for number, raw in enumerate(block.splitlines(), start=2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and current is not None:
            value = meta.get(current)
            meta[current] = ([*value] if isinstance(value, list) else []) + [_unquote(item.group(1))]
            continue
        pair = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if not pair:
            raise SkillError(f"{where}:{number}: cannot read front matter line {line!r}")
        current, value = pair.group(1), pair.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            meta[current] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[current] = _unquote(value) if value else []
    return meta


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _sections(body: str) -> dict[str, str]:
    """Level-2 headings → their text."""
    sections: dict[str, str] = {}
    parts = re.split(r"^##[ \t]+(.+?)[ \t]*$", body, flags=re.M)
    for heading, text in zip(parts[1::2], parts[2::2], strict=True):
        sections[heading.strip()] = text.strip()
    return sections


# --- BM25 ----------------------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    "a an and are as at be been by did do does for from had has have he her his how i if in is it its "
    "me my of on or our she that the their them then there these this those to was we were what when "
    "where which who whom why will with you your patient patients".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens without stopwords, with plural and -ing/-ed endings stripped."""
    tokens = []
    for word in re.findall(r"[a-z0-9]+", text.lower().replace("'s", "")):
        if word in _STOPWORDS:
            continue
        tokens.append(_stem(word))
    return tokens


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


class BM25:
    """Okapi BM25 over a small fixed corpus."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.avg_length = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        """One score per document (0 when no query term occurs in it)."""
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / (self.avg_length or 1.0))
            score = 0.0
            for term in query:
                tf = doc.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out


# --- index ---------------------------------------------------------------------------------------------


class SkillIndex:
    """Ranks skills for a question: embeddings blended with BM25, or BM25 alone."""

    def __init__(
        self, skills: list[Skill], embedder: Embedder | None = None, use_embeddings: bool = True
    ) -> None:
        self.skills = list(skills)
        self._embedder = embedder
        self._use_embeddings = use_embeddings
        lexical = [f"{s.retrieval_text()} {' '.join(s.tags)}" for s in self.skills]
        self._bm25 = BM25([tokenize(text) for text in lexical])

    def get(self, name: str) -> Skill:
        """A skill by name (KeyError when unknown)."""
        for skill in self.skills:
            if skill.name == name:
                return skill
        raise KeyError(name)

    def embedder(self) -> Embedder | None:
        """The embedder in use: the one given, else the shared one (``None`` → BM25 only)."""
        if not self._use_embeddings:
            return None
        return self._embedder if self._embedder is not None else get_embedder()

    def scored(self, question: str, k: int = 3) -> list[tuple[Skill, float]]:
        """The ``k`` best skills with their scores, best first."""
        if not self.skills or k <= 0:
            return []
        lexical = self._bm25.scores(tokenize(question))
        top = max(lexical)
        lexical = [s / top for s in lexical] if top > 0 else [0.0] * len(lexical)
        embedder = self.embedder()
        if embedder is None:
            scores = lexical
        else:
            vectors = embedder.encode(
                [s.retrieval_text() for s in self.skills]
            )  # cached after the first call
            query = embedder.encode([question])[0]
            cosine = [float(x) for x in vectors @ query]
            low, high = min(cosine), max(cosine)
            scaled = [(c - low) / (high - low) if high > low else 0.0 for c in cosine]
            scores = [
                EMBEDDING_WEIGHT * c + (1 - EMBEDDING_WEIGHT) * b
                for c, b in zip(scaled, lexical, strict=True)
            ]
        order = sorted(range(len(self.skills)), key=lambda i: (-scores[i], self.skills[i].name))
        return [(self.skills[i], scores[i]) for i in order[:k]]

    def search(self, question: str, k: int = 3) -> list[Skill]:
        """The ``k`` skills best suited to ``question``, best first."""
        return [skill for skill, _ in self.scored(question, k)]


@lru_cache(maxsize=1)
def default_index() -> SkillIndex:
    """An index over the project's ``skills/`` (loaded once; embeddings follow ``FHIRQA_EMBEDDINGS``)."""
    return SkillIndex(load_skills())
