"""`${VAR}` expansion for integrations.yml, and secrets that never show in a repr.

Expansion is pure: the environment comes in as a mapping. An unset variable is not an
error while validating a project (the deployment may set it later); it expands to an
empty string and is recorded as an `UnsetVar` so the loader can warn with the line and
the runtime can refuse to use a half-configured entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from keel.source.yaml import line_of

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What an environment variable name may look like."""
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""`${NAME}`; nothing else (no defaults, no bare `$NAME`) is expanded."""


@dataclass(frozen=True, kw_only=True, slots=True)
class UnsetVar:
    """An `${VAR}` reference whose variable is not in the environment."""

    name: str
    file: str
    line: int | None
    key: str
    """Where it was used, as a dotted path (`mcp_servers.depot.token`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Secret:
    """A credential; its value is left out of `repr()` and `str()`."""

    value: str = field(repr=False)
    env_vars: tuple[str, ...] = ()
    """Names of the `${VAR}`s it was built from (empty for a literal)."""
    unset: tuple[str, ...] = ()
    """Those of `env_vars` that were not set."""

    @property
    def literal(self) -> bool:
        """True when the value was written in the file instead of coming from `${ENV}`."""
        return not self.env_vars

    @property
    def is_set(self) -> bool:
        """True when every variable was set and the value is not empty."""
        return not self.unset and bool(self.value)

    def reveal(self) -> str:
        """The secret value, for the one place that sends it somewhere."""
        return self.value


def expand_text(text: str, env: Mapping[str, str]) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Expand `${VAR}`s in `text`; returns (expanded, referenced names, unset names)."""
    referenced: list[str] = []
    unset: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        referenced.append(name)
        if name in env:
            return env[name]
        unset.append(name)
        return ""

    expanded = ENV_REFERENCE.sub(substitute, text)
    return expanded, tuple(referenced), tuple(unset)


@dataclass(slots=True)
class Expander:
    """Expands strings of one file and collects the unset variables it meets."""

    file: str
    env: Mapping[str, str]
    unset: list[UnsetVar] = field(default_factory=list)

    def text(self, text: str, *, line: int | None, key: str) -> str:
        """Expand one string found at `key` / `line`."""
        expanded, _, unset = expand_text(text, self.env)
        self._record(unset, line, key)
        return expanded

    def secret(self, text: str, *, line: int | None, key: str) -> Secret:
        """Expand one credential string into a `Secret`."""
        expanded, referenced, unset = expand_text(text, self.env)
        self._record(unset, line, key)
        return Secret(value=expanded, env_vars=referenced, unset=unset)

    def variable(self, name: str, *, line: int | None, key: str) -> Secret:
        """A credential read from the variable `name` (what `api_key_env: NAME` means)."""
        unset = () if name in self.env else (name,)
        self._record(unset, line, key)
        return Secret(value=self.env.get(name, ""), env_vars=(name,), unset=unset)

    def mapping(self, value: Any, *, line: int | None, key: str) -> Mapping[str, object]:
        """`tree` for a mapping (anything else becomes an empty mapping)."""
        if not isinstance(value, dict):
            return MappingProxyType({})
        return MappingProxyType(
            {
                str(k): self.tree(v, line=line_of(value, k, line), key=f"{key}.{k}")
                for k, v in value.items()
            }
        )

    def tree(self, value: Any, *, line: int | None, key: str) -> object:
        """Expand every string inside `value`; containers come back frozen."""
        if isinstance(value, str):
            return self.text(value, line=line, key=key)
        if isinstance(value, dict):
            return MappingProxyType(
                {
                    k: self.tree(v, line=line_of(value, k, line), key=f"{key}.{k}")
                    for k, v in value.items()
                }
            )
        if isinstance(value, list):
            return tuple(
                self.tree(v, line=line_of(value, i, line), key=f"{key}[{i}]")
                for i, v in enumerate(value)
            )
        return value

    def _record(self, names: tuple[str, ...], line: int | None, key: str) -> None:
        for name in names:
            self.unset.append(UnsetVar(name=name, file=self.file, line=line, key=key))


def freeze(value: Any) -> object:
    """Deep copy of parsed YAML with mappings as read-only proxies and lists as tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def frozen_mapping(value: Any) -> Mapping[str, object]:
    """`freeze` for a value known to be a mapping (or None, which becomes empty)."""
    if not isinstance(value, dict):
        return MappingProxyType({})
    return MappingProxyType({str(k): freeze(v) for k, v in value.items()})


__all__ = [
    "ENV_NAME",
    "ENV_REFERENCE",
    "Expander",
    "Secret",
    "UnsetVar",
    "expand_text",
    "freeze",
    "frozen_mapping",
]
