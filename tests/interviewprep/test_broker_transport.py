"""The Redis transport's repairs (interviewprep/broker.py), each on a real Redis, in the state the
worker meets after a broker went away."""

import pytest
from django.conf import settings
from kombu import Connection, Exchange, Queue

QUEUE = Queue("transport-test", Exchange("transport-test"), "transport-test")


def _holding_an_unacked_message(transport: str):
    with Connection(settings.CELERY_BROKER_URL, transport=transport) as setup:
        setup.Producer().publish({"n": 1}, exchange=QUEUE.exchange, routing_key=QUEUE.routing_key, declare=[QUEUE])
    conn = Connection(settings.CELERY_BROKER_URL, transport=transport)
    received = []
    conn.Consumer([QUEUE], callbacks=[lambda body, message: received.append(message)], accept=["json"]).consume()
    conn.drain_events(timeout=5)
    assert len(received) == 1 and len(conn.default_channel.qos._delivered) == 1
    return conn


@pytest.mark.django_db
def test_a_channel_closed_after_its_transport_let_go_of_the_connection_does_not_raise():
    # As Celery leaves it after a lost connection: collected (the transport's client dropped),
    # then closed, with a message unacknowledged and no pool made yet. kombu's own QoS then
    # restores through a client it cannot make, and the AttributeError ends the worker.
    for transport, survives in (("kombu.transport.redis:Transport", False), ("interviewprep.broker:Transport", True)):
        conn = _holding_an_unacked_message(transport)
        channel = conn.default_channel
        channel.connection.client = None
        channel._pool = None
        if survives:
            channel.close()
        else:
            with pytest.raises(AttributeError, match="hostname"):
                channel.close()


@pytest.mark.django_db
def test_an_ack_after_celery_let_go_of_the_connection_is_a_failed_ack_that_frees_its_slot():
    # A task that ends after the lost connection was closed acknowledges on a channel with no
    # connection left: kombu's QoS raises an AttributeError, an unrecoverable error for Celery.
    for transport, survives in (("kombu.transport.redis:Transport", False), ("interviewprep.broker:Transport", True)):
        conn = _holding_an_unacked_message(transport)
        channel = conn.default_channel
        qos = channel.qos
        (tag,) = list(qos._delivered)
        qos.prefetch_count = 1  # one slot, as a worker's child has, and the message holds it
        assert not qos.can_consume()
        channel.connection = None
        channel._pool = None
        if survives:
            with pytest.raises(channel.connection_errors):
                qos.ack(tag)
            assert qos.can_consume()  # the slot is free again
        else:
            with pytest.raises(AttributeError, match="client"):
                qos.ack(tag)
            # Its unacked message would be restored at exit through the same missing connection,
            # printing that error at the end of the test run.
            qos._on_collect.cancel()
