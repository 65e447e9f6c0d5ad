"""A BERT encoder in numpy: embeddings, self-attention layers, mean pooling (inference only).

Written for sentence-transformers' all-MiniLM-L6-v2 (6 layers, hidden 384, 12 heads,
intermediate 1536, GELU, post-layer-norm, absolute positions) but reads those sizes from
the weights and `config.json`, so other BERT-style checkpoints of the same layout load too.
Everything is float32; the exact (erf) GELU uses a rational approximation of erf whose
error (< 1.5e-7) is below float32 resolution. Tensor names are Hugging Face's `BertModel`
names (`embeddings.*`, `encoder.layer.N.*`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from keel.embeddings.port import EmbeddingError, Vectors, normalize_rows

F32 = NDArray[np.float32]


@dataclass(frozen=True, kw_only=True, slots=True)
class Layer:
    """One transformer layer; matrices are stored input-major (`x @ w`)."""

    qkv_w: F32
    qkv_b: F32
    out_w: F32
    out_b: F32
    ln1_w: F32
    ln1_b: F32
    up_w: F32
    up_b: F32
    down_w: F32
    down_b: F32
    ln2_w: F32
    ln2_b: F32


@dataclass(frozen=True, kw_only=True, slots=True)
class BertWeights:
    """Embedding tables and layers of a BERT encoder."""

    word: F32
    position: F32
    token_type: F32
    ln_w: F32
    ln_b: F32
    layers: tuple[Layer, ...]
    heads: int
    eps: float

    @property
    def hidden(self) -> int:
        """Width of the hidden states (the vector dimension after pooling)."""
        return int(self.word.shape[1])


def load_weights(tensors: Mapping[str, NDArray[Any]], config: Mapping[str, Any]) -> BertWeights:
    """`BertWeights` from Hugging Face tensor names (an optional `bert.` prefix is dropped)."""
    t = {k.removeprefix("bert."): v for k, v in tensors.items()}

    def get(name: str) -> F32:
        if name not in t:
            raise EmbeddingError(f"weights lack tensor {name!r}: not a BERT checkpoint")
        return np.ascontiguousarray(t[name], dtype=np.float32)

    count = int(config.get("num_hidden_layers", 0)) or _layer_count(t)
    layers = tuple(_layer(get, f"encoder.layer.{i}.") for i in range(count))
    return BertWeights(
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type=get("embeddings.token_type_embeddings.weight"),
        ln_w=get("embeddings.LayerNorm.weight"),
        ln_b=get("embeddings.LayerNorm.bias"),
        layers=layers,
        heads=int(config.get("num_attention_heads", 12)),
        eps=float(config.get("layer_norm_eps", 1e-12)),
    )


def _layer_count(t: Mapping[str, object]) -> int:
    return len({k.split(".")[2] for k in t if k.startswith("encoder.layer.")})


def _layer(get: Any, p: str) -> Layer:
    a = p + "attention."
    qkv_w = np.concatenate(
        [get(f"{a}self.{n}.weight").T for n in ("query", "key", "value")], axis=1
    )
    qkv_b = np.concatenate([get(f"{a}self.{n}.bias") for n in ("query", "key", "value")])
    return Layer(
        qkv_w=np.ascontiguousarray(qkv_w),
        qkv_b=qkv_b,
        out_w=np.ascontiguousarray(get(f"{a}output.dense.weight").T),
        out_b=get(f"{a}output.dense.bias"),
        ln1_w=get(f"{a}output.LayerNorm.weight"),
        ln1_b=get(f"{a}output.LayerNorm.bias"),
        up_w=np.ascontiguousarray(get(f"{p}intermediate.dense.weight").T),
        up_b=get(f"{p}intermediate.dense.bias"),
        down_w=np.ascontiguousarray(get(f"{p}output.dense.weight").T),
        down_b=get(f"{p}output.dense.bias"),
        ln2_w=get(f"{p}output.LayerNorm.weight"),
        ln2_b=get(f"{p}output.LayerNorm.bias"),
    )


def encode(w: BertWeights, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> Vectors:
    """Mean-pooled, L2-normalised sentence vectors for a padded batch `(B, L)` of token ids.

    `mask` is 1 for real tokens and 0 for padding; token types are all 0 (single sentences).
    """
    length = ids.shape[1]
    if length > w.position.shape[0]:
        raise EmbeddingError(f"{length} tokens exceed the model's {w.position.shape[0]}")
    x = w.word[ids] + w.position[:length] + w.token_type[0]
    x = _layer_norm(x, w.ln_w, w.ln_b, w.eps)
    keep = mask.astype(np.float32)
    bias = ((1.0 - keep) * np.float32(-1e9))[:, None, None, :]
    for layer in w.layers:
        x = _block(x, layer, bias, w.heads, w.eps)
    summed = np.einsum("blh,bl->bh", x, keep)
    pooled = summed / np.maximum(keep.sum(axis=1, keepdims=True), np.float32(1e-9))
    return normalize_rows(pooled)


def _block(x: F32, layer: Layer, bias: F32, heads: int, eps: float) -> F32:
    batch, length, hidden = x.shape
    size = hidden // heads
    qkv = x @ layer.qkv_w
    qkv += layer.qkv_b
    qkv = qkv.reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = q @ k.transpose(0, 1, 3, 2)
    scores *= np.float32(1.0 / np.sqrt(size))
    scores += bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
    attended = context @ layer.out_w
    attended += layer.out_b
    attended += x
    x = _layer_norm(attended, layer.ln1_w, layer.ln1_b, eps)
    up = x @ layer.up_w
    up += layer.up_b
    down = _gelu(up) @ layer.down_w
    down += layer.down_b
    down += x
    return _layer_norm(down, layer.ln2_w, layer.ln2_b, eps)


def _layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    centered: F32 = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(centered), axis=-1, keepdims=True)
    var += np.float32(eps)
    centered /= np.sqrt(var)
    centered *= weight
    centered += bias
    return centered


def _gelu(x: F32) -> F32:
    """Exact GELU, `x * Phi(x)` (BERT's `hidden_act: gelu`), computed in place of `x`."""
    phi = _erf(x * np.float32(1.0 / np.sqrt(2.0)))
    phi += np.float32(1.0)
    phi *= np.float32(0.5)
    x *= phi
    return x


_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)


def _erf(x: F32) -> F32:
    """erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7), in few temporaries."""
    a = np.abs(x)
    # Clamped: erf(5.5) is 1 in float32, and exp of a larger square would be subnormal (slow).
    np.minimum(a, np.float32(5.5), out=a)
    t = a * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = np.full_like(t, _ERF_A[0])
    poly *= t
    for coefficient in _ERF_A[1:]:
        poly += coefficient
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(np.float32(1.0), poly, out=poly)
    np.copysign(poly, x, out=poly)
    return poly
