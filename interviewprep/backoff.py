"""Leave a failing Redis alone for a moment: the one back-off of every best-effort Redis call.

    if backoff.ready():
        try:
            ...                  # one call, short timeout, no retry
        except redis.RedisError:
            backoff.failed()     # the next calls for `seconds` skip Redis and take their fallback

A paused Redis makes every call wait its whole socket timeout; without a back-off each cache
read and each notification publish would pay it again. After a failure, this process's calls
skip that server until the interval is over, then one call tries it again.

The cache's server (`REDIS_URL`) has one back-off per process (`cache_backoff()`), shared by the
attempt cache and notification publishes: one failure of either spares both the next timeouts.
"""

from __future__ import annotations

import time

from interviewprep.per_process import PerProcess

CACHE_BACKOFF_SECONDS = 1.0


class Backoff:
    """Until when this process skips one Redis server after a failure."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.until = 0.0

    def ready(self) -> bool:
        return time.monotonic() >= self.until

    def failed(self) -> None:
        self.until = time.monotonic() + self.seconds

    def forget(self) -> None:
        """Try the server at the next call (for tests, which must not inherit a failure)."""
        self.until = 0.0


_cache_backoff = PerProcess(lambda: Backoff(CACHE_BACKOFF_SECONDS))


def cache_backoff() -> Backoff:
    """This process's back-off for the cache's server (a forked child starts without one)."""
    return _cache_backoff.get()
