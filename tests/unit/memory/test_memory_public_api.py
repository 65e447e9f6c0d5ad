"""The public surface of keel.memory: `__all__` names exactly what the package exports."""

from __future__ import annotations

from types import ModuleType

import keel.memory


def test_all_matches_the_exported_names() -> None:
    exported = {
        name
        for name, value in vars(keel.memory).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert set(keel.memory.__all__) == exported
    assert len(keel.memory.__all__) == len(exported)
