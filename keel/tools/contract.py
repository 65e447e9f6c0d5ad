"""A tool's plan contract (plan-cache spec §3.5): effect class, argument bindings, keys.

A contract says what a tool does to the world and where each argument's value may come
from. It is declared on the decorator (`@tool(..., effect="write", bindings={...})`, checked
by `keel.tools.decorator` while the tool's module is imported) or in a skill's
`tool_constraints` (which wins, `keel.plans.skill_catalog`), and read by the template
compiler, the slot binder, the L2 validator, the executor's effect gate and the cache
signatures. A tool that declares nothing gets the fail-closed `ToolContract()`.

Defaults fail closed:

* a tool with no declared `effect` is effectful (`write`): it never runs in parallel, its
  arguments pass the effect gate, and a cached plan may call it only with licensed verbs;
* an argument with no declared binding is `request`: its value must come from the user's
  words in *this* request (default-deny, the inverse of a closed content-key list).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, get_args

Effect = Literal["read_only", "write_idempotent", "write", "send", "delete", "install", "share"]
EFFECTS: tuple[str, ...] = get_args(Effect)

Binding = Literal["structural", "request", "runtime", "piped"]
BINDINGS: tuple[str, ...] = get_args(Binding)

DEFAULT_EFFECT: Effect = "write"
"""The effect of a tool that declares none (fail closed)."""

CONTRACT_KEYS: tuple[str, ...] = (
    "effect",
    "bindings",
    "idempotency_key",
    "output_schema",
    "runtime_resolved",
    "outbound_args",
    "verbs",
)
"""The keys of a declaration: `@tool(...)` keywords and `tool_constraints` keys."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolContract:
    """What a tool declares for plans; every field has a fail-closed default."""

    effect: Effect = DEFAULT_EFFECT
    bindings: Mapping[str, Binding] = field(default_factory=lambda: MappingProxyType({}))
    """Per-argument binding; an argument not listed is `request`."""
    idempotency_key: tuple[str, ...] | None = None
    """Arguments forming a natural key (a retry with the same key is safe); None: none."""
    output_schema: Mapping[str, object] | None = None
    """JSON Schema of the tool's result, for the validator's dataflow checks."""
    runtime_resolved: frozenset[str] = frozenset()
    """Arguments the runtime fills from the user's context; a plan may not set them."""
    outbound_args: frozenset[str] = frozenset()
    """Arguments that send data out of the system (consent gate)."""
    verbs: tuple[str, ...] = ()
    """Verbs that license this tool's effect besides the head of its name (`cancel` for
    `cancel_order`), e.g. `("call off",)`."""
    declared: bool = False
    """The tool (or a constraint) declared a contract; False for the fail-closed default."""

    @property
    def effectful(self) -> bool:
        """Anything but `read_only` changes the world."""
        return self.effect != "read_only"

    def binding(self, argument: str) -> Binding:
        """The binding of `argument` (`request` when undeclared)."""
        return self.bindings.get(argument, "request")

    def as_json(self) -> dict[str, object]:
        """A plain, stable JSON form (the input of `contract_digest`)."""
        return {
            "effect": self.effect,
            "bindings": dict(sorted(self.bindings.items())),
            "idempotency_key": list(self.idempotency_key) if self.idempotency_key else None,
            "output_schema": self.output_schema,
            "runtime_resolved": sorted(self.runtime_resolved),
            "outbound_args": sorted(self.outbound_args),
            "verbs": list(self.verbs),
        }


def contract_problems(raw: Mapping[str, object]) -> list[str]:
    """What is wrong with a contract declaration (decorator keywords or a constraint body)."""
    problems: list[str] = []
    effect = raw.get("effect")
    if effect is not None and effect not in EFFECTS:
        problems.append(f"effect {effect!r} is not one of {', '.join(EFFECTS)}")
    bindings = raw.get("bindings")
    if bindings is not None:
        if not isinstance(bindings, Mapping):
            problems.append("bindings must map argument names to a binding")
        else:
            for name, value in bindings.items():
                if value not in BINDINGS:
                    problems.append(
                        f"binding {value!r} of {name!r} is not one of {', '.join(BINDINGS)}"
                    )
    for key in ("idempotency_key", "runtime_resolved", "outbound_args", "verbs"):
        value = raw.get(key)
        if value is not None and not _strings(value):
            problems.append(f"{key} must be a list of strings")
    schema = raw.get("output_schema")
    if schema is not None and not isinstance(schema, Mapping):
        problems.append("output_schema must be a JSON Schema object")
    return problems


def make_contract(raw: Mapping[str, object]) -> ToolContract:
    """A contract from a declaration already checked by `contract_problems`."""
    bindings = raw.get("bindings") or {}
    assert isinstance(bindings, Mapping)
    idem = raw.get("idempotency_key")
    schema = raw.get("output_schema")
    return ToolContract(
        effect=raw.get("effect") or DEFAULT_EFFECT,  # type: ignore[arg-type]
        bindings=MappingProxyType({str(k): v for k, v in bindings.items()}),
        idempotency_key=tuple(idem) if isinstance(idem, list | tuple) and idem else None,
        output_schema=MappingProxyType(dict(schema)) if isinstance(schema, Mapping) else None,
        runtime_resolved=frozenset(_as_strings(raw.get("runtime_resolved"))),
        outbound_args=frozenset(_as_strings(raw.get("outbound_args"))),
        verbs=tuple(_as_strings(raw.get("verbs"))),
        declared=True,
    )


def merge_contract(base: ToolContract, override: Mapping[str, object]) -> ToolContract:
    """`base` with the keys of a `tool_constraints` declaration laid over it."""
    merged = {**base.as_json(), **{k: v for k, v in override.items() if v is not None}}
    if base.bindings and isinstance(override.get("bindings"), Mapping):
        merged["bindings"] = {**base.bindings, **override["bindings"]}  # type: ignore[dict-item]
    return make_contract(merged)


def contract_digest(
    name: str, parameters: Mapping[str, object], contract: ToolContract, code: str = ""
) -> str:
    """16 hex of SHA-256 over the tool's name, argument schema, contract and code text:
    any change to what the tool accepts, promises or runs changes the digest."""
    payload = json.dumps(
        {"name": name, "parameters": parameters, "contract": contract.as_json(), "code": code},
        sort_keys=True,
        default=_plain,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | frozenset | set):
        return list(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def _strings(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def _as_strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []
