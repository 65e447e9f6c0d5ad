"""What lets the loop reuse a value built for the previous model call (pure).

The offered tools, the system prompt and the tool schemas of a call are pure functions of
the definition, a few parts of the conversation state and the call's mode; while those stay
the same from one call to the next (the usual case inside a turn), the value built last
time is the answer again. States are new objects after every event, so "the same" is
decided on the parts: by identity, or for memory, `same_memory`.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import is_


def same_memory(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Whether two memory mappings hold the very same values under the same keys.

    Stricter than `==` (which takes `1`, `1.0` and `True` for one another, though they are
    rendered and compared differently): equal, and every value the same object, in the
    same order (a fold copies the mapping, so unchanged entries keep their objects). A
    false answer only costs a rebuild."""
    if a is b:
        return True
    return a == b and all(map(is_, a.values(), b.values()))
