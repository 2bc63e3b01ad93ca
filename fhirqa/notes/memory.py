"""One patient's indexed chunks held in memory, searched exactly: cosine over the vectors and BM25 over the words.

A question searches one patient's notes: tens to a few thousand chunks. LanceDB answers each query in
6–8 ms, nearly all of it per-query overhead (planning, an asynchronous hop per step); over one patient's
chunks an exact search in numpy takes well under a millisecond. The index stays in LanceDB (persistence,
incremental updates, many patients); :class:`PatientChunks` is a read-only copy of one patient's rows,
loaded once per index state and dropped when that patient's notes are re-indexed.

Text ranking is Okapi BM25 over the patient's own chunks (statistics of this patient's notes, which is the
collection a question searches), with the tokenizer LanceDB's full-text index uses by default: words of
letters and digits, lower-cased, English stop words removed, Snowball-stemmed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np

K1, B = 1.2, 0.75  # BM25 (Robertson et al.), the usual defaults
MAX_TOKEN = 40  # longer "words" are not indexed (as LanceDB's default)
# The English stop words of Lucene/Tantivy's default filter.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)
_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str] | None:
    try:
        import snowballstemmer
    except ImportError:  # without the stemmer words must match exactly (ranking only; nothing breaks)
        return None
    return lru_cache(maxsize=200_000)(snowballstemmer.stemmer("english").stemWord)


def terms(text: str) -> list[str]:
    """The indexed terms of ``text``, in order (duplicates kept)."""
    stem = _stemmer()
    words = [w for w in _WORD.findall(text.lower()) if len(w) <= MAX_TOKEN and w not in STOP_WORDS]
    return [stem(w) for w in words] if stem is not None else words


class PatientChunks:
    """A read-only copy of one patient's chunk rows (without vectors) and their unit vectors as a matrix."""

    def __init__(self, rows: list[dict[str, Any]], vectors: np.ndarray | None) -> None:
        self.rows = rows
        self.vectors = vectors  # (n, dim) float32, unit length; None when the index has no embeddings
        self._postings: dict[str, dict[int, int]] | None = None
        self._lengths: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def mask(self, since: datetime | None, until: datetime | None, section: str | None) -> np.ndarray:
        """Which chunks pass the time window (chunks without a time fail any window) and section filter."""
        keep = np.ones(len(self.rows), dtype=bool)
        if since is None and until is None and not section:
            return keep
        for i, row in enumerate(self.rows):
            moment = row.get("time")
            if since is not None or until is not None:
                if not isinstance(moment, datetime):
                    keep[i] = False
                    continue
                if (since is not None and moment < since) or (until is not None and moment > until):
                    keep[i] = False
                    continue
            if section and section not in (row.get("section") or ""):
                keep[i] = False
        return keep

    def by_vector(self, vector: np.ndarray, keep: np.ndarray, depth: int) -> list[dict[str, Any]]:
        """The ``depth`` nearest chunks by cosine distance, as rows with ``_distance`` (LanceDB's convention)."""
        if self.vectors is None or not keep.any():
            return []
        distances = 1.0 - self.vectors @ np.asarray(vector, dtype=np.float32)
        candidates = np.flatnonzero(keep)
        # Ties broken by position so the order is reproducible.
        order = candidates[np.lexsort((candidates, distances[candidates]))][:depth]
        return [{**self.rows[i], "_distance": float(distances[i])} for i in order]

    def by_text(self, query: str, keep: np.ndarray, depth: int) -> list[dict[str, Any]]:
        """The ``depth`` best chunks by BM25 for the query's terms (any of them), as rows with ``_score``."""
        postings, lengths = self._index()
        wanted = list(dict.fromkeys(terms(query)))
        if not wanted or not len(self.rows):
            return []
        n = len(self.rows)
        average = float(lengths.mean()) or 1.0
        scores = np.zeros(n, dtype=np.float64)
        for term in wanted:
            docs = postings.get(term)
            if not docs:
                continue
            idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            for i, tf in docs.items():
                scores[i] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[i] / average))
        candidates = np.flatnonzero(keep & (scores > 0))
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:depth]
        return [{**self.rows[i], "_score": float(scores[i])} for i in order]

    def _index(self) -> tuple[dict[str, dict[int, int]], np.ndarray]:
        if self._postings is None or self._lengths is None:
            postings: dict[str, dict[int, int]] = {}
            lengths = np.zeros(len(self.rows), dtype=np.float64)
            for i, row in enumerate(self.rows):
                counts = Counter(terms(row.get("text") or ""))
                lengths[i] = sum(counts.values())
                for term, tf in counts.items():
                    postings.setdefault(term, {})[i] = tf
            self._postings, self._lengths = postings, lengths
        return self._postings, self._lengths
