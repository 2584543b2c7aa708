"""Messages waiting in the broker, per queue: read by /metrics and by /healthz's worker check."""

from __future__ import annotations

import logging

import amqp.exceptions
import redis
from django.conf import settings
from kombu import Connection

from evaluation.jobs.registry import queues

logger = logging.getLogger(__name__)

# The periodic tasks' queue, beside every job kind's.
PERIODIC_QUEUE = "ops"
BROKER_TIMEOUT = 0.5


def broker_queues() -> list[str]:
    """Every queue a worker consumes: each registered kind's, and the periodic tasks'."""
    return sorted({*queues().values(), PERIODIC_QUEUE})


def _redis_queue_depths(url: str) -> dict[str, int]:
    from kombu.transport.redis import PRIORITY_STEPS, Channel

    client = redis.Redis.from_url(url, socket_timeout=BROKER_TIMEOUT, socket_connect_timeout=BROKER_TIMEOUT)
    try:
        pipe = client.pipeline(transaction=False)
        names = broker_queues()
        for queue in names:
            # Kombu keeps one list per priority step; step 0 is the queue's own name.
            for step in PRIORITY_STEPS:
                pipe.llen(f"{queue}{Channel.sep}{step}" if step else queue)
        sizes = pipe.execute()
    finally:
        client.close()
    per_queue = len(PRIORITY_STEPS)
    return {queue: int(sum(sizes[i * per_queue : (i + 1) * per_queue])) for i, queue in enumerate(names)}


def _amqp_queue_depths(url: str) -> dict[str, int]:
    depths: dict[str, int] = {}
    with Connection(url, connect_timeout=BROKER_TIMEOUT) as conn:
        channel = conn.default_channel
        for queue in broker_queues():
            try:
                _, count, _ = channel.queue_declare(queue=queue, passive=True)
            except amqp.exceptions.NotFound:
                # No worker declared it yet: it holds nothing. The refusal closed the channel.
                depths[queue] = 0
                channel = conn.channel()
                continue
            depths[queue] = int(count)
    return depths


def queue_depths() -> dict[str, int]:
    url = settings.CELERY_BROKER_URL
    try:
        if settings.CONFIG.broker_is_redis:
            return _redis_queue_depths(url)
        return _amqp_queue_depths(url)
    except Exception as exc:  # noqa: BLE001 - any broker failure is shown as -1, never a failed scrape
        logger.warning("queue depth unavailable", extra={"error": f"{type(exc).__name__}: {exc}"})
        return dict.fromkeys(broker_queues(), -1)
