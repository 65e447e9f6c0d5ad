"""`event_broker:` of `endpoints.yml`, as Rasa users write it for RabbitMQ (`type: pika`).

Pure: the block as loaded, the environment as a mapping (`${VAR}` is expanded in every
string, as in integrations.yml; an unset one is a `config.env.unset` warning). Only
`type: pika` is used (`keel.broker` publishes every committed event to it); any other
type (`kafka`, `sql`, `file`, a custom class) is reported and not used. Rasa's keys:

    event_broker:
      type: pika
      url: localhost              # a host, or an amqp:// / amqps:// URL
      port: 5672
      username: guest
      password: ${RABBITMQ_PASSWORD}
      queues: [rasa_core_events]  # or `queue: name` (Rasa's older key)
      exchange_name: rasa-exchange

plus Keel's own `queue_size`: how many events may wait in memory for the broker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from keel.project.envvars import Expander, Secret
from keel.source.reporter import Reporter, key_line
from keel.source.yaml import type_name

PIKA = "pika"
DEFAULT_PORT = 5672
DEFAULT_QUEUE = "rasa_core_events"
DEFAULT_EXCHANGE = "rasa-exchange"
DEFAULT_QUEUE_SIZE = 10_000
"""Events that may wait for the broker before new ones are dropped (Keel's `queue_size`)."""

BROKER_KEYS = frozenset(
    {"type", "url", "port", "username", "password", "queues", "queue", "exchange_name"}
    | {"queue_size"}
)
_NOT_USED: Mapping[str, str] = {
    "raise_on_failure": "a broker failure never fails a turn in Keel; failures are counted "
    "and logged",
    "should_keep_unpublished_messages": "Keel keeps unpublished events in its bounded queue "
    "(`queue_size`) and retries them",
    "connection_attempts": "Keel reconnects in the background for as long as it runs",
    "retry_delay_in_seconds": "Keel reconnects with its own backoff (up to 30 s)",
    "log_level": "Keel's broker logs under `keel.broker` at the server's log level",
    "ssl": "use an `amqps://` url for TLS",
}
"""Rasa's PikaEventBroker options Keel reads and does not need: what it does instead."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EventBrokerConfig:
    """A RabbitMQ broker every committed event is published to (`type: pika`)."""

    url: str
    """A host name, or an `amqp://` / `amqps://` URL (its credentials, if any, are replaced
    by `username` / `password`, as Rasa does)."""
    port: int = DEFAULT_PORT
    username: str = "guest"
    password: Secret = field(default_factory=lambda: Secret(value="guest"))
    queues: tuple[str, ...] = (DEFAULT_QUEUE,)
    """Durable queues declared and bound to the exchange."""
    exchange_name: str = DEFAULT_EXCHANGE
    """A fanout exchange: every bound queue gets every event."""
    queue_size: int = DEFAULT_QUEUE_SIZE
    line: int | None = None

    @property
    def where(self) -> str:
        """Host and port (or the URL's host), without credentials, for messages."""
        if "://" in self.url:
            rest = self.url.split("://", 1)[1].rsplit("@", 1)[-1]
            host = rest.split("/", 1)[0]
            return host if ":" in host else f"{host}:{self.port}"
        return f"{self.url}:{self.port}"


def parse_event_broker(
    r: Reporter, value: object, line: int | None, env: Mapping[str, str]
) -> EventBrokerConfig | None:
    """The broker Keel publishes to, or None (every reason is a diagnostic on `r`)."""
    if not isinstance(value, dict):
        message = "`event_broker` must be a mapping such as `{type: pika, url: ...}`, got "
        r.warning(
            "endpoints.event_broker.bad_value",
            line,
            message + f"{type_name(value)}; no events are published",
            key="event_broker",
        )
        return None
    kind = value.get("type")
    if kind != PIKA:
        shown = "missing" if kind is None else repr(kind)
        message = (
            f"`event_broker.type` {shown} is not supported: Keel publishes to RabbitMQ "
            "(`type: pika`) only; no events are published (read the event log through the "
            "API and its live feed instead)"
        )
        where = key_line(value, "type") if "type" in value else line
        r.warning("endpoints.event_broker.unsupported", where, message, key="event_broker.type")
        return None
    x = Expander(file=r.file, env=env)
    config = _pika(r, x, value, line)
    for unset in x.unset:
        message = f"environment variable {unset.name} (in `{unset.key}`) is not set"
        r.warning("config.env.unset", unset.line, message, key=unset.name)
    if config is not None:
        message = (
            f"every committed event is published to RabbitMQ at {config.where}, exchange "
            f"{config.exchange_name!r}, queues {', '.join(config.queues)} (docs/observability.md)"
        )
        r.info("endpoints.event_broker.used", line, message, key="event_broker")
    return config


def _pika(
    r: Reporter, x: Expander, value: dict[str, object], line: int | None
) -> EventBrokerConfig | None:
    def text(key: str) -> str | None:
        raw = value.get(key)
        if raw is None:
            return None
        if not isinstance(raw, str | int):
            _bad(r, value, key, f"must be a string, got {type_name(raw)}")
            return None
        return x.text(str(raw), line=key_line(value, key), key=f"event_broker.{key}")

    url = text("url")
    if not url:
        _bad(r, value, "url", "is required (a host such as `localhost`, or an amqp:// URL)")
        return None
    port = _int(r, x, value, "port", DEFAULT_PORT, maximum=65535)
    size = _int(r, x, value, "queue_size", DEFAULT_QUEUE_SIZE, maximum=10_000_000)
    queues = _queues(r, x, value)
    if port is None or size is None or queues is None:
        return None
    password = value.get("password")
    secret = Secret(value="guest")
    if isinstance(password, str | int):
        where = key_line(value, "password")
        secret = x.secret(str(password), line=where, key="event_broker.password")
    elif password is not None:
        _bad(r, value, "password", f"must be a string, got {type_name(password)}")
        return None
    for key in value:
        where = key_line(value, key)
        if key in _NOT_USED:
            message = f"`event_broker.{key}`: {_NOT_USED[key]}"
            r.info("endpoints.event_broker.not_used", where, message, key=f"event_broker.{key}")
        elif key not in BROKER_KEYS:
            message = f"unknown key `event_broker.{key}` is ignored"
            r.warning("endpoints.unknown_key", where, message, key=f"event_broker.{key}")
    return EventBrokerConfig(
        url=url,
        port=port,
        username=text("username") or "guest",
        password=secret,
        queues=queues,
        exchange_name=text("exchange_name") or DEFAULT_EXCHANGE,
        queue_size=size,
        line=line,
    )


def _bad(r: Reporter, value: dict[str, object], key: str, problem: str) -> None:
    message = f"`event_broker.{key}` {problem}; no events are published"
    r.warning("endpoints.event_broker.bad_value", key_line(value, key), message)


def _int(
    r: Reporter, x: Expander, value: dict[str, object], key: str, default: int, *, maximum: int
) -> int | None:
    raw = value.get(key, default)
    if isinstance(raw, str):
        raw = x.text(raw, line=key_line(value, key), key=f"event_broker.{key}").strip()
    number = int(raw) if isinstance(raw, str) and raw.isdigit() else raw
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= maximum:
        _bad(r, value, key, f"must be a whole number from 1 to {maximum}, got {raw!r}")
        return None
    return number


def _queues(r: Reporter, x: Expander, value: dict[str, object]) -> tuple[str, ...] | None:
    key = "queues" if "queues" in value else "queue"
    raw = value.get(key)
    if raw is None:
        return (DEFAULT_QUEUE,)
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items or not all(isinstance(q, str) and q for q in items):
        _bad(r, value, key, "must be a queue name or a list of queue names")
        return None
    where = key_line(value, key)
    return tuple(x.text(q, line=where, key=f"event_broker.{key}") for q in items)
