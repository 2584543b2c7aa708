"""The Redis client for locks, the breaker and counters (never the cache's database).

redis-py retries a failing call 10 times by default; here the policy is explicit and short:
one retry after 50 ms, 1 s socket timeouts. Callers decide what a failure means.
"""

from __future__ import annotations

import os
import threading

import redis
from django.conf import settings
from redis.backoff import ConstantBackoff
from redis.retry import Retry

_lock = threading.Lock()
_clients: dict[tuple[int, str], redis.Redis] = {}


def state_redis() -> redis.Redis:
    """A client per process (re-made after fork) on the state database."""
    key = (os.getpid(), settings.REDIS_STATE_URL)
    client = _clients.get(key)
    if client is None:
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = redis.Redis.from_url(
                    settings.REDIS_STATE_URL,
                    socket_timeout=1.0,
                    socket_connect_timeout=1.0,
                    retry=Retry(ConstantBackoff(0.05), 1),
                    retry_on_error=[redis.ConnectionError, redis.TimeoutError],
                    health_check_interval=15,
                )
                _clients[key] = client
    return client
