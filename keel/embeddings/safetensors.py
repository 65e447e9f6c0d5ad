"""A minimal reader of the safetensors format (no torch, no `safetensors` package).

A file is: 8 bytes little-endian header length N, N bytes of JSON (`name -> {dtype, shape,
data_offsets: [begin, end]}` plus an optional `__metadata__`), then the raw little-endian
tensor bytes, offsets relative to the end of the header. The file is memory-mapped and
each tensor is a read-only numpy view on it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from keel.embeddings.port import EmbeddingError

_DTYPES: Mapping[str, str] = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}
_MAX_HEADER = 100 * 1024 * 1024


def read_header(path: Path) -> tuple[dict[str, Any], int]:
    """(the JSON header, the byte offset where tensor data starts) of the file at `path`."""
    with path.open("rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise EmbeddingError(f"{path}: not a safetensors file (too short)")
        (size,) = struct.unpack("<Q", raw)
        if size > _MAX_HEADER:
            raise EmbeddingError(f"{path}: safetensors header of {size} bytes is not plausible")
        try:
            header = json.loads(f.read(size))
        except ValueError as exc:
            raise EmbeddingError(f"{path}: safetensors header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise EmbeddingError(f"{path}: safetensors header is not a JSON object")
    return header, 8 + size


def load_tensors(path: Path) -> dict[str, NDArray[Any]]:
    """Every tensor of the file at `path`, as read-only numpy arrays (memory-mapped)."""
    header, start = read_header(path)
    data = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _tensor(path, name, info, data, start)
    return tensors


def _tensor(
    path: Path, name: str, info: Mapping[str, Any], data: NDArray[np.uint8], start: int
) -> NDArray[Any]:
    code = _DTYPES.get(str(info.get("dtype")))
    if code is None:
        raise EmbeddingError(f"{path}: tensor {name!r} has unsupported dtype {info.get('dtype')}")
    dtype = np.dtype(code)
    begin, end = (start + int(x) for x in info["data_offsets"])
    shape = tuple(int(x) for x in info["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    if end > data.size or end - begin != count * dtype.itemsize:
        raise EmbeddingError(f"{path}: tensor {name!r} has inconsistent offsets")
    return np.frombuffer(data, dtype=dtype, count=count, offset=begin).reshape(shape)
