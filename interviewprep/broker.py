"""The Redis broker's transport, with one repair: a failed acknowledgement frees its slot.

kombu's Redis QoS counts a delivered message against the prefetch limit until its ack succeeds.
When the broker pauses past the socket timeout, the ack's write fails, Celery logs "Couldn't ack"
and carries on, and the message holds its slot for good: with one slot per child, a worker whose
every slot leaked consumes nothing again, alive and connected. Freeing the slot leaves the
message in the broker's unacked index, which redelivers it after the visibility timeout; the
job it carries is already final, so that redelivery changes nothing.
"""

from __future__ import annotations

from kombu.transport import redis, virtual


class QoS(redis.QoS):
    def ack(self, delivery_tag):
        try:
            super().ack(delivery_tag)
        except self.channel.connection_errors:
            virtual.QoS.ack(self, delivery_tag)
            raise

    def reject(self, delivery_tag, requeue=False):
        try:
            super().reject(delivery_tag, requeue=requeue)
        except self.channel.connection_errors:
            virtual.QoS.ack(self, delivery_tag)
            raise


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
