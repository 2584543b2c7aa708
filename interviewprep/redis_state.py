"""Redis clients: the state database (locks, breaker) and the cache database.

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

# redis-py 8 caps a pool at 100 connections and fails the 101st call with "Too many
# connections": a burst of threads would read as a Redis outage (and, for the cache, switch it
# off for a second). Connections are still made only on demand.
MAX_CONNECTIONS = 10_000

# KEYS[1] = a key holding an owner's token; ARGV[1] = the token. Deletes it only for its owner,
# so a holder whose TTL ran out cannot drop the next holder's key.
RELEASE_IF_OWNER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""

_lock = threading.Lock()
_clients: dict[tuple[int, str], redis.Redis] = {}


def _client(url: str, timeout: float, retries: int = 1) -> redis.Redis:
    key = (os.getpid(), url)
    client = _clients.get(key)
    if client is None:
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = redis.Redis.from_url(
                    url,
                    socket_timeout=timeout,
                    socket_connect_timeout=timeout,
                    retry=Retry(ConstantBackoff(0.05), retries),
                    retry_on_error=[redis.ConnectionError, redis.TimeoutError],
                    health_check_interval=15,
                    max_connections=MAX_CONNECTIONS,
                )
                _clients[key] = client
    return client


def state_redis() -> redis.Redis:
    """A client per process (re-made after fork) on the state database."""
    return _client(settings.REDIS_STATE_URL, 1.0)


def cache_redis() -> redis.Redis:
    """The cache database: a slow Redis must make reads slower, not stuck: 250 ms, no retry."""
    return _client(settings.CACHES["default"]["LOCATION"], 0.25, retries=0)
