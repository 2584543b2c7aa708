"""The Redis broker's transport, with two repairs of kombu's for a broker that goes away.

kombu's Redis QoS counts a delivered message against the prefetch limit until its ack succeeds.
When the broker pauses past the socket timeout, the ack's write fails, Celery logs "Couldn't ack"
and carries on, and the message holds its slot for good: with one slot per child, a worker whose
every slot leaked consumes nothing again, alive and connected. Freeing the slot leaves the
message in the broker's unacked index, which redelivers it after the visibility timeout; the
job it carries is already final, so that redelivery changes nothing.

And when the connection is lost, Celery collects it (which lets the transport drop its client)
and then closes it, which closes its channel, whose QoS then restores the unacknowledged
messages through a client it can no longer make: an AttributeError that ends the worker with
status 1. With no client there is nothing to restore through: the messages stay in the unacked
index, restored after the visibility timeout, and their jobs are the sweeper's. A task that
ends after that close meets the same missing client when it acknowledges: that is a failed ack
like any other.
"""

from __future__ import annotations

from kombu.transport import redis, virtual
from redis.exceptions import ConnectionError as RedisConnectionError


class QoS(redis.QoS):
    def _connection_gone(self) -> bool:
        """Celery let go of this channel's connection (its transport, or the transport's client,
        is gone): no client can be made to write through."""
        transport = self.channel.connection
        return transport is None or transport.client is None

    def ack(self, delivery_tag):
        self._settle(super().ack, delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        self._settle(super().reject, delivery_tag, requeue=requeue)

    def _settle(self, settle, delivery_tag, **options) -> None:
        # Either way the slot is freed; the failure is raised as a connection error, which
        # Celery logs ("Couldn't ack") rather than treating as unrecoverable.
        try:
            if self._connection_gone():
                raise RedisConnectionError("the broker connection was closed before the message was settled")
            settle(delivery_tag, **options)
        except self.channel.connection_errors:
            virtual.QoS.ack(self, delivery_tag)
            raise

    def restore_unacked(self, client=None):
        if client is None and self._connection_gone():
            return None
        return super().restore_unacked(client)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
