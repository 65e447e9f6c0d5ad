"""`AmqpTransport`: RabbitMQ through aio-pika, laid out as Rasa's pika event broker does.

A fanout exchange (`exchange_name`, default `rasa-exchange`, declared as Rasa declares it)
with each of `queues` declared durable and bound to it, so every queue gets every event.
Messages are persistent JSON (`keel.broker.message`), published with publisher confirms:
`publish` returns once RabbitMQ has taken the message. Each carries `message_id`
`<conversation_id>:<seq>` and the headers `keel-conversation-id`, `keel-seq` and
`keel-format`, for consumers that deduplicate without reading the body. An `amqp://` or
`amqps://` url is used as it is, with `username` / `password` put in (as Rasa does); a
bare host is joined with `port`.
"""

from __future__ import annotations

import contextlib

import aio_pika
from aio_pika.abc import AbstractConnection, AbstractExchange
from yarl import URL

from keel.broker.message import FORMAT_VERSION, broker_body, dumps_body
from keel.project.event_broker import EventBrokerConfig
from keel.stores.port import StoredEvent

CONNECT_TIMEOUT = 10.0
PUBLISH_TIMEOUT = 10.0


class AmqpTransport:
    """Publishes events to RabbitMQ as `config` says."""

    def __init__(self, config: EventBrokerConfig, *, agent_id: str) -> None:
        self.config = config
        self.agent_id = agent_id
        self._connection: AbstractConnection | None = None
        self._exchange: AbstractExchange | None = None

    @property
    def where(self) -> str:
        """Host and port of the broker, and the exchange."""
        return f"amqp {self.config.where} exchange {self.config.exchange_name!r}"

    def _url(self) -> URL:
        c = self.config
        password = c.password.reveal()
        if c.url.startswith(("amqp://", "amqps://")):
            url = URL(c.url).with_user(c.username).with_password(password)
            return url if url.explicit_port else url.with_port(c.port)
        return URL.build(scheme="amqp", host=c.url, port=c.port, user=c.username, password=password)

    async def connect(self) -> None:
        """Connect, open a confirming channel, declare the exchange and bind the queues."""
        await self.close()
        connection = await aio_pika.connect(self._url(), timeout=CONNECT_TIMEOUT)
        try:
            channel = await connection.channel(publisher_confirms=True)
            exchange = await channel.declare_exchange(
                self.config.exchange_name, aio_pika.ExchangeType.FANOUT
            )
            for name in self.config.queues:
                queue = await channel.declare_queue(name, durable=True)
                await queue.bind(exchange, routing_key="")
        except BaseException:
            await connection.close()
            raise
        self._connection, self._exchange = connection, exchange

    async def publish(self, event: StoredEvent) -> None:
        """Publish one event and wait for RabbitMQ's confirmation."""
        if self._exchange is None:
            raise ConnectionError("not connected")
        body = broker_body(event, agent_id=self.agent_id)
        message = aio_pika.Message(
            dumps_body(body),
            content_type="application/json",
            delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
            message_id=f"{event.conversation_id}:{event.seq}",
            headers={
                "keel-conversation-id": event.conversation_id,
                "keel-seq": event.seq,
                "keel-format": FORMAT_VERSION,
            },
            app_id=self.agent_id,
        )
        await self._exchange.publish(message, routing_key="", timeout=PUBLISH_TIMEOUT)

    async def close(self) -> None:
        """Close the connection, if any (errors closing a broken one are ignored)."""
        connection, self._connection, self._exchange = self._connection, None, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close()
