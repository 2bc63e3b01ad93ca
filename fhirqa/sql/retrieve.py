"""Table retrieval: the top-k tables for a question, from their descriptions.

Lexical BM25 over each table's name, description and column names always; when the shared sentence
embedder is available (:func:`fhirqa.agent.embeddings.get_embedder`), the cosine similarity of question
and description is blended in. Empty tables are left out, and a selected table brings its dictionaries
along (OMOP ``concept`` for ``*_concept_id`` columns; MIMIC ``d_labitems`` for ``labevents`` …).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fhirqa.agent.skills import BM25, tokenize
from fhirqa.sql.describe import TableDescription
from fhirqa.sql.schema import Schema

COMPANIONS = {"labevents": ["d_labitems"], "chartevents": ["d_items"], "inputevents_cv": ["d_items"],
              "inputevents_mv": ["d_items"], "outputevents": ["d_items"], "procedureevents_mv": ["d_items"],
              "diagnoses_icd": ["d_icd_diagnoses"], "procedures_icd": ["d_icd_procedures"]}
EMBEDDING_WEIGHT = 0.5


@dataclass
class Scored:
    """A table and how well it matches the question (0..1), with the parts of the score."""

    table: str
    score: float
    lexical: float
    semantic: float | None = None


def _embedder(choice: Any) -> Any:
    if choice is not None and choice != "auto":
        return choice or None
    from fhirqa.agent.embeddings import get_embedder

    return get_embedder()


def rank(question: str, descriptions: dict[str, TableDescription], schema: Schema | None = None, *,
         embedder: Any = "auto") -> list[Scored]:
    """Every non-empty table scored against ``question``, best first."""
    names = [n for n in descriptions if schema is None or schema.tables.get(n) is None or schema.tables[n].rows != 0]
    if not names:
        return []
    texts = [descriptions[n].retrieval_text() for n in names]
    lexical = BM25([tokenize(t) for t in texts]).scores(tokenize(question))
    top = max(lexical) or 1.0
    scored = [Scored(n, s / top, s / top) for n, s in zip(names, lexical, strict=True)]
    model = _embedder(embedder)
    if model is not None:
        vectors = model.encode([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        for item, sim in zip(scored, similarity, strict=True):
            item.semantic = float(sim)
            item.score = (1 - EMBEDDING_WEIGHT) * item.lexical + EMBEDDING_WEIGHT * max(0.0, float(sim))
    return sorted(scored, key=lambda s: (-s.score, s.table))


def select_tables(question: str, descriptions: dict[str, TableDescription], schema: Schema | None = None, *,
                  k: int = 6, embedder: Any = "auto") -> list[str]:
    """The ``k`` best tables for ``question`` plus the dictionaries they need."""
    ranked = rank(question, descriptions, schema, embedder=embedder)
    chosen = [s.table for s in ranked if s.score > 0][:k] or [s.table for s in ranked[:k]]
    extra: list[str] = []
    for table in chosen:
        wanted = list(COMPANIONS.get(table, []))
        if schema is not None and schema.kind == "omop":
            entry = schema.tables.get(table)
            if entry is not None and any(c.name.endswith("_concept_id") for c in entry.columns):
                wanted.append("concept")
        extra.extend(w for w in wanted if w in descriptions and w not in chosen and w not in extra)
    return chosen + extra
