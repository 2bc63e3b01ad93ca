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
# Words that say what to do with the rows, not which rows: they match column names (last_careunit) by accident.
_QUESTION_WORDS = frozenset("last first latest recent most highest lowest max min average mean many much ever current "
                            "currently value values date time when long since total count number trend change".split())


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
         embedder: Any = "auto", boost: dict[str, float] | None = None) -> list[Scored]:
    """Every non-empty table scored against ``question``, best first (``boost`` adds to a table's score)."""
    names = [n for n in descriptions if schema is None or schema.tables.get(n) is None or schema.tables[n].rows != 0]
    if not names:
        return []
    texts = [descriptions[n].retrieval_text() for n in names]
    lexical = BM25([tokenize(t) for t in texts]).scores([t for t in tokenize(question) if t not in _QUESTION_WORDS])
    top = max(lexical) or 1.0
    scored = [Scored(n, s / top, s / top) for n, s in zip(names, lexical, strict=True)]
    model = _embedder(embedder)
    if model is not None:
        vectors = model.encode([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        for item, sim in zip(scored, similarity, strict=True):
            item.semantic = float(sim)
            item.score = (1 - EMBEDDING_WEIGHT) * item.lexical + EMBEDDING_WEIGHT * max(0.0, float(sim))
    for item in scored:
        item.score += (boost or {}).get(item.table, 0.0)
    return sorted(scored, key=lambda s: (-s.score, s.table))


def view_boost(question: str, schema: Schema) -> dict[str, float]:
    """Tables of the clinical domains the question is about, from the offline parser and the lexicon.

    "What was his last potassium?" is about results (the lexicon knows potassium), so MIMIC-III's labevents and
    chartevents, or OMOP's measurement and observation, rank first even when no description says "potassium".
    """
    from datetime import UTC, datetime

    from fhirqa.agent.backends.offline.parser import parse
    from fhirqa.sql.domains import domain_tables

    pq = parse(question, datetime.now(UTC))
    views = list(dict.fromkeys([*pq.hinted, *pq.lexicon_views, *pq.views]))[:2]
    if pq.intent in ("age", "demographic", "lookup"):
        views = []
        for table in ("person", "patients", "death"):
            if table in schema.tables:
                return {table: 1.0}
    out: dict[str, float] = {}
    for weight, view in zip((1.0, 0.5), views, strict=False):
        for order, table in enumerate(domain_tables(schema, view)):
            out.setdefault(table, weight * max(0.5, 1 - 0.1 * order))  # a domain's main table first
    return out


def select_tables(question: str, descriptions: dict[str, TableDescription], schema: Schema | None = None, *,
                  k: int = 6, embedder: Any = "auto", boost: dict[str, float] | None = None) -> list[str]:
    """The ``k`` best tables for ``question`` plus the dictionaries they need."""
    if boost is None and schema is not None:
        boost = view_boost(question, schema)
    ranked = rank(question, descriptions, schema, embedder=embedder, boost=boost)
    chosen = [s.table for s in ranked[:k]]
    extra: list[str] = []
    for table in chosen:
        wanted = list(COMPANIONS.get(table, []))
        if schema is not None and schema.kind == "omop":
            entry = schema.tables.get(table)
            if entry is not None and any(c.name.endswith("_concept_id") for c in entry.columns):
                wanted.append("concept")
        extra.extend(w for w in wanted if w in descriptions and w not in chosen and w not in extra)
    return chosen + extra
