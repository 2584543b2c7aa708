"""RabbitMQ as the broker: how its queues are declared, and how a publish to it is bounded.

Every queue is a quorum queue (replicated, and it counts each message's deliveries) bound to one
topic exchange: quorum queues have no global QoS, and Celery's native delayed delivery, which
Celery turns on for them, routes only through topic exchanges. Every process declares the same
queues with the same arguments (RabbitMQ refuses a second declaration that differs), so the
declarations are built here alone, from the queue names the apps register.

A publish waits for the broker's confirm, at most BROKER_CONFIRM_TIMEOUT: under a memory or disk
alarm RabbitMQ stops reading from a publishing connection, and an unconfirmed publish would
otherwise wait for good or, unconfirmed, be lost.
"""

from __future__ import annotations

from collections.abc import Iterable

from celery.app import amqp
from django.conf import settings
from kombu import Exchange, Queue

EXCHANGE = "interviewprep"


def amqp_task_queues(names: Iterable[str], *, delivery_limit: int, consumer_timeout: int) -> list[Queue]:
    """One quorum queue per name on the topic exchange, routed by its own name.

    `x-consumer-timeout` is honoured from RabbitMQ 3.11.15 on; older nodes ignore it and apply
    their `consumer_timeout` (deploy/rabbitmq/rabbitmq.conf sets the same value)."""
    exchange = Exchange(EXCHANGE, type="topic", durable=True)
    arguments = {
        "x-queue-type": "quorum",
        "x-delivery-limit": delivery_limit,
        "x-consumer-timeout": consumer_timeout * 1000,
    }
    return [
        Queue(name, exchange, routing_key=name, durable=True, auto_delete=False, queue_arguments=dict(arguments))
        for name in sorted(set(names))
    ]


def broker_publish_options() -> dict[str, float]:
    """What every task publish passes to kombu: the relay's, beat's, any other (empty on Redis)."""
    return settings.BROKER_PUBLISH_OPTIONS


class AMQP(amqp.AMQP):
    """Celery's AMQP API, with the publish options of `broker_publish_options` as defaults for
    every task message, and the connection dropped after a publish that failed, so no publisher
    (beat, a task sent by hand) can forget either. The relay's batches end outside this and
    drop it themselves."""

    def _create_task_sender(self):
        send = super()._create_task_sender()

        def send_task_message(producer, name, message, **options):
            for option, value in broker_publish_options().items():
                if options.get(option) is None:
                    options[option] = value
            try:
                return send(producer, name, message, **options)
            except Exception:
                broker_connection_drop(producer.connection)
                raise

        return send_task_message


def broker_connection_drop(connection) -> None:
    """After a failed publish to RabbitMQ: a publish left waiting for its confirm may still be
    confirmed later, and that late confirm would be taken for the next publish's. Dropped without
    the closing handshake (a blocked broker would not answer it); the next use connects afresh.
    A Redis connection is kept: a failed command leaves nothing owed on it."""
    if settings.CONFIG.broker_is_amqp:
        connection.collect()
