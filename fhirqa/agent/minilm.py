"""The packaged MiniLM sentence encoder run with numpy: the same vectors as sentence-transformers, without torch.

all-MiniLM-L6-v2 is a 6-layer BERT (hidden size 384, 12 heads) followed by mean pooling over the tokens and unit
normalisation. Its forward pass is a few matrix products per layer, which numpy does as fast as torch on a CPU for
the short texts fhirqa embeds (a question, note chunks). What numpy saves is the start: importing torch and
sentence-transformers costs seconds in every new process (a CLI question that reaches the notes paid ~4-9 s for
it); this module imports in well under one. The tokenizer is the model's own ``tokenizer.json`` (Hugging Face
``tokenizers``), the weights its ``model.safetensors``; ``tests/agent/test_minilm.py`` holds the vectors equal to
sentence-transformers' on the same texts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

#: Tokens kept per text, as the model's ``sentence_bert_config.json`` says (256 for all-MiniLM-L6-v2).
_DEFAULT_MAX_TOKENS = 256
#: Texts encoded together: bounds the attention matrices' memory (batch × heads × tokens²).
_BATCH = 32


class MiniLM:
    """A BERT sentence encoder (mean pooling, unit vectors) loaded from a sentence-transformers model folder."""

    def __init__(self, folder: str | Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text("utf-8"))
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"{folder}: not a BERT model with GELU activations; use the sentence-transformers engine")
        pooling = folder / "1_Pooling" / "config.json"
        if pooling.exists() and not json.loads(pooling.read_text("utf-8")).get("pooling_mode_mean_tokens"):
            raise ValueError(f"{folder}: pooling is not the mean of the tokens; use the sentence-transformers engine")
        settings = folder / "sentence_bert_config.json"
        self.max_tokens = int(json.loads(settings.read_text("utf-8")).get("max_seq_length", _DEFAULT_MAX_TOKENS)) \
            if settings.exists() else _DEFAULT_MAX_TOKENS
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.layers = int(config["num_hidden_layers"])
        self.dimension = int(config["hidden_size"])
        self.normalize = (folder / "2_Normalize").exists() or _lists_normalize(folder)
        weights = load_file(str(folder / "model.safetensors"))
        self._w = {k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in weights.items()}
        for name in [k for k in self._w if k.endswith(".weight") and self._w[k].ndim == 2 and "embeddings." not in k]:
            self._w[name] = np.ascontiguousarray(self._w[name].T)  # stored (out, in); products want (in, out)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        pad = self._tokenizer.token_to_id("[PAD]")
        self._pad = 0 if pad is None else pad

    def encode(self, texts: list[str]) -> np.ndarray:
        """One float32 row per text: the mean of its last layer's token vectors (unit length when the model says)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Texts of like length go together (as sentence-transformers does), so a batch pads little.
        self._tokenizer.no_padding()
        lengths = [len(e.ids) for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), _BATCH):
            picked = order[start:start + _BATCH]
            out[picked] = self._encode_batch([texts[i] for i in picked])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self._tokenizer.enable_padding(pad_id=self._pad, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self._forward(ids, types, mask)
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
        if self.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)

    def _forward(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        length = ids.shape[1]
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = self._norm(x, "embeddings.LayerNorm")
        # a padded position takes no attention: the most negative float32 added before the softmax, as BERT does
        blocked = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            attended = self._attention(x, p + "attention.self.", blocked)
            x = self._norm(self._dense(attended, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = _gelu(self._dense(x, p + "intermediate.dense"))
            x = self._norm(self._dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def _attention(self, x: np.ndarray, prefix: str, blocked: np.ndarray) -> np.ndarray:
        batch, length, width = x.shape
        size = width // self.heads

        def heads(name: str) -> np.ndarray:
            return self._dense(x, prefix + name).reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / np.sqrt(size))
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        weight = self._w[name + ".weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight  # one 2-D product: BLAS's fastest path
        flat += self._w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self._w[name + ".weight"] + self._w[name + ".bias"]


def _lists_normalize(folder: Path) -> bool:
    modules = folder / "modules.json"
    if not modules.exists():
        return False
    listed: list[dict[str, Any]] = json.loads(modules.read_text("utf-8"))
    return any(str(m.get("type", "")).endswith(".Normalize") for m in listed)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf: scipy's when installed (C, fast); else to ~1e-7 (float32's own precision) by the Chebyshev fit of erfc
    in Numerical Recipes (erfcc), a few times slower."""
    try:
        from scipy.special import erf
    except ImportError:
        return _erf_fit(x)
    return erf(x, out=x) if x.dtype == np.float32 else np.asarray(erf(x), dtype=np.float32)


def _erf_fit(x: np.ndarray) -> np.ndarray:
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU: x·Φ(x), with the exact (erf) form, not the tanh approximation (in place where it can)."""
    phi = _erf(x * np.float32(1.0 / np.sqrt(2.0)))
    phi += np.float32(1.0)
    phi *= np.float32(0.5)
    phi *= x
    return phi
