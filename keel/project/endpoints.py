"""`endpoints.yml`: the Rasa platform file some Mantle projects still ship (spec §1.1).

Pure: the input is what `keel.source.yaml.load_yaml` returned for the file (and the
environment, for `${VAR}`s in `event_broker`). Keel reads two blocks of it, `nlg:` (Rasa's
contextual response rephraser) and `event_broker:` (`keel.project.event_broker`), and
says for every other block what Keel does instead, since none of them is consumed:

* `nlg: {type: rephrase}` turns the rephraser on; with `rephrase_all: true` every named
  response is rephrased (a variant opts out with `metadata.rephrase: false`), without it
  only variants with `metadata.rephrase: true` are (as they are with no endpoints.yml at
  all, Mantle's rule). Rephrase calls use the router tier (`keel.loop.rephrase`).
* `event_broker: {type: pika, url: ...}` publishes every committed event to RabbitMQ
  (`endpoints.event_broker.used`, info); another type is a warning and is not used.
* `tracker_store`, `action_endpoint`, `lock_store`, `models`, `model_groups`,
  `vector_store`: an info or warning diagnostic naming Keel's own part.
* any other block: a warning (`endpoints.unknown_key`).

Nothing in this file can refuse a project: every finding is a warning or a note, since the
runtime runs the project safely without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from keel.project.event_broker import EventBrokerConfig, parse_event_broker
from keel.source.diagnostics import Diagnostic, Severity
from keel.source.reporter import Reporter, key_line
from keel.source.yaml import load_yaml, type_name

FILE = "endpoints.yml"

REPHRASE = "rephrase"
"""The `nlg.type` of Rasa's contextual response rephraser."""

NLG_KEYS = frozenset(
    {"type", "rephrase_all", "llm", "model_group", "prompt", "summarize_history"}
    | {"max_historical_turns", "url", "token", "auth"}
)
"""Keys of Rasa's `nlg:` block that are recognised (most are reported as not used)."""

_NLG_UNUSED: Mapping[str, str] = {
    "llm": "Keel rephrases on the router tier: map `tiers.router` in integrations.yml",
    "model_group": "Keel rephrases on the router tier: map `tiers.router` in integrations.yml",
    "prompt": "Keel uses its own rephrase prompt (persona, last user message, response text)",
    "summarize_history": "Keel's rephrase prompt holds the last user message, not a summary",
    "max_historical_turns": "Keel's rephrase prompt holds the last user message only",
}

_BLOCKS: Mapping[str, tuple[Severity, str]] = {
    "tracker_store": (
        "info",
        "Keel keeps every conversation in its own event store (`keel run --database-url`); "
        "the tracker store is not used",
    ),
    "lock_store": (
        "info",
        "Keel serialises each conversation with its own per-conversation locks; "
        "the lock store is not used",
    ),
    "action_endpoint": (
        "warning",
        "Keel runs tools in process (`@tool` in tools/*.py); no action server is called",
    ),
    "models": (
        "info",
        "Keel loads the project from its folder; no model server is used",
    ),
    "model_groups": (
        "warning",
        "Keel reads model groups from integrations.yml only; these are not used",
    ),
    "vector_store": (
        "warning",
        "Keel answers from its own knowledge index (references/**/*.md); "
        "the vector store is not queried",
    ),
}
"""Known Rasa endpoint blocks Keel does not consume: severity and what Keel uses instead."""


