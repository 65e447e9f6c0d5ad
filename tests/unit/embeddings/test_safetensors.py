"""The minimal safetensors reader: header, dtypes, shapes, offsets, and bad files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from keel.embeddings.port import EmbeddingError
from keel.embeddings.safetensors import load_tensors, read_header


def _write(path: Path, tensors: dict[str, np.ndarray], *, lie: bool = False) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, array in tensors.items():
        raw = array.tobytes()
        dtype = {"float32": "F32", "int64": "I64", "float16": "F16"}[str(array.dtype)]
        end = offset + len(raw) + (4 if lie else 0)
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, end]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_reads_tensors_of_several_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([[7, 8]], dtype=np.int64)
    c = np.array([1.5, -2.0], dtype=np.float16)
    _write(path, {"a": a, "b": b, "c": c})
    tensors = load_tensors(path)
    assert set(tensors) == {"a", "b", "c"}
    assert np.array_equal(tensors["a"], a) and np.array_equal(tensors["b"], b)
    assert np.array_equal(tensors["c"], c) and not tensors["a"].flags.writeable
    header, start = read_header(path)
    assert header["__metadata__"] == {"format": "pt"} and start > 8


def test_inconsistent_offsets_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    _write(path, {"a": np.zeros(3, dtype=np.float32)}, lie=True)
    with pytest.raises(EmbeddingError, match="inconsistent offsets"):
        load_tensors(path)


@pytest.mark.parametrize("content", [b"", b"\x05\x00\x00\x00\x00\x00\x00\x00[1,2]", b"\xff" * 8])
def test_not_a_safetensors_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(content)
    with pytest.raises(EmbeddingError):
        read_header(path)
