"""Publishing every committed event to an event broker (`event_broker:` in endpoints.yml).

`PublishingStore` wraps the engine's event store: once an append has committed, its
stored events are offered to an `EventPublisher` (a bounded in-memory queue, never a
wait), whose background task sends them through a `Transport` (RabbitMQ:
`keel.broker.amqp.AmqpTransport`), in commit order, retrying until the broker takes them.
The commit comes first and never waits for the broker; events that do not fit the queue
are dropped, counted and logged. The message body is `keel.broker.message.broker_body`
(docs/observability.md, "Event broker").
"""

from keel.broker.message import broker_body
from keel.broker.publisher import BrokerStats, EventPublisher, Transport
from keel.broker.store import PublishingStore

__all__ = ["BrokerStats", "EventPublisher", "PublishingStore", "Transport", "broker_body"]
