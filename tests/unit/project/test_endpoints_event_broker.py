"""`event_broker:` in endpoints.yml as Rasa users write it: `type: pika` is used, anything
else is reported and not used, and nothing in the block can be an error."""

from __future__ import annotations

import pytest

from keel.project.endpoints import read_endpoints
from keel.project.event_broker import DEFAULT_EXCHANGE, DEFAULT_QUEUE

RASA_DOCS_EXAMPLE = """\
event_broker:
  type: pika
  url: localhost
  username: username
  password: ${RABBIT_PASSWORD}
  queues:
    - queue-1
    - queue-2
  exchange_name: exchange
"""


def _codes(text: str, env: dict[str, str] | None = None) -> list[tuple[int | None, str, str]]:
    _config, diagnostics = read_endpoints(text, env=env or {})
    return [(d.line, d.code, d.severity) for d in diagnostics]


def test_the_rasa_docs_example_is_used_with_its_password_from_the_environment() -> None:
    config, diagnostics = read_endpoints(RASA_DOCS_EXAMPLE, env={"RABBIT_PASSWORD": "s3cret"})
    broker = config.event_broker
    assert broker is not None
    assert (broker.url, broker.port, broker.username) == ("localhost", 5672, "username")
    assert broker.password.reveal() == "s3cret" and "s3cret" not in repr(broker)
    assert broker.queues == ("queue-1", "queue-2") and broker.exchange_name == "exchange"
    assert [(d.code, d.severity) for d in diagnostics] == [("endpoints.event_broker.used", "info")]
    assert "localhost:5672" in diagnostics[0].message and "s3cret" not in diagnostics[0].message


def test_defaults_are_rasas() -> None:
    config, _ = read_endpoints("event_broker:\n  type: pika\n  url: amqp://rabbit:5673/\n")
    broker = config.event_broker
    assert broker is not None
    assert broker.queues == (DEFAULT_QUEUE,) and broker.exchange_name == DEFAULT_EXCHANGE
    assert broker.where == "rabbit:5673"


def test_the_older_queue_key_and_keels_queue_size() -> None:
    text = "event_broker:\n  type: pika\n  url: h\n  queue: q\n  port: '5673'\n  queue_size: 5\n"
    config, diagnostics = read_endpoints(text)
    broker = config.event_broker
    assert broker is not None and broker.queues == ("q",)
    assert broker.port == 5673 and broker.queue_size == 5
    assert [d.code for d in diagnostics] == ["endpoints.event_broker.used"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "event_broker:\n  type: kafka\n  url: localhost\n  topic: rasa\n",
            [(2, "endpoints.event_broker.unsupported", "warning")],
        ),
        (
            "event_broker:\n  url: localhost\n",
            [(1, "endpoints.event_broker.unsupported", "warning")],
        ),
        ("event_broker: pika\n", [(1, "endpoints.event_broker.bad_value", "warning")]),
        ("event_broker:\n  type: pika\n", [(2, "endpoints.event_broker.bad_value", "warning")]),
        (
            "event_broker:\n  type: pika\n  url: h\n  port: 99999\n",
            [(4, "endpoints.event_broker.bad_value", "warning")],
        ),
        (
            "event_broker:\n  type: pika\n  url: h\n  queues: [1, 2]\n",
            [(4, "endpoints.event_broker.bad_value", "warning")],
        ),
        (
            "event_broker:\n  type: pika\n  url: h\n  raise_on_failure: true\n  colour: red\n",
            [
                (1, "endpoints.event_broker.used", "info"),
                (4, "endpoints.event_broker.not_used", "info"),
                (5, "endpoints.unknown_key", "warning"),
            ],
        ),
        (
            "event_broker:\n  type: pika\n  url: h\n  password: ${NOT_SET_HERE}\n",
            [
                (1, "endpoints.event_broker.used", "info"),
                (4, "config.env.unset", "warning"),
            ],
        ),
    ],
)
def test_event_broker_findings(text: str, expected: list[tuple[int | None, str, str]]) -> None:
    assert sorted(_codes(text), key=lambda c: (c[0] or 0, c[1])) == expected


def test_an_unused_broker_leaves_no_config() -> None:
    config, _ = read_endpoints("event_broker:\n  type: kafka\n  url: k\n")
    assert config.event_broker is None