@dataclass(frozen=True, kw_only=True, slots=True)
class NlgConfig:
    """`nlg:` as Keel reads it."""

    rephrase: bool = False
    """`type: rephrase`: Rasa's contextual response rephraser is configured."""
    rephrase_all: bool = False
    """`rephrase_all: true` with `type: rephrase`: every named response is rephrased."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointsConfig:
    """What Keel takes from `endpoints.yml` (the defaults: no file)."""

    present: bool = False
    """The project has an endpoints.yml."""
    nlg: NlgConfig = field(default_factory=NlgConfig)
    event_broker: EventBrokerConfig | None = None
    """The RabbitMQ broker committed events are published to (`type: pika`), if any."""

    @property
    def rephrase_all(self) -> bool:
        """Every named response is rephrased unless its variant says `rephrase: false`."""
        return self.nlg.rephrase and self.nlg.rephrase_all


def read_endpoints(
    text: str, file: str = FILE, env: Mapping[str, str] = MappingProxyType({})
) -> tuple[EndpointsConfig, list[Diagnostic]]:
    """Parse the text of `endpoints.yml`: never raises, never an error diagnostic (a YAML
    syntax error is reported as a warning and the file is then ignored)."""
    data, diagnostics = load_yaml(text, file)
    if diagnostics:
        note = " (endpoints.yml is ignored)"
        return EndpointsConfig(present=True), [
            replace(d, severity="warning", message=d.message + note) for d in diagnostics
        ]
    return parse_endpoints(data, file, env)


def parse_endpoints(
    data: Any, file: str = FILE, env: Mapping[str, str] = MappingProxyType({})
) -> tuple[EndpointsConfig, list[Diagnostic]]:
    """Parse loaded `endpoints.yml` data (None: an empty file)."""
    r = Reporter(file)
    if data is None:
        return EndpointsConfig(present=True), r.diagnostics
    if not isinstance(data, dict):
        message = f"endpoints.yml must be a mapping of blocks, got {type_name(data)}; it is ignored"
        r.warning("endpoints.not_mapping", key_line(data, 0), message)
        return EndpointsConfig(present=True), r.diagnostics
    nlg = NlgConfig()
    broker: EventBrokerConfig | None = None
    for key, value in data.items():
        line = key_line(data, key)
        if key == "nlg":
            nlg = _nlg(r, value, line)
        elif key == "event_broker":
            broker = parse_event_broker(r, value, line, env) if value is not None else None
        elif key in _BLOCKS:
            severity, instead = _BLOCKS[key]
            r.add("endpoints.not_used", line, f"`{key}`: {instead}", key=key, severity=severity)
        else:
            message = f"unknown block `{key}` in endpoints.yml is ignored"
            r.warning("endpoints.unknown_key", line, message, key=str(key))
    return EndpointsConfig(present=True, nlg=nlg, event_broker=broker), r.diagnostics


def _nlg(r: Reporter, value: object, line: int | None) -> NlgConfig:
    if value is None:
        return NlgConfig()
    if not isinstance(value, dict):
        message = f"`nlg` must be a mapping such as `{{type: rephrase}}`, got {type_name(value)}"
        r.warning("endpoints.nlg.bad_value", line, message + "; it is ignored", key="nlg")
        return NlgConfig()
    kind = value.get("type")
    if kind != REPHRASE:
        if "url" in value:
            message = "an NLG server is not called: Keel sends the responses of responses.yml"
        else:
            message = f"`nlg.type` {kind!r} is not supported (only `rephrase`); nlg is ignored"
        r.warning("endpoints.nlg.unsupported", key_line(value, "type"), message, key="nlg.type")
        return NlgConfig()
    every = value.get("rephrase_all", False)
    if not isinstance(every, bool):
        message = f"`nlg.rephrase_all` must be true or false, got {every!r}; false is used"
        r.warning("endpoints.nlg.bad_value", key_line(value, "rephrase_all"), message)
        every = False
    if not every:
        message = (
            "rephrasing is on for variants with `metadata.rephrase: true`; "
            "`rephrase_all: true` would rephrase every response"
        )
        r.info("endpoints.nlg.rephrase_marked", key_line(value, "type"), message, key="nlg")
    for key in value:
        where = key_line(value, key)
        if key in _NLG_UNUSED:
            r.info("endpoints.nlg.not_used", where, f"`nlg.{key}`: {_NLG_UNUSED[key]}", key=key)
        elif key not in NLG_KEYS:
            message = f"unknown key `nlg.{key}` is ignored"
            r.warning("endpoints.unknown_key", where, message, key=f"nlg.{key}")
    return NlgConfig(rephrase=True, rephrase_all=every)
