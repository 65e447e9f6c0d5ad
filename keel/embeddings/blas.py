"""Run numpy's matrix products on one thread in the current thread only, when possible.

OpenBLAS starts a thread per core for every product. The local embedder multiplies small
matrices (one sentence is a dozen rows), where that costs more than it gains, and on a
busy machine threads that spin waiting for each other made a sentence 5-10 times slower
(docs/decisions.md). OpenBLAS 0.3.27+ has `openblas_set_num_threads_local`, a per-thread
setting; numpy's wheels bundle such an OpenBLAS. `single_threaded()` uses it when found
and restores the previous value afterwards; without it (another BLAS, an older OpenBLAS)
it does nothing. Other threads, and other libraries' settings, are never touched.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np

_SYMBOL = "openblas_set_num_threads_local"


@cache
def _setter() -> Callable[[int], int] | None:
    libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for path in sorted(libs.glob("lib*openblas*.so*")):
        try:
            function = getattr(ctypes.CDLL(str(path)), _SYMBOL)
        except (OSError, AttributeError):
            continue
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_int]
        return function  # type: ignore[no-any-return]
    return None


def available() -> bool:
    """Whether the per-thread setting was found (else `single_threaded` does nothing)."""
    return _setter() is not None


@contextmanager
def single_threaded() -> Iterator[None]:
    """Inside the block, BLAS products started by this thread use one thread."""
    setter = _setter()
    if setter is None:
        yield
        return
    previous = setter(1)
    try:
        yield
    finally:
        setter(max(previous, 0))
